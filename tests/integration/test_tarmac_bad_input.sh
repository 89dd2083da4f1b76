#!/bin/bash
# Bad QEMU4V/Tarmac input is kept line by line, reported in errors.txt with its line number,
# and never takes the daemon down (doc/formats.md, "Bad input"). Each trace is a clean
# gen_tarmac trace (one cpu, 400 lines) with edits:
#
#   unknown    unknown record kinds (BOGUS, IX)
#   malformed  IT without (ID), R without value, MR4 without address, a time alone
#   binary     control bytes in a line; 64 KiB of random bytes after the last line
#   long       lines of 10,000 and 4097 bytes (skipped: no record), one of exactly 4096 (kept)
#   crlf       every line ends in CR LF (kept, CR dropped in dump.txt, counted)
#   nonl       the last line has no newline (kept, reported)
#   empty      0 bytes
#   cut.gz     the gzip-compressed trace cut at 60 %: the decompressed prefix, an error
#   byu        a binary BYU trace named .tarmac (mislabelled): kept as unknown lines
#
# For every trace: stats.json records (lines, less the skipped ones) and unknown count,
# errors.txt naming each bad line with its problem, class/unknown.qemu4v holding exactly the
# bad lines, every other dump.txt line equal to that of the clean trace at the same line, and
# the views' sizes equal to the bytes read. A clean trace mounted beside them still reads
# right afterwards, and the daemon exits cleanly.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
EXPECT="$HERE/tarmac_expect.py"
SRC=$TM_TMP/src
mkdir -p "$SRC/bad"

"$GEN_TARMAC" --lines 400 --seed 21 >"$TM_TMP/base.qemu4v"
"$GEN_TARMAC" --lines 30000 --seed 22 --cpus 2 >"$SRC/clean.qemu4v"
"$PY" "$EXPECT" expect "$TM_TMP/base.qemu4v" "$TM_TMP/base" base qemu4v
"$PY" "$EXPECT" expect "$SRC/clean.qemu4v" "$TM_TMP/clean" clean qemu4v

# craft NAME EDITS...: bad/NAME.qemu4v, the base trace with each "LINE:KIND" edit (LINE from
# 1) replacing that line; writes NAME.expect: one "LINE<TAB>unknown|skipped|kept<TAB>message"
# per edited line (kept: a good line, not reported).
craft() {
	"$PY" - "$TM_TMP/base.qemu4v" "$SRC/bad/$1.qemu4v" "$TM_TMP/$1.expect" "${@:2}" <<'EOF'
import random, sys
base, out, expect = sys.argv[1:4]
lines = open(base, "rb").read().split(b"\n")[:-1]
bad = []
random.seed(5)
def long_line(l, n):
    return l + b" " + b"x" * (n - len(l) - 1)
for edit in sys.argv[4:]:
    at, kind = edit.split(":")
    i = int(at) - 1
    new, what, message = {
        "bogus": (b"12 clk BOGUS 1 2", "unknown", "unknown record kind ('BOGUS')"),
        "ix": (b"7 clk cpu0 IX (7) 00008000 e3a00001 A svc_s : MOV r0,#1", "unknown",
               "unknown record kind ('IX')"),
        "noid": (b"5 clk 0 IT 00008000 e3a00001 A svc_s : MOV r0,#1", "unknown",
                 "instruction record without (ID)"),
        "noval": (b"3 clk R r0", "unknown", "register record without name and value"),
        "noaddr": (b"4 clk MR4", "unknown", "memory record without address"),
        "time": (b"2 clk", "unknown", "no record after the time"),
        "ctrl": (lines[i][:5] + b"\x01\x02" + lines[i][5:], "unknown", "control bytes"),
        "long": (long_line(lines[i], 10000), "skipped", "longer than 4096 bytes"),
        "long4097": (long_line(lines[i], 4097), "skipped", "longer than 4096 bytes"),
        "ok4096": (long_line(lines[i], 4096), "kept", "-"),
    }[kind]
    lines[i] = new
    bad.append("%d\t%s\t%s" % (i + 1, what, message))
open(out, "wb").write(b"".join(l + b"\n" for l in lines))
open(expect, "w").write("".join(b + "\n" for b in bad))
EOF
}

