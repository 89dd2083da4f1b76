#!/bin/bash
# Reads at random offsets and lengths of the views of multi-chunk TT6 and TT6E traces (16384
# records a chunk), each compared with the same bytes of `tracemount cat` (itself checked
# against the tests' TT6 model first, tt6_expect.py). gen_tt6 --straddle puts a dcbx after its
# escape 0x01 or 0x11, or a twi and its synthetic pair, across every chunk boundary, so that
# the conversions and class streams must carry that state from one chunk to the next. Windows
# straddle the boundaries of each view (placed by the model's reading), start before the end and run
# past it, start at the end and beyond; half use O_DIRECT. dd and tail from the shell, many
# more windows from one Python process (pread), then parallel readers on a fresh mount.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CHUNK=16384
tm_seed

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC" "$EXP"
"$GEN_TT6" --format tt6 --records 250000 --straddle $CHUNK --seed 41 >"$SRC/r.tt6"
"$GEN_TT6" --format tt6e --records 220000 --straddle $CHUNK --seed 42 >"$SRC/s.tt6e"
TRACES="r.tt6 s.tt6e"

# The model's records at each boundary: how many straddle a dcbx or a twi pair.
"$PY" - "$HERE" $CHUNK "$SRC" $TRACES >"$TM_TMP/straddles" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[1])
from tt6_expect import reference_decode
chunk, src = int(sys.argv[2]), sys.argv[3]
for t in sys.argv[4:]:
    recs = reference_decode(open(os.path.join(src, t), "rb").read(), t.rsplit(".", 1)[1])[0]
    n = 0
    for k in range(chunk, len(recs), chunk):
        a, b = recs[k - 1], recs[k]
        if (a.kind == "escape" and a.get("code") in (1, 0x11) and
                (b.get("cache") or (b.kind == "escape" and b.get("code") == 0x11))) or \
                a.get("twi") or (a.get("pair") and b.get("pair")):
            n += 1
    print(t, n, len(range(chunk, len(recs), chunk)))
EOF
while read -r t n total; do
	check "$t: the model straddles a dcbx or twi pair across most chunk boundaries ($n of $total)" \
		test "$n" -ge $((total * 2 / 3))
done <"$TM_TMP/straddles"

# views TRACE: the views read here.
views() {
	local stem=${1%.*} ext=${1##*.} o
	case $ext in tt6) o=tt6e ;; *) o=tt6 ;; esac
	echo raw dump.txt class/memory.txt class/flow.txt "class/compute.$ext" "class/escape.$ext" \
		"class/memory.$ext" sync.txt "convert/$stem.$o" "convert/$stem.din"
}

# Expectations: tracemount cat's output of every view, checked against the model.
cd "$SRC" || exit 1
for t in $TRACES; do
	for v in $("$TRACEMOUNT" ls "$t" | awk '{ print $2 }'); do
		mkdir -p "$(dirname "$EXP/$t/$v")"
		"$TRACEMOUNT" cat "$t" "$v" >"$EXP/$t/$v"
	done
done
cd - >/dev/null || exit 1
for t in $TRACES; do
	"$PY" "$HERE/tt6_expect.py" compare "$SRC/$t" "$EXP/$t" "$t" --partial-stats \
		--skip listing >"$TM_TMP/cmp.out"
	check "$t: tracemount cat outputs compared with the model" test -s "$TM_TMP/cmp.out"
	while IFS=$'\t' read -r what want got; do
		check_eq "tracemount cat: $what" "$want" "$got"
	done <"$TM_TMP/cmp.out"
done

# Byte offsets of the chunk boundaries in each view, from the model's reading and the dump
# lines (where to place windows: the bytes are checked against tracemount cat's, which the
# model checked above): a line "TRACE VIEW OFFSET..." per view.
"$PY" - "$HERE" $CHUNK "$EXP" "$SRC" $TRACES >"$EXP/bounds" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[1])
from tt6_expect import (CLASSES, din_lines, lends_address, marked, no_address,
                        reference_decode, sync_lines)
