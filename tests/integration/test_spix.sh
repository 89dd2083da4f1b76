#!/bin/bash
# Basic-block counts. spixcounts files written by spix_expect.py from known block tables (both
# byte orders, any name, gzip, BADCNT blocks, cut in the header, the lengths or the counters, a
# bad magic, trailing bytes, counters that do not fit): summary.txt, blocks.txt, dump.txt,
# stats.json and errors.txt against spix_expect.py's own reading. SUM.spixcounts folders against
# the sum spix_expect.py makes as sadd does, with its overflow diagnostic. spix/ of every
# instruction format (real CIS501 and Tarmac traces; generated TT6, TT6E, CIS501, Tarmac on three
# cpus; a FULL trace through full_model.py's own TT6 conversion) against counts spix_expect.py
# computes instruction by instruction, their totals against stats.json, read back by the
# spixcounts decoder; random dd reads; `tracemount cat` and `ls` against the mount. plots/hot.svg
# of every spixcounts file and sum: its bars are spix_expect.py's hottest blocks, xmllint finds
# it well-formed, headless Chromium (headless.py, plots_check.py hot) draws every bar with its
# name left of it and no text astray; a file without executed blocks says so. Controls: a
# count off by one, a bar's name moved onto it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SX="$PY $HERE/spix_expect.py"
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
R=${REALTRACES:-}
mkdir -p "$SRC/files" "$SRC/prog" "$SRC/two" "$SRC/over" "$SRC/hide" "$SRC/traces" \
	"$SRC/back" "$EXP"
tm_seed

# random_blocks N: N random blocks for spix_expect.py write, a tenth non-executable.
random_blocks() {
	"$PY" -c 'import random, sys
random.seed(int(sys.argv[2]))
out = []
for _ in range(int(sys.argv[1])):
    n = random.randint(1, 255)
    if random.random() < 0.1:
        out.append("%d:-:-" % n)
    elif random.random() < 0.3:
        out.append("%d:%d:%d" % (n, random.randint(0, 99999), random.randint(0, 99999)))
    else:
        out.append("%d:%d:0" % (n, random.choice([0, random.randint(1, 1 << 31)])))
print(",".join(out))' "$1" "$2"
}

# ---- spixcounts files
F=$SRC/files
SMALL="3:10:0,2:5:7,4:-:-,1:0:0,255:1:0,7:100:0"
$SX write "$F/be.bb" be "$SMALL" --tsum 0xdeadbeef
$SX write "$F/le.bb" le "$SMALL" --tsum 0xdeadbeef
$SX write "$F/any-name.dat" be "1:1:0"
$SX write "$F/empty-table.bb" be ""
$SX write "$F/big.bb" le "$(random_blocks 5000 "$SEED")" --tsum 7
gzip -c "$F/big.bb" >"$F/zipped.bb.gz"
$SX write "$F/cut-header.bb" be "3:1:0" --cut 10
$SX write "$F/cut-lengths.bb" be "3:1:0,4:2:0,5:3:0,6:4:0,7:5:0" --cut 18
$SX write "$F/cut-counters.bb" be "3:1:0,4:2:0,5:3:0" --cut 35
$SX write "$F/bad-magic.bb" be "3:1:0"
printf '\x99' | dd of="$F/bad-magic.bb" bs=1 conv=notrunc status=none
$SX write "$F/trailing.bb" be "3:1:0" --tail 0102
$SX write "$F/sizes.bb" be "3:1:0" --tsize 100
$SX write "$F/half.bb" be "3:1:-,0:5:0"
FILES="be.bb le.bb any-name.dat empty-table.bb big.bb zipped.bb.gz cut-header.bb
cut-lengths.bb cut-counters.bb bad-magic.bb trailing.bb sizes.bb half.bb"

# ---- sums: prog/ holds three files of one program (two byte orders), one of another and a
# cut one of the first; two/ two programs of two files each; over/ a counter that overflows;
# hide/ a file named SUM.spixcounts
BLOCKS=$(random_blocks 300 $((SEED + 1)))
for m in a:be:2 b:be:3 c:le:4; do
	IFS=: read -r name order seed <<<"$m"
	$SX write "$SRC/prog/$name.bb" "$order" \
		"$(echo "$BLOCKS" | "$PY" -c 'import random, sys
