#!/bin/bash
# calls/ with program images (doc/calls.md, "Symbols"). Without real traces: -o image= and
# --image that cannot work stop the mount or the command with exit 1 and a message. With ARM's
# calculator traces (../shared/realtraces/tarmac, skipped when absent), in one SOURCE: ref/
# without images; plain/ given the ELF images with -o image=; beside/ with each ELF copied
# beside the traces; corrupt/ with a cut-short ELF beside its trace. calls/folded.txt, tree.txt
# and profile.txt of plain/ and beside/ are what calls_expect.py name makes of ref/'s views
# (named by address) and readelf's symbols; corrupt/'s errors.txt says so and it keeps
# ref/'s views; plots/hot.svg's bars name the functions of that profile.txt. Remounted with
# another offset and with the ELF beside repaired, the views change (no stale index) and only
# those traces are indexed again; with two images for one trace, both name it. tracemount cat
# and ls --image give the mount's bytes and sizes.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CE=$HERE/calls_expect.py
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
R=${REALTRACES:-}
mkdir -p "$SRC/known" "$EXP" "$TM_TMP/nomount"
echo "not an image" >"$TM_TMP/text.elf"
"$PY" "$CE" write tarmac "$SRC/known/prog.tarmac" "$EXP/prog"

# ---- images that cannot work: exit 1, a message, no mount
# bad_mount SPEC MESSAGE
bad_mount() {
	local out status
	out=$(timeout 20 "$TRACEMOUNT" -f -o "image=$1" "$SRC" "$TM_TMP/nomount" 2>&1)
	status=$?
	check_eq "-o image=$1: exit 1" 1 "$status"
	check_eq "-o image=$1: the message" "tracemount: -o image=$1: $2" "$out"
	check "-o image=$1: nothing mounted" test "$(mountpoint -q "$TM_TMP/nomount" && echo m)" = ""
}
bad_mount "*:$TM_TMP/missing.elf" "No such file or directory"
bad_mount "*:$TM_TMP/text.elf" "not an ELF image, or libelf cannot read its symbols"
bad_mount "*:$TM_TMP" "not a regular file"
bad_mount "$TM_TMP/text.elf" "expected GLOB:FILE[@OFFSET]"
bad_mount ":$TM_TMP/text.elf" "no GLOB before ':' (give * for every trace)"
bad_mount "*:$TM_TMP/text.elf@0x1g" \
	"OFFSET 0x1g: not a number (decimal, or hex after 0x) below 2^64"
for cmd in cat ls; do
	args=(prog.tarmac)
	[ $cmd = cat ] && args+=(calls/folded.txt)
	out=$(cd "$SRC/known" && "$TRACEMOUNT" $cmd --image "$TM_TMP/text.elf" "${args[@]}" 2>&1)
	check_eq "$cmd --image TEXT: exit 1" 1 "$?"
	check_eq "$cmd --image TEXT: the message" \
		"tracemount $cmd: --image $TM_TMP/text.elf: not an ELF image, or libelf cannot read its symbols" \
		"$out"
done

if [ -z "$R" ] || [ ! -d "$R/tarmac" ]; then
	skip_part realtraces "no realtraces folder at '$R': ARM's calculator traces and images not tried"
	finish
fi

E64=$R/tarmac/calculator-aarch64.elf
E32=$R/tarmac/calculator-aarch32.elf
readelf -hsW "$E64" >"$EXP/aarch64.sym"
readelf -hsW "$E32" >"$EXP/aarch32.sym"
cat "$EXP/aarch32.sym" "$EXP/aarch64.sym" >"$EXP/both.sym"
mkdir -p "$SRC/ref" "$SRC/plain" "$SRC/beside" "$SRC/corrupt"
REAL=
for t in calculator-aarch64-fastmodel calculator-aarch64-gem5 calculator-aarch64-es-ld-st-style \
	calculator-aarch32-fastmodel calculator-aarch32-es-ld-st-style; do
	cp "$R/tarmac/$t.tarmac" "$SRC/ref/"
	cp "$R/tarmac/$t.tarmac" "$SRC/plain/"
	REAL="$REAL $t.tarmac"
