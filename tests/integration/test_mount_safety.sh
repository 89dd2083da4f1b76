#!/bin/bash
# Mounting safely (issue 20): mount points that would hang, hide files or stack are refused
# with exit 1 and a message; usage errors exit 2 and point at --help; a daemon that dies takes
# its mount with it, and a dead mount left behind is named with the command that clears it;
# every mount is nosuid and nodev and shows no set-ID or sticky bits; a default cache folder
# that cannot be made leaves indexes in memory with a warning; .tracemount/status says what
# -o prefetch has done.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
mkdir -p "$SRC/inner" "$SRC/sub/deeper"
"$GEN_BYU" -n 3000 -s 1 >"$SRC/a.byu"
"$GEN_BYU" -n 3000 -s 2 >"$SRC/sub/b.byu"
"$BYU_REFDEC" <"$SRC/a.byu" >"$TM_TMP/a.ref"

# run_text ARGS...: run_tm (lib.sh), with OUT the text of standard output.
run_text() {
	run_tm "$@"
	OUT=$(cat "$OUT")
}

# fuse_abort MOUNTPOINT: frees a tracemount mount whatever its daemon does, through the fuse
# control filesystem's abort file, then detaches it.
fuse_abort() {
	local dev
	dev=$(awk -v mp="$1" '$5 == mp { split($3, d, ":"); print d[2] }' /proc/self/mountinfo |
		tail -1)
	[ -d /sys/fs/fuse/connections/"$dev" ] ||
		mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null
	[ -n "$dev" ] && echo 1 >/sys/fs/fuse/connections/"$dev"/abort 2>/dev/null
	umount -l "$1" 2>/dev/null
}

# mounts_at PATH: how many mounts there are at PATH.
mounts_at() {
	awk -v mp="$(realpath -m "$1")" '$5 == mp' /proc/self/mountinfo | wc -l
}

# refused WHAT STATUS WORD ARGS...: a mount that must fail with STATUS and a message holding
# WORD, leaving nothing mounted at its last argument.
refused() {
	local what=$1 status=$2 word=$3 mp=${*: -1}
	shift 3
	local before
	before=$(mounts_at "$mp")
	run_text "$@"
	check_eq "$what: exit status" "$status" "$RC"
	check "$what: message says '$word' ($ERR)" grep -qF -- "$word" <<<"$ERR"
	if [ "$RC" = 0 ] || [ "$(mounts_at "$mp")" != "$before" ]; then
		fail "$what: mounted"
		fuse_abort "$(realpath -m "$mp")"
	fi
}

