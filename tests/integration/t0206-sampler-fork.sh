#!/bin/sh
# A forked child is not sampled with the parent's state, and nothing breaks.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'fork, child works and exits; the parent profile is whole' '
	"$RPERF" record -q --no-inherit -o f.folded "$FIXTURES/fork_child.rb" >out &&
	test_grep "^child ran$" out &&
	test_grep "^child status 0$" out &&
	test_grep "^child status 3$" out &&
	test_grep "Object#parent_work" f.folded &&
	test_grep ! "Object#child_work" f.folded &&
	ls >files && test_line_count 3 files
'

test_expect_success 'by default the child is sampled afresh and merged' '
	"$RPERF" record -q -o g2.folded "$FIXTURES/fork_child.rb" >out &&
	test_grep "Object#parent_work" g2.folded &&
	test_grep "Object#child_work" g2.folded &&
	test_grep ! "<main>;Object#parent_work;.*Object#child_work" g2.folded
'

test_expect_success 'a child running at_exit does not write the profile' '
	"$RPERF" record -q -o g.folded -e "
		pid = fork { at_exit { puts :child_at_exit }; 100_000.times.sum }
		Process.wait(pid); 200_000.times.sum" >out &&
	test_grep "^child_at_exit$" out &&
	test -s g.folded
'

test_expect_success 'fork in wall mode with threads running: the child does I/O and exits' '
	"$RPERF" record -q -m wall -o w.folded -e "
		t = Thread.new { 20.times { sleep 0.01 } }
		pid = fork { r, w = IO.pipe; w.write(:x); r.read(1); sleep 0.05; puts :child_done }
		Process.wait(pid); t.join; puts \$?.exitstatus" >out &&
	test_grep "^child_done$" out &&
	test_grep "^0$" out &&
	test_grep "GVL blocked" w.folded
'

test_done
