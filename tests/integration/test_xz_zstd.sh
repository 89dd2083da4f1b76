#!/bin/bash
# xz and zstd traces (BYU from gen_byu, TT6 from gen_tt6, CIS501 from gen_cis501 and the real
# gcc-1K.trace) through one mount holding plain and compressed copies side by side, each in one
# block and one frame, and BYU and CIS501 also compressed in the other ways found in the wild:
#   - xz: one block (`xz`), many blocks (`xz -T2 --block-size=64KiB`, pixz when installed),
#     two streams with stream padding between them and different checks, xz data under the
#     plain name (found by its magic);
#   - zstd: one frame (`zstd`), many frames (parts compressed apart and concatenated, as pzstd
#     writes them), the seekable format (the same frames and a seek table in a skippable frame),
#     zstd data under the plain name; pzstd's frames and skippable frames for a large trace;
#   - 12-byte BYU records named .byu.xz and .byu.zst, recognised by their decompressed head.
# Expectations come from the plain files, xz, zstd and Python's lzma, never from tracemount:
#
# - every compressed folder lists the views of the plain one with the same sizes and bytes
#   (stats.json but its "source"), raw is `xz -dc`'s or `zstd -dc`'s output, and errors.txt is
#   empty when the plain trace's is;
# - a 9 MB BYU trace, longer than one piece (4 MiB), in one block and one frame: errors.txt says
#   once, in a note, that random reads decode from the start and how to recompress (stats.json
#   counts it in notes, not errors, and so does the status); the many-block and
#   many-frame copies say nothing; 40 reads of 4 KiB by dd at random offsets of raw and
#   dump.txt, and the last 4 KiB, equal the plain views';
# - broken files: cut in half, 16 bytes flipped in the middle, garbage after the end: raw is a
#   prefix of the trace (for the cut xz file exactly what Python's lzma decompresses from it,
#   for the cut zstd file what `zstd -dc` writes before its error; garbage: all of it), errors.txt
#   names the codec and a compressed offset within the file, dump.txt is the reference decoder's
#   dump of raw, and the daemon and the other traces are unaffected;
# - one xz block and one zstd frame indexed, then 16 bytes flipped in the middle with the size
#   and time kept: reads there fail with EIO, errors.txt says it was indexed anew
#   (damaged_after_indexing in lib.sh).
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
mkdir -p "$SRC/a" "$SRC/xz1" "$SRC/xzm" "$SRC/xzs" "$SRC/zst1" "$SRC/zstm" "$SRC/seek" \
	"$SRC/magic" "$SRC/big" "$SRC/broken"

"$GEN_BYU" -n 100000 -s 81 -m mixed >"$SRC/a/prog.byu"
"$GEN_TT6" --format tt6 --steps 20000 --seed 82 >"$SRC/a/prog.tt6"
"$GEN_CIS501" --lines 30000 --seed 84 --bad 12 >"$SRC/a/bad.trace"
: >"$SRC/a/empty.byu"
PLAIN="prog.byu prog.tt6 bad.trace empty.byu"
if [ -f "${REALTRACES:-}/cis501/gcc-1K.trace" ]; then
	cp "$REALTRACES/cis501/gcc-1K.trace" "$SRC/a/"
	PLAIN="$PLAIN gcc-1K.trace"
else
	skip_part realtraces "${REALTRACES:-\$REALTRACES}/cis501 not found: the real CIS501 trace is not tested"
fi

# frames IN OUT [SEEKABLE]: IN in parts of 100 KB, each compressed on its own (one frame each),
# concatenated; with SEEKABLE, ended by the seekable format's seek table (a skippable frame:
# per frame its compressed and decompressed sizes, then the frame count, a descriptor byte and
# the seekable magic).
frames() {
	local part table=$TM_TMP/seek.table
	rm -rf "$TM_TMP/parts" && mkdir "$TM_TMP/parts"
	split -b 100000 -a 4 "$1" "$TM_TMP/parts/p"
	: >"$2"
	: >"$table"
	for part in "$TM_TMP"/parts/p*; do
		zstd -q -c "$part" >"$part.zst"
		cat "$part.zst" >>"$2"
		printf '%s %s\n' "$(wc -c <"$part.zst")" "$(wc -c <"$part")" >>"$table"
	done
	[ -n "${3:-}" ] || return 0
	"$PY" - "$table" >>"$2" <<'EOF'
import struct, sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
body = b"".join(struct.pack("<II", c, d) for c, d in rows)
body += struct.pack("<IBI", len(rows), 0, 0x8F92EAB1)
sys.stdout.buffer.write(struct.pack("<II", 0x184D2A5E, len(body)) + body)
EOF
}

