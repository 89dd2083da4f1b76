#!/bin/bash
# A trace that changes while mounted:
# - a file that was open before the change reads the old bytes it had, or fails with EIO
#   (logged with the view and offset), never new bytes through the old index;
# - the next open or stat sees the new version, indexed anew: sizes and bytes of the new
#   content, for a trace cut short, rewritten in place at the same size, or replaced by rename;
# - the daemon keeps serving every other trace.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
mkdir -p "$src"
"$GEN_BYU" -n 100000 -s 5 >"$src/shrinks.byu"
"$GEN_BYU" -n 20000 -s 6 >"$src/steady.byu"
"$GEN_BYU" -n 20000 -s 7 >"$src/inplace.byu"
"$GEN_BYU" -n 30000 -s 8 >"$src/renamed.byu"
for t in shrinks steady inplace renamed; do
	"$BYU_REFDEC" <"$src/$t.byu" >"$TM_TMP/$t.ref"
done

# pread_direct FILE HOLD: opens FILE with O_DIRECT, reads 4096 bytes at offset 0, waits until
# the file HOLD exists, then reads 4096 bytes at offset $OFF; prints "ok" or the error.
pread_direct() {
	"$PY" - "$1" "$2" <<'EOF'
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
os.preadv(fd, [buf], 0)
print("opened", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.02)
try:
    os.preadv(fd, [buf], int(os.environ["OFF"]))
    print("ok")
except OSError as e:
    print(os.strerror(e.errno))
EOF
}

mount_tm "$src"
t=$TM_MNT/shrinks.byu
check "dump.txt size before the change" \
	test "$(stat -c %s "$t/dump.txt")" = "$(stat -c %s "$TM_TMP/shrinks.ref")"
size=$(stat -c %s "$t/dump.txt")
OFF=$(((size - 8192) / 4096 * 4096)) # near the end: its chunk's bytes will be gone
export OFF

# A reader with dump.txt open across the change: its chunk's bytes are gone, EIO.
pread_direct "$t/dump.txt" "$TM_TMP/go" >"$TM_TMP/reader.out" &
reader=$!
for _ in $(seq 1 200); do
	grep -q opened "$TM_TMP/reader.out" 2>/dev/null && break
	sleep 0.05
done
truncate -s 60000 "$src/shrinks.byu" # 10000 records are left
touch "$TM_TMP/go"
wait "$reader"
check_eq "the reader that had it open gets EIO" "opened|Input/output error" \
	"$(paste -sd'|' "$TM_TMP/reader.out")"
check "the failure is logged with the view and offset" \
	grep -q "shrinks.byu/dump.txt: read at offset $OFF: Input/output error" "$TM_TMP/daemon.log"

# The next stat and open see the trace as it is now, once the kernel's attributes (cached
# for attr_timeout, 1 s) are asked for again.
sleep 1.1
head -n 10000 "$TM_TMP/shrinks.ref" >"$TM_TMP/shrinks.now"
check_eq "a new stat gives the size of the new content" "$(stat -c %s "$TM_TMP/shrinks.now")" \
	"$(stat -c %s "$t/dump.txt")"
check "a new open reads the new content" cmp -s "$t/dump.txt" "$TM_TMP/shrinks.now"
check "the change is logged" grep -q "shrinks.byu changed: indexed anew" "$TM_TMP/daemon.log"

# Rewritten in place, same size, another modification time: indexed anew.
cmp -s "$TM_MNT/inplace.byu/dump.txt" "$TM_TMP/inplace.ref" || fail "inplace.byu before"
"$GEN_BYU" -n 20000 -s 9 >"$TM_TMP/inplace.new"
cat "$TM_TMP/inplace.new" >"$src/inplace.byu"
touch -d '+1 min' "$src/inplace.byu"
sleep 1.1
"$BYU_REFDEC" <"$TM_TMP/inplace.new" >"$TM_TMP/inplace.newref"
check "rewritten in place at the same size: the new bytes" cmp -s \
	"$TM_MNT/inplace.byu/dump.txt" "$TM_TMP/inplace.newref"

# Replaced by rename while a reader holds the old one open: it keeps reading the old file.
exec 3<"$TM_MNT/renamed.byu/dump.txt"
dd bs=100 count=1 <&3 >/dev/null 2>&1
"$GEN_BYU" -n 5000 -s 10 >"$src/.renamed.tmp"
mv "$src/.renamed.tmp" "$src/renamed.byu"
sleep 1.1
"$BYU_REFDEC" <"$src/renamed.byu" >"$TM_TMP/renamed.newref"
check "replaced by rename: a new open reads the new file" cmp -s \
	"$TM_MNT/renamed.byu/dump.txt" "$TM_TMP/renamed.newref"
# The kernel now holds the new, smaller size for the path, so the old reader's bytes may stop
# early; what it reads is the old file's.
cat <&3 >"$TM_TMP/old.reader"
exec 3<&-
check "the reader of the old file reads old bytes" cmp -s "$TM_TMP/old.reader" \
	<(tail -c +101 "$TM_TMP/renamed.ref" | head -c "$(stat -c %s "$TM_TMP/old.reader")")
check "and not nothing" test -s "$TM_TMP/old.reader"

# The other trace is untouched, and so is the daemon.
check "another trace still reads correctly" cmp -s "$TM_MNT/steady.byu/dump.txt" "$TM_TMP/steady.ref"
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"

unmount_tm
finish
