#!/bin/bash
# Bad TT6 and TT6E input is served and reported, and never takes the daemon down
# (doc/formats.md "Bad input"): traces cut inside a record (a partial word, after the opcode
# of a flow record, inside a memext, inside an escape's words) and at a record boundary; files
# of 0 to 3 bytes; an escape whose count runs past the end; unknown escape codes, a sync code
# with a count other than 2 and a reserved sync code in the middle of a trace; a TT6E twi pair
# cut in half at the end (after the twi, after the ba) and in the middle (no rfi; no pair at
# all); a file of random bytes named .tt6. The expected views are the tests' TT6 model's
# (tt6_expect.py, reading each file's bytes); where each file was cut or edited, the records it
# keeps and the offsets of its problems are worked out here from what gen_tt6 says it wrote:
# the valid prefix is served (dump lines equal to the clean trace's), errors.txt has a line at
# the offset of each bad record and no other, stats.json counts them; a clean trace in the same
# mount still reads correctly afterwards.
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC/cut" "$SRC/odd" "$SRC/pair" "$EXP/cut" "$EXP/odd" "$EXP/pair"

"$GEN_TT6" --format tt6 --clean --records 4000 --seed 51 --truth "$EXP/g.tt6.truth" >"$SRC/g.tt6"
"$GEN_TT6" --format tt6e --clean --records 4000 --seed 52 --truth "$EXP/g.tt6e.truth" >"$SRC/g.tt6e"

# Writes the bad traces, their expected problems, and a manifest: one line per trace "REL
# TRUNCATED PREFIX_OF RECORDS FROM SKIP..." (PREFIX_OF: the clean trace whose dump lines the
# trace's must start with, or -; RECORDS: how many it keeps, or - where only the model's reading
# says; FROM: the clean trace it was made from, whose instructions gen_tt6 named, or -).
"$PY" - "$HERE" "$SRC" "$EXP" >"$EXP/manifest" <<'EOF'
import os, random, struct, sys
sys.path.insert(0, sys.argv[1])
from tt6_expect import load_truth, reference_decode
src, exp = sys.argv[2], sys.argv[3]

def emit(rel, data, records, errs, truncated, prefix="-", skip=(), source=None):
    with open(os.path.join(src, rel), "wb") as f:
        f.write(data)
    with open(os.path.join(exp, rel + ".errors"), "w") as f:
        f.writelines(",".join(str(o) for o in sorted(e)) + "\n" for e in errs)
    print(rel, truncated, prefix, records, source or prefix, " ".join(skip))

def reference(rel, data, fmt, prefix="-", skip=()):
    _, errs, trunc = reference_decode(data, fmt)
    emit(rel, data, "-", errs, int(trunc), prefix, skip)

def cut(rel, data, recs, at, bad, prefix, skip=()):
    """data cut at byte `at`; bad: the record cut (None at a boundary)."""
    keep = [r for r in recs if r.off + r.len <= at]
    emit(rel, data[:at], len(keep), [{bad.off}] if bad else [], 1 if bad else 0, prefix, skip)

def first(recs, start, pred):
    return next(r for r in recs[start:] if pred(r))

def pair(r):
    """TT6E's synthetic pair after a twi, as gen_tt6 writes it."""
    return r.kind == "flow" and r.word in (0x48000702, 0x4c000064)

# TT6
g = load_truth(os.path.join(exp, "g.tt6.truth"))
graw = open(os.path.join(src, "g.tt6"), "rb").read()
r = first(g, 2000, lambda r: r.kind == "memext")
cut("cut/memext.tt6", graw, g, r.off + 5, r, "g.tt6")
r = first(g, 2500, lambda r: r.kind == "flow")
cut("cut/flow_opcode_only.tt6", graw, g, r.off + 4, r, "g.tt6")
r = first(g, 1500, lambda r: r.kind == "compute")
cut("cut/half_word.tt6", graw, g, r.off + 2, r, "g.tt6")
r = first(g, 1000, lambda r: r.kind in ("escape", "sync") and r.len > 4)
cut("cut/escape_words.tt6", graw, g, r.off + 4, r, "g.tt6")
cut("cut/boundary.tt6", graw, g, g[3000].off, None, "g.tt6")
cut("cut/initial_only.tt6", graw, g, 4, None, "g.tt6")
for n in (1, 2, 3):
    emit("odd/%d_bytes.tt6" % n, graw[:n], 0, [{0}], 1)
    emit("odd/%d_bytes.tt6e" % n, graw[:n], 0, [{0}], 1)
