#!/bin/bash
# calls/ through a real mount. One program of known call structure (nested calls, recursion 4
# deep, a tail call, a longjmp past two frames, a call that never returns), written by
# calls_expect.py as TT6, TT6E, CIS501 and Tarmac traces, and as QEMU4V's MIPS code (delay
# slots, $sp on register lines): each format's folded.txt (and Tarmac's and QEMU4V's
# folded-time.txt) and stats.json's calls against what the program ran, the same tree of
# functions and marks. Generated
# traces of each format (gen_tt6, gen_cis501, gen_tarmac on three processors, QEMU4V, FULL by
# full_model.py): the views agree with each other and with stats.json (calls_expect.py check),
# FULL's calls all return with its stack pointer checked, the flame graph is XML (xmllint when
# installed). ARM's calculator traces (../shared/realtraces/tarmac, skipped when absent): the
# Fast Models, gem5 and ES traces of one program give the same folded stacks and tree, every
# call returns but those open at the end, nothing resynchronised. `tracemount cat` and `ls`
# give the mount's bytes and sizes.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CE=$HERE/calls_expect.py
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
R=${REALTRACES:-}
mkdir -p "$SRC/known" "$SRC/gen" "$SRC/real" "$EXP"
tm_seed

# ---- the program of known structure, in each format
KNOWN="prog.tt6:tt6 prog.tt6e:tt6 prog.trace:cis501 prog.tarmac:tarmac prog.qemu4v:mips"
for kf in $KNOWN; do
	"$PY" "$CE" write "${kf#*:}" "$SRC/known/${kf%%:*}" "$EXP/${kf%%:*}"
done

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

REAL=
if [ -n "$R" ] && [ -d "$R/tarmac" ]; then
	for t in calculator-aarch64-fastmodel calculator-aarch64-gem5 \
		calculator-aarch64-es-ld-st-style calculator-aarch32-fastmodel \
		calculator-aarch32-es-ld-st-style; do
		cp "$R/tarmac/$t.tarmac" "$SRC/real/"
		REAL="$REAL $t.tarmac"
	done
else
	echo "SKIP: no realtraces folder at '$R': ARM's calculator traces not tried"
fi

mount_tm "$SRC"
M=$TM_MNT

# ---- known structure
for kf in $KNOWN; do
	t=${kf%%:*}
	m=$M/known/$t
	check_eq "$t: folded.txt holds the stacks the program ran" "$(cat "$EXP/$t.folded")" \
		"$(LC_ALL=C sort "$m/calls/folded.txt")"
	check_eq "$t: folded-time.txt weighs them by time" "$(cat "$EXP/$t.time")" \
		"$(LC_ALL=C sort "$m/calls/folded-time.txt")"
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

# ---- generated traces
for t in $GEN; do
	check_compared "$t" "$PY" "$CE" check "$M/gen/$t"
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
if command -v xmllint >/dev/null; then
	for t in $GEN; do
		check "$t: xmllint accepts flamegraph.svg" xmllint --noout "$M/gen/$t/calls/flamegraph.svg"
	done
else
	echo "SKIP: xmllint is not installed"
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

# ---- .tracemount/formats lists calls/ with every instruction format's views, and not BYU's
for f in tt6 tt6e full cis501 tarmac qemu4v; do
	check "formats: $f lists calls/'s views" grep -q \
		"^  views: .* calls/tree.txt calls/profile.txt calls/profile.json calls/folded.txt calls/folded-time.txt calls/flamegraph.svg" \
		<(sed -n "/^$f: /,/^[a-z]/p" "$M/.tracemount/formats")
done
check "formats: byu has no calls/" test -z \
	"$(sed -n '/^byu: /,/^[a-z]/p' "$M/.tracemount/formats" | grep calls/)"

# ---- tracemount cat and ls
cd "$SRC/known" || exit 1
check_cli "$SRC/known" prog.tarmac "$M/known/prog.tarmac" calls/tree.txt calls/profile.txt \
	calls/profile.json calls/folded.txt calls/folded-time.txt calls/flamegraph.svg stats.json
cd / || exit 1

unmount_tm
finish