random.seed(int(sys.argv[1]))
out = []
for b in sys.stdin.read().strip().split(","):
    n, c0, c1 = b.split(":")
    if c0 == "-":
        out.append(b)
    else:
        out.append("%s:%d:%d" % (n, random.randint(0, 1 << 29), random.randint(0, 1 << 29)))
print(",".join(out))' "$seed")" --tsum 0x1234
done
$SX write "$SRC/prog/other.bb" be "5:1:0" --tsum 0x1234
$SX write "$SRC/prog/cut.bb" be "$BLOCKS" --tsum 0x1234 --cut 100
$SX sum "$EXP/prog.sum" "$SRC/prog/a.bb" "$SRC/prog/b.bb" "$SRC/prog/c.bb" >"$EXP/prog.out"
$SX write "$SRC/two/p1.bb" be "1:1:0,2:2:2" --tsum 1
$SX write "$SRC/two/p2.bb" be "1:3:0,2:4:4" --tsum 1
$SX write "$SRC/two/q1.bb" le "9:1:0" --tsum 2
$SX write "$SRC/two/q2.bb" le "9:5:0" --tsum 2
$SX write "$SRC/over/x.bb" be "2:4294967000:0,1:-:-" --tsum 5
$SX write "$SRC/over/y.bb" be "2:1000:0,1:-:-" --tsum 5
$SX write "$SRC/hide/p.bb" be "1:1:0" --tsum 3
$SX write "$SRC/hide/q.bb" be "1:2:0" --tsum 3
cp "$SRC/hide/p.bb" "$SRC/hide/SUM.spixcounts"

# ---- instruction traces: FORMAT NAME STEM
T=$SRC/traces
TRACES=
add_trace() { TRACES="$TRACES$1 $2 $3"$'\n'; }
"$GEN_TT6" --format tt6 --records 40000 --seed "$SEED" >"$T/gen.tt6"
add_trace tt6 gen.tt6 gen
"$GEN_TT6" --format tt6e --records 20000 --seed $((SEED + 1)) >"$T/gen.tt6e"
add_trace tt6e gen.tt6e gen
"$GEN_CIS501" --lines 30000 --seed "$SEED" | gzip -n >"$T/gen.trace.gz"
add_trace cis501 gen.trace.gz gen
"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect fastmodel --cpus 3 >"$T/three.tarmac"
add_trace tarmac three.tarmac three
"$PY" "$HERE/full_model.py" gen "$T/model.full" --steps 3000 --seed 4 --jump-at 1700
"$PY" "$HERE/full_model.py" expect "$EXP/model" --steps 3000 --seed 4 --jump-at 1700
if [ -d "$R" ]; then
	cp "$R/cis501/gcc-1K.trace" "$R/cis501/sjeng-1K.trace.gz" "$T/"
	add_trace cis501 gcc-1K.trace gcc-1K
	add_trace cis501 sjeng-1K.trace.gz sjeng-1K
	for t in calculator-aarch32-fastmodel calculator-aarch64-fastmodel calculator-aarch64-gem5; do
		cp "$R/tarmac/$t.tarmac" "$T/"
		add_trace tarmac "$t.tarmac" "$t"
	done
else
	skip_part realtraces "no realtraces folder at '$R'"
fi

mount_tm "$SRC"
M=$TM_MNT

# ---- spixcounts files through the mount
for f in $FILES; do
	m=$M/files/$f
	e=$EXP/files/$f
	mkdir -p "$e"
	case $f in *.gz) zcat "$F/$f" >"$e/raw" ;; *) cp "$F/$f" "$e/raw" ;; esac
	$SX views "$e/raw" "$e"
	check_eq "$f: a trace folder of summary.txt, blocks.txt and dump.txt (and plots/)" \
		"blocks.txt dump.txt errors.txt plots raw report.html stats.json summary.txt" \
		"$(ls "$m" | LC_ALL=C sort | paste -sd' ')"
	check "$f: raw is the file" cmp "$e/raw" "$m/raw"
	for v in summary.txt blocks.txt; do
		check "$f: $v" cmp "$e/$v" "$m/$v"
	done
	check "$f: dump.txt is blocks.txt" cmp "$e/blocks.txt" "$m/dump.txt"
	check_eq "$f: plots/hot.svg's bars are the hottest blocks" "$(cat "$e/hot.txt")" \
		"$("$PY" "$HERE/plots_check.py" bars "$m/plots/hot.svg")"
	if command -v xmllint >/dev/null; then
		check "$f: xmllint accepts plots/hot.svg" xmllint --noout "$m/plots/hot.svg"
	fi
	check_eq "$f: stats.json format" spixcounts "$(json_get "$m/stats.json" 'd["format"]')"
	for key in blocks executed_blocks non_executable_blocks instructions; do
		check_eq "$f: stats.json spixcounts.$key" \
			"$(awk -v k="$key" '$1 == k {print $2}' "$e/summary.txt")" \
			"$(json_get "$m/stats.json" "d['spixcounts']['$key']")"
	done
	check_eq "$f: stats.json records = blocks read" "$(wc -l <"$e/blocks.txt")" \
		"$(json_get "$m/stats.json" 'd["records"]')"
