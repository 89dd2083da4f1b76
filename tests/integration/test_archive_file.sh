#!/bin/bash
# An archive's member table kept in the cache folder (HASH.tma, doc/formats.md "tar archives")
# is checked when read back: one byte of its body flipped (the first letter of a member's
# name) and the remount refuses the file, reads the archive again, and shows the members by
# their names in the archive (tar -t's), with their bytes.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
CACHE=$TM_TMP/cache
mkdir -p "$SRC/arc" "$CACHE"
printf 'the member whose name is flipped\n' >"$SRC/arc/abcdefgh.txt"
"$GEN_BYU" -n 300 -s 1 >"$SRC/arc/trace1.byu"
tar -C "$SRC/arc" -cf "$SRC/a.tar" abcdefgh.txt trace1.byu
want=$(tar -tf "$SRC/a.tar" | LC_ALL=C sort | paste -sd' ')

mount_tm "$SRC" -o cache="$CACHE"
check_eq "a.tar lists tar -t's members" "$want" "$(ls "$TM_MNT/a.tar" | LC_ALL=C sort | paste -sd' ')"
unmount_tm
tma=$(find "$CACHE" -maxdepth 1 -name '*.tma')
check_eq "one .tma in the cache folder" 1 "$(printf '%s\n' "$tma" | grep -c '\.tma$')"
# the name's offset, past the header (header_size: the 32-bit word after the magic and version)
at=$(grep -obUa 'abcdefgh' "$tma" | head -n 1 | cut -d: -f1)
header=$(od -An -tu4 -j 12 -N 4 "$tma" | tr -d ' ')
check "the member's name is in the .tma's body (at ${at:-none}, header $header bytes)" \
	test -n "$at" -a "${at:-0}" -ge "${header:-0}" -a "${header:-0}" -gt 0
printf 'X' | dd of="$tma" bs=1 seek="${at:-0}" conv=notrunc status=none
check "the flipped byte is in the file" grep -qa 'Xbcdefgh' "$tma"

mount_tm "$SRC" -o cache="$CACHE"
check_eq "after the flip: a.tar still lists tar -t's members" "$want" \
	"$(ls "$TM_MNT/a.tar" | LC_ALL=C sort | paste -sd' ')"
check "after the flip: abcdefgh.txt has its bytes" cmp "$SRC/arc/abcdefgh.txt" \
	"$TM_MNT/a.tar/abcdefgh.txt"
check "after the flip: trace1.byu's raw is the member's" cmp "$SRC/arc/trace1.byu" \
	"$TM_MNT/a.tar/trace1.byu/raw"
check "the daemon says it refused the archive file (body checksum)" \
	grep -q 'archive file refused (body checksum mismatch)' "$TM_TMP/daemon.log"
unmount_tm
check "the archive file was written again: no flipped name left" \
	test -z "$(grep -la 'Xbcdefgh' "$CACHE"/*.tma)"
finish
