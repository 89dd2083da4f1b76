#!/bin/bash
# tracemount index --shard K/N and concurrent writers sharing one cache folder (issue 26):
# - each trace is in exactly the shard FNV-1a(its path relative to PATH) mod N + 1, so the
#   shards are disjoint and cover every trace, and a copy of the folder elsewhere (another
#   machine's mount point) is split the same way;
# - N = 3 shards run at once into one cache folder give the file names a plain index gives,
#   each trace indexed once, each summary saying how many of how many found it took; run
#   again, they build nothing and rewrite nothing; no temporary file is left; a mount with
#   that folder reads the files and builds nothing;
# - two unsharded index runs at once (and two --force runs, which both write every file) end
#   with exactly one valid index file per trace and no temporary file;
# - malformed --shard values are usage errors (exit 2) that write nothing.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
mkdir -p "$SRC/run1" "$SRC/run2/deep" "$TM_TMP/out"
# 30 distinct small traces (distinct contents: distinct index files) at three depths
for i in $(seq 1 30); do
	case $((i % 3)) in
	0) dir=$SRC ;;
	1) dir=$SRC/run1 ;;
	2) dir=$SRC/run2/deep ;;
	esac
	"$GEN_BYU" -n $((2000 + 37 * i)) -s "$i" >"$dir/t$i.byu"
done
"$GEN_TT6" --format tt6 --records 3000 --seed 7 >"$SRC/run1/p.tt6"
printf 'not a trace\n' >"$SRC/run1/notes.txt"
NTRACES=31
REAL=$(realpath "$SRC")

# index_files DIR: the names of the index files in DIR, one a line.
index_files() {
	find "$1" -maxdepth 1 -name '*.tmi' -printf '%f\n' | LC_ALL=C sort
}
# temporaries DIR: the writers' temporary files left in DIR (and anything but index files).
temporaries() {
	find "$1" -mindepth 1 ! -name '*.tmi' -printf '%f\n' | LC_ALL=C sort
}
# identities DIR: each index file's name, inode and modification time, which a rewrite changes.
identities() {
	(cd "$1" && stat -c '%n %i %y' -- *.tmi)
}
# listed_traces DIR: the traces --list names for DIR's index files (after its header line),
# sorted.
listed_traces() {
	"$TRACEMOUNT" index --list --cache "$1" 2>/dev/null | tail -n +2 | awk '{ print $NF }' |
		LC_ALL=C sort
}
# listed_states DIR: the states --list gives DIR's index files, each once, sorted.
listed_states() {
	"$TRACEMOUNT" index --list --cache "$1" 2>/dev/null | tail -n +2 |
		sed -E 's/^[^ ]+ +[0-9.]+ ([KMGT]i)?B +[0-9]+ (s|min|h|d) +[^ ]+ +//; s/ +[^ ]+$//' |
		LC_ALL=C sort -u
}
# counts ERRFILE: the counts of index's summary line, after its size and time.
counts() {
	sed -n 's/^tracemount index: .* s: \(.*\); index files in .*/\1/p' "$1"
}
# took ERRFILE: "shard K/N: X of Y traces found" of index's summary line.
took() {
	sed -n 's/^tracemount index: \(shard [0-9]*\/[0-9]*: [0-9]* of [0-9]* traces found\), .*/\1/p' "$1"
}

# The shard of every trace, as documented: FNV-1a 64 of its path relative to PATH, mod N,
# plus 1. Lines "K ABSOLUTE_PATH", computed independently of tracemount.
(cd "$SRC" && find . -name '*.byu' -o -name '*.tt6') | sed 's|^\./||' | LC_ALL=C sort >"$TM_TMP/rel"
check_eq "the tree holds the traces" "$NTRACES" "$(wc -l <"$TM_TMP/rel")"
"$PY" - 3 "$REAL" "$TM_TMP/rel" >"$TM_TMP/expected" <<'PYEOF'
import sys
n, root = int(sys.argv[1]), sys.argv[2]
for rel in open(sys.argv[3]).read().split():
    h = 0xCBF29CE484222325
    for b in rel.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    print(h % n + 1, root + "/" + rel)
PYEOF
for k in 1 2 3; do
	grep "^$k " "$TM_TMP/expected" | cut -d' ' -f2 | LC_ALL=C sort >"$TM_TMP/expected.$k"
	EXPECTED_N[k]=$(wc -l <"$TM_TMP/expected.$k")
done
# the split is uneven but none empty with these names (deterministic: no seed involved)
check "every shard has traces to take" test "${EXPECTED_N[1]}" -gt 0 -a "${EXPECTED_N[2]}" -gt 0 \
	-a "${EXPECTED_N[3]}" -gt 0

# ---------------------------------------------------------------------------------------
# The reference: a plain index of the folder.
PLAIN=$TM_TMP/plain
run_tm index --cache "$PLAIN" "$SRC"
check_eq "plain index: exit status" 0 "$RC"
check_eq "plain index: the summary" \
	"$NTRACES indexed, 0 up to date, 0 out of date, 0 failed" "$(counts "$TM_TMP/out/$RUN_N.err")"
