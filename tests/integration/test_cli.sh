#!/bin/bash
# The command line: exit codes and messages of every usage and error case, `tracemount cat`
# and `tracemount ls` (their messages, help, --format NAME or GLOB:NAME, options after the
# operands, "--") against the mounted views and an independent reference decoder,
# --format / -o format= overrides, single-file mounts and -o memory= budgets; `cat TRACE
# report.html`, `ls FOLDER`, -o umask=, --help and --help-fuse (issue 40).
#
# Expectations come from the product brief (exit codes 0/1/2, errors naming the file, view
# names from the BYU spec's table) and from the source files themselves (raw bytes, the
# reference decoder's dump), never from tracemount's own output alone.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$HERE/../../meson.build" | head -n 1)

SRC=$TM_TMP/src
mkdir -p "$SRC/sub" "$TM_TMP/out"
"$GEN_BYU" -n 5000 -s 7 >"$SRC/t.byu"
cp "$SRC/t.byu" "$SRC/t.dat"
cp "$SRC/t.byu" "$SRC/sub/s.dat"
"$GEN_BYU" -n 300 -s 11 >"$SRC/sub/u.byu"
printf 'not a trace, just notes\n' >"$SRC/notes.txt"
"$BYU_REFDEC" <"$SRC/t.byu" >"$TM_TMP/t.ref"
"$BYU_REFDEC" <"$SRC/sub/u.byu" >"$TM_TMP/u.ref"

# The BYU classes: the reference decoder's operation names, in lower case (brief and spec).
CLASSES="invalid int_ack special io_read io_write i_fetch nc_i_fetch d_read nc_d_read write_back d_write"

# The views a BYU trace named STEM.EXT must have (brief, section 2).
expected_views() {
	local stem=$1 c
	{
		printf '%s\n' raw dump.txt stats.json errors.txt "convert/$stem.din"
		printf '%s\n' plots/mix.svg plots/footprint.svg # every trace's
		printf '%s\n' plots/addresses.svg
		for c in $CLASSES; do
			printf 'class/%s.txt\nclass/%s.byu\n' "$c" "$c"
		done
	} | LC_ALL=C sort
}


# contains TEXT WORD: TEXT mentions WORD (fixed string, case-insensitive).
contains() {
	printf '%s' "$1" | grep -qiF -- "$2"
}

# A mount attempt that must fail must not leave a mount behind.
NOMNT=$TM_TMP/nomnt
mkdir -p "$NOMNT"
no_mount_left() {
	if mountpoint -q "$NOMNT"; then
		fusermount3 -u "$NOMNT" 2>/dev/null || fusermount3 -uz "$NOMNT"
		return 1
	fi
	return 0
}

# expect_mount_status WHAT STATUS WORD ARGS...: a mount command line that must fail with STATUS
# and a message mentioning WORD, leaving nothing mounted.
expect_mount_status() {
	local what=$1 status=$2 word=$3
	shift 3
	run_tm "$@"
	check_eq "$what: exit status" "$status" "$RC"
	check "$what: message mentions '$word' ($ERR)" contains "$ERR" "$word"
	check "$what: nothing mounted" no_mount_left
}

# ---------------------------------------------------------------------------------------
# --help and --version
run_tm --help
check_eq "--help exits 0" 0 "$RC"
for word in cat ls memory= format= SOURCE MOUNTPOINT; do
	check "--help mentions $word" grep -qF -- "$word" "$OUT"
done
check "--version: meson.build names a version" test -n "$VERSION"
run_tm --version
check_eq "--version exits 0" 0 "$RC"
check_eq "--version prints the version first" "tracemount $VERSION" "$(head -n 1 "$OUT")"
check_eq "--version writes nothing to stderr" "" "$ERR"

