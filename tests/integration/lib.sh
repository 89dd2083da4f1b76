# Shared by the integration tests: a private temporary folder, a tracemount daemon in the
# foreground, a wait for its mount, assertions, and an unmount that always happens.
#
# Environment (set by meson): TRACEMOUNT, GEN_BYU, BYU_REFDEC, REALTRACES.
# pipefail: a pipeline fails when any of its commands does, not only its last.
set -u -o pipefail

TM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tracemount-test.XXXXXX")
# The default cache folder of index files, private to the test: nothing read from or left in
# the user's own.
export XDG_CACHE_HOME=$TM_TMP/xdg-cache
# Debian's own python3: a version manager's shim on PATH can take seconds to start.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TM_FAILS=0
TM_CHECKS=0
TM_SKIPS=0
TM_DAEMON_PID=
TM_MNT=

# wait_daemon SECONDS: waits for the daemon to exit, killing it if it has not by then (a hung
# daemon must fail the test, not stall it until meson's timeout). Returns its exit status.
wait_daemon() {
	local i
	for i in $(seq 1 $(($1 * 10))); do
		kill -0 "$TM_DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$TM_DAEMON_PID" 2>/dev/null; then
		echo "tracemount did not exit within $1 s: killed" >&2
		kill -9 "$TM_DAEMON_PID" 2>/dev/null
	fi
	wait "$TM_DAEMON_PID" 2>/dev/null
}

tm_cleanup() {
	if [ -n "$TM_MNT" ] && mountpoint -q "$TM_MNT" 2>/dev/null; then
		fusermount3 -u "$TM_MNT" 2>/dev/null || fusermount3 -uz "$TM_MNT" 2>/dev/null
	fi
	if [ -n "$TM_DAEMON_PID" ]; then
		kill "$TM_DAEMON_PID" 2>/dev/null
		wait_daemon 5
	fi
	rm -rf "$TM_TMP"
}
trap tm_cleanup EXIT

# run_tm ARGS...: runs the tracemount command with a time limit, so that a regression that
# hangs cannot stall the suite; sets RC, OUT (the file of its standard output) and ERR (what
# it wrote to standard error).
RUN_N=0
run_tm() {
	RUN_N=$((RUN_N + 1))
	mkdir -p "$TM_TMP/out"
	OUT=$TM_TMP/out/$RUN_N.out
	timeout 120 "$TRACEMOUNT" "$@" >"$OUT" 2>"$TM_TMP/out/$RUN_N.err"
	RC=$?
	ERR=$(cat "$TM_TMP/out/$RUN_N.err")
}

fail() {
	echo "FAIL: $*" >&2
	TM_FAILS=$((TM_FAILS + 1))
}

pass() {
	echo "ok: $*"
}

# skip_part CONDITION REASON...: says that a part of the test does not run, in the one form
# scripts/test counts: "SKIP: [CONDITION] REASON". CONDITION names what the environment lacks,
# from a fixed list that scripts/testlog-count checks against the environment (a skip whose
# condition does not hold there fails scripts/test's run):
#   realtraces          ../shared/realtraces (REALTRACES) is absent: a user's clone
#   not-root            the test runs as another user than root
#   tool:NAME[|NAME]    no program NAME (nor any of the others) on PATH
#   wrapped             the daemon runs under TM_DAEMON_WRAP (valgrind) already
#   no-ptrace           strace cannot trace here
#   no-mounts           bind or tmpfs mounts, or a private mount namespace, not allowed here
#   no-fuse             no /dev/fuse
#   no-mirror:URL       the Debian mirror URL cannot be reached
#   no-tt6-realtraces   ../shared/realtraces holds no TT6 or TT6E trace
# (Any other condition, such as busy, always fails scripts/test's run.)
skip_part() {
	local condition=$1
	shift
	echo "SKIP: [$condition] $*"
	TM_SKIPS=$((TM_SKIPS + 1))
}

