#!/bin/bash
# Gzip-compressed traces of every format (BYU from gen_byu, TT6 and TT6E from gen_tt6, CIS501
# from gen_cis501 and the real gcc-1K.trace) through one mount holding plain and compressed
# copies side by side, compressed in every way found in the wild: gzip -c, gzip -1, gzip -9 -n
# (as the course distributed its traces), three members of different levels (`cat a.gz b.gz
# c.gz`, each member cut inside a record or line), pigz-style full-flush blocks (pigz itself
# when installed), a header with every optional field (extra, name, comment, header CRC), and
# gzip data under the plain name (found by its magic); an empty trace too; and a plain trace
# under a .gz name (read as it is). Expectations come
# from the plain files and zcat, never from tracemount alone:
#
# - every .gz folder lists the views of the plain one, with the same sizes, and every view is
#   byte-identical to the plain trace's (stats.json but its "source", which names the .gz);
#   raw is zcat's output; errors.txt is empty when the plain trace's is (gen_tt6 writes a few
#   unknown escape codes, bad.trace has bad CIS501 lines of every kind, 100 KB ones among them:
#   their offsets and line numbers must be the same); `tracemount cat` of the views of a
#   .gz (all of them for two traces) gives the mounted bytes and `tracemount ls` the stat
#   sizes;
# - a 50 MB BYU trace in three members: raw equals the file, 50 reads of 4 KiB by dd at random
#   offsets of raw and of dump.txt (about 180 MB) equal the same ranges of the plain views;
# - broken files: cut in half (BYU and CIS501), 16 bytes flipped in the middle, a stored block
#   whose length check is broken, garbage after the last member: raw is a prefix of the real
#   data (for the cut and the broken stored block, exactly what zlib decompresses from the file
#   before the error, computed here with Python's zlib; garbage after the member: all of it),
#   errors.txt names gzip and a compressed offset within the file, the other views decode the
#   served bytes (BYU dump.txt = the reference decoder on raw; CIS501 by cis501_expect.py),
#   and the daemon and the other traces are unaffected;
# - a .gz of stored blocks indexed, then 16 bytes flipped in its middle with its size and time
#   kept: reads there fail with EIO, errors.txt says it was indexed anew (damaged_after_indexing
#   in lib.sh).
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
EXPECT="$HERE/cis501_expect.py"
tm_seed

SRC=$TM_TMP/src
mkdir -p "$SRC/a" "$SRC/fast" "$SRC/multi" "$SRC/flush" "$SRC/headers" "$SRC/magic" "$SRC/big" \
	"$SRC/broken"

# The plain traces, in a/.
"$GEN_BYU" -n 100000 -s 71 -m mixed >"$SRC/a/prog.byu"
"$GEN_TT6" --format tt6 --steps 20000 --seed 72 >"$SRC/a/prog.tt6"
"$GEN_TT6" --format tt6e --steps 8000 --seed 73 >"$SRC/a/thr.tt6e"
"$GEN_CIS501" --lines 50000 --seed 74 >"$SRC/a/gen.trace"
"$GEN_CIS501" --lines 30000 --seed 76 --bad 24 >"$SRC/a/bad.trace"
: >"$SRC/a/empty.byu"
PLAIN="prog.byu prog.tt6 thr.tt6e gen.trace bad.trace empty.byu"
if [ -f "${REALTRACES:-}/cis501/gcc-1K.trace" ]; then
	cp "$REALTRACES/cis501/gcc-1K.trace" "$SRC/a/"
	PLAIN="$PLAIN gcc-1K.trace"
else
	skip_part realtraces "${REALTRACES:-\$REALTRACES}/cis501 not found: the real CIS501 trace is not tested"
fi

# pigz_like IN OUT: one gzip member of deflate blocks ended by full flushes every 128 KiB, as
# pigz writes them (pigz itself when installed).
pigz_like() {
	if command -v pigz >/dev/null; then
		pigz -c -b 128 "$1" >"$2"
		return
	fi
	"$PY" - "$1" "$2" <<'EOF'
import sys, zlib
data = open(sys.argv[1], "rb").read()
c = zlib.compressobj(6, zlib.DEFLATED, 31)
out = [c.compress(data[i:i + 131072]) + c.flush(zlib.Z_FULL_FLUSH)
       for i in range(0, len(data), 131072)]
open(sys.argv[2], "wb").write(b"".join(out) + c.flush())
EOF
}

