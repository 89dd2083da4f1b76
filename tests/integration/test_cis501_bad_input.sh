#!/bin/bash
# Bad CIS501 input is skipped line by line, reported in errors.txt by line number, and never
# takes the daemon down. Each kind of bad line gets its own trace, made from a clean generated
# one: too few fields, too many, a non-hexadecimal PC or address, a non-decimal Src1, Immediate
# or Uop, a lower-case Ld/St, a control byte and a byte above 0x7e in opcode names
# (doc/formats.md: printable ASCII), values out of their type's range (Src1 2^31, a 17-digit hex
# address, Immediate 2^63),
# over-long lines (100,000 bytes; 4097 bytes of valid fields padded with spaces) next to the
# longest good lines (4096 bytes, with LF and with CR LF), NUL bytes, empty and blank lines, the
# spec's header line as line 1, a burst of consecutive bad lines, CRLF line ends (every line,
# and three lines), a missing final newline (after a good and after a bad last line), and a
# gen_cis501 --bad trace mixing every kind; and a trace without bad lines that spells fields in
# every valid way (upper-case hex, 0x, tabs, leading blanks, + and leading zeros, the extremes
# of each type), whose dump.txt must print the values normalised. The lines the tests consider
# bad are the ones the spec's field types rule out (cis501_expect.py's rules); the line limit
# is 4096 bytes before the newline (CIS501_MAX_LINE).
#
# For every trace, cis501_expect.py compare checks every view against its independent
# expectations: dump.txt and the class files hold exactly the good lines (macro-op numbers
# counted over good lines only), errors.txt names every bad line and no good one (but CRLF and
# unterminated lines), stats.json counts; the first line errors.txt names is the model's
# first bad line. A clean trace mounted beside them still reads right after all of them, and
# the daemon exits cleanly.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
EXPECT="$HERE/cis501_expect.py"
MAX_LINE=4096

SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/bad" "$EXP"

"$GEN_CIS501" --lines 300 --seed 31 >"$TM_TMP/base.trace"
"$GEN_CIS501" --lines 5000 --seed 32 >"$SRC/clean.trace"

