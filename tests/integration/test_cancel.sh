#!/bin/bash
# Every index pass can be stopped (issue 42): a pass that a reader started ends within a
# fraction of its own time when that reader is killed (kill -9: the kernel interrupts its
# request), on SIGTERM and on an unmount, plain or lazy; the killed reader is reaped at once;
# the next access starts a new pass, whose sizes and bytes match the reference decoder; and a
# pass that another reader still waits for goes on. Times are measured against one whole pass
# of the same trace and printed; the limits are generous, for a loaded machine.
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
mkdir -p "$SRC"
# random addresses: the derivers' tables make a pass of several seconds from 180 MB
"$GEN_BYU" -n 30000000 -s "$SEED" -m random >"$SRC/big.byu"
VIEW=big.byu/dump.txt

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

# indexing: .tracemount/status says the pass runs.
indexing() {
	grep -q "^big.byu	byu	indexing" "$TM_MNT/.tracemount/status"
}

# waiting: starts a reader of VIEW in the background, READER its PID, and waits until the
# pass it started runs.
waiting() {
	stat -c %s "$TM_MNT/$VIEW" >"$TM_TMP/reader.out" 2>/dev/null &
	READER=$!
	local i
	for i in $(seq 1 100); do
		indexing && return 0
		sleep 0.05
	done
	return 1
}

cancelled_lines() { grep -c "big.byu: indexing cancelled after" "$TM_TMP/daemon.log"; }

# One whole pass, timed: the yardstick.
mount_tm "$SRC" -o cache=none
t0=$(date +%s%N)
stat -c %s "$TM_MNT/$VIEW" >/dev/null
PASS_MS=$(ms_since "$t0")
unmount_tm
echo "one index pass of $(($(stat -c %s "$SRC/big.byu") / 1000000)) MB: $PASS_MS ms"
check "the pass lasts long enough to tell a stop from its end (${PASS_MS} ms >= 1000)" \
	test "$PASS_MS" -ge 1000
LIMIT=$((PASS_MS / 3))

# (a) fusermount3 -u is refused while a reader waits, and succeeds once it is killed.
mount_tm "$SRC" -o cache=none
check "fusermount3 -u: a reader waits for the pass" waiting
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

# (a) SIGTERM and a lazy unmount with a reader waiting: the daemon exits promptly.
for how in SIGTERM "fusermount3 -uz"; do
	mount_tm "$SRC" -o cache=none
	check "$how: a reader waits for the pass" waiting
	t0=$(date +%s%N)
	if [ "$how" = SIGTERM ]; then
		kill -TERM "$TM_DAEMON_PID"
	else
		fusermount3 -uz "$TM_MNT"
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

# (b) kill -9 of the only reader cancels the pass; (c) the next access starts a new one.
mount_tm "$SRC" -o cache=none
check "kill -9: a reader waits for the pass" waiting
t0=$(date +%s%N)
kill -9 "$READER"
wait "$READER" 2>/dev/null
within "$(ms_since "$t0")" "$LIMIT" "kill -9 of the only reader: reaped promptly"
for i in $(seq 1 40); do [ "$(cancelled_lines)" = 1 ] && break; sleep 0.05; done
check_eq "kill -9: the log says the pass was cancelled" 1 "$(cancelled_lines)"
check_eq "kill -9: the log calls it no failure" 0 "$(grep -c 'indexing failed' "$TM_TMP/daemon.log")"
check "kill -9: .tracemount/status says big.byu is not indexed" \
	grep -q "^big.byu	byu	not indexed" "$TM_MNT/.tracemount/status"
size=$(stat -c %s "$TM_MNT/$VIEW")
check "after the cancel, a stat starts a new pass that ends" \
	grep -q "big.byu: indexed in" "$TM_TMP/daemon.log"
# the reference decoder's dump: its size, and 64 KiB from the middle
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
check_eq "the new pass: dump.txt's size is the reference decoder's" "$(cat "$TM_TMP/ref.size")" \
	"$size"
check "the new pass: dump.txt's bytes are the reference decoder's" cmp -s "$TM_TMP/ref.slice" \
	<(tail -c +$((OFF + 1)) "$TM_MNT/$VIEW" | head -c 65536)
unmount_tm

# (d) Two waiting, one killed: the pass goes on for the other. -o prefetch's thread starts
# the pass and waits for it to the end; a reader joins it and is killed.
mount_tm "$SRC" -o cache=none -o prefetch
check "two waiting: a reader waits for prefetch's pass" waiting
sleep 0.2
t0=$(date +%s%N)
kill -9 "$READER"
wait "$READER" 2>/dev/null
within "$(ms_since "$t0")" "$LIMIT" "two waiting: the killed reader is reaped promptly"
check "two waiting: the pass goes on after the kill" indexing
for i in $(seq 1 $((PASS_MS / 25 + 100))); do indexing || break; sleep 0.05; done
check "two waiting: the pass ends" grep -q "big.byu: indexed in" "$TM_TMP/daemon.log"
check_eq "two waiting: no pass was cancelled" 0 "$(cancelled_lines)"
check_eq "two waiting: dump.txt's size is the reference decoder's" "$(cat "$TM_TMP/ref.size")" \
	"$(stat -c %s "$TM_MNT/$VIEW")"
unmount_tm

# Two readers in one trace folder, the first killed: libfuse 3.14 never asks the kernel for
# parallel lookups in a folder, so the second waits in the kernel behind the first, not for
# the pass; it starts a new pass once the first is gone, and gets the right size.
mount_tm "$SRC" -o cache=none
check "two readers: the first waits for the pass" waiting
stat -c %s "$TM_MNT/big.byu/stats.json" >"$TM_TMP/second.out" &
SECOND=$!
sleep 0.3
kill -9 "$READER"
wait "$READER" 2>/dev/null
wait "$SECOND"
check "two readers: the other gets its size" grep -qE '^[1-9][0-9]*$' "$TM_TMP/second.out"
check_eq "two readers: dump.txt's size is then the reference decoder's" \
	"$(cat "$TM_TMP/ref.size")" "$(stat -c %s "$TM_MNT/$VIEW")"
unmount_tm
check_eq "no sanitizer report" "" "$(grep -E 'Sanitizer|runtime error' "$TM_TMP/daemon.log")"
finish
