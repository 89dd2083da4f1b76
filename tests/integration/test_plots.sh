#!/bin/bash
# plots/ in every trace folder (doc/plots.md), for a generated trace of every format: BYU,
# TT6, TT6E, CIS501, Tarmac, QEMU4V, FULL (full_model.py) and spixcounts (the TT6 trace's own
# spix/ counts), and ARM's calculator trace and the BYU-12 traces (../shared/realtraces,
# skipped when absent). Each
# plot is listed, sized 0 before its first open (a product, built lazily) and, after it, its
# stat size is the bytes read, xmllint finds it well-formed, and its data
# agree with the format's model (model_facts.py, plots_check.py data: the classes' counts, the pages, BYU's memory
# references, addresses.svg's panels, regions and rows), and FULL's addresses.svg and
# registers.svg with full_model.py's accesses and register changes (plots_check.py model,
# registers). Then headless Chromium (headless.py) opens every plot from the mount: no parse
# error, console message, script or request but itself, data drawn, every text inside
# the picture and none overlapping another (plots_check.py browser). Controls show the checks
# can fail: a band's count off by one, a row's count off (addresses.svg, registers.svg), a text
# pushed off the picture, an empty drawing.
#
# Without Chromium (chromium, or TM_BROWSER) the browser's part says SKIP, unless
# TM_REQUIRE_BROWSER=1 (scripts/test sets it): then it fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
OUT=$TM_TMP/browser
mkdir -p "$SRC" "$OUT" "$TM_TMP/controls"
tm_seed

# empty.byu: an empty trace has no records, and its plots say so
gen_every_format "$SRC"
"$PY" "$HERE/full_model.py" expect "$TM_TMP/full" --steps 3000 --seed "$SEED"
TRACES="gen.byu gen.tt6 gen.tt6e gen.trace gen.tarmac gen.qemu4v gen.full gen.spixcounts"
REAL=${REALTRACES:-}
if [ -n "$REAL" ] && [ -d "$REAL/tarmac" ]; then
	cp "$REAL/tarmac/calculator-aarch64-fastmodel.tarmac" "$SRC/"
	TRACES="$TRACES calculator-aarch64-fastmodel.tarmac"
else
	skip_part realtraces "no realtraces folder at '$REAL': ARM's calculator trace not plotted"
