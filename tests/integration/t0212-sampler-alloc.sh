#!/bin/sh
# Allocation samples: -m alloc and --alloc, the four memory sample types,
# in use at the end, the class label, GC compaction, fork, and bad flags.
# The fixture's truth: keeper 200,000 arrays kept, churner 400,000 hashes
# dropped, idle nothing.  At --alloc-rate 64 a method gets thousands of
# samples: the bounds (20%) are some ten standard deviations wide.
. "$TEST_SRCDIR/test-lib.sh"

# The cumulative value of sample type $2 for Object#$3 in profile $1.
method_sum() {
	"$RPERF" report --sample-index "$2" --format folded "$1" >sum.folded &&
	folded_sum sum.folded "Object#$3( |;)"
}

test_expect_success '-m alloc: the memory sample types, kept and dropped objects' '
	"$RPERF" record -q -m alloc --alloc-rate 64 -o a.pb.gz "$FIXTURES/alloc.rb" >out &&
	test_grep "^kept 200000$" out &&
	"$RPERF" report a.pb.gz >report &&
	test_grep "^Mode: +alloc, 1 allocation in 64$" report &&
	test_grep "^Samples: +[0-9,]+$" report &&
	test_grep "^Total: .* bytes \(alloc_space\)$" report &&
	within_pct "$(method_sum a.pb.gz alloc_objects keeper)" 200000 20 &&
	within_pct "$(method_sum a.pb.gz inuse_objects keeper)" 200000 20 &&
	within_pct "$(method_sum a.pb.gz alloc_objects churner)" 400000 20 &&
	test "$(method_sum a.pb.gz inuse_objects churner)" -lt 8000 &&
	test "$(method_sum a.pb.gz alloc_objects idle)" = 0 &&
	keep_bytes=$(method_sum a.pb.gz inuse_space keeper) &&
	num_ge "$keep_bytes" $((200000 * 40 * 8 / 10))
'

test_expect_success 'the class label, for --tagfocus' '
	"$RPERF" report --sample-index alloc_objects --tagfocus class=Hash \
		--format folded a.pb.gz >hash.folded &&
	test_grep "Object#churner" hash.folded &&
	test_grep ! "Object#keeper" hash.folded &&
	"$RPERF" report --sample-index alloc_objects --tagfocus class=Array \
		--format folded a.pb.gz >array.folded &&
	test_grep "Object#keeper" array.folded
'

test_expect_success '--alloc with -m cpu: time first, then the memory types' '
	"$RPERF" record -q --alloc --alloc-rate 64 -o c.pb.gz "$FIXTURES/alloc.rb" >out &&
	"$RPERF" report c.pb.gz >report &&
	test_grep "^Total: .* ms \(cpu\)$" report &&
	test_grep "Object#idle" report &&
	within_pct "$(method_sum c.pb.gz inuse_objects keeper)" 200000 20 &&
	"$RPERF" report --sample-index inuse_space c.pb.gz >inuse &&
	test_grep "^Total: .* bytes \(inuse_space\)$" inuse &&
	"$RPERF" report --sample-index 1 c.pb.gz >one &&
	test_grep "\(cpu\)$" one
'

if test -n "$GO" && "$GO" version >/dev/null 2>&1; then
	test_expect_success 'go tool pprof reads the memory types' '
		"$GO" tool pprof -sample_index=inuse_space -top c.pb.gz >top 2>&1 &&
		test_grep "^Type: inuse_space$" top &&
		"$GO" tool pprof -sample_index=alloc_objects -top a.pb.gz >top 2>&1 &&
		test_grep "^Type: alloc_objects$" top &&
		"$GO" tool pprof -top a.pb.gz >top 2>&1 &&
		test_grep "^Type: alloc_space$" top
	'
else
	test_skip 'go tool pprof reads the memory types' 'no go'
fi

test_expect_success 'GC compaction: kept objects are followed, still in use' '
	COMPACT=1 "$RPERF" record -q -m alloc --alloc-rate 64 -o k.pb.gz "$FIXTURES/alloc.rb" >out &&
	test_grep "^kept 200000$" out &&
	within_pct "$(method_sum k.pb.gz inuse_objects keeper)" 200000 20 &&
	test "$(method_sum k.pb.gz inuse_objects churner)" -lt 8000 &&
	"$RPERF" report --format text k.pb.gz >/dev/null
