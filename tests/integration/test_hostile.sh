#!/bin/bash
# The hostile-input matrix, through one real mount: for every format (BYU, TT6, TT6E, CIS501,
# Tarmac, QEMU4V, spixcounts), variants of a small clean generated trace: empty, one byte, cut at every
# byte (binary formats: every record boundary and every byte inside a record) or at every
# line end and mid-line (text formats), 64 KiB of random bytes with the format's extension,
# 4 KiB of random bytes appended, NUL bytes, CRLF line ends, a 100 MB line, a gzip copy cut
# in half and one with a corrupt byte, and the trace under another format's extension; and a
# longer trace of each format as .gz, .xz and .zst cut at four points each (raw must be every
# byte the cut data determine, by zlib, liblzma and `zstd -dc`, and every view read whole).
# hostile.py makes them and says what each must show: every view reads whole at its size,
# stats.json parses, a cut trace serves exactly the records before the cut and errors.txt
# names the byte offset of the partial record, and so on (see hostile.py). The clean traces
# read the same through the mount as `tracemount cat` gives before and after all of it, and
# the daemon stays up and exits cleanly.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
tm_seed
CLEAN=$TM_TMP/clean
SRC=$TM_TMP/src/traces
mkdir -p "$CLEAN" "$SRC"

"$GEN_BYU" -n 40 -s 7 >"$CLEAN/clean.byu"
"$GEN_TT6" --format tt6 --records 40 --seed 7 --clean --truth "$CLEAN/clean.tt6.truth" >"$CLEAN/clean.tt6"
"$GEN_TT6" --format tt6e --records 40 --seed 7 --clean --truth "$CLEAN/clean.tt6e.truth" \
	>"$CLEAN/clean.tt6e"
"$GEN_CIS501" --lines 40 --seed 7 >"$CLEAN/clean.trace"
"$GEN_TARMAC" --dialect fastmodel --lines 40 --seed 7 >"$CLEAN/clean.tarmac"
"$GEN_TARMAC" --dialect qemu4v --lines 40 --seed 7 >"$CLEAN/clean.qemu4v"
"$PY" "$HERE/spix_expect.py" write "$CLEAN/clean.bb" be \
	"$(seq 1 40 | awk '{ printf "%s%d:%d:%d", (NR > 1 ? "," : ""), $1 % 9 + 1, $1 * 7, $1 % 3 }')"

# Longer traces of every format for the compressed copies cut at several points: long enough
# for several deflate blocks, where a cut once left ISA-L's reader short of the index (issue 42).
"$GEN_BYU" -n 3000 -s 8 >"$CLEAN/big.byu"
"$GEN_TT6" --format tt6 --records 3000 --seed 8 >"$CLEAN/big.tt6"
"$GEN_TT6" --format tt6e --records 3000 --seed 8 >"$CLEAN/big.tt6e"
"$GEN_CIS501" --lines 2000 --seed 8 >"$CLEAN/big.trace"
"$GEN_TARMAC" --dialect fastmodel --lines 2000 --seed 8 >"$CLEAN/big.tarmac"
"$GEN_TARMAC" --dialect qemu4v --lines 2000 --seed 8 >"$CLEAN/big.qemu4v"
"$PY" "$HERE/spix_expect.py" write "$CLEAN/big.bb" be \
	"$(seq 1 3000 | awk '{ printf "%s%d:%d:%d", (NR > 1 ? "," : ""), $1 % 9 + 1, $1 * 7, $1 % 3 }')"

n=$("$PY" "$HERE/hostile.py" make "$CLEAN" "$SRC" "$SEED")
echo "hostile inputs: $n traces"

CLEANS="byu/clean.byu tt6/clean.tt6 tt6e/clean.tt6e cis501/clean.trace tarmac/clean.tarmac
qemu4v/clean.qemu4v spixcounts/clean.bb"

# cat_dumps DIR: the clean traces' dump.txt by `tracemount cat`, run from SOURCE.
cat_dumps() {
	mkdir -p "$1"
	for t in $CLEANS; do
		(cd "$SRC" && "$TRACEMOUNT" cat "$t" dump.txt) >"$1/${t%%/*}" || fail "cat $t"
	done
}
cat_dumps "$TM_TMP/cat"

mount_tm "$SRC" -o cache=none
for t in $CLEANS; do
	check "before: $t/dump.txt = tracemount cat" cmp -s "$TM_MNT/$t/dump.txt" "$TM_TMP/cat/${t%%/*}"
done
check_compared "hostile inputs" "$PY" "$HERE/hostile.py" check "$SRC" "$TM_MNT"
check "the daemon is still running" kill -0 "$TM_DAEMON_PID"
for t in $CLEANS; do
	check "after: $t/dump.txt = tracemount cat" cmp -s "$TM_MNT/$t/dump.txt" "$TM_TMP/cat/${t%%/*}"
done
unmount_tm
finish
