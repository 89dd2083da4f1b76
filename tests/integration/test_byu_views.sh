#!/bin/bash
# Every view of BYU traces, byte for byte, against the tests' BYU model (byu_model:
# tests/unit/byu_ref.c), which computes them without tracemount, and dump.txt and the class
# streams also with the spec's reference decoder (byu_refdec). Also stat sizes, wc -l, tail,
# head -c, `tracemount cat` (the same bytes as the mount) and `tracemount ls` (the same sizes
# as stat).
. "$(dirname "$0")/lib.sh"

CLASSES="invalid int_ack special io_read io_write i_fetch nc_i_fetch d_read nc_d_read write_back d_write"

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/sub/deep" "$EXP"

# Traces: a large program-like mix, a small one two folders down whose name has two dots
# (so the .din stem keeps the first), and a 5-record one where most classes are empty.
"$GEN_BYU" -n 200000 -s 1 -m mixed >"$SRC/prog.byu"
"$GEN_BYU" -n 1000 -s 2 -m mixed >"$SRC/sub/deep/small.v2.byu"
"$GEN_BYU" -n 5 -s 3 -m mixed >"$SRC/sub/tiny.byu"
TRACES="prog.byu sub/deep/small.v2.byu sub/tiny.byu"

# head_equal N MOUNTED EXPECTED: head -c N of the mounted view equals the first N bytes of the
# expectation (cmp -n fails on a length difference too).
head_equal() {
	head -c "$1" "$2" | cmp -n "$1" - "$3"
}

# stats_compare EXPECTED_JSON STATS_JSON: prints "key<TAB>expected<TAB>actual".
stats_compare() {
	"$PY" - "$(dirname "$0")" "$@" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
from trace_bytes import json_checks
want = json.load(open(sys.argv[2]))
try:
    got = json.load(open(sys.argv[3]))
except Exception as e:
    got = {}
    print("parse\tvalid JSON\t%s" % e)
for k, w, g in json_checks(want, got):
    print("%s\t%s\t%s" % (k, json.dumps(w, sort_keys=True), json.dumps(g, sort_keys=True)))
EOF
}

for t in $TRACES; do
	"$BYU_MODEL" "$EXP/$t" "${t##*/}" <"$SRC/$t"
	sort -o "$EXP/$t/views.list" "$EXP/$t/views.list"
	# and plots/, every trace's, whose pictures test_plots checks (their figures are in the
	# model's stats.json)
	printf '%s\n' plots/mix.svg plots/footprint.svg \
		plots/addresses.svg | cat "$EXP/$t/views.list" - |
		sort >"$EXP/$t/all.list"
done

mount_tm "$SRC"
MNT=$TM_MNT

