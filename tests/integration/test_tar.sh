#!/bin/bash
# Tar archives shown as folders (src/archive): one mount of a SOURCE holding the same tree of
# members archived in every way GNU tar and Python's tarfile write (bsdtar too when installed),
# plain and compressed, whole, cut and damaged, beside the plain traces. Expectations come from
# Python's tarfile (tests/tools/tar_model.py), GNU tar and the plain files, never from
# tracemount:
#
# - the members' tree: `find` of every archive's folder lists tarfile's entries (paths
#   normalised, folders explicit and implied, the later of two members of one path) with their
#   types, sizes, mtimes, permission bits (mode & 0555) and symlink targets; every file's bytes
#   (cat/cmp) are tarfile's, hard links their target's, sparse members with their holes as
#   zeros; member traces are trace folders whose views are byte-identical to the plain trace's
#   (same_views), hard links to a trace too;
# - archives: GNU (long names > 100 and > 255 bytes, long link targets, sparse 'S' with
#   extension blocks), pax (sparse 1.0, 0.0, 0.1), ustar (the prefix field), tar -r appends,
#   Python-written ones with "../evil", "/abs", "./x", "a//b", duplicates, hard links to no
#   member, to a member after them and to a path written again after them, devices and FIFOs,
#   a base-256 size and base-256 mtimes; .tar.gz, .tgz, .tar.xz,
#   .txz, .tar.zst, .tzst; a tar under a plain name (found by its header) and compressed under
#   a plain name; a name that is a .tar but not one (a trace -o format= claims);
# - reads by real tools: ls, stat, cat, cmp, wc, tail, dd at offsets (in and around a sparse
#   member's holes), readlink, grep;
# - .errors.txt: present and empty for sound archives; for damaged ones, the line the spec
#   gives: cut inside a member's data (offset, bytes there and of the member), inside a header,
#   without the end blocks, a bad checksum, "..", a hard link to nothing; the codec's line for
#   cut compressed archives; every member before the damage served whole, the cut member's bytes
#   that are there, and the daemon serving everything after;
# - a single archive as SOURCE;
# - the cache folder: one *.tma per archive, a remount reads them (no "reading the archive's
#   members" in the log, the files untouched), a rewritten archive shows its new content, on
#   a remount and while mounted (rewritten in place, replaced by a rename).
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
MODEL="$HERE/../tools/tar_model.py"
TRACES='\.(byu|tt6|trace)(\.gz|\.xz|\.zst)?$'
tm_seed

SRC=$TM_TMP/src
IN=$TM_TMP/in
CACHE=$TM_TMP/cache
mkdir -p "$SRC/plain" "$SRC/cut" "$IN/sub/deeper" "$IN/deep/x/y" "$IN/empty-dir"

# The members: three small traces, plain files of every mode, links, long names, sparse files.
"$GEN_BYU" -n 3000 -s "$SEED" >"$IN/prog.byu"
"$GEN_TT6" --format tt6 --steps 1500 --seed "$SEED" >"$IN/sub/prog.tt6"
"$GEN_CIS501" --lines 1500 --seed "$SEED" --bad 3 >"$IN/deep/x/y/gen.trace"
for t in prog.byu sub/prog.tt6 deep/x/y/gen.trace; do
	cp "$IN/$t" "$SRC/plain/"