craft unknown 10:bogus 11:ix
craft malformed 20:noid 21:noval 22:noaddr 23:time
craft long 40:long 41:ok4096 42:long4097
craft binary 30:ctrl
"$PY" -c 'import random, sys
random.seed(7)
sys.stdout.buffer.write(bytes(random.randrange(256) for _ in range(65536)))' \
	>>"$SRC/bad/binary.qemu4v"
sed 's/$/\r/' "$TM_TMP/base.qemu4v" >"$SRC/bad/crlf.qemu4v"
head -c -1 "$TM_TMP/base.qemu4v" >"$SRC/bad/nonl.qemu4v"
: >"$SRC/bad/empty.qemu4v"
gzip -c "$TM_TMP/base.qemu4v" >"$TM_TMP/full.gz"
head -c $(($(stat -c %s "$TM_TMP/full.gz") * 6 / 10)) "$TM_TMP/full.gz" >"$SRC/bad/cut.qemu4v.gz"
"$GEN_BYU" -n 20000 -s 3 >"$SRC/bad/byu.tarmac"

mount_tm "$SRC"
MNT=$TM_MNT

# The crafted traces: every bad line reported and kept (or skipped), the others as in the
# clean base.
for name in unknown malformed long binary; do
	t=bad/$name.qemu4v
	m=$MNT/$t
	echo "--- $t"
	lines=$(wc -l <"$SRC/$t")
	[ "$(tail -c 1 "$SRC/$t" | od -An -c | tr -d ' ')" = '\n' ] || lines=$((lines + 1))
	skipped=$(grep -c $'\tskipped\t' "$TM_TMP/$name.expect")
	unknown=$(grep -c $'\tunknown\t' "$TM_TMP/$name.expect")
	if [ "$name" != binary ]; then
		check_eq "$t: records = lines less the skipped ones" "$((lines - skipped))" \
			"$(json_get "$m/stats.json" 'd["records"]')"
		check_eq "$t: unknown records" "$unknown" \
			"$(json_get "$m/stats.json" 'd["classes"]["unknown"]')"
		check_eq "$t: class/unknown.qemu4v holds exactly the unknown lines" \
			"$(awk -F'\t' '$2 == "unknown" { print $1 }' "$TM_TMP/$name.expect" |
				while read -r n; do sed -n "${n}p" "$SRC/$t"; done | cksum)" \
			"$(cksum <"$m/class/unknown.qemu4v")"
	fi
	bad=
	while IFS=$'\t' read -r n what message; do
		[ "$what" = kept ] && ! grep -q "^line $n:" "$m/errors.txt" && continue
		grep -qF "line $n: $message" "$m/errors.txt" || bad="$bad $n"
	done <"$TM_TMP/$name.expect"
	check_eq "$t: errors.txt names every bad line with its problem" "" "$bad"
	# Every line that is not bad dumps as in the clean base (one cpu: the edits change no
	# other line's cpu); unknown lines dump as '?'.
	"$PY" - "$TM_TMP/base/dump.txt" "$m/dump.txt" "$TM_TMP/$name.expect" \
		>"$TM_TMP/dumpcheck" <<'EOF'
import sys
base = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
got = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
bad = {}
for l in open(sys.argv[3]):
    n, what, _ = l.rstrip("\n").split("\t")
    bad[int(n)] = what
out, j = [], 0
for n in range(1, len(base) + 1):
    what = bad.get(n)
    if what == "skipped":
        continue
    if j >= len(got):
        out.append("line %d: missing" % n)
        break
    if what == "unknown":
        if got[j].split(b" ")[3:4] != [b"?"]:
            out.append("line %d: not '?'" % n)
    elif what == "kept":  # the base line and a token of x's
        if not got[j].endswith(b"x" * 3000):
            out.append("line %d: not kept" % n)
    elif got[j] != base[n - 1]:
        out.append("line %d differs" % n)
    j += 1
print(" ".join(out[:5]))
EOF
	check_eq "$t: dump.txt: good lines as in the clean trace, bad ones '?' or skipped" "" \
		"$(cat "$TM_TMP/dumpcheck")"
	for view in dump.txt class/unknown.txt class/unknown.qemu4v cpu/0.txt convert/$name.din; do
		check_eq "$t: stat size of $view = bytes read" "$(stat -c %s "$m/$view")" \
			"$(wc -c <"$m/$view")"
	done