chunk, exp, src = int(sys.argv[2]), sys.argv[3], sys.argv[4]
for t in sys.argv[5:]:
    ext = t.rsplit(".", 1)[1]
    stem = t.rsplit(".", 1)[0]
    other = "tt6" if ext == "tt6e" else "tt6e"
    recs = reference_decode(open(os.path.join(src, t), "rb").read(), ext)[0]
    dump = open(os.path.join(exp, t, "dump.txt")).read().split("\n")[:-1]
    per = {}  # view -> bytes contributed by each record
    n = len(recs)
    per["raw"] = [r.len + (4 if marked(r) else 0) for r in recs]  # an escape 0x12 before
    per["dump.txt"] = [len(l) + 1 for l in dump]
    for c in CLASSES:
        per["class/%s.txt" % c] = [len(l) + 1 if r.kind in ("initial_pc", c) else 0
                                   for r, l in zip(recs, dump)]
        s, prev_in = [], True
        for i, r in enumerate(recs):
            if i == 0:
                s.append(r.len)
            elif r.kind == c:
                mark = 4 if ext == "tt6e" and no_address(r) else 0  # its escape 0x12
                s.append(r.len + (0 if prev_in else 16) + mark)
                prev_in = True
            else:
                s.append(0)
                prev_in = False
        per["class/%s.%s" % (c, ext)] = s
    per["sync.txt"] = [0] * n
    syncs = iter(sync_lines(recs))
    for i, r in enumerate(recs):
        if r.kind == "sync":
            per["sync.txt"][i] = len(next(syncs)) + 1
    per["convert/%s.din" % stem] = [sum(len(l) + 1 for l in din_lines([r])) for r in recs]
    conv = []
    for i, r in enumerate(recs):
        if ext == "tt6":
            if r.kind == "escape" and r.get("code") == 0x11:
                conv.append(0)
            elif r.get("cache"):
                conv.append(12 if no_address(r) else 8)
            elif r.get("twi"):
                conv.append(20)
            else:
                conv.append(r.len)
        else:
            if r.get("pair"):
                conv.append(0)
            elif r.get("cache") and no_address(r):  # its escape 0x12 only where TT6 needs it
                conv.append(8 if lends_address(recs[i - 1]) else 4)
            elif r.get("cache"):
                p = recs[i - 1]
                after01 = p.kind == "escape" and p.get("code") == 1 and p.get("words")[:1] == [r.get("ea")]
                conv.append(4 + (0 if after01 else 8))
            else:
                conv.append(r.len)
    per["convert/%s.%s" % (stem, other)] = conv
    for v, contrib in per.items():
        total, out = 0, []
        for i, b in enumerate(contrib):
            if i and i % chunk == 0:
                out.append(total)
            total += b
        size = os.path.getsize(os.path.join(exp, t, v))
        if total != size:
            out = ["model-total-%d-vs-%d" % (total, size)]
        print(t, v, " ".join(str(o) for o in out))
EOF
check_eq "boundaries computed for every view" 0 "$(grep -c model-total "$EXP/bounds")"
grep model-total "$EXP/bounds" >&2

