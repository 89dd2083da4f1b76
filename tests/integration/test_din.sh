#!/bin/bash
# convert/NAME.din of every format with a din, line by line against the format's own model,
# computed without tracemount from the trace's bytes and each format's din rule (doc/formats.md,
# doc/views.md): byu_model and byu12_model (tests/unit/byu_ref.c, byu12_ref.c), tt6_expect.py
# (TT6, TT6E), cis501_expect.py, tarmac_expect.py (Tarmac, QEMU4V), full_model.py (FULL, from
# the program it ran). stats.json's "din" object counts the model's lines by label (fetches
# "2", reads "0", writes "1"). Generated traces of every format, and the real BYU 12-byte,
# CIS501 and Tarmac traces where ../shared is beside the checkout; the ES-style Tarmac trace,
# which the Tarmac model does not read, must give the fetches of the Fast Models trace of the
# same run (doc/formats.md: 4783 for the AArch64 calculator).
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
src=$TM_TMP/src
exp=$TM_TMP/expected
mkdir -p "$src" "$exp"
"$GEN_BYU" -n 50000 -s 1 >"$src/a.byu"
"$GEN_TT6" --format tt6 --records 40000 --seed 2 >"$src/b.tt6"
"$GEN_TT6" --format tt6e --records 40000 --seed 3 >"$exp/c.tt6e"
gzip -c "$exp/c.tt6e" >"$src/c.tt6e.gz"
"$GEN_CIS501" --lines 40000 --seed 4 >"$src/d.trace"
"$GEN_TARMAC" --lines 40000 --seed 5 --dialect fastmodel --cpus 2 >"$src/e.tarmac"
"$GEN_TARMAC" --lines 40000 --seed 6 --dialect qemu4v >"$src/f.qemu4v"
full_opts="--steps 3000 --seed 7 --layout pad_thread"
# shellcheck disable=SC2086 # options are words
"$PY" "$HERE/full_model.py" gen "$src/g.full" $full_opts
"$GEN_BYU12" -n 30000 -s 8 -p 4 -m every >"$src/h.byu12"
real=
if [ -d "${REALTRACES:-}/cis501" ] && [ -d "${REALTRACES:-}/tarmac" ] &&
	[ -d "${REALTRACES:-}/byu12" ]; then
	cp "$REALTRACES/cis501/gcc-1K.trace" "$REALTRACES/tarmac/calculator-aarch64-gem5.tarmac" \
		"$REALTRACES/tarmac/calculator-aarch32-fastmodel.tarmac" \
		"$REALTRACES/tarmac/calculator-aarch64-fastmodel.tarmac" \
		"$REALTRACES/tarmac/calculator-aarch64-es-ld-st-style.tarmac" \
		"$REALTRACES/byu12/tpatil17_CS480_trace.tr" "$src/"
	real=1
else
	skip_part realtraces "${REALTRACES:-\$REALTRACES} not found: the real traces' dins are not counted"
fi

# model_din TRACE OUT: the model's din of the source trace TRACE into OUT.
model_din() {
	local t=$1 out=$2 stem=${1%.gz}
	stem=${stem%.*}
	case $t in
	*.byu) "$BYU_MODEL" "$exp/$t.d" "$t" <"$src/$t" && cp "$exp/$t.d/convert/$stem.din" "$out" ;;
	*.byu12 | *.tr) "$BYU12_MODEL" "$exp/$t.d" "$t" <"$src/$t" &&
		cp "$exp/$t.d/convert/$stem.din" "$out" ;;
	*.tt6) "$PY" "$HERE/tt6_expect.py" din "$src/$t" tt6 "$out" ;;
	*.tt6e.gz) "$PY" "$HERE/tt6_expect.py" din "$exp/${t%.gz}" tt6e "$out" ;;
	*.trace) "$PY" "$HERE/cis501_expect.py" expect "$src/$t" "$exp/$t.d" "$stem" &&
		cp "$exp/$t.d/convert/$stem.din" "$out" ;;
	*.tarmac | *.qemu4v)
		"$PY" "$HERE/tarmac_expect.py" expect "$src/$t" "$exp/$t.d" "$stem" "${t##*.}" &&
			cp "$exp/$t.d/convert/$stem.din" "$out" &&
			check_eq "$t: the Tarmac model reads every line" "[]" \
				"$(json_get "$exp/$t.d/meta.json" 'd["foreign"][:3]')"
		;;
	# shellcheck disable=SC2086 # options are words
	*.full) "$PY" "$HERE/full_model.py" expect "$exp/$t.d" $full_opts &&
		cp "$exp/$t.d/convert/din" "$out" ;;
	*) return 1 ;;
	esac
}

# first_diff WANT GOT: "" when the files are the same, else their first differing line.
first_diff() {
	cmp -s "$1" "$2" && return
	diff <(nl -ba "$1") <(nl -ba "$2") | grep -m 2 '^[<>]' | paste -sd' '
	echo " ($(wc -l <"$1") lines expected, $(wc -l <"$2") got)"
}

mount_tm "$src"
for t in $(ls "$src"); do
	m=$TM_MNT/$t
	din=$(ls "$m"/convert/*.din)
	fmt=$(json_get "$m/stats.json" 'd["format"]')
	check "$t: every din line is a label and an address" \
		test -z "$(grep -vnE '^[012] [0-9a-f]+$' "$din" | head -n 1)"
	case $t in
	*-es-ld-st-style.tarmac)
		# the ES lines are foreign to the Tarmac model: its fetches are the Fast Models'
		grep '^2 ' "$din" >"$exp/$t.fetches"
		check "calculator-aarch64-fastmodel.tarmac: the model gives a din" \
			model_din calculator-aarch64-fastmodel.tarmac "$exp/fm.din"
		grep '^2 ' "$exp/fm.din" >"$exp/fm.fetches"
		check_eq "$t: the din's fetches are the Fast Models trace's, as the model gives them" \
			"" "$(first_diff "$exp/fm.fetches" "$exp/$t.fetches")"
		check_eq "$t: 4783 fetches (doc/formats.md)" 4783 "$(wc -l <"$exp/$t.fetches")"
		continue
		;;
	esac
	check "$t: the model gives a din" model_din "$t" "$exp/$t.din"
	grep '^2 ' "$exp/$t.din" >"$exp/$t.din.fetches"
	check "$t: the model's din has lines" test -s "$exp/$t.din"
	check_eq "$t ($fmt): convert/*.din is the model's, line by line" "" \
		"$(first_diff "$exp/$t.din" "$din")"
	want=$(awk '{ n[$1]++ } END { printf "%d %d %d", n["2"], n["0"], n["1"] }' "$exp/$t.din")
	check_eq "$t: stats.json's din counts the model's fetch, read and write lines" "$want" \
		"$(json_get "$m/stats.json" \
			'"%d %d %d" % tuple(d[d["format"]]["din"][k] for k in ("fetches", "reads", "writes"))')"
done
if [ -n "$real" ]; then
	check_eq "the Fast Models calculator's model gives 4783 fetches (doc/formats.md)" 4783 \
		"$(wc -l <"$exp/calculator-aarch64-fastmodel.tarmac.din.fetches")"
fi
unmount_tm
finish