# gone MOUNTPOINT: waits up to 30 s for nothing to be mounted there (a killed daemon under a
# sanitizer, on a loaded machine, takes seconds to exit).
gone() {
	local i
	for i in $(seq 1 300); do
		grep -q " $1 " /proc/self/mountinfo || return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------------------------------
# A mount point inside SOURCE would make the daemon wait on its own mount forever.
refused "mount point inside SOURCE" 1 "inside" -o cache=none "$SRC" "$SRC/inner"
refused "mount point deeper inside SOURCE" 1 "inside" -o cache=none "$SRC" "$SRC/sub/deeper"
refused "inside SOURCE, even with -o nonempty" 1 "inside" -o cache=none,nonempty "$SRC" "$SRC/sub"
ln -s "$SRC" "$TM_TMP/srclink"
refused "inside SOURCE through a link to SOURCE" 1 "inside" -o cache=none "$TM_TMP/srclink" \
	"$SRC/inner"
refused "inside SOURCE through a link to the mount point's folder" 1 "inside" -o cache=none \
	"$SRC" "$TM_TMP/srclink/inner"
mkdir -p "$TM_TMP/bind"
if mount --bind "$SRC" "$TM_TMP/bind" 2>/dev/null; then
	refused "inside SOURCE through a bind mount" 1 "inside" -o cache=none "$SRC" \
		"$TM_TMP/bind/inner"
	umount "$TM_TMP/bind"
else
	skip_part no-mounts "bind mounts not allowed here"
fi

# Over SOURCE itself: the traces show decoded in their own folder.
"$TRACEMOUNT" -f -o cache=none "$SRC" "$SRC" 2>"$TM_TMP/over.log" &
TM_DAEMON_PID=$!
for i in $(seq 1 100); do mountpoint -q "$SRC" && break; sleep 0.05; done
check "over SOURCE itself: mounted" mountpoint -q "$SRC"
check "over SOURCE itself: a.byu is a folder of views" test -d "$SRC/a.byu"
check "over SOURCE itself: dump.txt as the reference decoder" cmp -s "$SRC/a.byu/dump.txt" \
	"$TM_TMP/a.ref"
check "over SOURCE itself: sub/b.byu is a folder of views" test -f "$SRC/sub/b.byu/raw"
fusermount3 -u "$SRC"
wait_daemon 10
check_eq "over SOURCE itself: daemon exits cleanly" 0 "$?"
TM_DAEMON_PID=

# ---------------------------------------------------------------------------------------
# A mount point outside SOURCE can still show up inside it: here a shared tmpfs holds the
# mount point and is bind-mounted below SOURCE, so the mount propagates there. No check before
# mounting can see that; the daemon must never enter its own mount while it looks up, lists
# or walks SOURCE (-o prefetch), or it waits on itself for ever.
PSRC=$TM_TMP/psrc PROP=$TM_TMP/prop
mkdir -p "$PSRC/x" "$PROP"
cp "$SRC/a.byu" "$PSRC/"
if mount -t tmpfs tmpfs "$PROP" 2>/dev/null && mount --make-shared "$PROP" &&
	mkdir "$PROP/mnt" && mount --bind "$PROP" "$PSRC/x"; then
	"$TRACEMOUNT" -f -o cache=none,prefetch "$PSRC" "$PROP/mnt" 2>"$TM_TMP/prop.log" &
	TM_DAEMON_PID=$!
	for i in $(seq 1 100); do mountpoint -q "$PROP/mnt" && break; sleep 0.05; done
	check "propagated: the mount shows again below SOURCE (else this part checks nothing)" \
		mountpoint -q "$PSRC/x/mnt"
	# find in the background: a process waiting on a hung FUSE request ignores signals, so
	# the abort file frees it when it is still running after 20 s
	find "$PROP/mnt" >"$TM_TMP/prop.find" 2>&1 &
	FIND_PID=$!
	for i in $(seq 1 200); do kill -0 $FIND_PID 2>/dev/null || break; sleep 0.1; done
	if kill -0 $FIND_PID 2>/dev/null; then
		fail "propagated: find of the mount still running after 20 s (the daemon waits on itself)"
		fuse_abort "$PROP/mnt"
	fi
	wait $FIND_PID
	check_eq "propagated: find ends without error" 0 "$?"
	check "propagated: find sees the trace's views" grep -qx "$PROP/mnt/a.byu/dump.txt" \
		"$TM_TMP/prop.find"
	check_eq "propagated: the folder holding the mount lists empty" "" "$(ls -A "$PROP/mnt/x")"
	check "propagated: the mount itself is not there" test ! -e "$PROP/mnt/x/mnt"
	check "propagated: nor looked up deeper" test ! -e "$PROP/mnt/x/mnt/a.byu/raw"
	status=
	for i in $(seq 1 100); do
		status=$(cat "$PROP/mnt/.tracemount/status")
		grep -q 'prefetch: .*done' <<<"$status" && break
		sleep 0.1
	done
	check "propagated: -o prefetch's walk ends ($status)" \
		grep -q '^# prefetch: 1 of 1 traces, done' <<<"$status"
	fusermount3 -u "$PROP/mnt" || fuse_abort "$PROP/mnt"
	wait_daemon 10
	check_eq "propagated: daemon exits cleanly" 0 "$?"
	TM_DAEMON_PID=
else
	skip_part no-mounts "tmpfs, shared or bind mounts not allowed here: mount propagation not tried"
fi
umount -R "$PSRC/x" 2>/dev/null
umount -R "$PROP" 2>/dev/null

# ---------------------------------------------------------------------------------------
# Mount points that are not empty folders.
touch "$TM_TMP/file"
refused "a regular file as mount point" 1 "not a folder" -o cache=none "$SRC" "$TM_TMP/file"
mkdir -p "$TM_TMP/full"
echo keep >"$TM_TMP/full/mine.txt"
refused "a mount point with files" 1 "not empty" -o cache=none "$SRC" "$TM_TMP/full"
"$TRACEMOUNT" -f -o cache=none -o nonempty "$SRC" "$TM_TMP/full" 2>"$TM_TMP/full.log" &
TM_DAEMON_PID=$!
for i in $(seq 1 100); do mountpoint -q "$TM_TMP/full" && break; sleep 0.05; done
check "-o nonempty: mounts over files" test -d "$TM_TMP/full/a.byu"
check "-o nonempty: the files under it are hidden while mounted" test ! -e "$TM_TMP/full/mine.txt"
fusermount3 -u "$TM_TMP/full"
wait_daemon 10
TM_DAEMON_PID=
check_eq "-o nonempty: the files are there after the unmount" keep "$(cat "$TM_TMP/full/mine.txt")"

# A second mount on the same point.
mount_tm "$SRC" -o cache=none
refused "a mount point that is mounted already" 1 "already a mount point" -o cache=none \
	"$SRC" "$TM_MNT"
check "the first mount still serves" cmp -s "$TM_MNT/a.byu/dump.txt" "$TM_TMP/a.ref"
# unless asked: -o nonempty stacks a second mount over the first
mkdir -p "$TM_TMP/src2"
"$GEN_BYU" -n 100 -s 3 >"$TM_TMP/src2/c.byu"
"$TRACEMOUNT" -f -o cache=none,nonempty "$TM_TMP/src2" "$TM_MNT" 2>"$TM_TMP/stack.log" &
STACK_PID=$!
for i in $(seq 1 100); do [ "$(mounts_at "$TM_MNT")" = 2 ] && break; sleep 0.05; done
check_eq "-o nonempty over a mount: two mounts there" 2 "$(mounts_at "$TM_MNT")"
check "-o nonempty over a mount: the second one shows" test -d "$TM_MNT/c.byu"
fusermount3 -u "$TM_MNT"
wait $STACK_PID
check_eq "-o nonempty over a mount: the second daemon exits cleanly" 0 "$?"
check "-o nonempty over a mount: the first one shows again" cmp -s "$TM_MNT/a.byu/dump.txt" \
	"$TM_TMP/a.ref"

# ---------------------------------------------------------------------------------------
# Safe by default: nosuid and nodev, whatever is asked, and no set-ID or sticky bits shown.
opts=$(awk -v mp="$TM_MNT" '$5 == mp { print $6 }' /proc/self/mountinfo)
check "mounted nosuid ($opts)" grep -qw nosuid <<<"${opts//,/ }"
check "mounted nodev ($opts)" grep -qw nodev <<<"${opts//,/ }"
unmount_tm
mkdir -p "$TM_TMP/ids/sticky" "$TM_TMP/ids/setgid"
"$GEN_BYU" -n 100 -s 5 >"$TM_TMP/ids/setuid.byu"
printf '#!/bin/sh\necho hi\n' >"$TM_TMP/ids/prog"
chmod 4755 "$TM_TMP/ids/setuid.byu" "$TM_TMP/ids/prog"
chmod 1777 "$TM_TMP/ids/sticky"
chmod 2755 "$TM_TMP/ids/setgid"
mount_tm "$TM_TMP/ids" -o cache=none -o suid,dev
opts=$(awk -v mp="$TM_MNT" '$5 == mp { print $6 }' /proc/self/mountinfo)
check "-o suid,dev: still nosuid,nodev ($opts)" grep -q 'nosuid.*nodev\|nodev.*nosuid' <<<"$opts"
check_eq "a 4755 file shows without its set-user-ID bit" 555 "$(stat -c %a "$TM_MNT/prog")"
check_eq "a 1777 folder shows without its sticky bit" 555 "$(stat -c %a "$TM_MNT/sticky")"
check_eq "a 2755 folder shows without its set-group-ID bit" 555 "$(stat -c %a "$TM_MNT/setgid")"
check_eq "a 4755 trace's views show 444" 444 "$(stat -c %a "$TM_MNT/setuid.byu/raw")"
check_eq "a 4755 trace's folder shows 555" 555 "$(stat -c %a "$TM_MNT/setuid.byu")"
exec 7<"$TM_MNT/prog"
check_eq "an open file's attributes show no set-ID bit" 555 "$(stat -L -c %a /proc/self/fd/7)"
exec 7<&-
unmount_tm
if command -v mount.fuse3 >/dev/null; then
	mkdir -p "$TM_TMP/viafstab"
	# as mount(8) runs it for an fstab line of type fuse.tracemount, with tracemount on PATH
	if PATH=$(dirname "$TRACEMOUNT"):$PATH timeout 20 mount.fuse3 "$TM_TMP/ids" \
		"$TM_TMP/viafstab" -t fuse.tracemount -o cache=none,suid,dev 2>"$TM_TMP/fstab.err"; then
		opts=$(awk -v mp="$TM_TMP/viafstab" '$5 == mp { print $6 }' /proc/self/mountinfo)
		check "through mount.fuse3 with suid,dev: nosuid,nodev ($opts)" \
			grep -q 'nosuid.*nodev\|nodev.*nosuid' <<<"$opts"
		fusermount3 -u "$TM_TMP/viafstab"
	else
		fail "mount -t fuse.tracemount: $(cat "$TM_TMP/fstab.err")"
	fi
else
	skip_part tool:mount.fuse3 "mount.fuse3 not installed"
fi

# ---------------------------------------------------------------------------------------
# A daemon killed takes its mount with it (auto_unmount); a dead mount left behind (its
# watcher killed too) is named, with the command that clears it.
mount_tm "$SRC" -o cache=none
MP=$TM_MNT
kill -9 "$TM_DAEMON_PID"
wait "$TM_DAEMON_PID" 2>/dev/null
TM_DAEMON_PID=
# fusermount3's watcher unmounts only after checking, in a mount namespace of its own whose
# "/" it first marks private, that the mount is still there; where "/" is no mount point (a
# chroot) that mark fails with EINVAL, and the watcher leaves the mount. unshare makes the
# same call.
if unshare --mount true 2>"$TM_TMP/unshare.err"; then
	check "killed daemon: its mount goes away" gone "$MP"
else
	skip_part no-mounts "killed daemon: its mount goes away: fusermount3's auto_unmount watcher" \
		"cannot mark / private here ($(cat "$TM_TMP/unshare.err")): / is not a mount point"
	fusermount3 -u "$MP"
fi
mount_tm "$SRC" -o cache=none
MP=$TM_MNT
pkill -9 -f "fusermount3 .*-- $MP\$"
sleep 0.2
kill -9 "$TM_DAEMON_PID"
wait "$TM_DAEMON_PID" 2>/dev/null
TM_DAEMON_PID=
check "daemon and watcher killed: a dead mount is left" grep -q " $MP " /proc/self/mountinfo
refused "remount over a dead mount" 1 "fusermount3 -u $MP" -o cache=none "$SRC" "$MP"
check "the message says it is a tracemount that stopped" grep -qF "no longer running" \
	<<<"$ERR"
fusermount3 -u "$MP"
check "fusermount3 -u clears it" gone "$MP"
mount_tm "$SRC" -o cache=none
check "then the mount point takes a new mount" cmp -s "$TM_MNT/a.byu/dump.txt" "$TM_TMP/a.ref"
unmount_tm

# ---------------------------------------------------------------------------------------
# Usage errors: exit 2 and where to look.
mkdir -p "$TM_TMP/empty"
refused "an unknown -o option" 2 "see tracemount --help" -o nosuchopt "$SRC" "$TM_TMP/empty"
refused "a missing mount point" 1 "mount point $TM_TMP/none does not exist" "$SRC" "$TM_TMP/none"
run_text "$SRC"
check_eq "SOURCE without MOUNTPOINT: exit status" 2 "$RC"
check "SOURCE without MOUNTPOINT: says MOUNTPOINT is missing ($ERR)" \
	grep -q "MOUNTPOINT is missing" <<<"$ERR"
run_text help
check_eq "tracemount help: exit status" 0 "$RC"
check "tracemount help: the usage" grep -q "^usage: tracemount " <<<"$OUT"
check "tracemount help: libfuse's options behind --help-fuse" grep -q "tracemount --help-fuse" \
	<<<"$OUT"
run_text --help-fuse
check "tracemount --help-fuse: the FUSE options" grep -q "FUSE options" <<<"$OUT"
for c in cat ls index; do
	run_text help $c
	check_eq "tracemount help $c: exit status" 0 "$RC"
	check "tracemount help $c: the command's usage" grep -q "^usage: tracemount $c " <<<"$OUT"
	check_eq "tracemount help $c: as tracemount $c --help" "$OUT" "$("$TRACEMOUNT" $c --help)"
done
run_text help nosuchcommand
check_eq "tracemount help with an unknown command: exit status" 2 "$RC"
run_text --version
check "--version names libfuse, zlib, liblzma, zstd, json-c, Capstone and ISA-L if built with it" \
	grep -qE '^libfuse [0-9.]+, zlib [0-9.]+, liblzma [0-9.]+, zstd [0-9.]+, json-c [0-9.]+, Capstone [0-9.]+(, ISA-L [0-9.]+)?$' \
	<<<"$OUT"

# ---------------------------------------------------------------------------------------
# A default cache folder that cannot be made: a warning naming it, indexes in memory.
touch "$TM_TMP/notafolder"
(
	unset XDG_CACHE_HOME
	export HOME=$TM_TMP/notafolder/home
	mount_tm "$SRC"
	check "no default cache folder: mounted, views served" cmp -s "$TM_MNT/a.byu/dump.txt" \
		"$TM_TMP/a.ref"
	check "no default cache folder: one warning naming it" \
		grep -q "warning: .*$HOME/.cache/tracemount.*memory" "$TM_TMP/daemon.log"
	check_eq "no default cache folder: one warning" 1 "$(grep -c warning "$TM_TMP/daemon.log")"
	check "no default cache folder: the status says cache none" \
		grep -q "cache none$" "$TM_MNT/.tracemount/status"
	unmount_tm
	exit "$TM_FAILS"
)
TM_FAILS=$((TM_FAILS + $?))

(
	unset XDG_CACHE_HOME HOME
	mount_tm "$SRC"
	check "neither XDG_CACHE_HOME nor HOME: a warning" \
		grep -q "warning: no cache folder.*memory" "$TM_TMP/daemon.log"
	check "neither XDG_CACHE_HOME nor HOME: the status says cache none" \
		grep -q "cache none$" "$TM_MNT/.tracemount/status"
	unmount_tm
	exit "$TM_FAILS"
)
TM_FAILS=$((TM_FAILS + $?))

# ---------------------------------------------------------------------------------------
# .tracemount/status: the state of -o prefetch.
mount_tm "$SRC" -o cache=none
check_eq "without -o prefetch: the status says off" "# prefetch: off" \
	"$(grep '^# prefetch' "$TM_MNT/.tracemount/status")"
unmount_tm
# two spixcounts files of one program: their SUM.spixcounts is a trace too
mkdir -p "$SRC/bb"
$PY "$(dirname "$0")/spix_expect.py" write "$SRC/bb/run1.bb" be "4:1:0,8:2:0" --tsum 7
$PY "$(dirname "$0")/spix_expect.py" write "$SRC/bb/run2.bb" be "4:3:0,8:4:0" --tsum 7
mount_tm "$SRC" -o cache=none -o prefetch
for i in $(seq 1 200); do
	grep -q "done" <(grep '^# prefetch' "$TM_MNT/.tracemount/status") && break
	sleep 0.05
done
check_eq "-o prefetch: all traces done, the sum too" "# prefetch: 5 of 5 traces, done" \
	"$(grep '^# prefetch' "$TM_MNT/.tracemount/status")"
check "-o prefetch: the sum is indexed" grep -q "^bb/SUM.spixcounts	spixcounts	indexed" \
	"$TM_MNT/.tracemount/status"
check "-o prefetch: the status counts 5 traces" grep -q "^# 5 traces; indexes: 5 built" \
	"$TM_MNT/.tracemount/status"
check "-o prefetch: the log says how many and when done" grep -q "prefetch: done, 5 traces" \
	"$TM_TMP/daemon.log"
unmount_tm

finish
