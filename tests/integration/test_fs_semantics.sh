#!/bin/bash
# Filesystem semantics of the mount: the mirrored tree (folders, traces as folders, plain files
# byte-identical, symbolic links as links, special files hidden, .tracemount shadowed), EROFS on
# every write-like operation, modes, owners and times mirrored from the source, ls -R and find,
# the .tracemount files (the status counting every trace a listing has shown), statfs and
# read-only flags, access by another user through allow_other + default_permissions, and two
# independent mounts of one SOURCE at once.
#
# Expectations come from the product brief and from the source tree built here.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	skip not-root "this test needs root (chown, mknod, setpriv, allow_other)"
fi

HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$HERE/../../meson.build" | head -n 1)
CLASSES="invalid int_ack special io_read io_write i_fetch nc_i_fetch d_read nc_d_read write_back d_write"
NOBODY_UID=$(id -u nobody)
umask 022
NOGROUP_GID=$(getent group nogroup | cut -d: -f3)

# ---------------------------------------------------------------------------------------
# The source tree.
SRC=$TM_TMP/src
OUTSIDE=$TM_TMP/outside
mkdir -p "$SRC/a/b/c" "$SRC/a/empty" "$SRC/dir.byu" "$SRC/untouched" "$SRC/perm" "$OUTSIDE"
"$GEN_BYU" -n 2000 -s 1 >"$SRC/top.byu"
"$GEN_BYU" -n 777 -s 2 >"$SRC/a/b/c/deep.byu"
"$GEN_BYU" -n 50 -s 3 >"$SRC/untouched/u.byu"
"$GEN_BYU" -n 321 -s 4 >"$SRC/perm/secret.byu"
"$GEN_BYU" -n 10 -s 5 >"$SRC/perm/other.byu"
"$GEN_BYU" -n 10 -s 6 >"$SRC/perm/rootonly.byu"
head -c 3000000 /dev/urandom >"$SRC/random.bin"
printf 'hello, plain file\n' >"$SRC/readme.txt"
: >"$SRC/emptyfile"
head -c 777 /dev/urandom >"$SRC/a/b/notes.bin"
printf 'a file named .tracemount below the root is an ordinary file\n' >"$SRC/a/.tracemount"
printf 'inside a folder named like a trace\n' >"$SRC/dir.byu/inner.txt"
printf 'decoy: the virtual folder hides this file\n' >"$SRC/.tracemount"
printf 'private\n' >"$SRC/perm/private.txt"
printf 'root only\n' >"$SRC/perm/rootonly.txt"
printf '#!/bin/sh\necho hi\n' >"$SRC/perm/script.sh"
printf 'outside SOURCE\n' >"$OUTSIDE/secret.txt"
ln -s top.byu "$SRC/link_to_trace"
ln -s ../top.byu "$SRC/a/link_up"
ln -s "$OUTSIDE/secret.txt" "$SRC/outside_link"
ln -s no-such-target "$SRC/dangling"
mkfifo "$SRC/fifo"
mknod "$SRC/nulldev" c 1 3
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
	"$SRC/a/sock"
chmod 0640 "$SRC/perm/secret.byu" "$SRC/perm/private.txt"
chown nobody:nogroup "$SRC/perm/secret.byu" "$SRC/perm/private.txt"
chmod 0604 "$SRC/perm/other.byu"
chmod 0600 "$SRC/perm/rootonly.byu" "$SRC/perm/rootonly.txt"
chmod 0755 "$SRC/perm/script.sh"
chmod 0644 "$SRC/top.byu" "$SRC/readme.txt"
chmod 0750 "$SRC/a/b"
chmod 0755 "$SRC/perm"
# Distinct, old times with nanoseconds, so that mirroring cannot happen by accident.
touch -d '2001-02-03 04:05:06.123456789' "$SRC/top.byu"
touch -d '2002-03-04 05:06:07.5' "$SRC/readme.txt"
printf 'only ever stat-ed\n' >"$SRC/stamped.txt"
touch -a -d '2006-01-01 00:00:01' "$SRC/stamped.txt"
touch -m -d '2007-01-01 00:00:02' "$SRC/stamped.txt"
touch -d '2003-04-05 06:07:08.25' "$SRC/a/b"
touch -h -d '2004-05-06 07:08:09' "$SRC/link_to_trace"
touch -d '2005-06-07 08:09:10' "$SRC/perm/secret.byu"
for f in top.byu a/b/c/deep.byu perm/secret.byu; do
	"$BYU_REFDEC" <"$SRC/$f" >"$TM_TMP/$(basename "$f").ref"