# rd FILE OFF LEN BS [direct]
rd() {
	dd if="$1" bs="$4" iflag=${5:+direct,}skip_bytes,count_bytes skip="$2" count="$3" status=none
}
same_window() {
	rd "$1" "$3" "$4" "$5" ${6:-} | cmp -n "$4" - "$2" 0 "$3"
}
r30() {
	R=$(((RANDOM << 15 | RANDOM) % $1))
}
READS=0
read_check() {
	local t=$1 view=$2 off=$3 len=$4 mode='' what=cached bs
	local sizes=(4096 65536 131072 1048576 1000 12345 511)
	bs=${sizes[RANDOM % ${#sizes[@]}]}
	[ "$len" -le 3000 ] && [ $((RANDOM % 4)) = 0 ] && bs=3
	if [ $((RANDOM % 2)) = 0 ]; then
		mode=direct
		what=O_DIRECT
	fi
	READS=$((READS + 1))
	check "$t/$view: bytes [$off, +$len) bs=$bs $what" \
		same_window "$TM_MNT/$t/$view" "$EXP/$t/$view" "$off" "$len" "$bs" $mode
}

mount_tm "$SRC"

# Shell reads: dd around two boundaries of each view, random windows, the end; tail.
for t in $TRACES; do
	for view in $(views "$t"); do
		exp=$EXP/$t/$view
		size=$(stat -c %s "$exp")
		check_eq "$t/$view: stat size equals tracemount cat's" "$size" "$(stat -c %s "$TM_MNT/$t/$view")"
		read -ra bounds < <(awk -v t="$t" -v v="$view" '$1 == t && $2 == v { $1 = $2 = ""; print }' "$EXP/bounds")
		for i in 0 $((${#bounds[@]} / 2)); do
			b=${bounds[i]:-0}
			read_check "$t" "$view" $((b > 0 ? b - 1 : 0)) 2
			r30 3000
			read_check "$t" "$view" $((b > R ? b - R : 0)) $((R + 2000))
		done
		for i in 1 2 3; do
			r30 "$((size + 1))"
			off=$R
			r30 50000
			read_check "$t" "$view" "$off" $((R + 1))
		done
		read_check "$t" "$view" $((size > 100 ? size - 100 : 0)) 5000
		read_check "$t" "$view" "$size" 10
		check_eq "$t/$view: tail -c 777" "$(tail -c 777 "$exp" | od -An -tx1 | md5sum)" \
			"$(tail -c 777 "$TM_MNT/$t/$view" | od -An -tx1 | md5sum)"
	done
	check_eq "$t: tail -n 5 dump.txt" "$(tail -n 5 "$EXP/$t/dump.txt")" "$(tail -n 5 "$TM_MNT/$t/dump.txt")"
	check_eq "$t: tail -n 3 class/memory.txt" "$(tail -n 3 "$EXP/$t/class/memory.txt")" \
		"$(tail -n 3 "$TM_MNT/$t/class/memory.txt")"
done

# Many more windows from one process: around every boundary of every view (the byte before
# and after, 10 KB across, from inside the chunk before to inside the one after the next), at
# random, at and past the end; through the page cache and with O_DIRECT.
"$PY" - "$EXP" "$TM_MNT" "$SEED" $TRACES >"$TM_TMP/windows" <<'EOF'
import os, random, sys
exp, mnt, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
bounds = {}
for line in open(os.path.join(exp, "bounds")):
    f = line.split()
    bounds[(f[0], f[1])] = [int(x) for x in f[2:]]
def pread_all(fd, n, off):
    out = b""
    while len(out) < n:
        b = os.pread(fd, min(n - len(out), 1 << 20), off + len(out))
        if not b:
            break
        out += b
    return out
total = 0
for (t, v), bs in sorted(bounds.items()):
    want = open(os.path.join(exp, t, v), "rb").read()
    size = len(want)
    rnd = random.Random("%d/%s/%s" % (seed, t, v))
    w = []
    for i, b in enumerate(bs):
        nxt = bs[i + 1] if i + 1 < len(bs) else size
        w += [(max(b - 1, 0), 2), (b, 1), (max(b - 5000, 0), 10000),
              (max(b - rnd.randrange(1, 3000), 0), nxt - b + rnd.randrange(2, 6000))]
    for _ in range(20):
        w.append((rnd.randrange(size + 1), rnd.choice([1, 7, 100, 4096, 65536, 300000])))
    w += [(max(size - 1, 0), 1), (size, 10), (size + 4096, 10), (0, size + 7)]
    for direct in (False, True):
        fd = os.open(os.path.join(mnt, t, v), os.O_RDONLY | (os.O_DIRECT if direct else 0))
        bad = None
        for off, n in w:
            try:
                got = pread_all(fd, n, off)
            except OSError as e:
                bad = "[%d, +%d): %s" % (off, n, e)
                break
            if got != want[off:off + n]:
                k = next((i for i in range(min(len(got), len(want[off:off + n])))
                          if got[i] != want[off + i]), min(len(got), len(want[off:off + n])))
                bad = "[%d, +%d): differs at byte %d (got %d bytes)" % (off, n, off + k, len(got))
                break
        os.close(fd)
        total += len(w)
        print("%s/%s: %d windows (%s)\t%s\t%s" % (t, v, len(w), "O_DIRECT" if direct else
                                                "page cache", "null", "null" if bad is None
                                                else '"%s"' % bad))
print("windows read\ttrue\t%s" % ("true" if total >= 2000 else "false (%d)" % total))
EOF
check "window reads ran" test -s "$TM_TMP/windows"
while IFS=$'\t' read -r what want got; do
	check_eq "$what" "$want" "$got"
done <"$TM_TMP/windows"
check "at least 100 shell reads done ($READS)" test "$READS" -ge 100
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm

# Parallel readers on a fresh mount (nothing indexed yet).
worker() {
	local t=$1 view=$2 n=$3 seed=$4 exp size off len mode bs i
	RANDOM=$seed
	exp=$EXP/$t/$view
	size=$(stat -c %s "$exp")
	for i in $(seq 1 "$n"); do
		off=$(((RANDOM << 15 | RANDOM) % (size + 100)))
		len=$(((RANDOM << 15 | RANDOM) % 200000 + 1))
		mode=
		[ $((RANDOM % 2)) = 0 ] && mode=direct
		bs=$((RANDOM % 2 ? 4096 : 131072))
		if same_window "$TM_MNT/$t/$view" "$exp" "$off" "$len" "$bs" $mode >/dev/null 2>&1; then
			echo ok
		else
			echo "FAIL: parallel read of $t/$view [$off, +$len) bs=$bs ${mode:-cached}"
		fi
	done
}
mount_tm "$SRC"
check_eq "fresh mount: nothing indexed before the parallel readers start" "" \
	"$(awk -F'\t' 'NR > 1 && !/^#/ && $3 != "not indexed"' "$TM_MNT/.tracemount/status")"
PVIEWS="r.tt6:dump.txt r.tt6:dump.txt r.tt6:convert/r.tt6e r.tt6:class/memory.tt6
	s.tt6e:dump.txt s.tt6e:convert/s.tt6 s.tt6e:class/flow.txt s.tt6e:convert/s.din"
k=0
pids=()
for tv in $PVIEWS; do
	k=$((k + 1))
	worker "${tv%%:*}" "${tv#*:}" 20 $((SEED + k)) >"$TM_TMP/worker.$k" 2>&1 &
	pids+=($!)
done
for pid in "${pids[@]}"; do
	wait "$pid"
done
k=0
for tv in $PVIEWS; do
	k=$((k + 1))
	grep -v '^ok$' "$TM_TMP/worker.$k" >&2
	check_eq "parallel worker $k ($tv): 20 reads equal tracemount cat" 20 "$(grep -c '^ok$' "$TM_TMP/worker.$k")"
done
for t in $TRACES; do
	for view in $(views "$t"); do
		check "$t/$view: whole file after the parallel readers" cmp "$EXP/$t/$view" "$TM_MNT/$t/$view"
	done
done
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
