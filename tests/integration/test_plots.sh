#!/bin/bash
# plots/ in every trace folder (doc/plots.md), for a generated trace of every format: BYU,
# TT6, TT6E, CIS501, Tarmac, QEMU4V, FULL (full_model.py) and spixcounts (the TT6 trace's own
# spix/ counts), and ARM's calculator trace (../shared/realtraces, skipped when absent). Each
# plot is listed, its stat size is the bytes read, xmllint finds it well-formed, and its data
# agree with stats.json (plots_check.py data: the classes' counts, the pages, BYU's memory
# references). Then headless Chromium (headless.py) opens every plot from the mount: no parse
# error, console message, script or request but itself, data drawn, every text inside
# the picture and none overlapping another (plots_check.py browser). Controls show the checks
# can fail: a band's count off by one, a text pushed off the picture, an empty drawing.
#
# Without Chromium (chromium, or TM_BROWSER) the browser's part says SKIP, unless
# TM_REQUIRE_BROWSER=1 (scripts/test sets it): then it fails.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
OUT=$TM_TMP/browser
mkdir -p "$SRC" "$OUT" "$TM_TMP/controls"
tm_seed

"$GEN_BYU" -n 20000 -s "$SEED" >"$SRC/gen.byu"
"$GEN_TT6" --format tt6 --records 20000 --seed "$SEED" >"$SRC/gen.tt6"
"$GEN_TT6" --format tt6e --records 20000 --seed "$SEED" >"$SRC/gen.tt6e"
"$GEN_CIS501" --lines 20000 --seed "$SEED" >"$SRC/gen.trace"
"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect fastmodel >"$SRC/gen.tarmac"
"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect qemu4v --cpus 2 >"$SRC/gen.qemu4v"
"$PY" "$HERE/full_model.py" gen "$SRC/gen.full" --steps 3000 --seed "$SEED"
(cd "$SRC" && "$TRACEMOUNT" cat gen.tt6 spix/gen.spixcounts) >"$SRC/gen.spixcounts"
# BYU: an empty trace has no records, and its plots say so
: >"$SRC/empty.byu"
TRACES="gen.byu gen.tt6 gen.tt6e gen.trace gen.tarmac gen.qemu4v gen.full gen.spixcounts"
REAL=${REALTRACES:-}
if [ -n "$REAL" ] && [ -d "$REAL/tarmac" ]; then
	cp "$REAL/tarmac/calculator-aarch64-fastmodel.tarmac" "$SRC/"
	TRACES="$TRACES calculator-aarch64-fastmodel.tarmac"
else
	echo "SKIP: no realtraces folder at '$REAL': ARM's calculator trace not plotted"
fi
PLOTS="mix.svg footprint.svg"

mount_tm "$SRC"
M=$TM_MNT

for t in $TRACES empty.byu; do
	own= # the format's own plots (doc/plots.md)
	case $t in *.tarmac | *.qemu4v) own=" processors.svg" ;; *.tt6 | *.tt6e) own=" sync.svg" ;; esac
	check_eq "$t: plots/ lists the plots" "footprint.svg mix.svg$own" \
		"$(ls "$M/$t/plots" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
	for p in $PLOTS; do
		f=$M/$t/plots/$p
		# through cat: wc -c of a file would take its size from stat
		# shellcheck disable=SC2002
		check_eq "$t: plots/$p: stat size = bytes read" "$(stat -c %s "$f")" \
			"$(cat "$f" | wc -c)"
		if command -v xmllint >/dev/null; then
			check "$t: plots/$p is well-formed XML" xmllint --noout "$f"
		fi
	done
	check_compared "$t" "$PY" "$HERE/plots_check.py" data "$t" "$M/$t/stats.json" \
		"$M/$t/plots/mix.svg" "$M/$t/plots/footprint.svg"
done
command -v xmllint >/dev/null || echo "SKIP: xmllint is absent (Debian's libxml2-utils)"
check "empty.byu: mix.svg says the trace has no records" \
	grep -q "the trace has no records" "$M/empty.byu/plots/mix.svg"
check "gen.spixcounts: footprint.svg says its records give no addresses" \
	grep -q "give no addresses" "$M/gen.spixcounts/plots/footprint.svg"

# the data check's control: one band's count off by one
sed 's/data-records="\([0-9]*\)"/data-records="1\1"/' "$M/gen.byu/plots/mix.svg" \
	>"$TM_TMP/controls/wrong.svg"
"$PY" "$HERE/plots_check.py" data gen.byu "$M/gen.byu/stats.json" "$TM_TMP/controls/wrong.svg" \
	"$M/gen.byu/plots/footprint.svg" >"$TM_TMP/controls/wrong.out"
check "a wrong count in mix.svg fails the data check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/wrong.out"

BROWSER=${TM_BROWSER:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$BROWSER" ]; then
	if [ "${TM_REQUIRE_BROWSER:-}" = 1 ]; then
		check "chromium is installed, as TM_REQUIRE_BROWSER=1 asks (scripts/deps installs it)" false
	else
		echo "SKIP: chromium is not installed (scripts/deps installs it): plots not opened"
	fi
	unmount_tm
	finish
fi

# the browser's controls: a text pushed off the picture, a drawing with nothing in it
sed 's/<text x="[0-9.]*"/<text x="5000"/' "$M/gen.byu/plots/mix.svg" >"$TM_TMP/controls/off.svg"
cat >"$TM_TMP/controls/blank.svg" <<'XML'
<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><title>blank</title>
<rect width="100" height="100" fill="#ffffff"/></svg>
XML
# headless.py writes the Nth file's report as N.json: SHOT[NAME] is OUT/N
files=()
declare -A SHOT
for t in $TRACES empty.byu; do
	for p in $PLOTS; do
		SHOT[$t/$p]=$OUT/${#files[@]}
		files+=("$M/$t/plots/$p")
	done
done
SHOT[off]=$OUT/${#files[@]}
SHOT[blank]=$OUT/$((${#files[@]} + 1))
timeout=30
[ -n "${TM_DAEMON_WRAP:-}" ] && timeout=300
check "Chromium opens every plot" "$PY" "$HERE/headless.py" "$BROWSER" "$OUT" "$timeout" \
	"${files[@]}" "$TM_TMP/controls/off.svg" "$TM_TMP/controls/blank.svg"
for t in $TRACES empty.byu; do
	for p in $PLOTS; do
		# plots that say they have no data: those of no records, and of no addresses
		nodata=
		[ "$t" = empty.byu ] || [ "$t/$p" = gen.spixcounts/footprint.svg ] && nodata=nodata
		[ -f "${SHOT[$t/$p]}.json" ] && check_compared "$t/$p" "$PY" "$HERE/plots_check.py" \
			browser "$t/$p" "${SHOT[$t/$p]}.json" $nodata
	done
done
"$PY" "$HERE/plots_check.py" browser off "${SHOT[off]}.json" >"$TM_TMP/controls/off.out"
check "a text off the picture fails the browser check" \
	grep -q "every text inside the picture	\[\]	\[.\+\]" "$TM_TMP/controls/off.out"
"$PY" "$HERE/plots_check.py" browser blank "${SHOT[blank]}.json" >"$TM_TMP/controls/blank.out"
check "an empty drawing fails the browser check" \
	grep -q "data drawn	True	False" "$TM_TMP/controls/blank.out"

unmount_tm
finish
