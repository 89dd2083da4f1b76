#!/bin/bash
# Bad BYU 12-byte input is served and reported, and never takes the daemon down: traces cut 1
# to 11 bytes into a record, an empty and a 1-byte file, random bytes (mostly invalid request
# types), every request type with invalid ones, and a real file with garbage appended. Every
# view is compared with the tests' byu12 model (byu12_model: tests/unit/byu12_ref.c); a .tr
# file of random bytes is no trace; a clean trace in the same mount still reads correctly
# afterwards.
. "$(dirname "$0")/lib.sh"

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/cut" "$SRC/odd" "$EXP"

"$GEN_BYU12" -n 20000 -s 31 -p 3 -m mixed >"$SRC/good.byu12"
TRACES=good.byu12
for k in 1 2 3 4 5 6 7 8 9 10 11; do
	"$GEN_BYU12" -n 500 -s $((40 + k)) -p 2 -m mixed -t $k >"$SRC/cut/trunc$k.byu12"
	TRACES="$TRACES cut/trunc$k.byu12"
done
: >"$SRC/odd/empty.byu12"
printf '\x81' >"$SRC/odd/one.byu12"
"$GEN_BYU12" -n 20000 -s 50 -m random >"$SRC/odd/random.byu12"
"$GEN_BYU12" -n 20000 -s 51 -m random -t 3 >"$SRC/odd/random_cut.byu12"
"$GEN_BYU12" -n 10000 -s 52 -p 7 -m every >"$SRC/odd/every.byu12"
TRACES="$TRACES odd/empty.byu12 odd/one.byu12 odd/random.byu12 odd/random_cut.byu12 odd/every.byu12"
"$GEN_BYU12" -n 3000 -s 53 -m random >"$SRC/odd/random.tr"
R=${REALTRACES:-}/byu12
if [ -d "$R" ] && ls "$R"/*.tr >/dev/null 2>&1; then
	mkdir -p "$SRC/real"
	for f in "$R"/*.tr; do
		first=${first:-$f}
	done
	{ cat "$first"; printf '\xde\xad\xbe'; } >"$SRC/real/garbage3.tr"
	TRACES="$TRACES real/garbage3.tr"
else
	skip_part realtraces "$R not found: a real 12-byte BYU trace with garbage appended is not tested"
fi

for t in $TRACES; do
	"$BYU12_MODEL" "$EXP/$t" "${t##*/}" <"$SRC/$t"
done

mount_tm "$SRC"
MNT=$TM_MNT
for t in $TRACES; do
	e=$EXP/$t
	m=$MNT/$t
	check "$t is a folder in the mount" test -d "$m"
	mapfile -t views <"$e/views.list"
	bad=
	for view in "${views[@]}"; do
		[ "$view" = stats.json ] && continue
		cmp -s "$e/$view" "$m/$view" || bad="$bad $view"
	done
	check_eq "$t: every view but stats.json equals the model's" "" "$bad"
	for key in records errors truncated bytes; do
		check_eq "$t: stats.json $key" "$(json_get "$e/stats.json" "d['$key']")" \
			"$(json_get "$m/stats.json" "d['$key']")"
	done
done
check_eq "cut/trunc5.byu12: errors.txt" \
	"offset 6000: trailing partial record: 5 of 12 bytes, not decoded" \
	"$(cat "$MNT/cut/trunc5.byu12/errors.txt")"
check_eq "odd/empty.byu12: no records" 0 "$(json_get "$MNT/odd/empty.byu12/stats.json" 'd["records"]')"
# Past 1 MiB of errors.txt the entries are counted, not kept (diag.h): random bytes enough
# to pass it are still served, their last line saying how many were left out.
"$GEN_BYU12" -n 60000 -s 54 -m random >"$SRC/odd/random_big.byu12"
check "odd/random_big.byu12: errors.txt stops at about 1 MiB" test \
	"$(wc -c <"$MNT/odd/random_big.byu12/errors.txt")" -le 1100000
check_eq "odd/random_big.byu12: records" 60000 \
	"$(json_get "$MNT/odd/random_big.byu12/stats.json" 'd["records"]')"
check "odd/random.tr: random bytes named .tr are no trace" test ! -d "$MNT/odd/random.tr"
check "the clean trace still reads correctly" cmp "$EXP/good.byu12/dump.txt" \
	"$MNT/good.byu12/dump.txt"
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
