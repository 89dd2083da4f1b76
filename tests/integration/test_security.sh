#!/bin/bash
# Security, with a daemon run by root with allow_other (as a shared archive would be mounted)
# and the user nobody reading it:
# - nobody reads the views of a trace it may read, and nothing of a trace or folder it may
#   not (mode 0600 trace, 0700 folder), nor the daemon's status file or root report, which
#   name every trace;
# - symbolic links lead nowhere nobody could not go without the mount: a link to a trace
#   outside SOURCE is not shown as a trace folder, and one to a folder outside resolves to
#   that folder under nobody's own permissions;
# - writes, truncation, creation, renames, removal and extended-attribute writes fail with
#   EROFS;
# - index files in the cache folder that belong to another user, or that others may write,
#   are refused (and built again), and a cache folder of another user stops the mount.
# doc/security.md has the threat model.
. "$(dirname "$0")/lib.sh"

NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
chmod 0711 "$TM_TMP" # nobody may reach the mount point, not read the test's files

SRC=$TM_TMP/src
OUT=$TM_TMP/outside
mkdir -p "$SRC/private" "$OUT"
"$GEN_BYU" -n 5000 -s 1 >"$SRC/public.byu"
"$GEN_BYU" -n 5000 -s 2 >"$SRC/secret.byu"
"$GEN_BYU" -n 5000 -s 3 >"$SRC/private/inner.byu"
"$GEN_BYU" -n 5000 -s 4 >"$OUT/outer.byu"
"$BYU_REFDEC" <"$SRC/public.byu" >"$TM_TMP/public.ref"
chmod 0755 "$SRC"
chmod 0644 "$SRC/public.byu" "$SRC/private/inner.byu" "$OUT/outer.byu"
chmod 0600 "$SRC/secret.byu"
chmod 0700 "$SRC/private" "$OUT"
# sums of spixcounts files: one of a readable and a private file, one of two readable ones
mkdir -p "$SRC/bb" "$SRC/bb2"
for f in bb/a-open bb/b-closed bb2/a bb2/b; do
	"$PY" "$(dirname "$0")/spix_expect.py" write "$SRC/$f.bb" be "3:1:0,2:5:0"
done
chmod 0755 "$SRC/bb" "$SRC/bb2"
chmod 0644 "$SRC/bb/a-open.bb" "$SRC/bb2/a.bb" "$SRC/bb2/b.bb"
chmod 0600 "$SRC/bb/b-closed.bb" # the second: its mode, not the first one's, must count
ln -s ../outside/outer.byu "$SRC/link-to-trace.byu"
ln -s ../outside "$SRC/link-to-folder"

# as_nobody PY-EXPR PATH...: runs os-level operations as nobody; prints "ok" or the errno name.
as_nobody() {
	$NOBODY "$PY" - "$@" <<'EOF'
import errno, os, sys
op, args = sys.argv[1], sys.argv[2:]
try:
    if op == "read":
        with open(args[0], "rb") as f:
            f.read()
    elif op == "list": os.listdir(args[0])
    elif op == "write": os.close(os.open(args[0], os.O_WRONLY))
    elif op == "create": os.close(os.open(args[0], os.O_WRONLY | os.O_CREAT, 0o644))
    elif op == "truncate": os.truncate(args[0], 0)
    elif op == "rename": os.rename(args[0], args[1])
    elif op == "unlink": os.unlink(args[0])
    elif op == "rmdir": os.rmdir(args[0])
    elif op == "mkdir": os.mkdir(args[0])
    elif op == "setxattr": os.setxattr(args[0], "user.tracemount", b"1")
    elif op == "chmod": os.chmod(args[0], 0o777)
    elif op == "utime": os.utime(args[0])
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
EOF
}

mount_tm "$SRC" -o allow_other,cache=none
M=$TM_MNT

check "nobody reads the views of a readable trace" cmp -s "$TM_TMP/public.ref" \
	<($NOBODY cat "$M/public.byu/dump.txt")
for v in dump.txt stats.json errors.txt raw; do
	check_eq "nobody may not read secret.byu/$v (0600)" EACCES "$(as_nobody read "$M/secret.byu/$v")"
done
check_eq "nobody may not list secret.byu" EACCES "$(as_nobody list "$M/secret.byu")"
check_eq "nobody may not list a 0700 folder" EACCES "$(as_nobody list "$M/private")"
check_eq "nobody may not read a trace in a 0700 folder" EACCES \
	"$(as_nobody read "$M/private/inner.byu/dump.txt")"
check_eq "nobody may not read the status file" EACCES "$(as_nobody read "$M/.tracemount/status")"
check_eq "nobody may not read the root report, which names every trace too" EACCES \
	"$(as_nobody read "$M/.tracemount/report.html")"