# ---------------------------------------------------------------------------------------
# Usage errors: exit 2 and a message naming the problem.
run_tm
check_eq "no arguments: exit status" 2 "$RC"
check "no arguments: usage message" contains "$ERR" usage
expect_mount_status "SOURCE without MOUNTPOINT" 2 usage "$SRC"
expect_mount_status "-o memory=lots" 2 "memory=lots" -o memory=lots "$SRC" "$NOMNT"
expect_mount_status "-o memory= (empty)" 2 "memory" -o memory= "$SRC" "$NOMNT"
expect_mount_status "-o memory=-5" 2 "memory=-5" -o memory=-5 "$SRC" "$NOMNT"
expect_mount_status "-o memory=12Q" 2 "memory=12Q" -o memory=12Q "$SRC" "$NOMNT"
expect_mount_status "-o memory=99999999999T (overflow)" 2 "memory=" -o memory=99999999999T \
	"$SRC" "$NOMNT"
for mem in 0 1K 4096 1023K; do
	expect_mount_status "-o memory=$mem (below one span)" 2 "smallest budget, 1M" \
		-o "memory=$mem" "$SRC" "$NOMNT"
done
expect_mount_status "-o format= with an unknown format" 2 "nosuchformat" \
	-o 'format=*.dat:nosuchformat' "$SRC" "$NOMNT"
expect_mount_status "-o format= without ':'" 2 "GLOB:NAME" -o 'format=*.dat' "$SRC" "$NOMNT"
expect_mount_status "-o format= with an empty glob" 2 "format=" -o 'format=:byu' "$SRC" "$NOMNT"
expect_mount_status "unknown option" 2 "--no-such-option" --no-such-option "$SRC" "$NOMNT"
expect_mount_status "unknown -o option" 2 "nosuchopt" -o nosuchopt "$SRC" "$NOMNT"

run_tm cat
check_eq "cat without operands: exit status" 2 "$RC"
check "cat without operands: usage message" contains "$ERR" usage
run_tm cat "$SRC/t.byu"
check_eq "cat without VIEW: exit status" 2 "$RC"
check "cat without VIEW: usage message" contains "$ERR" usage
run_tm cat "$SRC/t.byu" raw extra
check_eq "cat with an extra operand: exit status" 2 "$RC"
run_tm ls
check_eq "ls without operands: exit status" 2 "$RC"
check "ls without operands: usage message" contains "$ERR" usage
run_tm ls "$SRC/t.byu" "$SRC/t.dat"
check_eq "ls with two operands: exit status" 2 "$RC"
run_tm ls --no-such-option "$SRC/t.byu"
check_eq "ls with an unknown option: exit status" 2 "$RC"
check_eq "ls with an unknown option: the message" \
	"tracemount ls: unknown option '--no-such-option' (see tracemount ls --help)" "$ERR"
run_tm cat "$SRC/t.byu" raw --cache
check_eq "cat --cache without DIR: exit status" 2 "$RC"
check_eq "cat --cache without DIR: the message" \
	"tracemount cat: option needs an argument: '--cache' (see tracemount cat --help)" "$ERR"
run_tm cat "$SRC/t.byu"
check_eq "cat without VIEW: the message" \
	"tracemount cat: usage: tracemount cat [OPTION]... TRACE VIEW (see tracemount cat --help)" \
	"$ERR"
for cmd in cat ls; do
	run_tm "$cmd" --help
	check_eq "$cmd --help: exit status" 0 "$RC"
	check_eq "$cmd --help: nothing on stderr" "" "$ERR"
	for word in "usage: tracemount $cmd" --cache --format GLOB:NAME --help byu; do
		check "$cmd --help mentions $word" grep -qF -- "$word" "$OUT"
	done
done
run_tm cat --format nosuchformat "$SRC/t.dat" raw
check_eq "cat --format with an unknown format: exit status" 2 "$RC"
check "cat --format with an unknown format: message names it" contains "$ERR" nosuchformat
run_tm ls --format nosuchformat "$SRC/t.dat"
check_eq "ls --format with an unknown format: exit status" 2 "$RC"
check "ls --format with an unknown format: message names it" contains "$ERR" nosuchformat
check "ls --format with an unknown format: the message names it and lists the formats" \
	grep -qF "tracemount ls: --format nosuchformat: no format nosuchformat (the formats: byu," \
	<<<"$ERR"
