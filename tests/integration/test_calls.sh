#!/bin/bash
# calls/ through a real mount. One program of known call structure (nested calls, recursion 4
# deep, a tail call, a longjmp past two frames, a call that never returns), written by
# calls_expect.py as TT6, TT6E, CIS501 and Tarmac traces, and as QEMU4V's MIPS code (delay
# slots, $sp on register lines): each format's folded.txt (and Tarmac's and QEMU4V's
# folded-time.txt, which TT6 and CIS501, without time, do not list) and stats.json's calls
# against what the program ran, the same tree of functions and marks. Generated
# traces of each format (gen_tt6, gen_cis501, gen_tarmac on three processors, QEMU4V, FULL by
# full_model.py) and the known program's (but its MIPS code): every view of calls/ and
# calls/cpu/N/ and stats.json's calls are those of the call model (calls_expect.py model,
# call_model.py: doc/calls.md's rules over the instructions the tests' format readers find;
# it gives the program's folded stacks first), and agree with each other (calls_expect.py check),
# FULL's calls all return with its stack pointer checked, the flame graph is XML (xmllint when
# installed). ARM's calculator traces (../shared/realtraces/tarmac, skipped when absent): the
# Fast Models, gem5 and ES traces of one program give the same folded stacks and tree, every
# call returns but those open at the end, nothing resynchronised. `tracemount cat` and `ls`
# give the mount's bytes and sizes. Several processors: the program on processor 0 and again
# 0x10000 higher on processor 1, interleaved in one Tarmac trace with a line of processor 2
# (no instruction): calls/cpu/0 and cpu/1 hold each one's stacks, tree and figures, calls/ is
# processor 0's, calls/cpu lists exactly 0 and 1; a one-processor trace has no calls/cpu; the
# same after a remount that reads the index files. plots/hot.svg, calls/' picture of the hottest
# functions: its bars are the program's functions by self instructions (calls_expect.py), and
# profile.json's top functions in every trace; xmllint finds it well-formed; headless Chromium
# (headless.py, plots_check.py hot) opens it with every bar drawn and named left of it, no text
# outside the picture or overlapping another; an instruction trace without instructions says it
# has no calls. Controls: a count off by one, names moved onto the bars.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CE=$HERE/calls_expect.py
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
R=${REALTRACES:-}
mkdir -p "$SRC/known" "$SRC/gen" "$SRC/real" "$EXP"
tm_seed

# ---- the program of known structure, in each format
KNOWN="prog.tt6:tt6 prog.tt6e:tt6 prog.trace:cis501 prog.tarmac:tarmac prog.qemu4v:mips"
KNOWN="$KNOWN prog-arm.qemu4v:qemu4v-arm"
for kf in $KNOWN; do
	"$PY" "$CE" write "${kf#*:}" "$SRC/known/${kf%%:*}" "$EXP/${kf%%:*}"
done
"$PY" "$CE" write tarmac-cpus "$SRC/known/multi.tarmac" "$EXP/multi.tarmac"

# the MIPS program 200 times over, 24,000 lines: delay slots across chunks and reads; each run
# starts inside the last one's call that never returns (a discontinuity)
"$PY" -c 'import sys; open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read() * 200)' \
	"$SRC/known/prog.qemu4v" "$SRC/gen/prog200.qemu4v"

# ---- generated traces, without call structure of their own
"$GEN_TT6" --format tt6 --records 20000 --seed "$SEED" >"$SRC/gen/gen.tt6"
"$GEN_TT6" --format tt6e --records 20000 --seed $((SEED + 1)) >"$SRC/gen/gen.tt6e"
"$GEN_CIS501" --lines 20000 --seed "$SEED" >"$SRC/gen/gen.trace"
"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect fastmodel --cpus 3 >"$SRC/gen/three.tarmac"
"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect qemu4v >"$SRC/gen/gen.qemu4v"
"$PY" "$HERE/full_model.py" gen "$SRC/gen/gen.full" --steps 5000 --seed "$SEED"
GEN="gen.tt6 gen.tt6e gen.trace three.tarmac gen.qemu4v gen.full"
: >"$SRC/gen/empty.tt6"

