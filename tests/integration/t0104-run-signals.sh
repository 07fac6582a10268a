#!/bin/sh
# Signals: ruby's default handling and statuses, the profile still saved.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'SIGINT from the script itself: status 130, profile saved' '
	test_expect_code 130 "$RPERF" record -q -o p.data -e "Process.kill(:INT, \$\$); sleep 5" 2>err &&
	test -s p.data
'

test_expect_success 'SIGTERM: status 143, profile saved' '
	rm -f p.data &&
	test_expect_code 143 "$RPERF" record -q -o p.data -e "Process.kill(:TERM, \$\$); sleep 5" &&
	test -s p.data
'

# (A background job of a non-interactive shell ignores SIGINT, so the
# signal sent from outside is SIGTERM.)
test_expect_success 'SIGTERM from outside while the script sleeps' '
	rm -f p.data
	# (one simple command, so that $! is rperf itself, not a subshell)
	"$RPERF" record -q -o p.data -e "\$stdout.sync = true; puts :ready; sleep 30" >out &
	pid=$! &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		test -s out && break; sleep 0.2
	done &&
	kill -TERM $pid &&
	{ wait $pid; rc=$?; } &&
	{ test "$rc" = 143 || { echo "status $rc" >&2; false; }; } &&
	test -s p.data
'

test_expect_success 'a trap of the script is its own' '
	"$RPERF" record -q -o p.data -e "trap(:INT) { puts :caught; exit 4 }; Process.kill(:INT, \$\$); sleep 5" >out;
	test $? = 4 &&
	test_grep "^caught$" out &&
	test -s p.data
'

test_expect_success 'the timer signal is not seen by the script' '
	"$RPERF" record -q -o p.data -e "
		t = Time.now; x = 0
		x += 1 while Time.now - t < 0.3
		r, w = IO.pipe; Thread.new { sleep 0.2; w.write 1 }; p r.read(1)" >out &&
	test_grep "^\"1\"$" out
'

test_done
