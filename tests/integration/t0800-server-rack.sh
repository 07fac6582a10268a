#!/bin/sh
# Rperf::Rack on a real WEBrick server (Debian's ruby-rack and
# ruby-webrick) under rperf record, driven by curl: endpoint and status
# labels, the endpoints' shares against their known CPU cost (1:4),
# per-request profiles of slow requests and the bound on their directory,
# rperf snapshot on the running server, and SIGTERM writing the profile.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

command -v curl >/dev/null || skip_all "no curl"
inc=$(real_ruby_libs ruby-rack ruby-webrick) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
port=$(free_port)
server_pid=
stop_server() {
	kill_ours "$server_pid" rack_app
	[ -s "$TRASH/rackd.pid" ] && kill_ours "$(cat "$TRASH/rackd.pid")" rackup
	return 0
}
trap stop_server EXIT
url=http://127.0.0.1:$port

# Stop the server as an operator would, and wait for the profile.
stop_server_term() {
	kill -TERM "$server_pid" &&
	wait_for "! kill -0 $server_pid" 300
}
get() {
	curl -s -o /dev/null -w '%{http_code}\n' "$url$1"
}

# The server runs across the tests below (a test body is a subshell).
mkdir slow
: >slow/notes.txt
: >slow/other.pb.gz
SLOW=0.6 SLOW_DIR=$TRASH/slow KEEP=3 PORT=$port READY=$TRASH/ready \
	"$RPERF" record -o srv.pb.gz -- $inc "$FIXTURES/servers/rack_app.rb" >server.out 2>&1 &
server_pid=$!

test_expect_success 'a WEBrick app under rperf record: requests get their labels' '
	wait_for "test -s ready" 300 || { cat server.out; false; } &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		get /light/$i && get /heavy/$((i * 1000))
	done >codes &&
	test $(grep -c "^200$" codes) -eq 30 &&
	curl -s "$url/stats" >stats &&
	test "$(get /fail)" = 500 &&
	test "$(get /nothing/here)" = 404 &&
	ls -l slow >slow.before &&
	test_line_count 3 slow.before &&
	test "$(get "/slow?s=0.8")" = 200 &&
	ls slow | grep -c "Z-[0-9]*-[0-9]*\.pb\.gz$" >n && test "$(cat n)" -eq 1 &&
	"$RPERF" snapshot "$server_pid" >snap.out 2>&1 &&
	wait_for "ls srv.pb.gz.$server_pid.* " 50 &&
	for i in 1 2 3 4; do get "/slow?s=0.65"; done >slow.codes &&
	stop_server_term &&
	test_grep "server stopped" server.out &&
	test_grep "wrote .*srv.pb.gz" server.out
'

# What the heavy requests were billed beyond the light ones against the
# same excess by the thread clock in the app (/stats), within 4%: 15
# requests of each, and each request's own cost around the work (WEBrick
# and the middleware on its thread, a thread per request) is in the labels
# and not in the clocks, some 0.8 ms a request on a VM with dear page
# faults, which made the ratio of the totals read 4% off there.  Not
# against the nominal 1:4: on a loaded machine (a busy sibling
# hyperthread) the same loop's CPU time varies, and the clocks have been
# seen at 1:2.8.  Outside the GC, as in t0809: a GC another part of a
# request starts is in its labels and not in the clocks.
test_expect_success 'endpoint shares follow the endpoints CPU cost (1:4)' '
	light=$(tag_total_outside_gc srv.pb.gz "endpoint=GET /light/:id" l.folded) &&
	heavy=$(tag_total_outside_gc srv.pb.gz "endpoint=GET /heavy/:id" h.folded) &&
	cat stats &&
	test "$light" -gt 0 &&
	lc=$(awk "\$1 == \"light\" { print \$2 * 1e9 }" stats) &&
	hc=$(awk "\$1 == \"heavy\" { print \$2 * 1e9 }" stats) &&
	check_label_excess "$light" "$heavy" "$lc" "$hc" &&
	test_grep "light_work" l.folded &&
	test_grep ! "heavy_work" l.folded &&
	test_grep "heavy_work" h.folded &&
	test_grep ! "light_work" h.folded
'

test_expect_success 'status classes are labelled' '
	ok=$(tag_total srv.pb.gz "status=2xx") &&
	test "$ok" -gt 0 &&
	"$RPERF" report --format folded --tagfocus "status=5xx" srv.pb.gz >fail.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /fail" srv.pb.gz >fail2.folded &&
	test -s fail.folded &&
	test_cmp fail.folded fail2.folded &&
	"$RPERF" report --format folded --tagfocus "status=4xx" --tagfocus "endpoint=GET /nothing/here" srv.pb.gz >nf.folded &&
	test_grep "other_work" nf.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /light/:id" --tagignore "status=2xx" srv.pb.gz >bad.folded &&
	test_line_count 0 bad.folded
