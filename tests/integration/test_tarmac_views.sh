#!/bin/bash
# Every view of QEMU4V and ARM Tarmac traces through a real mount, against expectations
# computed without tracemount by tarmac_expect.py (plain Python splitting of each line):
#
# - the real traces of $REALTRACES/tarmac: the Fast Models AArch32 and AArch64 and gem5
#   calculators (one also gzip-compressed, one named run.log: recognised by content), and
#   parsertest.txt (lines of many generators, recognised by content under its own name), which
#   must parse without losing a line;
# - traces gen_tarmac writes as the spec's examples (qemu4v, two cpus, also gzip-compressed),
#   as MicroTESK writes them (tracer_0001.log: three cpus, M and R lines without cpu, -1
#   before the first instruction, times stepping back between cpus), as older MicroTESK logs
#   without the cpu field (.q4v), and as Fast Models multi-core (four cpus, cpuN tokens,
#   16-digit addresses, ns), and the same with twelve cpus and no time stamps.
#
# For each: the format recognised; tarmac_expect.py compare (every view byte for byte and
# every stats.json key, or for parsertest.txt that every line is in one class stream and one
# cpu file and every line the Python reader knows is in its class); then real tools: wc -l of
# dump.txt against the trace's lines, grep -c of the .din against the instruction and write
# counts, stat sizes, tail, dd reads at random offsets, `tracemount cat` (the mounted bytes)
# and `tracemount ls` (the stat sizes).
#
# plots/processors.svg (doc/plots.md) of each, against the model's lanes (series_expect.py
# through tarmac_expect.py, which reads the ES lines of the real ES-dialect traces too):
# xmllint, headless Chromium (plots_check.py browser: no error, script or request, data drawn,
# texts inside the picture and apart), and a control: a slice's count off by one fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
EXPECT="$HERE/tarmac_expect.py"
tm_seed

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
PLAIN=$TM_TMP/plain # the decompressed bytes of every trace, by its relative path
mkdir -p "$SRC/real" "$SRC/gen/sub" "$EXP" "$PLAIN"

# TRACES: "PATH FORMAT" pairs.
TRACES=
R=${REALTRACES:-}/tarmac
if [ -d "$R" ]; then
	cp "$R/calculator-aarch32-fastmodel.tarmac" "$R/calculator-aarch64-fastmodel.tarmac" \
		"$R/calculator-aarch64-gem5.tarmac" "$R/parsertest.txt" "$SRC/real/"
	gzip -9 -c "$R/calculator-aarch64-gem5.tarmac" >"$SRC/real/gem5.tarmac.gz"
	cp "$R/calculator-aarch32-fastmodel.tarmac" "$SRC/real/run.log"
	cp "$R/calculator-aarch32-es-ld-st-style.tarmac" "$R/calculator-aarch64-es-ld-st-style.tarmac" \
		"$SRC/real/"
	TRACES="real/calculator-aarch32-fastmodel.tarmac tarmac
real/calculator-aarch32-es-ld-st-style.tarmac tarmac
real/calculator-aarch64-es-ld-st-style.tarmac tarmac
real/calculator-aarch64-fastmodel.tarmac tarmac
real/calculator-aarch64-gem5.tarmac tarmac
real/gem5.tarmac.gz tarmac
real/run.log tarmac
real/parsertest.txt tarmac"
else
	skip_part realtraces "$R not found: the real Tarmac traces are not tested"
fi

"$GEN_TARMAC" --lines 60000 --seed 11 --dialect qemu4v --cpus 2 >"$SRC/gen/spec.qemu4v"
gzip -c "$SRC/gen/spec.qemu4v" >"$SRC/gen/sub/spec.qemu4v.gz"
"$GEN_TARMAC" --lines 40000 --seed 12 --dialect microtesk --cpus 3 >"$SRC/gen/tracer_0001.log"
"$GEN_TARMAC" --lines 20000 --seed 13 --dialect microtesk-old >"$SRC/gen/old.q4v"
"$GEN_TARMAC" --lines 50000 --seed 14 --dialect fastmodel --cpus 4 --addr64 --unit ns \
	>"$SRC/gen/multi.tarmac"