# skip CONDITION REASON...: skips the whole test (exit 77, meson's SKIP), saying why as
# skip_part does. The only way a test may exit 77.
skip() {
	skip_part "$@"
	exit 77
}

# check DESCRIPTION COMMAND...: runs the command; it must succeed.
check() {
	local what=$1
	shift
	TM_CHECKS=$((TM_CHECKS + 1))
	if "$@"; then
		pass "$what"
	else
		fail "$what"
	fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	TM_CHECKS=$((TM_CHECKS + 1))
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1: expected '$2', got '$3'"
	fi
}

# mount_tm SOURCE [OPTIONS...]: mounts SOURCE at a new folder, sets TM_MNT. The daemon runs
# under TM_DAEMON_WRAP, words of a command that execs it (such as setpriv or valgrind), if set.
mount_tm() {
	local src=$1
	shift
	TM_MNT=$TM_TMP/mnt.$RANDOM
	mkdir -p "$TM_MNT"
	# shellcheck disable=SC2086 # TM_DAEMON_WRAP is words
	${TM_DAEMON_WRAP:-} "$TRACEMOUNT" -f "$@" "$src" "$TM_MNT" >"$TM_TMP/daemon.out" \
		2>"$TM_TMP/daemon.log" &
	TM_DAEMON_PID=$!
	local i
	for i in $(seq 1 200); do
		if mountpoint -q "$TM_MNT"; then
			return 0
		fi
		if ! kill -0 "$TM_DAEMON_PID" 2>/dev/null; then
			break
		fi
		sleep 0.05
	done
	echo "tracemount did not mount $src:" >&2
	cat "$TM_TMP/daemon.log" >&2
	exit 1
}

# unmount_tm: unmounts and checks that the daemon exited cleanly (sanitizers report by a
# non-zero exit status).
unmount_tm() {
	local status
	fusermount3 -u "$TM_MNT" || fusermount3 -uz "$TM_MNT"
	wait_daemon 20
	status=$?
	TM_DAEMON_PID=
	check_eq "daemon exits cleanly after unmount" 0 "$status"
	if [ "$status" != 0 ]; then
		cat "$TM_TMP/daemon.log" >&2
	fi
}

# daemon_plain: the daemon runs as built for use, neither under a sanitizer nor wrapped (valgrind),
# which make it many times slower and its memory the tool's as much as its own.
daemon_plain() {
	[ -z "${TM_DAEMON_WRAP:-}" ] && { [ -z "${TM_SANITIZE:-}" ] || [ "$TM_SANITIZE" = none ]; }
}

# cat_views SOURCE LIST DIR: for each line TRACE/VIEW of the file LIST, run from SOURCE,
# `tracemount cat TRACE VIEW` into DIR/TRACE/VIEW.
cat_views() {
	local view
	while read -r view; do
		mkdir -p "$3/$(dirname "$view")"
		(cd "$1" && "$TRACEMOUNT" cat "${view%%/*}" "${view#*/}") >"$3/$view" ||
			fail "tracemount cat $view"
	done <"$2"
}

# open_views DIR...: opens every file of each folder DIR (a trace folder of the mount, or
# one of its subfolders), reading none. A product's file (stats.json, errors.txt, report.html,
# spix/, calls/, plots/, a format's tables) is sized 0 until its open builds its product, then
# exactly (doc/architecture.md, "Products"): a check of stat sizes opens them first.
open_views() {
	local f
	while IFS= read -r -d '' f; do
		: <"$f" || fail "open $f"
	done < <(find "$@" -type f -print0)
}

# one_pass DIR...: opens stats.json of each trace folder DIR first, so that one pass builds its
# record index with every product (doc/architecture.md, "Products"), where a record view read
# first would take a second pass for the products: what a test that reads every view of a
# trace would pay twice (under valgrind, minutes).
one_pass() {
	local d
	for d in "$@"; do
		: <"$d/stats.json" || fail "open $d/stats.json"
	done
}

