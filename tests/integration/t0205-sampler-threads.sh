#!/bin/sh
# Many short threads: no crash, no leak, names and time accounted.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success '50 threads created and joined in a loop (wall)' '
	"$RPERF" record -q -m wall -o t.txt "$FIXTURES/many_threads.rb" >out &&
	test_grep "^threads done$" out &&
	test_grep " w49 " t.txt &&
	test_grep "^Threads:" t.txt
'

test_expect_success 'the same in cpu mode with the timer thread' '
	"$RPERF" record -q --signal=false -o t2.txt "$FIXTURES/many_threads.rb" >out &&
	test_grep "^threads done$" out
'

test_done
