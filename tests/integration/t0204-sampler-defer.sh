#!/bin/sh
# --defer: nothing is sampled outside Rperf.profile blocks.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'only the profile block is in the profile' '
	"$RPERF" record -q --defer -o d.folded "$FIXTURES/defer.rb" &&
	inside=$(folded_sum d.folded "Object#inside") &&
	echo "inside $inside" &&
	num_ge "$inside" 20000000 &&
	test_grep ! "Object#outside" d.folded &&
	test_grep ! "gem_prelude" d.folded
'

test_expect_success 'without --defer both are there' '
	"$RPERF" record -q -o a.folded "$FIXTURES/defer.rb" &&
	test_grep "Object#outside" a.folded &&
	test_grep "Object#inside" a.folded
'

test_expect_success 'paused time is not billed when sampling resumes' '
	"$RPERF" record -q --defer -m wall -o w.folded -e "
		sleep 0.3
		Rperf.profile { x = 0; 300_000.times { x += 1 } }
		sleep 0.3
		Rperf.profile { sleep 0.1 }" &&
	total=$(folded_sum w.folded) &&
	echo "total $total" &&
	test "$total" -lt 300000000
'

test_done
