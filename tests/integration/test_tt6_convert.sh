#!/bin/bash
# TT6 <-> TT6E conversions (doc/formats.md): gen_tt6 writes one program in both formats, so
# convert/NAME.tt6e of its TT6 trace must be its TT6E trace byte for byte, and the other way
# round; TT6 -> TT6E -> TT6 and (canonical) TT6E -> TT6 -> TT6E give back the original bytes;
# dcbx/icbi addresses (from escapes 0x01, 0x11, or 0 when unknown) survive TT6E -> TT6 -> TT6E;
# converted files decode to the PCs the tests' TT6 model (tt6_expect.py) reads in the original,
# whose own conversion of each gen_tt6 trace is checked first to be gen_tt6's other trace.
# gen_tt6's TT6 is as Amber writes it: no escape 0x12 (issue 40: TT6E -> TT6 wrote one before
# every dcbx without an address). Hand-made traces, with expected bytes written here from the
# rules, cover the rules one by one: 0x11 dropped and 0x01 kept, the address from the escape
# immediately before, an escape 0x12 in TT6 only after an 0x01, a relative `b` to 0x700 and an
# rfi to elsewhere as a synthetic pair (they come back canonical), a twi without a pair (gains
# one), a hand-written 0x11 (not reproduced). Real TT6/TT6E traces in ../shared/realtraces, if
# any, must survive both round trips (SKIP when there are none).
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
RT=$TM_TMP/roundtrip
EXP=$TM_TMP/expected
mkdir -p "$SRC" "$RT" "$EXP"

words() {
	"$PY" -c 'import sys, struct
w = [int(x, 16) for x in sys.stdin.read().split() if not x.startswith("#")]
sys.stdout.buffer.write(struct.pack(">%dI" % len(w), *w))'
}

"$GEN_TT6" --format tt6 --steps 25000 --seed 31 --truth "$EXP/a.tt6.truth" >"$SRC/a.tt6"
"$GEN_TT6" --format tt6e --steps 25000 --seed 31 --truth "$EXP/a.tt6e.truth" >"$SRC/a.tt6e"
"$GEN_TT6" --format tt6 --clean --steps 8000 --seed 32 --truth "$EXP/b.tt6.truth" >"$SRC/b.tt6"
"$GEN_TT6" --format tt6e --clean --steps 8000 --seed 32 --truth "$EXP/b.tt6e.truth" >"$SRC/b.tt6e"
for t in a.tt6 a.tt6e b.tt6 b.tt6e; do
	"$PY" "$HERE/tt6_expect.py" convert "$SRC/$t" "${t##*.}" "$EXP/$t.converted"
	"$PY" "$HERE/tt6_expect.py" decode "$SRC/$t" "${t##*.}" "$EXP/$t.records" "$EXP/$t.errors" >/dev/null
done
check "a.tt6e: the model's conversion of its TT6 trace (tt6_expect.py) is its TT6E trace" \
	cmp "$EXP/a.tt6.converted" "$SRC/a.tt6e"
check "a.tt6: the model's conversion of its TT6E trace (tt6_expect.py) is its TT6 trace" \
	cmp "$EXP/a.tt6e.converted" "$SRC/a.tt6"
for c in a b c d; do
	check "a.tt6e: gen_tt6 wrote dcbx addresses of case $c" grep -q "	case=$c$" "$EXP/a.tt6e.truth"
done
# a.tt6 is as Amber writes a TT6: a dcbx without an address has no escape 0x12 before it
for mn in dcbz dcbt dcbf icbi; do
	for c in a b c; do
		check "a.tt6: gen_tt6 wrote $mn of case $c (c: no address)" \
			grep -qE "^compute	.*	mn=$mn	case=$c$" "$EXP/a.tt6.truth"
	done
done
check_eq "a.tt6: the model reads dcbx without an address, none after an escape 0x12" "yes 0" \
	"$("$PY" - "$HERE" "$SRC/a.tt6" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from tt6_expect import marked, no_address, reference_decode
recs = reference_decode(open(sys.argv[2], "rb").read(), "tt6")[0]
print("yes" if any(no_address(r) for r in recs) else "no", sum(marked(r) for r in recs))
EOF
)"