fi
# the real BYU-12 traces touch addresses all over 1 GiB: addresses.svg in regions
if [ -n "$REAL" ] && [ -d "$REAL/byu12" ]; then
	for f in "$REAL"/byu12/*.tr; do
		cp "$f" "$SRC/"
		TRACES="$TRACES $(basename "$f")"
	done
else
	skip_part realtraces "no realtraces folder at '$REAL': the BYU-12 traces not plotted"
fi
PLOTS="mix.svg footprint.svg addresses.svg"
# a TT6 trace without sync records: its INITIAL_PC, then 1000 times li r3,1
{
	printf '\x00\x01\x00\x00'
	for _ in $(seq 1000); do printf '\x38\x60\x00\x01'; done
} >"$SRC/nosync.tt6"
# a Tarmac trace of one processor, an instruction every 10 ticks but a stall of 500 at
# instruction 300: its rate over time varies
awk 'BEGIN { t = 0; for (i = 0; i < 1000; i++) { t += (i == 300 ? 500 : 10);
	printf "%d clk IT (%d) %08x d503201f O EL3h_s : NOP\n", t, i, 4096 + 4 * i } }' \
	>"$SRC/stall.tarmac"

mount_tm "$SRC"
M=$TM_MNT

# plots_of TRACE: its plots, every trace's and its format's own
plots_of() {
	case $1 in
	gen.full) echo "$PLOTS registers.svg" ;;
	*.tarmac | *.qemu4v) echo "$PLOTS processors.svg" ;;
	*.tt6 | *.tt6e) echo "$PLOTS sync.svg" ;;
	*) echo "$PLOTS" ;;
	esac
}

# format_of TRACE: the format each of these traces is written in
format_of() {
	case $1 in
	*.trace) echo cis501 ;;
	*.tr) echo byu12 ;;
	*) echo "${1##*.}" ;;
	esac
}

for t in $TRACES empty.byu; do
	# hot.svg (calls/' or spixcounts'): test_calls and test_spix check it
	check_eq "$t: plots/ lists the plots" "$(plots_of "$t" | tr ' ' '\n' | LC_ALL=C sort |
		tr '\n' ' ' | sed 's/ $//')" \
		"$(ls "$M/$t/plots" | grep -vx hot.svg | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
	# plots/ is a product, built lazily: before the first open of one of its files, nothing
	# has built it (no stat does, so that a listing with sizes costs nothing), and each plot
	# is sized 0, as /proc's files are (doc/architecture.md, "Products")
	check_eq "$t: plots/ sized 0 before a first open builds them" \
		"$(plots_of "$t" | sed 's/[^ ]*/0/g')" \
		"$(for p in $(plots_of "$t"); do stat -c %s "$M/$t/plots/$p"; done | paste -sd' ')"
	for p in $(plots_of "$t"); do
		f=$M/$t/plots/$p
		# through cat: wc -c of a file would take its size from stat. The stat after the
		# read: the open built the plot and told the kernel to forget its size 0
		# shellcheck disable=SC2002
		n=$(cat "$f" | wc -c)
		check_eq "$t: plots/$p: stat size after its open = bytes read" "$n" \
			"$(stat -c %s "$f")"
		if command -v xmllint >/dev/null; then
			check "$t: plots/$p is well-formed XML" xmllint --noout "$f"
		fi
	done
	# the records, classes, instructions and din fetches plotted: the format's model's
	# (model_facts.py), with stats.json's plots object, which lays out the drawing
	check "$t: the model's facts" "$PY" "$HERE/model_facts.py" merge "$(format_of "$t")" \
		"$SRC/$t" "$M/$t/stats.json" "$TM_TMP/$t.facts" "$TM_TMP/full/stats.json"
	check_compared "$t" "$PY" "$HERE/plots_check.py" data "$t" "$TM_TMP/$t.facts" \
		"$M/$t/plots/mix.svg" "$M/$t/plots/footprint.svg" "$M/$t/plots/addresses.svg"
done
check_compared "gen.full: addresses.svg against the model" "$PY" "$HERE/plots_check.py" model \
	gen.full "$M/gen.full/plots/addresses.svg" "$TM_TMP/full/accesses.json"
check_compared "gen.full: registers.svg against the model" "$PY" "$HERE/plots_check.py" \
	registers gen.full "$M/gen.full/plots/registers.svg" "$M/gen.full/stats.json" \
	"$TM_TMP/full/registers.json"
command -v xmllint >/dev/null || skip_part tool:xmllint "xmllint is absent (Debian's libxml2-utils)"
check "empty.byu: mix.svg says the trace has no records" \
	grep -q "the trace has no records" "$M/empty.byu/plots/mix.svg"
# a plot with nothing to show is a one-line note, not a full-size empty chart
for p in mix.svg footprint.svg addresses.svg; do
	check_compared "empty.byu/$p" "$PY" "$HERE/plots_check.py" note "empty.byu/$p" \
		"$M/empty.byu/plots/$p"
done
check_compared "nosync.tt6/sync.svg" "$PY" "$HERE/plots_check.py" note nosync.tt6/sync.svg \
	"$M/nosync.tt6/plots/sync.svg"
check "nosync.tt6: sync.svg says there are no sync records" \
	grep -q 'data-note="no sync records' "$M/nosync.tt6/plots/sync.svg"
check_compared "gen.tt6/sync.svg, with sync records, is no note" echo -e \
	"gen.tt6: no data-note\tFalse\t$(grep -q data-note "$M/gen.tt6/plots/sync.svg" &&
		echo True || echo False)"
# one processor: no solid block (a steady rate or no time is a note; a varying rate a line)
for t in gen.tarmac stall.tarmac gen.qemu4v $(echo "$TRACES" | grep -o '[^ ]*calculator[^ ]*'); do
	check_compared "$t/processors.svg" "$PY" "$HERE/plots_check.py" processors \
		"$t/processors.svg" "$M/$t/plots/processors.svg"
done
check "stall.tarmac: processors.svg draws the rate, which dips at the stall" \
	grep -q 'data-series="cpu 0" data-total="1000"' "$M/stall.tarmac/plots/processors.svg"