done

# The views of a BYU trace named STEM.byu (brief, section 2).
views_of() {
	local stem=$1 c
	printf '%s\n' raw dump.txt stats.json errors.txt "convert/$stem.din"
	printf '%s\n' plots/mix.svg plots/footprint.svg # every trace's
	printf '%s\n' plots/addresses.svg
	printf '%s\n' report.html                       # every trace's page
	for c in $CLASSES; do
		printf 'class/%s.txt\nclass/%s.byu\n' "$c" "$c"
	done
}

# What `find MNT -printf '%y %P\n'` must show: TYPE PATH.
expected_tree() {
	local t stem v
	printf '%s\n' "d .tracemount" "f .tracemount/version" "f .tracemount/formats" \
		"f .tracemount/status" "f .tracemount/report.html"
	printf '%s\n' "d a" "d a/b" "d a/b/c" "d a/empty" "f a/b/notes.bin" "f a/.tracemount" \
		"l a/link_up" "d dir.byu" "f dir.byu/inner.txt" "d untouched" "d perm" \
		"f perm/private.txt" "f perm/rootonly.txt" "f perm/script.sh" "f random.bin" \
		"f readme.txt" "f stamped.txt" "f emptyfile" "l link_to_trace" "l outside_link" "l dangling"
	for t in top.byu a/b/c/deep.byu untouched/u.byu perm/secret.byu perm/other.byu \
		perm/rootonly.byu; do
		stem=$(basename "$t" .byu)
		printf 'd %s\nd %s/class\nd %s/convert\nd %s/plots\n' "$t" "$t" "$t" "$t"
		views_of "$stem" | while read -r v; do printf 'f %s/%s\n' "$t" "$v"; done
	done
}

# op.py: reads lines "DESCRIPTION<TAB>OP<TAB>ARG..." and performs each os call, printing
# "DESCRIPTION<TAB>RESULT" where RESULT is OK, the errno name, or what the op reports. One
# python process for many calls: interpreter start-up can cost a second on a loaded machine.
cat >"$TM_TMP/op.py" <<'PYEOF'
import errno, os, sys

def run(op, args):
    if op == "open":
        flags = 0
        for f in args[1].split("|"):
            flags |= getattr(os, f)
        os.close(os.open(args[0], flags, 0o644))
    elif op == "mkdir": os.mkdir(args[0])
    elif op == "rmdir": os.rmdir(args[0])
    elif op == "unlink": os.unlink(args[0])
    elif op == "rename": os.rename(args[0], args[1])
    elif op == "link": os.link(args[0], args[1])
    elif op == "symlink": os.symlink(args[0], args[1])
    elif op == "chmod": os.chmod(args[0], 0o777)
    elif op == "chown": os.chown(args[0], 1, 1)
    elif op == "lchown": os.lchown(args[0], 1, 1)
    elif op == "truncate": os.truncate(args[0], 0)
    elif op == "utime": os.utime(args[0], (1, 1))
    elif op == "lutime": os.utime(args[0], (1, 1), follow_symlinks=False)
    elif op == "setxattr": os.setxattr(args[0], "user.tracemount", b"x")
    elif op == "removexattr": os.removexattr(args[0], "user.tracemount")
    elif op == "mkfifo": os.mkfifo(args[0])
    elif op == "mknod": os.mknod(args[0], 0o600 | 0o100000)
    elif op == "lstat": os.lstat(args[0])
    elif op == "listdir": os.listdir(args[0])
    elif op == "statvfs_ro":
        return "RO" if os.statvfs(args[0]).f_flag & os.ST_RDONLY else "RW"
    else:
        return "unknown op " + op
    return "OK"

for line in sys.stdin:
    desc, op, *args = line.rstrip("\n").split("\t")
    try:
        result = run(op, args)
    except OSError as e:
        result = errno.errorcode.get(e.errno, str(e.errno))
    print(desc + "\t" + result, flush=True)
PYEOF

