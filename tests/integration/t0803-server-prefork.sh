#!/bin/sh
# A preforking Rack server (the fixture's own, built as Puma's cluster
# mode and Unicorn are: workers forked after boot accept on the master's
# socket, and the master forks a new worker for one that dies) under rperf
# record: every worker is profiled and merged into the master's profile
# with its pid label, the workers started in place of dead ones included;
# Rperf::Rack labels reach the merged profile.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

command -v curl >/dev/null || skip_all "no curl"
inc=$(real_ruby_libs ruby-rack) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
port=$(free_port)
master_pid=
stop_server() {
	kill_ours "$master_pid" prefork_server
	for p in $(sed -n "s/^start //p" events 2>/dev/null); do
		kill_ours "$p" prefork_server
	done
}
trap stop_server EXIT
url=http://127.0.0.1:$port

# N requests, 4 at a time so that more than one worker answers.
requests() {
	i=0
	while [ $i -lt "$1" ]; do
		curls=
		for j in 1 2 3 4; do
			curl -s "$url/work" &
			curls="$curls $!"
		done
		wait $curls
		i=$((i + 4))
	done
}
# The pids the master started, in order.
started() { sed -n "s/^start //p" events; }

# The server runs across the tests below (a test body is a subshell).
: >events
WORKERS=3 EVENTS=$TRASH/events PORT=$port READY=$TRASH/ready \
	"$RPERF" record -o pf.pb.gz -- $inc "$FIXTURES/servers/prefork_server.rb" \
	>server.out 2>&1 &
master_pid=$!

# Kill one worker with SIGTERM (it exits as a worker told to stop does and
# writes its profile), another with SIGKILL (its samples are lost with it);
# the master replaces both.
test_expect_success 'the master forks workers; the ones killed mid-run are replaced' '
	wait_for "test -s ready" 300 || { cat server.out; false; } &&
	requests 24 >pids.1 &&
	victim=$(started | head -n 1) &&
	kill -TERM "$victim" &&
	wait_for "grep -q \"^exit $victim \" events" 100 &&
	wait_for "test \$(started | wc -l) -eq 4" 100 &&
	victim2=$(started | sed -n 2p) &&
	kill -KILL "$victim2" &&
	wait_for "grep -q \"^exit $victim2 \" events" 100 &&
	wait_for "test \$(started | wc -l) -eq 5" 100 &&
	requests 24 >pids.2 &&
	kill -TERM "$master_pid" &&
	wait_for "! kill -0 $master_pid" 300 &&
	test_grep "master stopped" server.out &&
	test_grep "wrote .pf.pb.gz" server.out &&
	cat events server.out
'

test_expect_success 'every worker that exited is in the merged profile, with its pid' '
	"$RPERF" report --format folded pf.pb.gz >all.folded &&
	test_grep "boot_work" all.folded &&
	victim2=$(started | sed -n 2p) &&
	for p in $(started); do
		test "$p" = "$victim2" && continue
		"$RPERF" report --format folded --tagfocus "pid=$p" pf.pb.gz >pid.folded &&
		test_grep "boot_work" pid.folded || { echo "worker $p not in the profile"; exit 1; }
	done
'

test_expect_success 'the pids that answered requests have their requests labelled' '
	victim2=$(started | sed -n 2p) &&
	sort -u pids.1 pids.2 >answered &&
	test $(wc -l <answered) -ge 2 &&
	while read -r p; do
		test "$p" = "$victim2" && continue
		"$RPERF" report --format folded --tagfocus "pid=$p" \
			--tagfocus "endpoint=GET /work" pf.pb.gz >req.folded &&
		test_grep "request_work" req.folded || { echo "requests of $p not labelled"; exit 1; }
	done <answered
'

test_expect_success 'the samples of no worker are the master'"'"'s: boot, no requests' '
	args= &&
	for p in $(started); do args="$args --tagignore pid=$p"; done &&
	"$RPERF" report --format folded $args pf.pb.gz >master.folded &&
	test -s master.folded &&
	test_grep "Kernel#require" master.folded &&
	test_grep ! "request_work|boot_work" master.folded &&
	"$RPERF" report pf.pb.gz | sed -n "/^Labels:/,\$p" >labels &&
	cat labels &&
	test $(grep -c -E "^ +(pid +)?[0-9]+ " labels) -ge 4
'

stop_server
test_done
