#!/bin/bash
# tracemount cat, ls and index with the cache folder of index files (issue 20):
# - cat and ls write a trace's index file on first use and read it afterwards (--cache DIR,
#   the default folder under XDG_CACHE_HOME), write nothing with --cache none, warn once and
#   index in memory when the default folder cannot be used, and give the same bytes either way;
# - index --force rewrites, --format GLOB:NAME makes a name indexable, a named file that is not
#   a trace is an error, a named link is followed;
# - index --list, after a header line naming its columns, names each index file's trace and
#   state; --prune removes exactly the files of traces gone or changed and refused ones,
#   keeping other builds' files of traces still there;
# - every command's help, usage errors (exit 2) and messages prefixed with the command.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
CACHE=$TM_TMP/cache
mkdir -p "$SRC/sub" "$TM_TMP/out"
"$GEN_BYU" -n 100000 -s 1 >"$SRC/a.byu"
"$GEN_TT6" --format tt6 --records 5000 --seed 2 >"$SRC/sub/t.tt6"
"$GEN_BYU" -n 300 -s 4 >"$SRC/sub/u.byu"
"$GEN_BYU" -n 500 -s 5 >"$SRC/notes.dat"
REAL=$(realpath "$SRC")
cd "$SRC" || exit 1

# tmi_count DIR: the index files in DIR.
tmi_count() {
	find "$1" -name '*.tmi' 2>/dev/null | wc -l
}
# identity FILE: its inode and modification time, which a rewrite (a new file renamed over
# it) changes.
identity() {
	stat -c '%i %y' "$1"
}
# listing: --list's lines after its header less the file name, size and age, spaces squeezed:
# "FORMAT STATE TRACE", sorted.
listing() {
	tail -n +2 "$OUT" | sed -E 's/^[^ ]+ +[0-9.]+ ([KMGT]i)?B +[0-9]+ (s|min|h|d) +//' |
		tr -s ' ' | LC_ALL=C sort
}
# summary_of: the counts of index's summary line, after its size and time.
summary_of() {
	sed -n 's/^tracemount index: .* s: //p' <<<"$ERR"
}
# human BYTES: a size as tracemount prints it (powers of 1024, one decimal past bytes).
human() {
	awk -v b="$1" 'BEGIN { split("B KiB MiB GiB TiB", u, " "); i = 1
		while (b >= 1024 && i < 5) { b /= 1024; i++ }
		if (i == 1) printf "%d B\n", b; else printf "%.1f %s\n", b, u[i] }'
}

VIEWS="raw dump.txt stats.json errors.txt class/d_read.txt class/i_fetch.byu convert/a.din"

# ---------------------------------------------------------------------------------------
# --cache none: the bytes without index files, and nothing written anywhere.
mkdir -p "$TM_TMP/none"
for v in $VIEWS; do
	run_tm cat --cache none a.byu "$v"
	check_eq "cat --cache none a.byu $v: exit status" 0 "$RC"
	mkdir -p "$TM_TMP/none/$(dirname "$v")"
	cp "$OUT" "$TM_TMP/none/$v"
done
run_tm ls --cache none a.byu
check_eq "ls --cache none: exit status" 0 "$RC"
cp "$OUT" "$TM_TMP/none/ls"
run_tm cat -c none sub/t.tt6 dump.txt
cp "$OUT" "$TM_TMP/none/t.dump"
check "cat and ls --cache none write no default cache folder" test ! -e "$XDG_CACHE_HOME"
check_eq "cat and ls --cache none: no index file anywhere" 0 "$(tmi_count "$TM_TMP")"
check_eq "cat --cache none dump.txt equals the reference decoder" "" \
	"$(cmp "$TM_TMP/none/dump.txt" <("$BYU_REFDEC" <a.byu) 2>&1)"

# ---------------------------------------------------------------------------------------
# --cache DIR: the first cat writes the index file, the second reads it.
run_tm cat --cache "$CACHE" a.byu stats.json
check_eq "first cat --cache DIR: exit status" 0 "$RC"
check_eq "first cat --cache DIR: nothing on stderr" "" "$ERR"
check_eq "first cat --cache DIR: one index file written" 1 "$(tmi_count "$CACHE")"
check_eq "the cache folder is made 0700" 700 "$(stat -c %a "$CACHE")"
check "first cat --cache DIR: the same stats.json as without" cmp -s "$OUT" \
	"$TM_TMP/none/stats.json"