done
BESIDE="calculator-aarch64-fastmodel.tarmac calculator-aarch32-fastmodel.tarmac"
for t in $BESIDE; do
	cp "$R/tarmac/$t" "$SRC/beside/"
done
cp "$E64" "$E32" "$SRC/beside/"
cp "$R/tarmac/calculator-aarch64-gem5.tarmac" "$SRC/corrupt/"
head -c 4000 "$E64" >"$SRC/corrupt/calculator-aarch64.elf"

isa_of() {
	case $1 in *aarch64*) echo aarch64 ;; *) echo aarch32 ;; esac
}

# named FOLDER TRACE SYMBOLS OFFSET LABEL: FOLDER/TRACE's calls/ views are what SYMBOLS at
# OFFSET make of ref/TRACE's (as the first mount showed them), and agree with each other and
# with stats.json.
named() {
	local m=$TM_MNT/$1/$2 e=$EXP/$1.$2.$4
	check "$5: the model names ref/$2's views" "$PY" "$CE" name "$3" "$4" "$TM_TMP/ref/$2" "$e"
	check "$5: folded.txt" cmp -s "$e.folded" <(LC_ALL=C sort "$m/calls/folded.txt")
	check "$5: tree.txt" cmp -s "$e.tree" "$m/calls/tree.txt"
	check "$5: profile.txt" cmp -s "$e.profile" "$m/calls/profile.txt"
	check "$5: plots/hot.svg's bars" cmp -s "$e.hot" \
		<("$PY" "$HERE/plots_check.py" bars "$m/plots/hot.svg")
	check_compared "$5" "$PY" "$CE" check "$m"
	check "$5: errors.txt says nothing of images" test -z "$(grep image "$m/errors.txt")"
}

# ---- first mount: images given, beside, corrupt
mount_tm "$SRC" -o "image=plain/*aarch64*:$E64" -o "image=plain/*aarch32*:$E32"
M=$TM_MNT
for t in $REAL; do
	check "ref/$t: named by address" grep -q '^0x[0-9a-f]*;0x[0-9a-f]* [0-9]*$' \
		"$M/ref/$t/calls/folded.txt"
	# the call model names by address: ref/'s views (not the ES dialect's, whose lines
	# tarmac_expect.py does not read)
	case $t in *-es-*) ;; *)
		check_compared "ref/$t: the call model" "$PY" "$CE" model tarmac "$SRC/ref/$t" \
			"$M/ref/$t"
		;;
	esac
	mkdir -p "$TM_TMP/ref/$t"
	cp -r "$M/ref/$t/calls" "$TM_TMP/ref/$t/"
	named plain "$t" "$EXP/$(isa_of "$t").sym" 0 "plain/$t (-o image=)"
	check "plain/$t: named by the symbols, C++ ones demangled" grep -q \
		'^_start;c_entry;Parser::try_parse();Parser::expr(unsigned int&) [0-9]*$' \
		"$M/plain/$t/calls/folded.txt"
	check "plain/$t: profile.json keeps the symbol beside the demangled name" grep -qzE \
		'"name":"_ZN6Parser4exprERj",[[:space:]]*"demangled":"Parser::expr\(unsigned int&\)"' \
		"$M/plain/$t/calls/profile.json"
	check "plain/$t: hot.svg's tooltip gives the symbol" grep -q \
		'<title>Parser::expr(unsigned int&amp;): .*; symbol _ZN6Parser4exprERj, entry 0x' \
		"$M/plain/$t/plots/hot.svg"
done
for t in $BESIDE; do
	named beside "$t" "$EXP/$(isa_of "$t").sym" 0 "beside/$t (the ELF beside it)"
	check "beside/$t: the views of plain/$t" cmp -s "$M/beside/$t/calls/tree.txt" \
		"$M/plain/$t/calls/tree.txt"