done
cp "$IN/prog.byu" "$SRC/plain/hard.byu" # views name their trace (convert/hard.din)
# zin/z: compressed traces and an empty one, as members and beside them; a tar as a member (a
# file); in z.tar and z.tar.xz
ZIN=$TM_TMP/zin
mkdir -p "$ZIN/z" "$SRC/plain/z"
gzip -c "$IN/prog.byu" >"$ZIN/z/prog.byu.gz"
xz -c "$IN/prog.byu" >"$ZIN/z/prog.byu.xz"
zstd -q -c "$IN/prog.byu" >"$ZIN/z/prog.byu.zst"
: >"$ZIN/z/empty.byu"
cp "$ZIN"/z/* "$SRC/plain/z/"
tar -C "$IN" -cf "$ZIN/z/inner.tar" sub/run.sh
tar -C "$ZIN" -cf "$SRC/z.tar" z
tar -C "$ZIN" -cJf "$SRC/z.tar.xz" z
printf 'hello from the archive\nsecond line\nneedle 42\n' >"$IN/notes.txt"
head -c 70000 /dev/urandom >"$IN/sub/data.bin"
: >"$IN/sub/empty"
printf '#!/bin/sh\necho hi\n' >"$IN/sub/run.sh"
chmod 0755 "$IN/sub/run.sh"
printf 'private\n' >"$IN/sub/deeper/private"
chmod 0600 "$IN/sub/deeper/private"
printf 'writable by all\n' >"$IN/sub/deeper/all"
chmod 0666 "$IN/sub/deeper/all"
ln -s sub/data.bin "$IN/link"
ln -s /etc/passwd "$IN/abs-link"
ln -s nowhere/at/all "$IN/dangling"
ln "$IN/sub/data.bin" "$IN/hard.bin"
ln "$IN/prog.byu" "$IN/sub/hard.byu"
LONGDIR=$(printf 'd%.0s' $(seq 1 90))
LONGFILE=$(printf 'n%.0s' $(seq 1 200))
MIDFILE=$(printf 'm%.0s' $(seq 1 60))
mkdir -p "$IN/$LONGDIR/$LONGDIR"
printf 'a long path\n' >"$IN/$LONGDIR/$LONGDIR/$LONGFILE"
printf 'a path in the ustar prefix\n' >"$IN/$LONGDIR/$MIDFILE"
ln -s "../$LONGDIR/$LONGDIR/$LONGFILE" "$IN/sub/long-link"
# sparse: two runs and a hole at the end; 30 runs (GNU's extension blocks); all hole
"$PY" - "$IN" <<'EOF'
import sys
d = sys.argv[1]
with open(d + "/sparse", "wb") as f:
    f.seek(100000); f.write(b"A" * 5000); f.seek(300000); f.write(b"B" * 3000)
    f.truncate(600000)
with open(d + "/sub/many-runs", "wb") as f:
    for i in range(30):
        f.seek(i * 65536 + 1000); f.write(bytes([65 + i]) * (700 + i))
    f.truncate(30 * 65536 + 4096)
with open(d + "/sub/holes", "wb") as f:
    f.truncate(1 << 20)
EOF
touch -d @1234567890 "$IN/notes.txt"
touch -h -d @1500000000 "$IN/link"
touch -d @1600000000 "$IN/sub"

# gnu/ pax/ ... archives of IN, by GNU tar.
tar_of() { # tar_of OUT OPTIONS...: IN archived by GNU tar with OPTIONS
	local out=$1
	shift
	tar -C "$IN" "$@" -cf "$out" . 2>"$TM_TMP/tar.err" || { cat "$TM_TMP/tar.err" >&2; fail "tar $*"; }
}
tar_of "$SRC/gnu.tar" --format=gnu --sparse
tar_of "$SRC/pax.tar" --format=pax --sparse
tar_of "$SRC/pax00.tar" --format=pax --sparse --sparse-version=0.0
tar_of "$SRC/pax01.tar" --format=pax --sparse --sparse-version=0.1
tar_of "$SRC/nosparse.tar" --format=pax
tar -C "$IN" --format=ustar -cf "$SRC/ustar.tar" --exclude="./$LONGDIR/$LONGDIR" \
	--exclude=./sub/long-link . 2>"$TM_TMP/tar.err" || { cat "$TM_TMP/tar.err" >&2; fail "tar --format=ustar"; }
tar_of "$SRC/gz.tar.gz" --format=gnu --sparse -z
tar_of "$SRC/gz.tgz" --format=pax --sparse -z
tar_of "$SRC/xz.tar.xz" --format=gnu --sparse -J
tar_of "$SRC/xz.txz" --format=pax --sparse -J
tar_of "$SRC/zst.tar.zst" --format=gnu --sparse --zstd
tar_of "$SRC/zst.tzst" --format=pax --sparse --zstd
# GNU incremental: 'D' folders with their dumpdir data, atime and ctime where ustar has its prefix
# (tarfile reads those as a prefix: GNU tar's listing is the model)
tar -C "$IN" --listed-incremental="$TM_TMP/snapshot" -cf "$SRC/incremental.tar" .
cp "$SRC/gnu.tar" "$SRC/tar-by-content"
gzip -c "$SRC/pax.tar" >"$SRC/gz-by-content"
# tar -r: a second notes.txt and a new file appended
cp "$SRC/gnu.tar" "$SRC/appended.tar"
mkdir -p "$TM_TMP/app"
printf 'the appended version\n' >"$TM_TMP/app/notes.txt"
printf 'new\n' >"$TM_TMP/app/new.txt"
tar -C "$TM_TMP/app" --format=gnu -rf "$SRC/appended.tar" notes.txt new.txt
BSDTAR=
if command -v bsdtar >/dev/null; then
	BSDTAR=yes
	bsdtar -C "$IN" --format=pax -cf "$SRC/bsd.tar" .
	bsdtar -C "$IN" --format=gnutar -czf "$SRC/bsdgnu.tgz" . 2>/dev/null ||
		rm -f "$SRC/bsdgnu.tgz"
else
	skip_part tool:bsdtar "bsdtar not installed: its archives are not tested"
fi

# py.tar: what GNU tar does not write: bad paths, duplicates, links to nothing, devices, base-256
# mtimes; b256.tar: a ustar member whose size is in base-256.
"$PY" - "$SRC" <<'EOF'
import io, sys, tarfile
d = sys.argv[1]
def add(tf, name, data=b"", **kw):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mtime = kw.pop("mtime", 1700000000)
    ti.mode = kw.pop("mode", 0o644)
    for k, v in kw.items():
        setattr(ti, k, v)
    tf.addfile(ti, io.BytesIO(data) if data else None)
with tarfile.open(d + "/py.tar", "w", format=tarfile.GNU_FORMAT) as tf:
    add(tf, "first.txt", b"first\n")
    add(tf, "../evil", b"evil\n")
    add(tf, "a/../../evil2", b"evil\n")
    add(tf, "/abs/file.txt", b"absolute\n")
    add(tf, "./dot/./x.txt", b"dotted\n")
    add(tf, "a//b.txt", b"two slashes\n")
    add(tf, "dup.txt", b"version one, the longer one\n", mtime=1600000000)
    add(tf, "dup.txt", b"version two\n", mtime=1650000000, mode=0o600)
    add(tf, "./dup2.txt", b"one\n")
    add(tf, "dup2.txt", b"two\n")
    add(tf, "missing-link", type=tarfile.LNKTYPE, linkname="nothere")
    add(tf, "good-link", type=tarfile.LNKTYPE, linkname="./first.txt")
    add(tf, "target", b"the first target\n")
    add(tf, "link-to-first", type=tarfile.LNKTYPE, linkname="target")
    add(tf, "target", b"the second target, longer\n")
    add(tf, "forward-link", type=tarfile.LNKTYPE, linkname="comes-later")
    add(tf, "comes-later", b"after its link\n")
    add(tf, "fifo", type=tarfile.FIFOTYPE)
    add(tf, "chardev", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
    add(tf, "future.txt", b"far ahead\n", mtime=10**10)
    add(tf, "old.txt", b"before 1970\n", mtime=-1000000)
    add(tf, "x" * 200 + "/" + "x" * 200, b"four hundred\n")
    add(tf, "long/" + "n" * 256, b"a name longer than NAME_MAX\n")
    add(tf, "sym-to-long", type=tarfile.SYMTYPE, linkname="y" * 150)
    add(tf, "last.txt", b"last\n")
with tarfile.open(d + "/pyustar.tar", "w", format=tarfile.USTAR_FORMAT) as tf:
    add(tf, "p" * 90 + "/" + "q" * 99, b"prefix and name\n")
    add(tf, "after.txt", b"after\n")
with tarfile.open(d + "/pypax.tar", "w", format=tarfile.PAX_FORMAT,
                  pax_headers={"comment": "a global header"}) as tf:
    add(tf, "\u00e9t\u00e9/caf\u00e9.txt", b"utf-8 names\n")
    add(tf, "z" * 200 + "/" + "z" * 100, b"pax path\n")
    add(tf, "sym", type=tarfile.SYMTYPE, linkname="w" * 200)
    add(tf, "future.txt", b"pax mtime\n", mtime=10**10)
# base-256 size: a ustar archive whose first member's size is rewritten in base-256
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
    add(tf, "b256.txt", b"sized in base 256\n" * 40)
    add(tf, "after.txt", b"after it\n")
b = bytearray(buf.getvalue())
b[124:136] = b"\x80" + (18 * 40).to_bytes(11, "big")
b[148:156] = b" " * 8
b[148:156] = b"%06o\0 " % sum(b[:512])
open(d + "/b256.tar", "wb").write(bytes(b))
EOF
check_eq "tarfile reads b256.tar's base-256 size" "720" \
	"$("$PY" -c 'import tarfile, sys; print(tarfile.open(sys.argv[1]).getmember("b256.txt").size)' \
		"$SRC/b256.tar")"
check "gnu.tar holds an old GNU sparse member (type S) with extension blocks" \
	"$PY" -c 'import tarfile, sys
t = tarfile.open(sys.argv[1])
m = t.getmember("./sub/many-runs")
sys.exit(not (m.type == tarfile.GNUTYPE_SPARSE and len(m.sparse) >= 30))' "$SRC/gnu.tar"
check "pax.tar holds a pax 1.0 sparse member" \
	grep -qa "GNU.sparse.major=1" "$SRC/pax.tar"
check "pax00.tar holds a pax 0.0 sparse member" grep -qa "GNU.sparse.offset=" "$SRC/pax00.tar"
check "pax01.tar holds a pax 0.1 sparse member" grep -qa "GNU.sparse.map=" "$SRC/pax01.tar"

# A .tar that a -o format= makes a trace (a BYU trace under that name).
cp "$IN/prog.byu" "$SRC/claimed.tar"

# Damaged archives, in cut/: GNU tar's gnu.tar cut inside data.bin's data, inside a header (the
# one of data.bin, a GNU long name's data), at the end of the members (no end blocks); a bad
# checksum; compressed archives cut in half.
offsets() { "$PY" "$MODEL" offsets "$1" >"$TM_TMP/offsets"; }
member_at() { # member_at NAME FIELD: FIELD (2 header, 3 data, 4 size) of member NAME
	awk -F'\t' -v n="$1" -v f="$2" '$1 == n { print $f; exit }' "$TM_TMP/offsets"
}
offsets "$SRC/gnu.tar"
# data.bin and hard.bin are one file: the first archived holds the bytes, the other links to it
DATA=$(awk -F'\t' '$4 == 70000 { print $1; exit }' "$TM_TMP/offsets")
DATA_AT=$(member_at "$DATA" 3)
DATA_HDR=$(member_at "$DATA" 2)
DATA=${DATA#./}
LONG_HDR=$(member_at "./$LONGDIR/$LONGDIR/$LONGFILE" 2)
END=$(awk -F'\t' '$1 == "end" { print $2 }' "$TM_TMP/offsets")
CUT_DATA=$((DATA_AT + 12345))
CUT_HDR=$((DATA_HDR + 300))
CUT_LONG=$((LONG_HDR + 512 + 100))
head -c $CUT_DATA "$SRC/gnu.tar" >"$SRC/cut/data.tar"
head -c $CUT_HDR "$SRC/gnu.tar" >"$SRC/cut/header.tar"
head -c $CUT_LONG "$SRC/gnu.tar" >"$SRC/cut/longname.tar"
head -c "$END" "$SRC/gnu.tar" >"$SRC/cut/noend.tar"
cp "$SRC/gnu.tar" "$SRC/cut/checksum.tar"
printf 'Z' | dd of="$SRC/cut/checksum.tar" bs=1 seek=$((DATA_HDR + 20)) conv=notrunc status=none
for c in gz xz zst; do
	case $c in
	gz) f=$SRC/gz.tar.gz ;;
	xz) f=$SRC/xz.tar.xz ;;
	zst) f=$SRC/zst.tar.zst ;;
	esac
	size=$(wc -c <"$f")
	head -c $((size / 2)) "$f" >"$SRC/cut/half.tar.$c"
done
# a sparse member cut inside its data
offsets "$SRC/pax.tar"
SPARSE_AT=$(member_at ./sub/many-runs 3)
head -c $((SPARSE_AT + 5000)) "$SRC/pax.tar" >"$SRC/cut/sparse.tar"

ARCHIVES="gnu.tar pax.tar pax00.tar pax01.tar nosparse.tar ustar.tar gz.tar.gz gz.tgz xz.tar.xz
xz.txz zst.tar.zst zst.tzst tar-by-content gz-by-content appended.tar py.tar pyustar.tar
pypax.tar b256.tar z.tar z.tar.xz${BSDTAR:+ bsd.tar}"
[ -f "$SRC/bsdgnu.tgz" ] && ARCHIVES="$ARCHIVES bsdgnu.tgz"

# listing DIR: the entries under an archive's folder DIR as tar_model.py list prints them
# (.errors.txt aside): a folder with a stats.json is a trace ("t"), not descended into.
listing() {
	(cd "$1" && find . -mindepth 1 ! -path ./.errors.txt \( \
		\( -type d -exec test -e '{}/stats.json' \; -printf '%P\tt\n' -prune \) -o \
		-type d -printf '%P\td\n' -o -type f -printf '%P\tf\t%s\t%Ts\t%m\n' -o \
		-type l -printf '%P\tl\t%l\t%s\n' \)) | LC_ALL=C sort
}

# compare_tree NAME DIR [ARCHIVE] [--avail N]: the folder DIR of archive SRC/NAME (or ARCHIVE)
# lists tarfile's entries, and every file holds tarfile's bytes (a trace: its raw view).
compare_tree() {
	local name=$1 dir=$2 archive=$SRC/$1 x bad='' p kind rest
	shift 2
	if [ $# -gt 0 ] && [ "$1" != --avail ]; then
		archive=$1
		shift
	fi
	x=$TM_TMP/x.$RANDOM
	mkdir -p "$x"
	"$PY" "$MODEL" list "$archive" --traces "$TRACES" --extract "$x" "$@" |
		LC_ALL=C sort >"$TM_TMP/want"
	listing "$dir" >"$TM_TMP/got"
	check "$name: the entries, types, sizes, mtimes, modes and link targets are tarfile's" \
		diff "$TM_TMP/want" "$TM_TMP/got"
	while IFS=$'\t' read -r p kind rest; do
		case $kind in
		f) cmp -s "$x/$p" "$dir/$p" || bad="$bad $p" ;;
		t)
			case $p in
			*.gz) gzip -dc "$x/$p" ;;
			*.xz) xz -dc "$x/$p" ;;
			*.zst) zstd -q -dc "$x/$p" ;;
			*) cat "$x/$p" ;;
			esac | cmp -s - "$dir/$p/raw" || bad="$bad $p/raw"
			;;
		esac
	done <"$TM_TMP/want"
	check_eq "$name: every file's bytes (cat) are tarfile's, every trace's raw too" "" "$bad"
	rm -rf "$x"
}

mount_tm "$SRC" -o cache="$CACHE" -o 'format=claimed.tar:byu'
M=$TM_MNT
echo "--- listings and bytes"
for a in $ARCHIVES; do
	check "$a is a folder" test -d "$M/$a"
	compare_tree "$a" "$M/$a"
done
check_eq "the SOURCE folder lists every archive as a folder" "" \
	"$(for a in $ARCHIVES; do [ "$(stat -c %F "$M/$a")" = directory ] || echo "$a"; done)"
# shellcheck disable=SC2086 # ARCHIVES is words
check_eq "ls of SOURCE: each archive a folder (d), the claimed .tar a trace folder too" \
	"$(printf '%s\n' $ARCHIVES claimed.tar incremental.tar | LC_ALL=C sort)" \
	"$(cd "$M" && ls -l | awk '/^d/ && $NF != "cut" && $NF != "plain" { print $NF }' | LC_ALL=C sort)"

echo "--- .errors.txt of sound archives"
for a in gnu.tar pax.tar pax00.tar pax01.tar nosparse.tar ustar.tar gz.tar.gz gz.tgz xz.tar.xz \
	xz.txz zst.tar.zst zst.tzst tar-by-content gz-by-content appended.tar pyustar.tar pypax.tar \
	b256.tar; do
	check_eq "$a/.errors.txt is empty" "0:" "$(stat -c %s "$M/$a/.errors.txt"):$(cat "$M/$a/.errors.txt")"
done
# shellcheck disable=SC2046 # ls -A of IN: names without spaces
check_eq "gnu.tar: ls -A lists .errors.txt and the members of the root" \
	"$(printf '%s\n' .errors.txt $(ls -A "$IN") | LC_ALL=C sort)" "$(ls -A "$M/gnu.tar" | LC_ALL=C sort)"
check_eq ".errors.txt is a read-only file" "regular empty file 444" \
	"$(stat -c '%F %a' "$M/pax.tar/.errors.txt")"
check "a sub-folder has no .errors.txt" test ! -e "$M/gnu.tar/sub/.errors.txt"

echo "--- real tools"
g=$M/gnu.tar
check_eq "cat notes.txt" "$(cat "$IN/notes.txt")" "$(cat "$g/notes.txt")"
check_eq "grep in a member" "needle 42" "$(grep needle "$g/notes.txt")"
check_eq "wc -c of data.bin" 70000 "$(wc -c <"$g/sub/data.bin")"
check "tail -c 1000 of data.bin" cmp <(tail -c 1000 "$IN/sub/data.bin") <(tail -c 1000 "$g/sub/data.bin")
check "dd at offsets of data.bin (an odd one, across the 512-byte blocks)" \
	dd_same "$g/sub/data.bin" "$IN/sub/data.bin" 4097 33333
check_eq "stat of notes.txt: size, mtime, mode" "$(stat -c %s "$IN/notes.txt") 1234567890 444 regular file" \
	"$(stat -c '%s %Y %a %F' "$g/notes.txt")"
check_eq "stat of run.sh: mode 0755 & 0555" "555" "$(stat -c %a "$g/sub/run.sh")"
check_eq "stat of private: mode 0600 & 0555" "400" "$(stat -c %a "$g/sub/deeper/private")"
check_eq "stat of sub: mtime" 1600000000 "$(stat -c %Y "$g/sub")"
check_eq "readlink link" sub/data.bin "$(readlink "$g/link")"
check_eq "readlink abs-link (an absolute target as written)" /etc/passwd "$(readlink "$g/abs-link")"
check_eq "readlink dangling" nowhere/at/all "$(readlink "$g/dangling")"
check "cat through the symlink link" cmp "$IN/sub/data.bin" "$g/link"
check "the hard link hard.bin has data.bin's bytes" cmp "$IN/sub/data.bin" "$g/hard.bin"
check "readlink of the long link target (GNU 'K')" \
	test "$(readlink "$g/sub/long-link")" = "../$LONGDIR/$LONGDIR/$LONGFILE"
check "cat through the long link" cmp "$IN/$LONGDIR/$LONGDIR/$LONGFILE" "$g/sub/long-link"
check "echo > member fails" bash -c "! echo x 2>/dev/null >'$g/notes.txt'"
for a in gnu.tar pax.tar pax00.tar pax01.tar gz.tgz xz.tar.xz zst.tzst; do
	for f in sparse sub/many-runs sub/holes; do
		check_eq "$a/$f: stat size is the real size" "$(stat -c %s "$IN/$f")" \
			"$(stat -c %s "$M/$a/$f")"
		check "$a/$f: cmp with the file (holes as zeros)" cmp "$IN/$f" "$M/$a/$f"
	done
done
for a in gnu.tar pax.tar pax00.tar xz.txz; do
	bad=
	for off in 0 1000 65536 66500 1900000; do
		dd_same "$M/$a/sub/many-runs" "$IN/sub/many-runs" $off 4000 2>/dev/null || bad="$bad $off"
	done
	for off in 99999 104999 299990 599000; do
		dd_same "$M/$a/sparse" "$IN/sparse" $off 1500 2>/dev/null || bad="$bad s$off"
	done
	check_eq "$a: dd at offsets in and around the sparse members' runs and holes" "" "$bad"
done

echo "--- member traces"
same_views "gnu.tar/prog.byu" "$M/plain/prog.byu" "$M/gnu.tar/prog.byu"
same_views "gnu.tar/sub/prog.tt6" "$M/plain/prog.tt6" "$M/gnu.tar/sub/prog.tt6"
same_views "gnu.tar/deep/x/y/gen.trace" "$M/plain/gen.trace" "$M/gnu.tar/deep/x/y/gen.trace"
same_views "gnu.tar/sub/hard.byu (a hard link)" "$M/plain/hard.byu" "$M/gnu.tar/sub/hard.byu"
for a in pax.tar ustar.tar gz.tar.gz xz.txz zst.tar.zst gz-by-content; do
	same_views "$a/prog.byu" "$M/plain/prog.byu" "$M/$a/prog.byu"
done
same_views "zst.tzst/deep/x/y/gen.trace" "$M/plain/gen.trace" "$M/zst.tzst/deep/x/y/gen.trace"
same_views "xz.tar.xz/sub/prog.tt6" "$M/plain/prog.tt6" "$M/xz.tar.xz/sub/prog.tt6"
for f in prog.byu.gz prog.byu.xz prog.byu.zst empty.byu; do
	same_views "z.tar/z/$f (a member)" "$M/plain/z/$f" "$M/z.tar/z/$f"
done
same_views "z.tar.xz/z/prog.byu.gz (gzip in xz)" "$M/plain/z/prog.byu.gz" "$M/z.tar.xz/z/prog.byu.gz"
check_eq "z.tar/z/inner.tar, a tar member, is a file" "regular file" \
	"$(stat -c %F "$M/z.tar/z/inner.tar")"
check "z.tar/z/inner.tar's bytes" cmp "$ZIN/z/inner.tar" "$M/z.tar/z/inner.tar"
check "gen.trace's errors.txt (3 bad lines) is the plain trace's" \
	cmp "$M/plain/gen.trace/errors.txt" "$M/gz.tgz/deep/x/y/gen.trace/errors.txt"
check "a member trace has a report.html" test -s "$M/gnu.tar/prog.byu/report.html"
check "claimed.tar (-o format=claimed.tar:byu) is a BYU trace, not an archive" \
	cmp "$IN/prog.byu" "$M/claimed.tar/raw"
check "claimed.tar: dump.txt is the plain trace's" cmp "$M/plain/prog.byu/dump.txt" \
	"$M/claimed.tar/dump.txt"

echo "--- paths, duplicates and links of py.tar"
p=$M/py.tar
check_eq "py.tar: ../evil and a/../../evil2 are left out, nothing else is outside" "" \
	"$(cd "$p" && ls -d evil evil2 a/evil2 2>/dev/null)"
check "py.tar/.errors.txt names ../evil" grep -q '\.\./evil.*left out' "$p/.errors.txt"
check "py.tar/.errors.txt names a/../../evil2" grep -q 'a/\.\./\.\./evil2.*left out' "$p/.errors.txt"
offsets "$SRC/py.tar"
check "py.tar/.errors.txt: the hard link to nothing" grep -qxF \
	"offset $(member_at missing-link 2): tar: missing-link: a hard link to nothere, no file before it in the archive: left out" \
	"$p/.errors.txt"
check "py.tar: /abs/file.txt is abs/file.txt" cmp <(printf 'absolute\n') "$p/abs/file.txt"
check "py.tar: ./dot/./x.txt is dot/x.txt" cmp <(printf 'dotted\n') "$p/dot/x.txt"
check "py.tar: a//b.txt is a/b.txt" cmp <(printf 'two slashes\n') "$p/a/b.txt"
check_eq "py.tar: dup.txt is the later member (bytes, size, mtime, mode)" \
	"version two|12 1650000000 400" "$(cat "$p/dup.txt")|$(stat -c '%s %Y %a' "$p/dup.txt")"
check_eq "py.tar: ./dup2.txt then dup2.txt: the later" two "$(cat "$p/dup2.txt")"
check_eq "py.tar: the hard link to ./first.txt" first "$(cat "$p/good-link")"
check_eq "py.tar: a hard link to a path written again after it has the first one's bytes (as tar -x and tarfile give them)" \
	"the first target|17" "$(cat "$p/link-to-first")|$(stat -c %s "$p/link-to-first")"
check_eq "py.tar: target is the later member" "the second target, longer" "$(cat "$p/target")"
check "py.tar: a hard link to a member after it is left out (tar -x cannot make it)" \
	test ! -e "$p/forward-link"
check "py.tar/.errors.txt names the hard link to a member after it" grep -qxF \
	"offset $(member_at forward-link 2): tar: forward-link: a hard link to comes-later, no file before it in the archive: left out" \
	"$p/.errors.txt"
check "py.tar: no FIFO or device shown" test ! -e "$p/fifo" -a ! -e "$p/chardev"
check_eq "py.tar: a base-256 mtime (10^10)" 10000000000 "$(stat -c %Y "$p/future.txt")"
check_eq "py.tar: a negative (base-256) mtime" -1000000 "$(stat -c %Y "$p/old.txt")"
X200=$(printf 'x%.0s' $(seq 1 200))
check_eq "py.tar: a 401-byte path" "four hundred" "$(cat "$p/$X200/$X200")"
N256=$(printf 'n%.0s' $(seq 1 256))
check "py.tar/.errors.txt: a name of 256 bytes left out" grep -qE \
	"^offset [0-9]+: tar: long/$N256: a name longer than 255 bytes: left out\$" "$p/.errors.txt"
check "py.tar: no folder for the left-out long name" test ! -e "$p/long"
check_eq "py.tar: the member after them all" last "$(cat "$p/last.txt")"
check_eq "b256.tar: the base-256 size" 720 "$(stat -c %s "$M/b256.tar/b256.txt")"
check_eq "b256.tar: the member after it" "after it" "$(cat "$M/b256.tar/after.txt")"
check_eq "pypax.tar: a pax mtime past 2286" 10000000000 "$(stat -c %Y "$M/pypax.tar/future.txt")"
check_eq "appended.tar: notes.txt is the appended version" "the appended version" \
	"$(cat "$M/appended.tar/notes.txt")"

i=$M/incremental.tar
check_eq "incremental.tar: the paths GNU tar lists" \
	"$(tar -tf "$SRC/incremental.tar" | sed 's|^\./||; s|/$||' | grep -v '^\.\{0,1\}$' | LC_ALL=C sort)" \
	"$(cd "$i" && find . -mindepth 1 ! -path ./.errors.txt \( \( -type d \
		-exec test -e '{}/stats.json' \; -printf '%P\n' -prune \) -o -printf '%P\n' \) | LC_ALL=C sort)"
check "incremental.tar: notes.txt" cmp "$IN/notes.txt" "$i/notes.txt"
check "incremental.tar: sub/deeper/private" cmp "$IN/sub/deeper/private" "$i/sub/deeper/private"
check_eq "incremental.tar: .errors.txt is empty" "" "$(cat "$i/.errors.txt")"
same_views "incremental.tar/prog.byu" "$M/plain/prog.byu" "$i/prog.byu"

echo "--- damaged archives"
c=$M/cut
for a in data header longname noend checksum sparse; do
	check "cut/$a.tar is a folder" test -d "$c/$a.tar"
done
compare_tree cut/data.tar "$c/data.tar" "$SRC/gnu.tar" --avail $CUT_DATA
check_eq "cut/data.tar: $DATA has the bytes that are there (wc -c)" $((CUT_DATA - DATA_AT)) \
	"$(wc -c <"$c/data.tar/$DATA")"
check_eq "cut/data.tar: $DATA's size (stat) is the bytes that are there" $((CUT_DATA - DATA_AT)) \
	"$(stat -c %s "$c/data.tar/$DATA")"
check "cut/data.tar: $DATA's bytes are the file's first" is_prefix "$c/data.tar/$DATA" \
	"$IN/sub/data.bin"
check "cut/data.tar/.errors.txt: cut inside $DATA" grep -qxF \
	"offset $CUT_DATA: tar: the archive is cut inside $DATA: $((CUT_DATA - DATA_AT)) of its 70000 bytes are there" \
	"$c/data.tar/.errors.txt"
compare_tree cut/header.tar "$c/header.tar" "$SRC/gnu.tar" --avail $CUT_HDR
check "cut/header.tar: $DATA is not shown" test ! -e "$c/header.tar/$DATA"
check "cut/header.tar/.errors.txt: cut inside the header at its offset" \
	grep -q "^offset $DATA_HDR: .*cut" "$c/header.tar/.errors.txt"
compare_tree cut/longname.tar "$c/longname.tar" "$SRC/gnu.tar" --avail $CUT_LONG
check "cut/longname.tar/.errors.txt: cut, at an offset from the long name's header to the end" \
	awk -v lo="$LONG_HDR" -v hi="$CUT_LONG" -F'[ :]' \
	'/cut/ && $1 == "offset" && $2 >= lo && $2 <= hi { found = 1 } END { exit !found }' \
	"$c/longname.tar/.errors.txt"
compare_tree cut/noend.tar "$c/noend.tar" "$SRC/gnu.tar"
check "cut/noend.tar/.errors.txt: no end blocks" grep -qxF \
	"offset $END: tar: the archive ends without its end blocks: it may be cut" "$c/noend.tar/.errors.txt"
compare_tree cut/checksum.tar "$c/checksum.tar" "$SRC/gnu.tar" --avail $DATA_HDR
check "cut/checksum.tar/.errors.txt: a bad checksum at the header's offset" grep -qxF \
	"offset $DATA_HDR: tar: not a tar header (bad checksum): the rest of the archive is not read" \
	"$c/checksum.tar/.errors.txt"
compare_tree cut/sparse.tar "$c/sparse.tar" "$SRC/pax.tar" --avail $((SPARSE_AT + 5000))
check_eq "cut/sparse.tar: the cut sparse member: stat size = the bytes cat reads" \
	"$(stat -c %s "$c/sparse.tar/sub/many-runs")" "$(cat "$c/sparse.tar/sub/many-runs" | wc -c)"
check "cut/sparse.tar: the cut sparse member's bytes are the file's first" \
	is_prefix "$c/sparse.tar/sub/many-runs" "$IN/sub/many-runs"
check "cut/sparse.tar/.errors.txt: cut inside sub/many-runs" \
	grep -q "cut inside sub/many-runs" "$c/sparse.tar/.errors.txt"
for z in gz xz zst; do
	name=$([ $z = gz ] && echo gzip || ([ $z = xz ] && echo xz) || echo zstd)
	f=$SRC/cut/half.tar.$z
	whole=$SRC/$z.tar.$z
	[ $z = gz ] && whole=$SRC/gz.tar.gz
	avail=$("$PY" "$MODEL" avail "$f")
	[ $z = zst ] && avail=$(zstd -q -dc "$f" 2>/dev/null | wc -c)
	check "cut/half.tar.$z is a folder" test -d "$c/half.tar.$z"
	compare_tree "cut/half.tar.$z" "$c/half.tar.$z" "$whole" --avail "$avail"
	check "cut/half.tar.$z/.errors.txt names $name and a compressed offset" \
		codec_error "$name" "$c/half.tar.$z/.errors.txt" "$f" 0
done
check "daemon still running after the damaged archives" kill -0 "$TM_DAEMON_PID"
check "the plain trace still reads" cmp "$IN/prog.byu" "$M/plain/prog.byu/raw"
check "gnu.tar still reads" cmp "$IN/sub/data.bin" "$M/gnu.tar/sub/data.bin"

echo "--- the cache folder"
cp "$M/gnu.tar/sub/prog.tt6/dump.txt" "$TM_TMP/tt6.dump"
cp "$M/plain/prog.byu/dump.txt" "$TM_TMP/byu.dump"
unmount_tm
n_archives=$(printf '%s\n' $ARCHIVES | wc -l) # and cut/*: 9, incremental.tar: 1
n_tma=$(find "$CACHE" -maxdepth 1 -name '*.tma' | wc -l)
check "one .tma per archive read (at least $((n_archives + 10)))" test "$n_tma" -ge $((n_archives + 10))
check_eq "the first mount read each archive's members once" \
	"$(grep -c "reading the archive's members" "$TM_TMP/daemon.log")" "$((n_archives + 10))"
find "$CACHE" -maxdepth 1 -name '*.tma' -printf '%f %T@ %s\n' | LC_ALL=C sort >"$TM_TMP/tma.before"
sleep 1
# rewrite pax.tar with other contents; the others stay
mkdir -p "$TM_TMP/new"
printf 'rewritten\n' >"$TM_TMP/new/only.txt"
cp "$SRC/pax.tar" "$TM_TMP/pax.tar.orig"
tar -C "$TM_TMP/new" --format=pax -cf "$SRC/pax.tar" only.txt
mount_tm "$SRC" -o cache="$CACHE"
M=$TM_MNT
for a in gnu.tar gz.tar.gz xz.txz zst.tzst py.tar; do
	compare_tree "remount: $a" "$M/$a" "$SRC/$a"
done
compare_tree "remount: cut/data.tar" "$M/cut/data.tar" "$SRC/gnu.tar" --avail $CUT_DATA
compare_tree "remount: cut/sparse.tar" "$M/cut/sparse.tar" "$TM_TMP/pax.tar.orig" \
	--avail $((SPARSE_AT + 5000))
check "remount: cut/data.tar/.errors.txt as before" grep -q "cut inside $DATA" \
	"$M/cut/data.tar/.errors.txt"
check "remount: py.tar/.errors.txt as before" grep -q "missing-link" "$M/py.tar/.errors.txt"
check "remount: the member trace's dump.txt as before" cmp "$TM_TMP/tt6.dump" \
	"$M/gnu.tar/sub/prog.tt6/dump.txt"
same_views "remount: xz.txz/prog.byu" "$M/plain/prog.byu" "$M/xz.txz/prog.byu"
check "remount: the member traces' indexes read from their index files" \
	grep -qE '^0 built, [1-9][0-9]* read from index files, 0 index files refused$' <(index_counts "$M")
check_eq "remount: the rewritten pax.tar shows its new content" "only.txt|rewritten" \
	"$(ls "$M/pax.tar")|$(cat "$M/pax.tar/only.txt")"
check_eq "remount: only the rewritten archive is read again (the log)" "pax.tar" \
	"$(grep "reading the archive's members" "$TM_TMP/daemon.log" | sed 's/^tracemount: //; s/: reading.*//')"