done
for f in be.bb le.bb any-name.dat empty-table.bb big.bb zipped.bb.gz; do
	# errors.txt takes every product, and is sized 0 until its open builds them
	# (doc/architecture.md, "Products"): opened first, its size 0 says it is empty
	open_views "$M/files/$f"
	check_eq "$f: errors.txt is empty" 0 "$(stat -c %s "$M/files/$f/errors.txt")"
done
check_eq "le.bb: little-endian" little \
	"$(json_get "$M/files/le.bb/stats.json" 'd["spixcounts"]["byte_order"]')"
check_eq "be.bb: the checksum" 0xdeadbeef \
	"$(json_get "$M/files/be.bb/stats.json" 'd["spixcounts"]["text_checksum"]')"
check "big.bb and its gzip copy show the same summary" cmp "$M/files/big.bb/summary.txt" \
	"$M/files/zipped.bb.gz/summary.txt"
# errors FILE PATTERN TRUNCATED: errors.txt matches PATTERN, stats.json's truncated says so
errors() {
	check "$1: errors.txt says '$2'" grep -q -- "$2" "$M/files/$1/errors.txt"
	check_eq "$1: stats.json truncated" "$3" "$(json_get "$M/files/$1/stats.json" 'd["truncated"]')"
}
errors cut-header.bb "offset 10: unexpected EOF in the header" True
errors cut-lengths.bb "unexpected EOF in the block lengths (2 of 8 bytes)" True
errors cut-counters.bb "offset 35: unexpected EOF: counters of 1 of 3 blocks" True
errors bad-magic.bb "offset 0: bad magic 0x99620011" False
errors trailing.bb "offset 28: 2 bytes after the last block's counters" False
errors sizes.bb "add up to 12 bytes of text; the header says 100" False
errors half.bb "block 0 has one counter SPIX_SC_BADCNT" False
errors half.bb "block 1 has length 0 but counters 5 0" False
check_eq "cut-counters.bb: the whole block is served" "0 0x00000000 3 1 0" \
	"$(cat "$M/files/cut-counters.bb/blocks.txt")"

# ---- sums
check_eq "prog/: one SUM.spixcounts beside the files" \
	"SUM.spixcounts a.bb b.bb c.bb cut.bb other.bb" "$(ls "$M/prog" | LC_ALL=C sort | paste -sd' ')"
check_eq "prog/: spix_expect.py's sum has no overflow" "" "$(cat "$EXP/prog.out")"
check "prog/SUM.spixcounts: raw is the sum of a.bb, b.bb, c.bb" cmp "$EXP/prog.sum" \
	"$M/prog/SUM.spixcounts/raw"
mkdir -p "$EXP/prog"
$SX views "$EXP/prog.sum" "$EXP/prog"
check "prog/SUM.spixcounts: summary.txt" cmp "$EXP/prog/summary.txt" \
	"$M/prog/SUM.spixcounts/summary.txt"
check "prog/SUM.spixcounts: blocks.txt" cmp "$EXP/prog/blocks.txt" \
	"$M/prog/SUM.spixcounts/blocks.txt"
check_eq "prog/SUM.spixcounts: plots/hot.svg's bars" "$(cat "$EXP/prog/hot.txt")" \
	"$("$PY" "$HERE/plots_check.py" bars "$M/prog/SUM.spixcounts/plots/hot.svg")"