done
c=$M/corrupt/calculator-aarch64-gem5.tarmac
check_eq "corrupt/: errors.txt says the ELF beside cannot be read" \
	"calls/: image calculator-aarch64.elf: not an ELF image, or libelf cannot read its symbols: functions named by address" \
	"$(grep image "$c/errors.txt")"
for v in folded.txt tree.txt profile.txt profile.json flamegraph.svg; do
	check "corrupt/: calls/$v named by address, as ref/'s" cmp -s "$c/calls/$v" \
		"$M/ref/calculator-aarch64-gem5.tarmac/calls/$v"
done
# images_of TRACE_FOLDER: stats.json's calls.images, a line "NAME OFFSET GIVEN FUNCTIONS>0"
# (or the error in place of the last) each
images_of() {
	"$PY" -c 'import json, sys
for i in json.load(open(sys.argv[1]))["calls"]["images"]:
    print(i["name"], i["offset"], i["given"], i["functions"] > 0 if "functions" in i else i["error"])' \
		"$1/stats.json"
}
check_eq "stats.json: the image given" "$E64 0x0 True True" \
	"$(images_of "$M/plain/calculator-aarch64-fastmodel.tarmac")"
check_eq "stats.json: the image beside" "calculator-aarch64.elf 0x0 False True" \
	"$(images_of "$M/beside/calculator-aarch64-fastmodel.tarmac")"
check_eq "stats.json: the image that cannot be read" \
	"calculator-aarch64.elf 0x0 False not an ELF image, or libelf cannot read its symbols" \
	"$(images_of "$c")"
check_eq "stats.json: no image" "" "$(images_of "$M/ref/calculator-aarch64-gem5.tarmac")"
mkdir -p "$TM_TMP/first"
cp "$M/plain/calculator-aarch64-fastmodel.tarmac/calls/folded.txt" "$TM_TMP/first/"
unmount_tm

# ---- another offset, the ELF beside repaired: those views change, the rest are reused
cp "$E64" "$SRC/corrupt/calculator-aarch64.elf"
FAR=0x100000000
mount_tm "$SRC" -o "image=plain/*aarch64*:$E64@$FAR" -o "image=plain/*aarch32*:$E32"
M=$TM_MNT
for t in $REAL; do
	case $t in
	*aarch64*)
		named plain "$t" "$EXP/aarch64.sym" $FAR "plain/$t (@$FAR)"
		check "plain/$t (@$FAR): no symbol reaches the code: ref/'s views" cmp -s \
			"$M/plain/$t/calls/tree.txt" "$TM_TMP/ref/$t/calls/tree.txt"
		;;
	*) named plain "$t" "$EXP/aarch32.sym" 0 "plain/$t (unchanged)" ;;
	esac
	cat "$M/ref/$t/calls/tree.txt" >/dev/null
done
check_eq "stats.json: the new offset" "$E64 $FAR True True" \
	"$(images_of "$M/plain/calculator-aarch64-fastmodel.tarmac")"
check "plain/: the new offset changed the views" test "$(cat "$TM_TMP/first/folded.txt")" != \
	"$(cat "$M/plain/calculator-aarch64-fastmodel.tarmac/calls/folded.txt")"
for t in $BESIDE; do
	cat "$M/beside/$t/calls/tree.txt" >/dev/null
done
named corrupt calculator-aarch64-gem5.tarmac "$EXP/aarch64.sym" 0 "corrupt/ (repaired)"
check_eq "only the traces whose images changed are indexed again" \
	"4 built, 9 read from index files, 0 index files refused" "$(index_counts "$M")"
unmount_tm

# ---- two images for one trace: one table; the same views as the one that names them. (The
# second rule's glob, without '/', matches the base name in every folder, ref/ too.)
mount_tm "$SRC" -o "image=plain/*aarch64*:$E32" -o "image=*-fastmodel.tarmac:$E64"
M=$TM_MNT
t=calculator-aarch64-fastmodel.tarmac
named plain $t "$EXP/both.sym" 0 "plain/$t (two images)"
check "plain/$t (two images): the views of the first mount" cmp -s "$TM_TMP/first/folded.txt" \
	"$M/plain/$t/calls/folded.txt"
