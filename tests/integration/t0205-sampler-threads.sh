#!/bin/sh
# Many short threads: no crash, no leak, names and time accounted.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success '50 threads created and joined in a loop (wall)' '
	"$RPERF" record -q -m wall -o t.txt "$FIXTURES/many_threads.rb" >out &&
	test_grep "^threads done$" out &&
	test_grep "^Threads:" t.txt &&
	# (the table shows the top 50 of the 51 threads, by time)
	named=$(grep -cE "^ +[0-9]+ +w[0-9]+ " t.txt) &&
	echo "$named named threads" &&
	test "$named" -ge 49
'

test_expect_success 'the same in cpu mode with the timer thread' '
	"$RPERF" record -q --signal=false -o t2.txt "$FIXTURES/many_threads.rb" >out &&
	test_grep "^threads done$" out
'

# A thread handed the GVL directly (here the main thread, when the new
# thread lets it go at its start) is one Ruby's own trigger does not
# reach: its run went unsampled and was billed later to another stack.
# Each burn reads its own thread's CPU clock: the same loop runs at two
# speeds on this Ruby (plain ruby too: 1M turns took 7 ms or 13 ms, and
# the thread's 3M 38-41 ms or 21-23 ms, whichever side ran slow), so the
# work's size says little and the clocks are the truth to bill against.
test_expect_success 'a thread run while another is new is billed where it ran' '
	cat >two.rb <<-\RUBY &&
	def burn(n)
	  i = 0
	  i += 1 while i < n
	end
	def cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
	t = Thread.new { c = cpu; burn(3_000_000); cpu - c }
	c = cpu; burn(1_000_000); main = cpu - c
	puts "clocks #{main} #{t.value}"
	RUBY
	for i in 1 2 3; do
		"$RPERF" record -q -o two.folded two.rb >out &&
		set -- $(sed -n "s/^clocks //p" out) &&
		main=$(folded_sum two.folded "^<main>;Object#burn ") &&
		other=$(folded_sum two.folded "^block in <main>;Object#burn ") &&
		echo "main burn $main (own clock $1), thread burn $other (own clock $2)" &&
		# each within a fifth of its clock, give or take 2 ms of sampling
		near_clock "$main" "$1" 5 2e6 && near_clock "$other" "$2" 5 2e6 ||
		return 1
	done
'

# A thread's native thread runs before the thread's record is made (its
# making, Ruby's set-up on it) and after it is dropped (Ruby's teardown):
# that CPU went unbilled, some 20-30 us a thread before the record alone.
# Each thread reads its own CPU clock at its last line, which counts its
# birth: what the threads were billed must be at least the sum of those
# (6-19% under it before births were billed, 11-18% over now, with the
# teardowns).  Both sides are
# the threads' own clocks, so a loaded machine moves them alike.
test_expect_success 'cpu mode: the CPU time of thread births and ends is billed' '
	cat >short.rb <<-\RUBY &&
	def work(n) = n.times.sum
	total = 0
	1500.times do
	  total += Thread.new {
	    work(2000)
	    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
	  }.value
	end
	puts "threads #{total}"
	RUBY
	"$RPERF" record -q -o short.pb.gz short.rb >out &&
	own=$(sed -n "s/^threads //p" out) &&
	"$RPERF" report --format folded short.pb.gz >all.folded &&
	"$RPERF" report --tagfocus thread=1 --format folded short.pb.gz >main.folded &&
	billed=$(($(folded_sum all.folded) - $(folded_sum main.folded))) &&
	echo "threads: own clocks $own ns, billed $billed ns" &&
	num_ge "$billed" "$((own / 100 * 98))" &&
	# births and teardowns under their own pseudo-frames, on the threads
	# themselves: each some microseconds of 1,500 threads
	start=$(folded_sum all.folded "^\\(thread start\\) ") &&
	end=$(folded_sum all.folded "^\\(thread end\\) ") &&
	echo "thread start $start ns, thread end $end ns" &&
	num_ge "$start" 1500000 && num_ge "$end" 1500000 &&
	test_must_fail grep "^(thread " main.folded
'