# TT6 -> TT6E: 0x01 kept, 0x11 dropped, the address from the escape just before, else none
# (an escape 0x12 before it, its address word 0; in TT6 one only after an escape 0x01, whose
# address it refuses); twi gains the synthetic pair.
words >"$SRC/h6.tt6" <<'EOF'
00006000
00010001 00fffa40 7c001fec
00110001 00fffa80 7c00222c
00010001 00fffac0 00110001 00fffb00 7c0028ac
7c00286c
00020001 00000001 7c0035ec
00010001 00fffc00 00120000 7c0007ac
0c830000
38630001
EOF
words >"$EXP/h6.tt6e" <<'EOF'
00006000
00010001 00fffa40 7c001fec 00fffa40
7c00222c 00fffa80
00010001 00fffac0 7c0028ac 00fffb00
00120000 7c00286c 00000000
00020001 00000001 00120000 7c0035ec 00000000
00010001 00fffc00 00120000 7c0007ac 00000000
0c830000 48000702 00000700 4c000064 0000601c
38630001
EOF
# An escape 0x11 then 0x01 before an icbi: the address is the 0x01's, just before it.
words >"$SRC/h6x.tt6" <<'EOF'
00007000 00110001 00fffb40 00010001 00fffb80 7c0037ac
EOF
words >"$EXP/h6x.tt6e" <<'EOF'
00007000 00010001 00fffb80 7c0037ac 00fffb80
EOF

# TT6E -> TT6, with non-canonical pairs, a twi without one, a hand-written 0x11.
words >"$SRC/nc.tt6e" <<'EOF'
00005000
0c830000 4bffb6fc 00000700 4c000064 00005004
0c830000 48000702 00000700 4c000064 00009998
38630001
0c830000
38630001
00110001 00fff900 7c001fec 00fff900
00010001 00fff940 7c00222c 00fff940
00010001 00fff980 7c0028ac 00fff9c0
7c0037ac 00000000
7c00286c 00fffa00
EOF
words >"$EXP/nc.tt6" <<'EOF'
00005000
0c830000
0c830000
38630001
0c830000
38630001
00110001 00fff900 00110001 00fff900 7c001fec
00010001 00fff940 7c00222c
00010001 00fff980 00110001 00fff9c0 7c0028ac
00110001 00000000 7c0037ac
00110001 00fffa00 7c00286c
EOF
words >"$EXP/nc.canonical.tt6e" <<'EOF'
00005000
0c830000 48000702 00000700 4c000064 00005004
0c830000 48000702 00000700 4c000064 00005008
38630001
0c830000 48000702 00000700 4c000064 00005010
38630001
7c001fec 00fff900
00010001 00fff940 7c00222c 00fff940
00010001 00fff980 7c0028ac 00fff9c0
7c0037ac 00000000
7c00286c 00fffa00
EOF

mount_tm "$SRC"
MNT=$TM_MNT

check "a.tt6: convert/a.tt6e is the same program written by gen_tt6 as TT6E" \
	cmp "$SRC/a.tt6e" "$MNT/a.tt6/convert/a.tt6e"
check "a.tt6e: convert/a.tt6 is the same program written by gen_tt6 as TT6" \
	cmp "$SRC/a.tt6" "$MNT/a.tt6e/convert/a.tt6"
check "b.tt6: convert/b.tt6e is the same program written by gen_tt6 as TT6E" \
	cmp "$SRC/b.tt6e" "$MNT/b.tt6/convert/b.tt6e"
check "b.tt6e: convert/b.tt6 is the same program written by gen_tt6 as TT6" \
	cmp "$SRC/b.tt6" "$MNT/b.tt6e/convert/b.tt6"
check "h6.tt6: convert/h6.tt6e (0x01 kept, 0x11 dropped, addresses, the pair)" \
	cmp "$EXP/h6.tt6e" "$MNT/h6.tt6/convert/h6.tt6e"
check "h6x.tt6: convert/h6x.tt6e takes the address of the 0x01 just before the icbi" \
	cmp "$EXP/h6x.tt6e" "$MNT/h6x.tt6/convert/h6x.tt6e"
check "nc.tt6e: convert/nc.tt6 (pairs dropped by pattern, 0x11 written where needed)" \
	cmp "$EXP/nc.tt6" "$MNT/nc.tt6e/convert/nc.tt6"
check_eq "nc.tt6e: twi_pairs counts the two pairs recognised by pattern" 2 \
	"$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["tt6e"]["twi_pairs"])' \
		"$MNT/nc.tt6e/stats.json")"
check_eq "nc.tt6e: errors.txt: one line, the twi without a pair (offset 48, or 52 after it)" \
	1 "$(grep -cE '^offset (48|52): ' "$MNT/nc.tt6e/errors.txt")"
check_eq "nc.tt6e: errors.txt has no other line" 1 "$(wc -l <"$MNT/nc.tt6e/errors.txt")"

