#!/bin/bash
# The Debian package on a fresh Debian 12: scripts/package builds the .deb (or TM_PACKAGE_DIR
# holds one built earlier from this tree), debootstrap makes a clean bookworm root (minbase),
# apt-get installs the .deb there with its dependencies from the Debian mirror this machine's
# apt uses, and inside that root the sample traces (scripts/make-samples) are mounted three
# ways: by the line of the installed fstab.example, verbatim, in /etc/fstab (`mount
# /mnt/traces`); by `mount -t fuse.tracemount ... -o ro,nosuid,nodev,cache=...`; and as
# systemd mounts the installed mnt-traces.mount (`mount WHAT WHERE -t TYPE -o OPTIONS`).
# Each mount must be fuse.tracemount, read-only, nosuid and nodev, serve views byte-identical
# to `tracemount cat` of this build on the host, keep its index files in the package's
# /var/cache/tracemount (0700, root's), and unmount with umount.
#
# Needs root, /dev/fuse, debootstrap and the mirror (SKIP, exit 77, without one of them; a
# lock held by another run is a SKIP that scripts/test counts as a failure).
# The debootstrapped root is kept between runs in TM_DEBOOTSTRAP_CACHE (default
# /var/cache/tracemount-test, outside the tree), checked before use and never written: each
# run works in an overlay (or a copy) of it, removed at the end. Mirror: TM_DEBIAN_MIRROR, else
# the first bookworm source of /etc/apt/sources.list*, else deb.debian.org.
. "$(dirname "$0")/lib.sh"

src=${SOURCE_ROOT:?}
build=$(dirname "$TRACEMOUNT")
start=$SECONDS
VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)

# phase WHAT: says what the test does next, with the seconds since its start.
phase() {
	echo "[$((SECONDS - start)) s] $*"
}

[ "$(id -u)" = 0 ] || skip not-root "needs root (debootstrap, chroot, mount)"
[ -c /dev/fuse ] || skip no-fuse "no /dev/fuse"
command -v debootstrap >/dev/null ||
	skip tool:debootstrap "debootstrap is not installed (scripts/deps installs it)"
command -v dpkg-buildpackage >/dev/null || [ -n "${TM_PACKAGE_DIR:-}" ] ||
	skip tool:dpkg-buildpackage \
		"dpkg-buildpackage is not installed (scripts/deps installs dpkg-dev and debhelper)"

