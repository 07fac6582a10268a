#!/bin/sh
# --lines, --no-aggregate, and snapshots taken while the script runs.
. "$TEST_SRCDIR/test-lib.sh"

if test -n "$GO" && "$GO" version >/dev/null 2>&1; then
	test_expect_success '--lines records the line of each frame' '
		"$RPERF" record -q --lines -o l.pb.gz "$FIXTURES/hot.rb" 1 &&
		"$GO" tool pprof -raw l.pb.gz >raw 2>&1 &&
		test_grep "Object#spin .*hot.rb:(5|6|7|8)( |$)" raw &&
		"$RPERF" record -q -o n.pb.gz "$FIXTURES/hot.rb" 1 &&
		"$GO" tool pprof -raw n.pb.gz >raw0 2>&1 &&
		test_grep "Object#spin .*hot.rb:0( |$)" raw0
	'
else
	test_skip '--lines' 'no go'
fi

test_expect_success '--no-aggregate keeps every sample with its time' '
	"$RPERF" record -q --no-aggregate -o raw.txt "$FIXTURES/hot.rb" 8 &&
	"$RPERF" record -q --no-aggregate -o raw.folded "$FIXTURES/hot.rb" 1 &&
	"$RUBY" -e "
		s = nil
		File.foreach(ARGV[0]) { |l| s = Integer(l[/^Samples: *([\d,]+)/, 1].delete(\",\")) if l.start_with?(\"Samples:\") }
		raise \"few samples: #{s}\" unless s > 100" raw.txt &&
	"$RPERF" record -q --no-aggregate -o r.pb.gz -e "
		def spin = 10_000_000.times.sum
		spin; p Rperf.snapshot[:samples].map { |_, _, _, l| l[%q(timestamp)] }.compact.size > 100" >out &&
	test_grep "^true$" out
'

test_expect_success 'Rperf.snapshot(output:) writes a profile and the run goes on' '
	"$RPERF" record -q -o end.folded -e "
		def first = 400_000.times.sum
		def second = 400_000.times.sum
		def between = 200_000.times.sum
		first
		Rperf.snapshot(output: %q(mid.folded), clear: true)
		between  # (with no sample since the clear, mid.txt would be empty)
		Rperf.snapshot(output: %q(mid.txt))
		second
		p Rperf.snapshot(output: %q(x.pb.gz)) == %q(x.pb.gz)" >out &&
	test_grep "^true$" out &&
	test_grep "Object#first" mid.folded &&
	test_grep ! "Object#second" mid.folded &&
	test_grep "^Mode: " mid.txt &&
	test -s x.pb.gz &&
	test_grep "Object#second" end.folded &&
	test_grep ! "Object#first" end.folded
'

test_expect_success 'Rperf.snapshot errors are Ruby exceptions' '
	"$RPERF" record -q -o e.data -e "
		begin; Rperf.snapshot(output: %q(no/such/dir/x.data)); rescue IOError => e; puts e.message; end
		begin; Rperf.snapshot(format: :svgz); rescue ArgumentError => e; puts e.message; end
		begin; Rperf.snapshot(bogus: 1); rescue ArgumentError => e; puts e.class; end" >out &&
	test_grep "cannot write .no/such/dir/x.data." out &&
	test_grep "unknown format :svgz" out &&
	test_grep "^ArgumentError$" out
'

test_done
