#!/bin/bash
# Every view of TT6 and TT6E traces against the tests' TT6 model, tt6_expect.py, which reads
# the trace's bytes without tracemount: the dump.txt columns (all but Capstone's TEXT),
# class/*.txt, class/*.tt6[e] streams with their position records, sync.txt, convert/NAME.din,
# the TT6 <-> TT6E conversion, errors.txt offsets and stats.json (top_mnemonics against the
# mnemonics gen_tt6 says it wrote). First the model's reading is checked against what gen_tt6
# says it wrote (selfcheck). Two hand-made traces pin exact dump values (doc/views.md's
# example, tracemount's own disassembly of lswx, stswx, eciwx and the XO-form 'o' variants, a
# bl whose 32-bit target wraps around, .long for an unknown word, TT6E's ba 0x700 and rfi),
# column by column as the model splits the lines. Also `tracemount cat` (the same bytes as the
# mount), `tracemount ls` and `ls -l` (sizes equal wc -c) and wc -l dump.txt = records.
# plots/sync.svg (doc/plots.md) of each against the model's lanes (tt6_expect.py, through
# series_expect.py; one.tt6's and exact.tt6e's say they have no sync records), xmllint, headless Chromium
# (plots_check.py browser) and a control: a slice's count off by one fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/sub" "$EXP"

# compare TRACE_REL [options]: every view of the mounted trace folder, one check each.
compare() {
	local rel=$1
	shift
	"$PY" "$HERE/tt6_expect.py" compare "$SRC/$rel" "$TM_MNT/$rel" "$rel" "$@" \
		>"$TM_TMP/cmp.out" 2>"$TM_TMP/cmp.err"
	check "$rel: expectations computed" test -s "$TM_TMP/cmp.out"
	[ -s "$TM_TMP/cmp.err" ] && cat "$TM_TMP/cmp.err" >&2
	while IFS=$'\t' read -r what want got; do
		check_eq "$what" "$want" "$got"
	done <"$TM_TMP/cmp.out"
}

# The same program in both formats (same seed and steps), with an unknown escape code.
"$GEN_TT6" --format tt6 --steps 30000 --seed 11 --truth "$EXP/prog.tt6.truth" >"$SRC/prog.tt6"
"$GEN_TT6" --format tt6e --steps 30000 --seed 11 --truth "$EXP/prog.tt6e.truth" >"$SRC/prog.tt6e"
# Clean traces two folders down, named as amber names them; a trace of only INITIAL_PC.
"$GEN_TT6" --clean --records 3000 --seed 12 --truth "$EXP/t1.truth" >"$SRC/sub/thread_001.tt6"
"$GEN_TT6" --clean --format tt6e --records 2500 --seed 13 --truth "$EXP/t2.truth" \
	>"$SRC/sub/thread_002.tt6e"
"$GEN_TT6" --records 1 --truth "$EXP/one.truth" >"$SRC/sub/one.tt6"
check_eq "gen_tt6 --records 1 writes the INITIAL_PC word only" 4 "$(wc -c <"$SRC/sub/one.tt6")"
check_eq "gen_tt6 --records 3000 writes 3000 records" 3000 "$(wc -l <"$EXP/t1.truth")"

# Hand-made traces: big-endian words, each record on a line.
words() {
	"$PY" -c 'import sys, struct
w = [int(x, 16) for x in sys.stdin.read().split() if not x.startswith("#")]
sys.stdout.buffer.write(struct.pack(">%dI" % len(w), *w))'
}
words >"$SRC/exact.tt6" <<'EOF'
00001000
7c0802a6
48000011 00001014
80610008 00fff008
7c64042a 00fff100 0000000d
00200002 00a0b0c0 00000001
00010001 00fff200
7c640e14
07ffffff
4bffeedd ffffff00
4e800020 00001028
7ca63d2a 00fff300 20000085
7c001fec
80a6fffe 00000ffe
00070001 12345678
00020000
4182fff8 00001038
42000010 00001048
44000002 0000104c
0c830000
7c642a6c 00fff400
7ca63dd6
7d0957d7
7c6404aa 00fff500
bba10008 00fff600
7c2322ac 00fff700 01020304
00310002 00a0b0c0 00000001
00250002 00000001 00000002
00200001 00a0b0c0
4bfffffc 00001064
EOF
words >"$SRC/exact.tt6e" <<'EOF'
00002000
0c830000
48000702 00000700
4c000064 00002004
7c001fec 00fff800
7c0028ac 00000000
00010001 00fff840
7c0037ac 00fff840
00110001 00fff880
7c00222c 00fff880
EOF
# The model's reading of each trace: its records and the problems it finds.
for t in exact.tt6 exact.tt6e prog.tt6 prog.tt6e; do
	"$PY" "$HERE/tt6_expect.py" decode "$SRC/$t" "${t##*.}" "$EXP/$t.records" "$EXP/$t.errors" >/dev/null
