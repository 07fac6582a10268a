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
test_expect_success 'a thread run while another is new is billed where it ran' '
	cat >two.rb <<-\RUBY &&
	def burn(n)
	  i = 0
	  i += 1 while i < n
	end
	t = Thread.new { burn(3_000_000) }
	burn(1_000_000)
	t.join
	RUBY
	for i in 1 2 3; do
		"$RPERF" record -q -o two.folded two.rb &&
		main=$(folded_sum two.folded "^<main>;Object#burn ") &&
		other=$(folded_sum two.folded "^block in <main>;Object#burn ") &&
		echo "main burn $main, thread burn $other" &&
		# a third of the thread'"'"'s work, give or take the machine
		num_ge "$((main * 6))" "$other" || return 1
	done
'

test_done
