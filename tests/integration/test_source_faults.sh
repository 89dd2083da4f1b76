#!/bin/bash
# Faults of the source and of the cache folder (cut short, rewritten and replaced while
# mounted are test_source_change.sh's):
# - a trace deleted while a view is open: the open view reads its old bytes to the end, a new
#   lookup finds nothing;
# - an unreadable trace (mode 000, a daemon without CAP_DAC_OVERRIDE): its views fail with
#   EACCES, and read once it is readable again;
# - I/O errors (tests/tools/failfs, a FUSE source that fails reads past a byte while a switch
#   file exists): during the index pass every view fails with EIO, a read of a chunk past the
#   fault fails with EIO once indexed; logged; once the fault heals the same reads give the
#   right bytes, and no index file is written from a failed pass; .tracemount/report.html
#   shows the failed build;
# - the cache folder full (a 64 KiB tmpfs) or read-only: every view still reads right, the
#   write failure is logged, no partial index file is left, and what was written loads later.
# Throughout, the other traces read right and the daemon stays up.
. "$(dirname "$0")/lib.sh"

# read_err FILE [dd options...]: reads FILE with dd; prints "ok" or dd's error's reason.
read_err() {
	local f=$1 out
	shift
	if out=$(dd if="$f" of=/dev/null bs=65536 status=none "$@" 2>&1); then
		echo ok
	else
		sed 's/.*: //' <<<"$out" | head -n 1
	fi
}

# ref TRACE OUT: the reference decoder's dump.txt of the BYU trace TRACE.
ref() { "$BYU_REFDEC" <"$1" >"$2"; }

SRC=$TM_TMP/src
mkdir -p "$SRC"
"$GEN_BYU" -n 200000 -s 1 >"$SRC/deleted.byu"
"$GEN_BYU" -n 20000 -s 2 >"$SRC/locked.byu"
"$GEN_BYU" -n 20000 -s 3 >"$SRC/steady.byu"
for t in deleted locked steady; do ref "$SRC/$t.byu" "$TM_TMP/$t.ref"; done
chmod 000 "$SRC/locked.byu"

# --- deleted while read; unreadable (the daemon without the capabilities that override
# permissions, as a user's daemon would run) ---
TM_DAEMON_WRAP="setpriv --inh-caps=-all --bounding-set=-dac_override,-dac_read_search" \
	mount_tm "$SRC" -o cache=none,memory=1M

exec 3<"$TM_MNT/deleted.byu/dump.txt"
dd bs=1000 count=1 status=none <&3 >/dev/null
rm "$SRC/deleted.byu"
cat <&3 >"$TM_TMP/deleted.rest"
check_eq "deleted while open: the open view reads on to the end" 0 "$?"
exec 3<&-
check "deleted while open: with the old bytes" cmp -s "$TM_TMP/deleted.rest" \
	<(tail -c +1001 "$TM_TMP/deleted.ref")
sleep 1.1
check_eq "deleted: a new lookup finds nothing" "No such file or directory" \
	"$(read_err "$TM_MNT/deleted.byu/dump.txt")"
check "deleted: gone from the listing" test -z "$(ls "$TM_MNT" | grep deleted)"

check_eq "unreadable: dump.txt fails with EACCES" "Permission denied" \
	"$(read_err "$TM_MNT/locked.byu/dump.txt")"
check_eq "unreadable: stats.json fails with EACCES" "Permission denied" \
	"$(read_err "$TM_MNT/locked.byu/stats.json")"
check_eq "unreadable: raw fails with EACCES" "Permission denied" \
	"$(read_err "$TM_MNT/locked.byu/raw")"
check "steady.byu reads right beside it" cmp -s "$TM_MNT/steady.byu/dump.txt" "$TM_TMP/steady.ref"
chmod 644 "$SRC/locked.byu"
sleep 1.1
check "readable again: dump.txt reads right" cmp -s "$TM_MNT/locked.byu/dump.txt" \
	"$TM_TMP/locked.ref"
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm

# --- I/O errors ---
RAW=$TM_TMP/raw
FAILING=$TM_TMP/failing
SWITCH=$TM_TMP/fault
mkdir -p "$RAW" "$FAILING"
# 100000 records, 600,000 bytes: reads reaching byte 300,000 fail while $SWITCH exists.
"$GEN_BYU" -n 100000 -s 4 >"$RAW/eio-300000-faulty.byu"
"$GEN_BYU" -n 20000 -s 5 >"$RAW/sound.byu"
ref "$RAW/eio-300000-faulty.byu" "$TM_TMP/faulty.ref"
ref "$RAW/sound.byu" "$TM_TMP/sound.ref"
"$FAILFS" "$RAW" "$SWITCH" "$FAILING" 2>"$TM_TMP/failfs.log" &
FAILFS_PID=$!
for _ in $(seq 1 100); do mountpoint -q "$FAILING" && break; sleep 0.05; done
check "failfs is mounted" mountpoint -q "$FAILING"
trap 'fusermount3 -u "$FAILING" 2>/dev/null; tm_cleanup' EXIT

mount_tm "$FAILING" -o cache="$TM_TMP/indexes",memory=1M
T=$TM_MNT/eio-300000-faulty.byu
touch "$SWITCH"
check_eq "I/O error in the index pass: dump.txt fails with EIO" "Input/output error" \
	"$(read_err "$T/dump.txt")"
check_eq "I/O error in the index pass: stats.json fails with EIO" "Input/output error" \
	"$(read_err "$T/stats.json")"