# At 1 Hz no tick comes while these threads run (4 ms of CPU each, never
# letting go of the GVL): no sample ever sees their stacks, and their
# time goes whole, under each thread, to the pseudo-frame that says so.
test_expect_success 'cpu mode: a thread no sample saw is billed to (unsampled thread)' '
	cat >unseen.rb <<-\RUBY &&
	def work(n) = n.times.sum
	own = 0
	20.times do
	  own += Thread.new {
	    work(200_000)
	    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
	  }.value
	end
	puts "threads #{own}"
	RUBY
	"$RPERF" record -q -F 1 -o unseen.pb.gz unseen.rb >out &&
	own=$(sed -n "s/^threads //p" out) &&
	"$RPERF" report --format folded unseen.pb.gz >unseen.folded &&
	unseen=$(folded_sum unseen.folded "^\\(unsampled thread\\) ") &&
	echo "threads: own clocks $own ns, unsampled $unseen ns" &&
	num_ge "$unseen" "$((own / 10 * 7))" && num_ge "$((own / 10 * 11))" "$unseen" &&
	"$RPERF" report --tagfocus thread=1 --format folded unseen.pb.gz >main.folded &&
	test_must_fail grep "^(unsampled thread) " main.folded
'

# A server that starts a thread per request or connection (WEBrick)
# gave the sample tables entries of its own for every thread, never let
# go: the tables, the profile and the work of keeping them grew with the
# requests served.  Past the first 1,000 threads, a thread takes the
# number of one that ended and has no name (it would name the others),
# named or not; the first 1,000 keep theirs, with their names.
test_expect_success 'a thread per unit of work: the threads numbered stay bounded' '
	cat >lend.rb <<-\RUBY &&
	def spin(ms)
	  clock = Process::CLOCK_THREAD_CPUTIME_ID
	  t = Process.clock_gettime(clock) + ms / 1000.0
	  nil while Process.clock_gettime(clock) < t
	end
	def named(name) = Thread.new { Thread.current.name = name; spin(20) }.join
	named("early-0")
	named("early-1")
	Integer(ARGV[0]).times { |i| Thread.new { Thread.current.name = "t#{i}" }.join }
	named("late-0")
	puts "done"
	RUBY
	for n in 3000 9000; do
		"$RPERF" record -q -F 1 -o lend$n.pb.gz lend.rb $n >out &&
		test_grep "^done$" out &&
		"$RPERF" report --top 100000 lend$n.pb.gz >lend$n.txt &&
		sed -n "/^Threads:/,/^\$/p" lend$n.txt | grep -E "^ +[0-9]+ " >rows$n &&
		echo "$n threads: $(wc -l <rows$n) in the profile, $(wc -c <lend$n.pb.gz) bytes" &&
		num_ge 1010 "$(wc -l <rows$n)" &&
		for name in early-0 early-1; do
			ms=$(sed -n "s/^ *[0-9]* *$name *\([0-9.]*\) .*/\1/p" rows$n) &&
			echo "$name: $ms ms" &&
			num_ge "$ms" 15 && num_ge 30 "$ms" || return 1
		done &&
		test_must_fail grep " late-0 " rows$n ||
		return 1
	done &&
	num_ge "$(($(wc -c <lend3000.pb.gz) * 12 / 10))" "$(wc -c <lend9000.pb.gz)"
'

# A thread's time after its last sample is billed where its first
# period went short, to the first stack a tick found it in: each thread
# here runs head_work, then tail_work (some 2.5 ms each), and ends.
# Billed to the stack seen last, tail_work came out 19-24% over its
# clocks and head_work 23-25% under (both modes); within 5% now.
test_expect_success 'a thread that ends: its first and last work billed as their clocks say' '
	for m in cpu wall; do
		"$RPERF" record -q -m $m -o ends.pb.gz "$FIXTURES/thread_ends.rb" >out &&
		"$RPERF" report --format folded ends.pb.gz >ends.folded &&
		h=$(sed -n "s/^head \([0-9]*\) tail .*/\1/p" out) &&
		t=$(sed -n "s/^head [0-9]* tail \([0-9]*\)$/\1/p" out) &&
		bh=$(folded_sum ends.folded "Object#head_work") &&
		bt=$(folded_sum ends.folded "Object#tail_work") &&
		echo "$m: head_work billed $bh clocks $h; tail_work billed $bt clocks $t" &&
		within_pct "$bh" "$h" 10 && within_pct "$bt" "$t" 10 ||
		return 1
	done
'

test_done