'

test_expect_success 'a forked child allocation samples are merged' '
	FORK=1 "$RPERF" record -q -m alloc --alloc-rate 64 -o f.pb.gz "$FIXTURES/alloc.rb" >out &&
	within_pct "$(method_sum f.pb.gz alloc_objects child_strings)" 100000 20 &&
	within_pct "$(method_sum f.pb.gz alloc_objects keeper)" 200000 20
'

test_expect_success 'Rperf.snapshot: the live heap at that moment' '
	SNAP=mid.pb.gz "$RPERF" record -q -m alloc --alloc-rate 64 -o end.pb.gz \
		"$FIXTURES/alloc.rb" >out &&
	within_pct "$(method_sum mid.pb.gz inuse_objects keeper)" 200000 20 &&
	within_pct "$(method_sum mid.pb.gz alloc_objects churner)" 400000 20 &&
	test "$(method_sum mid.pb.gz inuse_objects churner)" -lt 8000
'

test_expect_success 'rperf snapshot PID: the live heap of a running process' '
	"$RPERF" record -q -m alloc --alloc-rate 64 -o live.pb.gz -e "
		\$stdout.sync = true
		\$kept = Array.new(200_000) { |i| [i] }
		200_000.times { {} }
		puts Process.pid
		sleep 0.1 until File.exist?(%q(done))" >pid &
	rpid=$! &&
	for i in $(seq 1 100); do test -s pid && break; sleep 0.1; done &&
	pid=$(cat pid) &&
	"$RPERF" snapshot "$pid" &&
	for i in $(seq 1 100); do test -s "live.pb.gz.$pid.1" && break; sleep 0.1; done &&
	sleep 0.2 && touch done && wait $rpid &&
	"$RPERF" report --sample-index inuse_objects --tagfocus class=Array \
		--format folded "live.pb.gz.$pid.1" >live.folded &&
	within_pct "$(folded_sum live.folded)" 200000 20 &&
	"$RPERF" report --sample-index inuse_objects --tagfocus class=Hash \
		--format folded "live.pb.gz.$pid.1" >hash.folded &&
	test "$(folded_sum hash.folded)" -lt 8000
'

test_expect_success 'the NEWOBJ/FREEOBJ events, where rperf does not interpose' '
	RPERF_ALLOC_HOOKS=1 COMPACT=1 "$RPERF" record -q -m alloc --alloc-rate 64 \
		-o h.pb.gz "$FIXTURES/alloc.rb" >out &&
	within_pct "$(method_sum h.pb.gz alloc_objects keeper)" 200000 20 &&
	within_pct "$(method_sum h.pb.gz inuse_objects keeper)" 200000 20 &&
	within_pct "$(method_sum h.pb.gz alloc_objects churner)" 400000 20 &&
	test "$(method_sum h.pb.gz inuse_objects churner)" -lt 8000
'

test_expect_success 'every allocation at --alloc-rate 1: the exact counts, through compaction' '
	COMPACT=1 "$RPERF" record -q -m alloc --alloc-rate 1 -o one.pb.gz "$FIXTURES/alloc.rb" >out &&
	"$RPERF" report --format text one.pb.gz >/dev/null &&
	test "$(method_sum one.pb.gz alloc_objects keeper)" = 200000 &&
	test "$(method_sum one.pb.gz inuse_objects keeper)" = 200000 &&
	test "$(method_sum one.pb.gz alloc_objects churner)" = 400000 &&
	test "$(method_sum one.pb.gz alloc_objects idle)" = 0
'

test_expect_success 'labels and --defer apply to allocation samples' '
	"$RPERF" record -q -m alloc --alloc-rate 64 --defer -o l.pb.gz -e "
		def outside = 100_000.times { [1] }
		def inside = 100_000.times { [2] }
		outside
		Rperf.profile(job: %q(import)) { inside }
		outside" &&
	within_pct "$(method_sum l.pb.gz alloc_objects inside)" 100000 20 &&
	test "$(method_sum l.pb.gz alloc_objects outside)" = 0 &&
	"$RPERF" report --sample-index alloc_objects --tagfocus job=import \
		--format folded l.pb.gz >job.folded &&
	within_pct "$(folded_sum job.folded "Object#inside")" 100000 20
