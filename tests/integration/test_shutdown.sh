#!/bin/bash
# Graceful shutdown with readers in flight (tests/tools/stress, 8 threads) and index passes
# running: on SIGTERM and on SIGINT the daemon unmounts and exits with status 0 within
# seconds, the readers end (with errors, not hanging), and the folder mounts again at once;
# on a lazy unmount (fusermount3 -uz; a plain -u is refused while files are open, which is
# checked too) files held open go on reading the right bytes to their end, and the daemon
# exits with status 0 once they are closed. Under the sanitizers, a report would
# make the exit status non-zero.
. "$(dirname "$0")/lib.sh"

tm_seed
SRC=$TM_TMP/src
EXP=$TM_TMP/expected
mkdir -p "$SRC" "$EXP"
"$GEN_BYU" -n 200000 -s 1 >"$SRC/a.byu"
"$GEN_TT6" --format tt6 --records 100000 --seed 2 >"$SRC/b.tt6"
for s in 3 4 5 6; do # traces whose index passes run when the signal comes
	"$GEN_BYU" -n 3000000 -s "$s" >"$SRC/big$s.byu"
done
printf '%s\n' a.byu/dump.txt a.byu/raw b.tt6/dump.txt b.tt6/stats.json >"$TM_TMP/list"
cat_views "$SRC" "$TM_TMP/list" "$EXP"

# busy: starts readers in flight and index passes; sets READERS to their PIDs.
busy() {
	"$STRESS" "$TM_TMP/list" "$TM_MNT" "$EXP" 8 30 "$SEED" >"$TM_TMP/stress.out" 2>&1 &
	READERS=$!
	for s in 3 4 5 6; do
		stat "$TM_MNT/big$s.byu/dump.txt" >/dev/null 2>&1 &
		READERS="$READERS $!"
	done
	sleep 1
}

# readers_end SECONDS: the readers all end within SECONDS.
readers_end() {
	local i pid alive
	for i in $(seq 1 $(($1 * 10))); do
		alive=
		for pid in $READERS; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && return 0
		sleep 0.1
	done
	kill $READERS 2>/dev/null
	return 1
}

# A shell starts background jobs with SIGINT ignored, and libfuse keeps a signal that was
# ignored so: give the daemon SIGINT's default back, as a terminal's would have.
for sig in TERM INT; do
	TM_DAEMON_WRAP="env --default-signal=INT" mount_tm "$SRC"
	busy
	check "SIG$sig: the readers are reading" kill -0 ${READERS%% *}
	kill -s "$sig" "$TM_DAEMON_PID"
	wait_daemon 20
	check_eq "SIG$sig with readers in flight: the daemon exits with status 0" 0 "$?"
	TM_DAEMON_PID=
	check "SIG$sig: the readers end" readers_end 20
	check "SIG$sig: the folder is no longer mounted" test "$(mountpoint -q "$TM_MNT"; echo $?)" != 0
	check_eq "SIG$sig: no sanitizer report" "" \
		"$(grep -E 'Sanitizer|runtime error' "$TM_TMP/daemon.log")"
	mount_tm "$SRC"
	check "SIG$sig: it mounts again, and reads right" cmp -s "$TM_MNT/a.byu/dump.txt" \
		"$EXP/a.byu/dump.txt"
	unmount_tm
done

# A lazy unmount: files held open read on. (A reader opening new files after the detach
# would find the empty folder underneath, so these are opened before.)
mount_tm "$SRC"
exec 3<"$TM_MNT/a.byu/dump.txt" 4<"$TM_MNT/b.tt6/dump.txt"
dd bs=4096 count=1 status=none <&3 >"$TM_TMP/a.head"
dd bs=4096 count=1 status=none <&4 >"$TM_TMP/b.head"
check "fusermount3 -u with files open is refused" \
	test "$(fusermount3 -u "$TM_MNT" 2>/dev/null; echo $?)" != 0
fusermount3 -uz "$TM_MNT"
check "fusermount3 -uz: detached at once" test "$(mountpoint -q "$TM_MNT"; echo $?)" != 0
check "fusermount3 -uz: the daemon serves the open files" kill -0 "$TM_DAEMON_PID"
cat "$TM_TMP/a.head" - <&3 >"$TM_TMP/a.all"
cat "$TM_TMP/b.head" - <&4 >"$TM_TMP/b.all"
exec 3<&- 4<&-
check "fusermount3 -uz: an open file reads on to its end, every byte right" \
	cmp -s "$TM_TMP/a.all" "$EXP/a.byu/dump.txt"
check "fusermount3 -uz: and another" cmp -s "$TM_TMP/b.all" "$EXP/b.tt6/dump.txt"
wait_daemon 20
rc=$?
[ "$rc" = 0 ] || tail -20 "$TM_TMP/daemon.log" >&2 # what the daemon said, for the failure
check_eq "fusermount3 -uz: once they close, the daemon exits with status 0" 0 "$rc"
TM_DAEMON_PID=
check_eq "fusermount3 -uz: no sanitizer report" "" \
	"$(grep -E 'Sanitizer|runtime error' "$TM_TMP/daemon.log")"
finish