# all_headers IN OUT: one member whose header has every optional field: FEXTRA, FNAME,
# FCOMMENT and FHCRC (the header's CRC-16).
all_headers() {
	"$PY" - "$1" "$2" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
head = b"\x1f\x8b\x08\x1e" + struct.pack("<I", 1234567890) + b"\x00\x03"
extra = b"AB" + struct.pack("<H", 5) + b"hello"
head += struct.pack("<H", len(extra)) + extra + b"name.trace\0" + b"a comment\0"
head += struct.pack("<H", zlib.crc32(head) & 0xffff)
c = zlib.compressobj(6, zlib.DEFLATED, -15)
body = c.compress(data) + c.flush()
tail = struct.pack("<II", zlib.crc32(data), len(data) & 0xffffffff)
open(sys.argv[2], "wb").write(head + body + tail)
EOF
}

# three_members IN OUT: IN cut at a third and two thirds plus an odd byte, the parts gzipped at
# levels 6, 1 and 9, concatenated.
three_members() {
	local size a b
	size=$(wc -c <"$1")
	a=$((size / 3 + 1))
	b=$((2 * size / 3 + 3))
	{
		head -c "$a" "$1" | gzip -6 -n
		tail -c +$((a + 1)) "$1" | head -c $((b - a)) | gzip -1 -n
		tail -c +$((b + 1)) "$1" | gzip -9 -n
	} >"$2"
}

for t in $PLAIN; do
	gzip -c "$SRC/a/$t" >"$SRC/a/$t.gz"
	gzip -1 -c -n "$SRC/a/$t" >"$SRC/fast/$t.gz"
	three_members "$SRC/a/$t" "$SRC/multi/$t.gz"
	pigz_like "$SRC/a/$t" "$SRC/flush/$t.gz"
	all_headers "$SRC/a/$t" "$SRC/headers/$t.gz"
done
# The course's own .gz of gcc-1K.trace (gzip -9 -n).
if [ -f "$SRC/a/gcc-1K.trace" ]; then
	mkdir -p "$SRC/course"
	cp "$REALTRACES/cis501/gcc-1K.trace.gz" "$SRC/course/"
fi
# Gzip data under the plain names: recognised by the gzip magic.
gzip -c -n "$SRC/a/prog.byu" >"$SRC/magic/prog.byu"
gzip -c -n "$SRC/a/gen.trace" >"$SRC/magic/gen.trace"
# A .gz name on a file that is not gzip: read as it is (doc/formats.md).
mkdir -p "$SRC/notgz"
cp "$SRC/a/prog.byu" "$SRC/notgz/prog.byu.gz"

check_eq "multi/prog.byu.gz holds three gzip members" 3 \
	"$("$PY" -c 'import sys, zlib
data, n = open(sys.argv[1], "rb").read(), 0
while data:
    d = zlib.decompressobj(31); d.decompress(data); data = d.unused_data; n += 1
print(n)' "$SRC/multi/prog.byu.gz")"
for t in $PLAIN; do
	for v in a fast multi flush headers; do
		check "$v/$t.gz decompresses (zcat) to a/$t" cmp <(zcat "$SRC/$v/$t.gz") "$SRC/a/$t"
	done
done

# A 50 MB BYU trace and its three-member .gz.
"$GEN_BYU" -n 8800000 -s 75 -m mixed >"$SRC/big/big.byu"
{
	head -c 20000003 "$SRC/big/big.byu" | gzip -1 -n
	tail -c +20000004 "$SRC/big/big.byu" | head -c 20000000 | gzip -1 -n
	tail -c +40000004 "$SRC/big/big.byu" | gzip -1 -n
} >"$SRC/big/big.byu.gz"