'

test_expect_success 'a flame graph of a memory type' '
	"$RPERF" report --sample-index inuse_space -o inuse.svg c.pb.gz &&
	test_grep "\"unit\":\"bytes\"" inuse.svg
'

test_expect_success 'diff --sample-index compares a memory type' '
	"$RPERF" diff --sample-index alloc_objects a.pb.gz k.pb.gz >diff &&
	test_grep "keeper|churner" diff
'

test_expect_success 'stat --alloc lists the top allocating methods' '
	"$RPERF" stat --alloc "$FIXTURES/alloc.rb" >out 2>err &&
	test_grep "^Allocation sites \(top 10 of [0-9]+, by bytes allocated\):$" err &&
	test_grep " Object#keeper$" err &&
	test_grep " Object#churner$" err &&
	"$RPERF" stat --alloc --json "$FIXTURES/alloc.rb" >out 2>json &&
	"$RUBY" -rjson -e "
		j = JSON.parse(File.read(ARGV[0]))
		t = j[%q(cpu_execution_ms)] + j[%q(gc_marking_ms)] + j[%q(gc_sweeping_ms)]
		raise %q(time is not the time: ) + t.to_s unless t > 0 && t < j[%q(real_ms)] * 1.5" json
'

test_expect_success 'bad flags: one line, status 2' '
	for args in "--alloc-rate 0 --alloc" "--alloc-rate x --alloc" \
		"--alloc-rate 5" "-m heap"; do
		test_expect_code 2 "$RPERF" record $args -e 1 2>err &&
		head -n 1 err >first &&
		test_grep "^rperf record: " first || return 1
	done &&
	test_expect_code 2 "$RPERF" report --sample-index nope a.pb.gz 2>err &&
	test_grep "^rperf report: no sample type .nope. in .a.pb.gz. \(it has alloc_objects, alloc_space, inuse_objects, inuse_space\)$" err &&
	test_expect_code 2 "$RPERF" diff --sample-index nope a.pb.gz a.pb.gz 2>err &&
	test_grep "^rperf diff: no sample type" err
'

# Every way out of a script keeps the memory profile, as it keeps the
# time profile (t0101): the hooks come off and the profile is written
# with what the script allocated and still held.  keep allocates 60,000
# objects (a literal's copy, to_s and + each turn) and keeps 20,000 (the
# sums) to the end; at 1 in 128 the estimates fall well inside half and
# twice those.
for way in 'raise "kaput"' 'exit!(4)' 'exec("true")' 'Process.kill(:TERM, $$); sleep 1'
do
	for mode in "-m alloc" "-m cpu --alloc"; do
		test_expect_success "$mode: the profile is kept on $way" "
			cat >way.rb <<-\RUBY &&
			def keep = \$kept = Array.new(20_000) { |i| %q(s) + i.to_s }
			keep
			$way
			RUBY
			\"\$RUBY\" way.rb >r.out 2>/dev/null
			r=\$? &&
			rm -f w.data &&
			\"\$RPERF\" record -q $mode --alloc-rate 128 -o w.data way.rb >p.out 2>/dev/null
			test \$? = \$r &&
			test -s w.data &&
			\"\$RPERF\" report --sample-index alloc_objects --format folded w.data >alloc.folded &&
			\"\$RPERF\" report --sample-index inuse_objects --format folded w.data >inuse.folded &&
			a=\$(folded_sum alloc.folded Object#keep) &&
			u=\$(folded_sum inuse.folded Object#keep) &&
			echo \"status \$r, keep: alloc_objects \$a, inuse_objects \$u\" &&
			num_ge \"\$a\" 30000 && num_ge 120000 \"\$a\" &&
			num_ge \"\$u\" 10000 && num_ge 40000 \"\$u\"
		"
	done
done

test_done