done
check_eq "exact.tt6: the model expects 3 problems (0x07, 0x25, 0x20 with count 1)" \
	"104,200,212" "$(paste -sd, "$EXP/exact.tt6.errors")"

# The model reads what gen_tt6 says it wrote.
check_eq "prog.tt6: the model reads gen_tt6's records" ok \
	"$("$PY" "$HERE/tt6_expect.py" selfcheck "$EXP/prog.tt6.truth" "$SRC/prog.tt6")"
check_eq "prog.tt6e: the model reads gen_tt6's records" ok \
	"$("$PY" "$HERE/tt6_expect.py" selfcheck "$EXP/prog.tt6e.truth" "$SRC/prog.tt6e")"
check_eq "thread_002.tt6e: the model reads gen_tt6's records" ok \
	"$("$PY" "$HERE/tt6_expect.py" selfcheck "$EXP/t2.truth" "$SRC/sub/thread_002.tt6e")"
check "gen_tt6's TT6E program has twi pairs" grep -q 'pair=1' "$EXP/prog.tt6e.records"
for kind in compute flow memory memext escape sync; do
	check "prog.tt6: gen_tt6 wrote $kind records" grep -q "^$kind	" "$EXP/prog.tt6.truth"
done
for code in 00 01 02 03 04 05 07 11 20 21 30 31; do
	check "prog.tt6: gen_tt6 wrote escape code 0x$code" grep -q "	code=$code	" "$EXP/prog.tt6.records"
done

mount_tm "$SRC"
MNT=$TM_MNT

compare prog.tt6 --truth "$EXP/prog.tt6.truth"
compare prog.tt6e --truth "$EXP/prog.tt6e.truth"
compare sub/thread_001.tt6 --truth "$EXP/t1.truth"
compare sub/thread_002.tt6e --truth "$EXP/t2.truth"
compare sub/one.tt6 --truth "$EXP/one.truth"
compare exact.tt6
compare exact.tt6e
# The conversions are the same program as gen_tt6 wrote it in the other format.
check "prog.tt6: convert/prog.tt6e is gen_tt6's TT6E program" cmp "$SRC/prog.tt6e" "$MNT/prog.tt6/convert/prog.tt6e"
check "prog.tt6e: convert/prog.tt6 is gen_tt6's TT6 program" cmp "$SRC/prog.tt6" "$MNT/prog.tt6e/convert/prog.tt6"

# Exact dump values (doc/views.md: its example), column by column as the model splits the
# lines: "NUMBER PC WORD|TEXT|CLASS and fields". (The model checks where the columns are.)
for t in exact.tt6 exact.tt6e; do
	"$PY" "$HERE/tt6_expect.py" columns "$MNT/$t/dump.txt" |
		awk -F'\t' '{ print $1 " " $2 " " $3 "|" $4 "|" $5 }' >"$TM_TMP/$t.columns"
done
line() {
	sed -n "$2p" "$TM_TMP/$1.columns"
}
fmtline() { # NUMBER PC WORD TEXT REST
	printf '%s %s %s|%s|%s' "$1" "$2" "$3" "$4" "$5"
}
check_eq "exact.tt6: initial_pc line" "$(fmtline 0 00001000 00001000 - initial_pc)" "$(line exact.tt6 1)"
check_eq "exact.tt6: mflr r0" "$(fmtline 0 00001000 7c0802a6 'mflr r0' compute)" "$(line exact.tt6 2)"
check_eq "exact.tt6: bl 0x1014" "$(fmtline 1 00001004 48000011 'bl 0x1014' 'flow next=00001014')" \
	"$(line exact.tt6 3)"
check_eq "exact.tt6: lwz r3, 8(r1)" \
	"$(fmtline 2 00001014 80610008 'lwz r3, 8(r1)' 'memory ea=00fff008 size=  4')" "$(line exact.tt6 4)"
check_eq "exact.tt6: lswx (tracemount's own disassembly)" \
	"$(fmtline 3 00001018 7c64042a 'lswx r3, r4, r0' 'memext ea=00fff100 size= 13 xer=0000000d')" \
	"$(line exact.tt6 5)"
check_eq "exact.tt6: sync_signal" \
	"$(fmtline 4 0000101c 00200002 'escape sync_signal' 'sync addr=00a0b0c0 count=00000001')" \
	"$(line exact.tt6 6)"
