#!/bin/bash
# No path of the mount leads out of SOURCE, even while someone who may write in SOURCE swaps a
# folder for a symbolic link to outside it, atomically and over and over, during the lookups.
#
# The daemon runs as root with allow_other, as a shared archive is mounted; the reader is
# nobody. The folders outside are root's own (0700): the kernel, following a link the mount
# shows, reaches nothing there as nobody, so any byte, name or size of theirs that nobody sees
# came from the daemon. Two folders are swapped, one for an absolute link every 20 us (the
# daemon's lookups race it), one for a relative link every 500 us (the kernel's walks through
# the mount mostly complete), and every kind of node is looked up through them: a plain file, a trace's views, a
# folder's entries, a link's target and a file's attributes. Under valgrind the daemon runs
# without openat2 (valgrind does not know it), so the fallback walk is tested there.
. "$(dirname "$0")/lib.sh"

NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
[ "$(id -u)" = 0 ] || skip not-root "this test needs root (a daemon of root, a reader of nobody)"
command -v setpriv >/dev/null || skip tool:setpriv "this test needs setpriv (a reader of nobody)"
chmod 0711 "$TM_TMP" # nobody may reach the mount point, not read the test's files

src=$TM_TMP/src
out=$TM_TMP/outside
# fill DIR WORD SEED: a folder as the reader will walk it, each file saying where it is.
fill() {
	mkdir -p "$1/sub"
	echo "$2" >"$1/secret.txt"
	echo "$2-SUB-$2" >"$1/sub/f.txt"
	touch "$1/sub/only-$2"
	ln -s "target-$2" "$1/lnk"
	"$GEN_BYU" -n 1000 -s "$3" >"$1/t.byu"
	chmod -R go+rX "$1"
}
fill "$src/a" INSIDE 7
fill "$src/c" INSIDE 7
fill "$out/abs" OUTSIDE-SECRET-ABSOLUTE 8
fill "$out/rel" OUTSIDE-SECRET-RELATIVE 9
chmod 0755 "$src"
chmod 0700 "$out"
ln -s "$out/abs" "$src/b"
ln -s ../outside/rel "$src/d"
cmp -s "$src/a/t.byu" "$out/abs/t.byu" && fail "the traces inside and outside differ"

# no kernel caching of names or attributes: every lookup goes to the daemon, inside the race
mount_tm "$src" -o attr_timeout=0,entry_timeout=0,allow_other
$NOBODY test -r "$TM_MNT/a/secret.txt" || fail "nobody reads the mount"
flags=$TM_TMP/flags
mkdir -m 1777 "$flags"
# Opens, listings, link reads and stats through "a" and "c", first as they are, then while
# they are swapped: count what nobody got that differs from what they hold.
# Every kind of lookup must race the swaps (a loaded machine or valgrind serves few a second):
# the reader goes on past its 5 s until each kind has raced MIN times, for 90 s at most.
min=$([ -n "${TM_DAEMON_WRAP:-}" ] && echo 1 || echo 10)
$NOBODY "$PY" - "$TM_MNT" "$flags" "$min" >"$TM_TMP/reads" 2>&1 <<'PYEOF' &
import os, sys, time
mnt, flags, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
FILES = ("secret.txt", "sub/f.txt", "t.byu/raw", "t.byu/dump.txt", "t.byu/stats.json")

def read(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        return os.pread(fd, 4096, 0)
    finally:
        os.close(fd)

def look(top):
    """What nobody sees through top: each file's first bytes, the listing, the link, a size."""
    seen = {}
    for rel in FILES:
        try:
            seen[rel] = read(os.path.join(mnt, top, rel))
        except OSError:
            pass
    for what, fn in (("list", lambda: sorted(os.listdir(os.path.join(mnt, top, "sub")))),
                     ("link", lambda: os.readlink(os.path.join(mnt, top, "lnk"))),
                     ("stat", lambda: os.lstat(os.path.join(mnt, top, "secret.txt")).st_size)):
        try:
            seen[what] = fn()
        except OSError:
            pass
    return seen

# before the swaps start: what the folders inside hold
expected = {top: look(top) for top in ("a", "c")}
for top in expected:
    assert len(expected[top]) == len(FILES) + 3, expected[top].keys()
open(os.path.join(flags, "ready"), "w").close()
while not os.path.exists(os.path.join(flags, "swapping")):
    time.sleep(0.01)
counts, leaks, empty = {}, [], {}
start = time.time()
def raced_enough():
    return all(counts.get(k, 0) >= least for k in ("read", "view", "list", "link", "stat"))
while time.time() < start + 5 or (not raced_enough() and time.time() < start + 90):
    for top in ("a", "c"):
        for key, got in look(top).items():
            kind = "view" if key.startswith("t.byu") else key if key in ("list", "link", "stat") else "read"
            counts[kind] = counts.get(kind, 0) + 1
            want = expected[top][key]
            if "OUTSIDE" in repr(got):
                leaks.append("%s/%s: %r" % (top, key, got[:60] if isinstance(got, bytes) else got))
            elif got != want and (got or key == "stat"):
                # bytes or a size of another file; an empty listing or read, seen while the
                # kernel finds a folder turned link under one name, holds nothing of outside
                leaks.append("%s/%s: %r" % (top, key, got[:60] if isinstance(got, bytes) else got))
            elif got != want:
                empty[key] = empty.get(key, 0) + 1
open(os.path.join(flags, "done"), "w").close()
print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))
print("leaks %d; empty answers %s" % (len(leaks), empty))
for l in leaks[:10]:
    print("leak " + l)
PYEOF
reader=$!
for _ in $(seq 1 600); do
	[ -e "$flags/ready" ] && break
	sleep 0.05
done
"$SWAP_LOOP" "$src/a" "$src/b" 100 20 "$flags/done" >"$TM_TMP/swaps-ab" &
swap_ab=$!
"$SWAP_LOOP" "$src/c" "$src/d" 100 500 "$flags/done" >"$TM_TMP/swaps-cd" &
swap_cd=$!
touch "$flags/swapping"
wait "$reader" "$swap_ab" "$swap_cd"
cat "$TM_TMP/reads"
echo "swaps: $(cat "$TM_TMP/swaps-ab") (a, b) and $(cat "$TM_TMP/swaps-cd") (c, d)"
leaks=$(sed -n 's/^leaks \([0-9]*\);.*/\1/p' "$TM_TMP/reads")
check_eq "nothing from outside SOURCE reached nobody" 0 "${leaks:-missing}"
for kind in read view list link stat; do
	n=$(grep -o "$kind=[0-9]*" "$TM_TMP/reads" | cut -d= -f2)
	check "at least $min ${kind}s raced the swaps (${n:-none})" test "${n:-0}" -ge "$min"
done
check "both swaps ran" grep -q exchanges "$TM_TMP/swaps-ab"
check "both swaps ran (c, d)" grep -q exchanges "$TM_TMP/swaps-cd"
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