# Broken files.
gzip -c -n "$SRC/a/prog.byu" >"$TM_TMP/prog.byu.gz"
GZSIZE=$(wc -c <"$TM_TMP/prog.byu.gz")
head -c $((GZSIZE / 2)) "$TM_TMP/prog.byu.gz" >"$SRC/broken/trunc.byu.gz"
gzip -c -n "$SRC/a/gen.trace" | head -c 100000 >"$SRC/broken/trunc.trace.gz"
cp "$TM_TMP/prog.byu.gz" "$SRC/broken/corrupt.byu.gz"
CORRUPT_AT=$((GZSIZE / 2))
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef' |
	dd of="$SRC/broken/corrupt.byu.gz" bs=1 seek="$CORRUPT_AT" conv=notrunc status=none
{
	cat "$TM_TMP/prog.byu.gz"
	printf 'garbage after the member\n'
} >"$SRC/broken/garbage.byu.gz"
# A stored (level 0) stream whose middle block has a wrong NLEN: zlib stops right there.
# Prints the compressed offset of that block's header.
STORED_AT=$("$PY" - "$SRC/a/prog.byu" "$SRC/broken/stored.byu.gz" <<'EOF'
import sys, zlib
data = open(sys.argv[1], "rb").read()
c = zlib.compressobj(0, zlib.DEFLATED, 31)
gz = bytearray(c.compress(data) + c.flush())
pos, blocks = 10, []
while True:
    ln = gz[pos + 1] | gz[pos + 2] << 8
    nln = gz[pos + 3] | gz[pos + 4] << 8
    assert gz[pos] & 6 == 0 and ln ^ nln == 0xffff, "not a stored block at %d" % pos
    blocks.append(pos)
    if gz[pos] & 1:
        break
    pos += 5 + ln
i = len(blocks) // 2
k = blocks[i]
gz[k + 3] ^= 0xff
open(sys.argv[2], "wb").write(gz)
# the data of the blocks before it: the clean prefix
print(k, sum((gz[b + 1] | gz[b + 2] << 8) for b in blocks[:i]))
EOF
)
STORED_CLEAN=${STORED_AT#* }
STORED_AT=${STORED_AT% *}
check "stored.byu.gz was built (a stored block at $STORED_AT after $STORED_CLEAN bytes of data)" \
	test -n "$STORED_AT" -a -n "$STORED_CLEAN"
head -c "$STORED_CLEAN" "$SRC/a/prog.byu" >"$TM_TMP/stored.byu.clean"

# clean_prefix GZ OUT: what Python's zlib decompresses from the cut file GZ (a cut stream
# raises no error: all the output is there).
clean_prefix() {
	"$PY" - "$1" "$2" <<'EOF'
import sys, zlib
data, out = open(sys.argv[1], "rb").read(), []
d = zlib.decompressobj(31)
try:
    for i in range(0, len(data), 4096):
        out.append(d.decompress(data[i:i + 4096]))
except zlib.error:
    pass
open(sys.argv[2], "wb").write(b"".join(out))
EOF
}
clean_prefix "$SRC/broken/trunc.byu.gz" "$TM_TMP/trunc.byu.clean"
clean_prefix "$SRC/broken/trunc.trace.gz" "$TM_TMP/trunc.trace.clean"
check "the stored stream's clean prefix is shorter than the trace" \
	test "$(wc -c <"$TM_TMP/stored.byu.clean")" -lt "$(wc -c <"$SRC/a/prog.byu")"

mount_tm "$SRC"
MNT=$TM_MNT


# Broken files first: the clean traces below must read right after them.
echo "--- broken"
b=$MNT/broken
for t in trunc.byu.gz trunc.trace.gz corrupt.byu.gz stored.byu.gz garbage.byu.gz; do
	check "broken/$t is a trace folder" test -d "$b/$t"
done
check "broken/trunc.byu.gz: raw is a prefix of the trace" \
	is_prefix "$b/trunc.byu.gz/raw" "$SRC/a/prog.byu"
check "broken/trunc.byu.gz: raw is all zlib decompresses from the cut file" \
	cmp "$TM_TMP/trunc.byu.clean" "$b/trunc.byu.gz/raw"
check "broken/trunc.byu.gz: errors.txt names gzip and a compressed offset" \
	codec_error gzip "$b/trunc.byu.gz/errors.txt" "$SRC/broken/trunc.byu.gz" 0
check "broken/trunc.byu.gz: dump.txt is the reference decoder's dump of raw" \
	cmp <("$BYU_REFDEC" <"$TM_TMP/trunc.byu.clean") "$b/trunc.byu.gz/dump.txt"

check "broken/trunc.trace.gz: raw is a prefix of the trace" \
	is_prefix "$b/trunc.trace.gz/raw" "$SRC/a/gen.trace"
check "broken/trunc.trace.gz: raw is all zlib decompresses from the cut file" \
	cmp "$TM_TMP/trunc.trace.clean" "$b/trunc.trace.gz/raw"
check "broken/trunc.trace.gz: errors.txt names gzip and a compressed offset" \
	codec_error gzip "$b/trunc.trace.gz/errors.txt" "$SRC/broken/trunc.trace.gz" 0
check "broken/trunc.trace.gz: the model's expectation of the clean prefix" \
	"$PY" "$EXPECT" expect "$TM_TMP/trunc.trace.clean" "$TM_TMP/exp.trunc" trunc
# compare_but_errors: the model's compare, but for its lines on errors (the cut file has one
# the clean prefix has not); fails when the compare does or leaves no line (pipefail).
compare_but_errors() {
	"$PY" "$EXPECT" compare "$@" | grep -v -e 'errors.txt' -e 'stats.json errors'
}
check_compared "broken/trunc.trace.gz" compare_but_errors "$TM_TMP/exp.trunc" \
	"$b/trunc.trace.gz" broken/trunc.trace.gz

# Flipped bytes inside deflate data usually decode to other bytes and surface only at the
# member's CRC check: raw then holds what gzip itself writes before its error (formats.md#gzip),
# and errors.txt says the member's bytes are not all right.
zcat "$SRC/broken/corrupt.byu.gz" >"$TM_TMP/corrupt.zcat" 2>/dev/null || true
check "broken/corrupt.byu.gz: raw is what zcat writes before its error" \
	cmp "$TM_TMP/corrupt.zcat" "$b/corrupt.byu.gz/raw"
check "broken/corrupt.byu.gz: errors.txt says the data before the error is suspect" \
	grep -q "not all right" "$b/corrupt.byu.gz/errors.txt"
check "broken/corrupt.byu.gz: errors.txt names gzip and a compressed offset past the damage" \
	codec_error gzip "$b/corrupt.byu.gz/errors.txt" "$SRC/broken/corrupt.byu.gz" "$CORRUPT_AT"
check "broken/corrupt.byu.gz: dump.txt is the reference decoder's dump of raw" \
	cmp <("$BYU_REFDEC" <"$b/corrupt.byu.gz/raw") "$b/corrupt.byu.gz/dump.txt"

check "broken/stored.byu.gz: raw is exactly the blocks before the broken one" \
	cmp "$TM_TMP/stored.byu.clean" "$b/stored.byu.gz/raw"
check "broken/stored.byu.gz: errors.txt names gzip and the broken block's offset or later" \
	codec_error gzip "$b/stored.byu.gz/errors.txt" "$SRC/broken/stored.byu.gz" "$STORED_AT"

check "broken/garbage.byu.gz: raw is the whole trace" cmp "$SRC/a/prog.byu" "$b/garbage.byu.gz/raw"
check "broken/garbage.byu.gz: errors.txt names gzip and the garbage's offset" \
	codec_error gzip "$b/garbage.byu.gz/errors.txt" "$SRC/broken/garbage.byu.gz" "$GZSIZE"
check "broken/garbage.byu.gz: dump.txt equals the plain trace's" \
	cmp "$MNT/a/prog.byu/dump.txt" "$b/garbage.byu.gz/dump.txt"
cd "$SRC" || exit 1
bad=
for t in trunc.byu.gz trunc.trace.gz corrupt.byu.gz stored.byu.gz garbage.byu.gz; do
	for view in raw dump.txt errors.txt stats.json; do
		"$TRACEMOUNT" cat "broken/$t" "$view" >"$TM_TMP/cat.out" 2>/dev/null
		cmp -s "$TM_TMP/cat.out" "$b/$t/$view" || bad="$bad $t/$view"
	done
done
cd - >/dev/null || exit 1
check_eq "broken: tracemount cat gives the mounted raw, dump.txt, errors.txt, stats.json" "" "$bad"
check "daemon still running after the broken files" kill -0 "$TM_DAEMON_PID"

for t in $PLAIN; do
	echo "--- $t"
	for v in a fast multi flush headers; do
		g=$MNT/$v/$t.gz
		check "$v/$t.gz is a folder keeping the source's name" test -d "$g"
		one_pass "$MNT/a/$t" "$g"
		check "$v/$t.gz: raw equals zcat's output" cmp <(zcat "$SRC/$v/$t.gz") "$g/raw"
		same_views "$v/$t.gz" "$MNT/a/$t" "$g"
		check_eq "$v/$t.gz: stats.json source names the .gz" "$t.gz" "$("$PY" -c 'import json, sys
print(json.load(open(sys.argv[1])).get("source"))' "$g/stats.json" 2>&1)"
	done
done
if [ -d "$SRC/course" ]; then
	check "course/gcc-1K.trace.gz: raw equals zcat's output" \
		cmp <(zcat "$SRC/course/gcc-1K.trace.gz") "$MNT/course/gcc-1K.trace.gz/raw"
	same_views course/gcc-1K.trace.gz "$MNT/a/gcc-1K.trace" "$MNT/course/gcc-1K.trace.gz"
fi
for t in prog.byu gen.trace; do
	check "magic/$t (gzip data, plain name) is a trace folder" test -d "$MNT/magic/$t"
	check "magic/$t: raw is the decompressed trace" cmp "$SRC/a/$t" "$MNT/magic/$t/raw"
	same_views "magic/$t" "$MNT/a/$t" "$MNT/magic/$t"
done

check "notgz/prog.byu.gz (not gzip) is a trace folder" test -d "$MNT/notgz/prog.byu.gz"
check "notgz/prog.byu.gz: raw is the file" cmp "$SRC/a/prog.byu" "$MNT/notgz/prog.byu.gz/raw"
same_views "notgz/prog.byu.gz" "$MNT/a/prog.byu" "$MNT/notgz/prog.byu.gz"

# `tracemount cat` and `tracemount ls` on the .gz files, from SOURCE.
cd "$SRC" || exit 1
for t in $PLAIN; do
	# report.html, every trace's page in the mount, is no view: cat does not give it
	(cd "$MNT/a/$t.gz" && find . -type f ! -path ./report.html | sed 's|^\./||' |
		LC_ALL=C sort) >"$TM_TMP/views"
	# every view of two traces, the main views and a conversion of the others (each
	# `tracemount cat` indexes the trace anew)
	case $t in
	prog.byu | gen.trace) cp "$TM_TMP/views" "$TM_TMP/catviews" ;;
	*)
		{
			printf '%s\n' raw dump.txt stats.json errors.txt
			grep -m 1 '^convert/' "$TM_TMP/views"
		} >"$TM_TMP/catviews"
		;;
	esac
	check "a/$t.gz: views to try with tracemount cat" test -s "$TM_TMP/catviews"
	bad=
	while read -r view; do
		"$TRACEMOUNT" cat "a/$t.gz" "$view" >"$TM_TMP/cat.out" 2>"$TM_TMP/cat.err" &&
			cmp -s "$TM_TMP/cat.out" "$MNT/a/$t.gz/$view" || bad="$bad $view"
	done <"$TM_TMP/catviews"
	check_eq "a/$t.gz: tracemount cat of the views tried gives the mounted bytes" "" "$bad"
	"$TRACEMOUNT" ls "a/$t.gz" >"$TM_TMP/ls.out"
	check_eq "a/$t.gz: tracemount ls exits 0" 0 "$?"
	check_eq "a/$t.gz: tracemount ls lists the views with their stat sizes" \
		"$(cd "$MNT/a/$t.gz" && xargs stat -c '%s %n' <"$TM_TMP/views")" \
		"$(awk '{ print $1, $2 }' "$TM_TMP/ls.out" | LC_ALL=C sort -k 2)"
