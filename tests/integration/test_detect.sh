#!/bin/bash
# Detection reads a file only when its name leaves the format open (format.h, "Detection"),
# and a listing reads none whose name makes it a trace whatever its head: `ls -l` of a mounted
# folder opens none of its .byu12 traces, nor its .byu ones (BYU, or byu12 when the head says
# so: either way a trace's folder), which are read only once their folder is entered, as strace
# on the daemon shows. In the same folder a .tt6 file, whose name a FULL trace's or a spixcounts
# file's magic word would outbid, is opened: so strace does see the daemon's opens, and the
# checks of none cannot pass by missing them. A .byu file that starts with FULL's magic word is
# BYU (FULL's bid only equals the name's), and one that holds 12-byte records is byu12, in the
# mount and in `tracemount ls`.
# Detection reads a .byu file's head once: `ls -R` of the trace's folder and the lookups of its
# views, after two listings, open it three times at most (detection, the index's key, the index
# pass); rewritten while mounted, the file is
# read again and shows its new format.
. "$(dirname "$0")/lib.sh"

if ! command -v strace >/dev/null; then
	skip tool:strace "strace not installed (test_context.c checks that a .byu12 file is not read)"
fi
if [ -n "${TM_DAEMON_WRAP:-}" ]; then
	skip wrapped "the daemon runs under $TM_DAEMON_WRAP already"
fi

SRC=$TM_TMP/src
mkdir -p "$SRC/folder"
for i in 1 2 3 4 5; do
	"$GEN_BYU" -n 1000 -s "$i" >"$SRC/folder/t$i.byu"
done
"$GEN_BYU" -n 1000 -s 6 | gzip >"$SRC/folder/zipped.byu.gz"
"$GEN_TT6" --format tt6 --records 100 --seed 7 >"$SRC/folder/control.tt6"
{
	printf '\xa1\x11\x8e\x17\x00\x00'
	"$GEN_BYU" -n 100 -s 8
} >"$SRC/folder/magic.byu"
BYU="t1.byu t2.byu t3.byu t4.byu t5.byu zipped.byu.gz"
for i in 1 2 3; do
	"$GEN_BYU12" -n 1000 -s "$i" >"$SRC/folder/u$i.byu12"
done
"$GEN_BYU12" -n 1000 -s 4 | gzip >"$SRC/folder/zipped.byu12.gz"
BYU12="u1.byu12 u2.byu12 u3.byu12 zipped.byu12.gz"
"$GEN_BYU12" -n 1000 -s 5 >"$SRC/folder/twelve.byu"
"$GEN_BYU12" -n 1000 -s 6 >"$SRC/folder/rewritten.byu"

# An open of PATH (relative to SOURCE) in the strace log: open, openat or openat2.
opens_of() {
	grep -qE "open(at2?)?\([^\"]*\"$1\"" "$TM_TMP/strace.log"
}

if ! strace -f -qq -o /dev/null true 2>/dev/null; then
	skip no-ptrace "strace cannot trace here (ptrace not permitted)"
fi
# LeakSanitizer cannot run under ptrace: a sanitized daemon would exit 1 at its end.
TM_DAEMON_WRAP="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
strace -f -qq -e trace=open,openat,openat2 -o $TM_TMP/strace.log" mount_tm "$SRC"
TM_DAEMON_WRAP=
ls -l "$TM_MNT/folder" >"$TM_TMP/ls.out"
check_eq "ls -l lists the folder's traces" \
	"$(printf '%s\n' control.tt6 magic.byu $BYU twelve.byu rewritten.byu $BYU12 |
		LC_ALL=C sort | xargs)" \
	"$(awk 'NR > 1 { print $NF }' "$TM_TMP/ls.out" | LC_ALL=C sort | xargs)"
check_eq "each as a folder" "" "$(awk 'NR > 1 && !/^d/' "$TM_TMP/ls.out")"
check "magic.byu has BYU's views" test -f "$TM_MNT/folder/magic.byu/class/i_fetch.byu"
check "twelve.byu has byu12's views" test -f "$TM_MNT/folder/twelve.byu/class/i_fetch.byu12"
check "rewritten.byu has byu12's views" test -f "$TM_MNT/folder/rewritten.byu/class/i_fetch.byu12"
ls -R "$TM_MNT/folder/t1.byu" >/dev/null
stat "$TM_MNT/folder/t1.byu/dump.txt" "$TM_MNT/folder/t1.byu/class/i_fetch.byu" >/dev/null
ls -l "$TM_MNT/folder" >/dev/null
"$GEN_BYU" -n 500 -s 9 >"$SRC/folder/rewritten.byu"
check "rewritten.byu, rewritten with 6-byte records, has BYU's views" \
	test -f "$TM_MNT/folder/rewritten.byu/class/i_fetch.byu"
unmount_tm

check "strace logged the daemon's opens" test -s "$TM_TMP/strace.log"
check "the .tt6 file was opened: its name leaves its format open" opens_of 'folder/control\.tt6'
bad=
for t in $BYU12; do
	opens_of "folder/${t//./\\.}" && bad="$bad $t"
done
check_eq "none of the .byu12 traces was opened" "" "$bad"
bad=
for t in t2.byu t3.byu t4.byu t5.byu zipped.byu.gz; do
	opens_of "folder/${t//./\\.}" && bad="$bad $t"
done
check_eq "none of the .byu traces only listed was opened" "" "$bad"
bad=
for t in t1.byu twelve.byu magic.byu; do
	opens_of "folder/${t//./\\.}" || bad="$bad $t"
done
check_eq "the .byu traces entered were opened: byu12's content bid may overturn their name" "" \
	"$bad"
count_opens() { grep -cE "open(at2?)?\([^\"]*\"folder/$1\"" "$TM_TMP/strace.log"; }
check "t1.byu opened at most 3 times, through two listings, ls -R and its views' lookups" \
	test "$(count_opens 't1\.byu')" -le 3
(cd "$SRC/folder" && "$TRACEMOUNT" ls magic.byu) >"$TM_TMP/cli.out" 2>&1
check "tracemount ls magic.byu: BYU's views" grep -q ' class/i_fetch\.byu$' "$TM_TMP/cli.out"
(cd "$SRC/folder" && "$TRACEMOUNT" ls twelve.byu) >"$TM_TMP/cli.out" 2>&1
check "tracemount ls twelve.byu: byu12's views" grep -q ' class/i_fetch\.byu12$' "$TM_TMP/cli.out"
finish