run_tm cat --format '*.dat:nosuchformat' "$SRC/t.dat" raw
check_eq "cat --format GLOB:NAME with an unknown format: exit status" 2 "$RC"
check "cat --format GLOB:NAME with an unknown format: the message" \
	grep -qF "tracemount cat: --format *.dat:nosuchformat: no format nosuchformat (the formats:" \
	<<<"$ERR"
run_tm ls --format '*.dat:' "$SRC/t.dat"
check_eq "ls --format GLOB: without NAME: exit status" 2 "$RC"
check_eq "ls --format GLOB: without NAME: the message" \
	"tracemount ls: --format *.dat:: expected GLOB:NAME" "$ERR"

# ---------------------------------------------------------------------------------------
# Errors: exit 1 and a message naming the file (or the view).
expect_mount_status "nonexistent SOURCE" 1 "no-such-source" "$TM_TMP/no-such-source" "$NOMNT"
expect_mount_status "single file that is not a trace" 1 "notes.txt" "$SRC/notes.txt" "$NOMNT"
expect_mount_status "nonexistent MOUNTPOINT" 1 "no-such-mountpoint" "$SRC" \
	"$TM_TMP/no-such-mountpoint"

run_tm cat "$SRC/t.byu" no-such-view
check_eq "cat of an unknown view: exit status" 1 "$RC"
check "cat of an unknown view: message names the view" contains "$ERR" no-such-view
check_eq "cat of an unknown view: no output" 0 "$(wc -c <"$OUT")"
run_tm cat "$SRC/t.byu" class
check_eq "cat of a view folder: exit status" 1 "$RC"
run_tm cat "$SRC/missing.byu" raw
check_eq "cat of a missing file: exit status" 1 "$RC"
check "cat of a missing file: message names the file" contains "$ERR" missing.byu
check_eq "cat of a missing file: the message" \
	"tracemount cat: $SRC/missing.byu: No such file or directory" "$ERR"
run_tm ls "$SRC/missing.byu"
check_eq "ls of a missing file: exit status" 1 "$RC"
check "ls of a missing file: message names the file" contains "$ERR" missing.byu
run_tm cat "$SRC/notes.txt" raw
check_eq "cat of a file that is not a trace: exit status" 1 "$RC"
check "cat of a file that is not a trace: message names the file" contains "$ERR" notes.txt
run_tm ls "$SRC/t.dat"
check_eq "ls of a .dat file without --format: exit status" 1 "$RC"
check "ls of a .dat file without --format: message names the file" contains "$ERR" t.dat
check_eq "ls of a .dat file without --format: the message" \
	"tracemount ls: $SRC/t.dat: not a recognised trace (name its format with --format NAME)" \
	"$ERR"
run_tm cat --format '*.txt:byu' "$SRC/t.dat" raw
check_eq "cat --format with a glob that does not match: exit status" 1 "$RC"
run_tm cat "$SRC/t.byu" no-such-view
check_eq "cat of an unknown view: the message" \
	"tracemount cat: $SRC/t.byu: no view 'no-such-view' (see tracemount ls $SRC/t.byu)" "$ERR"

# ---------------------------------------------------------------------------------------
# `tracemount cat` from inside SOURCE (relative path) equals the mounted view; the views agree
# with the source bytes and the reference decoder.
mount_tm "$SRC"
MNT=$TM_MNT
cd "$SRC" || exit 1
for view in raw dump.txt class/d_read.txt class/i_fetch.byu class/write_back.txt convert/t.din \
	stats.json errors.txt; do
	run_tm cat t.byu "$view"
	check_eq "cat t.byu $view: exit status" 0 "$RC"
	check "cat t.byu $view equals the mounted view" cmp -s "$OUT" "$MNT/t.byu/$view"
