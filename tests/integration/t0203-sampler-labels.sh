#!/bin/sh
# Labels from Rperf.label and Rperf.profile reach the samples.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'labels in the in-script snapshot' '
	"$RPERF" record -q -o p.data "$FIXTURES/labels.rb" >out &&
	cat out &&
	test_grep "^request=r1 busy$" out &&
	test_grep "^job=import busy$" out &&
	test_grep "^request=r2,tenant=acme busy$" out &&
	test_grep "^ArgumentError: label :request must be a String, Symbol, number, true, false or nil, not Array$" out &&
	test_grep "^ArgumentError: Rperf.profile needs a block$" out
'

test_expect_success 'labels in the pprof file, as go tool pprof sees them' '
	if test -z "$GO"; then echo "no go: skipped"; exit 0; fi &&
	"$GO" tool pprof -tags p.data >tags 2>&1 &&
	test_grep "request: " tags &&
	test_grep "r1" tags && test_grep "r2" tags &&
	test_grep "job: " tags &&
	"$GO" tool pprof -top -tagfocus=request=r2 p.data >top 2>&1 &&
	test_grep "Object#work" top
'

# Before the stack and its labels were kept together, 12% of the work
# (each thread's last part) came out unlabelled.
test_expect_success 'a thread ending after its labelled work: the tail keeps the labels' '
	"$RPERF" record -q -o te.pb.gz "$FIXTURES/labels_thread_end.rb" &&
	"$RPERF" report --format folded te.pb.gz >te.folded &&
	"$RPERF" report --format folded --tagfocus req=a te.pb.gz >a.folded &&
	"$RPERF" report --format folded --tagfocus req=b te.pb.gz >b.folded &&
	all_l=$(folded_sum te.folded "Object#labelled_work") &&
	all_c=$(folded_sum te.folded "Object#captured_work") &&
	a=$(folded_sum a.folded "Object#labelled_work") &&
	b=$(folded_sum b.folded "Object#captured_work") &&
	echo "labelled_work $a of $all_l; captured_work $b of $all_c" &&
	num_ge "$all_l" 100000000 && num_ge "$all_c" 100000000 &&
	num_ge "$((a * 100))" "$((all_l * 98))" &&
	num_ge "$((b * 100))" "$((all_c * 98))"
'

# The time up to a tick goes to the stack the tick found, under the
# labels the thread had then, not at the job (at the next safepoint):
# where a label changed in between, the stack and its labels were of two
# moments.  A label around 5 us of each turn of a loop: 15-22% of the
# labelled spin came out without the label (four runs); 1-8% with the
# labels noted at the tick but read after the frames, and 0-1% (twelve
# runs, both modes) read right beside the innermost one.  The median of
# three runs, in each mode.
test_expect_success 'a sample carries the labels of the moment its stack was seen' '
	for m in cpu wall; do
		: >mis &&
		for i in 1 2 3; do
			"$RPERF" record -q -m $m -o lt.pb.gz "$FIXTURES/label_turns.rb" 1 &&
			"$RPERF" report --format folded lt.pb.gz >lt.folded &&
			"$RPERF" report --format folded --tagfocus part=short lt.pb.gz >lts.folded &&
			inb=$(grep ";block in <main>;Object#spin " lt.folded | folded_sum /dev/stdin) &&
			inbs=$(grep ";block in <main>;Object#spin " lts.folded | folded_sum /dev/stdin) &&
			out=$(grep "^<main>;Object#spin " lt.folded | folded_sum /dev/stdin) &&
			outs=$(grep "^<main>;Object#spin " lts.folded | folded_sum /dev/stdin) &&
			awk -v a="$inb" -v as="$inbs" -v b="$out" -v bs="$outs" "BEGIN {
				if (a <= 0 || b <= 0) exit 1
				printf \"%.1f %.1f\\n\", 100 * (a - as) / a, 100 * bs / b }" >>mis || exit 1
		done &&
		echo "$m: the labelled spin unlabelled, the other labelled (%): $(tr "\n" " " <mis)" &&
		awk -v m="$(median3 mis 1)" "BEGIN { exit !(m < 8) }" &&
		awk -v m="$(median3 mis 2)" "BEGIN { exit !(m < 8) }" || exit 1
	done
'

test_expect_success 'a script that never uses Rperf is unaffected' '
	"$RPERF" record -q -o q.data -e "p defined?(Rperf) ? Rperf.labels : nil" >out &&
	test_grep "^\{\}$" out
'

test_done
