#!/bin/bash
# Each trace folder's report.html in real browsers, opened from the mount: a generated trace of
# every format, an empty one and one with errors.
#
# Headless Chromium (trace_report_browser.py, through headless.py's DevTools pipe) opens each
# page at 1280 and 3840 CSS pixels: no console message, no request but the page itself, every
# link a file of the trace's folder, no element whose content overflows it, no sideways scroll,
# every plot inside the window and drawn (trace_report_check.py browser).
#
# Headless Firefox (Debian's firefox-esr, a fresh profile and HOME) screenshots each page, the
# root report and one plot at window widths of 1280 and 3840 pixels: not blank, nothing cut off
# at the right edge, the plots drawn in their own colours (trace_report_check.py shot, which
# decodes the PNG with zlib).
#
# Controls show the checks can fail: a page whose plots are 5000 pixels wide scrolls sideways
# in Chromium; in Firefox, a page with its plots left out has none of their colours, and a page
# with a block 5000 pixels wide is cut off at the right.
#
# Without a browser (chromium or TM_BROWSER; firefox-esr or TM_FIREFOX) its part says SKIP,
# unless TM_REQUIRE_BROWSER=1 (scripts/test sets it): then it fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${TM_BROWSER:-$(command -v chromium || command -v chromium-browser || true)}
FIREFOX=${TM_FIREFOX:-$(command -v firefox-esr || command -v firefox || true)}
for b in chromium:"$CHROMIUM" firefox-esr:"$FIREFOX"; do
	[ -n "${b#*:}" ] && continue
	if [ "${TM_REQUIRE_BROWSER:-}" = 1 ]; then
		check "${b%%:*} is installed, as TM_REQUIRE_BROWSER=1 asks (scripts/deps installs it)" \
			false
	else
		skip_part "tool:${b%%:*}" "${b%%:*} is not installed (scripts/deps installs it): not opened in it"
	fi
done
if [ -z "$CHROMIUM" ] && [ -z "$FIREFOX" ]; then
	[ "${TM_REQUIRE_BROWSER:-}" = 1 ] && finish
	exit 77 # each browser said SKIP above
fi

SRC=$TM_TMP/src
OUT=$TM_TMP/browser
mkdir -p "$SRC" "$OUT" "$TM_TMP/controls"
tm_seed
gen_every_format "$SRC"
"$GEN_CIS501" --lines 2000 --seed "$SEED" |
	awk 'NR % 40 == 0 { print "bad <&> \"line\" " NR } { print }' >"$SRC/bad.trace"
TRACES="gen.byu gen.tt6 gen.tt6e gen.trace gen.tarmac gen.qemu4v gen.full gen.spixcounts
	empty.byu bad.trace"
REAL=${REALTRACES:-}
if [ -n "$REAL" ] && [ -d "$REAL/tarmac" ]; then
	cp "$REAL/tarmac/calculator-aarch64-fastmodel.tarmac" "$SRC/"
	TRACES="$TRACES calculator-aarch64-fastmodel.tarmac"
else
	skip_part realtraces "no realtraces folder at '$REAL': ARM's calculator trace not opened"
fi
# the plots that say they have no data: the empty trace's
nodata() { [ "$1" = empty.byu ] && echo nodata; }

mount_tm "$SRC"
M=$TM_MNT
timeout=$(tm_browser_timeout)
# A page, and the plots it inlines, are products of the trace, sized 0 until an open builds
# them (doc/architecture.md, "Products"); Chromium reads a file:// URL only up to the size a
# stat gave before its open, so a page not yet built would show empty (each plot missing,
# every link check passing on nothing). Opened first, each has its exact size.
folders=()
for t in $TRACES; do folders+=("$M/$t"); done
open_views "${folders[@]}"

