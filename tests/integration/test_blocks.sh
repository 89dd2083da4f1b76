#!/bin/bash
# st_blocks of every file the mount makes (views of small and large traces, an archive's
# members, the .tracemount files): ceil(size / 512), computed here from the stat size, as du
# and ls -s count them; a view of a few bytes takes one block, not none, and an empty one
# none. A plain file mirrors its source's st_blocks.
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
mkdir -p "$SRC/arc"
gen_every_format "$SRC"
"$GEN_BYU" -n 4 -s 1 >"$SRC/four.byu"
printf 'ninety-eight bytes or so of plain text, mirrored as it is\n' >"$SRC/plain.txt"
"$GEN_BYU" -n 3 -s 2 >"$SRC/arc/small.byu"
printf 'x\n' >"$SRC/arc/note.txt"
tar -C "$SRC/arc" -cf "$SRC/a.tar" small.byu note.txt
rm -r "$SRC/arc"

mount_tm "$SRC"
find "$TM_MNT" -type f ! -name plain.txt -exec stat -c '%s %b %B %n' {} + >"$TM_TMP/stat.out"
bad=$(awk '$3 != 512 || $2 != int(($1 + 511) / 512) { print; exit }' "$TM_TMP/stat.out")
check_eq "every file's st_blocks is ceil(size / 512) blocks of 512 bytes" "" "$bad"
check "files between 1 and 511 bytes were seen (at least 20)" \
	test "$(awk '$1 > 0 && $1 < 512' "$TM_TMP/stat.out" | wc -l)" -ge 20
check "empty files were seen" grep -q '^0 ' "$TM_TMP/stat.out"
check "files over a block were seen" test "$(awk '$1 > 4096' "$TM_TMP/stat.out" | wc -l)" -ge 20
check_eq "plain.txt: the source's blocks" "$(stat -c %b "$SRC/plain.txt")" \
	"$(stat -c %b "$TM_MNT/plain.txt")"
d=$TM_MNT/four.byu/dump.txt
size=$(stat -c %s "$d")
check "four.byu/dump.txt is under a block ($size bytes)" test "$size" -gt 0 -a "$size" -lt 512
check_eq "du four.byu/dump.txt: one 512-byte block" 1 "$(du -B 512 "$d" | cut -f1)"
check_eq "a.tar/note.txt: one block (2 bytes)" "1 2" \
	"$(stat -c '%b %s' "$TM_MNT/a.tar/note.txt")"
unmount_tm
finish