done
run_tm cat t.byu raw
check "cat t.byu raw equals the source file" cmp -s "$OUT" "$SRC/t.byu"
run_tm cat t.byu dump.txt
check "cat t.byu dump.txt equals the reference decoder" cmp -s "$OUT" "$TM_TMP/t.ref"
check "mounted dump.txt equals the reference decoder" cmp -s "$MNT/t.byu/dump.txt" "$TM_TMP/t.ref"
run_tm cat ./t.byu dump.txt
check "cat ./t.byu dump.txt equals the reference decoder" cmp -s "$OUT" "$TM_TMP/t.ref"
run_tm cat sub/u.byu dump.txt
check "cat sub/u.byu dump.txt (nested relative path)" cmp -s "$OUT" "$TM_TMP/u.ref"
check "cat sub/u.byu equals the mounted view" cmp -s "$OUT" "$MNT/sub/u.byu/dump.txt"
run_tm cat "$SRC/t.byu" class/d_read.txt
check "cat with an absolute path equals the mounted view" cmp -s "$OUT" \
	"$MNT/t.byu/class/d_read.txt"
grep ' D_READ$' "$TM_TMP/t.ref" >"$TM_TMP/d_read.ref"
check "class/d_read.txt holds the reference decoder's D_READ lines" cmp -s \
	"$MNT/t.byu/class/d_read.txt" "$TM_TMP/d_read.ref"

# `tracemount ls` lists every view of the mounted folder, with stat's sizes.
run_tm ls t.byu
check_eq "ls t.byu: exit status" 0 "$RC"
awk '{print $2}' "$OUT" | LC_ALL=C sort >"$TM_TMP/ls.names"
# report.html, every trace's page in the mount, is no view: ls does not list it
(cd "$MNT/t.byu" && find . -type f ! -path ./report.html | sed 's|^\./||' | LC_ALL=C sort) \
	>"$TM_TMP/mnt.names"
check "ls t.byu lists exactly the files of the mounted folder" cmp -s "$TM_TMP/ls.names" \
	"$TM_TMP/mnt.names"
check "ls t.byu lists exactly the brief's BYU views" cmp -s "$TM_TMP/ls.names" \
	<(expected_views t)
check_eq "ls t.byu: every line is 'SIZE VIEW'" 0 \
	"$(grep -cvE '^ *[0-9]+ [^ ]+$' "$OUT")"
while read -r size name; do
	check_eq "ls size of $name equals stat in the mount" "$(stat -c %s "$MNT/t.byu/$name")" "$size"
done <"$OUT"
check_eq "ls size of raw equals the source's size" "$(stat -c %s "$SRC/t.byu")" \
	"$(awk '$2 == "raw" {print $1}' "$OUT")"
check_eq "ls size of dump.txt equals the reference decoder's" "$(wc -c <"$TM_TMP/t.ref")" \
	"$(awk '$2 == "dump.txt" {print $1}' "$OUT")"

# Without an override, a .dat file is a plain file in the mount.
check "t.dat without format= is a regular file" test -f "$MNT/t.dat" -a ! -d "$MNT/t.dat"
check "t.dat without format= is byte-identical" cmp -s "$MNT/t.dat" "$SRC/t.dat"
check "sub/s.dat without format= is a regular file" test -f "$MNT/sub/s.dat"
cd / || exit 1
unmount_tm

# --format on a .dat file.
cd "$SRC" || exit 1
run_tm cat --format byu t.dat dump.txt
check_eq "cat --format byu t.dat dump.txt: exit status" 0 "$RC"
check "cat --format byu t.dat dump.txt equals the reference decoder" cmp -s "$OUT" "$TM_TMP/t.ref"
run_tm cat --format=byu t.dat raw
check_eq "cat --format=byu t.dat raw: exit status" 0 "$RC"
check "cat --format=byu t.dat raw equals the source" cmp -s "$OUT" "$SRC/t.dat"
run_tm cat --format byu t.dat convert/t.din
check_eq "cat --format byu t.dat convert/t.din: exit status" 0 "$RC"
cp "$OUT" "$TM_TMP/dat.din"
run_tm cat t.byu convert/t.din
check "the .din of t.dat equals the .din of the same bytes as t.byu" cmp -s "$OUT" \
	"$TM_TMP/dat.din"
run_tm cat t.dat dump.txt --format byu
check_eq "cat t.dat dump.txt --format byu (an option after the operands): exit status" 0 "$RC"
check "cat t.dat dump.txt --format byu equals the reference decoder" cmp -s "$OUT" \
	"$TM_TMP/t.ref"
