#!/bin/bash
# report.html in every trace folder (doc/views.md), for a generated trace of every format (BYU,
# TT6, TT6E, CIS501, Tarmac, QEMU4V, FULL, spixcounts), an empty trace, a truncated one, one
# with more errors than the page shows, one whose name holds <, &, quotes and a space, one zstd
# frame of 4.8 MB (a note, no error), the virtual SUM.spixcounts of a folder of two, and ARM's
# calculator trace (../shared/realtraces, skipped when absent). Reading the root report first indexes nothing, and each of its links
# names a trace's report.html, which exists.
# Each page is listed in its folder; its stat size, once an open has built it, is the bytes read
# (by path, and by the open file); xmllint's HTML parser takes it without a word (its inline
# SVGs apart, which that HTML 4 parser does not know: each is checked as XML); and
# trace_report_check.py page finds
# its facts equal to stats.json's (whose records and classes are the format's model's,
# model_facts.py), its errors errors.txt's first problems with stats.json's
# count and its notes apart, every file of the folder linked, every link resolving, every plots/*.svg inline as
# its file holds it, and nothing asked from elsewhere. Controls show the checks can fail: a
# fact changed, a plot left out, a view's link left out.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
mkdir -p "$SRC" "$TM_TMP/controls/gen.byu"
tm_seed

gen_every_format "$SRC"
# BYU records are 6 bytes: 5003 bytes end in a partial record
head -c 5003 "$SRC/gen.byu" >"$SRC/cut.byu"
# a line of 4 fields every 40 of CIS501's 14: 50 errors, more than the page's 20 lines
"$GEN_CIS501" --lines 2000 --seed "$SEED" |
	awk 'NR % 40 == 0 { print "bad <&> \"line\" " NR } { print }' >"$SRC/bad.trace"
ODD="odd <&> \"q\" 'n'.byu"
"$GEN_BYU" -n 100 -s "$((SEED + 1))" >"$SRC/$ODD"
# a folder of two spixcounts files shows their sum, a virtual trace, with its page too
mkdir "$SRC/prog"
cp "$SRC/gen.spixcounts" "$SRC/prog/a.spixcounts"
cp "$SRC/gen.spixcounts" "$SRC/prog/b.spixcounts"
# a TT6 trace without sync records (its INITIAL_PC, then 100 times li r3,1): sync.svg is a note
{
	printf '\x00\x01\x00\x00'
	for _ in $(seq 100); do printf '\x38\x60\x00\x01'; done
} >"$SRC/nosync.tt6"
TRACES=(nosync.tt6 gen.byu gen.tt6 gen.tt6e gen.trace gen.tarmac gen.qemu4v gen.full gen.spixcounts
	empty.byu cut.byu bad.trace "$ODD" prog/a.spixcounts prog/b.spixcounts prog/SUM.spixcounts)
# one zstd frame of more than a piece (4 MiB): errors.txt holds a note, no error
if command -v zstd >/dev/null; then
	"$GEN_BYU" -n 800000 -s "$SEED" | zstd -q -c >"$SRC/one.byu.zst"
	TRACES+=(one.byu.zst)
else
	skip_part tool:zstd "no zstd: the page of a trace with a note not checked"
fi
REAL=${REALTRACES:-}
if [ -n "$REAL" ] && [ -d "$REAL/tarmac" ]; then
	cp "$REAL/tarmac/calculator-aarch64-fastmodel.tarmac" "$SRC/"
	TRACES+=(calculator-aarch64-fastmodel.tarmac)
else
	skip_part realtraces "no realtraces folder at '$REAL': ARM's calculator trace not reported"
fi

mount_tm "$SRC"
M=$TM_MNT

# the root report first: it indexes nothing, and links each trace's page
cat "$M/.tracemount/report.html" >"$TM_TMP/root.html"
check "reading the root report built no index (status)" \
	grep -q '^# 0 traces; indexes: 0 built, 0 read from index files' "$M/.tracemount/status"