check_eq "exact.tt6: data_address" \
	"$(fmtline 4 0000101c 00010001 'escape data_address' 'escape code=0x01 words=1 00fff200')" \
	"$(line exact.tt6 7)"
check_eq "exact.tt6: addo r3, r4, r1" "$(fmtline 4 0000101c 7c640e14 'addo r3, r4, r1' compute)" \
	"$(line exact.tt6 8)"
check_eq "exact.tt6: an unknown word is .long" \
	"$(fmtline 5 00001020 07ffffff '.long 0x07ffffff' compute)" "$(line exact.tt6 9)"
check_eq "exact.tt6: a relative bl to the 32-bit target 0xffffff00" \
	"$(fmtline 6 00001024 4bffeedd 'bl 0xffffff00' 'flow next=ffffff00')" "$(line exact.tt6 10)"
check_eq "exact.tt6: blr at 0xffffff00" "$(fmtline 7 ffffff00 4e800020 blr 'flow next=00001028')" \
	"$(line exact.tt6 11)"
check_eq "exact.tt6: stswx, size = XER & 0x7f" \
	"$(fmtline 8 00001028 7ca63d2a 'stswx r5, r6, r7' 'memext ea=00fff300 size=  5 xer=20000085')" \
	"$(line exact.tt6 12)"
check_eq "exact.tt6: dcbz is COMPUTE (one word) in TT6" "9 0000102c 7c001fec|compute" \
	"$(line exact.tt6 13 | cut -d'|' -f1,3)"
check_eq "exact.tt6: the record after dcbz" "10 00001030 80a6fffe" \
	"$(line exact.tt6 14 | cut -d'|' -f1)"
check_eq "exact.tt6: an unknown escape code" \
	"$(fmtline 11 00001034 00070001 'escape unknown' 'escape code=0x07 words=1 12345678')" \
	"$(line exact.tt6 15)"
check_eq "exact.tt6: an escape with no word" \
	"$(fmtline 11 00001034 00020000 'escape condition_register' 'escape code=0x02 words=0')" \
	"$(line exact.tt6 16)"
check_eq "exact.tt6: a conditional branch not taken" "11 00001034 4182fff8|flow next=00001038" \
	"$(line exact.tt6 17 | cut -d'|' -f1,3)"
check_eq "exact.tt6: sc" "$(fmtline 13 00001048 44000002 sc 'flow next=0000104c')" "$(line exact.tt6 19)"
check_eq "exact.tt6: twi is COMPUTE" "14 0000104c 0c830000|compute" \
	"$(line exact.tt6 20 | cut -d'|' -f1,3)"
check_eq "exact.tt6: eciwx (tracemount's own disassembly)" \
	"$(fmtline 15 00001050 7c642a6c 'eciwx r3, r4, r5' 'memory ea=00fff400 size=  4')" \
	"$(line exact.tt6 21)"
check_eq "exact.tt6: mullwo (tracemount's own disassembly)" \
	"$(fmtline 16 00001054 7ca63dd6 'mullwo r5, r6, r7' compute)" "$(line exact.tt6 22)"
check_eq "exact.tt6: divwo. (tracemount's own disassembly)" \
	"$(fmtline 17 00001058 7d0957d7 'divwo. r8, r9, r10' compute)" "$(line exact.tt6 23)"
check_eq "exact.tt6: lswi with NB 0 moves 32 bytes" "memory ea=00fff500 size= 32" \
	"$(line exact.tt6 24 | cut -d'|' -f3)"
check_eq "exact.tt6: lmw r29 moves 12 bytes" "memory ea=00fff600 size= 12" "$(line exact.tt6 25 | cut -d'|' -f3)"
check_eq "exact.tt6: dst: size 0 and ctl" "memext ea=00fff700 size=  0 ctl=01020304" \
	"$(line exact.tt6 26 | cut -d'|' -f3)"
check_eq "exact.tt6: sync_try_wait" \
	"$(fmtline 21 00001068 00310002 'escape sync_try_wait' 'sync addr=00a0b0c0 count=00000001')" \
	"$(line exact.tt6 27)"
check_eq "exact.tt6: a sync_reserved code is an escape" \
	"$(fmtline 21 00001068 00250002 'escape sync_reserved' 'escape code=0x25 words=2 00000001 00000002')" \
	"$(line exact.tt6 28)"
check_eq "exact.tt6: a sync code with count 1 is an escape" \
	"$(fmtline 21 00001068 00200001 'escape sync_signal' 'escape code=0x20 words=1 00a0b0c0')" \
	"$(line exact.tt6 29)"
