#!/bin/bash
# Index files in the cache folder, through real mounts:
# - a first mount builds and writes one index file per trace read (folder 0700, files 0600);
#   a second mount reads them and decodes nothing (the status summary counts), serving the
#   same bytes, with stats.json's source set for the path it is mounted under;
# - corrupt, truncated, other-owner and world-writable index files are refused, and files
#   of another build or version are out of date, with the reason logged, rebuilt and
#   rewritten (tracemount index counts them out of date); scripts/build-id's key changes with
#   any source byte;
# - two daemons sharing one cache folder, a single-trace mount, -o cache=none, -o prefetch;
# - tracemount index -j 2 over a tree with a corrupt trace and an unreadable path: exit 1
#   naming the path, index files for the rest, which a mount then reads;
# - mount.fuse3 -t tracemount, as an /etc/fstab line of type fuse.tracemount does.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
CACHE=$TM_TMP/cache
mkdir -p "$SRC/sub"
"$GEN_BYU" -n 200000 -s 1 >"$SRC/a.byu"
"$GEN_TT6" --format tt6 --records 50000 --seed 2 >"$SRC/sub/t.tt6"
"$GEN_CIS501" --lines 30000 --seed 3 | gzip -6 -n >"$SRC/sub/c.trace.gz"
printf 'not a trace\n' >"$SRC/notes.txt"
TRACES="a.byu sub/t.tt6 sub/c.trace.gz"
VIEWS="dump.txt stats.json errors.txt raw"

# summary MNT: the status summary line.
summary() {
	grep -E '^# [0-9]+ traces?;' "$1/.tracemount/status"
}
# read_all MNT DIR: every view of every trace into DIR; fails if a view cannot be read (two
# readings that fail alike would agree).
read_all() {
	local t v status=0
	for t in $TRACES; do
		mkdir -p "$2/$t"
		for v in $VIEWS; do
			cat "$1/$t/$v" >"$2/$t/$(basename "$v")" || status=1
		done
	done
	return $status
}
# same_readings DIR1 DIR2: the two readings agree byte for byte (named apart from lib.sh's
# same_views, which makes checks of its own).
same_readings() {
	diff -r "$1" "$2" >/dev/null
}

mount_tm "$SRC" -o cache="$CACHE"
check "first mount: every view read" read_all "$TM_MNT" "$TM_TMP/first"
# the problems the status sums: the lines of the errors.txt files read
problems=$(cat "$TM_TMP"/first/*/errors.txt "$TM_TMP"/first/sub/*/errors.txt | wc -l)
with=$(find "$TM_TMP/first" -name errors.txt -size +0 | wc -l)
# plural: s PLURAL COUNT, the count's noun
s() { [ "$2" = 1 ] && echo "${1%s}" || echo "$1"; }
PROBLEMS="$problems $(s problems "$problems") in the errors.txt of $with $(s traces "$with"), 0 notes in 0 traces"
check_eq "first mount: every trace built" \
	"# 3 traces; indexes: 3 built, 0 read from index files, 0 index files refused, 0 index files out of date, 0 builds failed; $PROBLEMS; cache $CACHE" \
	"$(summary "$TM_MNT")"