TMI=$(ls "$CACHE"/*.tmi)
before=$(identity "$TMI")
run_tm cat --cache "$CACHE" a.byu stats.json
check_eq "second cat --cache DIR: exit status" 0 "$RC"
check "second cat --cache DIR: the same stats.json" cmp -s "$OUT" "$TM_TMP/none/stats.json"
check_eq "second cat --cache DIR: the index file is not written again" "$before" \
	"$(identity "$TMI")"
run_tm index --cache "$CACHE" a.byu
check_eq "index after two cats: exit status" 0 "$RC"
check_eq "index after two cats: the file is up to date" \
	"0 indexed, 1 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
# a file holding the record index alone (cat of dump.txt): index builds its products, and
# says it indexed the trace, not that its file was up to date
run_tm cat --cache "$TM_TMP/records-only" a.byu dump.txt
run_tm index --cache "$TM_TMP/records-only" a.byu
check_eq "index of a file without its products: built, not up to date" \
	"1 indexed, 0 up to date, 0 out of date, 0 failed; index files in $TM_TMP/records-only" \
	"$(summary_of)"
run_tm index --cache "$TM_TMP/records-only" a.byu
check_eq "index again: now up to date" \
	"0 indexed, 1 up to date, 0 out of date, 0 failed; index files in $TM_TMP/records-only" \
	"$(summary_of)"

# Proof that cat reads the file: stats.json is kept in it, so bytes changed in the middle of
# the trace, its size and modification time put back (its content key unchanged), do not show
# in stats.json through the file, and do without it.
cp -p a.byu "$TM_TMP/a.byu.orig"
head -c 600 /dev/zero | tr '\0' '\377' | dd of=a.byu bs=1 seek=300000 conv=notrunc 2>/dev/null
touch -r "$TM_TMP/a.byu.orig" a.byu
run_tm cat --cache none a.byu stats.json
check "changed bytes change stats.json without an index file" \
	test "$(md5sum <"$OUT")" != "$(md5sum <"$TM_TMP/none/stats.json")"
run_tm cat --cache "$CACHE" a.byu stats.json
check "cat --cache DIR takes stats.json from the index file" cmp -s "$OUT" \
	"$TM_TMP/none/stats.json"
cp -p "$TM_TMP/a.byu.orig" a.byu

# Every view and ls, byte for byte the same with the index file as without.
bad=
for v in $VIEWS; do
	"$TRACEMOUNT" cat --cache "$CACHE" a.byu "$v" | cmp -s - "$TM_TMP/none/$v" || bad="$bad $v"
done
check_eq "cat --cache DIR: every view tried as without index files" "" "$bad"
run_tm ls --cache "$CACHE" a.byu
check "ls --cache DIR: as without index files" cmp -s "$OUT" "$TM_TMP/none/ls"
run_tm ls --cache "$CACHE" sub/t.tt6
check_eq "ls of another trace writes its index file" 2 "$(tmi_count "$CACHE")"
run_tm cat --cache "$CACHE" sub/t.tt6 dump.txt
check "cat of a tt6 trace through its index file: as without" cmp -s "$OUT" \
	"$TM_TMP/none/t.dump"
check_eq "cat and ls --cache DIR write no default cache folder" no \
	"$(test -e "$XDG_CACHE_HOME" && echo yes || echo no)"

# ---------------------------------------------------------------------------------------
# The default cache folder, $XDG_CACHE_HOME/tracemount (set by lib.sh).
DEFAULT=$XDG_CACHE_HOME/tracemount
run_tm cat a.byu dump.txt
check_eq "cat with the default cache: exit status" 0 "$RC"
check "cat with the default cache: the same dump.txt" cmp -s "$OUT" "$TM_TMP/none/dump.txt"
check_eq "cat with the default cache: one index file there" 1 "$(tmi_count "$DEFAULT")"
# cat of a record view runs the record pass alone, so the file it wrote holds no product
# (doc/architecture.md, "Products"). ls gives every view's size, stats.json's too, so it builds
# the products over the record index read from that file, and writes the file again with
# them: the file cat wrote is replaced. A second ls then finds everything in the file ls wrote
# and writes nothing: that ls reads index files shows there.
before=$(identity "$(ls "$DEFAULT"/*.tmi)")
run_tm ls a.byu
check "ls with the default cache: the same list" cmp -s "$OUT" "$TM_TMP/none/ls"
check_eq "ls with the default cache: still one index file there" 1 "$(tmi_count "$DEFAULT")"
check "ls with the default cache writes the file again, with the products cat did not build" \
	test "$before" != "$(identity "$(ls "$DEFAULT"/*.tmi)")"
before=$(identity "$(ls "$DEFAULT"/*.tmi)")
run_tm ls a.byu
check "a second ls with the default cache: the same list" cmp -s "$OUT" "$TM_TMP/none/ls"
check_eq "a second ls with the default cache reads the file the first wrote" "$before" \
	"$(identity "$(ls "$DEFAULT"/*.tmi)")"
run_tm index a.byu
check_eq "index with the default cache: up to date" \
	"0 indexed, 1 up to date, 0 out of date, 0 failed; index files in $DEFAULT" "$(summary_of)"

# A default folder that cannot be made: one warning, the bytes all the same, nothing written.
printf 'a file, not a folder\n' >"$TM_TMP/not-a-folder"
RC=$(
	XDG_CACHE_HOME=$TM_TMP/not-a-folder "$TRACEMOUNT" cat a.byu dump.txt \
		>"$TM_TMP/fallback.out" 2>"$TM_TMP/fallback.err"
	echo $?
)
check_eq "default cache folder unusable: cat exits 0" 0 "$RC"
check_eq "default cache folder unusable: one warning" \
	"tracemount cat: cannot use the cache folder $TM_TMP/not-a-folder/tracemount: Not a directory; indexing in memory" \
	"$(cat "$TM_TMP/fallback.err")"
check "default cache folder unusable: the same dump.txt" cmp -s "$TM_TMP/fallback.out" \
	"$TM_TMP/none/dump.txt"
RC=$(
	XDG_CACHE_HOME=$TM_TMP/not-a-folder "$TRACEMOUNT" ls a.byu >/dev/null 2>"$TM_TMP/fallback.err"
	echo $?
)
check_eq "default cache folder unusable: ls exits 0" 0 "$RC"
check "default cache folder unusable: ls warns with its own name" \
	grep -qx "tracemount ls: cannot use the cache folder .*; indexing in memory" \
	"$TM_TMP/fallback.err"

# A folder the user names must be usable: only its last component is made.
run_tm cat --cache "$TM_TMP/no/such/cache" a.byu dump.txt
check_eq "cat --cache in a missing folder: exit status" 1 "$RC"
check_eq "cat --cache in a missing folder: the message" \
	"tracemount cat: cache folder $TM_TMP/no/such/cache: $TM_TMP/no/such does not exist (only the last folder of a cache path is created)" \
	"$ERR"
check_eq "cat --cache in a missing folder: no output" 0 "$(wc -c <"$OUT")"
check "cat --cache in a missing folder: no folder made" test ! -e "$TM_TMP/no"
run_tm ls --cache "$TM_TMP/not-a-folder" a.byu
check_eq "ls --cache FILE: exit status" 1 "$RC"
check "ls --cache FILE: the message names it" grep -q "^tracemount ls: cache folder $TM_TMP/not-a-folder" <<<"$ERR"

# An index file damaged: cat says so, builds the index again, rewrites the file.
printf 'damaged\n' >"$TMI"
run_tm cat --cache "$CACHE" a.byu stats.json
check_eq "damaged index file: cat exits 0" 0 "$RC"
check "damaged index file: the same stats.json" cmp -s "$OUT" "$TM_TMP/none/stats.json"
check_eq "damaged index file: cat says it was refused" \
	"tracemount cat: a.byu: index file refused (truncated or overlong): indexing again" "$ERR"
run_tm index --cache "$CACHE" a.byu
check_eq "damaged index file: written anew, then up to date" \
	"0 indexed, 1 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"

# ---------------------------------------------------------------------------------------
# index --force: every index built again and its file rewritten.
before=$(stat -c %i "$TMI")
run_tm index --force --cache "$CACHE" a.byu
check_eq "index --force: exit status" 0 "$RC"
check_eq "index --force: built again" \
	"1 indexed, 0 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
check "index --force: the file is rewritten (a new inode)" test "$before" != "$(stat -c %i "$TMI")"
check_eq "index --force: still one file for the trace" 2 "$(tmi_count "$CACHE")"
run_tm cat --cache "$CACHE" a.byu stats.json
check "index --force: the rewritten file gives the same stats.json" cmp -s "$OUT" \
	"$TM_TMP/none/stats.json"

# A file named that is not a recognised trace: an error; --format GLOB:NAME makes it one.
run_tm index --cache "$CACHE" notes.dat
check_eq "index of a named unrecognised file: exit status" 1 "$RC"
check_eq "index of a named unrecognised file: the message" \
	"tracemount index: notes.dat: not a recognised trace (name its format with --format GLOB:NAME)" \
	"$(head -n 1 <<<"$ERR")"
check_eq "index of a named unrecognised file: nothing indexed" \
	"0 indexed, 0 up to date, 0 out of date, 0 failed, some paths not traces; index files in $CACHE" \
	"$(summary_of)"
run_tm index --cache "$CACHE" notes.dat sub/u.byu
check_eq "an unrecognised file among traces: exit status 1" 1 "$RC"
check_eq "an unrecognised file among traces: the others indexed" \
	"1 indexed, 0 up to date, 0 out of date, 0 failed, some paths not traces; index files in $CACHE" \
	"$(summary_of)"
run_tm index --cache "$CACHE" --format '*.dat:byu' notes.dat
check_eq "index --format '*.dat:byu' notes.dat: exit status" 0 "$RC"
check_eq "index --format '*.dat:byu' notes.dat: indexed" \
	"1 indexed, 0 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
check_eq "index --format: its index file written" 4 "$(tmi_count "$CACHE")"
run_tm index --cache "$CACHE" notes.dat --jobs 64 --format '*.dat:byu'
check_eq "index: options after PATH" \
	"0 indexed, 1 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
run_tm cat --cache "$CACHE" -F '*.dat:byu' notes.dat dump.txt
check "cat -F GLOB:NAME reads the file index wrote" cmp -s "$OUT" <("$BYU_REFDEC" <notes.dat)
run_tm cat --cache "$CACHE" --format byu notes.dat dump.txt
check "cat --format NAME: the same dump" cmp -s "$OUT" <("$BYU_REFDEC" <notes.dat)
check_eq "cat --format: no file written for what index wrote" 4 "$(tmi_count "$CACHE")"
# Inside a folder named, files that are not traces are skipped without a word.
run_tm index --cache "$CACHE" "$SRC"
check_eq "index of the folder: exit status" 0 "$RC"
check_eq "index of the folder: notes.dat skipped, the rest up to date" \
	"0 indexed, 3 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
check_eq "index of the folder: nothing said of notes.dat" 0 "$(grep -c notes.dat <<<"$ERR")"
run_tm index --cache "$CACHE" -j 2 -F 'notes.*:byu' .
check_eq "index -j 2 -F with a folder: the override applies inside" \
	"0 indexed, 4 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
# A link named is followed; its trace's index file is the one of the same content.
ln -s "$SRC/a.byu" "$TM_TMP/link.byu"
run_tm index --cache "$CACHE" "$TM_TMP/link.byu"
check_eq "index of a named link: its trace, up to date" \
	"0 indexed, 1 up to date, 0 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
rm "$TM_TMP/link.byu"
mkfifo "$TM_TMP/fifo"
run_tm index --cache "$CACHE" "$TM_TMP/fifo"
check_eq "index of a named FIFO: exit status" 1 "$RC"
check_eq "index of a named FIFO: the message" \
	"tracemount index: $TM_TMP/fifo: not a regular file or folder" "$(head -n 1 <<<"$ERR")"
run_tm index --cache "$CACHE" "$TM_TMP/missing.byu"
check_eq "index of a missing path: exit status" 1 "$RC"
check_eq "index of a missing path: the message" \
	"tracemount index: $TM_TMP/missing.byu: No such file or directory" "$(head -n 1 <<<"$ERR")"

# ---------------------------------------------------------------------------------------
# --list: every index file, its format, state and trace.
cd / || exit 1
run_tm index --list --cache "$CACHE"
check_eq "index --list: exit status" 0 "$RC"
check_eq "index --list: a header line naming the columns" "name size age format state trace" \
	"$(head -n 1 "$OUT" | tr -s ' ')"
check_eq "index --list: one line per index file after it" 4 "$(tail -n +2 "$OUT" | wc -l)"
check_eq "index --list: each trace, ok" \
	"$(printf 'byu ok %s\n' "$REAL/a.byu" "$REAL/notes.dat" "$REAL/sub/u.byu"
		printf 'tt6 ok %s\n' "$REAL/sub/t.tt6")" "$(listing)"
check_eq "index --list: the file names" "$(cd "$CACHE" && LC_ALL=C ls)" "$(tail -n +2 "$OUT" | cut -d' ' -f1)"
size=$(stat -c %s "$TMI")
check_eq "index --list: a file's size" "$(human "$size")" \
	"$(grep "^$(basename "$TMI") " "$OUT" | awk '{ print $2, $3 }')"
check_eq "index --list: the total" \
	"tracemount index: 4 index files, $(human "$(cat "$CACHE"/*.tmi | wc -c)") in $CACHE: 4 ok, 0 out of date, 0 trace gone, 0 trace changed, 0 refused" \
	"$ERR"
run_tm index --list --cache "$TM_TMP/no-cache-here"
check_eq "index --list of a missing folder: exit status" 0 "$RC"
check_eq "index --list of a missing folder: empty" \
	"tracemount index: 0 index files, 0 B in $TM_TMP/no-cache-here: 0 ok, 0 out of date, 0 trace gone, 0 trace changed, 0 refused" \
	"$ERR"
check "index --list of a missing folder: not made" test ! -e "$TM_TMP/no-cache-here"
run_tm index --list
check_eq "index --list of the default folder: the file cat and ls wrote" "byu ok $REAL/a.byu" "$(listing)"

# One trace deleted, another rewritten: gone and changed, and --prune removes those two.
rm "$SRC/sub/u.byu"
"$GEN_TT6" --format tt6 --records 5000 --seed 3 >"$SRC/sub/t.tt6"
run_tm index --list --cache "$CACHE"
check_eq "index --list after a trace gone and one changed" \
	"$(printf 'byu ok %s\n' "$REAL/a.byu" "$REAL/notes.dat"
		printf 'byu trace gone %s\n' "$REAL/sub/u.byu"
		printf 'tt6 trace changed %s\n' "$REAL/sub/t.tt6")" "$(listing)"
check "index --list: the total counts them" grep -q ': 2 ok, 0 out of date, 1 trace gone, 1 trace changed, 0 refused$' <<<"$ERR"
grep -E 'trace (gone|changed)' "$OUT" | cut -d' ' -f1 | LC_ALL=C sort >"$TM_TMP/doomed"
freed=$(cd "$CACHE" && xargs cat <"$TM_TMP/doomed" | wc -c)
run_tm index --prune --cache "$CACHE"
check_eq "index --prune: exit status" 0 "$RC"
check_eq "index --prune: the summary" \
	"tracemount index: pruned 2 of 4 index files ($(human "$freed") freed)" "$ERR"
check_eq "index --prune: says what it removed" "$(cat "$TM_TMP/doomed")" \
	"$(sed 's/^removed //' "$OUT" | cut -d' ' -f1)"
check "index --prune: each line names the trace" grep -q "^removed .* trace gone  *$REAL/sub/u.byu$" "$OUT"
check_eq "index --prune: two index files left" 2 "$(tmi_count "$CACHE")"
check "index --prune: exactly those two removed" test ! -e "$CACHE/$(head -n 1 "$TM_TMP/doomed")" \
	-a ! -e "$CACHE/$(tail -n 1 "$TM_TMP/doomed")"
run_tm index --list --cache "$CACHE"
check_eq "index --list after --prune: the rest, ok" \
	"$(printf 'byu ok %s\n' "$REAL/a.byu" "$REAL/notes.dat")" "$(listing)"

# Temporary files of writers: one whose writer died (its lock free) and one still written (its
# writer holds its lock, as tm_index_store_write does): --list shows both, --prune removes the
# dead writer's only, and the other once its writer is gone.
dead=.0123456789abcdef.tmi.4242.1f
live=.fedcba9876543210.tma.4343.2e
head -c 3000 /dev/zero >"$CACHE/$dead"
head -c 5000 /dev/zero >"$CACHE/$live"
flock -o -x "$CACHE/$live" sleep 120 </dev/null >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 100); do
	flock -n -x "$CACHE/$live" true || break
	sleep 0.1
done
run_tm index --list --cache "$CACHE"
check "index --list: a dead writer's temporary file" \
	grep -qE "^$dead .* - +temporary: writer gone +-$" "$OUT"
check "index --list: a live writer's" grep -qE "^$live .* - +temporary: writing +-$" "$OUT"
check "index --list: the total counts them" \
	grep -q '; 2 temporary files, 1 of writers gone$' <<<"$ERR"
run_tm index --prune --cache "$CACHE"
check "index --prune: removes the dead writer's temporary file" test ! -e "$CACHE/$dead"
check "index --prune: keeps the live writer's" test -e "$CACHE/$live"
check "index --prune: says what it removed" grep -q "^removed $dead " "$OUT"
check_eq "index --prune: the summary counts it" \
	"tracemount index: pruned 0 of 2 index files and 1 of 2 temporary files ($(human 3000) freed)" \
	"$ERR"
pkill -P "$holder" sleep
wait "$holder" 2>/dev/null
run_tm index --prune --cache "$CACHE"
check "index --prune: its writer gone, the other temporary file too" test ! -e "$CACHE/$live"

# A file another build wrote, of a trace still there, is out of date and kept; a file that is
# no index file is refused and removed.
# another_build FILE: its build key (after magic, version, header size, byte order and the
# format's 32-byte name) names other sources, its header checksum (the header's last 4 bytes,
# over the header with them zeroed) agreeing (as test_cache.sh does).
another_build() {
	"$PY" - "$1" <<'PYEOF'
import struct, sys, zlib
path = sys.argv[1]
d = bytearray(open(path, "rb").read())
size = struct.unpack_from("<I", d, 12)[0]
key = d[56:56 + 128].split(b"\0")[0]
assert b"+src." in key, key
i = key.index(b"+src.") + 5
d[56 + i] = ord("1") if d[56 + i] == ord("0") else ord("0")
struct.pack_into("<I", d, size - 4, 0)
struct.pack_into("<I", d, size - 4, zlib.crc32(bytes(d[:size])))
open(path, "wb").write(d)
PYEOF
}
another_build "$TMI"
printf 'not an index file\n' >"$CACHE/0123456789abcdef.tmi"
run_tm index --list --cache "$CACHE"
check_eq "index --list: out of date and refused" \
	"$(printf '? refused: truncated or overlong ?\n'
		printf 'byu ok %s\n' "$REAL/notes.dat"
		printf 'byu out of date (other build) %s\n' "$REAL/a.byu")" "$(listing)"
run_tm index --prune --cache "$CACHE"
check_eq "index --prune: the refused file only" \
	"tracemount index: pruned 1 of 3 index files (18 B freed)" "$ERR"
check "index --prune: the refused file is gone" test ! -e "$CACHE/0123456789abcdef.tmi"
check "index --prune: another build's file of a trace still there is kept" test -e "$TMI"
run_tm index --cache "$CACHE" "$SRC/a.byu"
check_eq "index over another build's file: out of date, indexed again" \
	"1 indexed, 0 up to date, 1 out of date, 0 failed; index files in $CACHE" "$(summary_of)"
rm "$SRC/a.byu"
size=$(stat -c %s "$TMI")
run_tm index --prune --cache "$CACHE"
check_eq "index --prune: a.byu's file when a.byu is gone" \
	"tracemount index: pruned 1 of 2 index files ($(human "$size") freed)" "$ERR"
size=$(cat "$DEFAULT"/*.tmi | wc -c)
run_tm index --prune
check_eq "index --prune without --cache: the default folder's file of a.byu" \
	"tracemount index: pruned 1 of 1 index files ($(human "$size") freed)" "$ERR"
check_eq "index --prune without --cache: nothing left there" 0 "$(tmi_count "$DEFAULT")"
cd "$SRC" || exit 1

# ---------------------------------------------------------------------------------------
# Help and usage errors.
for cmd in cat ls index; do
	for h in --help -h; do
		run_tm "$cmd" "$h"
		check_eq "$cmd $h: exit status" 0 "$RC"
		check_eq "$cmd $h: nothing on stderr" "" "$ERR"
		check "$cmd $h: its usage" grep -q "^usage: tracemount $cmd " "$OUT"
		for word in --cache --format --help byu tt6; do
			check "$cmd $h mentions $word" grep -qF -- "$word" "$OUT"
		done
	done
	run_tm "$cmd" --bogus x
	check_eq "$cmd --bogus: exit status" 2 "$RC"
	check_eq "$cmd --bogus: the message" \
		"tracemount $cmd: unknown option '--bogus' (see tracemount $cmd --help)" "$ERR"
	run_tm "$cmd" -Z x
	check_eq "$cmd -Z: exit status" 2 "$RC"
	check_eq "$cmd -Z: the message" \
		"tracemount $cmd: unknown option '-Z' (see tracemount $cmd --help)" "$ERR"
	run_tm "$cmd" --cache
	check_eq "$cmd --cache without DIR: exit status" 2 "$RC"
	check_eq "$cmd --cache without DIR: the message" \
		"tracemount $cmd: option needs an argument: '--cache' (see tracemount $cmd --help)" "$ERR"
	run_tm "$cmd" --format 'x.*' "$SRC/sub/t.tt6" raw
	check_eq "$cmd --format GLOB without NAME: exit status" 2 "$RC"
	run_tm "$cmd" --format '*.dat:nosuchformat' "$SRC/notes.dat" raw
	check_eq "$cmd --format with an unknown format: exit status" 2 "$RC"
	check "$cmd --format with an unknown format: the message names it and the formats" \
		grep -qF "tracemount $cmd: --format *.dat:nosuchformat: no format nosuchformat (the formats: byu," \
		<<<"$ERR"
done
for word in --force --jobs --list --prune; do
	run_tm index --help
	check "index --help mentions $word" grep -qF -- "$word" "$OUT"
done
run_tm index --format 'x.*' "$SRC/sub/t.tt6"
check_eq "index --format without ':': the message" \
	"tracemount index: --format x.*: expected GLOB:NAME" "$ERR"
run_tm cat --cache none a.byu
check_eq "cat without VIEW: exit status" 2 "$RC"
check_eq "cat without VIEW: the message" \
	"tracemount cat: usage: tracemount cat [OPTION]... TRACE VIEW (see tracemount cat --help)" "$ERR"
run_tm index
check_eq "index without PATH: exit status" 2 "$RC"
check_eq "index without PATH: the message" \
	"tracemount index: usage: tracemount index [OPTION]... PATH... (see tracemount index --help)" "$ERR"
run_tm index --list "$SRC"
check_eq "index --list with a PATH: exit status" 2 "$RC"
check_eq "index --list with a PATH: the message" \
	"tracemount index: --list and --prune work on the cache folder: they take no PATH (see tracemount index --help)" \
	"$ERR"
run_tm index --prune "$SRC"
check_eq "index --prune with a PATH: exit status" 2 "$RC"
run_tm index --list --prune
check_eq "index --list --prune: exit status" 2 "$RC"
run_tm index --prune --force
check_eq "index --prune --force: exit status" 2 "$RC"
run_tm index --cache none "$SRC"
check_eq "index --cache none: exit status" 2 "$RC"
check_eq "index --cache none: the message" \
	"tracemount index: --cache none: index files need a cache folder (give --cache DIR) (see tracemount index --help)" \
	"$ERR"
# A cache folder with no room: the indexes are built but stay in memory, which helps no one,
# so index says so and fails (a shard of a cluster's run must not look done).
FULL=$TM_TMP/full
mkdir -p "$FULL" "$TM_TMP/two"
"$GEN_BYU" -n 20000 -s 6 >"$TM_TMP/two/x.byu"
"$GEN_BYU" -n 20000 -s 7 >"$TM_TMP/two/y.byu"
if mount -t tmpfs -o size=4k,mode=0700 tmpfs "$FULL" 2>/dev/null; then
	run_tm index --cache "$FULL" "$TM_TMP/two"
	umount "$FULL"
	check_eq "index into a full cache folder: exit status" 1 "$RC"
	check_eq "index into a full cache folder: one warning, not one per trace" 1 \
		"$(grep -c "^tracemount index: $TM_TMP/two/[xy].byu: cannot write its index file in $FULL: No space left on device" \
			"$TM_TMP/out/$RUN_N.err")"
	check "index into a full cache folder: the count" \
		grep -qx "tracemount index: 2 index files could not be written in $FULL" \
		"$TM_TMP/out/$RUN_N.err"
else
	echo "note: no tmpfs could be mounted here: the full cache folder is not tried"
fi
for j in 0 65 x ''; do
	run_tm index -j "$j" "$SRC"
	check_eq "index -j '$j': exit status" 2 "$RC"
done

finish
