#!/bin/bash
# Every view of CIS501 traces through a real mount, against expectations computed without
# tracemount: the real course traces ($REALTRACES/cis501: gcc-1K.trace, gcc-1K.trace.gz,
# sjeng-1K.trace.gz) and traces from gen_cis501 (200,000 lines; one cut in the middle of a
# macro-op, whose first records belong to macro-op 0; one of a single line).
#
# - cis501_expect.py, the tests' CIS501 model (plain Python splitting), gives the counts in
#   the course's reference parser's words ("Micro-ops: 1000", "Macro-ops: 754" for
#   gcc-1K.trace, as the course published) and every expected view: dump.txt, class/TAG.txt
#   and class/TAG.trace for the seven tags, convert/NAME.din.
# - cis501_expect.py compare: each view byte for byte, the macro-opcode family classes too (the
#   tests' own table of families, cis501_families.txt); class/ lists the families and tags and
#   nothing else; stats.json records, classes and cis501 micro_ops / macro_ops / loads / stores.
# - stats.json micro_ops and macro_ops against the model's counts; wc -l, grep -c on dump.txt
#   and the .din against them; tail; stat sizes; dd reads at random offsets against the same
#   bytes of the expected files; `tracemount cat` (the mount's bytes) and `tracemount ls`.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
EXPECT="$HERE/cis501_expect.py"
TAGS="loads stores branches taken not_taken flags_read flags_write"
tm_seed

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
PLAIN=$TM_TMP/plain # the decompressed bytes of every trace, by its relative path
mkdir -p "$SRC/gen/sub" "$EXP" "$PLAIN"

# ref_counts FILE: the model's counts of a trace, in the course's reference parser's words.
ref_counts() {
	"$PY" "$EXPECT" counts "$1"
}
# ref_value FILE KEY: one count ("Micro-ops", "Loads"...); for a trace of $PLAIN, from the
# counts the model wrote with the views.
ref_value() {
	if [ -f "$1.ref" ]; then
		sed -n "s/^$2: //p" "$1.ref"
	else
		ref_counts "$1" | sed -n "s/^$2: //p"
	fi
}

TRACES=
if [ -d "${REALTRACES:-}/cis501" ]; then
	mkdir -p "$SRC/real"
	cp "$REALTRACES/cis501/gcc-1K.trace" "$REALTRACES/cis501/gcc-1K.trace.gz" \
		"$REALTRACES/cis501/sjeng-1K.trace.gz" "$SRC/real/"
	TRACES="real/gcc-1K.trace real/gcc-1K.trace.gz real/sjeng-1K.trace.gz"
	# The course's published figures for its reference parser on gcc-1K.trace.
	check_eq "the model counts the course's figures on gcc-1K.trace" \
		"Processed 1000 trace records.|Micro-ops: 1000|Macro-ops: 754" \
		"$(ref_counts "$SRC/real/gcc-1K.trace" | head -n 3 | paste -sd'|')"
else
	skip_part realtraces "${REALTRACES:-\$REALTRACES}/cis501 not found: the real CIS501 traces are not tested"
fi

"$GEN_CIS501" --lines 200000 --seed 7 >"$SRC/gen/big.trace"
"$GEN_CIS501" --lines 3000 --seed 8 --skip 2 >"$SRC/gen/sub/mid.trace"
"$GEN_CIS501" --lines 1 --seed 9 >"$SRC/gen/one.trace"
TRACES="$TRACES gen/big.trace gen/sub/mid.trace gen/one.trace"
check_eq "gen_cis501 --lines 200000 writes 200000 lines" 200000 "$(wc -l <"$SRC/gen/big.trace")"
check "gen_cis501 --skip 2 starts inside a macro-op (Uop 3)" \
	test "$(head -c 2 "$SRC/gen/sub/mid.trace")" = "3 "
check_eq "gen_cis501 writes the same trace for the same seed" \
	"$(cksum <"$SRC/gen/sub/mid.trace")" "$("$GEN_CIS501" --lines 3000 --seed 8 --skip 2 | cksum)"

for t in $TRACES; do
	base=${t##*/}
	base=${base%.gz}
	stem=${base%.*}
	mkdir -p "$(dirname "$PLAIN/$t")"
	case $t in
	*.gz) gzip -dc "$SRC/$t" >"$PLAIN/$t" ;;
	*) cp "$SRC/$t" "$PLAIN/$t" ;;
	esac
	"$PY" "$EXPECT" expect "$PLAIN/$t" "$EXP/$t" "$stem"
	check "$t: expectations computed" test -s "$EXP/$t/meta.json"
	cp "$EXP/$t/counts.txt" "$PLAIN/$t.ref"
done
check "gen/sub/mid.trace: its first records belong to macro-op 0" \
	test "$(head -n 1 "$EXP/gen/sub/mid.trace/dump.txt" | awk '{ print $NF }')" = 0

mount_tm "$SRC"
MNT=$TM_MNT