check_eq "exact.tt6: b back" "$(fmtline 21 00001068 4bfffffc 'b 0x1064' 'flow next=00001064')" \
	"$(line exact.tt6 30)"
check_eq "exact.tt6: 30 lines" 30 "$(wc -l <"$MNT/exact.tt6/dump.txt")"
check_eq "exact.tt6: sync.txt" "4 0000101c signal 00a0b0c0 1|21 00001068 try_wait 00a0b0c0 1" \
	"$(awk '{ $1 = $1; print }' "$MNT/exact.tt6/sync.txt" | paste -sd'|')"
check_eq "exact.tt6: errors.txt names the three bad escapes by offset" \
	"offset 104:|offset 200:|offset 212:" \
	"$(cut -d' ' -f1-2 "$MNT/exact.tt6/errors.txt" | paste -sd'|')"
check_eq "exact.tt6: an lwz across a page counts both lines and pages it touches (doc/views.md)" \
	"ok" "$("$PY" -c 'import json, sys
t = json.load(open(sys.argv[1]))["tt6"]
# EAs: 00fff008 00fff100 00fff300 00000ffe 00fff400 00fff500 00fff600 00fff700
# the lwz at 00000ffe moves 4 bytes: lines 0x3f and 0x40, pages 0 and 1
print("ok" if (t["data_lines_64b"], t["data_pages_4k"]) == (9, 3) else
      "lines %s pages %s, expected 9 and 3" % (t["data_lines_64b"], t["data_pages_4k"]))' \
	"$MNT/exact.tt6/stats.json")"
check_eq "exact.tt6e: twi" "0 00002000 0c830000|compute" "$(line exact.tt6e 2 | cut -d'|' -f1,3)"
check_eq "exact.tt6e: the synthetic ba 0x700" \
	"$(fmtline 1 00002004 48000702 'ba 0x700' 'flow next=00000700')" "$(line exact.tt6e 3)"
check_eq "exact.tt6e: the synthetic rfi" "$(fmtline 2 00000700 4c000064 rfi 'flow next=00002004')" \
	"$(line exact.tt6e 4)"
check_eq "exact.tt6e: dcbz is MEMORY (opcode and EA) in TT6E" "memory ea=00fff800 size=  0" \
	"$(line exact.tt6e 5 | cut -d'|' -f3)"
check_eq "exact.tt6e: escape 0x11 is dcbx_address" \
	"$(fmtline 6 00002010 00110001 'escape dcbx_address' 'escape code=0x11 words=1 00fff880')" \
	"$(line exact.tt6e 9)"
check_eq "exact.tt6e: twi_pairs" 1 "$("$PY" -c 'import json, sys
print(json.load(open(sys.argv[1]))["tt6e"]["twi_pairs"])' "$MNT/exact.tt6e/stats.json")"
check_eq "exact.tt6e: cache_ops counts the four dcbx/icbi records" 4 "$("$PY" -c 'import json, sys
print(json.load(open(sys.argv[1]))["tt6e"]["cache_ops"])' "$MNT/exact.tt6e/stats.json")"
check_eq "exact.tt6e: din: dcbz writes, dcbt reads, dcbf and icbi give no line" \
	"2 00002000|2 00002004|2 00000700|2 00002004|1 00fff800|2 00002008|2 0000200c|2 00002010|0 00fff880" \
	"$(paste -sd'|' "$MNT/exact.tt6e/convert/exact.din")"
check_eq "exact.tt6: din: lmw word by word; dcbz gives no line in TT6" \
	"2 00001060|0 00fff600|0 00fff604|0 00fff608|2 00001064|0 00fff700" \
	"$(grep -A5 '^2 00001060' "$MNT/exact.tt6/convert/exact.din" | paste -sd'|')"
check_eq "exact.tt6: din: dcbz gives no line in TT6" "2 0000102c|2 00001030|0 00000ffe" \
	"$(grep -A2 '^2 0000102c' "$MNT/exact.tt6/convert/exact.din" | paste -sd'|')"

# plots/sync.svg: well-formed, in a browser, and a control for the model's check
PLOTTED="prog.tt6 prog.tt6e sub/thread_001.tt6 sub/thread_002.tt6e sub/one.tt6 exact.tt6 exact.tt6e"
files=()
for t in $PLOTTED; do
	if command -v xmllint >/dev/null; then
		check "$t: plots/sync.svg is well-formed XML" xmllint --noout "$MNT/$t/plots/sync.svg"
	fi
	files+=("$MNT/$t/plots/sync.svg")
