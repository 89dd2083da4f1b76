#!/bin/bash
# Bad BYU input is served and reported, and never takes the daemon down: traces cut 1 to 5
# bytes into a record, an empty and a 1-byte file, random bytes, all-INVALID files (and the
# 64-record and 90% edges of the "probably not BYU" rule), the real 12-byte BYU files of
# $REALTRACES/byu12 mislabelled as BYU with -o format='*.tr:byu' (and one of them with 2
# garbage bytes appended). Every view is compared with the tests' BYU model, which computes
# them without tracemount (byu_model: tests/unit/byu_ref.c), and dump.txt also with the spec's
# reference decoder (byu_refdec); a clean trace in the same mount still reads correctly
# afterwards.
#
# Process start-up is slow on the machines this runs on, so one Python process does the
# comparisons of all traces and prints one "description<TAB>expected<TAB>actual" line per
# check, which the loop below feeds to check_eq.
. "$(dirname "$0")/lib.sh"

FLAG="probably not a 6-byte BYU trace"

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/cut" "$SRC/odd" "$SRC/edge" "$EXP"

"$GEN_BYU" -n 30000 -s 31 -m mixed >"$SRC/good.byu"
for k in 1 2 3 4 5; do
	"$GEN_BYU" -n 1000 -s $((40 + k)) -m mixed -t $k >"$SRC/cut/trunc$k.byu"
done
: >"$SRC/odd/empty.byu"
printf '\x81' >"$SRC/odd/one.byu"
"$GEN_BYU" -n 50000 -s 50 -m random >"$SRC/odd/random.byu"
"$GEN_BYU" -n 5000 -s 51 -m invalid >"$SRC/odd/allinv.byu"
"$GEN_BYU" -n 3000 -s 52 -m invalid -t 4 >"$SRC/odd/allinv_cut.byu"
# The edges of the rule: at least 64 records, at least 90% of them INVALID.
"$GEN_BYU" -n 63 -s 53 -m invalid >"$SRC/edge/inv63.byu"
"$GEN_BYU" -n 64 -s 54 -m invalid >"$SRC/edge/inv64.byu"
# N I_FETCH records (control 0x8f) at 0x00012348, 0x00012350, ...
valid_records() {
	"$PY" -c 'import sys; n = int(sys.argv[1]); sys.stdout.buffer.write(b"".join(
(0x12340 + 8 * i).to_bytes(4, "big") + b"\x00\x8f" for i in range(1, n + 1)))' "$1"
}
{ "$GEN_BYU" -n 90 -s 55 -m invalid; valid_records 10; } >"$SRC/edge/inv90of100.byu"
{ "$GEN_BYU" -n 89 -s 56 -m invalid; valid_records 11; } >"$SRC/edge/inv89of100.byu"
# Chunk edges (16384 records a chunk): exactly one chunk, one record more, two chunks and a
# partial record; and a trace whose class views have whole chunks without a record.
"$GEN_BYU" -n 16384 -s 57 -m mixed >"$SRC/edge/chunk16384.byu"
"$GEN_BYU" -n 16385 -s 58 -m mixed >"$SRC/edge/chunk16385.byu"
"$GEN_BYU" -n 32768 -s 59 -m mixed -t 5 >"$SRC/edge/chunk32768_cut.byu"
{
	"$GEN_BYU" -n 20000 -s 60 -m invalid
	"$GEN_BYU" -n 20000 -s 61 -m mixed
	"$GEN_BYU" -n 40000 -s 62 -m invalid
	"$GEN_BYU" -n 100 -s 63 -m mixed
} >"$SRC/edge/sparse.byu"
TRACES="good.byu cut/trunc1.byu cut/trunc2.byu cut/trunc3.byu cut/trunc4.byu cut/trunc5.byu
	odd/empty.byu odd/one.byu odd/random.byu odd/allinv.byu odd/allinv_cut.byu
	edge/inv63.byu edge/inv64.byu edge/inv90of100.byu edge/inv89of100.byu
	edge/chunk16384.byu edge/chunk16385.byu edge/chunk32768_cut.byu edge/sparse.byu"

REAL=
if [ -d "${REALTRACES:-}/byu12" ] && ls "$REALTRACES"/byu12/*.tr >/dev/null 2>&1; then
	mkdir -p "$SRC/real"
	for f in "$REALTRACES"/byu12/*.tr; do
		cp "$f" "$SRC/real/"
		REAL="$REAL real/${f##*/}"
		first=${first:-$f}
	done
	# A real file with 2 bytes of garbage at its end: a trailing partial record.
	{ cat "$first"; printf '\xde\xad'; } >"$SRC/real/garbage2.tr"
	REAL="$REAL real/garbage2.tr"
else
	skip_part realtraces "${REALTRACES:-\$REALTRACES}/byu12 not found: the real 12-byte BYU traces are not tested"
fi

for t in $TRACES $REAL; do
	"$BYU_MODEL" "$EXP/$t" "${t##*/}" 16384 <"$SRC/$t"
	"$BYU_REFDEC" <"$SRC/$t" >"$EXP/$t/refdec.txt"
done

