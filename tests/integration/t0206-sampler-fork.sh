#!/bin/sh
# A forked child is not sampled with the parent's state, and nothing breaks.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'fork, child works and exits; the parent profile is whole' '
	"$RPERF" record -q -o f.folded "$FIXTURES/fork_child.rb" >out &&
	test_grep "^child ran$" out &&
	test_grep "^child status 0$" out &&
	test_grep "^child status 3$" out &&
	test_grep "Object#parent_work" f.folded &&
	test_grep ! "Object#child_work" f.folded &&
	ls >files && test_line_count 3 files
'

test_expect_success 'a child running at_exit does not write the profile' '
	"$RPERF" record -q -o g.folded -e "
		pid = fork { at_exit { puts :child_at_exit }; 100_000.times.sum }
		Process.wait(pid); 200_000.times.sum" >out &&
	test_grep "^child_at_exit$" out &&
	test -s g.folded
'

test_done