"$PY" - "$TM_TMP/root.html" >"$TM_TMP/root_links" <<'PY'
import re, sys, urllib.parse
for h in re.findall(r'href="([^"#]*)"', open(sys.argv[1], encoding="utf-8").read()):
    print(urllib.parse.unquote(h))
PY
expected=$(for t in "${TRACES[@]}"; do echo "../$t/report.html"; done | LC_ALL=C sort)
check_eq "the root report links each trace's report.html" "$expected" \
	"$(LC_ALL=C sort "$TM_TMP/root_links")"
while read -r link; do
	check "the root report's link $link resolves to a file" test -f "$M/.tracemount/$link"
done <"$TM_TMP/root_links"

for t in "${TRACES[@]}"; do
	page=$M/$t/report.html
	check "$t: the folder lists report.html" grep -qx report.html <(ls "$M/$t")
	# through cat: wc -c of a file would take its size from stat. The stat after the read:
	# the page takes every product of its trace, and is sized 0 until its open builds them
	# (doc/architecture.md, "Products"), which tells the kernel to forget that size
	# shellcheck disable=SC2002
	n=$(cat "$page" | wc -c)
	check_eq "$t: stat size after its open = bytes read" "$n" "$(stat -c %s "$page")"
	check_eq "$t: the open file's size = bytes read" True "$("$PY" -c '
import os, sys
with open(sys.argv[1], "rb") as f:
    print(os.fstat(f.fileno()).st_size == len(f.read()))' "$page")"
	if command -v xmllint >/dev/null; then
		"$PY" -c 'import re, sys
sys.stdout.write(re.sub(r"<svg\b.*?</svg>", "", open(sys.argv[1]).read(), flags=re.S))' \
			"$page" >"$TM_TMP/nosvg.html"
		check_eq "$t: xmllint --html takes the page without a word" "" \
			"$(xmllint --html --noout "$TM_TMP/nosvg.html" 2>&1)"
	fi
	check_compared "$t" "$PY" "$HERE/trace_report_check.py" page "$M/$t"
done
command -v xmllint >/dev/null || skip_part tool:xmllint "xmllint is absent (Debian's libxml2-utils)"

