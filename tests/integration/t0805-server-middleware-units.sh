#!/bin/sh
# Rperf::Rack's decisions, checked without a server (middleware_units.rb
# under rperf record): endpoint names from the path, Rails' and Sinatra's
# env keys and a label: proc, the bound on path-derived names, the options
# it refuses, exceptions passing through labelled 5xx, an unwritable slow
# directory; then allocation profiles (-m alloc), where the endpoint label
# comes from the path, and a process not profiled, where it passes through;
# with --timeline, requests and jobs as marks; where the helpers are on
# $LOAD_PATH.
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

cat >marks_app.rb <<'RUBY'
require "rperf/rack"
app = Rperf::Rack.new(lambda { |env|
  raise "boom" if env["PATH_INFO"].start_with?("/fail")

  sleep 0.03
  [env["PATH_INFO"].start_with?("/gone") ? 404 : 200, {}, ["ok"]]
})
get = ->(path) { app.call("REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "") }
get.call("/users/1")
Thread.new { get.call("/gone/2") }.join
begin
  get.call("/fail/3")
rescue RuntimeError
  nil
end
Rperf::JobCapture.run(Rperf::SlowLog.new("test"), "HardJob", "default") { sleep 0.02 }
puts "done"
RUBY

test_expect_success '--timeline: each request a mark named by its endpoint and status, each job by its class' '
	"$RPERF" record -q -m wall --timeline -o marks.pb.gz marks_app.rb >out &&
	test_grep "^done$" out &&
	"$RPERF" report -o marks.speedscope.json marks.pb.gz &&
	for m in "GET /users/:id 200" "GET /gone/:id 404" "GET /fail/:id 500" HardJob; do
		test_grep "\"name\":\"$m\"" marks.speedscope.json || return 1
	done &&
	test_grep ! "\"name\":\"request\"" marks.speedscope.json &&
	if test -z "$GO"; then echo "no go: the times are not checked"; exit 0; fi &&
	"$GO" tool pprof -comments marks.pb.gz >comments 2>&1 &&
	grep "^mark: " comments >marks && cat marks &&
	test_line_count 4 marks &&
	# the request on a thread of its own is on that thread; each lasts
	# as long as it slept, or less for the one that raised at once
	test "$(awk "/ 404$/ { print \$3 }" marks)" != "$(awk "/ 200$/ { print \$3 }" marks)" &&
	awk "/ (200|404)$/ { d = \$5 - \$4; if (d < 30e6 || d > 300e6) { print; exit 1 } }
		/ HardJob$/ { d = \$5 - \$4; if (d < 20e6 || d > 300e6) { print; exit 1 } }
		/ 500$/ { d = \$5 - \$4; if (d > 30e6) { print; exit 1 } }" marks
'

test_expect_success 'without --timeline no request or job is a mark' '
	"$RPERF" record -q -m wall -o nomarks.pb.gz marks_app.rb >out &&
	test_grep "^done$" out &&
	if test -z "$GO"; then echo "no go: skipped"; exit 0; fi &&
	"$GO" tool pprof -comments nomarks.pb.gz >comments 2>&1 &&
	test_grep ! "^mark: " comments
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

cat >load_path.rb <<'RUBY'
require "rperf/rack"
mine = $LOAD_PATH.index { |d| File.exist?(File.join(d, "rperf", "rack.rb")) }
where = mine == $LOAD_PATH.size - 1 ? "last" : "at #{mine.inspect} of #{$LOAD_PATH.size}"
puts "helpers #{where}; first #{$LOAD_PATH.first}"
RUBY

# The helpers' directory is last on $LOAD_PATH when the script runs (no
# require looks there first, no file of the application's is hidden),
# and -I's directories stay first; -rrperf/rack still finds it.
test_expect_success 'the helpers are found last on $LOAD_PATH, after -I and Ruby'"'"'s own' '
	mkdir -p inc &&
	"$RPERF" record -q -o lp.pb.gz -- -Iinc load_path.rb >out &&
	cat out &&
	test_grep "^helpers last; first .*/inc$" out &&
	"$RPERF" record -q -o lp2.pb.gz -- -rrperf/rack -e "p Rperf::Rack" >out2 &&
	test_grep "^Rperf::Rack$" out2 &&
	"$RPERF" record -q -o lp3.pb.gz -- --disable-gems -rrperf/rack -e "p Rperf::Rack" >out3 &&
	test_grep "^Rperf::Rack$" out3
'

# Already while -r libraries load (after rubygems, the first file ruby
# compiles): the files of a boot are not looked for there first.
test_expect_success 'the helpers are last on $LOAD_PATH while -r libraries load' '
	printf "%s\n" "mine = \$LOAD_PATH.index { |d| File.exist?(File.join(d, %q(rperf), %q(rack.rb))) }" \
	    "puts(mine == \$LOAD_PATH.size - 1 ? %q(probe: last) : %q(probe: at ) + mine.inspect)" >inc/probe.rb &&
	"$RPERF" record -q -o lp4.pb.gz -- -Iinc -rprobe -e "p 1" >out4 &&
	cat out4 &&
	test_grep "^probe: last$" out4
'

test_done