# no time stamps: plots/processors.svg counts by line, in eight lanes and the others'
"$GEN_TARMAC" --lines 30000 --seed 15 --dialect fastmodel --cpus 12 |
	sed -E 's/^-?[0-9]+ [a-z]+ //' >"$SRC/gen/untimed.tarmac"
TRACES="$TRACES
gen/untimed.tarmac tarmac
gen/spec.qemu4v qemu4v
gen/sub/spec.qemu4v.gz qemu4v
gen/tracer_0001.log qemu4v
gen/old.q4v qemu4v
gen/multi.tarmac tarmac"
TRACES=${TRACES#$'\n'} # no empty first line where the real traces are absent
check_eq "gen_tarmac --lines 60000 writes 60000 lines" 60000 "$(wc -l <"$SRC/gen/spec.qemu4v")"
check_eq "gen_tarmac writes the same trace for the same seed" \
	"$(cksum <"$SRC/gen/old.q4v")" \
	"$("$GEN_TARMAC" --lines 20000 --seed 13 --dialect microtesk-old | cksum)"
check "gen_tarmac qemu4v: the spec's instruction lines (T clk CPU IT (N) ADDR OPCODE)" \
	grep -qE '^[0-9]+ clk 1 IT \([0-9]+\) [0-9a-f]{8} [0-9a-f]{8} [AT] [a-zA-Z0-9_]+ : ' \
	"$SRC/gen/spec.qemu4v"
check "gen_tarmac microtesk: register lines at -1 before the first instruction" \
	test "$(head -n 1 "$SRC/gen/tracer_0001.log" | cut -d' ' -f1-3)" = "-1 clk R"
check "gen_tarmac microtesk-old: no cpu field" grep -qE '^[0-9]+ clk IT \(' "$SRC/gen/old.q4v"

# stem_of PATH: the base name less .gz and the last extension.
stem_of() {
	local b=${1##*/}
	b=${b%.gz}
	echo "${b%.*}"
}

while read -r t fmt; do
	ext=$fmt
	mkdir -p "$(dirname "$PLAIN/$t")"
	gzip -dcf <"$SRC/$t" >"$PLAIN/$t"
	"$PY" "$EXPECT" expect "$PLAIN/$t" "$EXP/$t" "$(stem_of "$t")" "$ext"
	check "$t: expectations computed" test -s "$EXP/$t/meta.json"
done <<<"$TRACES"
check "parsertest.txt holds lines the Python reader leaves to tracemount (ES, LD, ST)" \
	test "$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["foreign"]))' \
		"$EXP/real/parsertest.txt/meta.json" 2>/dev/null || echo 0)" -gt 0 -o ! -d "$R"

mount_tm "$SRC"
MNT=$TM_MNT

while read -r t fmt; do
	stem=$(stem_of "$t")
	e=$EXP/$t
	m=$MNT/$t
	echo "--- $t"
	check "$t is a folder in the mount" test -d "$m"
	check_eq "$t: recognised as $fmt" "$fmt" "$(json_get "$m/stats.json" 'd["format"]')"

	check_compared "$t" "$PY" "$EXPECT" compare "$e" "$m" "$t"

	# Real tools against the trace itself and stats.json.
	lines=$(wc -l <"$PLAIN/$t")
	check_eq "$t: wc -l dump.txt = wc -l of the trace" "$lines" "$(wc -l <"$m/dump.txt")"
	check_eq "$t: cat cpu/*.txt | wc -l = wc -l of the trace" "$lines" \
		"$(cat "$m"/cpu/*.txt | wc -l)"
	# a condition-failed instruction was fetched too: a fetch in the din
	fetches=$(grep -c '^2 ' "$m/convert/$stem.din")
	check_eq "$t: grep -c '^2 ' of the .din = executed + condition_failed" \
		"$(json_get "$m/stats.json" 'd["classes"]["executed"] + d["classes"]["condition_failed"]')" \
		"$fetches"
	check_eq "$t: grep -c '^2 ' of the .din = stats.json's din fetches" \
		"$(json_get "$m/stats.json" 'd[d["format"]]["din"]["fetches"]')" "$fetches"
	check_eq "$t: grep -c '^1 ' of the .din = memory_writes" \
		"$(json_get "$m/stats.json" 'd["classes"]["memory_writes"]')" \
		"$(grep -c '^1 ' "$m/convert/$stem.din")"
	check "$t: raw is the trace's (decompressed) bytes" cmp "$PLAIN/$t" "$m/raw"
	check_eq "$t: stat size of raw" "$(wc -c <"$PLAIN/$t")" "$(stat -c %s "$m/raw")"

	if [ -f "$e/dump.txt" ]; then
		for view in dump.txt "convert/$stem.din" class/registers.txt "class/memory_reads.$fmt" \
			cpu/0.txt; do
			[ -f "$e/$view" ] || continue
			check_eq "$t: stat size of $view" "$(wc -c <"$e/$view")" \
				"$(stat -c %s "$m/$view")"
			check_eq "$t: tail -n 3 $view" "$(tail -n 3 "$e/$view")" "$(tail -n 3 "$m/$view")"
			size=$(wc -c <"$e/$view")
			[ "$size" -gt 0 ] || continue
			bad=
			for _ in $(seq 1 6); do
				off=$(random_below "$size")
				len=$((1 + $(random_below 20000)))
				dd_same "$m/$view" "$e/$view" "$off" "$len" >/dev/null || bad="$bad $off+$len"
			done
			check_eq "$t: 6 dd reads at random offsets of $view" "" "$bad"
		done
	fi

	# `tracemount cat` from SOURCE gives the mounted bytes; `tracemount ls` the stat sizes.
	check_cli "$SRC" "$t" "$m" dump.txt stats.json errors.txt "convert/$stem.din" \
		"class/events.$fmt" cpu/0.txt
done <<<"$TRACES"

if [ -d "$R" ]; then
	# report.html, the trace's page, names the trace as stats.json does
	check "real/gem5.tarmac.gz: every view equals that of the plain trace (but stats.json)" \
		diff -r -x stats.json -x report.html -x 'calculator-aarch64-gem5.din' -x 'gem5.din' \
		-x 'calculator-aarch64-gem5.spixcounts' -x 'gem5.spixcounts' \
		"$MNT/real/calculator-aarch64-gem5.tarmac" "$MNT/real/gem5.tarmac.gz"
	check "real/gem5.tarmac.gz: the same spix counts under its own name" cmp \
		"$MNT/real/calculator-aarch64-gem5.tarmac/spix/calculator-aarch64-gem5.spixcounts" \
		"$MNT/real/gem5.tarmac.gz/spix/gem5.spixcounts"
	check "real/gem5.tarmac.gz: the same .din under its own name" cmp \
		"$MNT/real/calculator-aarch64-gem5.tarmac/convert/calculator-aarch64-gem5.din" \
		"$MNT/real/gem5.tarmac.gz/convert/gem5.din"
	check_eq "parsertest.txt: lines on cpus 0 and 1" "0.txt 1.txt" \
		"$(ls "$MNT/real/parsertest.txt/cpu" | paste -sd' ')"
	# ES (ADDR:--------): a fetch that failed, no instruction executed
	p=$MNT/real/parsertest.txt
	check_eq "parsertest.txt: its two failed fetches are their own class" 2 \
		"$(json_get "$p/stats.json" 'd["classes"]["fetch_failed"]')"
	check_eq "parsertest.txt: dump.txt shows them as IF" \
		"307754 tic 0 IF 0000aaaaabaf59f0 -------- O el0t_ns -|11519 tic 0 IF 10000b58 -------- T thrd_s -" \
		"$(grep ' IF ' "$p/dump.txt" | paste -sd'|')"
	check_eq "parsertest.txt: no din line fetches their addresses" 0 \
		"$(grep -ciE '^2 (aaaaabaf59f0|10000b58)$' "$p/convert/parsertest.din")"
	check_eq "parsertest.txt: the din fetches the executed and condition-failed instructions" \
		"$(json_get "$p/stats.json" 'd["classes"]["executed"] + d["classes"]["condition_failed"]')" \
		"$(grep -c '^2 ' "$p/convert/parsertest.din")"
	check_eq "parsertest.txt: spix/ counts the instructions the din fetches, not the failed fetches" \
		"$(grep -c '^2 ' "$p/convert/parsertest.din")" \
		"$(json_get "$p/stats.json" 'd["spix"]["instructions"]')"
	# One program run, traced by Fast Models (IT and IS), gem5 and the ES style (no failed
	# condition marked in AArch64): the same fetches. Their memory lines differ, as each
	# simulator logs a pair or a wide access (one MW16 or ST, or two MW8).
	for run in "aarch64-fastmodel aarch64-gem5 aarch64-es-ld-st-style" \
		"aarch32-fastmodel aarch32-es-ld-st-style"; do
		set -- $run
		first=$MNT/real/calculator-$1.tarmac/convert/calculator-$1.din
		for other in "${@:2}"; do
			check "calculator-$1 and calculator-$other: the din's fetches are the same" \
				cmp <(grep '^2 ' "$first") \
				<(grep '^2 ' "$MNT/real/calculator-$other.tarmac/convert/calculator-$other.din")
		done
		check_eq "calculator-$1: the din fetches every IT and IS line" \
			"$(grep -c ' I[TS] (' "$R/calculator-$1.tarmac")" "$(grep -c '^2 ' "$first")"
	done
fi
check "gen/sub/spec.qemu4v.gz: every view equals that of gen/spec.qemu4v (but stats.json)" \
	diff -r -x stats.json -x report.html "$MNT/gen/spec.qemu4v" "$MNT/gen/sub/spec.qemu4v.gz"

# plots/processors.svg: well-formed, in a browser, and a control for the model's check
files=()
while read -r t fmt; do
	if command -v xmllint >/dev/null; then
		check "$t: plots/processors.svg is well-formed XML" \
			xmllint --noout "$MNT/$t/plots/processors.svg"
	fi
	files+=("$MNT/$t/plots/processors.svg")
done <<<"$TRACES"
command -v xmllint >/dev/null || skip_part tool:xmllint "xmllint is absent (Debian's libxml2-utils)"
check_eq "gen/untimed.tarmac: plots/processors.svg counts by line, the cpus past 8 as others" \
	"other cpus|position in the trace (records)" \
	"$(grep -o 'position in the trace (records)\|data-series="other cpus"' \
		"$MNT/gen/untimed.tarmac/plots/processors.svg" | sed 's/data-series="\(.*\)"/\1/' |
		sort -u | paste -sd'|')"
mkdir -p "$TM_TMP/controls"
sed 's/data-counts="\([0-9]*\)/data-counts="1\1/' "$MNT/gen/multi.tarmac/plots/processors.svg" \
	>"$TM_TMP/controls/wrong.svg"
"$PY" "$EXPECT" processors "$EXP/gen/multi.tarmac" "$TM_TMP/controls/wrong.svg" \
	>"$TM_TMP/controls/wrong.out"
check "a slice's count off in plots/processors.svg fails the model's check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/wrong.out"
"$PY" "$EXPECT" processors "$EXP/gen/multi.tarmac" "$MNT/gen/multi.tarmac/plots/processors.svg" \
	>"$TM_TMP/controls/right.out"
check "the same check passes on the plot itself" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit bad || NR == 0 }' "$TM_TMP/controls/right.out"
if tm_browser "plots/processors.svg"; then
	timeout=$(tm_browser_timeout)
	check "Chromium opens every plots/processors.svg" "$PY" "$HERE/headless.py" "$BROWSER" \
		"$TM_TMP/browser" "$timeout" "${files[@]}"
	n=0
	while read -r t fmt; do
		# a note (the model's series_expect.is_note) draws no data
		nodata=$("$PY" "$EXPECT" note "$EXP/$t")
		[ -f "$TM_TMP/browser/$n.json" ] && check_compared "$t" "$PY" "$HERE/plots_check.py" \
			browser "$t/plots/processors.svg" "$TM_TMP/browser/$n.json" $nodata
		n=$((n + 1))
	done <<<"$TRACES"
fi

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
