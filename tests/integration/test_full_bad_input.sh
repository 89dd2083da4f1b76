#!/bin/bash
# FULL traces that are cut, mislabelled or garbage: each is served as far as it is valid, its
# problems are in errors.txt at the right offsets, and the daemon goes on serving the rest.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
MODEL="$PY $HERE/full_model.py"
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC" "$EXP"

$MODEL gen "$TM_TMP/prog" --steps 400 --seed 21
$MODEL expect "$EXP/prog" --steps 400 --seed 21
$MODEL gen "$TM_TMP/padded" --steps 40 --seed 22 --layout pad_thread
cp "$TM_TMP/prog" "$SRC/good.full"
# cut in the middle of record 100; cut inside the magic; only the magic
head -c $((4 + 100 * 1004 + 500)) "$TM_TMP/prog" >"$SRC/cut.full"
head -c 2 "$TM_TMP/prog" >"$SRC/magic.cut"
head -c 4 "$TM_TMP/prog" >"$SRC/only_magic.full"
# a wrong magic word before good records (read as FULL by format=)
{ printf '\xa1\x11\x8e\x18'; tail -c +5 "$TM_TMP/prog"; } >"$SRC/badmagic.forced"
# the magic, then 64 KiB of random bytes: no layout fits
{ head -c 4 "$TM_TMP/prog"; "$PY" -c 'import os, random, sys
random.seed(5); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(65536)))'; } \
	>"$SRC/garbage.full"
# a FULL trace named like a TT6 trace: the magic wins over the name
cp "$TM_TMP/padded" "$SRC/named.tt6"
# the magic with 1004-byte records whose PCs never follow: read, and the layout reported
"$PY" -c 'import struct, sys
out = [struct.pack(">I", 0xA1118E17)]
for k in range(20):
    rec = bytearray(1004)
    rec[0:4] = struct.pack(">I", 0x38630001)
    rec[4:8] = struct.pack(">I", 0x1000 + 0x100 * k)
    out.append(bytes(rec))
sys.stdout.buffer.write(b"".join(out))' >"$SRC/jumpy.full"

mount_tm "$SRC" -o 'format=*.cut:full' -o 'format=*.forced:full'
M=$TM_MNT

check_eq "cut.full: 100 records" 100 "$(json_get "$M/cut.full/stats.json" 'd["records"]')"
check_eq "cut.full: truncated" True "$(json_get "$M/cut.full/stats.json" 'd["truncated"]')"
check_eq "cut.full: errors.txt says where and how much" \
	"offset $((4 + 100 * 1004)): instruction 100 is cut by the end of the trace: 500 of 1004 bytes, not decoded" \
	"$(cat "$M/cut.full/errors.txt")"
check "cut.full: dump.txt is the first 100 lines" cmp \
	<(sed -e 's/^\(.\{31\}\).\{36\}./\1|/' "$M/cut.full/dump.txt") \
	<(head -n 100 "$EXP/prog/dump.masked")
check "cut.full: regs/gpr.txt is the first 100 lines" cmp "$M/cut.full/regs/gpr.txt" \
	<(head -n 100 "$EXP/prog/regs/gpr.txt")
check "cut.full: raw is the whole file" cmp "$M/cut.full/raw" "$SRC/cut.full"

check_eq "magic.cut: no records" 0 "$(json_get "$M/magic.cut/stats.json" 'd["records"]')"
check_eq "magic.cut: the cut magic reported" \
	"offset 0: the magic word is cut by the end of the trace: 2 of 4 bytes" \
	"$(cat "$M/magic.cut/errors.txt")"
check_eq "only_magic.full: no records, no errors" "0 0" \
	"$(json_get "$M/only_magic.full/stats.json" '"%d %d" % (d["records"], d["errors"])')"
check_eq "only_magic.full: no layout" "None None" \
	"$(json_get "$M/only_magic.full/stats.json" '"%s %s" % (d["full"]["record_size"], d["full"]["layout"])')"
check_eq "only_magic.full: empty dump.txt" 0 "$(wc -c <"$M/only_magic.full/dump.txt")"

check_eq "badmagic.forced: the magic reported" \
	"offset 0: bad magic 0xa1118e18, expected 0xa1118e17: read as FULL records all the same" \
	"$(cat "$M/badmagic.forced/errors.txt")"
check "badmagic.forced: the records are read all the same" cmp "$M/badmagic.forced/regs/vr.txt" \
	"$EXP/prog/regs/vr.txt"

check_eq "garbage.full: detected by its magic" full \
	"$(json_get "$M/garbage.full/stats.json" 'd["format"]')"
check "garbage.full: the layout found wanting" grep -q \
	"^offset 4: the record size fits neither layout: the PCs of the first 16 records do not follow" \
	"$M/garbage.full/errors.txt"
check_eq "garbage.full: the trailing partial record reported" True \
	"$(json_get "$M/garbage.full/stats.json" 'd["truncated"]')"
records=$(json_get "$M/garbage.full/stats.json" 'd["records"]')
check_eq "garbage.full: records as far as whole ones go" $((65536 / 1004)) "$records"
for v in dump.txt regs/fpr.txt convert/garbage.tt6 convert/garbage.tt6e convert/garbage.din \
	class/compute.full; do
	check "garbage.full: $v reads whole, as long as stat says" test \
		"$(cat "$M/garbage.full/$v" | wc -c)" = "$(stat -c %s "$M/garbage.full/$v")"
done

check_eq "named.tt6: read as FULL, by its magic" "full 1008 padded_after_thread_state" \
	"$(json_get "$M/named.tt6/stats.json" '"%s %d %s" % (d["format"], d["full"]["record_size"], d["full"]["layout"])')"
check_eq "named.tt6: its conversion keeps the stem" 1 "$(ls "$M/named.tt6/convert" | grep -c '^named.tt6e$')"

check_eq "jumpy.full: each PC that does not follow reported" 19 \
	"$(grep -c 'does not follow' "$M/jumpy.full/errors.txt")"
check_eq "jumpy.full: read as packed records" "1004 20" \
	"$(json_get "$M/jumpy.full/stats.json" '"%d %d" % (d["full"]["record_size"], d["records"])')"
check_eq "jumpy.full: a position record before each jump in convert/jumpy.tt6" \
	$((4 + 20 * 4 + 19 * 16)) "$(stat -c %s "$M/jumpy.full/convert/jumpy.tt6")"
(cd "$M/jumpy.full/convert" && "$TRACEMOUNT" cat jumpy.tt6 dump.txt) >"$TM_TMP/jumpy.dump" 2>&1
check_eq "jumpy.full: convert/jumpy.tt6 reads back to the same PCs" \
	"$(seq 0 19 | awk '{ printf "%08x\n", 4096 + 256 * $1 }')" \
	"$(awk 'substr($0, 69) ~ /^compute/ { print substr($0, 14, 8) }' "$TM_TMP/jumpy.dump")"

check "good.full: still served whole after the bad ones" cmp "$M/good.full/regs/spr.txt" \
	"$EXP/prog/regs/spr.txt"
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