# index_counts MOUNT: "N built, N read from index files, N index files refused", from the
# summary of MOUNT/.tracemount/status.
index_counts() {
	grep -o "[0-9]* built, [0-9]* read from index files, [0-9]* index files refused" \
		"$1/.tracemount/status"
}

# tm_seed: seeds $RANDOM from TM_SEED or the clock, and says how to repeat the run.
tm_seed() {
	SEED=${TM_SEED:-$(date +%s)}
	RANDOM=$SEED
	echo "random seed $SEED (rerun with TM_SEED=$SEED)"
}

# gen_every_format DIR: a generated trace of every format into DIR, from SEED (tm_seed): gen.byu,
# gen.tt6, gen.tt6e, gen.trace (CIS501), gen.tarmac, gen.qemu4v (two processors), gen.full,
# gen.spixcounts (gen.tt6's spix/ counts), and empty.byu, empty.
gen_every_format() {
	"$GEN_BYU" -n 20000 -s "$SEED" >"$1/gen.byu"
	"$GEN_TT6" --format tt6 --records 20000 --seed "$SEED" >"$1/gen.tt6"
	"$GEN_TT6" --format tt6e --records 20000 --seed "$SEED" >"$1/gen.tt6e"
	"$GEN_CIS501" --lines 20000 --seed "$SEED" >"$1/gen.trace"
	"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect fastmodel >"$1/gen.tarmac"
	"$GEN_TARMAC" --lines 20000 --seed "$SEED" --dialect qemu4v --cpus 2 >"$1/gen.qemu4v"
	"$PY" "$(dirname "${BASH_SOURCE[0]}")/full_model.py" gen "$1/gen.full" --steps 3000 \
		--seed "$SEED"
	(cd "$1" && "$TRACEMOUNT" cat gen.tt6 spix/gen.spixcounts) >"$1/gen.spixcounts"
	: >"$1/empty.byu"
}

# is_prefix FILE WHOLE: FILE's bytes are the first bytes of WHOLE.
is_prefix() {
	local n
	n=$(wc -c <"$1")
	if [ "$n" -gt "$(wc -c <"$2")" ]; then
		echo "$1: $n bytes, longer than $2" >&2
		return 1
	fi
	cmp -n "$n" "$1" "$2" >&2 || {
		echo "($n bytes served; errors.txt: $(head -c 300 "${1%/raw}/errors.txt"))" >&2
		return 1
	}
}

# codec_error NAME ERRORS FILE MIN: ERRORS has a line naming the codec NAME (gzip, xz, zstd)
# with a number in [MIN, size of FILE], a compressed offset.
codec_error() {
	local size line n
	size=$(wc -c <"$3")
	while read -r line; do
		for n in $(printf '%s\n' "$line" | grep -oE '[0-9]+'); do
			[ "${#n}" -lt 15 ] && [ "$n" -ge "$4" ] && [ "$n" -le "$size" ] && return 0
		done
	done < <(grep -i "$1" "$2")
	echo "errors.txt: $(head -c 600 "$2")" >&2
	return 1
}

# same_views WHAT PLAIN_DIR DIR: a compressed trace's folder DIR has the same views, sizes and
# bytes as the plain trace's PLAIN_DIR (stats.json but "source").
same_views() {
	local what=$1 p=$2 g=$3 bad
	# report.html, every trace's page, names its trace: test_report checks it
	(cd "$p" && find . -type f ! -path ./report.html | LC_ALL=C sort) >"$TM_TMP/p.list"
	(cd "$g" && find . -type f ! -path ./report.html | LC_ALL=C sort) >"$TM_TMP/g.list"
	check "$what: the same views as the plain trace" cmp "$TM_TMP/p.list" "$TM_TMP/g.list"
	open_views "$p" "$g"
	check_eq "$what: the same view sizes (stat) as the plain trace, stats.json aside" \
		"$(cd "$p" && grep -v '^./stats.json$' "$TM_TMP/p.list" | xargs stat -c '%s %n')" \
		"$(cd "$g" && grep -v '^./stats.json$' "$TM_TMP/p.list" | xargs stat -c '%s %n' 2>&1)"
	bad=$(diff -r -q -x stats.json -x report.html "$p" "$g" 2>&1)
	cmp -s <(sed '/^  "source": /d' "$p/stats.json") <(sed '/^  "source": /d' "$g/stats.json") ||
		bad="$bad stats.json differs: $(diff <(sed '/^  "source": /d' "$p/stats.json") \
			<(sed '/^  "source": /d' "$g/stats.json") | head -n 6)"
	check_eq "$what: every view byte-identical to the plain trace's (stats.json but source)" \
		"" "$bad"
	if [ ! -s "$p/errors.txt" ]; then
		check_eq "$what: errors.txt is empty" "" "$(head -c 300 "$g/errors.txt")"
	fi
}

