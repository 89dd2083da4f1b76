#!/bin/bash
# FULL traces: every view against expectations computed without tracemount. full_model.py runs
# a small PowerPC program with known register effects and writes the trace in each of the three
# record layouts; from its own register states it writes dump.txt (all columns but Capstone's
# TEXT), class/*.txt and class/*.full, regs/*.txt, the TT6, TT6E and din conversions, errors.txt
# offsets, stats.json keys, and the data of plots/registers.svg and plots/addresses.svg
# (plots_check.py). Also: chunk boundaries (255, 256, 257, 513 records), a gzip trace, a
# discontinuity, random-offset reads with dd, `tracemount cat` and `ls` against the
# mount, and the conversions read back by the TT6 and TT6E decoders to the FULL trace's PCs.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
MODEL="$PY $HERE/full_model.py"
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/sub" "$EXP"
tm_seed

# model_trace NAME STEPS OPTIONS...: a trace and its expectations.
model_trace() {
	local name=$1 steps=$2
	shift 2
	$MODEL gen "$SRC/$name" --steps "$steps" "$@"
	$MODEL expect "$EXP/$name" --steps "$steps" "$@"
}
model_trace prog.full 3000 --seed 1
model_trace sub/thread_001 1500 --seed 2 --layout pad_opcode --jump-at 700
model_trace sub/natural.bin 513 --seed 3 --layout pad_thread
model_trace c255 255 --seed 4
model_trace c256 256 --seed 5 --layout pad_thread
model_trace c257 257 --seed 6 --layout pad_opcode
model_trace one 1 --seed 7
model_trace zipped.full 2000 --seed 8
gzip -9 "$SRC/zipped.full"
TRACES="prog.full sub/thread_001 sub/natural.bin c255 c256 c257 one zipped.full.gz"

# masked VIEW: a dump.txt or class/*.txt with its TEXT column (36 characters after NUMBER PC
# WORD) replaced by '|', as full_model.py writes them.
masked() {
	sed -e 's/^\(.\{31\}\).\{36\}./\1|/' "$1"
}

# stats_subset STATS EXPECTED: the keys full_model.py knows, compared one by one.
stats_subset() {
	"$PY" - "$1" "$2" <<'EOF'
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = []
for k in ("records", "classes"):
    if got[k] != want[k]:
        bad.append("%s: %r != %r" % (k, got[k], want[k]))
for k, v in want["full"].items():
    if got["full"].get(k) != v:
        bad.append("full.%s: %r, expected %r" % (k, got["full"].get(k), v))
print("; ".join(bad))
EOF
}

mount_tm "$SRC"
for t in $TRACES; do
	m=$TM_MNT/$t
	e=$EXP/${t%.gz}
	stem=$(basename "${t%.gz}")
	stem=${stem%.*}
	check "$t: a trace folder" test -d "$m"
	check_eq "$t: stats.json format" full "$(json_get "$m/stats.json" 'd["format"]')"
	check "$t: dump.txt, every column but TEXT" cmp <(masked "$m/dump.txt") "$e/dump.masked"
	check_eq "$t: no dump line has an empty TEXT column" "" \
		"$(cut -c32-67 "$m/dump.txt" | grep -n '^ ' | head -3)"
	for c in compute flow memory memext; do
		check "$t: class/$c.txt" cmp <(masked "$m/class/$c.txt") "$e/class/$c.masked"
		check "$t: class/$c.full" cmp "$m/class/$c.full" "$e/class/$c.full"
	done
	for r in gpr fpr vr spr; do
		check "$t: regs/$r.txt" cmp "$m/regs/$r.txt" "$e/regs/$r.txt"
	done
	check "$t: convert/$stem.tt6" cmp "$m/convert/$stem.tt6" "$e/convert/tt6"
	check "$t: convert/$stem.tt6e" cmp "$m/convert/$stem.tt6e" "$e/convert/tt6e"
	check "$t: convert/$stem.din" cmp "$m/convert/$stem.din" "$e/convert/din"
	check_eq "$t: errors.txt offsets" "$(cat "$e/errors")" \
		"$(sed -n 's/^offset \([0-9]*\):.*/\1/p' "$m/errors.txt")"
	check_eq "$t: stats.json keys the model knows" "" \
		"$(stats_subset "$m/stats.json" "$e/stats.json")"
	check_eq "$t: wc -l dump.txt = records" "$(json_get "$m/stats.json" 'd["records"]')" \
		"$(wc -l <"$m/dump.txt")"
	check_compared "$t: plots/registers.svg" "$PY" "$HERE/plots_check.py" registers "$t" \
		"$m/plots/registers.svg" "$m/stats.json" "$e/registers.json"
	check_compared "$t: plots/addresses.svg" "$PY" "$HERE/plots_check.py" model "$t" \
		"$m/plots/addresses.svg" "$e/accesses.json"