# expect RESULT DESCRIPTION OP ARGS...: queues one os call that must give RESULT;
# run_expected performs the queue in one python process and checks every result.
: >"$TM_TMP/ops"
: >"$TM_TMP/ops.expected"
expect() {
	local result=$1 desc=$2
	shift 2
	printf '%s\t%s' "$desc ($result)" "$1" >>"$TM_TMP/ops"
	shift
	printf '\t%s' "$@" >>"$TM_TMP/ops"
	printf '\n' >>"$TM_TMP/ops"
	printf '%s\n' "$result" >>"$TM_TMP/ops.expected"
}
run_expected() {
	local desc got want
	python3 "$TM_TMP/op.py" <"$TM_TMP/ops" >"$TM_TMP/ops.out"
	check_eq "every queued os call ran" "$(wc -l <"$TM_TMP/ops")" "$(wc -l <"$TM_TMP/ops.out")"
	while IFS=$'\t' read -r desc got <&3 && read -r want <&4; do
		check_eq "$desc" "$want" "$got"
	done 3<"$TM_TMP/ops.out" 4<"$TM_TMP/ops.expected"
	: >"$TM_TMP/ops"
	: >"$TM_TMP/ops.expected"
}

# ---------------------------------------------------------------------------------------
# Laziness and .tracemount/status: listing decodes nothing, reading a view indexes its trace.
mount_tm "$SRC"
MNT=$TM_MNT
# traces: the lines of .tracemount/status without its header and '#' summary lines
traces() {
	grep -v '^#' "$MNT/.tracemount/status" | tail -n +2
}
check_eq ".tracemount/status lists no trace right after mounting" "" "$(traces)"
check_eq "status: its first line names the columns" \
	"$(printf 'path\tformat\tstate\trecords\tindex_bytes')" \
	"$(head -n 1 "$MNT/.tracemount/status")"
check "status ends in its summary line" \
	grep -qE '^# 0 traces; indexes: 0 built, 0 read from index files, 0 index files refused, 0 index files out of date, 0 builds failed; 0 problems in the errors.txt of 0 traces, 0 notes in 0 traces; cache /.*/tracemount$' \
	"$MNT/.tracemount/status"
expect OK "list the root" listdir "$MNT"
expect OK "list a/b/c/deep.byu" listdir "$MNT/a/b/c/deep.byu"
expect OK "list a/b/c/deep.byu/class" listdir "$MNT/a/b/c/deep.byu/class"
run_expected
# the root's listing shows top.byu, a trace by its name whose head it does not read: its
# format is not known yet
check_eq "listing a trace folder leaves it 'not indexed'; a listed trace is counted" \
	"$(printf 'a/b/c/deep.byu\tbyu\tnot indexed\t-\t-\ntop.byu\t-\tnot indexed\t-\t-')" \
	"$(traces)"
check "status: the summary counts both" grep -q '^# 2 traces;' "$MNT/.tracemount/status"
check "reading top.byu/dump.txt" cmp -s "$MNT/top.byu/dump.txt" "$TM_TMP/top.byu.ref"
status=$(traces)
check_eq "status has one line per trace entered" 2 "$(printf '%s\n' "$status" | wc -l)"
deep_line=$(printf '%s\n' "$status" | awk -F'\t' '$1 == "a/b/c/deep.byu"')
top_line=$(printf '%s\n' "$status" | awk -F'\t' '$1 == "top.byu"')
check_eq "status: a/b/c/deep.byu still not indexed" \
	"$(printf 'a/b/c/deep.byu\tbyu\tnot indexed\t-\t-')" "$deep_line"
check_eq "status: top.byu has five tab-separated fields" 5 \
	"$(printf '%s\n' "$top_line" | awk -F'\t' '{print NF}')"
check_eq "status: top.byu format" byu "$(printf '%s\n' "$top_line" | cut -f2)"
check_eq "status: top.byu indexed after a view was read" indexed \
	"$(printf '%s\n' "$top_line" | cut -f3)"
check_eq "status: top.byu record count (2000 generated, as the reference decoder counts)" \
	"$(wc -l <"$TM_TMP/top.byu.ref")" "$(printf '%s\n' "$top_line" | cut -f4)"
check "status: top.byu index bytes is a positive number" \
	test "$(printf '%s\n' "$top_line" | cut -f5 | grep -cE '^[1-9][0-9]*$')" = 1
check "status: a trace in a folder never visited is absent" \
	test -z "$(printf '%s\n' "$status" | grep -F untouched)"
stat "$MNT/a/b/c/deep.byu/dump.txt" >/dev/null
check_eq "status: stat of a view's size indexes its trace" \
	"$(printf 'a/b/c/deep.byu\tbyu\tindexed\t777')" \
	"$(awk -F'\t' -v OFS='\t' '$1 == "a/b/c/deep.byu" {print $1, $2, $3, $4}' \
		"$MNT/.tracemount/status")"