done
command -v xmllint >/dev/null || skip_part tool:xmllint "xmllint is absent (Debian's libxml2-utils)"
mkdir -p "$TM_TMP/controls/plots"
sed 's/data-counts="\([0-9]*\)/data-counts="1\1/' "$MNT/prog.tt6/plots/sync.svg" \
	>"$TM_TMP/controls/plots/sync.svg"
"$PY" "$HERE/tt6_expect.py" syncplot "$SRC/prog.tt6" "$TM_TMP/controls" >"$TM_TMP/controls/wrong.out"
check "a slice's count off in plots/sync.svg fails the model's check" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit !bad }' "$TM_TMP/controls/wrong.out"
"$PY" "$HERE/tt6_expect.py" syncplot "$SRC/prog.tt6" "$MNT/prog.tt6" >"$TM_TMP/controls/right.out"
check "the same check passes on the plot itself" \
	awk -F'\t' '$2 != $3 { bad = 1 } END { exit bad || NR == 0 }' "$TM_TMP/controls/right.out"
if tm_browser "plots/sync.svg"; then
	timeout=$(tm_browser_timeout)
	check "Chromium opens every plots/sync.svg" "$PY" "$HERE/headless.py" "$BROWSER" \
		"$TM_TMP/browser" "$timeout" "${files[@]}"
	n=0
	for t in $PLOTTED; do
		nodata=
		# no sync records (one.tt6, exact.tt6e): the plot says so (the model checks it)
		grep -q "no sync records" "$MNT/$t/plots/sync.svg" && nodata=nodata
		[ -f "$TM_TMP/browser/$n.json" ] && check_compared "$t" "$PY" "$HERE/plots_check.py" \
			browser "$t/plots/sync.svg" "$TM_TMP/browser/$n.json" $nodata
		n=$((n + 1))
	done
fi

# Record counts, tracemount cat, tracemount ls and ls -l, for every trace.
cd "$SRC" || exit 1
for t in prog.tt6 prog.tt6e sub/thread_001.tt6 sub/thread_002.tt6e sub/one.tt6 exact.tt6 exact.tt6e; do
	case $t in
	prog.tt6) truth=$EXP/prog.tt6.truth ;;
	prog.tt6e) truth=$EXP/prog.tt6e.truth ;;
	sub/thread_001.tt6) truth=$EXP/t1.truth ;;
	sub/thread_002.tt6e) truth=$EXP/t2.truth ;;
	sub/one.tt6) truth=$EXP/one.truth ;;
	*) truth=$EXP/$t.records ;;
	esac
	m=$MNT/$t
	check_eq "$t: wc -l dump.txt = records" "$(wc -l <"$truth")" "$(wc -l <"$m/dump.txt")"
	check_eq "$t: stats.json records = records" "$(wc -l <"$truth")" \
		"$(grep -m1 '"records"' "$m/stats.json" | tr -dc 0-9)"
	"$TRACEMOUNT" ls "$t" >"$TM_TMP/ls.out"
	check_eq "$t: tracemount ls exits 0" 0 "$?"
	# report.html, every trace's page in the mount, is no view: ls does not list it
	(cd "$m" && find . -type f ! -path ./report.html | sed 's|^\./||' | LC_ALL=C sort) \
		>"$TM_TMP/found"
	check_eq "$t: tracemount ls lists the views of the folder" "$(cat "$TM_TMP/found")" \
		"$(awk '{ print $2 }' "$TM_TMP/ls.out" | LC_ALL=C sort)"
	check_eq "$t: tracemount ls lists raw, dump.txt, stats.json, errors.txt first" \
		"raw dump.txt stats.json errors.txt" "$(awk 'NR <= 4 { print $2 }' "$TM_TMP/ls.out" | paste -sd' ')"
	while read -r size view; do
		"$TRACEMOUNT" cat "$t" "$view" >"$TM_TMP/cat.out"
		check_eq "$t: tracemount cat $view exits 0" 0 "$?"
		check "$t: tracemount cat $view equals the mounted file" cmp "$TM_TMP/cat.out" "$m/$view"
		check_eq "$t: tracemount ls size of $view = wc -c" "$(wc -c <"$m/$view")" "$size"
	done <"$TM_TMP/ls.out"
	for dir in "$m" "$m/class" "$m/convert"; do
		# ls -l: the size column of every file equals wc -c.
		ls -l "$dir" | awk 'NF >= 9 && substr($1, 1, 1) == "-" { print $5, $9 }' >"$TM_TMP/lsl"
		while read -r size f; do
			check_eq "$t: ls -l size of ${dir#"$m"}/$f = wc -c" "$(wc -c <"$dir/$f")" "$size"
		done <"$TM_TMP/lsl"
	done
done
cd - >/dev/null || exit 1

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