check_eq "plain index: one index file per trace" "$NTRACES" "$(index_files "$PLAIN" | wc -l)"

# ---------------------------------------------------------------------------------------
# Each shard alone, in a cache of its own: exactly the traces the hash puts in it.
for k in 1 2 3; do
	run_tm index --shard "$k/3" --cache "$TM_TMP/alone.$k" "$SRC/"
	check_eq "shard $k/3 alone: exit status" 0 "$RC"
	check_eq "shard $k/3 alone: the summary says what it took of what it found" \
		"shard $k/3: ${EXPECTED_N[k]} of $NTRACES traces found" "$(took "$TM_TMP/out/$RUN_N.err")"
	check_eq "shard $k/3 alone: exactly the traces FNV-1a(relative path) mod 3 = $((k - 1))" \
		"$(cat "$TM_TMP/expected.$k")" "$(listed_traces "$TM_TMP/alone.$k")"
done
check_eq "the shards alone are disjoint and cover the plain index's files" \
	"$(index_files "$PLAIN")" \
	"$(for k in 1 2 3; do index_files "$TM_TMP/alone.$k"; done | LC_ALL=C sort)"

# The same folder elsewhere (another machine's mount point; cp -a keeps the times, so the
# content keys and index file names are the same), named through a relative PATH with a
# trailing slash: each shard takes the same traces.
mkdir -p "$TM_TMP/elsewhere/mnt"
cp -a "$SRC" "$TM_TMP/elsewhere/mnt/archive"
for k in 1 2 3; do
	(cd "$TM_TMP/elsewhere" && timeout 120 "$TRACEMOUNT" index --shard="$k/3" \
		--cache "$TM_TMP/moved.$k" mnt/archive/ 2>"$TM_TMP/moved.$k.err")
	check_eq "shard $k/3 of the folder elsewhere: exit status" 0 "$?"
	check_eq "shard $k/3 of the folder elsewhere: the same index files" \
		"$(index_files "$TM_TMP/alone.$k")" "$(index_files "$TM_TMP/moved.$k")"
done
# and from inside the folder, PATH "."
(cd "$SRC" && timeout 120 "$TRACEMOUNT" index --shard 2/3 --cache "$TM_TMP/dot.2" . \
	2>"$TM_TMP/dot.2.err")
check_eq "shard 2/3 of '.': the same index files" "$(index_files "$TM_TMP/alone.2")" \
	"$(index_files "$TM_TMP/dot.2")"

# ---------------------------------------------------------------------------------------
# The three shards at once, into one cache folder.
SHARED=$TM_TMP/shared
mkdir -m 700 "$SHARED"
# run_shards TAG: the three shards concurrently, two jobs each; TAG.K.err their stderr.
run_shards() {
	local k pids=()
	for k in 1 2 3; do
		timeout 120 "$TRACEMOUNT" index -j 2 --shard "$k/3" --cache "$SHARED" "$SRC" \
			>/dev/null 2>"$TM_TMP/$1.$k.err" &
		pids[k]=$!
	done
	for k in 1 2 3; do
		wait "${pids[k]}"
		check_eq "$1: shard $k/3 exits 0" 0 "$?"
	done
}
run_shards concurrent
for k in 1 2 3; do
	check_eq "concurrent: shard $k/3's summary says what it took of what it found" \
		"shard $k/3: ${EXPECTED_N[k]} of $NTRACES traces found" "$(took "$TM_TMP/concurrent.$k.err")"
	check_eq "concurrent: shard $k/3 indexed each of its traces, nothing else" \
		"${EXPECTED_N[k]} indexed, 0 up to date, 0 out of date, 0 failed" \
		"$(counts "$TM_TMP/concurrent.$k.err")"
done
check_eq "concurrent shards: the union is the plain index's file names" \
	"$(index_files "$PLAIN")" "$(index_files "$SHARED")"
check_eq "concurrent shards: no temporary file left" "" "$(temporaries "$SHARED")"
check_eq "concurrent shards: --list says every file is ok" "ok" "$(listed_states "$SHARED")"
check_eq "concurrent shards: --list names every trace once" \
	"$(LC_ALL=C sort "$TM_TMP/expected.1" "$TM_TMP/expected.2" "$TM_TMP/expected.3")" \
	"$(listed_traces "$SHARED")"

before=$(identities "$SHARED")
run_shards again
for k in 1 2 3; do
	check_eq "again: shard $k/3 builds nothing, its traces up to date" \
		"0 indexed, ${EXPECTED_N[k]} up to date, 0 out of date, 0 failed" \
		"$(counts "$TM_TMP/again.$k.err")"
done
check_eq "again: no index file written or added" "$before" "$(identities "$SHARED")"
check_eq "again: no temporary file left" "" "$(temporaries "$SHARED")"

# A mount with the shared folder reads every trace's file and builds none.
mount_tm "$SRC" -o cache="$SHARED"
bad=
while read -r rel; do
	# stats.json's "source" is the path it is read under: left out
	cmp -s <(sed '/^  "source": /d' "$TM_MNT/$rel/stats.json") \
		<(cd "$SRC" && "$TRACEMOUNT" cat --cache none "$rel" stats.json |
			sed '/^  "source": /d') || bad="$bad $rel"
