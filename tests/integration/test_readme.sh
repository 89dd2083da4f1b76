#!/bin/bash
# The README's commands run as written. Its tour (the fenced block of "$ COMMAND" lines, each
# followed by what it prints) runs line by line from a folder laid out as the tree's top
# (scripts/, tests/, build/), with only the mount point moved into the test's folder; each output
# shown must be what the command prints, word for word (ls prints columns on a terminal only).
# A command that needs a tool Debian does not package (Dinero IV) runs where it is installed;
# elsewhere its options are checked: every cache given a size has a block size. Every
# scripts/NAME the README names exists, and every tracemount command of its usage block has
# a help.
. "$(dirname "$0")/lib.sh"
readme=$SOURCE_ROOT/README.md
build=$(dirname "$TRACEMOUNT")
work=$TM_TMP/top
MNT=$TM_TMP/mnt
mkdir -p "$work"
ln -s "$SOURCE_ROOT/scripts" "$work/scripts"
ln -s "$SOURCE_ROOT/tests" "$work/tests"
ln -s "$build" "$work/build"
export SAMPLES_NO_BUILD=1 BUILD=$build

# tour LINES: "C<tab>command" and "O<tab>output line" of the fenced blocks that hold "$ " lines.
awk '/^```/ { inblock = !inblock; tour = 0; next }
	inblock && /^\$ / { tour = 1; print "C\t" substr($0, 3); next }
	inblock && tour { print "O\t" $0 }' "$readme" >"$TM_TMP/tour"
check "the README has a tour of commands" test "$(grep -c '^C' "$TM_TMP/tour")" -ge 5

# dinero_options CMD: every cache of the command given a size has a block size too.
dinero_options() {
	local opt
	for opt in $(grep -oE -- '-l[0-9]+-[iduc]size' <<<"$1"); do
		grep -qE -- "${opt%size}bsize " <<<"$1" || return 1
	done
}

# run_step CMD EXPECTED: runs CMD in the tree's stand-in, compares its output, word for word.
run_step() {
	local cmd=${1//\/mnt\/traces/$MNT} want=$2 got rc
	case $cmd in
	dineroIV*)
		check "README: $1: a block size for each cache size" dinero_options "$1"
		if ! command -v dineroIV >/dev/null; then
			echo "not run (Dinero IV is not a Debian package): $1"
			return
		fi
		;;
	*"build/tracemount "*) TM_MNT=$MNT ;;
	esac
	got=$(cd "$work" && timeout 120 bash -c "$cmd" 2>"$TM_TMP/step.err")
	rc=$?
	check "README: $1 (exit status $rc: $(head -c 300 "$TM_TMP/step.err"))" test "$rc" = 0
	case $cmd in dineroIV*) return ;; esac
	check_eq "README: $1: output" "$(echo $want)" "$(echo $got)"
}

cmd=
want=
while IFS=$'\t' read -r kind text; do
	if [ "$kind" = C ]; then
		[ -z "$cmd" ] || run_step "$cmd" "$want"
		cmd=$text
		want=
	else
		want+="$text"$'\n'
	fi
done <"$TM_TMP/tour"
[ -z "$cmd" ] || run_step "$cmd" "$want"
check "the tour unmounted what it mounted" sh -c "! mountpoint -q '$MNT'"

# Every script the README names is in scripts/ and runs.
for s in $(grep -oE 'scripts/[a-z][a-z-]*' "$readme" | sort -u); do
	check "README names $s: it exists and is executable" test -x "$SOURCE_ROOT/$s"
done
# Every command of the usage block has a help.
for c in $(sed -n '/^tracemount \[options\] SOURCE/,/^```/p' "$readme" |
	awk '$1 == "tracemount" && $2 ~ /^[a-z]+$/ { print $2 }' | sort -u); do
	run_tm help "$c"
	check "README's usage: tracemount help $c (exit $RC)" test "$RC" = 0 -a -s "$OUT"
done
finish
