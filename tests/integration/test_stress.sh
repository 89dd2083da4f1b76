#!/bin/bash
# Concurrency: 32 readers (tests/tools/stress.c) for TM_STRESS_SECONDS (default 20) on random
# views, offsets and lengths of eleven traces of every format, plain and gzip, and a sum, half
# of them O_DIRECT, with a cache budget far below the views' size (-o memory=16M) so chunks are
# evicted and decoded again all the time. Every byte read is compared with `tracemount cat`'s
# output for that view. The daemon's peak resident memory (VmHWM) beyond what it held once
# mounted must stay within the budget, plus the indexes (the sizes of their index files), plus
# 4 MiB per thread for what a worker holds beyond the budget (see doc/architecture.md, Memory).
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC" "$EXP"
"$GEN_BYU" -n 300000 -s 1 >"$SRC/a.byu"
"$GEN_BYU" -n 200000 -s 2 | gzip -1 >"$SRC/b.byu.gz"
"$GEN_TT6" --format tt6 --records 150000 --seed 3 >"$SRC/c.tt6"
"$GEN_TT6" --format tt6e --records 100000 --seed 4 | gzip >"$SRC/d.tt6e.gz"
"$GEN_CIS501" --lines 100000 --seed 5 | gzip >"$SRC/e.trace.gz"
"$GEN_TARMAC" --lines 80000 --seed 6 --dialect fastmodel --cpus 2 >"$SRC/f.tarmac"
"$GEN_TARMAC" --lines 60000 --seed 7 --dialect qemu4v >"$SRC/g.qemu4v"
"$GEN_BYU" -n 100 -s 8 >"$SRC/h.byu"
"$PY" "$(dirname "$0")/full_model.py" gen "$SRC/i.full" --steps 4000 --seed 9 --layout pad_thread
# two spixcounts files of one program, so SUM.spixcounts too
for k in 1 2; do
	"$PY" "$(dirname "$0")/spix_expect.py" write "$SRC/j$k.bb" le "$(seq 1 3000 |
		awk -v k=$k '{ printf "%s%d:%d:0", (NR > 1 ? "," : ""), $1 % 200 + 1, $1 * 13 * k }')"
done

MEMORY_MIB=16
THREADS=32
mount_tm "$SRC" -o memory=${MEMORY_MIB}M,cache="$TM_TMP/indexes"
vm() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$TM_DAEMON_PID/status"; }
mounted_kib=$(vm VmRSS)

# Every view of every trace (report.html, each trace's page, is no view: cat does not give it).
(cd "$TM_MNT" && find . -path ./.tracemount -prune -o -type f ! -name report.html -print |
	sed 's|^\./||' | LC_ALL=C sort) >"$TM_TMP/list"
cat_views "$SRC" "$TM_TMP/list" "$EXP"
echo "$(wc -l <"$TM_TMP/list") views, $(du -sm "$EXP" | cut -f1) MiB"
# Index every trace (a stat asks for a view's size), then take the daemon's memory as the
# baseline and start its peak (VmHWM) afresh: what the readers add is measured from there.
(cd "$TM_MNT" && xargs stat -c %s) <"$TM_TMP/list" >/dev/null
base_kib=$(vm VmRSS)
echo 5 >"/proc/$TM_DAEMON_PID/clear_refs"

"$STRESS" "$TM_TMP/list" "$TM_MNT" "$EXP" "$THREADS" "${TM_STRESS_SECONDS:-20}" "$SEED" \
	>"$TM_TMP/stress.out"
check_eq "$THREADS readers: every byte equals tracemount cat's" 0 "$?"
cat "$TM_TMP/stress.out"
bytes=$(awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "bytes") print $i }' "$TM_TMP/stress.out")
want_mib=$(daemon_plain && echo 100 || echo 1)
check "more than $want_mib MiB compared ($bytes bytes)" test "${bytes:-0}" -gt $((want_mib << 20))
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"

peak_kib=$(vm VmHWM)
index_kib=$(($(du -sk --apparent-size "$TM_TMP/indexes" | cut -f1)))
threads=$(ls "/proc/$TM_DAEMON_PID/task" | wc -l)
# Per thread (libfuse's workers, at most max_threads = 10, and ours), 5 MiB: libfuse's request
# buffer (1 MiB), the chunks a read holds while the budget is full (a decoded chunk and the
# rendered one being built, up to about 2.5 MiB, or a table's or a gzip span's piece being
# inflated), and the holes they leave in the heap. The baseline is the daemon after the index
# passes, which give their working memory back (malloc_trim).
allow_kib=$((MEMORY_MIB * 1024 + threads * 5120))
echo "memory: mounted $mounted_kib KiB, indexed $base_kib KiB (index files: $index_kib KiB)," \
	"peak $peak_kib KiB; budget $MEMORY_MIB MiB, $threads threads"
if ! daemon_plain; then
	echo "memory bound not checked under sanitizers or ${TM_DAEMON_WRAP:-a wrapper}"
else
	check "peak memory beyond the indexed daemon's, $((peak_kib - base_kib)) KiB, is within $allow_kib KiB" \
		test $((peak_kib - base_kib)) -le "$allow_kib"
fi
unmount_tm
finish