REAL=
if [ -n "$R" ] && [ -d "$R/tarmac" ]; then
	for t in calculator-aarch64-fastmodel calculator-aarch64-gem5 \
		calculator-aarch64-es-ld-st-style calculator-aarch32-fastmodel \
		calculator-aarch32-es-ld-st-style; do
		cp "$R/tarmac/$t.tarmac" "$SRC/real/"
		REAL="$REAL $t.tarmac"
	done
else
	skip_part realtraces "no realtraces folder at '$R': ARM's calculator traces not tried"
fi

mount_tm "$SRC"
M=$TM_MNT

# ---- known structure
for kf in $KNOWN; do
	t=${kf%%:*}
	m=$M/known/$t
	check_eq "$t: folded.txt holds the stacks the program ran" "$(cat "$EXP/$t.folded")" \
		"$(LC_ALL=C sort "$m/calls/folded.txt")"
	# a trace without time (TT6, CIS501) lists no folded-time.txt, in the mount or to ls
	if [ -s "$EXP/$t.time" ]; then
		check_eq "$t: folded-time.txt weighs them by time" "$(cat "$EXP/$t.time")" \
			"$(LC_ALL=C sort "$m/calls/folded-time.txt")"
		check_eq "$t: calls/ lists folded-time.txt" folded-time.txt \
			"$(ls "$m/calls" | grep -x folded-time.txt)"
	else
		check_eq "$t: no time, calls/ lists no folded-time.txt" "" \
			"$(ls "$m/calls" | grep -x folded-time.txt)"
		check "$t: no time, no calls/folded-time.txt" test ! -e "$m/calls/folded-time.txt"
		check_eq "$t: no time, tracemount ls lists no folded-time.txt" "" \
			"$(cd "$SRC/known" && "$TRACEMOUNT" ls "$t" | grep folded-time)"
	fi
	for key in instructions calls returns tail_calls resynchronisations never_returned \
		max_depth unmatched_returns discontinuities; do
		check_eq "$t: stats.json calls.$key" "$(json_get "$EXP/$t.json" "d['$key']")" \
			"$(json_get "$m/stats.json" "d['calls']['$key']")"
	done
	check "$t: the never-returning call is marked" grep -q "^  0x6000 .*\[no-return\]$" \
		"$m/calls/tree.txt"
	check "$t: the longjmp's frames are marked unwound" grep -q "^      0x5200 .*\[unwound\]$" \
		"$m/calls/tree.txt"
	check "$t: the tail call is marked" grep -q "^  0x4000 .*\[tail-call\]$" "$m/calls/tree.txt"
	check_eq "$t: plots/hot.svg's bars are the program's functions" "$(cat "$EXP/$t.hot")" \
		"$("$PY" "$HERE/plots_check.py" bars "$m/plots/hot.svg")"
	check_compared "$t" "$PY" "$CE" check "$m"
done
check_eq "the formats' trees agree but for times" \
	"$(sed 's/ t[0-9][0-9]*//g' "$M/known/prog.tarmac/calls/tree.txt")" \
	"$(cat "$M/known/prog.tt6/calls/tree.txt")"
check_eq "TT6 and CIS501 give the same tree" "$(cat "$M/known/prog.tt6/calls/tree.txt")" \
	"$(cat "$M/known/prog.trace/calls/tree.txt")"
# the functions and marks of tree.txt, without instruction numbers, pcs and times
tree_shape() {
	sed 's/  #[^[]*//' "$1"
}
check_eq "MIPS gives TT6's functions and marks" \
	"$(tree_shape "$M/known/prog.tt6/calls/tree.txt")" \
	"$(tree_shape "$M/known/prog.qemu4v/calls/tree.txt")"
check_eq "MIPS: a call's last instruction is its return's delay slot" \
	"  0x2000  #5 @0x2000 t50 -> #19 @0x201c t190" \
	"$(grep '^  0x2000 ' "$M/known/prog.qemu4v/calls/tree.txt")"
check_eq "MIPS: stats.json counts one processor" 1 \
	"$(json_get "$M/known/prog.qemu4v/stats.json" 'len(d["calls"]["processors"])')"

