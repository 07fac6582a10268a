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

# The time a thread runs before it lets the GVL go is billed where the
# ticks find it running, not to the release (sampler_bill_release): two
# threads handing a Queue back and forth, 20 and 80 us of work a turn.
# Billed at the release, the work got 1-3% of its time (the rest went to
# Thread::Queue#pop); now 0.97-1.01 of it.  On one CPU, so that each tick
# finds the thread where it is at that moment: on two, the timer's thread
# is run when a CPU frees up, often at a hand-over, and the work read
# 0.5-0.8 of its time (the machine's doing, not the billing's).
test_expect_success 'the work before a release is billed where it ran' '
	# (The first CPU this process may run on, where taskset is there.)
	cpu=$(taskset -cp $$ 2>/dev/null | sed -n "s/.*: *\([0-9][0-9]*\).*/\1/p") &&
	pin= && if test -n "$cpu"; then pin="taskset -c $cpu"; fi &&
	$pin "$RPERF" record -q -m wall -o q.folded "$FIXTURES/queue_turns.rb" 10000 qtruth &&
	spin=$(folded_sum q.folded "Object#spin ") &&
	truth=$(cat qtruth) &&
	echo "Object#spin billed $spin ns, ran $truth ns" &&
	num_ge "$spin" "$(awk -v t="$truth" "BEGIN { printf \"%.0f\", t * 0.6 }")"
'

# And under the labels of the moment the tick finds it: a label around
# a short part of a loop (17% of its running time) that ends in a sleep
# took 97% of the loop's running time when the release billed the
# running time since the last sample.  Now 5-18% (where the ticks fall
# around the sleeps swings it).
test_expect_success 'a label ending in a release is not billed the running time before it' '
	"$RPERF" record -q -m wall -o lr.pb.gz "$FIXTURES/labelled_release.rb" 1 lrtruth &&
	"$RPERF" report --format folded -o lr.folded lr.pb.gz &&
	"$RPERF" report --format folded --tagfocus part=short -o lrs.folded lr.pb.gz &&
	all=$(grep -v "GVL\|ruby boot" lr.folded | folded_sum /dev/stdin) &&
	short=$(grep -v "GVL\|ruby boot" lrs.folded | folded_sum /dev/stdin) &&
	pct=$(awk -v a="$all" -v s="$short" "BEGIN { printf \"%.0f\", 100 * s / a }") &&
	echo "part=short: $pct% of the running time, by its clock $(cat lrtruth)%" &&
	test "$pct" -lt 50
'

test_expect_success 'start-up carries its short releases to its samples, not a long one' '
	# Ruby lets the GVL go around each file it reads in start-up, some
	# 2,000 times for a one-line script: these wait for the next sample
	# (sampler_carry_release), which bills their blocked and waiting
	# time in those states: a tick makes at most three samples, and the
	# GC and compile hooks some tens more (a one-line script: ~45, for
	# ~10 ticks; 1,400 before).  A start-up slowed by a busy machine gets
	# more ticks, at the full rate after 250 ms, and so more room.
	"$RPERF" record -q -m wall -o b.pb.gz -e 1 &&
	"$RPERF" report --sample-index samples --format folded -o bn.folded b.pb.gz &&
	"$RPERF" report --format folded -o bt.folded b.pb.gz &&
	"$RPERF" report --stdio -o b.txt b.pb.gz &&
	ticks=$(awk "/^Triggers:/ { gsub(/,/, \"\", \$2); print \$2 }" b.txt) &&
	n=$(folded_sum bn.folded "^\(ruby boot\)") &&
	blocked=$(folded_sum bt.folded "^\(ruby boot\).*;\[GVL blocked\] ") &&
	echo "start-up: $n samples for $ticks ticks, $blocked ns blocked" &&
	test "$n" -le $((3 * ticks + 150)) && test "$blocked" -gt 0 &&
	# A library that sleeps as it loads is billed where it slept.
	echo "sleep 0.2" >nap.rb &&
	"$RPERF" record -q -m wall -o nap.folded -r ./nap.rb -e 1 &&
	slept=$(folded_sum nap.folded "^\(ruby boot\).*;Kernel#sleep;\[GVL blocked\] ") &&
	echo "slept $slept" &&
	num_ge "$slept" 195000000
'

test_done