# An escape claiming 5 words, 2 of which are there.
r = g[3500]
keep = g[:3500]
emit("cut/escape_past_end.tt6", graw[:r.off] + struct.pack(">3I", 0x00050005, 1, 2), len(keep),
     [{r.off}], 1, "g.tt6")
# Unknown code 0x07, sync broadcast with 3 words, reserved sync code 0x3f with none, then a
# well-formed sync wait, all before record 2200 (they take its number and PC).
at = g[2200]
ins = [(0x00070002, [0xdead0001, 0xdead0002], "escape", True),
       (0x00210003, [0x00a0b0c0, 7, 8], "escape", True),
       (0x003f0000, [], "escape", True),
       (0x00300002, [0x00a0b0c0, 9], "sync", False)]
errs, blob, off = [], b"", at.off
for w, words, kind, bad in ins:
    if bad:
        errs.append({off})
    blob += struct.pack(">%dI" % (1 + len(words)), w, *words)
    off += 4 + 4 * len(words)
emit("odd/bad_escapes.tt6", graw[:at.off] + blob + graw[at.off:], len(g) + len(ins), errs, 0,
     source="g.tt6")
# Random bytes: whatever the words say.
rnd = random.Random(53)
reference("odd/garbage.tt6", bytes(rnd.randrange(256) for _ in range(200000)), "tt6",
          skip=["partial-stats"])
# Random words, but escapes with 0 to 3 words (so that no escape swallows the rest of the
# file): every class, unknown codes, sync codes with any count, twis without pairs.
words = []
while len(words) < 60000:
    w = rnd.getrandbits(32)
    if w >> 26 == 0:
        w = (w & 0x03ff0000) | rnd.randrange(4)
        if rnd.randrange(4) == 0:
            w = (rnd.choice([0x20, 0x21, 0x30, 0x31, 0x10]) << 16) | rnd.randrange(4)
        elif rnd.randrange(8) == 0:
            w = rnd.choice([0x00010001, 0x00110001])
        words += [w] + [rnd.getrandbits(32) for _ in range(w & 0xffff)]
    else:
        words.append(w)
blob = struct.pack(">%dI" % len(words), *words)
reference("odd/garbage_words.tt6", blob, "tt6", skip=["partial-stats"])
reference("odd/garbage_words.tt6e", blob, "tt6e", skip=["partial-stats"])

# TT6E: a twi and its pair (both flow records follow it), far from the start.
h = load_truth(os.path.join(exp, "g.tt6e.truth"))
hraw = open(os.path.join(src, "g.tt6e"), "rb").read()
i = next(k for k in range(1500, len(h) - 3) if h[k].get("mn") == "twi" and pair(h[k + 1]))
twi, ba, rfi = h[i], h[i + 1], h[i + 2]
emit("pair/end_after_twi.tt6e", hraw[:twi.off + 4], i + 1, [{twi.off, twi.off + 4}],
     "any", "g.tt6e", ["convert"])
emit("pair/end_after_ba.tt6e", hraw[:ba.off + 8], i + 2, [{twi.off, ba.off, ba.off + 8}], "any",
     "g.tt6e", ["convert"])
# No pair at all after this twi: the records that follow lose two instruction numbers.
emit("pair/no_pair.tt6e", hraw[:ba.off] + hraw[rfi.off + rfi.len:], len(h) - 2,
     [{twi.off, ba.off}], 0, source="g.tt6e")
# The ba without its rfi: the next records are read at 0x700 on (the reference reading).
reference("pair/no_rfi.tt6e", hraw[:rfi.off] + hraw[rfi.off + rfi.len:], "tt6e", skip=["convert"])
# A TT6E trace cut inside a memory record that is not near a twi.
k = next(k for k in range(2000, len(h)) if h[k].kind == "memory" and not pair(h[k - 1])
         and h[k - 1].get("mn") != "twi")
cut("cut/memory.tt6e", hraw, h, h[k].off + 6, h[k], "g.tt6e")
EOF
check "bad traces written" test -s "$EXP/manifest"
check_eq "odd/garbage.tt6: the reference reading finds problems" 1 \
	"$(test -s "$EXP/odd/garbage.tt6.errors" && echo 1)"
check_eq "pair/no_rfi.tt6e: the reference reading reports the half pair" 1 \
	"$(grep -c . "$EXP/pair/no_rfi.tt6e.errors")"
: >"$SRC/odd/empty.tt6"

mount_tm "$SRC"
MNT=$TM_MNT

# compare REL [options]
compare() {
	local rel=$1
	shift
	"$PY" "$HERE/tt6_expect.py" compare "$SRC/$rel" "$MNT/$rel" "$rel" "$@" \
		>"$TM_TMP/cmp.out" 2>"$TM_TMP/cmp.err"
	check "$rel: expectations computed" test -s "$TM_TMP/cmp.out"
	[ -s "$TM_TMP/cmp.err" ] && cat "$TM_TMP/cmp.err" >&2
	while IFS=$'\t' read -r what want got; do
		check_eq "$what" "$want" "$got"
	done <"$TM_TMP/cmp.out"
}