find "$CACHE" -maxdepth 1 -name '*.tma' -printf '%f %T@ %s\n' | LC_ALL=C sort >"$TM_TMP/tma.after"
check_eq "remount: the .tma files read are untouched, one new for the new pax.tar" \
	"+1" "$(diff "$TM_TMP/tma.before" "$TM_TMP/tma.after" | grep -c '^[<>]' | sed 's/^/+/')"
# rewritten while mounted: in place (the same file) and replaced by a rename
ls "$M/appended.tar" "$M/b256.tar" >/dev/null
mkdir -p "$TM_TMP/new2"
printf 'in place\n' >"$TM_TMP/new2/inplace.txt"
printf 'renamed over\n' >"$TM_TMP/new2/renamed.txt"
tar -C "$TM_TMP/new2" --format=gnu -cf "$TM_TMP/inplace.tar" inplace.txt
cat "$TM_TMP/inplace.tar" >"$SRC/appended.tar"
tar -C "$TM_TMP/new2" --format=pax -cf "$SRC/.renamed.tmp" renamed.txt
mv "$SRC/.renamed.tmp" "$SRC/b256.tar"
sleep 1.1 # the kernel's attribute cache (attr_timeout)
compare_tree "rewritten in place while mounted: appended.tar" "$M/appended.tar" "$SRC/appended.tar"
compare_tree "replaced by a rename while mounted: b256.tar" "$M/b256.tar" "$SRC/b256.tar"
check "the daemon serves the member trace after the rewrites" \
	cmp "$TM_TMP/tt6.dump" "$M/gnu.tar/sub/prog.tt6/dump.txt"