check_eq "nobody reads the formats file" ok "$(as_nobody read "$M/.tracemount/formats")"
check "and root, who mounted, reads secret.byu" test -s "$M/secret.byu/dump.txt"
check_eq "nobody may not read the sum of a private spixcounts file" EACCES \
	"$(as_nobody read "$M/bb/SUM.spixcounts/raw")"
check_eq "nobody reads the sum of readable spixcounts files" ok \
	"$(as_nobody read "$M/bb2/SUM.spixcounts/raw")"
check "and root reads the sum of the private file" test -s "$M/bb/SUM.spixcounts/raw"

# The kernel follows a link of the mount as any other: from the mount's folder, to the path
# outside, under the reader's permissions. tracemount never opens what a link names.
check_eq "a link to a trace outside SOURCE stays a link to what it names" ../outside/outer.byu \
	"$(readlink "$M/link-to-trace.byu")"
check "and is no trace folder: root finds the plain file outside" \
	test ! -d "$M/link-to-trace.byu" -a -f "$M/link-to-trace.byu"
check_eq "nobody cannot follow it into the 0700 folder outside" EACCES \
	"$(as_nobody read "$M/link-to-trace.byu")"
check_eq "nor a link to that folder" EACCES "$(as_nobody list "$M/link-to-folder/")"
check_eq "and no views appear through it" EACCES \
	"$(as_nobody read "$M/link-to-folder/outer.byu/dump.txt")"
check_eq "nobody cannot pass through a trace folder it may not search" EACCES \
	"$(as_nobody read "$M/secret.byu/../public.byu/dump.txt")"

for op in write truncate unlink setxattr chmod utime; do
	check_eq "nobody: $op of a view fails with EROFS" EROFS \
		"$(as_nobody "$op" "$M/public.byu/dump.txt")"
done
check_eq "nobody: creating a file fails with EROFS" EROFS "$(as_nobody create "$M/new.byu")"
check_eq "nobody: mkdir fails with EROFS" EROFS "$(as_nobody mkdir "$M/newdir")"
check_eq "nobody: rmdir of a trace folder fails with EROFS" EROFS \
	"$(as_nobody rmdir "$M/public.byu")"
check_eq "nobody: renaming a trace folder fails with EROFS" EROFS \
	"$(as_nobody rename "$M/public.byu" "$M/moved.byu")"
check_eq "nobody: renaming a view fails with EROFS" EROFS \
	"$(as_nobody rename "$M/public.byu/dump.txt" "$M/public.byu/x.txt")"
check_eq "nobody: setxattr of a trace folder fails with EROFS" EROFS \
	"$(as_nobody setxattr "$M/public.byu")"
check "the sources are untouched" cmp -s "$TM_TMP/public.ref" <("$BYU_REFDEC" <"$SRC/public.byu")
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm

# Index files of another user: built by `tracemount index`, then handed to nobody, or made
# writable by others. The daemon refuses both, says why, and indexes the traces again.
IDX=$TM_TMP/indexes
"$TRACEMOUNT" index --cache "$IDX" "$SRC/public.byu" "$SRC/secret.byu" >/dev/null
check_eq "two index files" 2 "$(ls "$IDX" | wc -l)"
first=$(ls "$IDX" | head -n 1)
second=$(ls "$IDX" | tail -n 1)
chown nobody "$IDX/$first"
chmod 0666 "$IDX/$second"
mount_tm "$SRC" -o cache="$IDX"
check "public.byu reads right" cmp -s "$TM_MNT/public.byu/dump.txt" "$TM_TMP/public.ref"
stat -c %s "$TM_MNT/secret.byu/dump.txt" >/dev/null
check_eq "both index files refused, both traces indexed again" \
	"2 built, 0 read from index files, 2 index files refused" "$(index_counts "$TM_MNT")"
check "the refusal says: owned by another user" grep -q "owned by another user" "$TM_TMP/daemon.log"
check "the refusal says: writable by others" grep -q "writable by others" "$TM_TMP/daemon.log"
unmount_tm

# A cache folder named on the command line that belongs to another user: no mount at all.
chown -R nobody "$IDX"
mkdir -p "$TM_TMP/mnt-refused"
"$TRACEMOUNT" -f -o cache="$IDX" "$SRC" "$TM_TMP/mnt-refused" 2>"$TM_TMP/refused.log"
check_eq "a cache folder of another user: tracemount exits with status 1" 1 "$?"
check "and says whose it is" grep -q "cache folder $IDX belongs to uid $(id -u nobody)" \
	"$TM_TMP/refused.log"
check "nothing was mounted" test "$(mountpoint -q "$TM_TMP/mnt-refused"; echo $?)" != 0
finish