while read -r rel trunc prefix records from skip; do
	echo "--- $rel"
	opts=(--errors "$EXP/$rel.errors" --truncated "$trunc")
	# made from a clean trace: the mnemonics gen_tt6 wrote
	[ "$from" != - ] && opts+=(--truth "$EXP/$from.truth")
	for s in $skip; do
		if [ "$s" = partial-stats ]; then
			opts+=(--partial-stats)
		else
			opts+=(--skip "$s")
		fi
	done
	compare "$rel" "${opts[@]}"
	if [ "$records" != - ]; then
		check_eq "$rel: dump.txt has the $records records it keeps" "$records" \
			"$(wc -l <"$MNT/$rel/dump.txt")"
	fi
	if [ "$prefix" != - ]; then
		n=$(wc -l <"$MNT/$rel/dump.txt")
		check "$rel: its $n dump lines are the first $n of $prefix's" \
			cmp <(head -n "$n" "$MNT/$prefix/dump.txt") "$MNT/$rel/dump.txt"
	fi
done <"$EXP/manifest"

# Checks that do not depend on the expectation code.
for n in 1 2 3; do
	for e in tt6 tt6e; do
		t=odd/${n}_bytes.$e
		check_eq "$t: dump.txt is empty" 0 "$(wc -c <"$MNT/$t/dump.txt")"
		check_eq "$t: errors.txt: one line at offset 0" 1 "$(grep -c '^offset 0: ' "$MNT/$t/errors.txt")"
		check "$t: stats.json: truncated" grep -q '"truncated": true' "$MNT/$t/stats.json"
	done
done
check_eq "odd/empty.tt6: dump.txt is empty" 0 "$(wc -c <"$MNT/odd/empty.tt6/dump.txt")"
check_eq "odd/empty.tt6: every class file is empty" "" \
	"$(find "$MNT/odd/empty.tt6/class" -type f -size +0c)"
check "odd/empty.tt6: stats.json initial_pc is null" grep -q '"initial_pc": null' "$MNT/odd/empty.tt6/stats.json"
check_eq "cut/boundary.tt6: errors.txt is empty" 0 "$(wc -c <"$MNT/cut/boundary.tt6/errors.txt")"
check_eq "cut/boundary.tt6: 3000 records" 3000 "$(wc -l <"$MNT/cut/boundary.tt6/dump.txt")"
check_eq "odd/bad_escapes.tt6: the records after the bad escapes are the clean trace's" \
	"$(tail -n +2201 "$MNT/g.tt6/dump.txt" | md5sum)" "$(tail -n +2205 "$MNT/odd/bad_escapes.tt6/dump.txt" | md5sum)"
check_eq "odd/bad_escapes.tt6: three problems" 3 "$(wc -l <"$MNT/odd/bad_escapes.tt6/errors.txt")"

# tracemount cat gives the mounted bytes for bad input too.
cd "$SRC" || exit 1
for t in cut/memext.tt6 odd/2_bytes.tt6 odd/garbage.tt6 pair/end_after_ba.tt6e pair/no_rfi.tt6e; do
	for view in dump.txt errors.txt stats.json "convert/$(basename "${t%.*}").din"; do
		"$TRACEMOUNT" cat "$t" "$view" >"$TM_TMP/cat.out" 2>"$TM_TMP/cat.err"
		check_eq "$t: tracemount cat $view exits 0" 0 "$?"
		check "$t: tracemount cat $view equals the mounted file" cmp "$TM_TMP/cat.out" "$MNT/$t/$view"
	done
done
cd - >/dev/null || exit 1

# After all of that, the clean traces still read correctly.
check "daemon still running after the bad inputs" kill -0 "$TM_DAEMON_PID"
compare g.tt6 --truth "$EXP/g.tt6.truth"
compare g.tt6e --truth "$EXP/g.tt6e.truth"
size=$(stat -c %s "$MNT/g.tt6/dump.txt")
for off in 0 12345 $((size / 2)) $((size - 7)); do
	check "g.tt6: dump.txt window at $off (O_DIRECT) still equals the first read" cmp \
		<(dd if="$MNT/g.tt6/dump.txt" bs=1000 iflag=direct,skip_bytes,count_bytes skip=$off count=3000 status=none) \
		<(tail -c +$((off + 1)) "$MNT/g.tt6/dump.txt" | head -c 3000)
done
check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