# two_streams IN OUT: IN cut in two, the first part xz with CRC32 checks, then four bytes of
# stream padding, the second with SHA-256 checks.
two_streams() {
	local size half
	size=$(wc -c <"$1")
	half=$((size / 2 + 1))
	{
		head -c "$half" "$1" | xz -c --check=crc32
		printf '\0\0\0\0'
		tail -c +$((half + 1)) "$1" | xz -c --check=sha256
	} >"$2"
}

PIXZ=
if command -v pixz >/dev/null; then
	PIXZ=yes
	mkdir -p "$SRC/pixz"
else
	skip_part tool:pixz "pixz not installed: its many-block files are not tested"
fi
# Every trace in one block and one frame; BYU and CIS501 in every other way.
for t in $PLAIN; do
	xz -c "$SRC/a/$t" >"$SRC/xz1/$t.xz"
	zstd -q -c "$SRC/a/$t" >"$SRC/zst1/$t.zst"
done
for t in prog.byu bad.trace; do
	xz -c -T2 --block-size=64KiB "$SRC/a/$t" >"$SRC/xzm/$t.xz"
	two_streams "$SRC/a/$t" "$SRC/xzs/$t.xz"
	frames "$SRC/a/$t" "$SRC/zstm/$t.zst"
	frames "$SRC/a/$t" "$SRC/seek/$t.zst" seekable
	[ -n "$PIXZ" ] && pixz -t -p 2 <"$SRC/a/$t" >"$SRC/pixz/$t.xz"
done
xz -c "$SRC/a/prog.byu" >"$SRC/magic/prog.byu"
# 12-byte BYU records under a .byu name: detected by the decompressed head's content.
mkdir -p "$SRC/byu12"
"$GEN_BYU12" -n 50000 -s 86 >"$TM_TMP/twelve.byu"
xz -c "$TM_TMP/twelve.byu" >"$SRC/byu12/twelve.byu.xz"
zstd -q -c "$TM_TMP/twelve.byu" >"$SRC/byu12/twelve.byu.zst"
zstd -q -c "$SRC/a/bad.trace" >"$SRC/magic/bad.trace"
VARIANTS="xz1 xzm xzs zst1 zstm seek${PIXZ:+ pixz}"

# ext VARIANT: the suffix of its files.
ext() {
	case $1 in
	zst1 | zstm | seek) echo zst ;;
	*) echo xz ;;
	esac
}
# unpack FILE: the decompressed bytes, by xz or zstd.
unpack() {
	case $1 in
	*.zst) zstd -q -dc "$1" ;;
	*) xz -dc "$1" ;;
	esac
}

check_eq "xzm/prog.byu.xz holds many blocks" yes \
	"$(xz -lvv "$SRC/xzm/prog.byu.xz" | awk '/Blocks:/ { print ($2 > 3 ? "yes" : $2) }')"
check_eq "xzs/prog.byu.xz holds two streams" 2 \
	"$(xz -lvv "$SRC/xzs/prog.byu.xz" | awk '/Streams:/ { print $2 }')"
check_eq "zstm/prog.byu.zst holds 6 frames" 6 \
	"$(zstd -lv "$SRC/zstm/prog.byu.zst" 2>&1 | awk '/Zstandard Frames:/ { print $NF }')"
for t in $PLAIN; do
	for v in $VARIANTS; do
		f=$SRC/$v/$t.$(ext "$v")
		[ -f "$f" ] || continue
		check "$v/$t.$(ext "$v") decompresses (xz, zstd) to a/$t" cmp <(unpack "$f") "$SRC/a/$t"
	done
done

# A 9 MB BYU trace: more than two pieces.
"$GEN_BYU" -n 1500000 -s 85 -m mixed >"$SRC/big/big.byu"
xz -c -0 "$SRC/big/big.byu" >"$SRC/big/one.byu.xz"
xz -c -0 -T2 --block-size=1MiB "$SRC/big/big.byu" >"$SRC/big/many.byu.xz"
zstd -q -c "$SRC/big/big.byu" >"$SRC/big/one.byu.zst"
frames "$SRC/big/big.byu" "$SRC/big/many.byu.zst"
pzstd -q -p 2 -c "$SRC/big/big.byu" >"$SRC/big/pzstd.byu.zst"