run_tm cat --format '*.dat:byu' t.dat dump.txt
check_eq "cat --format '*.dat:byu' t.dat dump.txt: exit status" 0 "$RC"
check "cat --format '*.dat:byu' t.dat dump.txt equals the reference decoder" cmp -s "$OUT" \
	"$TM_TMP/t.ref"
run_tm cat --format 'sub/*.dat:byu' sub/s.dat dump.txt
check "cat --format with a glob of a relative path equals the reference decoder" cmp -s \
	"$OUT" "$TM_TMP/t.ref"
run_tm ls -F '*.dat:byu' --cache none t.dat
check "ls -F GLOB:NAME --cache none lists the brief's BYU views" cmp -s \
	<(awk '{print $2}' "$OUT" | LC_ALL=C sort) <(expected_views t)
run_tm ls --format byu t.dat
check_eq "ls --format byu t.dat: exit status" 0 "$RC"
check "ls --format byu t.dat lists the brief's BYU views" cmp -s \
	<(awk '{print $2}' "$OUT" | LC_ALL=C sort) <(expected_views t)
cp "$OUT" "$TM_TMP/dat.ls"
run_tm ls t.byu
check "ls of t.dat and of t.byu (same bytes) agree" cmp -s "$OUT" "$TM_TMP/dat.ls"
cd / || exit 1

# A trace whose name starts with '-' follows "--".
mkdir -p "$TM_TMP/dash"
cp "$SRC/t.byu" "$TM_TMP/dash/-t.byu"
run_tm cat -- "$TM_TMP/dash/-t.byu" dump.txt
check "cat -- -t.byu dump.txt equals the reference decoder" cmp -s "$OUT" "$TM_TMP/t.ref"
(cd "$TM_TMP/dash" && "$TRACEMOUNT" ls --cache none -- -t.byu >"$TM_TMP/dash.ls" 2>&1)
check "ls -- -t.byu lists the brief's BYU views" cmp -s \
	<(awk '{print $2}' "$TM_TMP/dash.ls" | LC_ALL=C sort) <(expected_views -t)

# -o format='*.dat:byu' makes .dat files trace folders (the glob matches base names).
mount_tm "$SRC" -o 'format=*.dat:byu'
MNT=$TM_MNT
check "format=*.dat:byu: t.dat is a folder" test -d "$MNT/t.dat"
check "format=*.dat:byu: t.dat/dump.txt equals the reference decoder" cmp -s \
	"$MNT/t.dat/dump.txt" "$TM_TMP/t.ref"
check "format=*.dat:byu: t.dat/convert/t.din exists" test -f "$MNT/t.dat/convert/t.din"
check "format=*.dat:byu: sub/s.dat (base name match) is a folder" test -d "$MNT/sub/s.dat"
check "format=*.dat:byu: t.byu is still a trace" cmp -s "$MNT/t.byu/dump.txt" "$TM_TMP/t.ref"
check "format=*.dat:byu: notes.txt is still a plain file" cmp -s "$MNT/notes.txt" \
	"$SRC/notes.txt"
cd "$SRC" || exit 1
run_tm cat --format byu t.dat class/i_fetch.txt
check "format=*.dat:byu: mounted class file equals cat --format byu" cmp -s "$OUT" \
	"$MNT/t.dat/class/i_fetch.txt"
cd / || exit 1
unmount_tm

# A glob with '/' matches the path relative to SOURCE; format= is repeatable.
mount_tm "$SRC" -o 'format=sub/*.dat:byu' -o 'format=notes.*:byu'
MNT=$TM_MNT
check "format=sub/*.dat:byu: sub/s.dat is a folder" test -d "$MNT/sub/s.dat"
check "format=sub/*.dat:byu: sub/s.dat/dump.txt equals the reference decoder" cmp -s \
	"$MNT/sub/s.dat/dump.txt" "$TM_TMP/t.ref"
check "format=sub/*.dat:byu: t.dat at the root stays a plain file" test -f "$MNT/t.dat"
check "second format= option applies too: notes.txt is a folder" test -d "$MNT/notes.txt"
unmount_tm

