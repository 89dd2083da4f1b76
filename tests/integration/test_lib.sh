#!/bin/bash
# The test helpers themselves can fail: lib.sh's check_compared fails a compare command that
# crashes midway, prints nothing or a malformed line; finish fails a test that ran no check;
# skip says "SKIP: [CONDITION] REASON" and exits 77; pipelines fail when one of their commands
# does. And scripts/testlog-count, which scripts/test counts meson's results with, counts a
# skip as skipped only where its condition holds: an unexpected one, or a test that exits 77
# without saying why, counts as failed.
. "$(dirname "$0")/lib.sh"

# fails_of COMMAND...: runs COMMAND (lib.sh's checks) in a subshell with fresh counts and
# prints "CHECKS FAILS".
fails_of() {
	(
		TM_CHECKS=0 TM_FAILS=0
		"$@" >/dev/null 2>&1
		echo "$TM_CHECKS $TM_FAILS"
	)
}
line() { printf '%s\t%s\t%s\n' "$@"; }
good() { line "one" 1 1 && line "two" 2 2; }
crashes() { line "one" 1 1 && return 3; }
silent() { :; }
malformed() { line "one" 1 1 && echo "a line without fields"; }
differs() { line "one" 1 2; }

check_eq "check_compared: a good compare passes (exit status, output, each line)" "4 0" \
	"$(fails_of check_compared good good)"
check "control: check_compared fails a compare command that crashes midway" \
	test "$(fails_of check_compared crash crashes | cut -d' ' -f2)" -gt 0
check "control: check_compared fails a compare command that prints no line" \
	test "$(fails_of check_compared silent silent | cut -d' ' -f2)" -gt 0
check "control: check_compared fails a line not of three fields" \
	test "$(fails_of check_compared malformed malformed | cut -d' ' -f2)" -gt 0
check "control: check_compared fails a line whose values differ" \
	test "$(fails_of check_compared differs differs | cut -d' ' -f2)" -gt 0

(
	TM_CHECKS=0 TM_FAILS=0
	finish >/dev/null 2>&1
)
check_eq "control: finish fails a test that ran no check" 1 "$?"
(
	TM_CHECKS=2 TM_FAILS=0
	finish >/dev/null 2>&1
)
check_eq "finish passes a test whose checks passed" 0 "$?"
out=$( (skip tool:nothing "a reason") 2>&1)
check_eq "skip exits 77" 77 "$?"
check_eq "skip says SKIP: [CONDITION] REASON" "SKIP: [tool:nothing] a reason" "$out"
false | true
check_eq "lib.sh sets pipefail: a pipeline fails when a command in it does" 1 "$?"

# scripts/testlog-count on a log of meson's form (one JSON object a line)
count_of() {
	"$SOURCE_ROOT/scripts/testlog-count" "$TM_TMP/testlog.json" "$@" | tail -n 1
}
result() {
	"$PY" -c 'import json, sys
print(json.dumps({"name": sys.argv[1], "result": sys.argv[2], "stdout": sys.argv[3]}))' "$@"
}
mkdir -p "$TM_TMP/clone/tracemount" "$TM_TMP/full/tracemount" "$TM_TMP/full/shared/realtraces"
{
	result passes OK "ok: a"
	result parts OK $'ok: a\nSKIP: [realtraces] no realtraces folder\nSKIP: [realtraces] again'
	result whole SKIP "SKIP: [realtraces] the real traces are absent"
} >"$TM_TMP/testlog.json"
check_eq "testlog-count: without ../shared, realtraces skips are skipped (parts and whole tests)" \
	"counts 2 0 3" "$(count_of "$TM_TMP/clone/tracemount")"
check_eq "control: testlog-count: with ../shared/realtraces there, the same skips fail" \
	"counts 2 3 0" "$(count_of "$TM_TMP/full/tracemount")"
{
	result passes OK "ok: a"
	result fails FAIL "FAIL: b"
	result nosay SKIP "exit 77 without a word"
	result untagged OK "SKIP: no condition named"
	result present OK "SKIP: [tool:sh] sh is not installed"
	result odd OK "SKIP: [busy] a lock is held"
} >"$TM_TMP/testlog.json"
check_eq "control: testlog-count fails a silent exit 77 and skips without a condition, with one \
that does not hold (sh is installed) or one that no environment excuses (busy)" \
	"counts 4 5 0" "$(count_of "$TM_TMP/clone/tracemount")"
result valgrind SKIP "SKIP: [wrapped] the daemon runs under valgrind already" >"$TM_TMP/testlog.json"
check_eq "testlog-count: a wrapped skip is skipped in a run that wraps the daemon" \
	"counts 0 0 1" "$(count_of "$TM_TMP/full/tracemount" --wrapped)"
check_eq "control: testlog-count: a wrapped skip fails in a run that does not" \
	"counts 0 1 0" "$(count_of "$TM_TMP/full/tracemount")"
finish