# .tracemount/version and formats.
check_eq ".tracemount/version is exactly 'tracemount VERSION\\n'" \
	"$(printf 'tracemount %s\n' "$VERSION" | od -c)" "$(od -c <"$MNT/.tracemount/version")"
for f in version formats; do
	check_eq ".tracemount/$f: stat size equals its content's size" \
		"$(wc -c <"$MNT/.tracemount/$f")" "$(stat -c %s "$MNT/.tracemount/$f")"
done
formats=$(cat "$MNT/.tracemount/formats")
check "formats: a stanza for byu" grep -qE '^byu: .+' <<<"$formats"
byu_stanza=$(awk '/^[^ ]/ {in_byu = ($0 ~ /^byu:/)} in_byu' <<<"$formats")
check "formats: byu is recognised by extension .byu" \
	grep -qE '^  recognised by: extension \.byu( |$)' <<<"$byu_stanza"
check_eq "formats: byu lists the spec's classes" \
	"$(printf '%s\n' $CLASSES | LC_ALL=C sort)" \
	"$(sed -n 's/^  classes: //p' <<<"$byu_stanza" | tr ' ' '\n' | grep . | LC_ALL=C sort)"
views_line=$(sed -n 's/^  views: //p' <<<"$byu_stanza")
for v in raw dump.txt stats.json errors.txt class/ convert/ .din plots/mix.svg; do
	check "formats: byu views mention $v" grep -qF -- "$v" <<<"$views_line"
done
check ".tracemount is a folder" test -d "$MNT/.tracemount"
check_eq "the root lists .tracemount exactly once" 1 "$(ls -A "$MNT" | grep -cx '\.tracemount')"
check ".tracemount's listing is version, formats, status, report.html" test \
	"$(ls -A "$MNT/.tracemount" | LC_ALL=C sort | tr '\n' ' ')" = "formats report.html status version "
check "the source's own .tracemount file is not reachable" \
	test ! -e "$MNT/.tracemount/.tracemount"
check "a .tracemount below the root is an ordinary file" cmp -s "$MNT/a/.tracemount" \
	"$SRC/a/.tracemount"

# ---------------------------------------------------------------------------------------
# The mirrored tree.
find "$MNT" -mindepth 1 -printf '%y %P\n' 2>"$TM_TMP/find.err" | LC_ALL=C sort >"$TM_TMP/find.out"
check_eq "find of the mount reports no errors" "" "$(cat "$TM_TMP/find.err")"
check "find of the mount lists exactly the expected tree" cmp -s "$TM_TMP/find.out" \
	<(expected_tree | LC_ALL=C sort)
if ! cmp -s "$TM_TMP/find.out" <(expected_tree | LC_ALL=C sort); then
	diff <(expected_tree | LC_ALL=C sort) "$TM_TMP/find.out" >&2
fi
ls -R "$MNT" >"$TM_TMP/lsR.out" 2>"$TM_TMP/lsR.err"
check_eq "ls -R of the mount exits 0" 0 $?
check_eq "ls -R of the mount reports no errors" "" "$(cat "$TM_TMP/lsR.err")"
for v in raw dump.txt stats.json errors.txt d_write.byu; do
	check_eq "ls -R lists $v in each of the 6 trace folders" 6 \
		"$(grep -cxF "$v" "$TM_TMP/lsR.out")"
done
check "ls -R descends into a/b/c/deep.byu/class" grep -qxF "$MNT/a/b/c/deep.byu/class:" \
	"$TM_TMP/lsR.out"
check "ls -lR of the mount works" ls -lR "$MNT" >/dev/null

for f in top.byu a/b/c/deep.byu perm/secret.byu perm/other.byu; do
	check "$f is a folder" test -d "$MNT/$f" -a ! -L "$MNT/$f"
done
check "dir.byu (a folder named like a trace) stays a folder of its files" cmp -s \
	"$MNT/dir.byu/inner.txt" "$SRC/dir.byu/inner.txt"
check "a/empty is an empty folder" test -d "$MNT/a/empty" -a -z "$(ls -A "$MNT/a/empty")"
for f in readme.txt random.bin emptyfile a/b/notes.bin perm/private.txt perm/script.sh; do
	check "$f is a regular file" test -f "$MNT/$f" -a ! -L "$MNT/$f"
	check "$f is byte-identical" cmp -s "$MNT/$f" "$SRC/$f"
	check_eq "$f: stat size equals the source's" "$(stat -c %s "$SRC/$f")" \
		"$(stat -c %s "$MNT/$f")"