for t in $TRACES; do
	base=${t##*/}
	base=${base%.gz}
	stem=${base%.*}
	e=$EXP/$t
	m=$MNT/$t
	echo "--- $t"
	check "$t is a folder in the mount" test -d "$m"

	# Every view against the expectations (one Python process per trace).
	check_compared "$t" "$PY" "$EXPECT" compare "$e" "$m" "$t"

	# The folder's layout.
	check_eq "$t: the top-level views" "calls class convert dump.txt errors.txt plots raw report.html spix stats.json" \
		"$(ls "$m" | LC_ALL=C sort | paste -sd' ')"
	check_eq "$t: convert/ holds $stem.din" "$stem.din" "$(ls "$m/convert" | paste -sd' ')"
	check "$t: raw is the trace's (decompressed) bytes" cmp "$PLAIN/$t" "$m/raw"

	# Counts against the model's.
	micro=$(ref_value "$PLAIN/$t" Micro-ops)
	macro=$(ref_value "$PLAIN/$t" Macro-ops)
	got=$("$PY" -c 'import json, sys
d = json.load(open(sys.argv[1])).get("cis501", {})
print(d.get("micro_ops"), d.get("macro_ops"))' "$m/stats.json" 2>&1)
	check_eq "$t: stats.json micro_ops macro_ops = the model's Micro-ops Macro-ops" \
		"$micro $macro" "$got"
	check_eq "$t: wc -l dump.txt = Micro-ops" "$micro" "$(wc -l <"$m/dump.txt")"
	check_eq "$t: grep -c of Ld/St L in dump.txt = Loads" "$(ref_value "$PLAIN/$t" Loads)" \
		"$(grep -cE '^([^ ]+ ){7}L ' "$m/dump.txt")"
	check_eq "$t: grep -c of Branch T in dump.txt = Taken" "$(ref_value "$PLAIN/$t" Taken)" \
		"$(grep -cE '^([^ ]+ ){6}T ' "$m/dump.txt")"
	check_eq "$t: wc -l class/not_taken.txt = Not taken" "$(ref_value "$PLAIN/$t" 'Not taken')" \
		"$(wc -l <"$m/class/not_taken.txt")"
	check_eq "$t: wc -l class/flags_write.trace = Flags written" \
		"$(ref_value "$PLAIN/$t" 'Flags written')" "$(wc -l <"$m/class/flags_write.trace")"
	check_eq "$t: grep -c '^2 ' of the .din = Macro-ops" "$macro" \
		"$(grep -c '^2 ' "$m/convert/$stem.din")"
	check_eq "$t: grep -c '^1 ' of the .din = Stores" "$(ref_value "$PLAIN/$t" Stores)" \
		"$(grep -c '^1 ' "$m/convert/$stem.din")"
	# class/loads.trace is a CIS501 trace of the loads: the model reads it.
	check_eq "$t: the model reads class/loads.trace: Micro-ops = Loads" \
		"$(ref_value "$PLAIN/$t" Loads)" "$(ref_value "$m/class/loads.trace" Micro-ops)"

	# The class streams decode (tracemount cat of a copy) to their .txt in the first 14
	# columns (doc/formats.md: the 15th, the macro-op number, is renumbered in an extract).
	bad=
	families=$(for x in "$m"/class/*.txt; do
		x=${x##*/}
		case " $TAGS " in *" ${x%.txt} "*) ;; *) echo "class/${x%.txt}" ;; esac
	done | head -n 2)
	for f in class/loads class/taken $families; do
		cp "$m/$f.trace" "$TM_TMP/extract.trace"
		cmp -s <("$TRACEMOUNT" cat "$TM_TMP/extract.trace" dump.txt | cut -d' ' -f1-14) \
			<(cut -d' ' -f1-14 "$m/$f.txt") || bad="$bad $f"
	done
	check_eq "$t: class/*.trace decode to their .txt (14 columns)" "" "$bad"

	# Sizes, tail, and reads at random offsets against the expected files.
	views="dump.txt convert/$stem.din"
	for tag in $TAGS; do
		views="$views class/$tag.txt class/$tag.trace"
	done
	for view in $views; do
		check_eq "$t: stat size of $view" "$(wc -c <"$e/$view")" "$(stat -c %s "$m/$view")"
	done
	check_eq "$t: stat size of raw" "$(wc -c <"$PLAIN/$t")" "$(stat -c %s "$m/raw")"
	for view in dump.txt "convert/$stem.din" class/loads.txt class/taken.trace; do
		check_eq "$t: tail -n 3 $view" "$(tail -n 3 "$e/$view")" "$(tail -n 3 "$m/$view")"
	done
	reads=4
	[ "$(wc -c <"$e/dump.txt")" -gt 1000000 ] && reads=25
	for view in dump.txt "convert/$stem.din" class/stores.txt class/branches.trace raw; do
		ef=$e/$view
		[ "$view" = raw ] && ef=$PLAIN/$t
		size=$(wc -c <"$ef")
		[ "$size" -gt 0 ] || continue
		bad=
		for _ in $(seq 1 "$reads"); do
			off=$(random_below "$size")
			len=$((1 + $(random_below 9000)))
			dd_same "$m/$view" "$ef" "$off" "$len" >/dev/null || bad="$bad $off+$len"
		done
		check_eq "$t: $reads dd reads at random offsets of $view" "" "$bad"
	done

	# `tracemount cat` from SOURCE gives the mounted bytes (of every view for two traces, of
	# a few for the others: each run indexes the trace again),
	# and `tracemount ls` the stat sizes.
	case $t in
	real/gcc-1K.trace.gz | gen/sub/mid.trace)
		# report.html, every trace's page in the mount, is no view: cat does not give it
		(cd "$m" && find . -type f ! -path ./report.html | sed 's|^\./||') >"$TM_TMP/catviews"
		;;
	*)
		{
			printf '%s\n' raw dump.txt stats.json errors.txt "convert/$stem.din" class/loads.trace
			(cd "$m" && ls class/*.txt | grep -v -e /loads -e /stores | LC_ALL=C sort |
				head -n 2)
		} >"$TM_TMP/catviews"
		;;
	esac
	mapfile -t catviews <"$TM_TMP/catviews"
	check_cli "$SRC" "$t" "$m" "${catviews[@]}"
done

if [ -d "$SRC/real" ]; then
	check "real/gcc-1K.trace.gz: every view equals that of real/gcc-1K.trace (but stats.json)" \
		diff -r -x stats.json -x report.html "$MNT/real/gcc-1K.trace" "$MNT/real/gcc-1K.trace.gz"
fi

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
