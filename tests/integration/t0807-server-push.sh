#!/bin/sh
# A WEBrick server with Rperf::Rack under rperf record --push: while it
# serves, each interval reaches the (stand-in) Pyroscope ingest endpoint
# with the endpoint labels, so Pyroscope can split by them; SIGTERM sends
# the last interval, and the intervals add up to the profile written.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"
. "$TEST_SRCDIR/push-lib.sh"

command -v curl >/dev/null || skip_all "no curl"
inc=$(real_ruby_libs ruby-rack ruby-webrick) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
port=$(free_port)
server_pid=
stop_all() {
	kill_ours "$server_pid" rack_app
	receiver_stop
}
trap stop_all EXIT
url=http://127.0.0.1:$port

receiver_start r || skip_all "the ingest receiver did not start"
PORT=$port READY=$TRASH/ready "$RPERF" record -o whole.pb.gz --push "$URL" \
	--push-interval 1 --app-name shop -- $inc "$FIXTURES/servers/rack_app.rb" >server.out 2>&1 &
server_pid=$!

test_expect_success 'requests for about 3 s, then SIGTERM' '
	wait_for "test -s ready" 300 || { cat server.out; false; } &&
	end=$(($(date +%s) + 3)) &&
	while [ "$(date +%s)" -lt "$end" ]; do
		curl -sf -o /dev/null "$url/light/1" &&
		curl -sf -o /dev/null "$url/heavy/2" || exit 1
	done &&
	kill -TERM "$server_pid" &&
	wait_for "! kill -0 $server_pid" 300 &&
	test_grep "server stopped" server.out
'

test_expect_success 'the intervals reached the receiver with the endpoint labels' '
	receiver_stop &&
	n=$(ls r/*.profile | wc -l) &&
	echo "$n intervals" &&
	test "$n" -ge 2 &&
	test "$(param r/1 name)" = "shop.cpu{}" &&
	sum=0 && labelled=0 &&
	for f in r/*.profile; do
		p=${f%.profile} &&
		cp "$f" "$p.pb.gz" &&
		"$RPERF" report --format folded "$p.pb.gz" >"$p.folded" &&
		sum=$((sum + $(folded_sum "$p.folded"))) &&
		"$RPERF" report --format folded --tagfocus "endpoint=GET /heavy/:id" "$p.pb.gz" >"$p.heavy" &&
		if test -s "$p.heavy"; then labelled=$((labelled + 1)); fi || exit 1
	done &&
	echo "$labelled intervals with GET /heavy/:id" &&
	test "$labelled" -ge 2 &&
	"$RPERF" report --format folded whole.pb.gz >whole.folded &&
	whole=$(folded_sum whole.folded) &&
	echo "intervals $sum whole $whole" &&
	test "$sum" -eq "$whole"
'

test_done
