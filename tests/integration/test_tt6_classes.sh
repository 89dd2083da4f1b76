#!/bin/bash
# class/CLASS.tt6 and class/CLASS.tt6e are traces of their own (doc/views.md, doc/formats.md
# "Class streams"): every one, copied out of the mount under a name with the right extension
# and decoded with `tracemount cat COPY dump.txt`, gives exactly the lines of the mounted
# class/CLASS.txt (the initial_pc line first); it starts with the trace's INITIAL_PC word; its
# bytes are those the tests' TT6 model (tt6_expect.py) builds from its reading of the trace
# (the class's records, a position record before each whose predecessor is not in the
# stream); position records are applied,
# not shown (no escape 0x10 in the copy's dump or stats); and the class stream of a class
# stream is the same bytes (a record after a position record gets one again).
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
CLASSES="compute flow memory memext escape sync"
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
COPIES=$TM_TMP/copies
mkdir -p "$SRC" "$EXP" "$COPIES"

"$GEN_TT6" --format tt6 --steps 20000 --seed 21 >"$SRC/a.tt6"
"$GEN_TT6" --format tt6e --steps 20000 --seed 21 >"$SRC/a.tt6e"
"$GEN_TT6" --format tt6e --clean --records 5000 --seed 22 >"$SRC/c.tt6e"
# A hand-made trace whose first record after INITIAL_PC is an instruction (no position record
# before it: INITIAL_PC already gives its PC and number) and whose classes alternate.
"$PY" -c 'import struct, sys
w = [0x00004000, 0x7c0802a6, 0x38630001, 0x80610008, 0x00fff008, 0x38630001,
     0x48000009, 0x00004018, 0x00020001, 0x00000042, 0x00020001, 0x00000043, 0x7c0802a6,
     0x4e800020, 0x00004020, 0x80610008, 0x00fff010]
sys.stdout.buffer.write(struct.pack(">%dI" % len(w), *w))' >"$SRC/h.tt6"
TRACES="a.tt6 a.tt6e c.tt6e h.tt6"
for t in $TRACES; do
	"$PY" "$HERE/tt6_expect.py" decode "$SRC/$t" "${t##*.}" "$EXP/$t.records" "$EXP/$t.errors" >/dev/null
done

# Expected class streams: the model's, from its reading of the bytes.
"$PY" - "$HERE" "$SRC" "$EXP" $TRACES <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[1])
from tt6_expect import CLASSES, class_stream, reference_decode
src, exp = sys.argv[2], sys.argv[3]
for t in sys.argv[4:]:
    raw = open(os.path.join(src, t), "rb").read()
    recs = reference_decode(raw, t.rsplit(".", 1)[1])[0]
    for c in CLASSES:
        with open(os.path.join(exp, "%s.%s" % (t, c)), "wb") as f:
            f.write(class_stream(recs, raw, c, t.rsplit(".", 1)[1]))
EOF
check_eq "h.tt6: the expected compute stream has no position record before its first record" \
	"00004000 7c0802a6 38630001 00100003" "$(od -An -tx1 -N16 "$EXP/h.tt6.compute" | tr -d ' \n' |
		sed 's/\(........\)/\1 /g; s/ $//')"

mount_tm "$SRC"
MNT=$TM_MNT

for t in $TRACES; do
	ext=${t##*.}
	initial=$(head -c 4 "$SRC/$t" | od -An -tx1 | tr -d ' \n')
	for c in $CLASSES; do
		m=$MNT/$t/class
		copy=$COPIES/${t%.*}_$ext/$c.$ext
		mkdir -p "${copy%/*}"
		cp "$m/$c.$ext" "$copy"
		check "$t: class/$c.$ext equals the expected stream" cmp "$EXP/$t.$c" "$copy"
		check_eq "$t: class/$c.$ext starts with the INITIAL_PC word" "$initial" \
			"$(head -c 4 "$copy" | od -An -tx1 | tr -d ' \n')"
		(cd "${copy%/*}" && "$TRACEMOUNT" cat "$c.$ext" dump.txt) >"$TM_TMP/redecoded"
		check_eq "$t: tracemount cat $c.$ext dump.txt exits 0" 0 "$?"
		check "$t: the copy of class/$c.$ext decodes to exactly class/$c.txt" \
			cmp "$m/$c.txt" "$TM_TMP/redecoded"
		check_eq "$t: class/$c.txt starts with the initial_pc line" "initial_pc" \
			"$(head -n 1 "$m/$c.txt" | awk '{ print $NF }')"
		check_eq "$t: the copy of class/$c.$ext shows no position record" "" \
			"$(grep -m1 'code=0x10' "$TM_TMP/redecoded")"
		(cd "${copy%/*}" && "$TRACEMOUNT" cat "$c.$ext" stats.json) >"$TM_TMP/stats"
		check_eq "$t: the copy's stats.json counts no escape 0x10" "" "$(grep -m1 '"0x10"' "$TM_TMP/stats")"
		check_eq "$t: the copy's stats.json records = class/$c.txt lines" "$(wc -l <"$m/$c.txt")" \
			"$(grep -m1 '"records"' "$TM_TMP/stats" | tr -dc 0-9)"
		(cd "${copy%/*}" && "$TRACEMOUNT" cat "$c.$ext" "class/$c.$ext") >"$TM_TMP/again"
		check "$t: the class/$c.$ext of the copy is the copy itself" cmp "$copy" "$TM_TMP/again"
		# Problems in the copy: the unknown escapes of the escape stream, nothing else. (In
		# a TT6E compute or flow stream, twis and synthetic pairs are apart; whether a twi
		# followed by a position record is a problem, doc/formats.md does not say.)
		if [ "$ext" = tt6 ] || { [ "$c" != compute ] && [ "$c" != flow ]; }; then
			(cd "${copy%/*}" && "$TRACEMOUNT" cat "$c.$ext" errors.txt) >"$TM_TMP/errors"
			want=0
			[ "$c" = escape ] && want=$(grep -c '^escape	.*	code=07	' "$EXP/$t.records")
			# the line a TT6E gives the count of its dcbx without an address
			[ "$c" = memory ] && [ "$ext" = tt6e ] &&
				grep -q '	noea=1' "$EXP/$t.records" && want=1
			check_eq "$t: errors.txt of the copy of class/$c.$ext has $want lines" "$want" \
				"$(wc -l <"$TM_TMP/errors")"
		fi
	done
	check_eq "$t: the class/*.txt files hold every record once (plus an initial_pc line each)" \
		"$(($(wc -l <"$MNT/$t/dump.txt") + 5))" "$(cat "$MNT/$t"/class/*.txt | wc -l)"
done

check "daemon still running" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