# Broken files.
for c in xz zst; do
	case $c in
	xz) xz -c "$SRC/a/prog.byu" >"$TM_TMP/prog.byu.$c" ;;
	zst) zstd -q -c "$SRC/a/prog.byu" >"$TM_TMP/prog.byu.$c" ;;
	esac
	size=$(wc -c <"$TM_TMP/prog.byu.$c")
	head -c $((size / 2)) "$TM_TMP/prog.byu.$c" >"$SRC/broken/trunc.byu.$c"
	cp "$TM_TMP/prog.byu.$c" "$SRC/broken/corrupt.byu.$c"
	printf '\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef\xde\xad\xbe\xef' |
		dd of="$SRC/broken/corrupt.byu.$c" bs=1 seek=$((size / 2)) conv=notrunc status=none
	{
		cat "$TM_TMP/prog.byu.$c"
		printf 'garbage after the end\n'
	} >"$SRC/broken/garbage.byu.$c"
done
XZSIZE=$(wc -c <"$TM_TMP/prog.byu.xz")
ZSTSIZE=$(wc -c <"$TM_TMP/prog.byu.zst")
# What Python's lzma decompresses from the cut xz file (a cut stream raises no error).
"$PY" - "$SRC/broken/trunc.byu.xz" "$TM_TMP/trunc.xz.clean" <<'EOF'
import lzma, sys
d = lzma.LZMADecompressor()
open(sys.argv[2], "wb").write(d.decompress(open(sys.argv[1], "rb").read()))
EOF
zstd -q -dc "$SRC/broken/trunc.byu.zst" >"$TM_TMP/trunc.zst.clean" 2>/dev/null
check "the cut xz file decompresses to a part of the trace" \
	test "$(wc -c <"$TM_TMP/trunc.xz.clean")" -lt "$(wc -c <"$SRC/a/prog.byu")"

mount_tm "$SRC"
MNT=$TM_MNT

echo "--- broken"
b=$MNT/broken
for c in xz zst; do
	name=$([ $c = xz ] && echo xz || echo zstd)
	csize=$([ $c = xz ] && echo "$XZSIZE" || echo "$ZSTSIZE")
	for t in trunc corrupt garbage; do
		f=$b/$t.byu.$c
		check "broken/$t.byu.$c is a trace folder" test -d "$f"
		[ $t = corrupt ] ||
			check "broken/$t.byu.$c: raw is a prefix of the trace" \
				is_prefix "$f/raw" "$SRC/a/prog.byu"
		check "broken/$t.byu.$c: dump.txt is the reference decoder's dump of raw" \
			cmp <("$BYU_REFDEC" <"$f/raw") "$f/dump.txt"
	done
	# flipped bytes decode to other bytes until the decoder or a check notices: raw then holds
	# what xz and zstd themselves write before their error, and errors.txt says so
	unpack "$SRC/broken/corrupt.byu.$c" >"$TM_TMP/corrupt.$c.out" 2>/dev/null
	check "broken/corrupt.byu.$c: raw is what $name -dc writes before its error" \
		cmp "$TM_TMP/corrupt.$c.out" "$b/corrupt.byu.$c/raw"
	check "broken/trunc.byu.$c: errors.txt names $name and a compressed offset" \
		codec_error "$name" "$b/trunc.byu.$c/errors.txt" "$SRC/broken/trunc.byu.$c" 0
	check "broken/corrupt.byu.$c: errors.txt names $name and an offset past the damage" \
		codec_error "$name" "$b/corrupt.byu.$c/errors.txt" "$SRC/broken/corrupt.byu.$c" \
		$((csize / 2))
	check "broken/corrupt.byu.$c: errors.txt says the bytes before it are suspect" \
		grep -q "not all right\|checksum" "$b/corrupt.byu.$c/errors.txt"
	check "broken/corrupt.byu.$c: raw stops short of the trace" \
		test "$(stat -c %s "$b/corrupt.byu.$c/raw")" -lt "$(stat -c %s "$SRC/a/prog.byu")"
	check "broken/garbage.byu.$c: raw is the whole trace" \
		cmp "$SRC/a/prog.byu" "$b/garbage.byu.$c/raw"
	check "broken/garbage.byu.$c: errors.txt names $name and the garbage's offset" \
		codec_error "$name" "$b/garbage.byu.$c/errors.txt" "$SRC/broken/garbage.byu.$c" "$csize"
done
check "broken/trunc.byu.xz: raw is all Python's lzma decompresses from the cut file" \
	cmp "$TM_TMP/trunc.xz.clean" "$b/trunc.byu.xz/raw"
check "broken/trunc.byu.zst: raw is all zstd -dc writes from the cut file" \
	cmp "$TM_TMP/trunc.zst.clean" "$b/trunc.byu.zst/raw"
check "daemon still running after the broken files" kill -0 "$TM_DAEMON_PID"

