#!/bin/bash
# An open view keeps its promise while its trace changes: a reader streaming a whole view (one
# read at a time, with pauses, through the page cache and with O_DIRECT) while the trace is
# rewritten in place (with and without its modification time put back), appended to, cut,
# deleted, made unreadable or replaced by rename gets the old version's bytes to the end, or
# an error (EIO), never a copy cut short or mixed with the new bytes; the daemon logs each
# failed read. Deleted, unreadable and renamed-over traces leave the old bytes readable to the
# end (their descriptor still reads them), and fstat of the open view keeps working. After
# the change, a new open reads the new version, as `tracemount cat` gives it.
. "$(dirname "$0")/lib.sh"

src=$TM_TMP/src
mkdir -p "$src" "$TM_TMP/exp"

# stream FILE GO MODE: reads FILE whole in 64 KiB reads (MODE direct: with O_DIRECT); after a
# third of it, creates GO.started and waits for GO, then goes on 10 ms between reads; writes
# the bytes to GO.bytes and prints "ok SIZE", or "error STRERROR at OFFSET". fstat's size is
# checked at every read.
stream() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import mmap, os, sys, time
path, go, mode = sys.argv[1:4]
flags = os.O_RDONLY | (os.O_DIRECT if mode == "direct" else 0)
fd = os.open(path, flags)
size = os.fstat(fd).st_size
buf = mmap.mmap(-1, 65536)
out = open(go + ".bytes", "wb")
off, signalled = 0, False
try:
    while True:
        if not signalled and off >= size // 3:
            open(go + ".started", "w").close()
            while not os.path.exists(go):
                time.sleep(0.01)
            signalled = True
        n = os.preadv(fd, [buf], off)
        if os.fstat(fd).st_size != size:
            print("error fstat size changed at %d" % off)
            sys.exit()
        if n == 0:
            break
        out.write(buf[:n])
        off += n
        if signalled:
            time.sleep(0.01)
    print("ok %d" % off)
except OSError as e:
    print("error %s at %d" % (os.strerror(e.errno), off))
EOF
}

# change KIND FILE NEWFILE: changes trace FILE as KIND says, NEWFILE being other content of
# the same size.
change() {
	case $1 in
	inplace) cat "$3" >"$2" ;;
	inplace-mtime-kept) cp -p "$2" "$TM_TMP/stamp" && cat "$3" >"$2" && touch -r "$TM_TMP/stamp" "$2" ;;
	append) head -c 60000 "$3" >>"$2" ;;
	cut) truncate -s 60000 "$2" ;;
	deleted) rm "$2" ;;
	unreadable) chmod 000 "$2" ;;
	renamed-over) cp "$3" "$2.tmp" && mv "$2.tmp" "$2" ;;
	esac
}

KINDS="inplace inplace-mtime-kept append cut deleted unreadable renamed-over"
n=0
for kind in $KINDS; do
	for mode in cached direct; do
		for view in dump.txt raw; do
			n=$((n + 1))
			t=$kind-$mode-${view%.txt}.byu
			"$GEN_BYU" -n 100000 -s $n >"$src/$t"
			"$GEN_BYU" -n 100000 -s $((n + 100)) >"$TM_TMP/exp/$t.new"
			"$TRACEMOUNT" cat "$src/$t" $view >"$TM_TMP/exp/$t.old"
		done
	done
done

mount_tm "$src" -o cache=none
for kind in $KINDS; do
	for mode in cached direct; do
		for view in dump.txt raw; do
			t=$kind-$mode-${view%.txt}.byu
			go=$TM_TMP/go.$t
			stream "$TM_MNT/$t/$view" "$go" $mode >"$go.result" &
			reader=$!
			for _ in $(seq 1 400); do
				[ -e "$go.started" ] && break
				sleep 0.05
			done
			change "$kind" "$src/$t" "$TM_TMP/exp/$t.new"
			touch "$go"
			wait "$reader"
			result=$(cat "$go.result")
			what="$kind, $mode, $view"
			case $kind in
			deleted | unreadable | renamed-over)
				check_eq "$what: the open view reads the old bytes to its end" \
					"ok $(stat -c %s "$TM_TMP/exp/$t.old")" "$result"
				check "$what: and they are the old version's" \
					cmp -s "$go.bytes" "$TM_TMP/exp/$t.old"
				;;
			*)
				if [ "${result%% *}" = ok ]; then
					check "$what: a whole read is the old version" \
						cmp -s "$go.bytes" "$TM_TMP/exp/$t.old"
				else
					check_eq "$what: else EIO" "error Input/output error" "${result% at *}"
					check "$what: what came before the error is the old version's" \
						cmp -s -n "$(stat -c %s "$go.bytes")" "$go.bytes" \
						"$TM_TMP/exp/$t.old"
					check "$what: the failed read is logged" \
						grep -q "$t/$view: read at offset ${result##* }: Input/output error" \
						"$TM_TMP/daemon.log"
				fi
				;;
			esac
		done
	done
done

# A new open, once the kernel's attributes expire: the new version.
sleep 1.1
for kind in $KINDS; do
	t=$kind-cached-dump.byu
	case $kind in
	deleted) check "$kind: the trace is gone from the mount" test ! -e "$TM_MNT/$t" ;;
	unreadable) ;; # root reads it still; test_security covers other users
	*)
		"$TRACEMOUNT" cat "$src/$t" dump.txt >"$TM_TMP/exp/$t.now"
		check "$kind: a new open reads the new version" \
			cmp -s "$TM_MNT/$t/dump.txt" "$TM_TMP/exp/$t.now"
		check_eq "$kind: and stat gives its size" \
			"$(stat -c %s "$TM_TMP/exp/$t.now")" "$(stat -c %s "$TM_MNT/$t/dump.txt")"
		check "$kind: stats.json is tracemount cat's" cmp -s "$TM_MNT/$t/stats.json" \
			<("$TRACEMOUNT" cat "$src/$t" stats.json)
		;;
	esac
done
check "the daemon is alive" kill -0 "$TM_DAEMON_PID"
unmount_tm
finish
