#!/bin/bash
# Every view of BYU 12-byte ("p2AddrTr") traces, byte for byte, against the tests' byu12 model
# (byu12_model: tests/unit/byu12_ref.c), which computes them without tracemount: generated
# traces (gen_byu12: several processors, every request type, times that go back) and the real
# files of $REALTRACES/byu12, as .tr and renamed .byu. Also stat sizes, wc -l, tail, dd at
# offsets, `tracemount cat` and `tracemount ls`; detection (the real .tr files and a .byu
# holding 12-byte records are byu12, with the mislabelling note in errors.txt; 6-byte .byu
# traces stay byu; a .tr that is no 12-byte trace is no trace); and the real files' counts
# against python3's struct over the bytes, which does not use the model.
. "$(dirname "$0")/lib.sh"

CLASSES="invalid i_fetch d_read d_read_inv d_write io_read io_write deferred_reply int_ack
central_agent branch_trace shutdown flush halt sync flush_ack stop_clock_ack smi_ack"
NOTE="named .byu, but its records are 12-byte BYU (p2AddrTr): decoded as byu12"

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/sub" "$SRC/six" "$EXP"

# Generated: a large mix on 4 processors (several chunks of 8192 records), every request type
# with invalid ones and processors of 64 and more, a 5-record .tr (detected by content), a
# mix named .byu (12-byte records under 6-byte BYU's name), and one cut inside a record.
"$GEN_BYU12" -n 40000 -s 1 -p 4 -m mixed >"$SRC/prog.byu12"
"$GEN_BYU12" -n 3000 -s 2 -p 5 -m every >"$SRC/sub/every.byu12"
"$GEN_BYU12" -n 5 -s 3 -p 1 -m mixed >"$SRC/sub/tiny.tr"
"$GEN_BYU12" -n 9000 -s 4 -p 2 -m mixed >"$SRC/sub/mislabelled.byu"
"$GEN_BYU12" -n 8192 -s 5 -p 3 -m mixed -t 7 >"$SRC/sub/cut.byu12"
TRACES="prog.byu12 sub/every.byu12 sub/tiny.tr sub/mislabelled.byu sub/cut.byu12"
# Not byu12: 6-byte BYU traces (one empty, one small) stay BYU, and a .tr holding a 6-byte
# trace is no trace at all.
"$GEN_BYU" -n 5000 -s 6 -m mixed >"$SRC/six/real6.byu"
"$GEN_BYU" -n 7 -s 7 -m mixed >"$SRC/six/small6.byu"
: >"$SRC/six/empty.byu"
"$GEN_BYU" -n 5000 -s 8 -m mixed >"$SRC/six/six.tr"

REAL=
R=${REALTRACES:-}/byu12
if [ -d "$R" ] && ls "$R"/*.tr >/dev/null 2>&1; then
	mkdir -p "$SRC/real"
	for f in "$R"/*.tr; do
		cp "$f" "$SRC/real/"
		REAL="$REAL real/${f##*/}"
		first=${first:-$f}
	done
	# A real file under 6-byte BYU's name, with other times than the .tr copy's, so that
	# the two have distinct index keys (the index is kept by content and times).
	cp "$first" "$SRC/real/renamed.byu"
	touch -d '2001-02-03 04:05:06' "$SRC/real/renamed.byu"
	REAL="$REAL real/renamed.byu"
else
	skip_part realtraces "$R not found: the real 12-byte BYU traces are not tested"
fi

for t in $TRACES $REAL; do
	"$BYU12_MODEL" "$EXP/$t" "${t##*/}" <"$SRC/$t"
	printf '%s\n' plots/mix.svg plots/footprint.svg plots/addresses.svg |
		cat "$EXP/$t/views.list" - | LC_ALL=C sort >"$EXP/$t/all.list"
done

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

mount_tm "$SRC"
MNT=$TM_MNT

