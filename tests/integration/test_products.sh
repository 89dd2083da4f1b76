#!/bin/bash
# Products are built when a file of their own is first opened or stat'ed (issue 43;
# doc/architecture.md, "Products"), for a generated trace of every format:
# - a record view answers before any product is built: `stat dump.txt` on a fresh mount runs
#   the record pass alone (the log says "indexed" and never "building"), and the status says
#   "indexed";
# - `ls -l` of a trace folder and of its plots/ builds no product: it shows their files with
#   size 0; a stat of one then waits for its product and gives its exact size;
# - the index file written then holds no product: a remount reads it (no "indexing" line) and
#   opening plots/mix.svg builds plots/ alone ("built plots" in the log), and stats.json then
#   builds the others;
# - every product file, built one product at a time, is byte-identical to the same file of a
#   mount whose index files `tracemount index` wrote, every product built with the record index
#   in one pass (another cache folder);
# - a third mount reads every product from the index file: no "building" line at all.
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
mkdir -p "$SRC"
gen_every_format "$SRC"
rm -f "$SRC/empty.byu" # no records: nothing to tell record views from products by
LAZY=$TM_TMP/lazy
WHOLE=$TM_TMP/whole
traces=$(cd "$SRC" && ls)

# products_of DIR: the files of trace folder DIR that a product makes, relative to it: all but
# the record views (raw, dump.txt, sync.txt, class/, convert/, cpu/, regs/). A spixcounts
# file's dump.txt is one of its tables, a product.
products_of() {
	(cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort |
		grep -v -E '^(raw|sync\.txt|(class|convert|cpu|regs)/.*)$' |
		{ if [ "${1##*.}" = spixcounts ]; then cat; else grep -v -x 'dump\.txt'; fi; })
}

# not_in_log PATTERN: the daemon's log of this mount has no line matching PATTERN.
not_in_log() {
	! grep -q "$1" "$TM_TMP/daemon.log"
}

# the traces with record views: a spixcounts file has none but raw, which needs no index
record_traces=$(grep -v -x gen.spixcounts <<<"$traces")

mount_tm "$SRC" -o cache="$LAZY"
for t in $record_traces; do
	stat -c %s "$TM_MNT/$t/dump.txt" >/dev/null || fail "$t/dump.txt: stat"
done
check "stat of a record view: the record pass only (no product built)" \
	not_in_log "building"
check_eq "stat of a record view: every trace indexed, no product pass" \
	"$(sed 's/.*/indexed/' <<<"$record_traces")" \
	"$(grep -v '^#' "$TM_MNT/.tracemount/status" | tail -n +2 | cut -f3)"
# ls -l: every product's file at size 0, no pass (ls's own lstat finds the listing's
# attributes; a stat within the second after would too, so the stat below waits for it)
check_eq "ls -l of a trace folder: its product files sized 0" "errors.txt 0
report.html 0
stats.json 0" "$(ls -l "$TM_MNT/gen.tarmac" | awk '/(stats.json|errors.txt|report.html)$/ { print $9, $5 }')"
check_eq "ls -l of plots/: sized 0" "0" \
	"$(ls -l "$TM_MNT/gen.tarmac/plots" | awk 'NR > 1 { print $5 }' | sort -u)"
check "ls -l: no product built" not_in_log "building"
sleep 1.1 # the kernel forgets the listing's attributes (attr_timeout)
size=$(stat -c %s "$TM_MNT/gen.byu/stats.json")
check "stat of stats.json: every product built for it" grep -q "gen.byu: built stats,plots in" \
	"$TM_TMP/daemon.log"
check_eq "stat of stats.json: its exact size" "$(wc -c <"$TM_MNT/gen.byu/stats.json")" "$size"
unmount_tm

mount_tm "$SRC" -o cache="$LAZY"
head -c 1 "$TM_MNT/gen.tarmac/plots/mix.svg" >/dev/null
check "remount: the record index read from its file" not_in_log "gen.tarmac: indexing"
check "plots/mix.svg opened: plots/ built" grep -q "gen.tarmac: built plots in" "$TM_TMP/daemon.log"
check "plots/mix.svg opened: nothing else built" not_in_log "gen.tarmac: building .*\(stats\|spix\|calls\)"
check "plots/mix.svg: its stat size once opened is the bytes read" \
	test "$(stat -c %s "$TM_MNT/gen.tarmac/plots/mix.svg")" = "$(wc -c <"$TM_MNT/gen.tarmac/plots/mix.svg")"
for t in $traces; do
	mkdir -p "$TM_TMP/lazy.out/$t"
	# one product at a time: each folder's files, then stats.json (every product)
	for f in $(products_of "$TM_MNT/$t"); do
		mkdir -p "$TM_TMP/lazy.out/$t/$(dirname "$f")"
		cat "$TM_MNT/$t/$f" >"$TM_TMP/lazy.out/$t/$f" || fail "$t/$f: read"
	done
done
check "every product built" grep -q "gen.tarmac: built stats" "$TM_TMP/daemon.log"
unmount_tm

"$TRACEMOUNT" index --cache "$WHOLE" "$SRC" >/dev/null 2>&1
check_eq "tracemount index: exit status" 0 "$?"
mount_tm "$SRC" -o cache="$WHOLE"
bad=
for t in $traces; do
	list=$(products_of "$TM_MNT/$t")
	check_eq "$t: the same product files, built lazily and in one pass" "$list" \
		"$(cd "$TM_TMP/lazy.out/$t" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)"
	for f in $list; do
		cmp -s "$TM_MNT/$t/$f" "$TM_TMP/lazy.out/$t/$f" || bad="$bad $t/$f"
	done
done
check_eq "every product file byte-identical, built later or with the record index" "" "$bad"
check "tracemount index's files hold every product: no pass at all" not_in_log "building\|indexing"
unmount_tm

mount_tm "$SRC" -o cache="$LAZY"
bad=
for t in $traces; do
	for f in $(products_of "$TM_MNT/$t"); do
		cmp -s "$TM_MNT/$t/$f" "$TM_TMP/lazy.out/$t/$f" || bad="$bad $t/$f"
	done
done
check_eq "third mount: every product file as built" "" "$bad"
check "third mount: every product read from the index files" not_in_log "building\|indexing"
unmount_tm
finish