# Copies of the conversions, named so that they are read in their new format.
cp "$MNT/a.tt6/convert/a.tt6e" "$RT/a1.tt6e"
cp "$MNT/a.tt6e/convert/a.tt6" "$RT/a2.tt6"
cp "$MNT/b.tt6/convert/b.tt6e" "$RT/b1.tt6e"
cp "$MNT/b.tt6e/convert/b.tt6" "$RT/b2.tt6"
cp "$MNT/h6.tt6/convert/h6.tt6e" "$RT/h1.tt6e"
cp "$MNT/nc.tt6e/convert/nc.tt6" "$RT/nc2.tt6"
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm

mount_tm "$RT"
MNT=$TM_MNT
check "a.tt6 -> TT6E -> TT6 gives back the original bytes" cmp "$SRC/a.tt6" "$MNT/a1.tt6e/convert/a1.tt6"
check "a.tt6e -> TT6 -> TT6E gives back the original bytes" cmp "$SRC/a.tt6e" "$MNT/a2.tt6/convert/a2.tt6e"
check "b.tt6 -> TT6E -> TT6 gives back the original bytes" cmp "$SRC/b.tt6" "$MNT/b1.tt6e/convert/b1.tt6"
check "b.tt6e -> TT6 -> TT6E gives back the original bytes" cmp "$SRC/b.tt6e" "$MNT/b2.tt6/convert/b2.tt6e"
check "h6.tt6 -> TT6E -> TT6 gives back the original bytes (an escape 0x12 only after the 0x01)" \
	cmp "$SRC/h6.tt6" "$MNT/h1.tt6e/convert/h1.tt6"
check "nc.tt6e -> TT6 -> TT6E is the canonical TT6E (pairs canonical, a pair after every twi, no hand 0x11)" \
	cmp "$EXP/nc.canonical.tt6e" "$MNT/nc2.tt6/convert/nc2.tt6e"

# dcbx/icbi addresses survive TT6E -> TT6 -> TT6E: the memory lines of the cache operations
# in the round trip's dump, against the addresses the model reads in the original.
cp "$MNT/a2.tt6/convert/a2.tt6e" "$TM_TMP/a3.tt6e"
(cd "$TM_TMP" && "$TRACEMOUNT" cat a3.tt6e dump.txt) >"$TM_TMP/a3.dump"
"$PY" - "$HERE" "$SRC/a.tt6e" "$TM_TMP/a3.dump" "$TM_TMP/dcbx.want" "$TM_TMP/dcbx.got" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from tt6_expect import no_address, reference_decode
want = ["%d %08x %08x %s" % (r.num, r.pc, r.word,
                             "????????" if no_address(r) else "%08x" % r.get("ea"))
        for r in reference_decode(open(sys.argv[2], "rb").read(), "tt6e")[0]
        if r.kind == "memory" and r.get("cache")]
keys = {w.rsplit(" ", 1)[0] for w in want}
got = []
for line in open(sys.argv[3]):
    f = line.split()
    k = "%s %s %s" % (f[0], f[1], f[2])
    if k in keys:
        ea = [x[3:] for x in f if x.startswith("ea=")]
        got.append("%s %s" % (k, ea[0] if ea else "none"))
open(sys.argv[4], "w").write("".join(w + "\n" for w in want))
open(sys.argv[5], "w").write("".join(g + "\n" for g in got))
EOF
check "a.tt6e: the model has dcbx/icbi records with a non-zero address" \
	grep -qv ' 00000000$' "$TM_TMP/dcbx.want"
check "a.tt6e -> TT6 -> TT6E: every dcbx/icbi keeps its number, PC, word and address" \
	cmp "$TM_TMP/dcbx.want" "$TM_TMP/dcbx.got"

# Converted files decode to the model's PCs: the instruction records of a1.tt6e (TT6 -> TT6E)
# are those the model reads in a.tt6e, those of a2.tt6 (TT6E -> TT6) in a.tt6, in order.
for pair in "a1.tt6e a.tt6e" "a2.tt6 a.tt6" "b1.tt6e b.tt6e" "b2.tt6 b.tt6"; do
	set -- $pair
	awk -F'\t' '$1 ~ /^(compute|flow|memory|memext)$/ { print $2, $3 }' "$EXP/$2.records" >"$TM_TMP/pcs.want"
	"$PY" "$HERE/tt6_expect.py" columns "$MNT/$1/dump.txt" |
		awk -F'\t' '{ split($5, c, " ") } c[1] !~ /^(escape|sync|initial_pc)$/ { print $1, $2 }' >"$TM_TMP/pcs.got"
	check "$1: the conversion decodes to the instruction numbers and PCs of $2's model" \
		cmp "$TM_TMP/pcs.want" "$TM_TMP/pcs.got"