# calls, returns, tail calls, longjmps and calls never returned: 200 times the program's
P200_KEYS='("calls", "returns", "tail_calls", "resynchronisations", "never_returned")'
check_eq "prog200.qemu4v: 200 times the program's calls" \
	"$(json_get "$EXP/prog.qemu4v.json" "' '.join(str(200 * d[k]) for k in $P200_KEYS)")" \
	"$(json_get "$M/gen/prog200.qemu4v/stats.json" \
		"' '.join(str(d['calls'][k]) for k in $P200_KEYS)")"
check_eq "prog200.qemu4v: a discontinuity between runs, each run one call deeper" \
	"199 $(json_get "$EXP/prog.qemu4v.json" 'd["max_depth"] + 199')" \
	"$(json_get "$M/gen/prog200.qemu4v/stats.json" \
		'"%d %d" % (d["calls"]["discontinuities"], d["calls"]["max_depth"])')"
check_compared prog200.qemu4v "$PY" "$CE" check "$M/gen/prog200.qemu4v"

# ---- several processors
# check_cpus MOUNT: the multi-processor trace's calls/cpu/N/ against the program each ran
# shellcheck disable=SC2010,SC2012,SC2013 # ls: the listing is checked; .cpus: numbers
check_cpus() {
	local m=$1/known/multi.tarmac e=$EXP/multi.tarmac cpu key
	check_eq "multi: ls calls/cpu lists the processors that ran" "$(cat "$e.cpus")" \
		"$(ls "$m/calls/cpu" | LC_ALL=C sort -n)"
	check_eq "multi: ls calls lists cpu/ with the six views" \
		"cpu flamegraph.svg folded-time.txt folded.txt profile.json profile.txt tree.txt" \
		"$(ls "$m/calls" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
	check "multi: processor 2 has records (cpu/2.txt)" test -s "$m/cpu/2.txt"
	check "multi: but ran nothing: no calls/cpu/2" test ! -e "$m/calls/cpu/2"
	check "multi: no calls/cpu/2/tree.txt" test ! -e "$m/calls/cpu/2/tree.txt"
	check "prog.tarmac: one processor, no calls/cpu" test ! -e "$1/known/prog.tarmac/calls/cpu"
	check_eq "prog.tarmac: ls calls lists no cpu/" "" \
		"$(ls "$1/known/prog.tarmac/calls" | grep -x cpu)"
	check_eq "multi: calls/folded.txt is processor 0's" "$(cat "$e.folded")" \
		"$(LC_ALL=C sort "$m/calls/folded.txt")"
	for cpu in $(cat "$e.cpus"); do
		check_eq "multi: cpu/$cpu/folded.txt holds the stacks processor $cpu ran" \
			"$(cat "$e.cpu$cpu.folded")" "$(LC_ALL=C sort "$m/calls/cpu/$cpu/folded.txt")"
		check_eq "multi: cpu/$cpu/folded-time.txt weighs them by its own time" \
			"$(cat "$e.cpu$cpu.time")" "$(LC_ALL=C sort "$m/calls/cpu/$cpu/folded-time.txt")"
		for key in instructions calls returns tail_calls resynchronisations never_returned \
			max_depth unmatched_returns discontinuities; do
			check_eq "multi: stats.json calls.processors.$cpu.$key" \
				"$(json_get "$e.cpu$cpu.json" "d['$key']")" \
				"$(json_get "$m/stats.json" "d['calls']['processors']['$cpu']['$key']")"
		done
		check "multi: cpu/$cpu's never-returning call is marked" grep -q \
			"^  0x${cpu/#0/}6000 .*\[no-return\]$" "$m/calls/cpu/$cpu/tree.txt"
		check "multi: cpu/$cpu's longjmp is marked" grep -q \
			"^      0x${cpu/#0/}5200 .*\[unwound\]$" "$m/calls/cpu/$cpu/tree.txt"
	done
	check_eq "multi: cpu/1's tree is cpu/0's 0x10000 higher, but for numbers and times" \
		"$(sed 's/ [#t][0-9][0-9]*//g; s/0x\([0-9a-f]\{4\}\)\b/0x1\1/g' "$m/calls/cpu/0/tree.txt")" \
		"$(sed 's/ [#t][0-9][0-9]*//g' "$m/calls/cpu/1/tree.txt")"
	check "multi: calls/tree.txt is cpu/0's" cmp "$m/calls/tree.txt" "$m/calls/cpu/0/tree.txt"
	check_eq "multi: plots/hot.svg's bars are processor 0's" "$(cat "$e.hot")" \
		"$("$PY" "$HERE/plots_check.py" bars "$m/plots/hot.svg")"
	check_compared multi.tarmac "$PY" "$CE" check "$m"
}
check_cpus "$M"