for t in $TRACES $REAL; do
	base=${t##*/}
	stem=${base%.*}
	e=$EXP/$t
	m=$MNT/$t
	echo "--- $t"
	check "$t is a folder in the mount" test -d "$m"
	check_eq "$t: detected as byu12" byu12 "$(json_get "$m/stats.json" 'd["format"]')"
	(cd "$m" && find . -type f ! -path ./report.html | sed 's|^\./||' | LC_ALL=C sort) \
		>"$TM_TMP/found.list"
	check "$t: the folder holds exactly the expected views" cmp "$e/all.list" "$TM_TMP/found.list"

	mapfile -t views <"$e/views.list"
	bad=
	for view in "${views[@]}"; do
		[ "$view" = stats.json ] && continue
		cmp -s "$e/$view" "$m/$view" || bad="$bad $view"
	done
	check_eq "$t: every view but stats.json equals the model's" "" "$bad"

	stats_compare "$e/stats.json" "$m/stats.json" >"$TM_TMP/stats.cmp"
	check "$t: stats.json compared" test -s "$TM_TMP/stats.cmp"
	while IFS=$'\t' read -r key want got; do
		check_eq "$t: stats.json $key" "$want" "$got"
	done <"$TM_TMP/stats.cmp"

	# Sizes: stat against the expected length of every view.
	unset want_size got_size
	declare -A want_size got_size
	while read -r size view; do
		want_size[$view]=$size
	done < <(cd "$e" && stat -c '%s %n' -- "${views[@]}")
	want_size[stats.json]=$(wc -c <"$m/stats.json")
	while read -r size view; do
		got_size[$view]=$size
	done < <(cd "$m" && stat -c '%s %n' -- "${views[@]}")
	bad=
	for view in "${views[@]}"; do
		[ "${want_size[$view]}" = "${got_size[$view]:-missing}" ] || bad="$bad $view"
	done
	check_eq "$t: stat sizes of every view" "" "$bad"

	# Line tools on the text views; dd at offsets of the record views.
	for view in dump.txt "convert/$stem.din" class/i_fetch.txt class/d_read_inv.txt \
		class/deferred_reply.txt class/invalid.txt; do
		check_eq "$t: wc -l $view" "$(wc -l <"$e/$view")" "$(wc -l <"$m/$view")"
		check_eq "$t: tail -n 3 $view" "$(tail -n 3 "$e/$view")" "$(tail -n 3 "$m/$view")"
	done
	check_eq "$t: class line counts add up to the records" "$(wc -l <"$e/dump.txt")" \
		"$(cat "$m"/class/*.txt | wc -l)"
	for view in $(grep '^cpu/' "$e/views.list"); do
		check_eq "$t: wc -l $view" "$(wc -l <"$e/$view")" "$(wc -l <"$m/$view")"
		check_eq "$t: tail -n 2 $view" "$(tail -n 2 "$e/$view")" "$(tail -n 2 "$m/$view")"
	done
	bad=
	for view in raw dump.txt "convert/$stem.din" class/d_read.txt class/d_write.byu12 \
		$(grep '^cpu/' "$e/views.list"); do
		size=${want_size[$view]}
		for off in 0 1 4095 4096 65535 $((size / 2)) $((size > 37 ? size - 37 : 0)); do
			[ "$off" -le "$size" ] || continue
			dd_same "$m/$view" "$e/$view" "$off" 4099 || bad="$bad $view@$off"
		done
	done
	check_eq "$t: dd at offsets of the record views" "" "$bad"

	check_cli "$SRC" "$t" "$m" dump.txt errors.txt "convert/$stem.din" class/i_fetch.byu12
done

# errors.txt: what each trace reports (the model's bytes are compared above; here the
# message the issue asks for, said plainly).
check "sub/mislabelled.byu: errors.txt notes the .byu name" grep -qxF "$NOTE" \
	"$MNT/sub/mislabelled.byu/errors.txt"
check_eq "prog.byu12: errors.txt is empty" "" "$(cat "$MNT/prog.byu12/errors.txt")"
check "sub/every.byu12: errors.txt reports invalid request types" grep -q \
	'^offset [0-9]*: invalid request type 0x' "$MNT/sub/every.byu12/errors.txt"
check "sub/cut.byu12: errors.txt reports the cut record" grep -qx \
	'offset 98304: trailing partial record: 7 of 12 bytes, not decoded' \
	"$MNT/sub/cut.byu12/errors.txt"
check_eq "sub/every.byu12: processors of 64 and more have no cpu/ view" "" \
	"$(ls "$MNT/sub/every.byu12/cpu" | grep -vE '^[0-4]\.txt$')"

# Not byu12.
for t in six/real6.byu six/small6.byu six/empty.byu; do
	check_eq "$t: stays byu" byu "$(json_get "$MNT/$t/stats.json" 'd["format"]')"
done
check_eq "six/real6.byu: errors.txt has no byu12 note" "" "$(cat "$MNT/six/real6.byu/errors.txt")"
check "six/six.tr: a 6-byte trace named .tr is no trace" test ! -d "$MNT/six/six.tr"

# The real files: their counts as python3's struct reads them, and detection.
for t in $REAL; do
	"$PY" - "$SRC/$t" >"$TM_TMP/real.counts" <<'EOF'
import collections, struct, sys
data = open(sys.argv[1], "rb").read()
recs = list(struct.iter_unpack("<IBBBBI", data[: len(data) // 12 * 12]))
types = collections.Counter(r[1] for r in recs)
procs = collections.Counter(r[4] for r in recs)
print("records", len(recs))
print("partial", len(data) % 12)
for code, name in ((0x00, "i_fetch"), (0x01, "d_read"), (0x02, "d_read_inv"), (0x03, "d_write"),
                   (0x20, "deferred_reply")):
    print(name, types.get(code, 0))
print("others", len(recs) - sum(types.get(c, 0) for c in (0, 1, 2, 3, 0x20)))
print("processors", " ".join("%d:%d" % kv for kv in sorted(procs.items())))
EOF
	s=$MNT/$t/stats.json
	while read -r key want; do
		case $key in
		records) got=$(json_get "$s" 'd["records"]') ;;
		partial) got=$(json_get "$s" 'd["bytes"] % 12') ;;
		others) got=$(json_get "$s" 'd["records"] - sum(d["classes"][k] for k in
			("i_fetch", "d_read", "d_read_inv", "d_write", "deferred_reply"))') ;;
		processors) got=$(json_get "$s" \
			'" ".join("%s:%d" % kv for kv in sorted(d["byu12"]["processors"].items()))') ;;
		*) got=$(json_get "$s" "d['classes']['$key']") ;;
		esac
		check_eq "$t: $key as struct counts them" "$want" "$got"
	done <"$TM_TMP/real.counts"
done
if [ -n "$REAL" ]; then
	check_eq "real/renamed.byu: errors.txt is the mislabelling note" "$NOTE" \
		"$(cat "$MNT/real/renamed.byu/errors.txt")"
	for t in $REAL; do
		[ "$t" = real/renamed.byu ] && continue
		check_eq "$t: errors.txt is empty" "" "$(cat "$MNT/$t/errors.txt")"
	done
fi

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