check_eq "prog/SUM.spixcounts: errors.txt is empty" "" "$(cat "$M/prog/SUM.spixcounts/errors.txt")"
check_cli "$SRC" prog/SUM.spixcounts "$M/prog/SUM.spixcounts" raw summary.txt blocks.txt \
	stats.json errors.txt
check_eq "two/: a sum per program, named by text size and checksum" \
	"SUM.12.00000001.spixcounts SUM.36.00000002.spixcounts p1.bb p2.bb q1.bb q2.bb" \
	"$(ls "$M/two" | LC_ALL=C sort | paste -sd' ')"
check_eq "two/: the first sum" "0 0x00000000 1 4 0 1 0x00000004 2 6 6" \
	"$(paste -sd' ' "$M/two/SUM.12.00000001.spixcounts/blocks.txt")"
check_eq "two/: the second sum, little-endian as its files" "0 0x00000000 9 6 0 little" \
	"$(cat "$M/two/SUM.36.00000002.spixcounts/blocks.txt") $(json_get \
		"$M/two/SUM.36.00000002.spixcounts/stats.json" 'd["spixcounts"]["byte_order"]')"
check_eq "over/: sadd's overflow diagnostic" "counter overflow at block 0 (text offset 0x00000000)" \
	"$($SX sum "$TM_TMP/over.sum" "$SRC/over/x.bb" "$SRC/over/y.bb")"
check "over/SUM.spixcounts: errors.txt names the overflow as sadd does" grep -q \
	"sadd: counter overflow at block 0 (text offset 0x00000000)" \
	"$M/over/SUM.spixcounts/errors.txt"
check_eq "over/SUM.spixcounts: the counter stays at 0xfffffffe" \
	"0 0x00000000 2 4294967294 0 1 0x00000008 1 - -" \
	"$(paste -sd' ' "$M/over/SUM.spixcounts/blocks.txt")"
check "hide/: a file named SUM.spixcounts is shown, not the sum" cmp "$SRC/hide/p.bb" \
	"$M/hide/SUM.spixcounts/raw"
$SX write "$SRC/prog/d.bb" be "$BLOCKS" --tsum 0x1234
$SX sum "$EXP/prog4.sum" "$SRC/prog/a.bb" "$SRC/prog/b.bb" "$SRC/prog/c.bb" "$SRC/prog/d.bb" \
	>/dev/null
check "prog/: a fourth member joins the sum" cmp "$EXP/prog4.sum" \
	<(cd "$SRC/prog" && "$TRACEMOUNT" cat SUM.spixcounts raw)

