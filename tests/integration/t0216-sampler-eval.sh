#!/bin/sh
# Code compiled from strings at run time (ERB#result, eval) is garbage
# once it has run; the profile must not keep it alive.  The fixture
# renders an ERB template and evals a string again and again, and counts
# the VM's internal objects (iseqs among them) after a full GC halfway
# and at the end: plain ruby's count does not move, and neither may the
# profiled one's (before, each sampled compile stayed alive to the end,
# some 600 internal objects a second here at 2000 Hz).  The frames are
# still named as Ruby's backtrace names them, at the eval's file.
. "$TEST_SRCDIR/test-lib.sh"

"$RUBY" -e 'exit(RUBY_VERSION.start_with?("3.3.", "3.4.") ? 0 : 1)' ||
	skip_all "frames are named like their method on Ruby $("$RUBY" -e 'print RUBY_VERSION')"

field() {
	awk -v k="$1" '$1 == k { print $2 }' "$2"
}

test_expect_success 'profile code that compiles strings for three seconds' '
	"$RPERF" record -q -F 2000 -o p.data "$FIXTURES/eval_churn.rb" out.txt 3 &&
	"$RPERF" report --stdio --format folded p.data >p.folded &&
	"$RPERF" report --stdio --sort cum --top 200 p.data >p.txt &&
	test "$(field renders out.txt)" -gt 1000
'

test_expect_success 'the compiled code it sampled is not kept alive' '
	half=$(field imemo_half out.txt) && end=$(field imemo_end out.txt) &&
	echo "internal objects halfway $half, at the end $end" &&
	test $((end - half)) -lt 300
'

# The samples a GC takes (its marking and sweeping, billed to the stack
# it interrupted) cannot name frames in the GC: they waited for the next
# tick's job, and at -F 1 the code they held was kept a second or to the
# end (some 400-600 internal objects more than at 2000 Hz here).
test_expect_success 'nor at a rate of one sample a second' '
	"$RPERF" record -q -F 1 -o slow.data "$FIXTURES/eval_churn.rb" slowout.txt 3 &&
	fast=$(field imemo_end out.txt) && slow=$(field imemo_end slowout.txt) &&
	echo "internal objects at the end: $fast at 2000 Hz, $slow at 1 Hz" &&
	test $((slow - fast)) -lt 200
'

# caller_locations(0) in churn_work, root first, is a stack of the profile.
test_expect_success 'the frames are named as the backtrace names them' '
	sed -n "s/^frame \([^	]*\)	.*/\1/p" out.txt >labels &&
	test $(wc -l <labels) -ge 8 &&
	grep -qx "block in Object#churn_render" labels &&
	want=$(awk "{ a[NR] = \$0 } END { for (i = NR; i >= 1; i--) printf \"%s%s\", a[i], (i > 1 ? \";\" : \"\") }" labels) &&
	echo "$want" &&
	sed "s/ [0-9]*$//" p.folded | grep -qF "$want"
'

test_expect_success 'their locations are the eval'\''s, as the backtrace says' '
	grep -E "^ *[0-9,.]+ +[0-9.]+%  block in Object#churn_render +\(churn\)" p.txt &&
	grep -E "^ *[0-9,.]+ +[0-9.]+%  Object#churn_render +\(churn eval\)" p.txt
'

# Allocation samples hold frames too, until the profile is built: the
# same code compiled from strings, sampled at 1 allocation in 64, kept
# 23,000 internal objects alive at the end of three seconds (3,800 at the
# default rate), and the fixture rendered a third fewer times.
test_expect_success 'nor do allocation samples keep it alive (-m alloc)' '
	"$RPERF" record -q -m alloc --alloc-rate 64 -o a.data \
		"$FIXTURES/eval_churn.rb" aout.txt 3 &&
	half=$(field imemo_half aout.txt) && end=$(field imemo_end aout.txt) &&
	echo "internal objects halfway $half, at the end $end" &&
	test $((end - half)) -lt 300 &&
	"$RPERF" report --stdio --sort cum --top 200 a.data >a.txt &&
	grep -E "^ *[0-9,.]+ +[0-9.]+%  block in Object#churn_render +\(churn\)" a.txt
'

# Naming a frame makes strings.  Sampled (at --alloc-rate 1 every
# allocation is), they added samples whose frames the naming named again,
# without end: the run grew by gigabytes and never finished.
test_expect_success 'every allocation sampled, while frames are named: it ends' '
	timeout 120 "$RPERF" record -q -m alloc --alloc-rate 1 -o one.data \
		"$FIXTURES/eval_churn.rb" oneout.txt 1 &&
	test "$(field renders oneout.txt)" -gt 100
'

# A file's top and its class bodies run once too.  Samples taken while
# a program loads its files kept a frame of each alive, with the class
# bodies and blocks in it: 300 files sampled at 5000 Hz, some 1,000 iseqs
# more than a run that took no sample.
test_expect_success 'nor are the tops and class bodies of files loaded' '
	mkdir lib &&
	"$RUBY" -e "300.times { |i| File.write(format(%q(lib/churn%03d.rb), i),
	  %Q(class LoadChurn#{i}\n  X = 0\n  4000.times { |j| X.+(j) }\n  def m = #{i}\nend\n)) }" &&
	"$RPERF" record -q -F 1 -o idle.data "$FIXTURES/load_churn.rb" "$PWD/lib" idle.txt &&
	"$RPERF" record -q -F 5000 -o busy.data "$FIXTURES/load_churn.rb" "$PWD/lib" busy.txt &&
	idle=$(field iseqs idle.txt) && busy=$(field iseqs busy.txt) &&
	echo "iseqs alive: $idle with no sample, $busy at 5000 Hz" &&
	test $((busy - idle)) -lt 100 &&
	"$RPERF" report --stdio --format folded busy.data >busy.folded &&
	test_grep "<class:LoadChurn[0-9]*>" busy.folded
'

# Let go at the first GC that finds them gone, as Ruby frees them: kept
# to a later one (every fourth GC), the tops a boot loaded grew its heap
# by four pages at 1000 Hz, with a major GC's worth of page faults.
test_expect_success 'and they are let go at the first GC after' '
	"$RPERF" record -q -F 1 -o idle1.data "$FIXTURES/load_churn.rb" "$PWD/lib" idle1.txt 1 &&
	for i in 1 2 3; do
		"$RPERF" record -q -F 5000 -o busy1.data "$FIXTURES/load_churn.rb" \
			"$PWD/lib" busy1.txt 1 &&
		idle=$(field iseqs idle1.txt) && busy=$(field iseqs busy1.txt) &&
		echo "iseqs alive after one GC: $idle with no sample, $busy at 5000 Hz" &&
		test $((busy - idle)) -lt 100 || return 1
	done
'

test_done