check "calculator-aarch64-fastmodel.tarmac or none: one instruction per clk is a note" \
	bash -c "[ ! -d '$M/calculator-aarch64-fastmodel.tarmac' ] || grep -q \
		'data-note=\"only cpu 0, at a steady rate of 1 instructions per clk' \
		'$M/calculator-aarch64-fastmodel.tarmac/plots/processors.svg'"
for p in footprint.svg addresses.svg; do
	check "gen.spixcounts: $p says its records give no addresses" \
		grep -q "give no addresses" "$M/gen.spixcounts/plots/$p"
	check_compared "gen.spixcounts/$p" "$PY" "$HERE/plots_check.py" note \
		"gen.spixcounts/$p" "$M/gen.spixcounts/plots/$p"
done
check "empty.byu: addresses.svg says the trace has no records" \
	grep -q "the trace has no records" "$M/empty.byu/plots/addresses.svg"

# the data check's control: one band's count off by one
sed 's/data-records="\([0-9]*\)"/data-records="1\1"/' "$M/gen.byu/plots/mix.svg" \
	>"$TM_TMP/controls/wrong.svg"
"$PY" "$HERE/plots_check.py" data gen.byu "$M/gen.byu/stats.json" "$TM_TMP/controls/wrong.svg" \
	"$M/gen.byu/plots/footprint.svg" "$M/gen.byu/plots/addresses.svg" \
	>"$TM_TMP/controls/wrong.out"
check "a wrong count in mix.svg fails the data check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/wrong.out"
# and of addresses.svg: one row's first count one more, in the data and the model checks
for t in gen.byu gen.full; do
	sed '0,/data-counts="\([0-9]*\)/s//data-counts="1\1/' "$M/$t/plots/addresses.svg" \
		>"$TM_TMP/controls/$t.addresses.svg"
done
"$PY" "$HERE/plots_check.py" data gen.byu "$M/gen.byu/stats.json" "$M/gen.byu/plots/mix.svg" \
	"$M/gen.byu/plots/footprint.svg" "$TM_TMP/controls/gen.byu.addresses.svg" \
	>"$TM_TMP/controls/rows.out"
check "a wrong row in addresses.svg fails the data check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/rows.out"
"$PY" "$HERE/plots_check.py" model gen.full "$TM_TMP/controls/gen.full.addresses.svg" \
	"$TM_TMP/full/accesses.json" >"$TM_TMP/controls/model.out"
check "a wrong row in addresses.svg fails the model check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/model.out"
sed '0,/data-counts="\([0-9]*\)/s//data-counts="1\1/' "$M/gen.full/plots/registers.svg" \
	>"$TM_TMP/controls/registers.svg"
"$PY" "$HERE/plots_check.py" registers gen.full "$TM_TMP/controls/registers.svg" \
	"$M/gen.full/stats.json" "$TM_TMP/full/registers.json" >"$TM_TMP/controls/registers.out"
check "a wrong row in registers.svg fails the model check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/registers.out"

if ! tm_browser "the plots"; then
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
	for p in $(plots_of "$t"); do
		SHOT[$t/$p]=$OUT/${#files[@]}
		files+=("$M/$t/plots/$p")
	done
done
SHOT[off]=$OUT/${#files[@]}
SHOT[blank]=$OUT/$((${#files[@]} + 1))
timeout=$(tm_browser_timeout)
check "Chromium opens every plot" "$PY" "$HERE/headless.py" "$BROWSER" "$OUT" "$timeout" \
	"${files[@]}" "$TM_TMP/controls/off.svg" "$TM_TMP/controls/blank.svg"
for t in $TRACES empty.byu; do
	for p in $(plots_of "$t"); do
		# plots that say they have no data: those of no records, and of no addresses
		nodata=
		# a note (checked above: empty.byu's, gen.spixcounts' without addresses, a
		# steady processor's) draws no data
		case $t/$p in
		empty.byu/* | gen.spixcounts/footprint.svg | gen.spixcounts/addresses.svg)
			nodata=nodata ;;
		*/processors.svg) grep -q data-note "$M/$t/plots/$p" && nodata=nodata ;;
		esac
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
