#!/bin/sh
# Rperf::Rack as the first middleware of a real Rails application
# (Debian's railties and actionpack 6.1) on WEBrick, under rperf record,
# driven by curl and stopped with SIGINT: the endpoint labels are the
# Rails routes' patterns (Rails 6.1 does not say which route matched; the
# middleware finds it in the route set), their shares follow the
# routes' CPU cost (1:4) as the thread clocks measured it, and requests
# that Rails' error pages answered keep the method and path the client
# sent.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

command -v curl >/dev/null || skip_all "no curl"
inc=$(real_ruby_libs ruby-railties ruby-actionpack ruby-actionview ruby-activesupport \
	ruby-rack ruby-webrick ruby-rack-test ruby-erubi ruby-builder ruby-i18n ruby-tzinfo \
	ruby-concurrent ruby-zeitwerk ruby-method-source ruby-thor rake ruby-minitest) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
port=$(free_port)
server_pid=
stop_server() {
	kill_ours "$server_pid" rails_app
}
trap stop_server EXIT
url=http://127.0.0.1:$port

get() {
	curl -s -o /dev/null -w '%{http_code}\n' "$@"
}

PORT=$port READY=$TRASH/ready \
	"$RPERF" record -o rails.pb.gz -- $inc "$FIXTURES/servers/rails_app.rb" >server.out 2>&1 &
server_pid=$!

test_expect_success 'a Rails app under rperf record serves its routes' '
	wait_for "test -s ready" 600 || { cat server.out; false; } &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		get "$url/users/$i" && get "$url/reports/$((2000 + i))"
	done >codes &&
	test $(grep -c "^200$" codes) -eq 30 &&
	curl -s "$url/stats" >stats &&
	test "$(get -d "" "$url/reports/1999")" = 500 &&
	test "$(get -d "" "$url/nothing/42")" = 404 &&
	test "$(get -I "$url/users/7")" = 200 &&
	kill -INT "$server_pid" &&
	wait_for "! kill -0 $server_pid" 300 &&
	test_grep "server stopped" server.out &&
	test_grep "wrote .*rails.pb.gz" server.out
'

test_expect_success 'the endpoint labels are the routes patterns' '
	light=$(tag_total rails.pb.gz "endpoint=GET /users/:id" u.folded) &&
	heavy=$(tag_total rails.pb.gz "endpoint=GET /reports/:year" r.folded) &&
	test "$light" -gt 0 && test "$heavy" -gt 0 &&
	test_grep "UsersController#user_work" u.folded &&
	test_grep ! "report_work" u.folded &&
	test_grep "ReportsController#report_work" r.folded &&
	test_grep ! "user_work" r.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET users#show" rails.pb.gz >by_action.folded &&
	test_line_count 0 by_action.folded
'

# As in t0800, as many GETs of each route: what the heavy route was
# billed beyond the light one against the same excess of the thread
# clocks (/stats), within 4%.  The clocks are of the whole requests below
# the middleware, since Rails' own part of a request (1-2 ms, near 5% of
# the light route's work) is labelled too; what runs around a request
# outside them cancels out in the excess (the ratio of the totals read
# 4.41% off once under ASan, the light route billed 13 ms over its
# clock; the excess was 1.6% off).
test_expect_success 'endpoint shares follow the routes CPU cost (1:4)' '
	light=$(tag_total rails.pb.gz "endpoint=GET /users/:id") &&
	heavy=$(tag_total rails.pb.gz "endpoint=GET /reports/:year") &&
	cat stats &&
	uc=$(awk "\$1 == \"users_request\" { print \$2 * 1e9 }" stats) &&
	rc=$(awk "\$1 == \"reports_request\" { print \$2 * 1e9 }" stats) &&
	check_label_excess "$light" "$heavy" "$uc" "$rc"
'

test_expect_success 'HEAD is labelled by the GET route it was routed to' '
	head=$(tag_total rails.pb.gz "endpoint=HEAD /users/:id" head.folded) &&
	test "$head" -gt 0 &&
	test_grep "UsersController#user_work" head.folded
'

# Rails' ShowExceptions answers with its error page as "GET /500" or
# "GET /404": the labels keep the request the client made.
test_expect_success 'error pages keep the method and the path of the request' '
	fail=$(tag_total rails.pb.gz "endpoint=POST /reports/:year" fail.folded) &&
	test "$fail" -gt 0 &&
	test_grep "ReportsController#create" fail.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=POST /reports/:year" --tagignore "status=5xx" rails.pb.gz >bad.folded &&
	test_line_count 0 bad.folded &&
	test_grep "error_page" fail.folded &&
	nf=$(tag_total rails.pb.gz "endpoint=POST /nothing/:id" nf.folded) &&
	test "$nf" -gt 0 &&
	test_grep "error_page" nf.folded &&
	"$RPERF" report --format folded --tagfocus "status=4xx" rails.pb.gz >4xx.folded &&
	test_cmp nf.folded 4xx.folded &&
	for bad in "GET /:id" "GET reports#create" "GET /reports/:year"; do
		"$RPERF" report --format folded --tagfocus "endpoint=$bad" --tagfocus "status=5xx" rails.pb.gz
		"$RPERF" report --format folded --tagfocus "endpoint=$bad" --tagfocus "status=4xx" rails.pb.gz
	done >wrong.folded &&
	test_line_count 0 wrong.folded
'

stop_server
test_done
