#!/bin/bash
# calls/flamegraph.svg in a real browser: headless Chromium, started once (headless.py, over
# the DevTools pipe), opens each trace's flame graph straight from the mount. Each must open as
# SVG with no XML parse error, no console message, no script and no request but itself, and
# show one frame per stack wide enough to draw, named and as wide as its instructions say
# (flamegraph_expect.py, from folded.txt: for the program of known call structure of
# calls_expect.py, the stacks the program ran; for the others, the mount's folded.txt), the
# screenshot showing each frame's colour where the frame is. The traces: that program (TT6),
# generated TT6 and CIS501 traces of random calls, a trace without calls (one frame and
# "all"), one without instructions (no frame), and ARM's calculator traces
# (../shared/realtraces/tarmac, skipped when absent; the AArch64 one with its image, whose C++
# functions are shown demangled, their symbols in the tooltips). Controls show the checks can fail: a cut
# SVG gives a parse error, a throwing script console messages, a wrong count a mismatch.
#
# Without Chromium (chromium, or TM_BROWSER) the test says SKIP, unless TM_REQUIRE_BROWSER=1
# (scripts/test sets it): then it fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
tm_need_browser "flamegraph.svg"
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
OUT=$TM_TMP/browser
mkdir -p "$SRC" "$EXP" "$OUT" "$TM_TMP/controls"
tm_seed

"$PY" "$HERE/calls_expect.py" write tt6 "$SRC/prog.tt6" "$EXP/prog.tt6"
"$GEN_TT6" --format tt6 --records 20000 --seed "$SEED" >"$SRC/gen.tt6"
"$GEN_CIS501" --lines 20000 --seed "$SEED" >"$SRC/gen.trace"
# TT6: the initial PC, then instruction words; li r3,1 calls nothing
"$PY" -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("00001000" + "38600001" * 5))' \
	>"$SRC/nocalls.tt6"
"$PY" -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("00001000"))' >"$SRC/empty.tt6"
TRACES="prog.tt6 gen.tt6 gen.trace nocalls.tt6 empty.tt6"
REAL=${REALTRACES:-}
if [ -n "$REAL" ] && [ -d "$REAL/tarmac" ]; then
	for t in calculator-aarch64-fastmodel calculator-aarch32-fastmodel; do
		cp "$REAL/tarmac/$t.tarmac" "$SRC/"
		TRACES="$TRACES $t.tarmac"
	done
	# its image beside the AArch64 trace: C++ functions, named demangled
	cp "$REAL/tarmac/calculator-aarch64.elf" "$SRC/"
else
	skip_part realtraces "no realtraces folder at '$REAL': ARM's calculator traces not opened"
fi

mount_tm "$SRC"
M=$TM_MNT
# calls/ is a product of its trace, its files sized 0 until an open builds it
# (doc/architecture.md, "Products"); Chromium reads a file:// URL only up to the size a stat
# gave before its open, so a flame graph not yet built would show an empty document (and the
# cut control below would be cut from nothing). Opened first, each has its exact size.
folders=()
for t in $TRACES; do folders+=("$M/$t/calls"); done
open_views "${folders[@]}"

# the controls, beside the mount: an SVG cut in the middle of a tag, one whose script throws
svg=$M/prog.tt6/calls/flamegraph.svg
head -c $(($(stat -c %s "$svg") / 2)) "$svg" >"$TM_TMP/controls/cut.svg"
echo ' <rect' >>"$TM_TMP/controls/cut.svg"
cat >"$TM_TMP/controls/throws.svg" <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">
<script>console.error("control"); throw new Error("control");</script></svg>
EOF

# headless.py writes the Nth file's report as N.json and N.png: SHOT[NAME] is OUT/N
files=()
declare -A SHOT
for t in $TRACES; do
	SHOT[$t]=$OUT/${#files[@]}
	files+=("$M/$t/calls/flamegraph.svg")
done
SHOT[cut]=$OUT/${#files[@]}
SHOT[throws]=$OUT/$((${#files[@]} + 1))
# the daemon computes a view on first open: slow under valgrind
timeout=$(tm_browser_timeout)
start=$(date +%s%N)
check "Chromium opens every flame graph" "$PY" "$HERE/headless.py" "$BROWSER" "$OUT" \
	"$timeout" "${files[@]}" "$TM_TMP/controls/cut.svg" "$TM_TMP/controls/throws.svg"
echo "Chromium: $((($(date +%s%N) - start) / 1000000)) ms for $((${#files[@]} + 2)) files"
if [ "$TM_FAILS" -gt 0 ]; then
	echo "the browser's log ends:" >&2
	grep -v dbus "$OUT/browser.log" 2>/dev/null | tail -5 >&2
	unmount_tm
	finish
fi

for t in $TRACES; do
	[ -f "${SHOT[$t]}.json" ] && check_compared "$t" "$PY" "$HERE/flamegraph_expect.py" check "$t" \
		"$M/$t/calls/folded.txt" "${SHOT[$t]}.json" "${SHOT[$t]}.png"
done
# known structure: against the stacks the program ran, not the mount's folded.txt
check_compared "prog.tt6 by the program" "$PY" "$HERE/flamegraph_expect.py" check prog.tt6 \
	"$EXP/prog.tt6.folded" "${SHOT[prog.tt6]}.json" "${SHOT[prog.tt6]}.png"
check_eq "prog.tt6: 14 frames, the program's 13 stacks and 'all'" 14 \
	"$(json_get "${SHOT[prog.tt6]}.json" 'len(d["titled"])')"
for t in gen.tt6 gen.trace; do
	check "$t: its calls drawn, more than 3 frames" \
		test "$(json_get "${SHOT[$t]}.json" 'len(d["titled"])')" -gt 3
done
check_eq "nocalls.tt6: two frames, 'all' and 0x1000" "['all', '0x1000']" \
	"$(json_get "${SHOT[nocalls.tt6]}.json" '[f["text"] for f in d["titled"]]')"
check_eq "empty.tt6: no frame" 0 "$(json_get "${SHOT[empty.tt6]}.json" 'len(d["titled"])')"

# the controls
check "a cut SVG shows Chromium's parse error" grep -q "This page contains the following errors" \
	<(json_get "${SHOT[cut]}.json" 'd["parse_errors"]')
check_eq "a throwing script: the console's error and the exception" \
	"['error: control', 'exception: Error: control']" \
	"$(json_get "${SHOT[throws]}.json" '[c.splitlines()[0] for c in d["console"][:2]]')"
# a stack's count off by one: the widths no longer agree
awk 'NR == 2 { $NF += 1 } { print }' "$EXP/prog.tt6.folded" >"$TM_TMP/controls/wrong.folded"
"$PY" "$HERE/flamegraph_expect.py" check prog.tt6 "$TM_TMP/controls/wrong.folded" \
	"${SHOT[prog.tt6]}.json" "${SHOT[prog.tt6]}.png" >"$TM_TMP/controls/wrong.out"
check "a wrong count in folded.txt fails the comparison" \
	grep -q "as wide as its instructions.*\[(" "$TM_TMP/controls/wrong.out"

unmount_tm
finish