done
check_eq "the discontinuity is reported with both PCs" 1 \
	"$(grep -c 'instruction 700 at pc 0x00030000 does not follow the one at 0x[0-9a-f]*, which leads to' \
		"$TM_MNT/sub/thread_001/errors.txt")"
check_eq "one record: its line lists no changes" "compute" "$(cut -c69- "$TM_MNT/one/dump.txt")"

# Reads at random offsets and lengths on a fresh mount, half of them O_DIRECT, so that most
# decode a chunk of their own: against the model's files, and dump.txt against its whole read.
cp "$TM_MNT/prog.full/dump.txt" "$TM_TMP/prog.dump"
unmount_tm
mount_tm "$SRC"
E=$EXP/prog.full
set -- dump.txt "$TM_TMP/prog.dump" regs/fpr.txt "$E/regs/fpr.txt" regs/vr.txt "$E/regs/vr.txt" \
	convert/prog.tt6e "$E/convert/tt6e" class/memory.full "$E/class/memory.full" raw "$SRC/prog.full"
bad=
for k in $(seq 1 40); do
	for ((a = 1; a < $#; a += 2)); do
		v=${!a}
		b=$((a + 1))
		want=${!b}
		f=$TM_MNT/prog.full/$v
		off=$(random_below "$(stat -c %s "$want")")
		len=$((1 + $(random_below 300000)))
		flag=
		[ $((k % 2)) = 0 ] && flag=direct,
		cmp -s <(dd if="$f" iflag=${flag}skip_bytes,count_bytes skip="$off" count="$len" \
			bs=65536 status=none) <(dd if="$want" iflag=skip_bytes,count_bytes skip="$off" \
			count="$len" bs=65536 status=none) || bad="$bad $v@$off+$len"
	done
done
check_eq "240 random reads of six prog.full views (half O_DIRECT) equal the expected bytes" "" "$bad"

check_cli "$SRC" prog.full "$TM_MNT/prog.full" dump.txt regs/spr.txt convert/prog.tt6 \
	class/flow.full stats.json errors.txt
check_cli "$SRC" sub/thread_001 "$TM_MNT/sub/thread_001" dump.txt convert/thread_001.tt6e

# The conversions read back: the TT6 and TT6E decoders give the FULL trace's PCs (TT6E's
# synthetic ba 0x700 + rfi after each twi left out), the position record at the discontinuity
# included.
mkdir -p "$TM_TMP/back"
for t in prog.full sub/thread_001; do
	stem=$(basename "${t%.*}")
	name=$(basename "$t" | tr . _)
	cp "$TM_MNT/$t/convert/$stem.tt6" "$TM_TMP/back/$name.tt6"
	cp "$TM_MNT/$t/convert/$stem.tt6e" "$TM_TMP/back/$name.tt6e"
	for f in tt6 tt6e; do
		(cd "$TM_TMP/back" && "$TRACEMOUNT" cat "$name.$f" dump.txt) >"$TM_TMP/back.dump"
		check_eq "$t: convert/$stem.$f reads back without errors" "" \
			"$(cd "$TM_TMP/back" && "$TRACEMOUNT" cat "$name.$f" errors.txt)"
		check "$t: convert/$stem.$f decodes to the FULL trace's PCs" cmp \
			<(awk 'substr($0, 69) ~ /^(compute|flow|memory|memext)/ &&
				substr($0, 23, 8) != "48000702" && substr($0, 23, 8) != "4c000064" {
				print substr($0, 14, 8) }' "$TM_TMP/back.dump") "$EXP/${t}/pcs"
	done
done
unmount_tm
finish