done <"$TM_TMP/rel"
check_eq "mount with the shards' folder: every stats.json as without index files" "" "$bad"
check_eq "mount with the shards' folder: every index read, none built" \
	"0 built, $NTRACES read from index files, 0 index files refused" "$(index_counts "$TM_MNT")"
unmount_tm
check_eq "after the mount: still the same files" "$before" "$(identities "$SHARED")"

# ---------------------------------------------------------------------------------------
# Two unsharded runs at once into one folder: one valid file per trace, no temporary file.
RACE=$TM_TMP/race
mkdir -m 700 "$RACE"
# race TAG ARGS...: two index runs of SRC at once with ARGS; TAG.1.err and TAG.2.err.
race() {
	local tag=$1 p1 p2
	shift
	timeout 120 "$TRACEMOUNT" index "$@" --cache "$RACE" "$SRC" 2>"$TM_TMP/$tag.1.err" &
	p1=$!
	timeout 120 "$TRACEMOUNT" index "$@" --cache "$RACE" "$SRC" 2>"$TM_TMP/$tag.2.err" &
	p2=$!
	wait "$p1"
	check_eq "$tag: the first run exits 0" 0 "$?"
	wait "$p2"
	check_eq "$tag: the second run exits 0" 0 "$?"
	check_eq "$tag: no run failed a trace" "0 failed 0 failed" \
		"$(cat "$TM_TMP/$tag".[12].err | grep -o '[0-9]* failed' | paste -sd' ')"
	check_eq "$tag: exactly the plain index's files, one per trace" "$(index_files "$PLAIN")" \
		"$(index_files "$RACE")"
	check_eq "$tag: no temporary file left" "" "$(temporaries "$RACE")"
	check_eq "$tag: --list says every file is ok" "ok" "$(listed_states "$RACE")"
	check_eq "$tag: --list names every trace once" \
		"$(cut -d' ' -f2 "$TM_TMP/expected" | LC_ALL=C sort)" "$(listed_traces "$RACE")"
	# a load checks every byte (header and body checksums), which --list does not read
	run_tm index --cache "$RACE" "$SRC"
	check_eq "$tag: every file loads whole: all up to date" \
		"0 indexed, $NTRACES up to date, 0 out of date, 0 failed" \
		"$(counts "$TM_TMP/out/$RUN_N.err")"
}
race "two plain runs" -j 2
indexed=$(cat "$TM_TMP/two plain runs".[12].err | grep -o '[0-9]* indexed' |
	awk '{ n += $1 } END { print n }')
check "two plain runs: each trace indexed by one run at least" test "$indexed" -ge "$NTRACES"
# --force: both runs build and write every file, their renames racing
race "two --force runs" -j 2 --force
check_eq "two --force runs: each run built every trace" \
	"$NTRACES indexed $NTRACES indexed" \
	"$(cat "$TM_TMP/two --force runs".[12].err | grep -o '[0-9]* indexed' | paste -sd' ')"

# ---------------------------------------------------------------------------------------
# Usage errors: exit 2, a message naming the value, nothing made.
for bad in 0/0 3/2 0/3 4/3 -1/3 1/-3 x 1/ /3 1/3x 1//3 ' 1/3' 2/0 1/3/3 '' 1234567890/1234567891; do
	run_tm index --shard "$bad" --cache "$TM_TMP/never" "$SRC"
	check_eq "--shard '$bad': exit status" 2 "$RC"
	check_eq "--shard '$bad': the message" \
		"tracemount index: --shard '$bad': expected K/N, shard K of N with 1 <= K <= N (see tracemount index --help)" \
		"$ERR"
done
run_tm index --shard=5/4 --cache "$TM_TMP/never" "$SRC"
check_eq "--shard=5/4: exit status" 2 "$RC"
run_tm index --cache "$TM_TMP/never" "$SRC" --shard
check_eq "--shard without K/N: exit status" 2 "$RC"
check_eq "--shard without K/N: the message" \
	"tracemount index: option needs an argument: '--shard' (see tracemount index --help)" "$ERR"
run_tm index --list --shard 1/2 --cache "$TM_TMP/never"
check_eq "--list --shard: exit status" 2 "$RC"
check_eq "--list --shard: the message" \
	"tracemount index: --list and --prune take no --force, --format, --image, -j or --shard (see tracemount index --help)" \
	"$ERR"
run_tm index --prune --shard 1/2 --cache "$TM_TMP/never"
check_eq "--prune --shard: exit status" 2 "$RC"
check "usage errors make no cache folder" test ! -e "$TM_TMP/never"
run_tm index --help
check "index --help mentions --shard K/N" grep -qF -- "--shard K/N" "$OUT"
run_tm index --shard 1/1 --cache "$TM_TMP/one" "$SRC"
check_eq "--shard 1/1: every trace" \
	"shard 1/1: $NTRACES of $NTRACES traces found" "$(took "$TM_TMP/out/$RUN_N.err")"

finish
