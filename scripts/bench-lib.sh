# shellcheck shell=bash
# What scripts/bench* share. Each bench sources it first:  . "$(dirname "$0")/bench-lib.sh"
# then reads its options (options) and makes its build and private folder (prepare).
#
# Sets strict mode and LC_ALL=C, BENCH (the script's name, which starts its messages) and ROOT
# (the source tree); the rest are functions. The private folder, TMP with SRC and MNT in it, is
# removed on exit, after unmounting whatever is still mounted there.
set -euo pipefail
export LC_ALL=C
BENCH=${0##*/}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=
MNT=
DAEMON_PID=

die() {
	echo "$BENCH: error: $*" >&2
	exit 1
}
say() {
	echo "$BENCH: $*" >&2
}

# usage: the usage lines of the bench's opening comment (those naming scripts/bench), exit 2.
usage() {
	sed -n 's/^# \(  scripts\/bench.*\)/\1/p' "$0" >&2
	exit 2
}

# options NAME=DEFAULT... -- ARG...: the bench's options: sets the variable NAME in capitals
# to DEFAULT, then to VALUE for each --NAME VALUE or --NAME=VALUE among ARG (--build DIR sets
# BUILD); anything else prints the usage.
options() {
	local names=" " arg name
	while [ "$1" != -- ]; do
		name=${1%%=*}
		names+="$name "
		printf -v "${name^^}" '%s' "${1#*=}"
		shift
	done
	shift
	while [ $# -gt 0 ]; do
		arg=$1
		case $arg in -h | --help) usage ;; esac
		name=${arg%%=*}
		name=${name#--}
		if [[ $arg != --* || $names != *" $name "* ]]; then
			echo "$BENCH: unknown argument '$arg'" >&2
			usage
		fi
		if [[ $arg == *=* ]]; then
			printf -v "${name^^}" '%s' "${arg#*=}"
			shift
		else
			[ $# -ge 2 ] || usage
			printf -v "${name^^}" '%s' "$2"
			shift 2
		fi
	done
}

# prepare BASE: the build folder BUILD brought up to date (scripts/build), the private folder
# in BASE (private_folder) and a copy of tracemount in it (copy_tracemount).
prepare() {
	"$ROOT/scripts/build" "$BUILD" >/dev/null || die "build failed"
	private_folder "$1"
	copy_tracemount
}

# private_folder BASE: the bench's private folder TMP in BASE (in the default temporary folder
# when BASE refuses one), with SRC and MNT in it; removed on exit.
private_folder() {
	TMP=$(mktemp -d "$1/tracemount-$BENCH.XXXXXX" 2>/dev/null || mktemp -d)
	SRC=$TMP/src
	MNT=$TMP/mnt
	mkdir -p "$SRC" "$MNT"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
cleanup() {
	local status=$?
	set +e
	trap - EXIT INT TERM
	unmount_now
	[ -z "$TMP" ] || rm -rf "$TMP"
	exit "$status"
}

# copy_tracemount: TM, a copy of BUILD's tracemount in TMP: a rebuild while the bench runs
# cannot change what is measured.
copy_tracemount() {
	cp "$BUILD/tracemount" "$TMP/tracemount" || die "no $BUILD/tracemount"
	TM=$TMP/tracemount
}

# wait_mounted SECONDS: waits until MNT is mounted by DAEMON_PID; fails when the daemon died or
# the time ran out.
wait_mounted() {
	local _
	for _ in $(seq 1 $(($1 * 100))); do
		mountpoint -q "$MNT" && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# mount_fresh SOURCE [OPTION...]: a new daemon (DAEMON_PID) in the foreground mounting SOURCE
# at MNT, its messages appended to TMP/daemon.log; dies, showing them, if it does not mount.
# (Its output goes there too: a daemon started in $(...) must not hold the caller's pipe.)
# Its indexes stay in memory (-o cache=none) unless an OPTION names a cache folder: a bench
# never reads an index that an earlier round or run left in ~/.cache.
mount_fresh() {
	local src=$1 _
	shift
	case " $* " in
	*cache=*) ;;
	*) set -- -o cache=none "$@" ;;
	esac
	"$TM" -f "$@" "$src" "$MNT" >>"$TMP/daemon.log" 2>&1 &
	DAEMON_PID=$!
	wait_mounted 10 || { cat "$TMP/daemon.log" >&2; die "tracemount did not mount $src"; }
}

# tm_cli COMMAND [ARG...]: tracemount COMMAND (cat, ls) with its index in memory (--cache
# none), for the same reason.
tm_cli() {
	"$TM" "$1" --cache none "${@:2}"
}

unmount_now() {
	local _
	if [ -n "$MNT" ] && mountpoint -q "$MNT" 2>/dev/null; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			fusermount3 -u "$MNT" 2>/dev/null && break
			sleep 0.2
		done
		mountpoint -q "$MNT" 2>/dev/null && fusermount3 -uz "$MNT" 2>/dev/null
	fi
	if [ -n "$DAEMON_PID" ]; then
		# The daemon exits by itself once unmounted; a lazy unmount may need a nudge.
		for _ in $(seq 1 50); do
			kill -0 "$DAEMON_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$DAEMON_PID" 2>/dev/null || true
		wait "$DAEMON_PID" 2>/dev/null || true
		DAEMON_PID=
	fi
}

# status_field TRACE N: field N of TRACE's line in the mount's .tracemount/status.
status_field() {
	awk -F'\t' -v t="$1" -v n="$2" '$1 == t { print $n }' "$MNT/.tracemount/status"
}

# drop_page_cache [1|3]: drops the kernel's page cache (1), and its dentries and inodes too (3,
# the default); fails without root.
drop_page_cache() {
	sync
	echo "${1:-3}" 2>/dev/null >/proc/sys/vm/drop_caches
}

# seconds COMMAND...: wall seconds of COMMAND (its output discarded).
seconds() {
	local t0=$EPOCHREALTIME
	"$@" >/dev/null || die "failed: $*"
	awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.4f", b - a }'
}
# best: the least of the numbers on stdin: noise only ever adds time.
best() {
	awk '{ for (i = 1; i <= NF; i++) if (min == "" || $i < min) min = $i } END { print min }'
}
# rate BYTES SECONDS: GB/s.
rate() {
	awk -v b="$1" -v t="$2" 'BEGIN { printf "%.3f", b / 1e9 / t }'
}

# index_pass_rounds TRACE VIEWS: ROUNDS rounds of the baselines of an index pass over SRC/TRACE
# and of the bench's own views, each figure's values in R[figure], then each figure as a
# variable of its name, the best of its values. A round measures C (cat of the trace from the
# page cache) and I0 (tracemount ls: the index pass in one process); then on a fresh mount, I
# (the first stat of dump.txt: the index pass through the daemon), B (cat of raw: the trace
# through FUSE, the floor of the mount) and VIEWS (a function of the bench, adding to R).
index_pass_rounds() {
	local round k
	declare -gA R
	for round in $(seq 1 "$ROUNDS"); do
		say "round $round of $ROUNDS"
		R[C]+=" $(seconds cat "$SRC/$1")"
		R[I0]+=" $(seconds tm_cli ls "$SRC/$1")"
		mount_fresh "$SRC"
		R[I]+=" $(seconds stat "$MNT/$1/dump.txt")"
		R[B]+=" $(seconds cat "$MNT/$1/raw")"
		"$2"
		unmount_now
	done
	for k in "${!R[@]}"; do
		declare -g "$k=$(echo "${R[$k]}" | best)"
	done
}
# index_pass_figures TRACE BYTES: the report's lines of C, I0, I and B (the best of R's rounds,
# as C, I0, I and B), BYTES the trace's size.
index_pass_figures() {
	printf '%-58s %8s s %8s GB/s\n' "C   cat $1 (page cache)" "$C" "$(rate "$2" "$C")"
	printf '%-58s %8s s %8s GB/s of trace\n' "I0  tracemount ls $1 (index pass, one process)" \
		"$I0" "$(rate "$2" "$I0")"
	printf '%-58s %8s s %8s GB/s of trace\n' "I   first stat of dump.txt, fresh mount (index pass)" \
		"$I" "$(rate "$2" "$I")"
	printf '%-58s %8s s %8s GB/s\n' "B   cat MNT/$1/raw (the trace through FUSE)" "$B" "$(rate "$2" "$B")"
}

# --- peers (issue 26) ----------------------------------------------------------------------------
# The tools a user would pick instead, measured side by side. None is in the repository: pigz and
# indexed_gzip come from Debian's packages (scripts/deps); ratarmount and rapidgzip, which Debian
# does not package, are built from their public sources elsewhere and named by TM_RATARMOUNT (a
# command running ratarmount, e.g. a wrapper script setting PYTHONPATH) and TM_RAPIDGZIP (the
# rapidgzip command-line tool). A peer that is absent or does not run is skipped with a note: a
# bench still runs without it.

# find_peers PEER...: for each PEER (ratarmount, rapidgzip, pigz, indexed_gzip), its command in
# RM, RG, PZ or IG (empty when skipped) and the report's line about it in RM_NOTE, RG_NOTE,
# PZ_NOTE or IG_NOTE; each note is said too.
# shellcheck disable=SC2034 # PZ, IG and the notes are for the bench that sources this
find_peers() {
	local peer version py
	for peer in "$@"; do
		case $peer in
		ratarmount)
			RM='' RM_NOTE="ratarmount: skipped (set TM_RATARMOUNT to a command running ratarmount"
			RM_NOTE+=" built outside the repository; see issue 26)"
			if [ -n "${TM_RATARMOUNT:-}" ]; then
				if "$TM_RATARMOUNT" --help </dev/null 2>/dev/null | head -1 | grep -q .; then
					RM=$TM_RATARMOUNT
					# Its versions, and those of ratarmountcore, are among the many it lists.
					version=$(PYTHONDONTWRITEBYTECODE=1 "$RM" --version 2>/dev/null </dev/null |
						awk '/^ratarmount(core)? / { printf "%s%s", s, $0; s = ", " }')
					RM_NOTE="ratarmount: $RM (${version:-version unknown})"
				else
					RM_NOTE="ratarmount: skipped (TM_RATARMOUNT=$TM_RATARMOUNT does not run:"
					RM_NOTE+=" '$TM_RATARMOUNT --help' failed)"
				fi
			fi
			say "$RM_NOTE"
			;;
		rapidgzip)
			RG='' RG_NOTE="rapidgzip: skipped (set TM_RAPIDGZIP to the rapidgzip tool built outside"
			RG_NOTE+=" the repository; see issue 26)"
			if [ -n "${TM_RAPIDGZIP:-}" ]; then
				if version=$("$TM_RAPIDGZIP" --version 2>/dev/null </dev/null | grep -o 'version [0-9.]*'); then
					RG=$TM_RAPIDGZIP
					RG_NOTE="rapidgzip: $RG ($version)"
				else
					RG_NOTE="rapidgzip: skipped (TM_RAPIDGZIP=$TM_RAPIDGZIP does not run:"
					RG_NOTE+=" '$TM_RAPIDGZIP --version' failed)"
				fi
			fi
			say "$RG_NOTE"
			;;
		pigz)
			PZ='' PZ_NOTE="pigz: skipped (not installed; scripts/deps installs Debian's pigz)"
			if version=$(pigz --version 2>&1 </dev/null) && [[ $version == pigz* ]]; then
				PZ=pigz PZ_NOTE="pigz: $(command -v pigz) ($version)"
			fi
			say "$PZ_NOTE"
			;;
		indexed_gzip)
			# Debian's python3-indexed-gzip is in the system Python's path, which a python3 first
			# in PATH (pyenv, a virtual environment) may not see: the system's first.
			IG='' IG_NOTE="indexed_gzip: skipped (no python3 imports it; scripts/deps installs"
			IG_NOTE+=" Debian's python3-indexed-gzip)"
			for py in /usr/bin/python3 python3; do
				if version=$("$py" -c 'import indexed_gzip; print(indexed_gzip.__version__)' \
					2>/dev/null </dev/null); then
					IG=$py IG_NOTE="indexed_gzip: $version in $py"
					break
				fi
			done
			say "$IG_NOTE"
			;;
		*) die "find_peers: no peer '$peer'" ;;
		esac
	done
}

# ratarmount_mount FILE INDEX [OPTION...]: ratarmount (RM) of FILE at MNT in the foreground
# (DAEMON_PID, unmounted by unmount_now), its index file INDEX, its messages appended to
# TMP/rm.log; it mounts only once its index is built or read, so the wait is long.
ratarmount_mount() {
	local file=$1 index=$2 _
	shift 2
	"$RM" -f "$@" --index-file "$index" "$file" "$MNT" </dev/null >>"$TMP/rm.log" 2>&1 &
	DAEMON_PID=$!
	wait_mounted 120 || { tail -20 "$TMP/rm.log" >&2; die "ratarmount did not mount $file"; }
}

revision() {
	git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown
}
# headline: the report's first line: the bench, the date, the machine's cores, the revision.
headline() {
	echo "tracemount $BENCH, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, revision $(revision)"
}