'

test_expect_success 'pprof -tags reads the same labels' '
	test -n "$GO" || { echo "no go: skipped"; exit 0; } &&
	"$GO" tool pprof -tags srv.pb.gz >tags 2>&1 &&
	test_grep "GET /heavy/:id" tags &&
	test_grep "GET /light/:id" tags &&
	test_grep "2xx" tags
'

test_expect_success 'slow requests got their files, fast ones did not; keep: bounds the directory' '
	ls slow >slow.after &&
	test_grep "^notes.txt$" slow.after &&
	test_grep "^other.pb.gz$" slow.after &&
	grep -E "^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9]+-[0-9]+\.pb\.gz$" slow.after >ours &&
	test_line_count 3 ours &&
	sort ours >ours.sorted && test_cmp ours.sorted ours &&
	sed "s/.*-0*\([0-9]*\)\.pb\.gz$/\1/" ours >seqs &&
	printf "3\n4\n5\n" >seqs.want && test_cmp seqs.want seqs
'

test_expect_success 'rperf report reads a slow request file: that request only' '
	f=slow/$(tail -n 1 ours) &&
	"$RPERF" report --format folded "$f" >one.folded &&
	test_grep "slow_work" one.folded &&
	test_grep ! "light_work|heavy_work" one.folded &&
	"$RPERF" report "$f" >one.txt &&
	test_grep "slow_work" one.txt &&
	test_grep "^Capture: +GET /slow, kind request, status 200, pid [0-9]+$" one.txt
'

test_expect_success 'rperf report --list lists the slow requests' '
	"$RPERF" report --list slow >list 2>list.err &&
	cat list &&
	test_grep "^3 profiles in .slow., slowest first$" list &&
	test $(grep -E -c " 200 +GET /slow +[0-9.]+ ms" list) -eq 3
'

test_expect_success 'rperf snapshot of the running server has the labels so far' '
	snap=$(ls srv.pb.gz.*.* | head -n 1) &&
	light=$(tag_total "$snap" "endpoint=GET /light/:id") &&
	test "$light" -gt 0
'

test_expect_success 'without rperf running the middleware passes requests through' '
	PORT=$port READY=$TRASH/ready2 "$RUBY" $inc -I"$TEST_SRCDIR/../lib" -e "
		module Rperf; def self.running? = false; end
		require \"rperf/rack\"
		app = Rperf::Rack.new(->(env) { [200, {}, [:ok]] })
		p app.call(\"REQUEST_METHOD\" => \"GET\", \"PATH_INFO\" => \"/x/1\")" >pass.out &&
	test_grep "^\[200, \{\}, \[:ok\]\]$" pass.out
'

# rackup -D daemonizes with Process.daemon: the parent ends inside it,
# in C, and the server runs on in a child made without Process._fork.
# The daemon takes the run over and writes the whole profile when it
# stops (the profile was lost before, silently, with status 0).
test_expect_success 'rackup -D: the daemonized server is profiled, saved when it stops' '
	dport=$(free_port) &&
	cat >daemon.ru <<-\EOF &&
	def daemon_work(n) = n.times.sum
	run ->(env) { daemon_work(100_000); [200, {"content-type" => "text/plain"}, ["ok\n"]] }
	EOF
	rackup=$(ls "$REAL_DEBS"/root/usr/share/rubygems-integration/all/gems/rack-*/bin/rackup) &&
	"$RPERF" record -o rackd.pb.gz -- $inc "$rackup" -D -P "$TRASH/rackd.pid" -s webrick \
		-o 127.0.0.1 -p "$dport" daemon.ru >rackd.out 2>&1 &&
	wait_for "curl -s -o /dev/null http://127.0.0.1:$dport/" 300 &&
	dpid=$(cat rackd.pid) &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		curl -s -o /dev/null -w "%{http_code}\n" "http://127.0.0.1:$dport/"
	done >dcodes &&
	test $(grep -c "^200$" dcodes) -eq 10 &&
	test ! -e rackd.pb.gz &&
	kill -TERM "$dpid" &&
	wait_for "! kill -0 $dpid" 300 &&
	"$RPERF" report --format folded --tagfocus pid=$dpid rackd.pb.gz >rackd.folded &&
	test_grep "daemon_work" rackd.folded &&
	"$RPERF" report --format folded --tagignore pid=$dpid rackd.pb.gz >rackp.folded &&
	test_grep "Rack::Server" rackp.folded
'

stop_server
test_done
