#!/bin/bash
# A trace that shrinks after it was indexed: reads that need the missing bytes fail with EIO
# (never other bytes), the failure is logged with the view and offset, and the daemon keeps
# serving every other trace.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
mkdir -p "$src"
"$GEN_BYU" -n 100000 -s 5 >"$src/shrinks.byu"
"$GEN_BYU" -n 20000 -s 6 >"$src/steady.byu"
"$BYU_REFDEC" <"$src/steady.byu" >"$TM_TMP/steady.ref"
"$BYU_REFDEC" <"$src/shrinks.byu" >"$TM_TMP/shrinks.ref"

mount_tm "$src"
t=$TM_MNT/shrinks.byu
# index it, and read the first chunk (16384 records) so that it is cached
check "dump.txt size before the change" \
	test "$(stat -c %s "$t/dump.txt")" = "$(stat -c %s "$TM_TMP/shrinks.ref")"
head -c 4096 "$t/dump.txt" >"$TM_TMP/head.before"
check "first bytes before the change" cmp -s "$TM_TMP/head.before" <(head -c 4096 "$TM_TMP/shrinks.ref")

truncate -s 60000 "$src/shrinks.byu" # 10000 records are left

# Near the end of dump.txt: its chunk's bytes are gone. O_DIRECT bypasses the page cache.
size=$(stat -c %s "$t/dump.txt")
off=$(((size - 8192) / 4096 * 4096))
if dd if="$t/dump.txt" of="$TM_TMP/tail.out" bs=4096 skip=$((off / 4096)) count=1 \
	iflag=direct 2>"$TM_TMP/dd.err"; then
	fail "a read of bytes that no longer exist succeeded"
else
	check "the read fails with EIO" grep -q "Input/output error" "$TM_TMP/dd.err"
fi
check "the failure is logged with the view and offset" \
	grep -q "shrinks.byu/dump.txt: read at offset $off: Input/output error" "$TM_TMP/daemon.log"

# The other trace is untouched, and so is the daemon.
check "another trace still reads correctly" cmp -s "$TM_MNT/steady.byu/dump.txt" "$TM_TMP/steady.ref"
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"

unmount_tm
finish
