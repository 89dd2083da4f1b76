#!/bin/bash
# Memory stays bounded on hostile input, with -o memory=1M:
# - a sparse spixcounts file whose header claims 5,000,000 blocks (45 MB apparent, nothing on
#   disk): more blocks than tracemount holds, said in errors.txt, its tables empty;
# - one of 2,000,000 blocks: every view whole and right (blocks.txt line by line against the
#   file's own fields), its tables kept deflated, not whole;
# - a gzip trace written as one deflate block of 24 MiB (a span of that size): read at its
#   end, its middle and its start, byte for byte, a piece at a time.
# The daemon's peak resident memory stays within a fixed bound (checked for the daemon as
# built for use, not under a sanitizer or valgrind), and its memory after the index passes
# within the budget plus its indexes (the status file's index sizes) plus a fixed overhead.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
mkdir -p "$src"
# sparse_spix PATH NBB: a big-endian spixcounts header claiming NBB blocks, the rest a hole.
sparse_spix() {
	"$PY" - "$1" "$2" <<'EOF'
import struct, sys
path, nbb = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as f:
    f.write(struct.pack(">IIII", 0x62620011, 0, 0, nbb))
    f.truncate(16 + ((nbb + 3) & ~3) + 8 * nbb)
EOF
}
sparse_spix "$src/huge.bb" 5000000
sparse_spix "$src/large.bb" 2000000

# One fixed-Huffman deflate block: a zero byte, then matches of 258 at distance 1, to 48 MiB
# of zeros less a tail of 0x01 bytes, as literals, so that the end is told from the start.
"$PY" - "$src/oneblock.byu.gz" <<'EOF'
import struct, sys, zlib
ZEROS, ONES = 24 << 20, 600
bits, nbits, out = 0, 0, bytearray()
def put(value, n):  # LSB-first bit writer
    global bits, nbits
    bits |= value << nbits
    nbits += n
    while nbits >= 8:
        out.append(bits & 0xff)
        bits >>= 8
        nbits -= 8
def put_code(code, n):  # Huffman codes go most significant bit first
    put(int(format(code, "0%db" % n)[::-1], 2), n)
def literal(b):
    if b < 144:
        put_code(0x30 + b, 8)
    else:
        put_code(0x190 + b - 144, 9)
put(1, 1); put(1, 2)  # BFINAL, fixed Huffman
literal(0)
left = ZEROS - 1
while left >= 258 + 3:
    put_code(0xC5, 8)   # length code 285: 258
    put_code(0, 5)      # distance code 0: 1
    left -= 258
for _ in range(left):
    literal(0)
for _ in range(ONES):
    literal(1)
put_code(0, 7)  # end of block
if nbits:
    put(0, 8 - nbits)
data = b"\0" * ZEROS + b"\1" * ONES
with open(sys.argv[1], "wb") as f:
    f.write(b"\x1f\x8b\x08\x00\0\0\0\0\x00\x03" + bytes(out))
    f.write(struct.pack("<II", zlib.crc32(data), len(data) & 0xffffffff))
EOF
check "the one-block gzip file decompresses to 24 MiB of zeros and 600 ones" \
	test "$(gzip -dc "$src/oneblock.byu.gz" | tr -d '\0' | wc -c)" = 600

mount_tm "$src" -o memory=1M,cache=none
M=$TM_MNT
vm() {
	grep "^$1:" "/proc/$TM_DAEMON_PID/status" | awk '{ print $2 }'
}

# 5,000,000 blocks: more than held, said, nothing rendered.
check "huge.bb: errors.txt says the blocks are more than tracemount holds" \
	grep -q '^5000000 blocks, more than the 4194304 tracemount holds: summary.txt, blocks.txt and dump.txt are empty$' \
	"$M/huge.bb/errors.txt"
check_eq "huge.bb: summary.txt, blocks.txt and dump.txt are empty" "0 0 0" \
	"$(stat -c %s "$M/huge.bb/summary.txt" "$M/huge.bb/blocks.txt" "$M/huge.bb/dump.txt" | paste -sd' ')"
check_eq "huge.bb: stats.json keeps the header's count" 5000000 \
	"$(json_get "$M/huge.bb/stats.json" 'd["spixcounts"]["blocks_in_header"]')"

# 2,000,000 blocks of length 0 and counters 0: every line "INDEX 0x00000000 0 0 0".
check_eq "large.bb: blocks.txt has a line per block" 2000000 "$(wc -l <"$M/large.bb/blocks.txt")"
check_eq "large.bb: every line is the block's index and its zero fields" "" \
	"$(awk '$0 != (NR - 1) " 0x00000000 0 0 0" { print NR; exit }' "$M/large.bb/blocks.txt")"
check "large.bb: dump.txt is blocks.txt" cmp -s "$M/large.bb/dump.txt" "$M/large.bb/blocks.txt"
check "large.bb: a read at an offset deep in blocks.txt" \
	test "$(dd if="$M/large.bb/blocks.txt" bs=4096 skip=10000 count=1 status=none | wc -c)" = 4096
index_bytes=$(grep -P '^large\.bb\t' "$M/.tracemount/status" | cut -f5)
check "large.bb: its index holds the tables deflated: $index_bytes bytes for 2 x 49 MB of text" \
	test "${index_bytes:-999999999}" -lt $((24 << 20))

# The one-block gzip: one span, read a piece at a time at its end, middle and start.
size=$(stat -c %s "$M/oneblock.byu.gz/raw")
check_eq "oneblock: raw is the decompressed size" $(((24 << 20) + 600)) "$size"
check_eq "oneblock: its last 600 bytes are the ones" \
	"$(printf '\1%.0s' $(seq 1 600) | od -An -tx1 | md5sum)" \
	"$(tail -c 600 "$M/oneblock.byu.gz/raw" | od -An -tx1 | md5sum)"
check_eq "oneblock: a read in its middle (O_DIRECT) is zeros" 0 \
	"$(dd if="$M/oneblock.byu.gz/raw" bs=65536 skip=200 count=1 iflag=direct status=none | tr -d '\0' | wc -c)"
check_eq "oneblock: the whole of raw equals gzip -dc" "$(gzip -dc "$src/oneblock.byu.gz" | md5sum)" \
	"$(md5sum <"$M/oneblock.byu.gz/raw")"
check_eq "oneblock: dump.txt has a line per 6-byte record" $((((24 << 20) + 600) / 6)) \
	"$(wc -l <"$M/oneblock.byu.gz/dump.txt")"

peak=$(vm VmHWM)
rss=$(vm VmRSS)
indexes=$(grep -v '^#' "$M/.tracemount/status" | tail -n +2 | cut -f5 | grep -v - | paste -sd+ | bc)
echo "daemon: peak $peak KiB, now $rss KiB; indexes $indexes bytes; budget 1 MiB"
if daemon_plain; then
	# the largest pass: 2,000,000 blocks at 33 bytes while ranked (doc/architecture.md)
	check "peak resident memory within 96 MiB ($peak KiB)" test "$peak" -lt $((96 << 10))
	# after the passes: the budget, the indexes, and the fixed overhead: 32 MiB for the
	# daemon itself and the free memory its heap keeps (the trim threshold, 16 MiB)
	check "resident memory within budget + indexes + 32 MiB ($rss KiB)" \
		test "$rss" -lt $((1024 + indexes / 1024 + (32 << 10)))
else
	echo "memory bounds not checked under sanitizers or ${TM_DAEMON_WRAP:-a wrapper}"
fi
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