# The page shows stats.json's facts (above); the records and classes among them are the
# format's model's (model_facts.py), not only the build's own.
"$PY" "$HERE/full_model.py" expect "$TM_TMP/full" --steps 3000 --seed "$SEED"
for tf in gen.byu:byu gen.tt6:tt6 gen.tt6e:tt6e gen.trace:cis501 gen.tarmac:tarmac \
	gen.qemu4v:qemu4v gen.full:full cut.byu:byu; do
	t=${tf%%:*}
	check_eq "$t: the page's records and classes are the model's" \
		"$("$PY" "$HERE/model_facts.py" facts "${tf#*:}" "$SRC/$t" "$TM_TMP/full/stats.json" |
			"$PY" -c 'import json, sys; d = json.load(sys.stdin); print(d["records"], sorted(d["classes"].items()))')" \
		"$("$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["records"], sorted(d["classes"].items()))' "$M/$t/stats.json")"
done

json_of() { "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
check_eq "cut.byu: stats.json says truncated" True "$(json_of "$M/cut.byu/stats.json" truncated)"
check "cut.byu: the page shows its error line" \
	grep -q "trailing partial record" "$M/cut.byu/report.html"
check_eq "bad.trace: 50 errors" 50 "$(json_of "$M/bad.trace/stats.json" errors)"
check_eq "bad.trace: the page shows 20 of them" 20 "$("$PY" -c '
import re, sys
pre = re.search(r"<pre id=\"error-lines\">(.*?)</pre>", open(sys.argv[1]).read(), re.S)
print(len(pre.group(1).splitlines()))' "$M/bad.trace/report.html")"
if [ -e "$SRC/one.byu.zst" ]; then
	check "one.byu.zst: the page says no errors and shows the note apart" grep -qF \
		'No errors in <a href="errors.txt">errors.txt</a>.</p>' "$M/one.byu.zst/report.html"
	check "one.byu.zst: its note line" grep -q '<pre id="note-lines">note: zstd: one frame' \
		"$M/one.byu.zst/report.html"
fi
check "empty.byu: the page says it has no errors" \
	grep -q "No errors: <a href=\"errors.txt\">errors.txt</a> is empty" "$M/empty.byu/report.html"
check "$ODD: the title escaped" grep -qF "<title>odd &lt;&amp;&gt; &quot;q&quot; &#39;n&#39;.byu" \
	"$M/$ODD/report.html"
check "$ODD: no <&> unescaped in the page" bash -c '! grep -qF "<&>" "$1"' - "$M/$ODD/report.html"

# the controls: the checks see a changed fact, a missing plot, a missing link
C=$TM_TMP/controls/gen.byu
cp -r "$M/gen.byu/." "$C/"
sed 's/data-v="20000"/data-v="20001"/' "$M/gen.byu/report.html" >"$C/report.html"
check "control: a record count off by one fails the facts" \
	grep -q "^facts equal stats.json's	.*	.*20001" \
	<("$PY" "$HERE/trace_report_check.py" page "$C")
"$PY" -c 'import re, sys
t = open(sys.argv[1]).read()
sys.stdout.write(re.sub(r"<svg\b.*?</svg>", "", t, count=1, flags=re.S))' \
	"$M/gen.byu/report.html" >"$C/report.html"
"$PY" "$HERE/trace_report_check.py" page "$C" >"$TM_TMP/controls/plot.out"
check "control: a plot left out fails the inline check" \
	awk -F'\t' '/^every plot with something to show is inline/ && $2 != $3 { bad = 1 }
		END { exit !bad }' "$TM_TMP/controls/plot.out"
# the figures in the views' order: mix.svg (the plots deriver's first) before hot.svg
"$PY" -c 'import re, sys
t = open(sys.argv[1]).read()
figs = re.findall(r"<div class=\"figure\">.*?</div>\n", t, re.S)
sys.stdout.write(t.replace(figs[0], "@@").replace(figs[1], figs[0]).replace("@@", figs[1]))' \
	"$M/gen.tt6/report.html" >"$TM_TMP/order.html"
mkdir -p "$TM_TMP/controls/gen.tt6"
cp -r "$M/gen.tt6/." "$TM_TMP/controls/gen.tt6/"
cp "$TM_TMP/order.html" "$TM_TMP/controls/gen.tt6/report.html"
"$PY" "$HERE/trace_report_check.py" page "$TM_TMP/controls/gen.tt6" >"$TM_TMP/controls/order.out"
check "control: hot.svg after mix.svg fails the order check" \
	awk -F'\t' '/^the most telling plots come first/ && $2 != $3 { bad = 1 }
		END { exit !bad }' "$TM_TMP/controls/order.out"
sed 's|<div class="section" id="details">|&<div class="detail" data-key="plots"></div>|' \
	"$M/gen.byu/report.html" >"$C/report.html"
"$PY" "$HERE/trace_report_check.py" page "$C" >"$TM_TMP/controls/internal.out"
check "control: a plots row in the details fails" \
	awk -F'\t' '/^the details leave out the plots object/ && $2 != $3 { bad = 1 }
		END { exit !bad }' "$TM_TMP/controls/internal.out"
sed 's|<li><a href="dump.txt">dump.txt</a></li>||' "$M/gen.byu/report.html" >"$C/report.html"
"$PY" "$HERE/trace_report_check.py" page "$C" >"$TM_TMP/controls/link.out"
check "control: a view's link left out fails the links check" \
	awk -F'\t' '/^every view is linked/ && $2 != $3 { bad = 1 } END { exit !bad }' \
	"$TM_TMP/controls/link.out"

unmount_tm
finish