for t in $TRACES; do
	base=${t##*/}
	stem=${base%.*}
	e=$EXP/$t
	m=$MNT/$t
	echo "--- $t"
	check "$t is a folder in the mount" test -d "$m"
	# report.html, every trace's page, is no view (test_report checks it)
	(cd "$m" && find . -type f ! -path ./report.html | sed 's|^\./||' | sort) >"$TM_TMP/found.list"
	check "$t: the folder holds exactly the expected views" cmp "$e/all.list" "$TM_TMP/found.list"

	# Content of every view against its independent expectation.
	check "$t: raw equals the source file" cmp "$SRC/$t" "$m/raw"
	check "$t: dump.txt equals the model's" cmp "$e/dump.txt" "$m/dump.txt"
	check "$t: dump.txt equals the reference decoder's output" cmp <("$BYU_REFDEC" <"$SRC/$t") \
		"$m/dump.txt"
	for name in $CLASSES; do
		check "$t: class/$name.txt equals the model's lines of that class" \
			cmp "$e/class/$name.txt" "$m/class/$name.txt"
		check "$t: class/$name.byu equals the model's records of that class" \
			cmp "$e/class/$name.byu" "$m/class/$name.byu"
		"$BYU_REFDEC" <"$m/class/$name.byu" >"$TM_TMP/redecoded"
		check "$t: class/$name.byu decodes (reference decoder) to class/$name.txt" \
			cmp "$TM_TMP/redecoded" "$m/class/$name.txt"
	done
	check "$t: convert/$stem.din equals the model's" \
		cmp "$e/convert/$stem.din" "$m/convert/$stem.din"
	check "$t: errors.txt is empty for a clean trace" cmp /dev/null "$m/errors.txt"
	check_eq "$t: stats.json ends with a newline" 0a "$(tail -c 1 "$m/stats.json" | od -An -tx1 | tr -d ' ')"

	# The per-class text streams partition dump.txt.
	check_eq "$t: class line counts add up to the record count" "$(wc -l <"$e/dump.txt")" \
		"$(cat "$m"/class/*.txt | wc -l)"

	# stats.json.
	stats_compare "$e/stats.json" "$m/stats.json" >"$TM_TMP/stats.cmp"
	check "$t: stats.json compared" test -s "$TM_TMP/stats.cmp"
	while IFS=$'\t' read -r key want got; do
		check_eq "$t: stats.json $key" "$want" "$got"
	done <"$TM_TMP/stats.cmp"

	# Sizes: stat against the expected length of every view (one stat per folder: process
	# start-up is slow on the machines this runs on).
	mapfile -t views <"$e/views.list"
	# a listing above sized the products' files 0 for a second (doc/architecture.md,
	# "Products"): their opens make the kernel ask again
	open_views "$m"
	unset want_size got_size
	declare -A want_size got_size
	while read -r size view; do
		want_size[$view]=$size
	done < <(cd "$e" && stat -c '%s %n' -- "${views[@]/stats.json/raw}")
	want_size[stats.json]=$(wc -c <"$m/stats.json")
	while read -r size view; do
		got_size[$view]=$size
	done < <(cd "$m" && stat -c '%s %n' -- "${views[@]}" plots/mix.svg plots/footprint.svg \
		plots/addresses.svg)
	for view in "${views[@]}"; do
		check_eq "$t: stat size of $view" "${want_size[$view]}" "${got_size[$view]:-missing}"
	done

	# Line-oriented tools on the text views, and head -c on every view.
	for view in dump.txt "convert/$stem.din" $(printf 'class/%s.txt ' $CLASSES); do
		check_eq "$t: wc -l $view" "$(wc -l <"$e/$view")" "$(wc -l <"$m/$view")"
		check_eq "$t: tail -n 3 $view" "$(tail -n 3 "$e/$view")" "$(tail -n 3 "$m/$view")"
	done
	for view in "${views[@]}"; do
		[ "$view" = stats.json ] && continue
		sizes=4099
		case $view in raw | dump.txt) sizes="1 100 4099" ;; esac
		for n in $sizes; do
			check "$t: head -c $n $view" head_equal "$n" "$m/$view" "$e/$view"
		done
	done

	# `tracemount cat`, run from SOURCE with the relative path, gives the mounted bytes; and
	# `tracemount ls` gives the stat sizes of exactly the views in the folder.
	cd "$SRC" || exit 1
	for view in "${views[@]}"; do
		"$TRACEMOUNT" cat "$t" "$view" >"$TM_TMP/cat.out"
		check_eq "$t: tracemount cat $view exits 0" 0 "$?"
		check "$t: tracemount cat $view equals the mounted file" cmp "$TM_TMP/cat.out" "$m/$view"
	done
	"$TRACEMOUNT" ls "$t" >"$TM_TMP/ls.out"
	check_eq "$t: tracemount ls exits 0" 0 "$?"
	cd - >/dev/null || exit 1
	awk '{ print $2 }' "$TM_TMP/ls.out" | sort >"$TM_TMP/ls.list"
	check "$t: tracemount ls lists exactly the views" cmp "$e/all.list" "$TM_TMP/ls.list"
	while read -r size view; do
		check_eq "$t: tracemount ls size of $view equals stat" "${got_size[$view]:-missing}" "$size"
	done <"$TM_TMP/ls.out"
	check_eq "$t: tracemount ls right-aligns sizes (paths start in one column)" 1 \
		"$(awk '{ print index($0, " " $2) }' "$TM_TMP/ls.out" | sort -u | wc -l)"
done

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