# ---------------------------------------------------------------------------------------
# A single trace file as SOURCE: the root holds that trace and .tracemount, nothing else.
mount_tm "$SRC/t.byu"
MNT=$TM_MNT
check_eq "single-file mount: root lists the trace and .tracemount" \
	"$(printf '.tracemount\nt.byu')" "$(ls -A "$MNT" | LC_ALL=C sort)"
check "single-file mount: the trace is a folder" test -d "$MNT/t.byu"
check "single-file mount: dump.txt equals the reference decoder" cmp -s "$MNT/t.byu/dump.txt" \
	"$TM_TMP/t.ref"
check "single-file mount: raw equals the source" cmp -s "$MNT/t.byu/raw" "$SRC/t.byu"
check "single-file mount: sibling files are not reachable" test ! -e "$MNT/notes.txt"
check "single-file mount: sibling folders are not reachable" test ! -e "$MNT/sub"
check "single-file mount: .tracemount/version" test -f "$MNT/.tracemount/version"
unmount_tm

# A symbolic link given as SOURCE: the trace it leads to, under the trace's own name.
ln -s "$SRC/t.byu" "$TM_TMP/link-to-t.byu"
mount_tm "$TM_TMP/link-to-t.byu"
MNT=$TM_MNT
check_eq "single-file mount of a link: root lists the linked trace and .tracemount" \
	"$(printf '.tracemount\nt.byu')" "$(ls -A "$MNT" | LC_ALL=C sort)"
check "single-file mount of a link: dump.txt equals the reference decoder" cmp -s \
	"$MNT/t.byu/dump.txt" "$TM_TMP/t.ref"
unmount_tm

mount_tm "$SRC/t.dat" -o 'format=*.dat:byu'
MNT=$TM_MNT
check_eq "single-file mount with format=: root lists the trace and .tracemount" \
	"$(printf '.tracemount\nt.dat')" "$(ls -A "$MNT" | LC_ALL=C sort)"
check "single-file mount with format=: dump.txt equals the reference decoder" cmp -s \
	"$MNT/t.dat/dump.txt" "$TM_TMP/t.ref"
unmount_tm

# ---------------------------------------------------------------------------------------
# -o memory=: a tight budget still serves the right bytes; size spellings are accepted.
"$GEN_BYU" -n 400000 -s 5 >"$SRC/big.byu"
"$BYU_REFDEC" <"$SRC/big.byu" >"$TM_TMP/big.ref"
(cd "$SRC" && "$TRACEMOUNT" cat big.byu dump.txt >"$TM_TMP/big.cat")
check "unconstrained cat of big.byu dump.txt equals the reference decoder" cmp -s \
	"$TM_TMP/big.cat" "$TM_TMP/big.ref"
for mem in 1M 1024K; do
	mount_tm "$SRC" -o "memory=$mem"
	MNT=$TM_MNT
	check "memory=$mem: dump.txt equals the unconstrained cat" cmp -s "$MNT/big.byu/dump.txt" \
		"$TM_TMP/big.cat"
	# Reads far apart, twice, so chunks must be evicted and decoded again.
	size=$(stat -c %s "$TM_TMP/big.ref")
	ok=0
	for off in $((size - 5000)) 17 $((size / 2)) $((size / 3 + 1)) $((size - 5000)) 17; do
		a=$(tail -c +$((off + 1)) "$MNT/big.byu/dump.txt" | head -c 3000 | md5sum)
		b=$(tail -c +$((off + 1)) "$TM_TMP/big.ref" | head -c 3000 | md5sum)
		[ "$a" = "$b" ] || ok=1
	done
	check_eq "memory=$mem: reads at scattered offsets equal the reference" 0 "$ok"
	check "memory=$mem: class/d_write.byu equals cat" cmp -s "$MNT/big.byu/class/d_write.byu" \
		<(cd "$SRC" && "$TRACEMOUNT" cat big.byu class/d_write.byu)
	unmount_tm