for t in $PLAIN; do
	echo "--- $t"
	for v in $VARIANTS; do
		name=$v/$t.$(ext "$v")
		[ -f "$SRC/$name" ] || continue
		one_pass "$MNT/a/$t" "$MNT/$name"
		check "$name: raw is the decompressed file" cmp <(unpack "$SRC/$name") "$MNT/$name/raw"
		same_views "$name" "$MNT/a/$t" "$MNT/$name"
	done
done
check "magic/prog.byu (xz data, plain name): raw is the trace" \
	cmp "$SRC/a/prog.byu" "$MNT/magic/prog.byu/raw"
same_views magic/prog.byu "$MNT/a/prog.byu" "$MNT/magic/prog.byu"
check "magic/bad.trace (zstd data, plain name): raw is the trace" \
	cmp "$SRC/a/bad.trace" "$MNT/magic/bad.trace/raw"
same_views magic/bad.trace "$MNT/a/bad.trace" "$MNT/magic/bad.trace"

for f in twelve.byu.xz twelve.byu.zst; do
	check_eq "byu12/$f: detected as 12-byte BYU by its decompressed head" True \
		"$(json_get "$MNT/byu12/$f/stats.json" '"byu12" in d')"
	check "byu12/$f: errors.txt notes the .byu name" grep -q "named .byu" "$MNT/byu12/$f/errors.txt"
	check "byu12/$f: raw is the trace" cmp "$TM_TMP/twelve.byu" "$MNT/byu12/$f/raw"
done

# `tracemount cat` and `tracemount ls` of a compressed trace from SOURCE.
check_cli "$SRC" xz1/prog.byu.xz "$MNT/xz1/prog.byu.xz" raw dump.txt stats.json errors.txt
check_cli "$SRC" zstm/bad.trace.zst "$MNT/zstm/bad.trace.zst" raw dump.txt stats.json errors.txt

echo "--- big"
bp=$MNT/big/big.byu
for f in one.byu.xz many.byu.xz one.byu.zst many.byu.zst pzstd.byu.zst; do
	g=$MNT/big/$f
	case $f in
	one.*)
		check_eq "big/$f: errors.txt says once, as a note, that random reads decode from the start" \
			1 "$(grep -c '^note: .*random reads decode from the start; recompress with' \
				"$g/errors.txt")"
		check_eq "big/$f: a note is no error: stats.json errors 0, notes 1" "0 1" \
			"$(json_get "$g/stats.json" 'd["errors"], d["notes"]' | tr -d '(),')"
		;;
	*) check_eq "big/$f: errors.txt is empty" "" "$(head -c 300 "$g/errors.txt")" ;;
	esac
	for view in raw dump.txt; do
		size=$(stat -c %s "$bp/$view")
		bad=
		for _ in $(seq 1 40); do
			off=$(random_below $((size - 4096)))
			dd_same "$g/$view" "$bp/$view" "$off" 4096 2>/dev/null || bad="$bad $off"
		done
		check_eq "big/$f: 40 reads of 4 KiB at random offsets of $view equal the plain view's" \
			"" "$bad"
		check "big/$f: the last 4 KiB of $view equal the plain view's" \
			cmp <(tail -c 4096 "$g/$view") <(tail -c 4096 "$bp/$view")
	done
	check "big/$f: raw read whole equals the trace" cmp "$SRC/big/big.byu" "$g/raw"
done

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm

# The big traces alone (their index files now written): the status counts the notes of the one
# block and the one frame apart, and no problem.
mount_tm "$SRC/big"
cat "$TM_MNT"/*/stats.json >/dev/null
check "big/: the status counts 2 notes and no problem" grep -qF \
	"; 0 problems in the errors.txt of 0 traces, 2 notes in 2 traces; " \
	"$TM_MNT/.tracemount/status"
unmount_tm

# Damaged after indexing, size and time kept: one xz block and one zstd frame (with their checks,
# read only at the block's and frame's end), damaged in a piece that is not the last.
echo "--- damaged after indexing"
mkdir -p "$TM_TMP/damage"
"$GEN_CIS501" --lines 130000 --seed "$SEED" >"$TM_TMP/damage.trace"
xz -0 -c "$TM_TMP/damage.trace" >"$TM_TMP/damage/one.trace.xz"
zstd -q --no-compress-literals -c "$TM_TMP/damage.trace" >"$TM_TMP/damage/one.trace.zst"
for z in one.trace.xz one.trace.zst; do
	damaged_after_indexing "$TM_TMP/damage" "$z" "$TM_TMP/damage.trace" \
		"$(($(stat -c %s "$TM_TMP/damage/$z") / 2))"
done
finish