done

t=bad/binary.qemu4v
check "$t: random bytes reported as binary data" grep -q 'control bytes in a text line' \
	"$MNT/$t/errors.txt"
check_eq "$t: the first 400 lines read as in the clean trace but line 30" \
	"$(sed 30d "$TM_TMP/base/dump.txt" | cksum)" \
	"$(head -n 400 "$MNT/$t/dump.txt" | sed 30d | cksum)"

t=bad/crlf.qemu4v
echo "--- $t"
check_eq "$t: crlf_lines = every line" 400 \
	"$(json_get "$MNT/$t/stats.json" 'd["qemu4v"]["crlf_lines"]')"
check "$t: the first CR LF line reported" grep -q '^line 1: line ends in CR LF' \
	"$MNT/$t/errors.txt"
check "$t: dump.txt as in the clean trace (CR dropped)" cmp "$TM_TMP/base/dump.txt" \
	"$MNT/$t/dump.txt"
check "$t: the class streams keep the CR" cmp \
	<(grep -E '^[-0-9]+ clk R ' "$SRC/$t") "$MNT/$t/class/registers.qemu4v"

t=bad/nonl.qemu4v
echo "--- $t"
check_eq "$t: the last line kept" 400 "$(json_get "$MNT/$t/stats.json" 'd["records"]')"
check "$t: reported" grep -q '^line 400: no newline at the end of the trace' \
	"$MNT/$t/errors.txt"
check "$t: dump.txt as in the clean trace" cmp "$TM_TMP/base/dump.txt" "$MNT/$t/dump.txt"
check "$t: cpu/0.txt is the trace, without a newline added" cmp "$SRC/$t" "$MNT/$t/cpu/0.txt"

t=bad/empty.qemu4v
echo "--- $t"
check_eq "$t: no records" 0 "$(json_get "$MNT/$t/stats.json" 'd["records"]')"
check_eq "$t: dump.txt is empty" 0 "$(stat -c %s "$MNT/$t/dump.txt")"
check_eq "$t: cpu/ is empty" "" "$(ls "$MNT/$t/cpu")"

t=bad/cut.qemu4v.gz
echo "--- $t"
prefix=$(gzip -dc <"$SRC/$t" 2>/dev/null | wc -c)
check "$t: raw is the decompressed prefix" cmp <(gzip -dc <"$SRC/$t" 2>/dev/null) \
	"$MNT/$t/raw"
check_eq "$t: stats.json bytes = the prefix" "$prefix" \
	"$(json_get "$MNT/$t/stats.json" 'd["bytes"]')"
check "$t: errors.txt reports the cut" grep -qi 'gzip\|truncat\|unexpected end' \
	"$MNT/$t/errors.txt"
full=$(gzip -dc <"$SRC/$t" 2>/dev/null | grep -c '')
check_eq "$t: dump.txt has a line per line of the prefix" "$full" \
	"$(wc -l <"$MNT/$t/dump.txt")"
check "$t: dump.txt is the clean trace's first lines" cmp \
	<(head -n "$((full - 1))" "$TM_TMP/base/dump.txt") \
	<(head -n "$((full - 1))" "$MNT/$t/dump.txt")

t=bad/byu.tarmac
echo "--- $t"
check "$t: a binary trace named .tarmac reads as unknown lines, reported" \
	grep -q 'control bytes in a text line' "$MNT/$t/errors.txt"
check_eq "$t: no instruction found in it" 0 \
	"$(json_get "$MNT/$t/stats.json" 'd["classes"]["executed"] + d["classes"]["condition_failed"]')"
check_eq "$t: dump.txt size = bytes read" "$(stat -c %s "$MNT/$t/dump.txt")" \
	"$(wc -c <"$MNT/$t/dump.txt")"

# After all that, the clean trace reads right.
check "clean.qemu4v: dump.txt as expected after the bad traces" cmp "$TM_TMP/clean/dump.txt" \
	"$MNT/clean.qemu4v/dump.txt"
check "clean.qemu4v: cpu/1.txt as expected" cmp "$TM_TMP/clean/cpu/1.txt" \
	"$MNT/clean.qemu4v/cpu/1.txt"
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