# ---- spix/ of instruction traces
# count_of FORMAT STATS: the trace's instruction count, as its format's statistics give it
count_of() {
	case $1 in
	cis501) json_get "$2" 'd["cis501"]["macro_ops"]' ;;
	tarmac) json_get "$2" 'd["classes"]["executed"] + d["classes"]["condition_failed"]' ;;
	*) json_get "$2" "d['$1']['instructions']" ;;
	esac
}
# spix_checks LABEL MOUNTED EXPECTED STEM TOTAL FORMAT: spix/ of MOUNTED against EXPECTED
spix_checks() {
	local label=$1 m=$2 e=$3 stem=$4 total=$5 fmt=$6
	check_eq "$label: spix/ holds $stem.spixcounts and summary.txt" \
		"$(printf '%s\n' "$stem.spixcounts" summary.txt | LC_ALL=C sort | paste -sd' ')" \
		"$(ls "$m/spix" | LC_ALL=C sort | paste -sd' ')"
	check "$label: spix/$stem.spixcounts" cmp "$e/counts.spixcounts" "$m/spix/$stem.spixcounts"
	check "$label: spix/summary.txt" cmp "$e/summary.txt" "$m/spix/summary.txt"
	check_eq "$label: stats.json spix.instructions = the instructions counted" "$total" \
		"$(json_get "$m/stats.json" 'd["spix"]["instructions"]')"
	check_eq "$label: the blocks' instructions = the trace's instruction count" \
		"$(count_of "$fmt" "$m/stats.json")" \
		"$(awk '$1 == "instructions" {print $2}' "$m/spix/summary.txt")"
	# read back by the spixcounts decoder
	local back=${label//\//_}.bb
	cp "$m/spix/$stem.spixcounts" "$SRC/back/$back"
	check_eq "$label: read back, the same total" "$total" \
		"$(awk '$1 == "instructions" {print $2}' "$M/back/$back/summary.txt")"
	# opened first: errors.txt is sized 0 until its open builds every product
	open_views "$M/back/$back"
	check_eq "$label: read back, no errors" 0 "$(stat -c %s "$M/back/$back/errors.txt")"
	mkdir -p "$e/back"
	$SX views "$SRC/back/$back" "$e/back"
	check "$label: read back, blocks.txt" cmp "$e/back/blocks.txt" "$M/back/$back/blocks.txt"
	check_eq "$label: read back, plots/hot.svg's bars" "$(cat "$e/back/hot.txt")" \
		"$("$PY" "$HERE/plots_check.py" bars "$M/back/$back/plots/hot.svg")"
	local size off len bad=
	size=$(stat -c %s "$m/spix/summary.txt")
	for _ in 1 2 3 4 5 6; do
		off=$(random_below "$size")
		len=$(($(random_below 3000) + 1))
		dd_same "$m/spix/summary.txt" "$e/summary.txt" "$off" "$len" || bad="$bad $off+$len"
	done
	check_eq "$label: 6 dd reads at random offsets of spix/summary.txt" "" "$bad"
}
while read -r fmt name stem; do
	[ -n "$fmt" ] || continue
	e=$EXP/traces/$name
	mkdir -p "$e"
	total=$($SX synth "$fmt" "$T/$name" "$e")
	spix_checks "traces/$name" "$M/traces/$name" "$e" "$stem" "$total" "$fmt"
	check_cli "$SRC" "traces/$name" "$M/traces/$name" "spix/$stem.spixcounts" spix/summary.txt
done <<<"$TRACES"
mkdir -p "$EXP/model.full"
total=$($SX synth tt6 "$EXP/model/convert/tt6" "$EXP/model.full")
spix_checks traces/model.full "$M/traces/model.full" "$EXP/model.full" model "$total" full
if [ -d "$R" ]; then
	# Fast Models write a branch not taken as IS, gem5 as IT with the next PC following
	check "the same program's Fast Models and gem5 traces give the same counts" cmp \
		"$M/traces/calculator-aarch64-fastmodel.tarmac/spix/calculator-aarch64-fastmodel.spixcounts" \
		"$M/traces/calculator-aarch64-gem5.tarmac/spix/calculator-aarch64-gem5.spixcounts"
	check_eq "calculator-aarch64: blocks ending in a branch not taken have a second counter" 32 \
		"$(json_get "$M/back/traces_calculator-aarch64-gem5.tarmac.bb/stats.json" \
			'd["spixcounts"]["blocks_with_second_counter"]')"
fi
check_eq "tarmac on three cpus: blocks of each cpu's own PCs" 3 \
	"$(json_get "$M/traces/three.tarmac/stats.json" 'len(d["tarmac"]["cpus"])')"

# ---- plots/hot.svg: controls, and in a browser
mkdir -p "$TM_TMP/controls"
check "empty-table.bb: plots/hot.svg says no block executed" grep -q ">no block executed<" \
	"$M/files/empty-table.bb/plots/hot.svg"
sed '1s/\t\([0-9]*\)\t-\t/\t1\1\t-\t/' "$EXP/files/be.bb/hot.txt" >"$TM_TMP/controls/hot.wrong"
check "control: a count off the model's differs from the bars" test \
	"$(cat "$TM_TMP/controls/hot.wrong")" != \
	"$("$PY" "$HERE/plots_check.py" bars "$M/files/be.bb/plots/hot.svg")"
# Chromium reads a file:// URL only up to the size a stat gave before its open, and a plot
# not built since its trace changed (prog/SUM.spixcounts, which d.bb joined) is sized 0 until
# an open builds it (doc/architecture.md, "Products"): each opened first, to its exact size
HOT="files/be.bb files/big.bb files/empty-table.bb prog/SUM.spixcounts back/traces_gen.tt6.bb"
for t in $HOT; do
	open_views "$M/$t/plots"
done
# shellcheck disable=SC2086 # HOT is words
check_hot_svgs files/big.bb files/empty-table.bb $HOT

unmount_tm
finish