done
check "random.bin read at an offset" cmp -s <(tail -c +1234568 "$MNT/random.bin" | head -c 100000) \
	<(tail -c +1234568 "$SRC/random.bin" | head -c 100000)
check "deep.byu/raw equals the source" cmp -s "$MNT/a/b/c/deep.byu/raw" "$SRC/a/b/c/deep.byu"
check "deep.byu/dump.txt equals the reference decoder" cmp -s "$MNT/a/b/c/deep.byu/dump.txt" \
	"$TM_TMP/deep.byu.ref"

# Symbolic links: shown as links with the source's target, never resolved by tracemount.
for l in link_to_trace a/link_up outside_link dangling; do
	check "$l is a symbolic link" test -L "$MNT/$l"
	check_eq "$l: readlink equals the source's" "$(readlink "$SRC/$l")" "$(readlink "$MNT/$l")"
done
check "link_to_trace resolves (through the kernel) to the trace folder" \
	test -d "$MNT/link_to_trace"
check "reading through link_to_trace gives top.byu's views" cmp -s \
	"$MNT/link_to_trace/dump.txt" "$TM_TMP/top.byu.ref"

# Fifos, sockets and devices are not shown.
for f in fifo nulldev a/sock; do
	check "$f is not shown" test ! -e "$MNT/$f" -a ! -L "$MNT/$f"
	expect ENOENT "$f: lookup fails" lstat "$MNT/$f"
done

# ---------------------------------------------------------------------------------------
# Read-only: every write-like operation fails with EROFS.
erofs() {
	expect EROFS "$@"
}
for f in readme.txt top.byu/dump.txt top.byu/class/d_read.byu .tracemount/version; do
	erofs "open $f O_WRONLY" open "$MNT/$f" O_WRONLY
	erofs "open $f O_RDWR" open "$MNT/$f" O_RDWR
	erofs "open $f O_WRONLY|O_APPEND" open "$MNT/$f" 'O_WRONLY|O_APPEND'
	erofs "open $f O_RDONLY|O_TRUNC" open "$MNT/$f" 'O_RDONLY|O_TRUNC'
	erofs "truncate $f" truncate "$MNT/$f"
	erofs "unlink $f" unlink "$MNT/$f"
	erofs "chmod $f" chmod "$MNT/$f"
	erofs "chown $f" chown "$MNT/$f"
	erofs "utime $f" utime "$MNT/$f"
	erofs "setxattr $f" setxattr "$MNT/$f"
	erofs "rename $f" rename "$MNT/$f" "$MNT/renamed"
	erofs "link $f" link "$MNT/$f" "$MNT/hardlink"
done
for d in . a top.byu top.byu/class .tracemount; do
	erofs "create in $d" open "$MNT/$d/newfile" 'O_WRONLY|O_CREAT'
	erofs "create (exclusive) in $d" open "$MNT/$d/newfile" 'O_RDWR|O_CREAT|O_EXCL'
	erofs "mkdir in $d" mkdir "$MNT/$d/newdir"
	erofs "symlink in $d" symlink target "$MNT/$d/newlink"
	erofs "mkfifo in $d" mkfifo "$MNT/$d/newfifo"
	erofs "mknod in $d" mknod "$MNT/$d/newnode"
	erofs "chmod folder $d" chmod "$MNT/$d"
	erofs "chown folder $d" chown "$MNT/$d"
	erofs "utime folder $d" utime "$MNT/$d"
	erofs "setxattr folder $d" setxattr "$MNT/$d"
done
erofs "rmdir a/empty" rmdir "$MNT/a/empty"
erofs "rmdir a trace folder" rmdir "$MNT/top.byu"
erofs "rmdir a view folder" rmdir "$MNT/top.byu/class"
erofs "rmdir .tracemount" rmdir "$MNT/.tracemount"
erofs "unlink a trace folder's view" unlink "$MNT/top.byu/convert/top.din"
erofs "rename a folder" rename "$MNT/a" "$MNT/z"
erofs "rename a trace folder" rename "$MNT/top.byu" "$MNT/t2.byu"
erofs "rename a view within its trace" rename "$MNT/top.byu/raw" "$MNT/top.byu/raw2"
erofs "unlink a symbolic link" unlink "$MNT/link_to_trace"
erofs "lchown a symbolic link" lchown "$MNT/link_to_trace"
erofs "utime a symbolic link (no follow)" lutime "$MNT/link_to_trace"
erofs "removexattr readme.txt" removexattr "$MNT/readme.txt"
run_expected
check_eq "source readme.txt unchanged after the write attempts" "hello, plain file" \
	"$(cat "$SRC/readme.txt")"
