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
	[ -n "$master_pid" ] && kill -KILL "$master_pid" 2>/dev/null
	for p in $(sed -n "s/^start //p" events 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	master_pid=
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

test_expect_success 'the master forks workers; one killed mid-run is replaced' '
	: >events &&
	WORKERS=3 EVENTS=$TRASH/events PORT=$port READY=$TRASH/ready \
		"$RPERF" record -o pf.pb.gz -- $inc "$FIXTURES/servers/prefork_server.rb" \
		>server.out 2>&1 &
	master_pid=$!
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
	kill -TERM "$master_pid" && wait "$master_pid" && master_pid= &&
	test_grep "master stopped" server.out &&
	cat events
'

test_expect_success 'every worker that exited is in the merged profile, with its pid' '
	"$RPERF" report --format folded pf.pb.gz >all.folded &&
	test_grep "boot_work" all.folded &&
	for p in $(started); do
		test "$p" = "$victim2" && continue
		"$RPERF" report --format folded --tagfocus "pid=$p" pf.pb.gz >pid.folded &&
		test_grep "boot_work" pid.folded || { echo "worker $p not in the profile"; exit 1; }
	done
'

test_expect_success 'the pids that answered requests have their requests labelled' '
	sort -u pids.1 pids.2 >answered &&
	test $(wc -l <answered) -ge 2 &&
	while read -r p; do
		test "$p" = "$victim2" && continue
		"$RPERF" report --format folded --tagfocus "pid=$p" \
			--tagfocus "endpoint=GET /work" pf.pb.gz >req.folded &&
		test_grep "request_work" req.folded || { echo "requests of $p not labelled"; exit 1; }
	done <answered
'

test_expect_success 'the master itself has no request samples' '
	"$RPERF" report --format folded --tagfocus "pid=$(head -n 1 ready)" pf.pb.gz >master.folded || true
	test_grep ! "request_work" master.folded
'

stop_server
test_done
