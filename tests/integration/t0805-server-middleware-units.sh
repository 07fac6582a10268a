#!/bin/sh
# Rperf::Rack's decisions, checked without a server (middleware_units.rb
# under rperf record): endpoint names from the path, Rails' and Sinatra's
# env keys and a label: proc, the bound on path-derived names, the options
# it refuses, exceptions passing through labelled 5xx, an unwritable slow
# directory; then allocation profiles (-m alloc), where the endpoint label
# comes from the path, and a process not profiled, where it passes through.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'the middleware decides as documented' '
	"$RPERF" record -o u.pb.gz "$FIXTURES/servers/middleware_units.rb" >out 2>err &&
	cat out &&
	test_grep "^all passed$" out &&
	test_grep ! "^FAIL" out
'

test_expect_success 'its requests are labelled in the profile, a raising one 5xx' '
	"$RPERF" report --format folded --tagfocus "endpoint=POST /units/work/:id" \
		--tagfocus status=2xx u.pb.gz >work.folded &&
	test_grep "Object#spin" work.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /units/fail/:id" \
		--tagfocus status=5xx u.pb.gz >fail.folded &&
	test_grep "Object#spin" fail.folded &&
	# one request each, of 10-30 ms: only the order of their costs (1:2)
	# is safe to check; t0800 checks shares against clocks
	w=$(folded_sum work.folded) && f=$(folded_sum fail.folded) &&
	echo "work $w fail $f" &&
	num_ge "$f" "$w"
'

cat >alloc_app.rb <<'RUBY'
require "rperf/rack"
app = Rperf::Rack.new(lambda { |env|
  a = []
  (env["PATH_INFO"] == "/big/1" ? 200_000 : 50_000).times { |i| a << "s#{i}" }
  [200, {}, ["ok"]]
})
3.times { |i| app.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/big/#{i + 1}", "SCRIPT_NAME" => "") }
app.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/small", "SCRIPT_NAME" => "")
puts Rperf.labels.inspect
RUBY

test_expect_success 'allocation profiles: the path-derived endpoint labels allocations' '
	"$RPERF" record -m alloc -o a.pb.gz alloc_app.rb >out &&
	test_grep "^\{\}$" out &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /big/:id" a.pb.gz >big.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /small" a.pb.gz >small.folded &&
	test -s big.folded && test -s small.folded &&
	"$RPERF" report --format folded --tagfocus "status=2xx" a.pb.gz >st.folded &&
	test_line_count 0 st.folded
'

test_expect_success 'with --alloc next to the time: allocations by endpoint, time by endpoint and status' '
	"$RPERF" record --alloc -o ca.pb.gz alloc_app.rb >out &&
	test_grep "^\{\}$" out &&
	"$RPERF" report --sample-index alloc_objects --format folded \
		--tagfocus "endpoint=GET /big/:id" ca.pb.gz >big.folded &&
	"$RPERF" report --sample-index alloc_objects --format folded ca.pb.gz >all.folded &&
	num_ge "$(folded_sum big.folded)" "$(( $(folded_sum all.folded) / 2 ))" &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /big/:id" \
		--tagfocus status=2xx ca.pb.gz >time.folded &&
	test -s time.folded
'

test_expect_success 'outside a profiled process the middleware passes through' '
	"$RPERF" record -q --no-inherit -o nf.folded -e "
		pid = fork do
			require \"rperf/rack\"
			r = Rperf::Rack.new(->(env) { [200, {}, [Rperf.running?.to_s]] }).call(
				\"REQUEST_METHOD\" => \"GET\", \"PATH_INFO\" => \"/x/1\", \"SCRIPT_NAME\" => \"\")
			puts r.inspect
		end
		Process.wait(pid)" >out &&
	test_grep "^\[200, \{\}, \[\"false\"\]\]$" out
'

# At 5 kHz the sample buffer is handed over some thirty times in the run;
# a request that ended while the samples it took were all in a buffer
# being folded kept them unlabelled (0-2.6 ms a run here, a whole request's
# work in a server).
test_expect_success 'every sample of every request is labelled, across buffer hand-overs' '
	"$RPERF" record -q -F 5000 -o many.pb.gz "$FIXTURES/servers/many_requests.rb" >out &&
	test_grep "^requests done$" out &&
	"$RPERF" report --format folded many.pb.gz >all.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /users/:id" many.pb.gz >lab.folded &&
	all=$(folded_sum all.folded "Object#work") && lab=$(folded_sum lab.folded "Object#work") &&
	echo "work: all $all labelled $lab" &&
	num_ge "$all" 1000000000 &&
	test "$all" = "$lab"
'

test_done
