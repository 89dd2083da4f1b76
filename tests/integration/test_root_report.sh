#!/bin/bash
# .tracemount/report.html: every trace under SOURCE in one table, as the mount knows it. Read
# before anything is indexed, it lists every trace (and no other file), a folder's virtual
# SUM.spixcounts too, as not indexed, with its format and size, and reading it indexes nothing: .tracemount/status still counts no trace
# seen and no index built, and the cache folder stays empty. Once a trace's stats.json is read,
# the page shows that trace indexed with stats.json's records and errors, the others still
# not indexed. Its stat size is the bytes read (by path, and by the open file); xmllint's HTML
# parser takes it; a path with <, &, quotes and spaces shows as itself, one with a tab and a
# byte that is not UTF-8 as `ls -b` shows it, and each links, percent-encoded, to its trace
# folder. A single-file mount lists its one trace.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
CACHE=$TM_TMP/cache
ODD_DIR='we ird & <dir>'
ODD="$ODD_DIR/o'dd \"q\" <&>.byu"
mkdir -p "$SRC/sub" "$SRC/$ODD_DIR" "$SRC/empty" "$SRC/bb" "$CACHE"
tm_seed
"$GEN_BYU" -n 1000 -s "$SEED" >"$SRC/a.byu"
"$GEN_TT6" --format tt6 --records 2000 --seed "$SEED" >"$SRC/sub/b.tt6"
"$GEN_CIS501" --lines 500 --seed "$SEED" >"$SRC/sub/c.trace"
"$GEN_BYU" -n 300 -s "$((SEED + 1))" >"$SRC/$ODD"
TAB=$'tab\there\377.byu'
"$GEN_BYU" -n 20 -s "$((SEED + 2))" >"$SRC/$TAB"
# two spixcounts files of one program: a virtual trace, bb/SUM.spixcounts, beside them
"$PY" "$HERE/spix_expect.py" write "$SRC/bb/p1.bb" be "1:1:0,2:2:2" --tsum 1
"$PY" "$HERE/spix_expect.py" write "$SRC/bb/p2.bb" be "1:3:0,2:4:4" --tsum 1
echo 'not a trace' >"$SRC/notes.txt"
# in byte order of their paths
PATHS=(a.byu bb/SUM.spixcounts bb/p1.bb bb/p2.bb sub/b.tt6 sub/c.trace "$TAB" "$ODD")
FORMATS=(byu spixcounts spixcounts spixcounts tt6 cis501 byu byu)
# as the page shows them: as stats.json's source (ls -b)
SHOWN=("${PATHS[@]}")
SHOWN[6]='tab\there\377.byu'
# the sum's attributes are its first file's (as stat shows the sum's raw view)
SIZE_OF=(bb/SUM.spixcounts bb/p1.bb)

command -v xmllint >/dev/null || skip_part tool:xmllint "xmllint not installed: the page is not validated"

# read_report NAME: the page into TM_TMP/NAME.html and its rows into TM_TMP/NAME.rows; checks
# that its stat size is the bytes read, by path and by the open file.
read_report() {
	local page=$TM_MNT/.tracemount/report.html
	local size
	size=$(stat -c %s "$page")
	cat "$page" >"$TM_TMP/$1.html"
	check_eq "$1: stat size = bytes read" "$size" "$(wc -c <"$TM_TMP/$1.html")"
	check_eq "$1: the open file's size = its bytes read" ok "$("$PY" -c '
import os, sys
with open(sys.argv[1], "rb") as f:
    size = os.fstat(f.fileno()).st_size
    data = f.read()
print("ok" if size == len(data) else "%d != %d" % (size, len(data)))' "$page")"
	if command -v xmllint >/dev/null; then
		check_eq "$1: xmllint --html takes it without a word" "" \
			"$(xmllint --html --noout "$TM_TMP/$1.html" 2>&1)"
	fi
	check "$1: the page is UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$TM_TMP/$1.html"
	"$PY" "$HERE/root_report.py" rows "$TM_TMP/$1.html" >"$TM_TMP/$1.rows"
}

# field NAME ROW COLUMN: a field of a row (from 1) of TM_TMP/NAME.rows: 1 href, 2 path,
# 3 format, 4 size, 5 records, 6 errors, 7 state, 8-10 data-v of size, records, errors.
field() {
	sed -n "${2}p" "$TM_TMP/$1.rows" | cut -f "$3"
}

