#!/bin/bash
# No path of the mount leads out of SOURCE, even while someone who may write in SOURCE swaps a
# folder for a symbolic link to outside it, atomically and over and over, during the lookups.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
out=$TM_TMP/outside
mkdir -p "$src/a" "$out/secretdir"
echo INSIDE >"$src/a/secret.txt"
echo OUTSIDE-SECRET >"$out/secretdir/secret.txt"
"$GEN_BYU" -n 1000 -s 7 >"$src/a/t.byu"
"$GEN_BYU" -n 1000 -s 8 >"$out/secretdir/t.byu"
ln -s ../outside/secretdir "$src/b"

# no kernel caching of names or attributes: every open is looked up afresh, inside the race
mount_tm "$src" -o attr_timeout=0,entry_timeout=0
"$SWAP_LOOP" "$src/a" "$src/b" 4 >"$TM_TMP/swaps" &
swapper=$!
# Thousands of opens of paths through "a" while it is swapped: count the reads that return
# the bytes of the files outside SOURCE.
"$PY" - "$TM_MNT" "$out/secretdir/t.byu" >"$TM_TMP/reads" <<'PYEOF'
import os, sys, time
mnt, outside_trace = sys.argv[1:3]
outside = [b"OUTSIDE-SECRET", open(outside_trace, "rb").read(64)]
reads = leaks = 0
end = time.time() + 3
while time.time() < end:
    for rel in ("a/secret.txt", "a/t.byu/raw"):
        try:
            fd = os.open(os.path.join(mnt, rel), os.O_RDONLY | os.O_DIRECT)
        except OSError:
            continue
        try:
            got = os.pread(fd, 4096, 0)[:64]
        except OSError:
            got = b""
        os.close(fd)
        reads += 1
        leaks += any(got.startswith(o[:len(got)]) and got for o in outside)
print(reads, leaks)
PYEOF
wait "$swapper"
read -r reads leaks <"$TM_TMP/reads"
echo "$reads reads during $(cat "$TM_TMP/swaps")"
# Under valgrind (TM_DAEMON_WRAP) the daemon serves a few dozen in the time.
min_reads=$([ -n "${TM_DAEMON_WRAP:-}" ] && echo 20 || echo 300)
check "at least $min_reads reads raced the swaps" test "${reads:-0}" -gt "$min_reads"
check_eq "reads that returned bytes from outside SOURCE" 0 "${leaks:-missing}"
check "the swapping ran" grep -q "exchanges" "$TM_TMP/swaps"
unmount_tm
finish