check "it is logged" grep -q "eio-300000-faulty.byu: indexing failed: Input/output error" \
	"$TM_TMP/daemon.log"
check "sound.byu reads right beside it" cmp -s "$TM_MNT/sound.byu/dump.txt" "$TM_TMP/sound.ref"
"$PY" "$(dirname "$0")/root_report.py" rows "$TM_MNT/.tracemount/report.html" \
	>"$TM_TMP/report.rows"
check_eq "the root report shows the failed build, and sound.byu indexed" \
	"eio-300000-faulty.byu failed: Input/output error,sound.byu indexed," \
	"$(awk -F'\t' '{ printf "%s %s,", $2, $7 }' "$TM_TMP/report.rows")"
check_eq "no index file from the failed pass, one from sound.byu" 1 \
	"$(ls "$TM_TMP/indexes" | wc -l)"

rm "$SWITCH"
check "healed: the index is built again, dump.txt reads right" cmp -s "$T/dump.txt" \
	"$TM_TMP/faulty.ref"
check_eq "healed: its index file is written" 2 "$(ls "$TM_TMP/indexes" | wc -l)"

# A fresh mount finds the index file (the fault is off while it is read), and has decoded
# nothing: reads bypassing the page cache reach the source.
unmount_tm
mount_tm "$FAILING" -o cache="$TM_TMP/indexes",memory=1M
T=$TM_MNT/eio-300000-faulty.byu
stat "$T/dump.txt" >/dev/null
check_eq "remounted: its index read from its file" \
	"0 built, 1 read from index files, 0 index files refused" "$(index_counts "$TM_MNT")"
lines=$(wc -l <"$TM_TMP/faulty.ref")
far=$(head -n $((lines * 3 / 4)) "$TM_TMP/faulty.ref" | wc -c) # record 75000, byte 450,000
touch "$SWITCH"
check_eq "I/O error in a read: the chunk past the fault fails with EIO" "Input/output error" \
	"$(read_err "$T/dump.txt" iflag=direct,skip_bytes skip=$((far / 4096 * 4096)) count=1)"
check_eq "I/O error in a read: raw past the fault fails with EIO" "Input/output error" \
	"$(read_err "$T/raw" iflag=direct,skip_bytes skip=450560 count=1)"
check_eq "a read before the fault still succeeds" ok "$(read_err "$T/dump.txt" iflag=direct count=1)"
check "the failed read is logged with its view and offset" grep -q \
	"eio-300000-faulty.byu/dump.txt: read at offset $((far / 4096 * 4096)): Input/output error" \
	"$TM_TMP/daemon.log"
rm "$SWITCH"
check "healed: the chunk that failed reads right" dd_same "$T/dump.txt" "$TM_TMP/faulty.ref" \
	$((far / 4096 * 4096)) 65536
check "healed: all of dump.txt reads right" cmp -s "$T/dump.txt" "$TM_TMP/faulty.ref"
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm
fusermount3 -u "$FAILING"
wait "$FAILFS_PID"

# --- the cache folder full, then read-only ---
BIG=$TM_TMP/big
mkdir -p "$BIG"
for s in 1 2 3 4 5 6; do
	"$GEN_BYU" -n 1000000 -s "$s" >"$BIG/t$s.byu"
done
# room for about three index files of these traces, whatever an index file's size
"$TRACEMOUNT" index --cache "$TM_TMP/probe-cache" "$BIG/t1.byu" >/dev/null 2>&1
one=$(stat -c %s "$TM_TMP"/probe-cache/*.tmi)
CACHE=$TM_TMP/small-cache
mkdir -p "$CACHE"
mount -t tmpfs -o size=$(((3 * one + 4095) / 4096 * 4096 + 4096)) tracemount-test "$CACHE" ||
	fail "mount a tmpfs"
trap 'umount "$CACHE" 2>/dev/null; tm_cleanup' EXIT
mount_tm "$BIG" -o cache="$CACHE"
for s in 1 2 3 4 5 6; do
	check "cache full: t$s.byu stats.json = tracemount cat's" cmp -s "$TM_MNT/t$s.byu/stats.json" \
		<(cd "$BIG" && "$TRACEMOUNT" cat "t$s.byu" stats.json)
done
check "cache full: t6.byu dump.txt reads right" cmp -s "$TM_MNT/t6.byu/dump.txt" \
	<("$BYU_REFDEC" <"$BIG/t6.byu")
check "cache full: the write failure is logged" grep -q \
	"cannot write its index file in $CACHE: No space left on device" "$TM_TMP/daemon.log"
check_eq "cache full: no partial file is left" "" "$(ls -A "$CACHE" | grep '^\.')"
written=$(ls "$CACHE" | wc -l)
check "cache full: some index files were written ($written)" test "$written" -ge 1 -a "$written" -lt 6
unmount_tm

mount -o remount,ro "$CACHE" || fail "remount the tmpfs read-only"
mount_tm "$BIG" -o cache="$CACHE"
for s in 1 2 3 4 5 6; do
	check "cache read-only: t$s.byu stats.json = tracemount cat's" cmp -s \
		"$TM_MNT/t$s.byu/stats.json" <(cd "$BIG" && "$TRACEMOUNT" cat "t$s.byu" stats.json)
done
check_eq "cache read-only: the files written before load, the rest are built" \
	"$((6 - written)) built, $written read from index files, 0 index files refused" \
	"$(index_counts "$TM_MNT")"
check "cache read-only: the write failure is logged" grep -q \
	"cannot write its index file in $CACHE: Read-only file system" "$TM_TMP/daemon.log"
unmount_tm
umount "$CACHE"
finish
