#!/bin/sh
# Rperf::Rack in front of a real Sinatra app (Debian's ruby-sinatra and
# its dependencies) on WEBrick: the endpoint label is Sinatra's route
# pattern ("GET /users/:id", "GET /posts/:slug"), put on all the samples of
# a request although Sinatra knows the route only once it has routed.
# The work of each route is billed as its thread clocks say (the nominal
# 1:2 is not what a loaded machine's clocks say).
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

command -v curl >/dev/null || skip_all "no curl"
inc=$(real_ruby_libs ruby-rack ruby-webrick ruby-sinatra ruby-mustermann \
	ruby-rack-protection ruby-tilt ruby-ruby2-keywords) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
port=$(free_port)
server_pid=
stop_server() {
	kill_ours "$server_pid" sinatra_app
}
trap stop_server EXIT
url=http://127.0.0.1:$port

# The server runs across the tests below (a test body is a subshell).
PORT=$port READY=$TRASH/ready "$RPERF" record -o sin.pb.gz -- $inc \
	"$FIXTURES/servers/sinatra_app.rb" >server.out 2>&1 &
server_pid=$!

test_expect_success 'a Sinatra app serves its routes under rperf record' '
	wait_for "test -s ready" 300 || { cat server.out; false; } &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
		curl -s "$url/users/$i$i" && curl -s "$url/posts/post-number-$i"
	done >bodies &&
	test_grep "^user 1212$" bodies &&
	test_grep "^post post-number-12$" bodies &&
	test "$(curl -s -o /dev/null -w "%{http_code}" "$url/boom")" = 503 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" "$url/no/such/7")" = 404 &&
	kill -TERM "$server_pid" &&
	wait_for "! kill -0 $server_pid" 300 &&
	test_grep "server stopped" server.out
'

test_expect_success 'endpoints are Sinatra routes, with the cost of each' '
	"$RPERF" report --format folded --tagfocus "endpoint=GET /users/:id" sin.pb.gz >users.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /posts/:slug" sin.pb.gz >posts.folded &&
	test_grep "App#user_work" users.folded &&
	test_grep ! "App#post_work" users.folded &&
	test_grep "App#post_work" posts.folded &&
	# (the work only, against the clocks around it in the fixture; 10%.
	# Before the end of a WEBrick connection thread billed its last
	# part with the labels of the stack it went to, a CI run billed
	# the users route 8.6% under: 9.6 ms of its work unlabelled.  Then,
	# with that part billed to the stack seen last, the work each
	# request did last, 3-8% over here and 11% in a CI run under ASan;
	# billed to the first sample of the thread, 0-5% over, most within
	# 3%)
	users=$(folded_sum users.folded "App#user_work") &&
	posts=$(folded_sum posts.folded "App#post_work") &&
	cu=$(awk "/^cpu users/ { printf \"%.0f\", \$3 * 1e9 }" server.out) &&
	cp=$(awk "/^cpu users/ { printf \"%.0f\", \$5 * 1e9 }" server.out) &&
	echo "billed users $users posts $posts; clocks users $cu posts $cp" &&
	within_pct "$users" "$cu" 10 &&
	within_pct "$posts" "$cp" 10
'

test_expect_success 'no endpoint label names a raw path; halt and 404 are labelled' '
	"$RPERF" report --format folded --tagfocus "endpoint=GET /posts/post-number-1" sin.pb.gz >raw.folded &&
	test_line_count 0 raw.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /boom" --tagfocus "status=5xx" sin.pb.gz >boom.folded &&
	test -s boom.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /no/such/:id" --tagfocus "status=4xx" sin.pb.gz >nf.folded &&
	test -s nf.folded
'

stop_server
test_done