export TESTS_DIR
TESTS_DIR=$(cd "$(dirname "$0")" && pwd) # trace_bytes.py: stats.json compared
cat >"$TM_TMP/byu_check.py" <<'EOF'
# compare EXP SRC MNT REL...: one "description<TAB>expected<TAB>actual" line per check of the
# mounted views against the model's (EXP/REL, written by byu_model).
import json, os, random, sys
sys.path.insert(0, os.environ["TESTS_DIR"])
from trace_bytes import json_checks

def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        return "error: %s" % e

def size(path):
    try:
        return os.stat(path).st_size
    except OSError as e:
        return "error: %s" % e

def pread_all(fd, n, off):
    out = b""
    while len(out) < n:
        b = os.pread(fd, min(n - len(out), 1 << 20), off + len(out))
        if not b:
            break
        out += b
    return out

def windows(rel, view, want, bounds):
    """Windows around the chunk boundaries, at and past the end, and at random."""
    size = len(want)
    w = []
    for b in bounds:
        w += [(max(b - 1, 0), 2), (b, 1), (max(b - 5000, 0), 10000)]
    w += [(max(size - 1, 0), 1), (max(size - 100, 0), 1000), (size, 10), (size + 4096, 10),
          (0, size + 7)]
    rnd = random.Random(rel + "/" + view)
    for _ in range(8):
        w.append((rnd.randrange(size + 1), rnd.randrange(1, 300000)))
    return w

def read_windows(rel, view, path, want, bounds, direct):
    """None if every window equals want's, else a description of the first that does not."""
    try:
        fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
    except OSError as e:
        return "open: %s" % e
    try:
        for off, n in windows(rel, view, want, bounds):
            try:
                got = pread_all(fd, n, off)
            except OSError as e:
                return "[%d, +%d): %s" % (off, n, e)
            if got != want[off:off + n]:
                return "[%d, +%d): %s" % (off, n, same(want[off:off + n], got))
    finally:
        os.close(fd)
    return None

def same(want, got):
    if not isinstance(got, bytes):
        return got
    if want == got:
        return "equal"
    n = next((i for i in range(min(len(want), len(got))) if want[i] != got[i]),
             min(len(want), len(got)))
    return "differs from byte %d (expected %d bytes, got %d)" % (n, len(want), len(got))

def compare(exp, src, mnt, rels):
    out = []
    def check(desc, want, got):
        out.append("%s\t%s\t%s" % (desc, json.dumps(want, sort_keys=True), json.dumps(got, sort_keys=True)))
    for rel in rels:
        e, m = os.path.join(exp, rel), os.path.join(mnt, rel)
        views = open(os.path.join(e, "views.list")).read().split()
        # Each record view's byte offsets after every chunk of records, from the model.
        bounds = {}
        for line in open(os.path.join(e, "bounds")):
            v, *offs = line.split()
            bounds[v] = [int(o) for o in offs]
        for view in views:
            if view == "stats.json":
                continue
            want = read(os.path.join(e, view))
            check("%s: %s content" % (rel, view), "equal", same(want, read(os.path.join(m, view))))
            check("%s: %s stat size" % (rel, view), len(want), size(os.path.join(m, view)))
            if view == "errors.txt":
                continue
            for direct in (False, True):
                check("%s: %s windows at chunk boundaries, the end and random (%s)"
                      % (rel, view, "O_DIRECT" if direct else "page cache"), None,
                      read_windows(rel, view, os.path.join(m, view), want, bounds[view], direct))
        # and plots/, every trace's, whose figures are in the model's stats.json
        check("%s: the trace folder holds exactly the views" % rel,
              sorted(views + ["plots/mix.svg", "plots/footprint.svg"] +
                     ["plots/addresses.svg"]
                     + ["report.html"]),  # the trace's page, every trace's
              sorted(os.path.relpath(os.path.join(d, f), m)
                     for d, _, fs in os.walk(m) for f in fs))

        # stats.json against the model's.
        try:
            d = json.loads(read(os.path.join(m, "stats.json")))
        except Exception as ex:
            d = {}
            check("%s: stats.json parses" % rel, "valid JSON", str(ex))
        for key, w, g in json_checks(json.load(open(os.path.join(e, "stats.json"))), d):
            check("%s: %s" % (rel, key), w, g)
    print("\n".join(out))

