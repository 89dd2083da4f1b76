# shellcheck shell=bash
# Opening the mount's pictures and pages in headless Chromium (headless.py), for the tests that
# do: sourced after lib.sh.

# tm_browser WHAT: sets BROWSER to Chromium (chromium, or TM_BROWSER) and returns 0. Without it,
# returns 1 having said SKIP (WHAT not opened), or, when TM_REQUIRE_BROWSER=1 (scripts/test
# sets it), having failed a check.
tm_browser() {
	BROWSER=${TM_BROWSER:-$(command -v chromium || command -v chromium-browser || true)}
	[ -n "$BROWSER" ] && return 0
	if [ "${TM_REQUIRE_BROWSER:-}" = 1 ]; then
		check "chromium is installed, as TM_REQUIRE_BROWSER=1 asks (scripts/deps installs it)" false
	else
		skip_part "tool:chromium|chromium-browser" "chromium is not installed (scripts/deps installs it): $1 not opened"
	fi
	return 1
}

# tm_need_browser WHAT: tm_browser, for a test that is all browser: without Chromium it ends
# the test (SKIP, or the failed check).
tm_need_browser() {
	tm_browser "$1" && return 0
	[ "${TM_REQUIRE_BROWSER:-}" = 1 ] && finish
	exit 77 # tm_browser said SKIP
}

# tm_browser_timeout: seconds a page may take to load (more under valgrind).
tm_browser_timeout() {
	if [ -n "${TM_DAEMON_WRAP:-}" ]; then echo 300; else echo 30; fi
}

# check_hot_svgs CONTROL EMPTY T...: Chromium opens plots/hot.svg of each trace folder T of the
# mount M, and plots_check.py hot checks what it drew (EMPTY, one of the Ts, has no bars); a
# copy of CONTROL's with the names drawn over their bars must fail that check.
check_hot_svgs() {
	local control=$1 empty=$2 out=$TM_TMP/browser-hot t n nobars files=()
	shift 2
	tm_browser "plots/hot.svg" || return 0
	mkdir -p "$out" "$TM_TMP/controls"
	for t in "$@"; do
		files+=("$M/$t/plots/hot.svg")
	done
	sed 's/<text x="264.0"/<text x="400.0"/' "$M/$control/plots/hot.svg" \
		>"$TM_TMP/controls/onto.svg"
	check "Chromium opens every plots/hot.svg" "$PY" "$HERE/headless.py" "$BROWSER" "$out" \
		"$(tm_browser_timeout)" "${files[@]}" "$TM_TMP/controls/onto.svg"
	n=0 # headless.py writes the Nth file's report as N.json
	for t in "$@"; do
		nobars=
		[ "$t" = "$empty" ] && nobars=nobars
		[ -f "$out/$n.json" ] && check_compared "$t/plots/hot.svg" "$PY" \
			"$HERE/plots_check.py" hot "$t/plots/hot.svg" "$out/$n.json" \
			"$M/$t/plots/hot.svg" $nobars
		n=$((n + 1))
	done
	"$PY" "$HERE/plots_check.py" hot onto "$out/$n.json" "$TM_TMP/controls/onto.svg" \
		>"$TM_TMP/controls/onto.out"
	check "control: names drawn over their bars fail the browser check" grep -q \
		"each name left of its bar, in its row	\[\]	\[.\+\]" "$TM_TMP/controls/onto.out"
}
