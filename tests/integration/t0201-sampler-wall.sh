#!/bin/sh
# Wall mode: time off the GVL and waiting for it are labelled samples.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'a sleep is GVL-blocked time on the sleeping stack' '
	"$RPERF" record -q -m wall -o s.folded "$FIXTURES/sleeper.rb" 0.4 &&
	blocked=$(folded_sum s.folded "Object#nap;Kernel#sleep;\[GVL blocked\] ") &&
	echo "blocked $blocked" &&
	num_ge "$blocked" 390000000 &&
	within_pct "$blocked" 400000000 5
'

test_expect_success 'contending threads wait for the GVL' '
	"$RPERF" record -q -m wall -o t.folded "$FIXTURES/threads.rb" 4 &&
	wait=$(folded_sum t.folded "\[GVL wait\] ") &&
	echo "wait $wait" &&
	num_ge "$wait" 100000000
'

test_expect_success 'the text report shows the VM states and threads' '
	"$RPERF" record -q -m wall -o t.txt "$FIXTURES/threads.rb" 4 &&
	test_grep "GVL wait" t.txt &&
	test_grep "^ +5 " t.txt
'

test_done