# ---- generated traces
for t in $GEN; do
	check_compared "$t" "$PY" "$CE" check "$M/gen/$t"
done

# ---- the call model (call_model.py): every view of calls/ and calls/cpu/N/ and stats.json's
# calls, from each trace's instructions as the tests' format readers find them and
# doc/calls.md's rules, never from the mount. Not modelled: MIPS code (prog.qemu4v,
# prog200.qemu4v, checked against the program that wrote them above).
MODELLED="known/prog.tt6:tt6 known/prog.tt6e:tt6e known/prog.trace:cis501"
MODELLED="$MODELLED known/prog.tarmac:tarmac known/prog-arm.qemu4v:qemu4v known/multi.tarmac:tarmac"
MODELLED="$MODELLED gen/gen.tt6:tt6 gen/gen.tt6e:tt6e gen/gen.trace:cis501"
MODELLED="$MODELLED gen/three.tarmac:tarmac gen/gen.qemu4v:qemu4v gen/gen.full:full"
for tf in $MODELLED; do
	t=${tf%%:*}
	check_compared "$t: the call model" "$PY" "$CE" model "${tf#*:}" "$SRC/$t" "$M/$t"
done
# the model agrees with the program that wrote the known traces, before it judges the mount
for t in prog.tt6 prog.trace prog.tarmac prog-arm.qemu4v; do
	check_eq "$t: the call model's folded stacks are the program's" "$(cat "$EXP/$t.folded")" \
		"$("$PY" "$CE" model-folded "$(grep -o "$t:[a-z0-9]*" <<<"$MODELLED" | sed 's/.*://')" \
			"$SRC/known/$t" | LC_ALL=C sort)"
done
check_eq "gen.full: every call returns, nothing resynchronised on r1" \
	"$(json_get "$M/gen/gen.full/stats.json" 'd["calls"]["calls"]') 0" \
	"$(json_get "$M/gen/gen.full/stats.json" \
		'"%d %d" % (d["calls"]["returns"] + d["calls"]["never_returned"], d["calls"]["resynchronisations"])')"
check "gen.full: it calls" test "$(json_get "$M/gen/gen.full/stats.json" 'd["calls"]["calls"]')" -gt 0
check_eq "three.tarmac: stats.json counts three processors" 3 \
	"$(json_get "$M/gen/three.tarmac/stats.json" 'len(d["calls"]["processors"])')"
check_eq "three.tarmac: the processors' instructions are spix/'s" \
	"$(json_get "$M/gen/three.tarmac/stats.json" 'd["spix"]["instructions"]')" \
	"$(json_get "$M/gen/three.tarmac/stats.json" \
		'sum(p["instructions"] for p in d["calls"]["processors"].values())')"
check "three.tarmac: errors.txt says which processor calls/ shows" \
	grep -q "calls/ shows processor 0" "$M/gen/three.tarmac/errors.txt"
# shellcheck disable=SC2012 # ls: the mount's listing is what is checked
check_eq "three.tarmac: calls/cpu/N/ for the three" "0 1 2" \
	"$(ls "$M/gen/three.tarmac/calls/cpu" | LC_ALL=C sort -n | tr '\n' ' ' | sed 's/ $//')"
if command -v xmllint >/dev/null; then
	for t in $GEN; do
		check "$t: xmllint accepts flamegraph.svg" xmllint --noout "$M/gen/$t/calls/flamegraph.svg"
		check "$t: xmllint accepts plots/hot.svg" xmllint --noout "$M/gen/$t/plots/hot.svg"
	done
else
	skip_part tool:xmllint "xmllint is not installed"
fi

# ---- the calculator traces
for t in $REAL; do
	m=$M/real/$t
	check_compared "$t" "$PY" "$CE" check "$m"
	check_eq "$t: every call returns but those open at the end" \
		"$(json_get "$m/stats.json" 'd["calls"]["calls"]')" \
		"$(json_get "$m/stats.json" 'd["calls"]["returns"] + d["calls"]["never_returned"]')"
	check_eq "$t: nothing resynchronised or unmatched" 0 \
		"$(json_get "$m/stats.json" \
			'd["calls"]["resynchronisations"] + d["calls"]["unmatched_returns"]')"
	check "$t: more than 100 calls" test "$(json_get "$m/stats.json" 'd["calls"]["calls"]')" \
		-gt 100