check "plain/calculator-aarch64-gem5.tarmac (the aarch32 image alone): named by address" \
	cmp -s "$M/plain/calculator-aarch64-gem5.tarmac/calls/folded.txt" \
	"$TM_TMP/ref/calculator-aarch64-gem5.tarmac/calls/folded.txt"
check "ref/$t: named by the rule whose glob matches its base name" cmp -s \
	"$M/ref/$t/calls/folded.txt" "$TM_TMP/first/folded.txt"
check "beside/$t: the rule's images replace the one beside" cmp -s \
	"$M/beside/$t/calls/folded.txt" "$M/plain/$t/calls/folded.txt"

# ---- tracemount cat and ls --image, and the image beside a trace
cd "$SRC/ref" || exit 1
bad=
for v in calls/tree.txt calls/profile.txt calls/profile.json calls/folded.txt \
	calls/folded-time.txt calls/flamegraph.svg stats.json errors.txt; do
	"$TRACEMOUNT" cat --image "$E32" -i "$E64" $t "$v" >"$TM_TMP/cat.out" &&
		cmp -s "$TM_TMP/cat.out" "$M/plain/$t/$v" || bad="$bad $v"
done
check_eq "cat --image: the mount's bytes of every view tried" "" "$bad"
"$TRACEMOUNT" ls --image "$E32" --image "$E64" $t >"$TM_TMP/ls.out"
check_eq "ls --image: exit 0" 0 "$?"
bad=
while read -r size view; do
	[ "$(stat -c %s "$M/plain/$t/$view")" = "$size" ] || bad="$bad $view"
done <"$TM_TMP/ls.out"
check_eq "ls --image: the mount's sizes" "" "$bad"
check "cat --image FILE@OFFSET: ref/'s views" cmp -s \
	<("$TRACEMOUNT" cat --image "$E64@$FAR" $t calls/folded.txt) \
	"$TM_TMP/ref/$t/calls/folded.txt"
cd "$SRC/beside" || exit 1
check "cat: the image beside the trace names it" cmp -s \
	<("$TRACEMOUNT" cat $t calls/folded.txt) "$TM_TMP/first/folded.txt"
cd / || exit 1
unmount_tm

# ---- tracemount index --image GLOB:IMAGE: the index files a mount given the same images reads
cd "$SRC" || exit 1
"$TRACEMOUNT" index --cache "$TM_TMP/ahead" --image "plain/*aarch64*:$E64@$FAR" \
	-i "plain/*aarch32*:$E32" plain >"$TM_TMP/index.out" 2>&1
status=$?
check_eq "index --image: exit 0 ($(tail -1 "$TM_TMP/index.out"))" 0 "$status"
cd / || exit 1
mount_tm "$SRC" -o "cache=$TM_TMP/ahead,image=plain/*aarch64*:$E64@$FAR" \
	-o "image=plain/*aarch32*:$E32"
M=$TM_MNT
n=0
for t in $REAL; do
	cat "$M/plain/$t/calls/folded.txt" >/dev/null
	n=$((n + 1))
done
check_eq "index --image: the mount with the same images reads every index file" \
	"0 built, $n read from index files, 0 index files refused" "$(index_counts "$M")"
named plain calculator-aarch32-fastmodel.tarmac "$EXP/aarch32.sym" 0 \
	"plain/ (indexed ahead with --image)"
unmount_tm
run_tm index --cache "$TM_TMP/ahead" --image "$TM_TMP/text.elf" "$SRC/plain"
check_eq "index --image without GLOB: exit 1, as -o image=" 1 "$RC"
check "index --image without GLOB: says what is expected" grep -qF "expected GLOB:FILE" <<<"$ERR"
run_tm index --cache "$TM_TMP/ahead" --image "*:$TM_TMP/text.elf" "$SRC/plain"
check_eq "index --image of a file that is no image: exit 1" 1 "$RC"
check "index --image of a file that is no image: says so" grep -q "^tracemount index: --image" \
	<<<"$ERR"
finish