unmount_tm

echo "--- a single archive as SOURCE"
mount_tm "$SRC/gz.tgz"
# six readers at once of the archive not yet read: one pass, the others wait for it
pids=
for i in 1 2 3 4 5 6; do
	(cd "$TM_MNT/gz.tgz" && find . -type f ! -path './*.byu/*' -exec cat {} + | md5sum) \
		>"$TM_TMP/par.$i" 2>&1 &
	pids="$pids $!"
done
# shellcheck disable=SC2086 # pids is words
wait $pids # not the daemon's
check_eq "single gz.tgz: six readers at once read the same bytes" 1 \
	"$(cat "$TM_TMP"/par.? | sort -u | wc -l)"
check_eq "single gz.tgz: the archive read once" 1 \
	"$(grep -c "reading the archive's members" "$TM_TMP/daemon.log")"
compare_tree "single gz.tgz" "$TM_MNT/gz.tgz" "$SRC/gz.tgz"
check_eq "single gz.tgz: .errors.txt is empty" "" "$(cat "$TM_MNT/gz.tgz/.errors.txt")"
check "single gz.tgz: the member trace's dump.txt is the plain trace's" \
	cmp "$TM_TMP/byu.dump" "$TM_MNT/gz.tgz/prog.byu/dump.txt"
unmount_tm
mount_tm "$SRC/cut/data.tar"
check "single cut/data.tar: $DATA's bytes that are there" \
	is_prefix "$TM_MNT/data.tar/$DATA" "$IN/sub/data.bin"
unmount_tm
finish