mount_tm "$SRC" -o cache="$CACHE"
M=$TM_MNT
read_report before
check_eq "before: one row per trace, none for notes.txt or folders" "${#PATHS[@]}" \
	"$(wc -l <"$TM_TMP/before.rows")"
for i in "${!PATHS[@]}"; do
	p=${PATHS[$i]}
	r=$((i + 1))
	check_eq "before: row $r is ${SHOWN[$i]}" "${SHOWN[$i]}" "$(field before $r 2)"
	check_eq "before: $p: format" "${FORMATS[$i]}" "$(field before $r 3)"
	sized=$p
	[ "$p" = "${SIZE_OF[0]}" ] && sized=${SIZE_OF[1]}
	check_eq "before: $p: size in bytes" "$(stat -c %s "$SRC/$sized")" "$(field before $r 8)"
	check_eq "before: $p: not indexed, no records or errors yet" "-	-	not indexed" \
		"$(field before $r 5-7)"
	check_eq "before: $p: links to its folder's report.html" \
		"../$("$PY" -c 'import os, sys, urllib.parse
print(urllib.parse.quote(os.fsencode(sys.argv[1])))' "$p")/report.html" \
		"$(field before $r 1)"
	href=$(field before $r 1)
	folder=$("$PY" -c 'import sys, urllib.parse
sys.stdout.buffer.write(urllib.parse.unquote_to_bytes(sys.argv[1]))' \
		"${href%/report.html}")
	check "before: $p: the link leads to its trace folder" test -d "$M/.tracemount/$folder"
done
check_eq "before: the odd name never stands raw in the page" 0 \
	"$(grep -cF -e "o'dd" -e '"q" <&>' -e '<dir>' "$TM_TMP/before.html")"
check "before: the summary says 8 not indexed" grep -q '8 traces: 0 indexed, 0 indexing, 8 not indexed, 0 failed' \
	"$TM_TMP/before.html"
check "reading the page saw no trace and built no index (status)" \
	grep -q '^# 0 traces; indexes: 0 built, 0 read from index files' "$M/.tracemount/status"
check_eq "reading the page wrote no index file" "" "$(ls -A "$CACHE")"

# a trace indexed: the page shows it as stats.json tells
cp "$M/a.byu/stats.json" "$TM_TMP/a.json"
cp "$M/sub/c.trace/stats.json" "$TM_TMP/c.json"
cp "$M/bb/SUM.spixcounts/stats.json" "$TM_TMP/sum.json"
check_eq "stats.json indexed the three traces (status): the check above can fail" \
	"3 built" "$(index_counts "$M" | grep -o '^[0-9]* built')"
sleep 1.1 # the kernel keeps the page's size from the read above for a second (attr_timeout)
read_report after
check_eq "after: still one row per trace" "${#PATHS[@]}" "$(wc -l <"$TM_TMP/after.rows")"
check_eq "after: a.byu indexed, with stats.json's records and errors" \
	"$(json_get "$TM_TMP/a.json" 'd["records"]')	$(json_get "$TM_TMP/a.json" 'd["errors"]')	indexed" \
	"$(field after 1 5-7)"
check_eq "after: bb/SUM.spixcounts indexed, with stats.json's records and errors" \
	"$(json_get "$TM_TMP/sum.json" 'd["records"]')	$(json_get "$TM_TMP/sum.json" 'd["errors"]')	indexed" \
	"$(field after 2 5-7)"
check_eq "after: sub/c.trace indexed, with stats.json's records and errors" \
	"$(json_get "$TM_TMP/c.json" 'd["records"]')	$(json_get "$TM_TMP/c.json" 'd["errors"]')	indexed" \
	"$(field after 6 5-7)"
check_eq "after: their data-v hold the same numbers" "$(field after 1 5-6)" "$(field after 1 9-10)"
check_eq "after: the others still not indexed" \
	"not indexed,not indexed,not indexed,not indexed,not indexed" \
	"$(field after 3 7),$(field after 4 7),$(field after 5 7),$(field after 7 7),$(field after 8 7)"
check "after: the summary says 3 indexed" grep -q '8 traces: 3 indexed, 0 indexing, 5 not indexed, 0 failed' \
	"$TM_TMP/after.html"
unmount_tm

# SOURCE as one trace: the page lists it, linked beside .tracemount
mount_tm "$SRC/a.byu"
read_report single
check_eq "single-file mount: the one trace, linked" "../a.byu/report.html	a.byu	byu" \
	"$(cut -f 1-3 "$TM_TMP/single.rows")"
unmount_tm
finish
