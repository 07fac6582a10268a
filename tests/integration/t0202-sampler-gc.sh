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

test_done
