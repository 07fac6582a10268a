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

test_done
