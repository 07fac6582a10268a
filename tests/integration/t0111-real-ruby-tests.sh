#!/bin/sh
# Ruby's own tests, from the source package the Ruby under test was built
# from, run under rperf record as they run under plain ruby: the same
# tests pass, rperf's profile is written and reads back.  Those picked run
# their code under GC.stress with compaction, which once crashed rperf
# (Ruby's "[BUG] frame2iseq: unreachable" as the profile was named): the
# stack a GC's samples go to was taken after the GC's marking, so the
# compaction that came next moved frames the profile then held on to.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

dir=$(real_ruby_tests) || skip_all "the tests of this Ruby cannot be had here"

# Run Ruby's test file test/ruby/$1.rb, its tests matching $2, with the
# command before it ($3...: ruby, or rperf record and its options); its
# summary line ("N tests, M assertions, 0 failures, ...") in $1.$tag.sum.
run_ruby_tests() {
	_file=$1 _pat=$2 _tag=$3
	shift 3
	"$@" -I "$dir/tool/lib" -I "$dir/test/lib" "$dir/tool/test/runner.rb" \
		"$dir/test/ruby/$_file.rb" -n "$_pat" >"$_file.$_tag.out" 2>&1 || {
		echo "status $? from $* on $_file" >&2
		tail -n 20 "$_file.$_tag.out" >&2
		return 1
	}
	grep -E '^[0-9]+ tests, ' "$_file.$_tag.out" >"$_file.$_tag.sum" &&
	cat "$_file.$_tag.sum"
}

# rperf record's options for mode $1: cpu, wall, or cpu with allocations
# sampled one in 64.
record_opts() {
	case $1 in
	wall) echo "-m wall" ;;
	alloc) echo "--alloc --alloc-rate 64" ;;
	esac
}

for spec in test_array:/gc_compact/:TestArray test_method:/compact/:TestMethod \
	test_regexp:/compact/:TestRegexp; do
	file=${spec%%:*} rest=${spec#*:}
	pat=${rest%%:*} class=${rest#*:}
	test_expect_success "$file $pat: plain ruby" "
		run_ruby_tests $file $pat ruby \"\$RUBY\" &&
		grep -q ' 0 failures, 0 errors' $file.ruby.sum &&
		! grep -q '^0 tests' $file.ruby.sum
	"
	for mode in cpu wall alloc; do
		opts=$(record_opts $mode)
		test_expect_success "$file $pat: under rperf record $mode, the same tests pass" "
			run_ruby_tests $file $pat $mode \"\$RPERF\" record -q $opts -o $file.$mode.data -- &&
			cmp $file.ruby.sum $file.$mode.sum
		"
		test_expect_success "$file $pat: the $mode profile reads back, its tests in it" "
			\"\$RPERF\" report --format folded $file.$mode.data >$file.$mode.folded &&
			grep -q '$class#test_' $file.$mode.folded
		"
	done
done

# Ruby's own test fiber scheduler (test/fiber/scheduler.rb): a fiber
# that waits for a process gets it from a thread it joins, and as that
# thread ends, Ruby runs the scheduler's unblock hook on it, after its
# THREAD_END (a lock, a write to a pipe: the thread takes the GVL again).
# A record made for the thread then outlived it; the profile's end read
# the frames of whatever took the Thread object's slot: SIGSEGV, or a
# lost profile ("internal error while saving the profile").
cat >scheduled.rb <<RUBY
require "$dir/test/fiber/scheduler"
5.times do
  Thread.new do
    Fiber.set_scheduler(Scheduler.new)
    Fiber.schedule { Process.wait(Process.spawn("true")) }
  end.join
end
GC.start
s = 0
300_000.times { |i| s += i }
puts "done #{s}"
RUBY

for mode in cpu wall alloc; do
	opts=$(record_opts $mode)
	test_expect_success "threads a fiber scheduler wakes from as they end ($mode)" "
		\"\$RPERF\" record -q $opts -o sched.$mode.data scheduled.rb >sched.$mode.out &&
		grep -q '^done 44999850000\$' sched.$mode.out &&
		\"\$RPERF\" report --format folded sched.$mode.data >sched.$mode.folded &&
		grep -q 'Integer#times' sched.$mode.folded
	"
done

test_done
