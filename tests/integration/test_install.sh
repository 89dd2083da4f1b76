#!/bin/bash
# meson install: into a DESTDIR, the binary, the manual page (with meson.build's version), the
# documents of doc/ and the packaging examples each land where a user or a package looks for
# them, and nothing else is installed; the manual page renders without a warning.
source "$(dirname "$0")/lib.sh"

# The build folder: the one holding $TRACEMOUNT (meson puts the executable of the top-level
# meson.build at the top of the build folder), found by its meson-private/ to be sure.
build=$(dirname "$TRACEMOUNT")
while [ "$build" != / ] && [ ! -f "$build/meson-private/install.dat" ]; do
	build=$(dirname "$build")
done
if [ ! -f "$build/meson-private/install.dat" ]; then
	fail "no meson build folder holds $TRACEMOUNT"
	finish
fi
src=${SOURCE_ROOT:?}
dest=$TM_TMP/dest

meson install --destdir "$dest" --no-rebuild --quiet -C "$build" >"$TM_TMP/install.log" 2>&1
status=$?
check_eq "meson install --destdir exits 0" 0 "$status"
[ "$status" = 0 ] || cat "$TM_TMP/install.log" >&2

# The folders as this build was configured (--prefix, --bindir, ...): relative ones are under
# the prefix.
meson introspect --buildoptions "$build" >"$TM_TMP/options.json"
dir_of() {
	"$PY" -c 'import json, os, sys
o = {x["name"]: x["value"] for x in json.load(open(sys.argv[1]))}
print(os.path.join(o["prefix"], o[sys.argv[2]]))' "$TM_TMP/options.json" "$1"
}
bindir=$dest$(dir_of bindir)
mandir=$dest$(dir_of mandir)
docdir=$dest$(dir_of datadir)/doc/tracemount

bin=$bindir/tracemount
check "bin/tracemount is installed, executable" test -f "$bin" -a -x "$bin"
check_eq "the installed tracemount runs: --version" "tracemount" \
	"$("$bin" --version 2>/dev/null | head -1 | awk '{ print $1 }')"
# The manual page: doc/tracemount.1 with meson.build's version (the only place it is written)
# for its @VERSION@, on the .TH line among others.
man=$mandir/man1/tracemount.1
version=$(meson introspect --projectinfo "$build" | "$PY" -c 'import json, sys
print(json.load(sys.stdin)["version"])')
check "doc/tracemount.1 writes no version but @VERSION@" test -z \
	"$(grep -n 'tracemount [0-9][0-9]*\.[0-9]' "$src/doc/tracemount.1")"
check "share/man/man1/tracemount.1 is the manual page, of version $version" cmp -s \
	<(sed "s/@VERSION@/$version/g" "$src/doc/tracemount.1") "$man"
check_eq "the installed manual page's .TH names version $version" "\"tracemount $version\"" \
	"$(awk 'NR == 1 && $1 == ".TH" { print $5, $6 }' "$man")"

# Every document of doc/ (the manual page apart), as it is in the tree.
want="bin/tracemount man1/tracemount.1"
for f in "$src"/doc/*.md; do
	name=$(basename "$f")
	check "share/doc/tracemount/$name" cmp -s "$f" "$docdir/$name"
	want="$want doc/tracemount/$name"
done
for name in README.md fstab.example mnt-traces.mount; do
	check "share/doc/tracemount/examples/$name" cmp -s "$src/packaging/$name" \
		"$docdir/examples/$name"
	want="$want doc/tracemount/examples/$name"
done
# Nothing else: no test tool, no build file. Each installed file by its last folders.
got=$(cd "$dest" && find . -type f -o -type l | sed -E 's|.*/(bin/)|\1|; s|.*/(man1/)|\1|;
	s|.*/(doc/tracemount/)|\1|' | LC_ALL=C sort | tr '\n' ' ')
check_eq "exactly these files are installed" "$(echo "$want" | tr ' ' '\n' | LC_ALL=C sort |
	tr '\n' ' ')" "$got"
check "the installed documents are readable by everyone" test -z \
	"$(find "$dest" -type f ! -perm -0444)"

# The manual page renders with every warning of groff on (man-db's man), or groff's, or
# mandoc's lint; without any of them, this part is skipped.
export LC_ALL=C.UTF-8 MANWIDTH=80
if [ -f "$man" ] && man --help 2>&1 | grep -q -- '--warnings' && command -v groff >/dev/null; then
	renderer="man --warnings=w -l"
	man --warnings=w -l "$man" >"$TM_TMP/man.out" 2>"$TM_TMP/man.err"
elif [ -f "$man" ] && command -v groff >/dev/null; then
	renderer="groff -man -Tutf8 -ww"
	groff -man -Tutf8 -ww "$man" >"$TM_TMP/man.out" 2>"$TM_TMP/man.err"
elif [ -f "$man" ] && command -v mandoc >/dev/null; then
	renderer="mandoc -Tlint -Wwarning"
	mandoc -Tlint -Wwarning "$man" >"$TM_TMP/man.err" 2>&1
	mandoc -Tutf8 "$man" >"$TM_TMP/man.out" 2>/dev/null
else
	renderer=
	skip_part "tool:man|groff|mandoc" "no man (man-db with groff), groff or mandoc to render the manual page"
fi
if [ -n "$renderer" ]; then
	check "$renderer renders the manual page" grep -q 'tracemount' "$TM_TMP/man.out"
	check_eq "$renderer: no warnings" "" "$(cat "$TM_TMP/man.err")"
fi
finish
