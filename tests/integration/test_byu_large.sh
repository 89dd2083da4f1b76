#!/bin/bash
# A BYU trace of 10^7 records (60 MB): the mount comes up and the trace folder lists before any
# index exists; then dump.txt has the reference decoder's exact size, reads at random offsets
# (and the last bytes) equal the reference output's windows, tail -n 1 is the reference's last
# line and wc -l counts 10^7 lines.
. "$(dirname "$0")/lib.sh"

N=10000000
tm_seed

SRC=$TM_TMP/src
mkdir -p "$SRC"
"$GEN_BYU" -n $N -s 77 -m mixed >"$SRC/big.byu"
check_eq "the trace holds 10^7 records" $((6 * N)) "$(stat -c %s "$SRC/big.byu")"

# The mount goes up before the reference is computed: nothing may need an index yet.
start=$(date +%s%N)
mount_tm "$SRC"
MNT=$TM_MNT
mounted=$(date +%s%N)
echo "mounted in $(((mounted - start) / 1000000)) ms"

# status: the state of big.byu (column 3), or "absent".
trace_state() {
	awk -F'\t' '$1 == "big.byu" { print $3; found = 1 } END { if (!found) print "absent" }' \
		"$MNT/.tracemount/status"
}
state=$(trace_state)
check "nothing indexed right after the mount (state: $state)" \
	test "$state" = absent -o "$state" = "not indexed"
ls "$MNT/big.byu" >"$TM_TMP/ls.out"
check_eq "ls of the trace folder works" 0 "$?"
check_eq "ls lists the views" "class convert dump.txt errors.txt plots raw report.html stats.json" \
	"$(sort "$TM_TMP/ls.out" | tr '\n' ' ' | sed 's/ $//')"
check_eq "ls of class/ lists 22 streams" 22 "$(ls "$MNT/big.byu/class" | wc -l)"
check_eq "ls of convert/ lists big.din" big.din "$(ls "$MNT/big.byu/convert")"
check_eq "after ls, big.byu is seen but not indexed" "not indexed" "$(trace_state)"
echo "ls done $((($(date +%s%N) - mounted) / 1000000)) ms after the mount"

# The independent expectation: the spec's reference decoder.
"$BYU_REFDEC" <"$SRC/big.byu" >"$TM_TMP/ref.txt"
REF_SIZE=$(wc -c <"$TM_TMP/ref.txt")

check_eq "stat size of dump.txt equals the reference output's" "$REF_SIZE" \
	"$(stat -c %s "$MNT/big.byu/dump.txt")"
check_eq "stat size of raw" $((6 * N)) "$(stat -c %s "$MNT/big.byu/raw")"

# rd FILE OFF LEN [direct]
rd() {
	dd if="$1" bs=65536 iflag=${4:+direct,}skip_bytes,count_bytes skip="$2" count="$3" status=none
}
reads=0
for i in $(seq 1 20); do
	off=$(((RANDOM << 15 | RANDOM) * 7 % REF_SIZE))
	len=$((RANDOM % 70000 + 1))
	mode=
	[ $((i % 2)) = 0 ] && mode=direct
	check "dump.txt: bytes [$off, +$len) ${mode:-cached}" \
		cmp <(rd "$MNT/big.byu/dump.txt" "$off" "$len" $mode) <(rd "$TM_TMP/ref.txt" "$off" "$len")
	reads=$((reads + 1))
done
for w in "$((REF_SIZE - 1)) 1" "$((REF_SIZE - 100)) 100" "$((REF_SIZE - 5000)) 9000" "$REF_SIZE 10" \
	"$((REF_SIZE / 2)) 100"; do
	set -- $w
	for mode in "" direct; do
		check "dump.txt: bytes [$1, +$2) ${mode:-cached}" \
			cmp <(rd "$MNT/big.byu/dump.txt" "$1" "$2" $mode) <(rd "$TM_TMP/ref.txt" "$1" "$2")
		reads=$((reads + 1))
	done
done
check_eq "tail -n 1 dump.txt is the reference's last line" "$(tail -n 1 "$TM_TMP/ref.txt")" \
	"$(tail -n 1 "$MNT/big.byu/dump.txt")"
check_eq "wc -l dump.txt" $N "$(wc -l <"$MNT/big.byu/dump.txt")"
check_eq "big.byu is indexed now" indexed "$(trace_state)"
check_eq "stats.json records" $N \
	"$(grep -o '"records": *[0-9]*' "$MNT/big.byu/stats.json" | grep -o '[0-9]*$')"
echo "total $((($(date +%s%N) - start) / 1000000)) ms since the mount, $reads windows read"

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