# craft OUT EDITS...: the base trace with edits, each "LINE:KIND" (LINE from 1, in the base's
# numbering; an inserted line goes before base line LINE), written by Python from the base.
craft() {
	"$PY" - "$TM_TMP/base.trace" "$@" <<'EOF'
import sys
base, out = sys.argv[1], sys.argv[2]
lines = open(base, "rb").read().split(b"\n")[:-1]
result = [[l] for l in lines]  # each base line, as the list of lines that replace it
def fields(l):
    return l.split()
def padded(l, n):
    """The 14 fields of l separated by runs of spaces, n bytes long in all."""
    f = fields(l)
    gap = n - sum(len(x) for x in f)
    seps = [gap // 13 + (1 if i < gap % 13 else 0) for i in range(13)]
    return b"".join(f[i] + b" " * seps[i] for i in range(13)) + f[13]
for edit in sys.argv[3:]:
    at, kind = edit.split(":")
    i = int(at) - 1
    l = lines[i]
    f = fields(l)
    if kind == "few":
        new = l[:l.rindex(b" " + f[13])]
    elif kind == "many":
        new = l + b"      EXTRA"
    elif kind == "hexpc":
        new = l.replace(f[1], f[1][:1] + b"g" + f[1][1:], 1)
    elif kind == "hexaddr":
        new = b" ".join(f[:9] + [b"zz"] + f[10:])
    elif kind == "decsrc":
        new = b" ".join(f[:2] + [b"x1"] + f[3:])
    elif kind == "decimm":
        new = b" ".join(f[:8] + [b"12a"] + f[9:])
    elif kind == "decuop":
        new = b" ".join([b"-"] + f[1:])
    elif kind == "long":
        new = l + b"X" * (100000 - len(l))
    elif kind == "long4097":
        new = padded(l, 4097)
    elif kind == "ok4096":
        new = padded(l, 4096)
    elif kind == "ok4096crlf":
        new = padded(l, 4096) + b"\r"
    elif kind == "nulmid":
        new = l[:-2] + b"\0" + l[-2:]
    elif kind == "nulfirst":
        new = b"\0" + l
    elif kind == "header":
        result[i].insert(0, b"Uop PC Src1 Src2 Dest Flags Branch Ld/St Immediate Mem. Address "
                            b"Fallthrough PC Target PC Macro Opcode Micro Opcode")
        continue
    elif kind == "empty":
        result[i].insert(0, b"")
        continue
    elif kind == "blank":
        result[i].insert(0, b"    \t  ")
        continue
    elif kind == "flagchar":
        new = b" ".join(f[:7] + [b"l"] + f[8:])
    elif kind == "ctrl":
        new = b" ".join(f[:13] + [f[13][:1] + b"\x01" + f[13][1:]])
    elif kind == "hibyte":
        new = b" ".join(f[:12] + [f[12] + b"\xe9"] + f[13:])
    elif kind == "crlf":
        new = l + b"\r"
    elif kind == "upper":  # valid spellings from here to "plus"
        new = b" ".join(x.upper() if j in (1, 9, 10, 11) else x for j, x in enumerate(f))
    elif kind == "hex0x":
        new = b" ".join(b"0x" + x if j in (1, 10) else x for j, x in enumerate(f))
    elif kind == "tabs":
        new = l.replace(b" ", b"\t")
    elif kind == "lead":
        new = b"   " + l + b"  "
    elif kind == "plus":
        new = b" ".join(b"+00" + x if j in (3, 8) and not x.startswith(b"-") else x
                        for j, x in enumerate(f))
    elif kind == "maxsrc":
        new = b" ".join(f[:2] + [b"-2147483648", b"2147483647"] + f[4:])
    elif kind == "maxhex":
        new = b" ".join(f[:9] + [b"ffffffffffffffff"] + f[10:])
    elif kind == "maximm":
        new = b" ".join(f[:8] + [b"-9223372036854775808"] + f[9:])
    elif kind == "bigsrc":  # out of range from here
        new = b" ".join(f[:2] + [b"2147483648"] + f[3:])
    elif kind == "bighex":
        new = b" ".join(f[:9] + [b"10000000000000000"] + f[10:])
    elif kind == "bigimm":
        new = b" ".join(f[:8] + [b"9223372036854775808"] + f[9:])
    else:
        sys.exit("craft: unknown kind " + kind)
    result[i][-1] = new
open(out, "wb").write(b"".join(x + b"\n" for r in result for x in r))
EOF
}

craft "$SRC/bad/few.trace" 10:few
craft "$SRC/bad/many.trace" 20:many
craft "$SRC/bad/hex.trace" 30:hexpc 31:hexaddr
craft "$SRC/bad/dec.trace" 40:decsrc 41:decimm 42:decuop
craft "$SRC/bad/long.trace" 50:long 51:long4097 52:ok4096 53:ok4096crlf 54:long
craft "$SRC/bad/nul.trace" 60:nulmid 61:nulfirst
craft "$SRC/bad/bytes.trace" 62:flagchar 63:ctrl 64:hibyte
craft "$SRC/bad/blank.trace" 70:empty 70:blank
craft "$SRC/bad/header.trace" 1:header
craft "$SRC/bad/burst.trace" 100:few 101:many 102:hexpc 103:decsrc 104:nulmid 105:long \
	300:few
craft "$SRC/bad/mixedcrlf.trace" 5:crlf 6:crlf 7:crlf
sed 's/$/\r/' "$TM_TMP/base.trace" >"$SRC/bad/crlf.trace"
# Valid spellings of the fields (no bad line): upper-case and 0x hex, tabs, leading and trailing
# blanks, + signs and leading zeros, the extreme values of each type.
craft "$SRC/bad/variants.trace" 80:upper 81:hex0x 82:tabs 83:lead 84:plus 85:maxsrc 86:maxhex \
	87:maximm
craft "$SRC/bad/range.trace" 90:bigsrc 91:bighex 92:bigimm
head -c -1 "$TM_TMP/base.trace" >"$SRC/bad/nonl.trace"
craft "$TM_TMP/lastbad.trace" 300:few
head -c -1 "$TM_TMP/lastbad.trace" >"$SRC/bad/nonl_bad.trace"
"$GEN_CIS501" --lines 20000 --seed 33 --bad 30 --bad-list "$TM_TMP/gen.bad" >"$SRC/bad/gen.trace"

check_eq "long.trace: line 52 is 4096 bytes before its newline" 4097 \
	"$(sed -n 52p "$SRC/bad/long.trace" | wc -c)"
check_eq "long.trace: line 53 is 4096 bytes before its CR LF" 4098 \
	"$(sed -n 53p "$SRC/bad/long.trace" | wc -c)"

TRACES="clean.trace"
for f in "$SRC"/bad/*.trace; do
	TRACES="$TRACES bad/${f##*/}"
