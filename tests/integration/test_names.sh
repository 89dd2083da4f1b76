#!/bin/bash
# Names that break naive code: a trace whose name is not UTF-8, one with a newline, a tab and
# a backslash, and one of 255 bytes, whose view names would pass NAME_MAX.
# - stats.json is the same bytes through the mount and tracemount cat ("source": the file's
#   own name) and parses with a strict JSON parser, the name escaped as ls -b escapes it;
# - .tracemount/status gives one line per trace, the path escaped the same way, and so does
#   the daemon's log;
# - convert/ and spix/ names of the long trace are shortened by the documented rule (the stem
#   cut, "~" and its FNV-1a hash), the same in the mount, tracemount ls and tracemount cat;
# - a single trace named .tracemount is refused with a clear message;
# - -o rw leaves the mount read-only.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
mkdir -p "$src/sub"
bad=$(printf 'bad\377\376.byu')
odd=$(printf 'new\nline\tand\\back.byu')
long=$("$PY" -c 'print("L" * 250 + ".tt6")')
"$GEN_BYU" -n 500 -s 1 >"$src/$bad"
"$GEN_BYU" -n 500 -s 2 >"$src/sub/$odd"
"$GEN_TT6" --format tt6 --records 2000 --seed 3 >"$src/$long"

mount_tm "$src"
M=$TM_MNT
# strict JSON: no invalid UTF-8, no NaN
strict_json() {
	"$PY" -c 'import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8", "strict"), parse_constant=lambda c: 1 / 0)
print(d["source"])' "$1"
}
check_eq "a name that is not UTF-8: stats.json is strict JSON, its name escaped as ls -b does" \
	'bad\377\376.byu' "$(strict_json "$M/$bad/stats.json")"
check_eq "a name with a newline, a tab and a backslash: escaped" 'new\nline\tand\\back.byu' \
	"$(strict_json "$M/sub/$odd/stats.json")"
for t in "$bad" "sub/$odd" "$long"; do
	(cd "$src" && "$TRACEMOUNT" cat "$t" stats.json) >"$TM_TMP/cat.json"
	check "$(printf %q "$t"): tracemount cat's stats.json is the mount's, byte for byte" \
		cmp -s "$TM_TMP/cat.json" "$M/$t/stats.json"
done
(cd "$TM_TMP" && "$TRACEMOUNT" cat "$src/$bad" stats.json) >"$TM_TMP/cat.json"
check "by another path too" cmp -s "$TM_TMP/cat.json" "$M/$bad/stats.json"

grep -v '^#' "$M/.tracemount/status" | tail -n +2 >"$TM_TMP/status"
check_eq "status: one line per trace" 3 "$(wc -l <"$TM_TMP/status")"
check "status: the name that is not UTF-8, escaped" grep -qF 'bad\377\376.byu	byu	' "$TM_TMP/status"
check "status: the name with a newline, a tab and a backslash, escaped" \
	grep -qF 'sub/new\nline\tand\\back.byu	byu	' "$TM_TMP/status"

# The long trace: its views' names fit NAME_MAX.
stem=$("$PY" -c 'import sys
stem = "L" * 250
h = 2166136261
for b in stem.encode():
    h = ((h ^ b) * 16777619) & 0xffffffff
print(stem[:255 - len(".spixcounts") - 9] + "~%08x" % h)')
check_eq "long name: convert/ shows the shortened stem" "$stem.din $stem.tt6e" \
	"$(ls "$M/$long/convert" | paste -sd' ')"
check "long name: spix/ too" test -s "$M/$long/spix/$stem.spixcounts"
check_eq "long name: every name fits 255 bytes" "" \
	"$(cd "$M/$long" && find . | awk -F/ '{ if (length($NF) > 255) print }')"
(cd "$src" && "$TRACEMOUNT" ls "$long") | awk '{ print $2 }' | grep "^convert/\|^spix/" | sort \
	>"$TM_TMP/ls.names"
check_eq "long name: tracemount ls gives the same names" \
	"convert/$stem.din convert/$stem.tt6e spix/$stem.spixcounts spix/summary.txt" \
	"$(paste -sd' ' "$TM_TMP/ls.names")"
check "long name: tracemount cat reads a view by it" cmp -s "$M/$long/convert/$stem.tt6e" \
	<(cd "$src" && "$TRACEMOUNT" cat "$long" "convert/$stem.tt6e")
unmount_tm

# The daemon's log (-f: standard error) escapes names as the status does: a newline in a name
# cannot start a line of its own, and bytes that are not UTF-8 are not written raw.
log=$TM_TMP/daemon.log
check "log: the name that is not UTF-8, escaped" grep -qF 'tracemount: bad\377\376.byu: indexed' \
	"$log"
check "log: the name with a newline, a tab and a backslash, escaped" \
	grep -qF 'tracemount: sub/new\nline\tand\\back.byu: indexed' "$log"
check_eq "log: no line starts inside a name" "" "$(grep -a '^line' "$log")"
check "log: valid UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null "$log"

# -o rw cannot make the mount read-write: the mount table says ro.
mount_tm "$src" -o rw
check_eq "-o rw: the mount table still says ro" ro \
	"$(awk -v m="$TM_MNT" '$2 == m { split($4, o, ","); print o[1] }' /proc/mounts)"
unmount_tm

# A single trace named .tracemount: refused, not half mounted.
mkdir -p "$TM_TMP/one" "$TM_TMP/onemnt"
"$GEN_BYU" -n 10 -s 4 >"$TM_TMP/one/.tracemount"
"$TRACEMOUNT" -o format='.tracemount:byu' "$TM_TMP/one/.tracemount" "$TM_TMP/onemnt" \
	2>"$TM_TMP/one.err"
check_eq "a single trace named .tracemount: exit status 1" 1 "$?"
check "and the reason" grep -q "cannot be mounted alone" "$TM_TMP/one.err"
check "and nothing mounted" test "$(mountpoint -q "$TM_TMP/onemnt" && echo yes)" != yes
finish