check "no new file appeared in SOURCE" test ! -e "$SRC/newfile" -a ! -e "$SRC/renamed" \
	-a ! -e "$SRC/newdir" -a ! -e "$SRC/hardlink"
# The shell's view of the same errors.
err=$( (echo x >"$MNT/readme.txt") 2>&1)
check "shell redirection into a file says Read-only file system ($err)" \
	grep -qF 'Read-only file system' <<<"$err"
err=$(touch "$MNT/readme.txt" 2>&1)
check "touch of a file says Read-only file system ($err)" grep -qF 'Read-only file system' <<<"$err"
err=$(touch "$MNT/brand-new" 2>&1)
check "touch of a new name says Read-only file system ($err)" \
	grep -qF 'Read-only file system' <<<"$err"
err=$(mkdir "$MNT/a/newdir" 2>&1)
check "mkdir says Read-only file system ($err)" grep -qF 'Read-only file system' <<<"$err"
err=$(rm -f "$MNT/top.byu/raw" 2>&1)
check "rm of a view says Read-only file system ($err)" grep -qF 'Read-only file system' <<<"$err"

# ---------------------------------------------------------------------------------------
# Modes, owners and times.
mode() { stat -c %a "$1"; }
owner() { stat -c %u:%g "$1"; }
check_eq "root folder: source mode minus write bits" \
	"$(printf '%o' $((0$(mode "$SRC") & ~0222)))" "$(mode "$MNT")"
check_eq "a/b (0750) shows as 0550" 550 "$(mode "$MNT/a/b")"
check_eq "readme.txt (0644) shows as 0444" 444 "$(mode "$MNT/readme.txt")"
check_eq "perm/script.sh (0755) shows as 0555" 555 "$(mode "$MNT/perm/script.sh")"
check_eq "perm/private.txt (0640) shows as 0440" 440 "$(mode "$MNT/perm/private.txt")"
check_eq "perm/private.txt owner nobody:nogroup" "$NOBODY_UID:$NOGROUP_GID" \
	"$(owner "$MNT/perm/private.txt")"
check_eq "perm/rootonly.txt (0600) shows as 0400" 400 "$(mode "$MNT/perm/rootonly.txt")"
check_eq "trace perm/secret.byu (0640) is a 0550 folder" 550 "$(mode "$MNT/perm/secret.byu")"
check_eq "trace perm/secret.byu folder owner nobody:nogroup" "$NOBODY_UID:$NOGROUP_GID" \
	"$(owner "$MNT/perm/secret.byu")"
for v in raw dump.txt stats.json errors.txt class/d_read.txt class/d_read.byu convert/secret.din; do
	check_eq "perm/secret.byu/$v mode 0440" 440 "$(mode "$MNT/perm/secret.byu/$v")"
	check_eq "perm/secret.byu/$v owner nobody:nogroup" "$NOBODY_UID:$NOGROUP_GID" \
		"$(owner "$MNT/perm/secret.byu/$v")"
	check "perm/secret.byu/$v is a regular file" test -f "$MNT/perm/secret.byu/$v"
done
for d in class convert; do
	check_eq "perm/secret.byu/$d is a 0550 folder" 550 "$(mode "$MNT/perm/secret.byu/$d")"
	check_eq "perm/secret.byu/$d owner nobody:nogroup" "$NOBODY_UID:$NOGROUP_GID" \
		"$(owner "$MNT/perm/secret.byu/$d")"
done
check "root still reads perm/secret.byu/dump.txt (default_permissions)" cmp -s \
	"$MNT/perm/secret.byu/dump.txt" "$TM_TMP/secret.byu.ref"
check_eq "trace perm/other.byu (0604) is a 0505 folder" 505 "$(mode "$MNT/perm/other.byu")"
check_eq "perm/other.byu/dump.txt mode 0404" 404 "$(mode "$MNT/perm/other.byu/dump.txt")"
check_eq "trace perm/rootonly.byu (0600) is a 0500 folder" 500 "$(mode "$MNT/perm/rootonly.byu")"
check_eq "top.byu (0644) is a 0555 folder, owned as the source" "555 $(owner "$SRC/top.byu")" \
	"$(mode "$MNT/top.byu") $(owner "$MNT/top.byu")"