done
# the dialects of one program: the same stacks, and the same tree of functions and marks (the
# ES dialect has no time; the dialects number instructions and end the trace apart)
for isa in aarch64 aarch32; do
	first=
	for t in $REAL; do
		case $t in calculator-$isa-*) ;; *) continue ;; esac
		if [ -z "$first" ]; then
			first=$t
			continue
		fi
		check "$t: the folded stacks of $first" cmp "$M/real/$first/calls/folded.txt" \
			"$M/real/$t/calls/folded.txt"
		check_eq "$t: the tree of $first" "$(tree_shape "$M/real/$first/calls/tree.txt")" \
			"$(tree_shape "$M/real/$t/calls/tree.txt")"
	done
done

# ---- plots/hot.svg
check "empty.tt6: plots/hot.svg says there are no calls" grep -q ">no calls: " \
	"$M/gen/empty.tt6/plots/hot.svg"
mkdir -p "$TM_TMP/controls"
sed 's/\t11\t/\t12\t/' "$EXP/prog.tarmac.hot" >"$TM_TMP/controls/hot.wrong"
check "control: a self count off by one differs from the bars" test "$(cat \
	"$TM_TMP/controls/hot.wrong")" != "$("$PY" "$HERE/plots_check.py" bars \
	"$M/known/prog.tarmac/plots/hot.svg")"
HOT="known/prog.tarmac known/multi.tarmac gen/three.tarmac gen/gen.trace gen/gen.full"
HOT="$HOT gen/gen.tt6 gen/empty.tt6"
for t in $REAL; do
	HOT="$HOT real/$t"
done
# shellcheck disable=SC2086
check_hot_svgs known/prog.tarmac gen/empty.tt6 $HOT

# ---- .tracemount/formats lists calls/ with every instruction format's views, and not BYU's
# (other derivers' views, plots/, may come between the whole-trace and per-processor views)
for f in tt6 tt6e full cis501 tarmac qemu4v; do
	check "formats: $f lists calls/'s views" grep -q \
		"^  views: .* calls/tree.txt calls/profile.txt calls/profile.json calls/folded.txt calls/folded-time.txt calls/flamegraph.svg .*calls/cpu/N/tree.txt calls/cpu/N/profile.txt calls/cpu/N/profile.json calls/cpu/N/folded.txt calls/cpu/N/folded-time.txt calls/cpu/N/flamegraph.svg" \
		<(sed -n "/^$f: /,/^[a-z]/p" "$M/.tracemount/formats")
done
check "formats: byu has no calls/" test -z \
	"$(sed -n '/^byu: /,/^[a-z]/p' "$M/.tracemount/formats" | grep calls/)"

# ---- tracemount cat and ls
cd "$SRC/known" || exit 1
check_cli "$SRC/known" prog.tarmac "$M/known/prog.tarmac" calls/tree.txt calls/profile.txt \
	calls/profile.json calls/folded.txt calls/folded-time.txt calls/flamegraph.svg stats.json
check_cli "$SRC/known" multi.tarmac "$M/known/multi.tarmac" calls/tree.txt \
	calls/cpu/0/tree.txt calls/cpu/1/folded.txt calls/cpu/1/profile.json \
	calls/cpu/1/flamegraph.svg
(cd "$SRC/known" && "$TRACEMOUNT" cat multi.tarmac calls/cpu/2/tree.txt) >/dev/null 2>&1
check_eq "tracemount cat: no calls/cpu/2 for a processor that ran nothing" 1 "$?"
cd / || exit 1

unmount_tm

# ---- remounted: the index files give the same processors
mount_tm "$SRC"
M=$TM_MNT
check_cpus "$M"
check "remount: the multi-processor trace's index was read from its file" grep -q \
	"^[0-9]* built, [1-9][0-9]* read" <(index_counts "$M")
check_eq "remount: no index file refused" 0 \
	"$(index_counts "$M" | sed 's/.* \([0-9]*\) index files refused/\1/')"
unmount_tm
finish
