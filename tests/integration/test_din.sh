#!/bin/bash
# convert/NAME.din of every format, line by line against stats.json's "din" object (the totals
# a Dinero IV run on it sees): fetches are its "2" lines, reads its "0", writes its "1", and
# it has no other line. Generated traces of every format with a din, and the real CIS501 and
# Tarmac traces where ../shared is beside the checkout.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
mkdir -p "$src"
"$GEN_BYU" -n 50000 -s 1 >"$src/a.byu"
"$GEN_TT6" --format tt6 --records 40000 --seed 2 >"$src/b.tt6"
"$GEN_TT6" --format tt6e --records 40000 --seed 3 | gzip >"$src/c.tt6e.gz"
"$GEN_CIS501" --lines 40000 --seed 4 >"$src/d.trace"
"$GEN_TARMAC" --lines 40000 --seed 5 --dialect fastmodel --cpus 2 >"$src/e.tarmac"
"$GEN_TARMAC" --lines 40000 --seed 6 --dialect qemu4v >"$src/f.qemu4v"
"$PY" "$(dirname "$0")/full_model.py" gen "$src/g.full" --steps 3000 --seed 7 --layout pad_thread
if [ -d "${REALTRACES:-}/cis501" ] && [ -d "${REALTRACES:-}/tarmac" ]; then
	cp "$REALTRACES/cis501/gcc-1K.trace" "$REALTRACES/tarmac/parsertest.txt" \
		"$REALTRACES/tarmac/calculator-aarch64-gem5.tarmac" "$src/"
else
	echo "SKIP: ${REALTRACES:-\$REALTRACES} not found: the real traces' dins are not counted"
fi

mount_tm "$src"
for t in $(ls "$src"); do
	m=$TM_MNT/$t
	din=$(ls "$m"/convert/*.din)
	fmt=$(json_get "$m/stats.json" 'd["format"]')
	want=$(json_get "$m/stats.json" \
		'"%d %d %d" % tuple(d[d["format"]]["din"][k] for k in ("fetches", "reads", "writes"))')
	got=$(awk '{ n[$1]++ } END { printf "%d %d %d", n["2"], n["0"], n["1"] }' "$din")
	check_eq "$t ($fmt): the din's fetch, read and write lines are stats.json's din" "$want" "$got"
	check_eq "$t: every din line is a label and an address" "" \
		"$(grep -vnE '^[012] [0-9a-f]+$' "$din" | head -n 1)"
	check "$t: it has lines" test -s "$din"
done
unmount_tm
finish
