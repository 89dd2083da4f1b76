#!/bin/bash
# .tracemount/report.html in a real browser: headless Chromium (report_browser.py, through
# headless.py's DevTools pipe) opens the page straight from the mount, some traces indexed and
# some not. It must show no console message and ask for nothing but itself; its table holds
# every trace, named as it is (a name with <, & and quotes too), in the walk's order; clicking
# the records header with the mouse sorts the rows by records (not indexed first), and again
# reverses them; at widths of 1280 and 3840 CSS pixels no cell's text overflows its cell (a
# folder name of 150 letters wraps) and the page does not scroll sideways.
#
# Without Chromium (chromium, or TM_BROWSER) the test says SKIP, unless TM_REQUIRE_BROWSER=1
# (scripts/test sets it): then it fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
tm_need_browser ".tracemount/report.html"
SRC=$TM_TMP/src
OUT=$TM_TMP/browser
LONG=$(printf 'x%.0s' $(seq 150))
ODD="odd <&> \"q\" 'n'.byu"
mkdir -p "$SRC/$LONG" "$OUT"
tm_seed
# records not in the order of the paths, so that sorting by them moves rows
"$GEN_BYU" -n 5000 -s "$SEED" >"$SRC/a.byu"
"$GEN_BYU" -n 300 -s "$((SEED + 1))" >"$SRC/b.byu"
"$GEN_BYU" -n 1000 -s "$((SEED + 2))" >"$SRC/c.byu"
"$GEN_TT6" --format tt6 --records 500 --seed "$SEED" >"$SRC/d.tt6"
"$GEN_BYU" -n 100 -s "$((SEED + 3))" >"$SRC/$LONG/long.byu"
"$GEN_BYU" -n 100 -s "$((SEED + 4))" >"$SRC/$ODD"
# in the walk's order: each folder's names in byte order
PATHS=(a.byu b.byu c.byu d.tt6 "$ODD" "$LONG/long.byu")

mount_tm "$SRC"
M=$TM_MNT
for t in a.byu b.byu c.byu "$LONG/long.byu"; do
	cat "$M/$t/stats.json" >/dev/null
done
page=$M/.tracemount/report.html
timeout=$(tm_browser_timeout)
start=$(date +%s%N)
check "Chromium opens the page" "$PY" "$HERE/report_browser.py" "$BROWSER" "$OUT" "$timeout" \
	"$page" records
echo "Chromium: $((($(date +%s%N) - start) / 1000000)) ms"
R=$OUT/report.json
if [ ! -f "$R" ]; then
	echo "the browser's log ends:" >&2
	grep -v dbus "$OUT/browser.log" 2>/dev/null | tail -5 >&2
	unmount_tm
	finish
fi

check_eq "no console message" "[]" "$(json_get "$R" 'd["console"]')"
check_eq "no request but the page itself" "['file://$page']" "$(json_get "$R" 'd["requests"]')"
check_eq "the headers" "['path', 'format', 'size', 'records', 'errors', 'state']" \
	"$(json_get "$R" '[h.strip() for h in d["headers"]]')"
expected=$("$PY" -c 'import sys; print(sys.argv[1:])' "${PATHS[@]}")
check_eq "one row per trace, named as it is, in the walk's order" "$expected" \
	"$(json_get "$R" '[r[0] for r in d["rows"]]')"
check_eq "the traces read are indexed, the others not" \
	"['indexed', 'indexed', 'indexed', 'not indexed', 'not indexed', 'indexed']" \
	"$(json_get "$R" '[r[5] for r in d["rows"]]')"
check_eq "records as the traces hold them" "['5000', '300', '1000', '-', '-', '100']" \
	"$(json_get "$R" '[r[3] for r in d["rows"]]')"
for w in 1280 3840; do
	check_eq "at $w px no cell's text overflows it" "[]" \
		"$(json_get "$R" "d['overflow']['$w']['cells']")"
	check_eq "at $w px the page does not scroll sideways" False \
		"$(json_get "$R" "d['overflow']['$w']['scrolls_sideways']")"
done
check_eq "the records header says how the rows are sorted after each click" \
	"['ascending', 'descending']" "$(json_get "$R" 'd["aria"]')"
by_records='sorted(d["rows"], key=lambda r: -1 if r[3] == "-" else int(r[3]))'
check_eq "a click sorts the rows by records, the traces not indexed first" \
	"['-', '-', '100', '300', '1000', '5000']" "$(json_get "$R" '[r[3] for r in d["sorted"][0]]')"
check_eq "... rows whole: each path keeps its records" True \
	"$(json_get "$R" "d['sorted'][0] == $by_records")"
check_eq "a second click reverses them" True \
	"$(json_get "$R" "d['sorted'][1] == sorted(d['sorted'][0], key=lambda r: -1 if r[3] == '-' else int(r[3]), reverse=True)")"
check "the order changed: the first check can fail" \
	test "$(json_get "$R" 'd["rows"] != d["sorted"][0]')" = True

# the control: the page without its rule that wraps long paths scrolls sideways at 1280 px
mkdir -p "$TM_TMP/control"
sed '/overflow-wrap/d' "$page" >"$TM_TMP/control/nowrap.html"
check "the control page opens" "$PY" "$HERE/report_browser.py" "$BROWSER" "$OUT/control" \
	"$timeout" "$TM_TMP/control/nowrap.html" records
check_eq "control: without overflow-wrap, the 150 letters make the page scroll sideways" True \
	"$(json_get "$OUT/control/report.json" "d['overflow']['1280']['scrolls_sideways']")"
unmount_tm
finish
