#!/bin/sh
# GC time is labelled %GC=mark / %GC=sweep, on the allocating stack.
. "$TEST_SRCDIR/test-lib.sh"

for mode in cpu wall; do
	test_expect_success "GC time shows up in $mode mode" "
		\"\$RPERF\" record -q -m $mode -o g.folded \"\$FIXTURES/gc_heavy.rb\" >out &&
		test_grep 'gc ran' out &&
		mark=\$(folded_sum g.folded 'Object#churn.*\\[GC marking\\] ') &&
		sweep=\$(folded_sum g.folded 'Object#churn.*\\[GC sweeping\\] ') &&
		echo \"mark \$mark sweep \$sweep\" &&
		num_ge \$mark 1000000 &&
		num_ge \$sweep 1000000
	"
done

# GC.stress makes Ruby's own cleanup, after the last at_exit block, run
# GCs with no Ruby frame on the stack: they belong to the script's last
# code, as the rest of its end does, not to "(no Ruby frame)" (a GC of
# the cleanup took 1 ms there in a CI run).
test_expect_success 'a GC in Ruby'"'"'s cleanup goes to the script'"'"'s last stack' '
	cat >gc_end.rb <<-\EOF &&
	a = Array.new(100_000) { |i| "x#{i}" }
	at_exit { a.size }
	GC.stress = true
	EOF
	"$RPERF" record -q -o e.folded gc_end.rb &&
	test_grep "GC marking" e.folded &&
	test_grep ! "no Ruby frame" e.folded
'

# A forked child finishes the lazy sweep its parent left (as a prefork
# server's workers do after the boot's GC): no GC starts in the child, so
# its GC time is sweeping, not marking as it was named when the child's
# sampler started with no phase known (30-70 ms of "[GC marking]" here).
test_expect_success 'a fork'"'"'s child finishing its parent'"'"'s sweep bills sweeping' '
	cat >gc_fork.rb <<-\EOF &&
	def garbage = Array.new(300_000) { |i| "s#{i}" }.size
	def child_alloc = 50_000.times { "x" * 10 }
	garbage
	GC.start(immediate_sweep: false)
	Process.wait(fork {
		c = GC.count
		child_alloc
		puts "child GCs #{GC.count - c}"
	})
	EOF
	"$RPERF" record -q -o f.folded gc_fork.rb >out &&
	test_grep "^child GCs 0$" out &&
	sweep=$(folded_sum f.folded "Object#child_alloc.*\\[GC sweeping\\] ") &&
	mark=$(folded_sum f.folded "Object#child_alloc.*\\[GC marking\\] ") &&
	echo "sweep $sweep mark $mark" &&
	num_ge $sweep 1000000 &&
	test "$mark" -eq 0
'

# Ruby enters its GC whenever an allocation finds no free slot, even with
# the GC disabled or its last sweep done, and leaves at once when there is
# nothing to mark or sweep: that is the allocating code's time, not GC's
# (it was 4 ms of "[GC marking]" here, in a program whose GC never ran).
test_expect_success 'allocating with GC disabled bills no GC time' '
	cat >gc_off.rb <<-\EOF &&
	GC.disable
	def alloc = 1_000_000.times { "x" * 10 }
	c = GC.count
	alloc
	puts "GCs #{GC.count - c}"
	EOF
	"$RPERF" record -q -o d.folded gc_off.rb >out &&
	test_grep "^GCs 0$" out &&
	gc=$(folded_sum d.folded "Object#alloc.*\\[GC ") &&
	all=$(folded_sum d.folded "Object#alloc") &&
	echo "gc $gc of $all" &&
	num_ge $all 20000000 &&
	test "$gc" -eq 0
'

test_done