# The Debian mirror: the first deb source of suite bookworm in apt's sources (one-line
# .list files and deb822 .sources files).
find_mirror() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# deb [OPTIONS] URI SUITE COMPONENT...
		awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == "bookworm") { print $i; exit } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; ok = 0; deb = 1
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { split(substr($i, 6), u, " "); uri = u[1] }
				if ($i ~ /^Suites:/ && (" " substr($i, 8) " ") ~ / bookworm /) ok = 1
				if ($i ~ /^Types:/ && $i !~ / deb( |$)/) deb = 0
			  }
			  if (ok && deb && uri != "") { print uri; exit } }' "$f"
	done
}
mirror=${TM_DEBIAN_MIRROR:-$(find_mirror | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
echo "mirror: $mirror"

# reachable: the mirror serves bookworm's Release file.
reachable() {
	timeout 30 "$PY" -c 'import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/dists/bookworm/Release", timeout=20).read(100)' \
		"$mirror" 2>/dev/null
}

# --- The package -------------------------------------------------------------------------
if [ -n "${TM_PACKAGE_DIR:-}" ]; then
	# shellcheck disable=SC2012 # the newest; the names are the package's
	deb=$(ls -t "$TM_PACKAGE_DIR"/tracemount_"$VERSION"_*.deb 2>/dev/null | head -n 1)
	if [ -z "$deb" ]; then
		fail "TM_PACKAGE_DIR=$TM_PACKAGE_DIR holds no tracemount_${VERSION}_*.deb"
		finish
	fi
	phase "the package built earlier: $deb"
else
	phase "building the package (scripts/package --deb-only)"
	if ! "$src/scripts/package" --deb-only "$TM_TMP/pkg" >"$TM_TMP/package.out" 2>&1; then
		cat "$TM_TMP/package.out" >&2
		fail "scripts/package builds the .deb"
		finish
	fi
	deb=$(ls "$TM_TMP"/pkg/tracemount_"$VERSION"_*.deb)
	pass "scripts/package builds $(basename "$deb")"
	if command -v lintian >/dev/null; then
		check_eq "lintian: no error or warning" "" \
			"$(grep -E '^[EW]: ' "$TM_TMP/pkg/lintian.txt")"
	fi
fi
check_eq "the package's version is meson.build's" "$VERSION" "$(dpkg-deb -f "$deb" Version)"
check "it depends on fuse3" grep -qE '(^|, )fuse3(,|$| )' <<<"$(dpkg-deb -f "$deb" Depends)"

# --- A clean Debian 12 root, kept between runs -------------------------------------------
cache=${TM_DEBOOTSTRAP_CACHE:-/var/cache/tracemount-test}
base=$cache/bookworm-minbase
marker="bookworm minbase $mirror"
mkdir -p "$cache"
# One run at a time uses (or makes) the root.
exec 9>"$cache/lock"
flock -w 1200 9 || skip busy "$cache/lock is held by another run"
# under DIR: the mount points at or under DIR, deepest first.
under() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo |
		LC_ALL=C sort -r
}
# remove DIR: deletes DIR, unless something is mounted in it.
remove() {
	[ -e "$1" ] || return 0
	if [ -n "$(under "$1")" ]; then
		echo "not removing $1: mounts in it: $(under "$1" | xargs)" >&2
		return 1
	fi
	rm -rf --one-file-system "$1"
}
base_ok() {
	[ "$(cat "$base/.tracemount-test" 2>/dev/null)" = "$marker" ] &&
		grep -q '^12\.' "$base/etc/debian_version" 2>/dev/null &&
		[ -x "$base/usr/bin/apt-get" ] && [ -x "$base/usr/bin/mount" ] &&
		[ ! -e "$base/var/lib/dpkg/info/tracemount.list" ] &&
		[ -z "$(chroot "$base" dpkg --audit 2>&1)" ]
}
if base_ok; then
	phase "the Debian 12 root of an earlier run: $base"
else
	reachable || skip "no-mirror:$mirror" "the Debian mirror $mirror cannot be reached"
	phase "debootstrap --variant=minbase bookworm $base $mirror (two to five minutes)"
	if ! { remove "$base" && remove "$base.new"; }; then
		fail "cannot remove the old $base"
		finish
	fi
	if ! debootstrap --variant=minbase bookworm "$base.new" "$mirror" >"$TM_TMP/debootstrap.log" \
		2>&1 9>&-; then
		tail -n 20 "$TM_TMP/debootstrap.log" >&2
		remove "$base.new"
		if grep -qiE "Failed getting release|couldn't download|failed to fetch|resolv|connect" \
			"$TM_TMP/debootstrap.log"; then
			skip "no-mirror:$mirror" "debootstrap cannot download from $mirror"
		fi
		fail "debootstrap"
		finish
	fi
	echo "$marker" >"$base.new/.tracemount-test"
	mv "$base.new" "$base"
	check "the new root checks out" base_ok
fi

# The root of this run: an overlay of the kept one (or a copy of it), in a folder of its own
# outside TM_TMP (lib.sh's cleanup removes TM_TMP without looking for mounts in it).
work=$(mktemp -d "${TMPDIR:-/tmp}/tracemount-package.XXXXXX")
root=$work/root
# pkg_cleanup: unmounts everything in the root (the FUSE mounts first, their daemons exit),
# ends a daemon still running in it, and removes the folder only when nothing is mounted in it.
# shellcheck disable=SC2317 # run by the EXIT trap
pkg_cleanup() {
	local m pid
	[ -n "${work:-}" ] && [ -d "$work" ] || return 0
	for m in $(under "$root"); do
		[ "$m" = "$root" ] && continue
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for pid in $(pgrep -x tracemount); do
		[ "$(readlink "/proc/$pid/root")" = "$root" ] && kill "$pid" 2>/dev/null
	done
	sleep 0.2
	for pid in $(pgrep -x tracemount); do
		[ "$(readlink "/proc/$pid/root")" = "$root" ] && kill -9 "$pid" 2>/dev/null
	done
	if mountpoint -q "$root"; then
		umount "$root" 2>/dev/null || umount -l "$root"
	fi
	remove "$work"
}
trap 'pkg_cleanup; tm_cleanup' EXIT
mkdir -p "$root" "$work/upper" "$work/ovwork"
if mount -t overlay overlay -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/ovwork" \
	"$root" 2>/dev/null; then
	phase "the root of this run: an overlay of $base at $root"
else
	phase "no overlay here: copying $base to $root"
	cp -a "$base/." "$root/"
fi
mount -t proc proc "$root/proc"
# /dev: a tmpfs with the few devices apt and FUSE use, not the host's /dev.
mount -t tmpfs -o mode=0755,nosuid tmpfs "$root/dev"
devices="null 1 3 zero 1 5 full 1 7 random 1 8 urandom 1 9 tty 5 0 fuse 10 229"
# shellcheck disable=SC2086 # names and numbers
set -- $devices
while [ $# -gt 0 ]; do
	mknod -m 0666 "$root/dev/$1" c "$2" "$3" 2>/dev/null
	shift 3
done
# Where device nodes cannot be made or opened (a tmpfs forced nodev, as in some containers),
# the host's own devices are bound in their place.
if ! head -c 1 "$root/dev/zero" >/dev/null 2>&1; then
	# shellcheck disable=SC2086 # names and numbers
	set -- $devices
	while [ $# -gt 0 ]; do
		rm -f "$root/dev/$1"
		: >"$root/dev/$1"
		mount --bind "/dev/$1" "$root/dev/$1"
		shift 3
	done
fi
mkdir -p "$root/dev/pts" "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
# No service starts in the root (fuse3 has none, but its dependencies may).
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"
# in_root COMMAND...: COMMAND in the root, with a clean environment and without the lock's
# file descriptor (a daemon started there would hold the lock as long as it ran).
in_root() {
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@" 9>&-
}

# --- apt-get install ./tracemount_*.deb ----------------------------------------------------
phase "apt-get install ./$(basename "$deb") in the root"
cp "$deb" "$root/tmp/"
# apt-get ERROR: skips the test when the mirror cannot be reached, or fails it.
apt_failed() {
	cat "$TM_TMP/apt.log" >&2
	if grep -qE '^(W|E): (Failed to fetch|Some index files failed)' "$TM_TMP/apt.log" ||
		grep -qE 'Temporary failure resolving|Could not connect' "$TM_TMP/apt.log"; then
		skip "no-mirror:$mirror" "apt-get in the root cannot download from $mirror"
	fi
	fail "$1"
	finish
}
in_root apt-get update -q >"$TM_TMP/apt.log" 2>&1 || apt_failed "apt-get update"
grep -qE '^(W|E): (Failed to fetch|Some index files failed)' "$TM_TMP/apt.log" &&
	apt_failed "apt-get update"
in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" \
	>"$TM_TMP/apt.log" 2>&1 || apt_failed "apt-get install ./$(basename "$deb")"
pass "apt-get installs the package and its dependencies in a clean Debian 12"
check_eq "dpkg: tracemount $VERSION is installed" "install ok installed $VERSION" \
	"$(in_root dpkg-query -W -f "\${Status} \${Version}" tracemount)"
check_eq "the installed tracemount runs: --version" "tracemount" \
	"$(in_root tracemount --version 2>&1 | head -n 1 | awk '{ print $1 }')"
in_root dpkg -L tracemount >"$TM_TMP/files"
bad=
for f in /usr/bin/tracemount /usr/share/man/man1/tracemount.1.gz \
	/usr/share/doc/tracemount/copyright /usr/share/doc/tracemount/changelog.gz \
	/usr/share/doc/tracemount/README.md.gz /usr/share/doc/tracemount/examples/README.md \
	/usr/share/doc/tracemount/examples/fstab.example \
	/usr/share/doc/tracemount/examples/mnt-traces.mount; do
	grep -qx "$f" "$TM_TMP/files" && [ -f "$root$f" ] || bad="$bad $f"
done
for f in "$src"/doc/*.md; do
	f=/usr/share/doc/tracemount/$(basename "$f")
	grep -qxE "$f(\.gz)?" "$TM_TMP/files" || bad="$bad $f"
done
check_eq "the program, the manual page, doc/*.md and the examples are installed" "" "$bad"
check_eq "the package made /var/cache/tracemount, root's, 0700" "root:root 700 directory" \
	"$(stat -c '%U:%G %a %F' "$root/var/cache/tracemount" 2>&1)"
# mount -t fuse.tracemount finds no mount.fuse.tracemount and runs fuse3's mount.fuse (a link
# to mount.fuse3), which runs `tracemount SOURCE MOUNTPOINT -o OPTIONS` found on PATH.
check "fuse3 brought /sbin/mount.fuse, which mount runs for type fuse.tracemount" \
	test -x "$root/sbin/mount.fuse"

# --- The samples, mounted three ways --------------------------------------------------------
phase "the sample traces (scripts/make-samples) in /data/traces of the root"
SAMPLES_NO_BUILD=1 BUILD=$build "$src/scripts/make-samples" "$TM_TMP/samples" >/dev/null ||
	{ fail "scripts/make-samples"; finish; }
mkdir -p "$root/data/traces" "$root/mnt/traces" "$root/mnt/adhoc"
cp -a "$TM_TMP/samples/." "$root/data/traces/"
# Views of every format, their bytes as this build's `tracemount cat` gives them on the host.
VIEWS="program.byu/dump.txt lab/run3.byu.xz/convert/run3.din lab/bus.tr/cpu/1.txt
	thread_001.tt6/convert/thread_001.tt6e thread_001.tt6/plots/mix.svg
	x86/gcc.trace.gz/class/loads.txt arm/smp.tarmac/cpu/1.txt
	arm/tracer_0001.log/calls/profile.txt run2/regs/gpr.txt bb/run1.bb/blocks.txt"
mkdir -p "$TM_TMP/want"
for v in $VIEWS; do
	t=${v%/*}
	while [ ! -f "$TM_TMP/samples/$t" ]; do t=${t%/*}; done
	mkdir -p "$TM_TMP/want/$(dirname "$v")"
	(cd "$TM_TMP/samples" && "$TRACEMOUNT" cat --cache none "$t" "${v#"$t"/}") \
		>"$TM_TMP/want/$v" || fail "tracemount cat $t ${v#"$t"/}"
done

# check_mount HOW MNT: MNT (a path in the root) is a tracemount mount as it should be, and
# serves the views' bytes.
check_mount() {
	local how=$1 mnt=$2 line v bad=
	line=$(in_root findmnt -n -o FSTYPE,OPTIONS "$mnt")
	check_eq "$how: type fuse.tracemount" fuse.tracemount "${line%% *}"
	for o in ro nosuid nodev; do
		check "$how: mounted $o ($line)" grep -qE "(^| |,)$o(,|$)" <<<"$line"
	done
	for v in $VIEWS; do
		in_root cat "$mnt/$v" | cmp -s - "$TM_TMP/want/$v" || bad="$bad $v"
	done
	check_eq "$how: each view read in the root is tracemount cat's on the host" "" "$bad"
}
# unmount HOW MNT: umount MNT in the root; the daemon exits.
unmount() {
	local pid p
	check "$1: umount" in_root umount "$2"
	for _ in $(seq 1 100); do
		pid=
		for p in $(pgrep -x tracemount); do
			[ "$(readlink "/proc/$p/root")" = "$root" ] && pid=$p
		done
		[ -z "$pid" ] && break
		sleep 0.1
	done
	check_eq "$1: the daemon exits after umount" "" "$pid"
}

# 1. The installed fstab.example's line, as it is, in the root's /etc/fstab: mount /mnt/traces.
line=$(grep -v '^#' "$root/usr/share/doc/tracemount/examples/fstab.example" | grep .)
echo "$line" >>"$root/etc/fstab"
phase "fstab: $line"
if in_root mount /mnt/traces 2>"$TM_TMP/mount.err"; then
	check_mount "fstab line" /mnt/traces
	unmount "fstab line" /mnt/traces
else
	fail "mount /mnt/traces (fstab line): $(cat "$TM_TMP/mount.err")"
fi
n=$(find "$root/var/cache/tracemount" -type f | wc -l)
check "the fstab mount kept its index files in /var/cache/tracemount ($n files)" test "$n" -ge 10

# 2. mount -t fuse.tracemount SOURCE MNT -o ..., nosuid,nodev given.
phase "mount -t fuse.tracemount /data/traces /mnt/adhoc -o ro,nosuid,nodev,cache=..."
if in_root mount -t fuse.tracemount /data/traces /mnt/adhoc \
	-o ro,nosuid,nodev,cache=/var/cache/tracemount 2>"$TM_TMP/mount.err"; then
	check_mount "mount -t" /mnt/adhoc
	# The traces were indexed by the first mount: their index files are read, none refused.
	counts=$(index_counts "$root/mnt/adhoc")
	check "mount -t: the first mount's index files are read ($counts)" \
		grep -qE '^0 built, [1-9][0-9]* read from index files, 0 index files refused' <<<"$counts"
	unmount "mount -t" /mnt/adhoc
else
	fail "mount -t fuse.tracemount: $(cat "$TM_TMP/mount.err")"
fi

# 3. The installed mnt-traces.mount, as systemd mounts it: mount WHAT WHERE -t TYPE -o OPTIONS.
unit=$root/usr/share/doc/tracemount/examples/mnt-traces.mount
what=$(sed -n 's/^What=//p' "$unit")
where=$(sed -n 's/^Where=//p' "$unit")
type=$(sed -n 's/^Type=//p' "$unit")
opts=$(sed -n 's/^Options=//p' "$unit")
phase "systemd unit: mount $what $where -t $type -o $opts"
if in_root mount "$what" "$where" -t "$type" -o "$opts" 2>"$TM_TMP/mount.err"; then
	check_mount "systemd unit" "$where"
	unmount "systemd unit" "$where"
else
	fail "the systemd unit's mount: $(cat "$TM_TMP/mount.err")"
fi
check_eq "the index folder is still root's, 0700" "root:root 700" \
	"$(stat -c '%U:%G %a' "$root/var/cache/tracemount")"

# Purging the package takes the index files with their folder.
in_root apt-get purge -y -q tracemount >"$TM_TMP/apt.log" 2>&1 || cat "$TM_TMP/apt.log" >&2
check "apt-get purge removes /var/cache/tracemount and its index files" \
	test ! -e "$root/var/cache/tracemount"
phase "done"
finish