if [ -n "$CHROMIUM" ]; then
	pages=()
	for t in $TRACES; do pages+=("$M/$t/report.html"); done
	# the control: the plots wider than any window
	mkdir -p "$TM_TMP/controls/wide"
	sed 's/<svg /<svg style="width: 5000px; max-width: none" /' "$M/gen.byu/report.html" \
		>"$TM_TMP/controls/wide/report.html"
	check "Chromium opens every page" "$PY" "$HERE/trace_report_browser.py" "$CHROMIUM" \
		"$OUT/chromium" "$timeout" "${pages[@]}" "$TM_TMP/controls/wide/report.html"
	n=0
	for t in $TRACES; do
		R=$OUT/chromium/$n.json
		n=$((n + 1))
		[ -f "$R" ] || continue
		# shellcheck disable=SC2046
		check_compared "$t (Chromium)" "$PY" "$HERE/trace_report_check.py" browser "$M/$t" \
			"$R" $(nodata "$t")
	done
	check_eq "control: plots 5000 px wide make the page scroll sideways at 1280 px" True \
		"$(json_get "$OUT/chromium/$n.json" "d['widths']['1280']['scrolls_sideways']")"
fi

if [ -n "$FIREFOX" ]; then
	FF=$OUT/firefox
	mkdir -p "$FF/home" "$FF/profile"
	# shot NAME FILE WIDTH: Firefox's screenshot of FILE, 1400 pixels tall (the plots are
	# within), as FF/NAME.png
	shot() {
		HOME=$FF/home timeout 120 "$FIREFOX" --headless --no-remote -profile "$FF/profile" \
			--screenshot "$FF/$1.png" --window-size="$3,1400" "file://$2" \
			>>"$FF/firefox.log" 2>&1 && [ -s "$FF/$1.png" ]
	}
	for w in 1280 3840; do
		for t in $TRACES; do
			name=$(echo "$t" | tr -c 'a-zA-Z0-9.\n' _)-$w
			check "Firefox screenshots $t/report.html at $w px" shot "$name" \
				"$M/$t/report.html" $w
			[ -s "$FF/$name.png" ] || continue
			# shellcheck disable=SC2046
			check_compared "$t at $w px (Firefox)" "$PY" "$HERE/trace_report_check.py" \
				shot "$t at $w px" "$FF/$name.png" "$M/$t/report.html" $(nodata "$t")
		done
		check "Firefox screenshots the root report at $w px" shot root-$w \
			"$M/.tracemount/report.html" $w
		[ -s "$FF/root-$w.png" ] &&
			check_compared "root report at $w px (Firefox)" "$PY" \
				"$HERE/trace_report_check.py" shot "root report at $w px" "$FF/root-$w.png" \
				"$M/.tracemount/report.html" nodata
		check "Firefox screenshots gen.tt6/plots/mix.svg at $w px" shot mix-$w \
			"$M/gen.tt6/plots/mix.svg" $w
		[ -s "$FF/mix-$w.png" ] &&
			check_compared "mix.svg at $w px (Firefox)" "$PY" "$HERE/trace_report_check.py" \
				shot "mix.svg at $w px" "$FF/mix-$w.png" "$M/gen.tt6/report.html"
	done
	# the controls: a page with its plots left out, a page with a block wider than the window
	"$PY" -c 'import re, sys
sys.stdout.write(re.sub(r"<svg\b.*?</svg>", "", open(sys.argv[1]).read(), flags=re.S))' \
		"$M/gen.tt6/report.html" >"$TM_TMP/controls/noplots.html"
	sed 's|<body>|<body><div style="width: 5000px; height: 50px; background: #1f77b4"></div>|' \
		"$M/gen.tt6/report.html" >"$TM_TMP/controls/cut.html"
	check "Firefox screenshots the controls" shot noplots "$TM_TMP/controls/noplots.html" 1280
	check "... both" shot cut "$TM_TMP/controls/cut.html" 1280
	"$PY" "$HERE/trace_report_check.py" shot noplots "$FF/noplots.png" "$M/gen.tt6/report.html" \
		>"$TM_TMP/controls/noplots.out"
	check "control: a page without its plots fails the plots' check" \
		awk -F'\t' '/plots are drawn/ && $2 != $3 { bad = 1 } END { exit !bad }' \
		"$TM_TMP/controls/noplots.out"
	"$PY" "$HERE/trace_report_check.py" shot cut "$FF/cut.png" "$M/gen.tt6/report.html" \
		>"$TM_TMP/controls/cut.out"
	check "control: a page cut off at the right fails the edge's check" \
		awk -F'\t' '/cut off at the right/ && $2 != $3 { bad = 1 } END { exit !bad }' \
		"$TM_TMP/controls/cut.out"
fi

unmount_tm
finish
