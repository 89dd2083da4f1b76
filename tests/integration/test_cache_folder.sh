#!/bin/bash
# The cache folder as operators use it (issue 20), through real mounts with -o cache=DIR:
# - a folder whose parent is missing: the mount exits 1 naming both, and makes nothing; a
#   folder whose parent exists is made, 0700;
# - a FIFO at a trace's index file name (found with tracemount index --list): a read of the
#   trace's view does not hang, the FIFO is refused and replaced by the index file;
# - writers' temporary files an hour old are removed at mount, fresh ones kept;
# - the folder deleted (and made again, or not) while mounted: a trace first read after that
#   gets its index file there, and a folder made by the user keeps its mode;
# - -o cache= with an empty value is refused (exit 1) and leaves the current folder alone;
#   a folder of the user's given as cache= keeps its mode (issue 40);
# - the -f log says when an index pass starts and when it ends.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
mkdir -p "$SRC"
for t in a b c; do
	"$GEN_BYU" -n 20000 -s "$(printf '%d' "'$t")" >"$SRC/$t.byu"
done
SRC_REAL=$(realpath "$SRC")

# summary MNT: the status summary line.
summary() {
	grep -E '^# [0-9]+ traces?;' "$1/.tracemount/status"
}
# index_files DIR: the names of the index files in DIR, one a line.
index_files() {
	find "$1" -maxdepth 1 -name '*.tmi' -printf '%f\n' | LC_ALL=C sort
}

# A typo in the cache folder's parent: refused, nothing made.
mkdir -p "$TM_TMP/mnt-typo"
# shellcheck disable=SC2086 # TM_DAEMON_WRAP is words
timeout 60 ${TM_DAEMON_WRAP:-} "$TRACEMOUNT" -f -o cache="$TM_TMP/typo/cache" "$SRC" \
	"$TM_TMP/mnt-typo" 2>"$TM_TMP/typo.err"
status=$?
if mountpoint -q "$TM_TMP/mnt-typo"; then
	fusermount3 -u "$TM_TMP/mnt-typo"
fi
check_eq "cache folder with a missing parent: the mount exits 1" 1 "$status"
check "cache folder with a missing parent: the message names the folder and its parent" \
	grep -qF "cache folder $TM_TMP/typo/cache: $TM_TMP/typo does not exist (only the last folder of a cache path is created)" \
	"$TM_TMP/typo.err"
check "cache folder with a missing parent: nothing made" test ! -e "$TM_TMP/typo"

# -o cache= (empty) once took the current folder, chmod 0700, and wrote index files in it.
mkdir -m 0755 "$TM_TMP/cwd"
mkdir -p "$TM_TMP/mnt-empty"
# shellcheck disable=SC2086 # TM_DAEMON_WRAP is words
(cd "$TM_TMP/cwd" && timeout 60 ${TM_DAEMON_WRAP:-} "$TRACEMOUNT" -f -o cache= "$SRC" \
	"$TM_TMP/mnt-empty" 2>"$TM_TMP/empty.err")
status=$?
if mountpoint -q "$TM_TMP/mnt-empty"; then
	cat "$TM_TMP/mnt-empty/a.byu/dump.txt" >/dev/null
	fusermount3 -u "$TM_TMP/mnt-empty"
fi
check_eq "-o cache= (empty): the mount exits 1" 1 "$status"
check "-o cache= (empty): the message says the name is empty" \
	grep -qF "tracemount: -o cache: cache folder '': an empty name (name a folder, or none)" \
	"$TM_TMP/empty.err"
check_eq "-o cache= (empty): the current folder keeps its mode" 755 "$(stat -c %a "$TM_TMP/cwd")"
check_eq "-o cache= (empty): nothing written in the current folder" "" "$(ls -A "$TM_TMP/cwd")"
(cd "$TM_TMP/cwd" && "$TRACEMOUNT" cat --cache '' "$SRC/a.byu" raw >/dev/null 2>"$TM_TMP/e.err")
check_eq "cat --cache '' (empty): exit 1" 1 "$?"
check_eq "cat --cache '' (empty): the current folder keeps its mode" 755 \
	"$(stat -c %a "$TM_TMP/cwd")"

# A folder of the user's, group-readable, given as cache=: used, and its mode kept.
mkdir -m 0750 "$TM_TMP/shared-cache"
mount_tm "$SRC" -o cache="$TM_TMP/shared-cache"
cat "$TM_MNT/a.byu/dump.txt" >/dev/null
unmount_tm
check_eq "a folder given as cache= keeps its mode" 750 "$(stat -c %a "$TM_TMP/shared-cache")"
check_eq "a folder given as cache=: the index file is written" 1 \
	"$(index_files "$TM_TMP/shared-cache" | wc -l)"
check_eq "a folder given as cache=: the index file is private" 600 \
	"$(stat -c %a "$TM_TMP/shared-cache/"*.tmi)"

# The last folder alone is made, private; the first reading writes a.byu's index file, which
# tracemount index --list names.
CACHE=$TM_TMP/cache
mount_tm "$SRC" -o cache="$CACHE"
cat "$TM_MNT/a.byu/dump.txt" >"$TM_TMP/a.dump"
unmount_tm
check_eq "cache folder with its parent: made 0700" 700 "$(stat -c %a "$CACHE")"
check_eq "one index file written" 1 "$(index_files "$CACHE" | wc -l)"
"$TRACEMOUNT" index --list --cache "$CACHE" >"$TM_TMP/list.out" 2>"$TM_TMP/list.err"
name=$(grep -F " $SRC_REAL/a.byu" "$TM_TMP/list.out" | awk '{ print $1 }')
check_eq "index --list names a.byu's index file" "$(index_files "$CACHE")" "$name"