times() { stat -c '%y|%Y' "$1"; }
check_eq "readme.txt mtime mirrors the source (ns)" "$(times "$SRC/readme.txt")" \
	"$(times "$MNT/readme.txt")"
check_eq "folder a/b mtime mirrors the source" "$(times "$SRC/a/b")" "$(times "$MNT/a/b")"
check_eq "trace folder top.byu mtime mirrors the file" "$(times "$SRC/top.byu")" \
	"$(times "$MNT/top.byu")"
for v in raw dump.txt class/i_fetch.txt convert/top.din; do
	check_eq "view top.byu/$v mtime mirrors the file" "$(times "$SRC/top.byu")" \
		"$(times "$MNT/top.byu/$v")"
done
check_eq "view perm/secret.byu/stats.json mtime mirrors the file" \
	"$(times "$SRC/perm/secret.byu")" "$(times "$MNT/perm/secret.byu/stats.json")"
check_eq "symbolic link mtime mirrors the link" "$(times "$SRC/link_to_trace")" \
	"$(times "$MNT/link_to_trace")"
check_eq "stamped.txt atime mirrors the source (never read)" "$(stat -c %X "$SRC/stamped.txt")" \
	"$(stat -c %X "$MNT/stamped.txt")"
check_eq "stamped.txt mtime mirrors the source" "$(times "$SRC/stamped.txt")" \
	"$(times "$MNT/stamped.txt")"

# ---------------------------------------------------------------------------------------
# statfs: works, and says read-only.
check "df works on the mount" df "$MNT" >/dev/null
check "stat -f works on the mount" stat -f "$MNT" >/dev/null
expect RO "statvfs reports ST_RDONLY" statvfs_ro "$MNT"
run_expected
check "findmnt options contain ro" grep -qE '(^|,)ro(,|$)' <<<"$(findmnt -no OPTIONS "$MNT")"
check_eq "filesystem type is fuse.tracemount" fuse.tracemount "$(findmnt -no FSTYPE "$MNT")"

# ---------------------------------------------------------------------------------------
# allow_other + default_permissions: another user sees exactly what the source lets it see.
unmount_tm
mount_tm "$SRC" -o allow_other
chmod 0711 "$TM_TMP" # mktemp made it 0700: let nobody reach the mount point
MNT=$TM_MNT
as_nobody() {
	setpriv --reuid="$NOBODY_UID" --regid="$NOGROUP_GID" --clear-groups "$@"
}
check "nobody reads its own 0640 trace's dump.txt" cmp -s \
	<(as_nobody cat "$MNT/perm/secret.byu/dump.txt") "$TM_TMP/secret.byu.ref"
check "nobody reads its own 0640 plain file" cmp -s <(as_nobody cat "$MNT/perm/private.txt") \
	"$SRC/perm/private.txt"
check "nobody lists its own trace folder" as_nobody ls "$MNT/perm/secret.byu/class" >/dev/null
check "nobody reads a world-readable view" cmp -s <(as_nobody cat "$MNT/top.byu/raw") \
	"$SRC/top.byu"
check "nobody cannot read a root 0600 plain file" \
	test "$(as_nobody cat "$MNT/perm/rootonly.txt" 2>&1 | grep -c 'Permission denied')" = 1
check "nobody cannot enter a root 0600 trace's folder" \
	test "$(as_nobody ls "$MNT/perm/rootonly.byu" 2>&1 | grep -c 'Permission denied')" = 1
check "nobody cannot read a root 0600 trace's view" \
	test "$(as_nobody cat "$MNT/perm/rootonly.byu/raw" 2>&1 | grep -c 'Permission denied')" = 1
check "nobody cannot enter a 0750 root folder" \
	test "$(as_nobody ls "$MNT/a/b" 2>&1 | grep -c 'Permission denied')" = 1
check "nobody can open other.byu (0604, other-readable) views" cmp -s \
	<(as_nobody cat "$MNT/perm/other.byu/raw") "$SRC/perm/other.byu"