# damaged_after_indexing DIR NAME PLAIN AT: the compressed trace DIR/NAME, whose decompressed
# bytes are the file PLAIN, indexed by a mount (its index file kept in the cache folder), then
# damaged at compressed byte AT (16 bytes flipped) with its size and modification time kept,
# which the content key cannot see (issue 42): the next mount's read of raw fails with EIO
# where the damage is, never with other bytes; errors.txt, reopened, says the trace was
# indexed anew and why; and a third mount reads the new index file, raw whole at its size.
damaged_after_indexing() {
	local dir=$1 name=$2 plain=$3 at=$4 what="damaged $2"
	local log=$TM_TMP/damage.cat.err
	check "$what: byte $at is outside the 64 KiB at each end that the content key hashes" \
		test "$at" -ge 65536 -a "$((at + 16 + 65536))" -le "$(stat -c %s "$dir/$name")"
	mount_tm "$dir" -o cache="$TM_TMP/damage-cache"
	check "$what: raw before the damage equals the trace" cmp "$plain" "$TM_MNT/$name/raw"
	unmount_tm
	touch -r "$dir/$name" "$TM_TMP/damage.stamp"
	"$PY" -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(16)
f.seek(int(sys.argv[2])); f.write(bytes(x ^ 0x5a for x in b))' "$dir/$name" "$at"
	touch -r "$TM_TMP/damage.stamp" "$dir/$name"
	mount_tm "$dir" -o cache="$TM_TMP/damage-cache"
	cat "$TM_MNT/$name/raw" >"$TM_TMP/damage.raw" 2>"$log"
	check "$what: reading raw fails with EIO" grep -q "Input/output error" "$log"
	check "$what: what raw gave before it failed is the trace's" \
		is_prefix "$TM_TMP/damage.raw" "$plain"
	check "$what: the daemon says which bytes changed" \
		grep -q "$name: decompressing from offset" "$TM_TMP/daemon.log"
	sleep 1.2 # the kernel's attributes of errors.txt expire: it is looked up again
	check "$what: errors.txt, reopened, says the trace was indexed anew and why" \
		grep -q "indexed anew: the last index no longer matched: decompressing from offset" \
		"$TM_MNT/$name/errors.txt"
	unmount_tm
	check "$what: the index file was removed" grep -q "$name: index file .* removed" \
		"$TM_TMP/daemon.log"
	mount_tm "$dir" -o cache="$TM_TMP/damage-cache"
	# shellcheck disable=SC2002 # wc -c on a file takes its size without reading it
	check "$what: remounted, raw reads whole at its size from the new index" \
		test "$(cat "$TM_MNT/$name/raw" | wc -c)" = "$(stat -c %s "$TM_MNT/$name/raw")"
	check "$what: remounted, errors.txt still says why it was indexed anew" \
		grep -q "indexed anew" "$TM_MNT/$name/errors.txt"
	check_eq "$what: remounted, the new index file was read, not rebuilt" \
		"0 built, 1 read from index files, 0 index files refused" "$(index_counts "$TM_MNT")"
	unmount_tm
}