# calls/ lists every call in tree.txt (up to 262,144 a processor): its tables, which the index
# keeps deflated, grow with the calls a trace makes
calls_deflated=0
for t in sub/t.tt6 sub/c.trace.gz; do
	for v in "$TM_MNT/$t"/calls/*; do
		calls_deflated=$((calls_deflated + $(gzip -6 -c "$v" | wc -c)))
	done
done
# plots/, every trace's: pictures of a few KB whatever the trace's length
plots_deflated=0
for t in $TRACES; do
	for v in "$TM_MNT/$t"/plots/*; do
		plots_deflated=$((plots_deflated + $(gzip -6 -c "$v" | wc -c)))
	done
done
unmount_tm
check_eq "the cache folder is 0700" 700 "$(stat -c %a "$CACHE")"
check_eq "one index file per trace" 3 "$(find "$CACHE" -name '*.tmi' | wc -l)"
check_eq "index files are 0600" "600 600 600" "$(stat -c %a "$CACHE"/*.tmi | paste -sd' ')"
check_eq "no temporary file is left" 0 "$(find "$CACHE" -name '.*' -type f | wc -l)"
total_index=$(du -cb "$CACHE"/*.tmi | tail -1 | cut -f1)
total_trace=$(du -cb "$SRC/a.byu" "$SRC/sub/t.tt6" "$SRC/sub/c.trace.gz" | tail -1 | cut -f1)
# spix/'s tables grow with the code a trace runs, not with its length: 8 KiB each here; calls/'
# with the calls, plots/' with nothing (their deflated bytes, and a quarter more for deflating
# in pieces)
check "index files take under 2% of the traces, 8 KiB per instruction trace, calls/ and plots/ ($total_index of $total_trace bytes, calls/ $calls_deflated and plots/ $plots_deflated deflated)" \
	test $(((total_index - 2 * 8192 - (calls_deflated + plots_deflated) * 5 / 4) * 50)) -lt "$total_trace"

mount_tm "$SRC" -o cache="$CACHE"
check "second mount: every view read" read_all "$TM_MNT" "$TM_TMP/second"
check_eq "second mount: every index read from its file, nothing decoded in full" \
	"# 3 traces; indexes: 0 built, 3 read from index files, 0 index files refused, 0 index files out of date, 0 builds failed; $PROBLEMS; cache $CACHE" \
	"$(summary "$TM_MNT")"
check "second mount: the same bytes in every view" same_readings "$TM_TMP/first" "$TM_TMP/second"
unmount_tm

# The same traces under another path: the files are keyed by content, stats.json says where.
mkdir -p "$TM_TMP/elsewhere/deeper"
cp -p "$SRC/a.byu" "$TM_TMP/elsewhere/deeper/renamed.byu"
mount_tm "$TM_TMP/elsewhere" -o cache="$CACHE"
check "another path: the index file of the same content is read" \
	grep -q "^# 1 trace; indexes: 0 built, 1 read" <(cat "$TM_MNT/deeper/renamed.byu/dump.txt" >/dev/null; summary "$TM_MNT")
check_eq "another path: stats.json names the file it is read from" \
	'  "source": "renamed.byu",' "$(grep '"source"' "$TM_MNT/deeper/renamed.byu/stats.json")"
check "another path: the dump is the same" cmp -s "$TM_MNT/deeper/renamed.byu/dump.txt" \
	"$TM_TMP/first/a.byu/dump.txt"
unmount_tm

# Damaged and unsafe files: refused with the reason, rebuilt, rewritten. A folder of its own
# holds a.byu's index file only.
CACHE=$TM_TMP/cache-a
mount_tm "$SRC" -o cache="$CACHE"
cat "$TM_MNT/a.byu/dump.txt" >/dev/null
unmount_tm
biggest=$(ls "$CACHE"/*.tmi)
damage() {
	case $1 in
	body) printf '\xff' | dd of="$biggest" bs=1 seek=$(($(stat -c %s "$biggest") - 5)) conv=notrunc 2>/dev/null ;;
	truncated) truncate -s -1 "$biggest" ;;
	version) printf '\xfe' | dd of="$biggest" bs=1 seek=8 conv=notrunc 2>/dev/null ;;
	build) another_build "$biggest" ;;
	owner) chown 65534:65534 "$biggest" ;;
	writable) chmod 0666 "$biggest" ;;
	key) cp "$OTHER_TMI" "$biggest" ;; # sound, but another content's: copied by hand
	esac
}
# The index file of another BYU trace, for the key case.
mkdir -p "$TM_TMP/other"
"$GEN_BYU" -n 1000 -s 9 >"$TM_TMP/other/a.byu"
"$TRACEMOUNT" index --cache "$TM_TMP/cache-other" "$TM_TMP/other" 2>/dev/null
OTHER_TMI=$(ls "$TM_TMP"/cache-other/*.tmi)
# another_build FILE: the index file as another build wrote it: its build key (after magic,
# version, header size, byte order and the format's 32-byte name) names other sources, and
# its header checksum (the header's last 4 bytes, over the header with them zeroed) agrees.
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
for kind in body:"refused (body checksum mismatch)" truncated:"refused (truncated or overlong)" \
	version:"out of date, written by another build (index file format version differs)" \
	build:"out of date, written by another build (0.1.0+src." \
	owner:"refused (owned by another user)" writable:"refused (writable by others)" \
	key:"refused (written for other content)"; do
	damage "${kind%%:*}"
	mount_tm "$SRC" -o cache="$CACHE"
	check "${kind%%:*}: a.byu's dump is right" cmp -s "$TM_MNT/a.byu/dump.txt" \
		"$TM_TMP/first/a.byu/dump.txt"
	refused=1 stale=0
	case ${kind%%:*} in version | build) refused=0 stale=1 ;; esac
	check_eq "${kind%%:*}: the file is refused and a.byu built again" \
		"# 1 trace; indexes: 1 built, 0 read from index files, $refused index files refused, $stale index files out of date, 0 builds failed; 0 problems in the errors.txt of 0 traces, 0 notes in 0 traces; cache $CACHE" \
		"$(summary "$TM_MNT")"
	check "${kind%%:*}: the reason is logged" \
		grep -qF "a.byu: index file ${kind#*:}" "$TM_TMP/daemon.log"
	unmount_tm
	check "${kind%%:*}: the file is written anew, 0600 and ours" \
		test "$(stat -c '%a %u' "$biggest")" = "600 $(id -u)"
done
mount_tm "$SRC" -o cache="$CACHE"
cat "$TM_MNT/a.byu/dump.txt" >/dev/null
check "after the rebuilds, the rewritten file is read" grep -q '0 built, 1 read from index files' \
	<(summary "$TM_MNT")
unmount_tm

# Two daemons on one cache folder, each building and writing concurrently.
CACHE=$TM_TMP/cache-two
mkdir -p "$TM_TMP/m1" "$TM_TMP/m2"
"$TRACEMOUNT" -f -o cache="$CACHE" "$SRC" "$TM_TMP/m1" 2>"$TM_TMP/d1.log" &
d1=$!
"$TRACEMOUNT" -f -o cache="$CACHE" "$SRC" "$TM_TMP/m2" 2>"$TM_TMP/d2.log" &
d2=$!
for _ in $(seq 1 100); do
	mountpoint -q "$TM_TMP/m1" && mountpoint -q "$TM_TMP/m2" && break
	sleep 0.05
done
read_all "$TM_TMP/m1" "$TM_TMP/two1" &
reader=$!
check "two daemons: the second: every view read" read_all "$TM_TMP/m2" "$TM_TMP/two2"
wait "$reader"
check_eq "two daemons: the first: every view read" 0 "$?"
check "two daemons: the first serves the same bytes" same_readings "$TM_TMP/first" "$TM_TMP/two1"
check "two daemons: the second serves the same bytes" same_readings "$TM_TMP/first" "$TM_TMP/two2"
fusermount3 -u "$TM_TMP/m1"
fusermount3 -u "$TM_TMP/m2"
wait "$d1" "$d2"
check_eq "two daemons: one file per trace, no temporary left" "3 0" \
	"$(find "$CACHE" -name '*.tmi' | wc -l) $(find "$CACHE" -name '.*' -type f | wc -l)"
mount_tm "$SRC" -o cache="$CACHE"
check "third mount: every view read" read_all "$TM_MNT" "$TM_TMP/third"
check "two daemons: their files are read by a third mount" \
	grep -q '0 built, 3 read from index files, 0 index files refused' <(summary "$TM_MNT")
unmount_tm

# cache=none: nothing written; a single-trace mount uses the folder too.
mount_tm "$SRC" -o cache=none
cat "$TM_MNT/a.byu/dump.txt" >/dev/null
check "cache=none: built in memory" grep -q '1 built, 0 read.*; cache none$' <(summary "$TM_MNT")
unmount_tm
mount_tm "$SRC/sub/t.tt6" -o cache="$CACHE"
check "single-trace mount: the same bytes" cmp -s "$TM_MNT/t.tt6/dump.txt" \
	"$TM_TMP/first/sub/t.tt6/dump.txt"
check "single-trace mount: read from the file" grep -q '0 built, 1 read' <(summary "$TM_MNT")
unmount_tm

# -o prefetch: every trace indexed in the background without a read, its products after its
# record index: prefetching is over once the prefetch line says done.
rm -rf "$CACHE"
mount_tm "$SRC" -o cache="$CACHE",prefetch
for _ in $(seq 1 200); do
	grep -q '^# prefetch: 3 of 3 traces, done' "$TM_MNT/.tracemount/status" && break
	sleep 0.05
done
check "prefetch: the three traces and their products built" grep -q '^# 3 traces; indexes: 3 built' \
	<(summary "$TM_MNT")
check_eq "prefetch: the three traces indexed without a read" \
	"indexed indexed indexed" "$(grep -v '^#' "$TM_MNT/.tracemount/status" | tail -n +2 | cut -f3 | paste -sd' ')"
unmount_tm
check_eq "prefetch: their index files are written" 3 "$(find "$CACHE" -name '*.tmi' | wc -l)"

# tracemount index: a tree with a corrupt trace (indexed, its problems in errors.txt) and a
# path too long to open (failed, named).
rm -rf "$CACHE"
TREE=$TM_TMP/tree
mkdir -p "$TREE"
cp -r "$SRC"/. "$TREE"/
head -c 100001 "$SRC/a.byu" >"$TREE/cut.byu"
long=$TREE
for _ in $(seq 1 20); do
	long=$long/$(printf 'd%.0s' $(seq 1 220))
done
mkdir -p "$long" 2>/dev/null || true
"$TRACEMOUNT" index -j 2 --cache "$CACHE" "$TREE" >"$TM_TMP/index.out" 2>"$TM_TMP/index.err"
status=$?
check_eq "index: exit status 1 when a path failed" 1 "$status"
check "index: the failed path is named" grep -q "File name too long" "$TM_TMP/index.err"
check "index: the summary line" grep -qE '^tracemount index: 4 traces, .*: 4 indexed, 0 up to date, 0 out of date, 0 failed, some paths unreadable' "$TM_TMP/index.err"
check_eq "index: one file per trace" 4 "$(find "$CACHE" -name '*.tmi' | wc -l)"
rm -rf "$TREE/d"*
"$TRACEMOUNT" index -j 2 --cache "$CACHE" "$TREE/sub" "$TREE/a.byu" 2>"$TM_TMP/index2.err"
check_eq "index again: exit status 0" 0 "$?"
check "index again: everything up to date" grep -q ': 0 indexed, 3 up to date, 0 out of date, 0 failed;' "$TM_TMP/index2.err"
# An index file another build wrote is out of date: index says so and writes it anew.
another_build "$(ls -S "$CACHE"/*.tmi | head -n 1)"
"$TRACEMOUNT" index --cache "$CACHE" "$TREE/sub" "$TREE/a.byu" 2>"$TM_TMP/index3.err"
check "index over another build's file: out of date, indexed again" \
	grep -q ': 1 indexed, 2 up to date, 1 out of date, 0 failed;' "$TM_TMP/index3.err"
"$TRACEMOUNT" index --cache "$CACHE" "$TREE/sub" "$TREE/a.byu" 2>"$TM_TMP/index4.err"
check "index after that: everything up to date" \
	grep -q ': 0 indexed, 3 up to date, 0 out of date, 0 failed;' "$TM_TMP/index4.err"
mount_tm "$TREE" -o cache="$CACHE"
check "after index: the corrupt trace's errors.txt says where it ends" \
	grep -q 'offset 99996: trailing partial record' "$TM_MNT/cut.byu/errors.txt"
check "after index: every view read" read_all "$TM_MNT" "$TM_TMP/fromindex"
check "after index: a mount decodes nothing" grep -q '0 built, 4 read from index files' <(summary "$TM_MNT")
check "after index: the same bytes" same_readings "$TM_TMP/first" "$TM_TMP/fromindex"
unmount_tm

# The build key changes with every source file and with nothing else: scripts/build-id over a
# copy of the sources, before and after one byte of a renderer changes.
IDS=$TM_TMP/ids
mkdir -p "$IDS/tree"
cp -r "$SOURCE_ROOT/src" "$SOURCE_ROOT/include" "$SOURCE_ROOT/meson.build" \
	"$SOURCE_ROOT/meson_options.txt" "$IDS/tree/"
build_id() {
	"$PY" "$SOURCE_ROOT/scripts/build-id" "$IDS/$1.c" 0.1.0 "$IDS/tree" && tail -n 1 "$IDS/$1.c"
}
first_id=$(build_id one)
check_eq "build-id: the same sources, the same key" "$first_id" "$(build_id two)"
cp -p "$IDS/one.c" "$IDS/kept.c"
build_id kept >/dev/null
check "build-id: an unchanged key leaves its file as it was (nothing relinks)" \
	test "$(stat -c %Y.%y "$IDS/kept.c")" = "$(stat -c %Y.%y "$IDS/one.c")"
sed -i '0,/"/s/"/"x/' "$IDS/tree/src/formats/byu.c"
check "build-id: one changed byte of a format's source, another key" \
	test "$first_id" != "$(build_id three)"
check "build-id: the key is the version and a source hash" \
	grep -qE '^const char tm_build_id\[\] = "0\.1\.0\+src\.[0-9a-f]{16}";$' <<<"$first_id"

# /etc/fstab's line "SRC MNT fuse.tracemount ro,allow_other,cache=DIR 0 0" runs mount.fuse3
# SRC MNT -t tracemount -o ...; mount(8) gives helpers a fixed PATH, so call it directly with
# this build first on PATH.
if command -v mount.fuse3 >/dev/null && [ "$(id -u)" = 0 ]; then
	BIN=$TM_TMP/bin
	mkdir -p "$BIN" "$TM_TMP/fstab"
	ln -s "$TRACEMOUNT" "$BIN/tracemount"
	if PATH=$BIN:$PATH mount.fuse3 "$SRC" "$TM_TMP/fstab" -t tracemount \
		-o ro,allow_other,cache="$CACHE" 2>"$TM_TMP/mount.err"; then
		check "mount.fuse3 -t tracemount serves the views" cmp -s \
			"$TM_TMP/fstab/a.byu/dump.txt" "$TM_TMP/first/a.byu/dump.txt"
		check "it shows in the mount table as fuse.tracemount" \
			grep -q " $TM_TMP/fstab fuse.tracemount " /proc/mounts
		umount "$TM_TMP/fstab"
	else
		fail "mount.fuse3 -t tracemount: $(cat "$TM_TMP/mount.err")"
	fi
elif [ "$(id -u)" != 0 ]; then
	skip_part not-root "mount.fuse3 -t tracemount needs root"
else
	skip_part tool:mount.fuse3 "mount.fuse3 -t tracemount needs mount.fuse3"
fi
finish