# ---------------------------------------------------------------------------------------
# Two independent mounts of one SOURCE at the same time.
MNT1=$TM_MNT
PID1=$TM_DAEMON_PID
cp "$TM_TMP/daemon.log" "$TM_TMP/daemon1.log" 2>/dev/null
extra_cleanup() {
	if [ -n "${MNT1:-}" ] && mountpoint -q "$MNT1" 2>/dev/null; then
		fusermount3 -u "$MNT1" 2>/dev/null || fusermount3 -uz "$MNT1" 2>/dev/null
	fi
	[ -n "${PID1:-}" ] && kill "$PID1" 2>/dev/null
	tm_cleanup
}
trap extra_cleanup EXIT
mount_tm "$SRC"
MNT2=$TM_MNT
check "both mounts are mounted" mountpoint -q "$MNT1"
check "second mount is mounted" mountpoint -q "$MNT2"
check "second mount serves top.byu/dump.txt" cmp -s "$MNT2/top.byu/dump.txt" \
	"$TM_TMP/top.byu.ref"
check "first mount serves deep.byu/dump.txt meanwhile" cmp -s "$MNT1/a/b/c/deep.byu/dump.txt" \
	"$TM_TMP/deep.byu.ref"
check "the mounts read the same bytes concurrently" cmp -s \
	<(cat "$MNT1/top.byu/class/i_fetch.txt") <(cat "$MNT2/top.byu/class/i_fetch.txt")
check_eq "second mount's status lists only what it entered" "top.byu" \
	"$(grep -v '^#' "$MNT2/.tracemount/status" | tail -n +2 | cut -f1 | tr '\n' ' ' | sed 's/ $//')"
unmount_tm
check "first mount still works after the second is unmounted" cmp -s "$MNT1/top.byu/raw" \
	"$SRC/top.byu"
TM_MNT=$MNT1
TM_DAEMON_PID=$PID1
MNT1=
PID1=
unmount_tm

# A folder of 11 traces: the status counts all 11 once a listing has shown them, before any is
# entered, and still 11 after ls -R has entered every one.
ELEVEN=$TM_TMP/eleven
mkdir -p "$ELEVEN"
for i in $(seq 1 8); do "$GEN_BYU" -n 100 -s "$i" >"$ELEVEN/t$i.byu"; done
for i in 9 10 11; do "$GEN_TT6" --format tt6 --records 100 --seed "$i" >"$ELEVEN/t$i.tt6"; done
mount_tm "$ELEVEN"
ls "$TM_MNT" >/dev/null
check "eleven traces listed: the status says 11 traces" \
	grep -q '^# 11 traces;' "$TM_MNT/.tracemount/status"
check_eq "eleven traces listed: one line each, by path" \
	"$(cd "$ELEVEN" && LC_ALL=C ls)" \
	"$(grep -v '^#' "$TM_MNT/.tracemount/status" | tail -n +2 | cut -f1)"
ls -R "$TM_MNT" >/dev/null
check "eleven traces after ls -R: still 11" grep -q '^# 11 traces;' "$TM_MNT/.tracemount/status"
check_eq "eleven traces after ls -R: each with its format" \
	"byu byu byu byu byu byu byu byu tt6 tt6 tt6" \
	"$(grep -v '^#' "$TM_MNT/.tracemount/status" | tail -n +2 | sort -t t -k2 -n | cut -f2 |
		paste -sd' ')"
unmount_tm

# A folder listed in many replies (the kernel asks from the offset its buffer ended at): 3000
# entries of long names, every one once, in each of three readers of the folder at once, and
# twice over one handle (rewinddir).
BIGDIR=$TM_TMP/bigdir
mkdir -p "$BIGDIR/many"
for i in $(seq 1 3000); do
	: >"$BIGDIR/many/plain-file-with-a-long-name-to-fill-the-buffers-$i.txt"
done
mount_tm "$BIGDIR"
pids=()
for i in 1 2 3; do
	ls -f "$TM_MNT/many" >"$TM_TMP/many.$i" &
	pids+=($!)
done
wait "${pids[@]}" # not the daemon, a job of this shell too
for i in 1 2 3; do
	check_eq "a folder of 3000 entries, reader $i: each listed once" 		"$(ls -f "$BIGDIR/many" | LC_ALL=C sort)" "$(LC_ALL=C sort "$TM_TMP/many.$i")"
done
check_eq "a folder of 3000 entries: listed twice over one handle (rewinddir)" "6004 3002" \
	"$($PY -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
names = []
for _ in range(2):
    os.lseek(fd, 0, os.SEEK_SET)
    with os.scandir(fd) as it:
        names += [e.name for e in it]
print(len(names) + 4, len(set(names)) + 2)' "$TM_MNT/many")"
unmount_tm

finish