compare(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
EOF
check "expectations written" test -s "$EXP/good.byu/convert/good.din"

mount_tm "$SRC" -o 'format=*.tr:byu'
MNT=$TM_MNT

# Every view of every trace, stat sizes, errors.txt and stats.json.
"$PY" "$TM_TMP/byu_check.py" "$EXP" "$SRC" "$MNT" $TRACES $REAL >"$TM_TMP/results"
check "comparisons ran" test -s "$TM_TMP/results"
while IFS=$'\t' read -r what want got; do
	check_eq "$what" "$want" "$got"
done <"$TM_TMP/results"

# Checks that do not depend on the model being right.
check_eq "odd/empty.byu: dump.txt is empty" 0 "$(stat -c %s "$MNT/odd/empty.byu/dump.txt")"
check_eq "odd/empty.byu: errors.txt is empty" 0 "$(wc -c <"$MNT/odd/empty.byu/errors.txt")"
check_eq "odd/empty.byu: every view but stats.json and plots/ is empty" "" \
	"$(cd "$MNT/odd/empty.byu" && find . -type f -size +0c ! -name stats.json ! -path './plots/*' \
		! -name report.html)" # the trace's page, not a view
check "odd/empty.byu: plots/mix.svg says the trace has no records" \
	grep -q "the trace has no records" "$MNT/odd/empty.byu/plots/mix.svg"
check_eq "odd/one.byu: dump.txt is empty" 0 "$(wc -c <"$MNT/odd/one.byu/dump.txt")"
check_eq "odd/one.byu: errors.txt" 'offset 0: trailing partial record: 1 of 6 bytes, not decoded' \
	"$(cat "$MNT/odd/one.byu/errors.txt")"
for k in 1 2 3 4 5; do
	check_eq "cut/trunc$k.byu: errors.txt" \
		"offset 6000: trailing partial record: $k of 6 bytes, not decoded" \
		"$(cat "$MNT/cut/trunc$k.byu/errors.txt")"
	check "cut/trunc$k.byu: dump.txt equals the reference decoder" \
		cmp "$EXP/cut/trunc$k.byu/refdec.txt" "$MNT/cut/trunc$k.byu/dump.txt"
done
check "edge/inv64.byu: flagged" grep -q "$FLAG" "$MNT/edge/inv64.byu/errors.txt"
check "edge/inv90of100.byu: flagged" grep -q "$FLAG" "$MNT/edge/inv90of100.byu/errors.txt"
check_eq "edge/inv63.byu: not flagged" "" "$(cat "$MNT/edge/inv63.byu/errors.txt")"
check_eq "edge/inv89of100.byu: not flagged" "" "$(cat "$MNT/edge/inv89of100.byu/errors.txt")"
check "odd/allinv.byu: flagged" grep -q "$FLAG" "$MNT/odd/allinv.byu/errors.txt"
check_eq "odd/random.byu: 50000 records decoded" 50000 "$(wc -l <"$MNT/odd/random.byu/dump.txt")"
check "odd/random.byu: dump.txt equals the reference decoder" \
	cmp "$EXP/odd/random.byu/refdec.txt" "$MNT/odd/random.byu/dump.txt"
for t in $REAL; do
	check "$t: (real 12-byte trace) dump.txt equals the reference decoder" \
		cmp "$EXP/$t/refdec.txt" "$MNT/$t/dump.txt"
	check "$t: (real 12-byte trace) flagged in errors.txt" grep -q "$FLAG" "$MNT/$t/errors.txt"
	check "$t: (real 12-byte trace) probably_not_byu in stats.json" \
		grep -q '"probably_not_byu": *true' "$MNT/$t/stats.json"
done
if [ -n "$REAL" ]; then
	check_eq "real/garbage2.tr: the 2 garbage bytes are a trailing partial record" 1 \
		"$(grep -cx "offset $(($(stat -c %s "$SRC/real/garbage2.tr") - 2)): trailing partial record: 2 of 6 bytes, not decoded" \
			"$MNT/real/garbage2.tr/errors.txt")"
	check "real/garbage2.tr: truncated in stats.json" \
		grep -q '"truncated": *true' "$MNT/real/garbage2.tr/stats.json"
fi

# tracemount cat, without the mount, gives the same bytes (and --format for the .tr files).
cd "$SRC" || exit 1
for t in cut/trunc3.byu odd/empty.byu odd/one.byu odd/allinv_cut.byu $REAL; do
	fmt=
	case $t in *.tr) fmt="--format byu" ;; esac
	for view in dump.txt errors.txt stats.json; do
		"$TRACEMOUNT" cat $fmt "$t" "$view" >"$TM_TMP/cat.out" 2>"$TM_TMP/cat.err"
		check_eq "$t: tracemount cat $fmt $view exits 0" 0 "$?"
		check "$t: tracemount cat $fmt $view equals the mounted file" cmp "$TM_TMP/cat.out" "$MNT/$t/$view"
	done
done
cd - >/dev/null || exit 1

# After all of that, the clean trace still reads correctly, whole and in windows.
check "daemon still running after the bad inputs" kill -0 "$TM_DAEMON_PID"
check "good.byu: dump.txt still equals the reference decoder" cmp "$EXP/good.byu/refdec.txt" "$MNT/good.byu/dump.txt"
check "good.byu: convert/good.din still equals the expectation" cmp "$EXP/good.byu/convert/good.din" "$MNT/good.byu/convert/good.din"
size=$(stat -c %s "$EXP/good.byu/dump.txt")
for off in 0 12345 300001 $((size - 7)) "$size"; do
	check "good.byu: dump.txt window at $off (O_DIRECT)" cmp \
		<(dd if="$MNT/good.byu/dump.txt" bs=1000 iflag=direct,skip_bytes,count_bytes skip=$off count=3000 status=none) \
		<(dd if="$EXP/good.byu/dump.txt" bs=1000 iflag=skip_bytes,count_bytes skip=$off count=3000 status=none)
done
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