# dd_same FILE EXPECTED OFF LEN: the LEN bytes at OFF of FILE equal those of EXPECTED.
dd_same() {
	cmp <(dd if="$1" iflag=skip_bytes,count_bytes skip="$3" count="$4" bs=65536 status=none) \
		<(dd if="$2" iflag=skip_bytes,count_bytes skip="$3" count="$4" bs=65536 status=none)
}

# random_below N: a random number in [0, N) (N up to 2^30), from $RANDOM (see tm_seed).
random_below() {
	echo $(((RANDOM * 32768 + RANDOM) % $1))
}

# json_get FILE EXPR: EXPR, a Python expression of the parsed JSON object d, for FILE.
json_get() {
	"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2" 2>&1
}

# check_compared LABEL COMMAND...: runs COMMAND, an *_expect.py compare that prints one
# "description<TAB>expected<TAB>actual" line per check, and checks each line. COMMAND must exit
# 0 (one that crashes midway drops the checks it did not reach) and print at least one line,
# each of three fields.
check_compared() {
	local label=$1 what want got status line
	shift
	"$@" >"$TM_TMP/cmp.out" 2>"$TM_TMP/cmp.err"
	status=$?
	check_eq "$label: the compare command exits 0" 0 "$status"
	check "$label: compared" test -s "$TM_TMP/cmp.out"
	[ -s "$TM_TMP/cmp.err" ] && head -c 4000 "$TM_TMP/cmp.err" >&2
	while IFS= read -r line; do
		if [[ $line != *$'\t'*$'\t'* ]]; then
			fail "$label: a compare line not of three fields: '$line'"
			continue
		fi
		IFS=$'\t' read -r what want got <<<"$line"
		check_eq "$what" "$want" "$got"
	done <"$TM_TMP/cmp.out"
}

# check_cli SOURCE TRACE MOUNTED VIEW...: run from SOURCE, `tracemount cat TRACE VIEW` gives
# the bytes of MOUNTED/VIEW for each VIEW, and `tracemount ls TRACE` lists every file of the
# folder MOUNTED (its report.html apart) with its stat size.
check_cli() {
	local src=$1 t=$2 m=$3 view size bad=
	shift 3
	# report.html is the mount's page of the trace, not a view: tracemount ls does not list it
	(cd "$m" && find . -type f ! -path ./report.html | sed 's|^\./||' | LC_ALL=C sort) \
		>"$TM_TMP/views"
	for view in "$@"; do
		(cd "$src" && "$TRACEMOUNT" cat "$t" "$view") >"$TM_TMP/cat.out" 2>"$TM_TMP/cat.err" &&
			cmp -s "$TM_TMP/cat.out" "$m/$view" || bad="$bad $view"
	done
	check_eq "$t: tracemount cat gives the mounted bytes of every view tried" "" "$bad"
	(cd "$src" && "$TRACEMOUNT" ls "$t") >"$TM_TMP/ls.out"
	check_eq "$t: tracemount ls exits 0" 0 "$?"
	check_eq "$t: tracemount ls lists the folder's views" "$(cat "$TM_TMP/views")" \
		"$(awk '{ print $2 }' "$TM_TMP/ls.out" | LC_ALL=C sort)"
	bad=
	open_views "$m"
	while read -r size view; do
		[ "$(stat -c %s "$m/$view")" = "$size" ] || bad="$bad $view"
	done <"$TM_TMP/ls.out"
	check_eq "$t: tracemount ls sizes = stat sizes" "" "$bad"
}

# finish: prints the summary line and exits non-zero if any check failed or none ran. Every
# test script ends here (or in skip).
finish() {
	echo "$((TM_CHECKS - TM_FAILS)) passed, $TM_FAILS failed, $TM_SKIPS skipped"
	[ "$TM_CHECKS" -gt 0 ] || echo "FAIL: no check ran" >&2
	[ "$TM_FAILS" -eq 0 ] && [ "$TM_CHECKS" -gt 0 ]
	exit $?
}