done
for opts in memory=64M memory=1G memory=64MiB cache=none "cache=$TM_TMP/cache"; do
	mount_tm "$SRC" -o "$opts"
	check "-o $opts: mounted and serves dump.txt" cmp -s "$TM_MNT/t.byu/dump.txt" "$TM_TMP/t.ref"
	unmount_tm
done
# libfuse's own options and a comma-separated -o list mixing libfuse's and tracemount's.
mount_tm "$SRC" -s -d
check "-s -d: mounted and serves dump.txt" cmp -s "$TM_MNT/t.byu/dump.txt" "$TM_TMP/t.ref"
unmount_tm
mount_tm "$SRC" -o 'allow_other,memory=8M,format=*.dat:byu,ro'
check "-o allow_other,memory=8M,format=*.dat:byu,ro: t.dat is a trace folder" cmp -s \
	"$TM_MNT/t.dat/dump.txt" "$TM_TMP/t.ref"
unmount_tm

# ---------------------------------------------------------------------------------------
# Issue 40: each message names the argument it is about, and the nearest right one.
run_tm "$SRC" "$TM_TMP/no-such-mountpoint"
check_eq "missing mount point: the message says mount point" \
	"tracemount: mount point $TM_TMP/no-such-mountpoint does not exist" "$ERR"
run_tm "$TM_TMP/no-such-source" "$NOMNT"
check_eq "missing source: the message says source" \
	"tracemount: source $TM_TMP/no-such-source does not exist" "$ERR"
check "missing source: nothing mounted" no_mount_left
cd "$TM_TMP" || exit 1
run_tm lss x
check_eq "tracemount lss x: exit status" 2 "$RC"
check_eq "tracemount lss x: no command lss, the commands listed, the nearest" \
	"tracemount: no command 'lss' (the commands: cat, ls, index, help; nearest: ls), and no source of that name" \
	"$ERR"
run_tm catt
check "tracemount catt: no command catt, nearest cat" grep -qF \
	"no command 'catt' (the commands: cat, ls, index, help; nearest: cat)" <<<"$ERR"
cd / || exit 1
run_tm -o 'format=*.bin:byuu' "$SRC" "$NOMNT"
check_eq "-o format=*.bin:byuu: exit status" 2 "$RC"
check "-o format=*.bin:byuu: the message names byuu and the nearest, byu" grep -qE \
	"^tracemount: -o format=\*\.bin:byuu: no format byuu \(the formats: .*; nearest: byu\)$" \
	<<<"$ERR"
for f in byu byu12 tt6 tt6e cis501 tarmac qemu4v full spixcounts; do
	check "-o format=*.bin:byuu: the message lists $f" grep -qE "[ ,]$f[,;]" <<<"$ERR"
done
check "-o format=*.bin:byuu: nothing mounted" no_mount_left
run_tm cat --format tt6f "$SRC/t.dat" raw
check "cat --format tt6f: the nearest formats' name" grep -qF "nearest: tt6" <<<"$ERR"
run_tm -o memroy=8M "$SRC" "$NOMNT"
check_eq "-o memroy=8M: exit status" 2 "$RC"
check_eq "-o memroy=8M: tracemount's message, with the nearest option" \
	"tracemount: unknown option -o memroy=8M (nearest: -o memory; see tracemount --help)" "$ERR"
run_tm -o ro,alow_other,nonemtpy "$SRC" "$NOMNT"
check_eq "-o ro,alow_other,nonemtpy: one line per unknown option, each with its nearest" \
	"$(printf '%s\n%s' \
		"tracemount: unknown option -o alow_other (nearest: -o allow_other; see tracemount --help)" \
		"tracemount: unknown option -o nonemtpy (nearest: -o nonempty; see tracemount --help)")" \
	"$ERR"
check "unknown options: nothing mounted" no_mount_left
run_tm help --help
check_eq "help --help: exit status" 0 "$RC"
check_eq "help --help: nothing on stderr" "" "$ERR"
check_eq "help --help: the usage" "usage: tracemount [options] SOURCE MOUNTPOINT" \
	"$(head -n 1 "$OUT")"
