#!/bin/bash
# Every index pass can be stopped (issue 42): a pass that a reader started ends within a
# fraction of its own time when that reader is killed (kill -9: the kernel interrupts its
# request), on SIGTERM and on an unmount, plain or lazy; the killed reader is reaped at once;
# the next access starts a new pass, whose sizes and bytes match the reference decoder; and a
# pass that another reader still waits for goes on. Times are measured against one whole pass
# of the same trace and printed; the limits are generous, for a loaded machine.
#
# The long pass is the product pass (doc/architecture.md, "Products"): a record view's first
# access runs the record pass alone, a fraction of a second for 300 MB, too short to tell a
# stop from its end, and the products (stats, the derivers' tables) are built by a later pass
# when one of their files is first opened. So the readers here open stats.json, which takes
# every product, once the record index is built (a stat of dump.txt): they wait for the product
# pass, and it is that pass that is timed and cancelled. A cancelled product pass leaves the
# record index as it was. -o prefetch builds the record index, then every product in a product
# pass that it waits for to the end: a stop of the mount cancels that one too.
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
mkdir -p "$SRC"
# random addresses, 300 MB: a product pass (stats, plots) of over a second here
"$GEN_BYU" -n 50000000 -s "$SEED" -m random >"$SRC/big.byu"
VIEW=big.byu/stats.json # a product's file: its open builds every product
RECORD_VIEW=big.byu/dump.txt

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# within MS LIMIT WHAT: MS is below LIMIT; says the time either way.
within() {
	check "$3 (${1} ms, limit ${2} ms)" test "$1" -lt "$2"
}

