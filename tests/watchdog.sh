#!/bin/bash
# watchdog.sh LIMIT COMMAND...: run COMMAND in its own process group; if
# it is still running after LIMIT seconds, print what each of its
# processes is doing (state, kernel wait channel, and the threads'
# stacks when gdb is installed), stop the group and exit 124, as
# timeout(1) does.  A test that hangs in CI then says where in its log.
limit=$1
shift

# The test starts with the default actions for the signals timeout(1)
# catches (a shell started in the background ignores SIGINT, and cannot
# undo that itself), as it did under timeout.
set -m
env --default-signal=INT,QUIT,HUP,TERM,ALRM "$@" &
test_pid=$!
sleep "$limit" &
timer_pid=$!
set +m

wait -n -p ended "$test_pid" "$timer_pid"
status=$?
if [ "$ended" = "$test_pid" ]; then
	kill "$timer_pid" 2>/dev/null
	exit "$status"
fi

echo "watchdog: '$*' still running after $limit s; its processes:"
group() { ps -e -o pgid=,"$1" | awk -v g="$test_pid" '$1 == g { sub(/^ *[0-9]+ /, ""); print }'; }
ps -o pid,ppid,stat,etimes,wchan:32,args -p 1 | head -n 1
group pid,ppid,stat,etimes,wchan:32,args
for pid in $(group pid); do
	case $(readlink "/proc/$pid/exe" 2>/dev/null) in
	*/rperf | */ruby) ;;
	*) continue ;;
	esac
	echo "watchdog: pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	if command -v gdb >/dev/null 2>&1; then
		timeout 60 gdb -p "$pid" -batch -nx \
			-ex 'set print frame-arguments none' \
			-ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)'
	else
		for task in /proc/"$pid"/task/*; do
			echo "  task ${task##*/}: $(cat "$task/wchan" 2>/dev/null)" \
				"syscall $(cut -d' ' -f1 "$task/syscall" 2>/dev/null)"
		done
	fi
done
kill -TERM -- "-$test_pid" 2>/dev/null
sleep 10
kill -KILL -- "-$test_pid" 2>/dev/null
wait "$test_pid" 2>/dev/null
exit 124
