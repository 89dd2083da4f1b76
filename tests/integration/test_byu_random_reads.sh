#!/bin/bash
# Reads at random offsets and lengths of BYU views through the mount, each compared with the
# same window of the view the tests' BYU model computes without tracemount (byu_model:
# tests/unit/byu_ref.c). Windows straddle the 16384-record chunk boundaries, start before the end and run
# past it, start exactly at the end and beyond it.
# Half the reads use O_DIRECT (dd iflag=direct), which bypasses the page cache so the daemon
# sees the exact offset and length; the others go through the page cache. Then several
# processes read in parallel, on the same view and on different views, of a fresh mount whose
# index is not built yet.
. "$(dirname "$0")/lib.sh"

CHUNK=16384
tm_seed

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC" "$EXP"
"$GEN_BYU" -n 120000 -s 21 -m mixed >"$SRC/r.byu"

# The model's views, and their byte offsets after every CHUNK records of the trace.
"$BYU_MODEL" "$EXP" r.byu $CHUNK <"$SRC/r.byu"
check "the model's dump.txt is the reference decoder's output" cmp "$EXP/dump.txt" \
	<("$BYU_REFDEC" <"$SRC/r.byu")
check "expected class/d_write.byu is non-trivial" test "$(wc -c <"$EXP/class/d_write.byu")" -gt 100000
check_eq "chunk boundaries computed" 7 "$(awk '$1 == "dump.txt" { print NF - 1 }' "$EXP/bounds")"

VIEWS="dump.txt class/d_read.txt class/d_write.byu convert/r.din"
# expected_of VIEW: sets EXPF to the view's expectation (no subshell: forks are slow here).
expected_of() {
	EXPF=$EXP/$1
}

# rd FILE OFF LEN BS [direct]
rd() {
	dd if="$1" bs="$4" iflag=${5:+direct,}skip_bytes,count_bytes skip="$2" count="$3" status=none
}

# same_window MOUNTED EXPECTED OFF LEN BS [direct]: the LEN bytes at OFF of the mounted file
# (read with dd) equal those of the expectation; cmp -n with a skip compares the window, and
# fails on a length difference (a short read, or bytes past the end).
same_window() {
	rd "$1" "$3" "$4" "$5" ${6:-} | cmp -n "$4" - "$2" 0 "$3"
}

# A block size for a read of LEN bytes: from tiny to larger than a FUSE request.
pick_bs() {
	local sizes=(4096 65536 131072 1048576 1000 12345 511)
	BS=${sizes[RANDOM % ${#sizes[@]}]}
	if [ "$1" -le 3000 ] && [ $((RANDOM % 4)) = 0 ]; then
		BS=3
	fi
}

READS=0
# read_check VIEW OFF LEN: one read of the mounted view, in a random mode, against the
# expectation's same window.
read_check() {
	local view=$1 off=$2 len=$3 mode= what=cached
	pick_bs "$len"
	if [ $((RANDOM % 2)) = 0 ]; then
		mode=direct
		what=O_DIRECT
	fi
	READS=$((READS + 1))
	expected_of "$view"
	check "$view: bytes [$off, +$len) bs=$BS $what" \
		same_window "$TM_MNT/r.byu/$view" "$EXPF" "$off" "$len" "$BS" $mode
}

r30() {
	R=$(((RANDOM << 15 | RANDOM) % $1))
}

mount_tm "$SRC"

for view in $VIEWS; do
	expected_of "$view"
	exp=$EXPF
	size=$(stat -c %s "$exp")
	check_eq "$view: stat size equals the expectation's" "$size" "$(stat -c %s "$TM_MNT/r.byu/$view")"
	read -ra bounds < <(awk -v v="$view" '$1 == v { $1 = ""; print }' "$EXP/bounds")
	# Around every chunk boundary: the byte before and after, a short window across it, and
	# one running from inside the chunk before to inside the chunk after the next.
	for i in "${!bounds[@]}"; do
		b=${bounds[i]}
		next=${bounds[i + 1]:-$size}
		read_check "$view" $((b - 1)) 2
		read_check "$view" "$b" 1
		r30 5000
		r=$((R + 1))
		r30 5000
		read_check "$view" $((b - r)) $((r + R + 1))
		r30 3000
		read_check "$view" $((b - r)) $((next - b + r + R + 1))
	done
	# Uniformly random windows, short and long.
	for i in $(seq 1 45); do
		r30 "$size"
		off=$R
		case $((RANDOM % 3)) in
		0) r30 300 ;;
		1) r30 40000 ;;
		2) r30 $((3 * size / 8)) ;;
		esac
		read_check "$view" "$off" $((R + 1))
	done
	# The start, the end, past the end.
	read_check "$view" 0 1
	read_check "$view" 0 4096
	read_check "$view" $((size - 1)) 1
	r30 2000
	read_check "$view" $((size - R - 1)) $((R + 1))
	read_check "$view" $((size - R - 1)) $((R + 5000))
	read_check "$view" "$size" 1
	read_check "$view" "$size" 4096
	read_check "$view" $((size + 1000)) 10
	read_check "$view" 0 $((size + 100))
	# A full sequential read in both modes.
	check "$view: whole file through the page cache" cmp "$exp" "$TM_MNT/r.byu/$view"
	check "$view: whole file with O_DIRECT, 128 KiB reads" \
		cmp "$exp" <(dd if="$TM_MNT/r.byu/$view" bs=131072 iflag=direct status=none)
done
check "at least 300 random reads done ($READS)" test "$READS" -ge 300

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm

# Parallel readers on a fresh mount (nothing indexed yet): several on dump.txt, one on each
# other view. Each worker reports one line per read.
worker() {
	local view=$1 n=$2 seed=$3 exp size off len mode bs i
	RANDOM=$seed
	expected_of "$view"
	exp=$EXPF
	size=$(stat -c %s "$exp")
	for i in $(seq 1 "$n"); do
		off=$(((RANDOM << 15 | RANDOM) % (size + 100)))
		len=$(((RANDOM << 15 | RANDOM) % 200000 + 1))
		mode=
		[ $((RANDOM % 2)) = 0 ] && mode=direct
		bs=$((RANDOM % 2 ? 4096 : 131072))
		if same_window "$TM_MNT/r.byu/$view" "$exp" "$off" "$len" "$bs" $mode >/dev/null 2>&1; then
			echo "ok"
		else
			echo "FAIL: parallel read of $view [$off, +$len) bs=$bs ${mode:-cached}"
		fi
	done
}

mount_tm "$SRC"
check_eq "fresh mount: r.byu not indexed before the parallel readers start" "" \
	"$(awk -F'\t' '$1 == "r.byu" && $3 != "not indexed"' "$TM_MNT/.tracemount/status")"
PVIEWS="dump.txt dump.txt dump.txt dump.txt class/d_read.txt class/d_write.byu convert/r.din raw"
k=0
pids=()
for view in $PVIEWS; do
	k=$((k + 1))
	worker "$view" 30 $((SEED + k)) >"$TM_TMP/worker.$k" 2>&1 &
	pids+=($!)
done
for pid in "${pids[@]}"; do
	wait "$pid"
done
k=0
for view in $PVIEWS; do
	k=$((k + 1))
	grep -v '^ok$' "$TM_TMP/worker.$k" >&2
	check_eq "parallel worker $k ($view): 30 reads equal the expectation" 30 \
		"$(grep -c '^ok$' "$TM_TMP/worker.$k")"
done
for view in $VIEWS raw; do
	expected_of "$view"
	check "$view: whole file after the parallel readers" cmp "$EXPF" "$TM_MNT/r.byu/$view"
done
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