# gone PID SECONDS: PID (not a child of this shell) exits within SECONDS.
gone() {
	local i
	for i in $(seq 1 $(($2 * 20))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# indexing: .tracemount/status says the record pass runs.
indexing() {
	grep -q "^big.byu	byu	indexing" "$TM_MNT/.tracemount/status"
}

# building: .tracemount/status says the product pass runs, the record index built.
building() {
	grep -q "^big.byu	byu	indexed, building" "$TM_MNT/.tracemount/status"
}

# record_index: builds the record index (the record pass alone, short), so that a reader of
# VIEW then waits for the product pass only.
record_index() {
	stat -c %s "$TM_MNT/$RECORD_VIEW" >/dev/null
}

# waiting [PASS]: starts a reader of VIEW in the background, READER its PID, and waits until
# the pass it waits for runs: PASS, building (the default) or indexing. The reader opens VIEW
# (its lookup waits for the product pass, as a stat would) and writes the number of its bytes
# to reader.out, made empty before the open.
waiting() {
	wc -c >"$TM_TMP/reader.out" 2>/dev/null <"$TM_MNT/$VIEW" &
	READER=$!
	local i
	for i in $(seq 1 100); do
		"${1:-building}" && return 0
		sleep 0.05
	done
	return 1
}

cancelled_lines() { grep -c "big.byu: building .* cancelled after" "$TM_TMP/daemon.log"; }
built_lines() { grep -c "big.byu: built .* in" "$TM_TMP/daemon.log"; }
record_passes() { grep -cE "big.byu: indexing, [0-9.]+ (MiB|bytes)$" "$TM_TMP/daemon.log"; }

# One whole product pass, timed: the yardstick.
mount_tm "$SRC" -o cache=none
t0=$(date +%s%N)
record_index
RECORD_MS=$(ms_since "$t0")
t0=$(date +%s%N)
: <"$TM_MNT/$VIEW"
PASS_MS=$(ms_since "$t0")
unmount_tm
echo "$(($(stat -c %s "$SRC/big.byu") / 1000000)) MB: the record pass $RECORD_MS ms, the product pass $PASS_MS ms"
check "the product pass lasts long enough to tell a stop from its end (${PASS_MS} ms >= 1000)" \
	test "$PASS_MS" -ge 1000
LIMIT=$((PASS_MS / 3))

# (a) fusermount3 -u is refused while a reader waits, and succeeds once it is killed.
mount_tm "$SRC" -o cache=none
record_index
check "fusermount3 -u: a reader waits for the product pass" waiting
check "fusermount3 -u while the reader waits is refused" \
	test "$(fusermount3 -u "$TM_MNT" 2>/dev/null; echo $?)" != 0
t0=$(date +%s%N)
kill -9 "$READER"
wait "$READER" 2>/dev/null
within "$(ms_since "$t0")" "$LIMIT" "kill -9: the reader is reaped promptly"
t0=$(date +%s%N)
check "fusermount3 -u then succeeds" fusermount3 -u "$TM_MNT"
wait_daemon 20
rc=$?
within "$(ms_since "$t0")" "$LIMIT" "fusermount3 -u: the daemon exits promptly"
check_eq "fusermount3 -u: exit status 0" 0 "$rc"
TM_DAEMON_PID=
check_eq "fusermount3 -u: the log says the pass was cancelled" 1 "$(cancelled_lines)"

# (a) SIGTERM and a lazy unmount with a reader waiting: the daemon exits promptly. The last
# case stops -o prefetch's product pass, which prefetch waits for to the end.
for how in SIGTERM "fusermount3 -uz" "SIGTERM during prefetch's pass"; do
	if [ "$how" = "SIGTERM during prefetch's pass" ]; then
		mount_tm "$SRC" -o cache=none -o prefetch
		check "$how: a reader waits for the product pass" waiting
	else
		mount_tm "$SRC" -o cache=none
		record_index
		check "$how: a reader waits for the product pass" waiting
	fi
	t0=$(date +%s%N)
	if [ "$how" = "fusermount3 -uz" ]; then
		fusermount3 -uz "$TM_MNT"
	else
		kill -TERM "$TM_DAEMON_PID"
	fi
	wait_daemon 20
	rc=$?
	within "$(ms_since "$t0")" "$LIMIT" "$how: the daemon exits promptly"
	check_eq "$how: exit status 0" 0 "$rc"
	TM_DAEMON_PID=
	check "$how: the reader ends" gone "$READER" 5
	check_eq "$how: the reader got no size" "" "$(cat "$TM_TMP/reader.out")"
	check_eq "$how: the log says the pass was cancelled" 1 "$(cancelled_lines)"
done

# (b) kill -9 of the only reader cancels the product pass, the record index kept; (c) the next
# open starts a new product pass.
mount_tm "$SRC" -o cache=none
record_index
check "kill -9: a reader waits for the product pass" waiting
t0=$(date +%s%N)
kill -9 "$READER"
wait "$READER" 2>/dev/null
within "$(ms_since "$t0")" "$LIMIT" "kill -9 of the only reader: reaped promptly"
for i in $(seq 1 40); do [ "$(cancelled_lines)" = 1 ] && break; sleep 0.05; done
check_eq "kill -9: the log says the pass was cancelled" 1 "$(cancelled_lines)"
check_eq "kill -9: the log calls it no failure" 0 "$(grep -c 'big.byu: .*failed' "$TM_TMP/daemon.log")"
check "kill -9: .tracemount/status says big.byu is indexed, no product pass running" \
	grep -q "^big.byu	byu	indexed	" "$TM_MNT/.tracemount/status"
check_eq "kill -9: the cancelled pass built nothing: a listing sizes stats.json 0" 0 \
	"$(ls -l "$TM_MNT/big.byu" | awk '$9 == "stats.json" { print $5 }')"
# the reference decoder's dump: its size, and 64 KiB from the middle
size=$(stat -c %s "$TM_MNT/$RECORD_VIEW")
OFF=$((size / 2))
"$BYU_REFDEC" <"$SRC/big.byu" | $PY -c '
import sys
off, n, total, keep = int(sys.argv[1]), 65536, 0, b""
for block in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
    if total + len(block) > off and len(keep) < n:
        keep += block[max(0, off - total):][: n - len(keep)]
    total += len(block)
open(sys.argv[2], "wb").write(keep)
print(total)' "$OFF" "$TM_TMP/ref.slice" >"$TM_TMP/ref.size"
check_eq "after the cancel: dump.txt's size is the reference decoder's" "$(cat "$TM_TMP/ref.size")" \
	"$size"
check "after the cancel: dump.txt's bytes are the reference decoder's" cmp -s "$TM_TMP/ref.slice" \
	<(tail -c +$((OFF + 1)) "$TM_MNT/$RECORD_VIEW" | head -c 65536)
check_eq "after the cancel: the record index kept, one record pass" 1 "$(record_passes)"
got=$(wc -c <"$TM_MNT/$VIEW")
check "after the cancel, an open starts a new product pass that ends" \
	test "$(built_lines)" = 1 -a "$got" -gt 0
sleep 1.1 # the kernel's attributes of stats.json (size 0, from the listing above) expire
check_eq "the new pass: stats.json's stat size is the bytes read" "$got" \
	"$(stat -c %s "$TM_MNT/$VIEW")"
check_eq "the new pass: stats.json counts the generated records" 50000000 \
	"$(json_get "$TM_MNT/$VIEW" 'd["records"]')"
unmount_tm

# (d) Two waiting, one killed: the pass goes on for the other. -o prefetch's thread builds the
# record index, then waits for the product pass to the end; a reader joins it and is killed.
mount_tm "$SRC" -o cache=none -o prefetch
check "two waiting: a reader waits for prefetch's product pass" waiting
sleep 0.2
t0=$(date +%s%N)
kill -9 "$READER"
wait "$READER" 2>/dev/null
within "$(ms_since "$t0")" "$LIMIT" "two waiting: the killed reader is reaped promptly"
check "two waiting: the pass goes on after the kill" building
for i in $(seq 1 $((PASS_MS / 25 + 100))); do building || break; sleep 0.05; done
check_eq "two waiting: the pass ends, nothing cancelled" "1 0" \
	"$(built_lines) $(grep -c cancelled "$TM_TMP/daemon.log")"
check_eq "two waiting: prefetch's record pass, then its product pass" \
	"indexed building built" \
	"$(grep -oE "big.byu: (indexed|building|built)" "$TM_TMP/daemon.log" | uniq | cut -d' ' -f2 |
		paste -sd' ')"
check_eq "two waiting: dump.txt's size is the reference decoder's" "$(cat "$TM_TMP/ref.size")" \
	"$(stat -c %s "$TM_MNT/$RECORD_VIEW")"
: <"$TM_MNT/$VIEW"
check_eq "two waiting: an open of stats.json after prefetch builds nothing" 1 \
	"$(grep -c "big.byu: building stats" "$TM_TMP/daemon.log")"
unmount_tm

# Two readers of stats.json, the first killed. The first waits for the product pass in its
# lookup (a stat of a product's file waits for it); libfuse 3.14 never asks the kernel for
# parallel lookups in a folder, so the second waits in the kernel behind the first, not for
# the pass: the pass is cancelled with the first, and the second starts a new one once the
# first is gone, which ends, and gets the size of the bytes it read.
mount_tm "$SRC" -o cache=none
record_index
check "two readers: the first waits for the product pass" waiting
wc -c >"$TM_TMP/second.out" <"$TM_MNT/$VIEW" &
SECOND=$!
sleep 0.3
kill -9 "$READER"
wait "$READER" 2>/dev/null
wait "$SECOND"
check "two readers: the other gets its size" grep -qE '^[1-9][0-9]*$' "$TM_TMP/second.out"
check_eq "two readers: the first's pass cancelled, the second's built" "1 1" \
	"$(cancelled_lines) $(built_lines)"
check_eq "two readers: dump.txt's size is then the reference decoder's" \
	"$(cat "$TM_TMP/ref.size")" "$(stat -c %s "$TM_MNT/$RECORD_VIEW")"
unmount_tm
check_eq "no sanitizer report" "" "$(grep -E 'Sanitizer|runtime error' "$TM_TMP/daemon.log")"
finish