done
for t in $TRACES; do
	base=${t##*/}
	"$PY" "$EXPECT" expect "$SRC/$t" "$EXP/$t" "${base%.*}" --max-line "$MAX_LINE"
done

# The expectations see the bad lines where they were put.
bad_of() {
	"$PY" -c 'import json, sys
print(" ".join(map(str, json.load(open(sys.argv[1]))["bad"])))' "$EXP/$1/meta.json"
}
check_eq "clean.trace has no bad line" "" "$(bad_of clean.trace)"
check_eq "few.trace: bad lines" 10 "$(bad_of bad/few.trace)"
check_eq "hex.trace: bad lines" "30 31" "$(bad_of bad/hex.trace)"
check_eq "dec.trace: bad lines" "40 41 42" "$(bad_of bad/dec.trace)"
check_eq "long.trace: bad lines (4097 bytes is too long, 4096 is not)" "50 51 54" \
	"$(bad_of bad/long.trace)"
check_eq "nul.trace: bad lines" "60 61" "$(bad_of bad/nul.trace)"
check_eq "bytes.trace: bad lines" "62 63 64" "$(bad_of bad/bytes.trace)"
check_eq "blank.trace: bad lines" "70 71" "$(bad_of bad/blank.trace)"
check_eq "header.trace: bad lines" 1 "$(bad_of bad/header.trace)"
check_eq "burst.trace: bad lines" "100 101 102 103 104 105 300" "$(bad_of bad/burst.trace)"
check_eq "crlf.trace: no bad line" "" "$(bad_of bad/crlf.trace)"
check_eq "variants.trace: no bad line" "" "$(bad_of bad/variants.trace)"
check_eq "range.trace: bad lines" "90 91 92" "$(bad_of bad/range.trace)"
check_eq "gen.trace: the bad lines are gen_cis501's" \
	"$(awk '{ print $1 }' "$TM_TMP/gen.bad" | paste -sd' ')" \
	"$(bad_of bad/gen.trace)"
check_eq "gen.trace: gen_cis501 put 30 bad lines of six kinds" "30 6" \
	"$(wc -l <"$TM_TMP/gen.bad") $(awk '{ print $2 }' "$TM_TMP/gen.bad" | sort -u | wc -l)"

mount_tm "$SRC"
MNT=$TM_MNT

for t in $TRACES; do
	[ "$t" = clean.trace ] && continue
	echo "--- $t"
	m=$MNT/$t
	check "$t is a trace folder" test -d "$m"
	check_compared "$t" "$PY" "$EXPECT" compare "$EXP/$t" "$m" "$t"

	# The model's counts of the good lines: stats.json's.
	want=$(sed -n 's/^\(Micro\|Macro\)-ops: //p' "$EXP/$t/counts.txt" | paste -sd' ')
	got=$("$PY" -c 'import json, sys
d = json.load(open(sys.argv[1])).get("cis501", {})
print(d.get("micro_ops"), d.get("macro_ops"))' "$m/stats.json" 2>&1)
	check_eq "$t: stats.json micro_ops macro_ops = the model's on the good lines" "$want" "$got"

	# The model's first bad line is the first line errors.txt names.
	first=$(bad_of "$t" | awk '{ print $1 }')
	if [ -n "$first" ]; then
		check_eq "$t: the first line errors.txt names is $first" "$first" \
			"$(grep -o -m1 'line [0-9]*' "$m/errors.txt" | tr -dc 0-9)"
	fi
	check "daemon still running after $t" kill -0 "$TM_DAEMON_PID"
done

# Every folder listed at once, then the clean trace: unaffected by the others.
ls -R "$MNT" >/dev/null
check_compared clean.trace "$PY" "$EXPECT" compare "$EXP/clean.trace" "$MNT/clean.trace" \
	clean.trace
check "clean.trace: raw equals the source" cmp "$SRC/clean.trace" "$MNT/clean.trace/raw"
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