# A FIFO in its place, and writers' temporary files, one dead an hour ago, one fresh.
rm -f "$CACHE/$name"
mkfifo "$CACHE/$name"
STALE=.0123456789abcdef.tmi.99999.1f2e3d
FRESH=.0123456789abcdef.tmi.99998.4c5b6a
touch -d '-1 hour' "$CACHE/$STALE"
touch "$CACHE/$FRESH"
touch -d '-1 hour' "$CACHE/.keep"
mount_tm "$SRC" -o cache="$CACHE"
check "stale temporary file removed at mount" test ! -e "$CACHE/$STALE"
check "fresh temporary file kept" test -e "$CACHE/$FRESH"
check "other files kept" test -e "$CACHE/.keep"
timeout 30 cat "$TM_MNT/a.byu/dump.txt" >"$TM_TMP/a.fifo.dump"
check_eq "FIFO as the index file: the read does not hang" 0 "$?"
check "FIFO as the index file: the dump is whole" cmp -s "$TM_TMP/a.dump" "$TM_TMP/a.fifo.dump"
check "FIFO as the index file: refused as such" \
	grep -qF "a.byu: index file refused (not a regular file): indexing again" "$TM_TMP/daemon.log"
check "FIFO as the index file: counted as refused" \
	grep -q '1 built, 0 read from index files, 1 index files refused' <(summary "$TM_MNT")
check "FIFO as the index file: replaced by the index file" test -f "$CACHE/$name"

# The folder deleted and made again while mounted: b.byu, first read after, is stored there.
rm -rf "$CACHE"
mkdir -m 0755 "$CACHE"
cat "$TM_MNT/b.byu/dump.txt" >/dev/null
b_files=$(index_files "$CACHE")
check_eq "folder deleted and made again: the next index file lands in it" 1 \
	"$(printf '%s' "$b_files" | grep -c .)"
check_eq "folder deleted and made again (0755, by the user): keeps its mode" 755 \
	"$(stat -c %a "$CACHE")"
# Deleted and not made again: the mount makes it.
rm -rf "$CACHE"
cat "$TM_MNT/c.byu/dump.txt" >/dev/null
check_eq "folder deleted: made again for the next index file" 1 "$(index_files "$CACHE" | wc -l)"
check "the -f log: an index pass's start" \
	grep -qx "tracemount: b.byu: indexing, 120000 bytes" "$TM_TMP/daemon.log"
check "the -f log: an index pass's end" \
	grep -qE "^tracemount: b.byu: indexed in [0-9]+\.[0-9] s$" "$TM_TMP/daemon.log"
check "no index file write failed" test -z "$(grep 'cannot write' "$TM_TMP/daemon.log")"
unmount_tm
"$TRACEMOUNT" index --list --cache "$CACHE" >"$TM_TMP/list2.out" 2>/dev/null
check "index --list names c.byu's index file" grep -qF " $SRC_REAL/c.byu" "$TM_TMP/list2.out"

# A mount after that reads c.byu's file.
mount_tm "$SRC" -o cache="$CACHE"
cat "$TM_MNT/c.byu/dump.txt" >/dev/null
check "the file written in the remade folder is read by the next mount" \
	grep -q '0 built, 1 read from index files' <(summary "$TM_MNT")
check "nothing said of an index pass when none runs" \
	test -z "$(grep 'indexing' "$TM_TMP/daemon.log")"
unmount_tm

# A full cache folder, then a read-only one (a small tmpfs, filled, then remounted ro): the
# status says why index files are not written, the -f log says it once, not per trace, and
# once a file is written again both say so.
SMALL=$TM_TMP/small
mkdir -p "$SMALL"
if mount -t tmpfs -o size=64k,mode=0700 tmpfs "$SMALL" 2>"$TM_TMP/tmpfs.err"; then
	head -c 1M /dev/zero >"$SMALL/fill" 2>/dev/null # fills it
	mount_tm "$SRC" -o cache="$SMALL"
	cat "$TM_MNT"/a.byu/dump.txt "$TM_MNT"/b.byu/dump.txt "$TM_MNT"/c.byu/dump.txt >/dev/null
	check "a full cache folder: the status says why index files are not written" grep -qxF \
		"# index files not written in $SMALL: No space left on device (3 indexes in memory only)" \
		"$TM_MNT/.tracemount/status"
	check_eq "a full cache folder: the -f log says it once, not per trace" 1 \
		"$(grep -c 'cannot write its index file' "$TM_TMP/daemon.log")"
	unmount_tm
	rm -f "$SMALL/fill"
	mount -o remount,ro "$SMALL"
	mount_tm "$SRC" -o cache="$SMALL"
	cat "$TM_MNT"/a.byu/dump.txt "$TM_MNT"/b.byu/dump.txt >/dev/null
	check "a read-only cache folder: the status says why" grep -qxF \
		"# index files not written in $SMALL: Read-only file system (2 indexes in memory only)" \
		"$TM_MNT/.tracemount/status"
	check_eq "a read-only cache folder: the -f log says it once" 1 \
		"$(grep -c 'cannot write its index file' "$TM_TMP/daemon.log")"
	mount -o remount,rw "$SMALL"
	cat "$TM_MNT/c.byu/dump.txt" >/dev/null
	check "written again: the -f log says so" \
		grep -qxF "tracemount: index files are written in $SMALL again" "$TM_TMP/daemon.log"
	sleep 1.1 # the status's size, cached for attr_timeout
	check "written again: the status no longer says they are not" \
		test -z "$(grep 'not written' "$TM_MNT/.tracemount/status")"
	unmount_tm
	umount "$SMALL"
else
	skip_part no-mounts "a full or read-only cache folder: cannot mount a tmpfs: $(cat "$TM_TMP/tmpfs.err")"
fi
finish