done

# A TT6 dcbx has no address unless an escape gives it one: converted to TT6E, it has none
# still, which is not address 0. Its dump says ????????, stats.json and errors.txt count it,
# and the din leaves it out.
nc=$(grep -c '	case=c' "$EXP/a.tt6e.truth")
check "a.tt6: gen_tt6 wrote data-moving dcbx without an address" \
	grep -qE '^compute	.*	mn=(dcbz|dcba|dcbt|dcbtst)	case=c' "$EXP/a.tt6.truth"
check_eq "a1.tt6e (a.tt6 -> TT6E): dump.txt shows their address as ????????" "$nc" \
	"$(grep -c ' ea=????????' "$MNT/a1.tt6e/dump.txt")"
check_eq "a1.tt6e: stats.json counts them" "$nc" \
	"$(json_get "$MNT/a1.tt6e/stats.json" 'd["tt6e"]["cache_ops_without_address"]')"
check_eq "a1.tt6e: errors.txt says so once, with the count" \
	"$nc cache-block instructions (dcbz, dcbt...) have no address (an escape 0x12 before each): they are not in convert/NAME.din" \
	"$(grep 'have no address' "$MNT/a1.tt6e/errors.txt")"
check_eq "a1.tt6e: the din has no access at address 0" 0 \
	"$(grep -cE '^[01] 00000000$' "$MNT/a1.tt6e/convert/a1.din")"
check_eq "a1.tt6e: the din's data lines are the accesses with an address" \
	"$(json_get "$MNT/a1.tt6e/stats.json" 'd["tt6e"]["din"]["reads"] + d["tt6e"]["din"]["writes"]')" \
	"$(grep -c '^[01] ' "$MNT/a1.tt6e/convert/a1.din")"
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm

# tracemount cat gives the same conversions.
cd "$SRC" || exit 1
for t in a.tt6 nc.tt6e h6.tt6; do
	case $t in *.tt6) o=tt6e ;; *) o=tt6 ;; esac
	"$TRACEMOUNT" cat "$t" "convert/${t%.*}.$o" >"$TM_TMP/cat.out"
	check_eq "$t: tracemount cat convert/${t%.*}.$o exits 0" 0 "$?"
	case $t in
	a.tt6) want=$SRC/a.tt6e ;;
	nc.tt6e) want=$EXP/nc.tt6 ;;
	h6.tt6) want=$EXP/h6.tt6e ;;
	esac
	check "$t: tracemount cat convert/${t%.*}.$o equals the expectation" cmp "$want" "$TM_TMP/cat.out"
done
cd - >/dev/null || exit 1

# Real traces, where ../shared/realtraces holds any TT6 or TT6E: both round trips through the
# mount give back their bytes (a real TT6 has no escape 0x12, and gets none back).
R=${REALTRACES:-}
REAL=$TM_TMP/real
REAL2=$TM_TMP/real2
mkdir -p "$REAL" "$REAL2"
if [ -n "$R" ] && [ -d "$R" ]; then
	i=0
	while IFS= read -r -d '' f; do
		i=$((i + 1))
		cp "$f" "$REAL/r$i-$(basename "$f")"
	done < <(find "$R" -type f \( -name '*.tt6' -o -name '*.tt6e' \) -print0 | sort -z)
fi
if [ -z "$R" ] || [ ! -d "$R" ]; then
	skip_part realtraces "no realtraces folder at '$R': real TT6/TT6E round trips not tried"
elif [ -z "$(ls "$REAL")" ]; then
	skip_part no-tt6-realtraces "'$R' holds no TT6 or TT6E trace (none is public): real round trips not tried"
else
	other() { case $1 in *.tt6) echo tt6e ;; *) echo tt6 ;; esac }
	mount_tm "$REAL"
	for f in "$REAL"/*; do
		t=${f##*/}
		cp "$TM_MNT/$t/convert/${t%.*}.$(other "$t")" "$REAL2/${t%.*}.$(other "$t")"
	done
	unmount_tm
	mount_tm "$REAL2"
	for f in "$REAL"/*; do
		t=${f##*/}
		o=${t%.*}.$(other "$t")
		check "real $t -> ${o##*.} -> ${t##*.} gives back its bytes" \
			cmp "$REAL/$t" "$TM_MNT/$o/convert/${t%.*}.${t##*.}"
	done
	unmount_tm
fi
finish