# Index files need a folder: where the default one cannot be made, the mount's hint.
printf 'a file where a folder should be\n' >"$TM_TMP/home-file"
run_tm_home() {
	RUN_N=$((RUN_N + 1))
	OUT=$TM_TMP/out/$RUN_N.out
	env -u XDG_CACHE_HOME HOME="$TM_TMP/home-file" timeout 120 "$TRACEMOUNT" "$@" >"$OUT" \
		2>"$TM_TMP/out/$RUN_N.err"
	RC=$?
	ERR=$(cat "$TM_TMP/out/$RUN_N.err")
}
run_tm_home index "$SRC/t.byu"
check_eq "index without a cache folder that can be made: exit status" 1 "$RC"
check_eq "index without a cache folder that can be made: the message and the hint" \
	"tracemount index: cache folder $TM_TMP/home-file/.cache/tracemount: Not a directory (give --cache DIR)" \
	"$ERR"

# --help fits 80 columns, tracemount's options first; libfuse's behind --help-fuse.
for cmd in "" cat ls index; do
	# shellcheck disable=SC2086 # cmd is one word or none
	run_tm $cmd --help
	check_eq "${cmd:-tracemount} --help: every line fits 80 columns" "" \
		"$(LC_ALL=C.UTF-8 awk 'length > 80' "$OUT")"
done
run_tm --help
check_eq "--help: libfuse's list is not in it" "" "$(grep -E 'FUSE options|max_idle_threads' "$OUT")"
check "--help: tracemount's options" grep -qx "tracemount options:" "$OUT"
check "--help: says where libfuse's options are" grep -qF "tracemount --help-fuse" "$OUT"
run_tm --help-fuse
check_eq "--help-fuse: exit status" 0 "$RC"
check "--help-fuse: libfuse's options" grep -qF -- "-o max_idle_threads" "$OUT"

# `cat TRACE report.html` is the mount's page; `ls FOLDER` lists the mount's root; the mount
# table names SOURCE by its absolute path; -o umask= never shows a write bit.
cd "$TM_TMP" || exit 1
mount_tm src -o 'format=*.dat:byu' -o umask=0
MNT=$TM_MNT
cd / || exit 1
run_tm cat "$SRC/t.byu" report.html
check_eq "cat t.byu report.html: exit status" 0 "$RC"
check "cat t.byu report.html: the mount's page" cmp -s "$OUT" "$MNT/t.byu/report.html"
check "cat t.byu report.html: an HTML page" grep -qi "<html" "$OUT"
run_tm cat --format byu "$SRC/t.dat" report.html
check "cat --format byu t.dat report.html: the mount's page" cmp -s "$OUT" \
	"$MNT/t.dat/report.html"
run_tm ls --format '*.dat:byu' "$SRC"
check_eq "ls FOLDER: exit status" 0 "$RC"
check "ls FOLDER: the names ls -Ap shows at the mount's root" cmp -s "$OUT" \
	<(cd "$MNT" && ls -Ap | LC_ALL=C sort)
check "ls FOLDER: t.byu is a folder" grep -qx "t.byu/" "$OUT"
run_tm ls "$SRC/sub"
check_eq "ls sub: s.dat is a plain file, u.byu a trace" "$(printf 's.dat\nu.byu/')" \
	"$(grep -v '^\.tracemount/$' "$OUT")"
check_eq "the mount table: SOURCE, given as src, by its absolute path" "tracemount:$(realpath "$SRC")" \
	"$(awk -v m="$MNT" '$2 == m { print $1 }' /proc/mounts)"
check_eq "-o umask=0: no file or folder shows a write bit" "" \
	"$(find "$MNT" -maxdepth 3 -perm /222 | head -n 3)"
check "-o umask=0: the files are still readable" test -r "$MNT/t.byu/dump.txt"
check_eq "-o umask=0: a folder shows r-x" "dr-xr-xr-x" "$(stat -c %A "$MNT/t.byu")"
unmount_tm
run_tm -o umask=8 "$SRC" "$NOMNT"
check_eq "-o umask=8 (not octal): exit status" 2 "$RC"
check "-o umask=8: the message" grep -qF "tracemount: -o umask=8: not an octal mode" <<<"$ERR"

finish
