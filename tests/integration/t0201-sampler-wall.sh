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

test_expect_success 'many releases of the GVL go each to its own stack' '
	# 120,000 releases from one C method by three paths that differ only
	# below the innermost Ruby frame, 6:1:1; each release is one sample
	# of blocked time on its stack.  A release from the stack of the one
	# before records nothing new (sampler_capture_same,
	# sampler_record_merge): the stacks and counts must still come apart.
	"$RPERF" record -q -m wall -o c.pb "$FIXTURES/gvl_churn.rb" &&
	"$RPERF" report --sample-index samples --format folded -o c.folded c.pb &&
	left=$(folded_sum c.folded "Churn#run;Churn#left;Churn#put;IO#syswrite;\[GVL blocked\] ") &&
	right=$(folded_sum c.folded "Churn#run;Churn#right;Churn#put;IO#syswrite;\[GVL blocked\] ") &&
	echo "blocked samples: left $left right $right" &&
	test "$left" = 90000 && test "$right" = 30000
'

test_expect_success 'with --lines, the releases go to the line that called' '
	"$RPERF" record -q -m wall --lines -o c.data "$FIXTURES/gvl_churn.rb" &&
	"$GO" tool pprof -sample_index=samples -lines -top -cum c.data >top 2>&1 &&
	l12=$(awk "/Churn#right .*gvl_churn.rb:12\$/ { print \$4 }" top) &&
	l14=$(awk "/Churn#right .*gvl_churn.rb:14\$/ { print \$4 }" top) &&
	echo "samples on line 12: $l12, on line 14: $l14" &&
	num_ge "$l12" 30000 && num_ge "$l14" 30000 &&
	within_pct "$l12" "$l14" 2
'

test_expect_success 'a sample added to another still counts as one' '
	"$RPERF" record -q -m wall -o c.pb "$FIXTURES/gvl_churn.rb" &&
	"$RPERF" report --stdio --sample-index samples c.pb >r &&
	total=$(sed -n "s/^Total: *\([0-9,]*\) (samples)$/\1/p" r | tr -d ,) &&
	taken=$(sed -n "s/^Samples: *\([0-9,]*\)$/\1/p" r | tr -d ,) &&
	echo "total $total taken $taken" &&
	num_ge "$total" 240000 &&
	test "$total" = "$taken"
'

test_done
