#!/bin/sh
# rperf snapshot signals only a process that will take its signal as a
# request: the control signal's default action terminates, so anything
# else (not rperf, another --control-signal or none, process 1, another
# user's process, a process it cannot look at) is refused with status 1,
# and the process lives on.
. "$TEST_SRCDIR/test-lib.sh"

# Start rperf record (with extra rperf options "$@") running for 20 s in
# the background, optionally under $WRAP; its pid in $pid, the record
# process in $rpid.
# (A script file, not -e: ruby refuses -e when the uids differ.)
start_record() {
	rm -f pid
	$WRAP "$RPERF" record -o r.data "$@" run.rb >pid 2>err &
	rpid=$!
	for i in $(seq 100); do
		test -s pid && break; sleep 0.1
	done
	pid=$(cat pid)
	test -n "$pid"
	sleep 0.3	# past ruby's start-up, where the handler is set
}

# Stop the background run started by start_record.
stop_record() {
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	return 0
}

cat >run.rb <<\EOF
$stdout.sync = true
puts Process.pid
t = Time.now
sleep 0.05 while Time.now - t < 20
EOF

test_expect_success 'a process that is not rperf is refused and lives on' '
	sleep 30 &
	spid=$! &&
	test_expect_code 1 "$RPERF" snapshot "$spid" 2>err &&
	test_grep "^rperf snapshot: process $spid is not running under rperf$" err &&
	sleep 0.2 && kill -0 "$spid" &&
	kill "$spid"
'

test_expect_success 'a run with --control-signal false is refused and lives on' '
	start_record --control-signal false &&
	test_expect_code 1 "$RPERF" snapshot "$pid" 2>out &&
	test_grep "^rperf snapshot: process $pid does not listen to signal [0-9]+ \(started with --control-signal false or another signal\?\)$" out &&
	sleep 0.3 && kill -0 "$pid" &&
	! ls r.data.$pid.* 2>/dev/null &&
	stop_record
'

test_expect_success 'a run listening to another signal: refused with the default, taken with its own' '
	start_record --control-signal 45 &&
	test_expect_code 1 "$RPERF" snapshot "$pid" 2>out &&
	test_grep "does not listen to signal" out &&
	sleep 0.3 && kill -0 "$pid" &&
	"$RPERF" snapshot --control-signal 45 "$pid" &&
	for i in $(seq 50); do test -s "r.data.$pid.1" && break; sleep 0.1; done &&
	test -s "r.data.$pid.1" &&
	stop_record
'

test_expect_success 'process 1 is never signalled' '
	test_expect_code 1 "$RPERF" snapshot 1 2>err &&
	test_grep "^rperf snapshot: refusing to signal process 1 \(init\)$" err
'

if test_other_user && command -v setpriv >/dev/null; then
	test_expect_success 'a run of another user is refused and lives on' '
		# Only the real uid changes: the other user could not read
		# the Ruby under the build directory, and that is enough to
		# make the process not wholly ours.
		WRAP="setpriv --ruid $OTHER_USER" start_record &&
		grep "^Uid:	[0-9]*	0" /proc/$pid/status &&
		test_expect_code 1 "$RPERF" snapshot "$pid" 2>out &&
		test_grep "^rperf snapshot: process $pid belongs to another user \(uid [0-9]+\)$" out &&
		sleep 0.3 && kill -0 "$pid" &&
		! ls r.data.$pid.* 2>/dev/null &&
		stop_record
	'

	test_expect_success 'a process whose executable cannot be read is refused, not guessed at' '
		# Another group makes it opaque to a root without
		# CAP_SYS_PTRACE, as a non-dumpable process is to a user.
		setpriv --regid "$OTHER_USER" --clear-groups sleep 30 &
		spid=$! &&
		sleep 0.2 &&
		test_expect_code 1 setpriv --bounding-set -sys_ptrace \
			"$RPERF" snapshot "$spid" 2>err &&
		test_grep "^rperf snapshot: cannot tell whether process $spid runs rperf: cannot read ./proc/$spid/exe.: Permission denied$" err &&
		sleep 0.2 && kill -0 "$spid" &&
		kill "$spid"
	'
else
	test_skip 'processes of another user' 'needs root and setpriv to make a second user'
fi

test_done