done
cd - >/dev/null || exit 1

# The 50 MB three-member trace: whole raw, then 4 KiB dd reads at random offsets.
echo "--- big"
bg=$MNT/big/big.byu.gz
bp=$MNT/big/big.byu
check "big.byu.gz: raw equals the trace" cmp "$SRC/big/big.byu" "$bg/raw"
check_eq "big.byu.gz: dump.txt has the size of the plain trace's" "$(stat -c %s "$bp/dump.txt")" \
	"$(stat -c %s "$bg/dump.txt")"
for view in raw dump.txt; do
	size=$(stat -c %s "$bp/$view")
	bad=
	for _ in $(seq 1 50); do
		off=$(((RANDOM * 32768 + RANDOM) * 4 % (size - 4096)))
		cmp -s <(dd if="$bg/$view" iflag=skip_bytes skip="$off" bs=4096 count=1 status=none) \
			<(dd if="$bp/$view" iflag=skip_bytes skip="$off" bs=4096 count=1 status=none) ||
			bad="$bad $off"
	done
	check_eq "big.byu.gz: 50 reads of 4 KiB at random offsets of $view equal the plain view's" \
		"" "$bad"
done
check "big.byu.gz: the last 4 KiB of dump.txt equal the plain view's" \
	cmp <(tail -c 4096 "$bg/dump.txt") <(tail -c 4096 "$bp/dump.txt")

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm

# Damaged after indexing, size and time kept: a gzip of stored blocks (Python's level 0), whose
# flipped bytes decode silently to other bytes from a point inside the member.
echo "--- damaged after indexing"
mkdir -p "$TM_TMP/damage"
"$GEN_CIS501" --lines 130000 --seed "$SEED" >"$TM_TMP/damage.trace"
"$PY" -c 'import gzip, sys
open(sys.argv[2], "wb").write(gzip.compress(open(sys.argv[1], "rb").read(), 0, mtime=0))' \
	"$TM_TMP/damage.trace" "$TM_TMP/damage/stored.trace.gz"
damaged_after_indexing "$TM_TMP/damage" stored.trace.gz "$TM_TMP/damage.trace" \
	"$(($(stat -c %s "$TM_TMP/damage/stored.trace.gz") / 2))"
finish
