#!/bin/sh
# A script cannot tell rperf record from ruby: $0, __FILE__, ARGV,
# require_relative, DATA, STDIN, RbConfig.ruby, RubyGems, at_exit order.
. "$TEST_SRCDIR/test-lib.sh"

cp -r "$FIXTURES"/. .

test_expect_success 'the script sees what it sees under ruby' '
	echo from-stdin | "$RUBY" identity.rb one "two words" >expect &&
	echo from-stdin | "$RPERF" record -q -o p.data identity.rb one "two words" >actual &&
	test_cmp expect actual &&
	test -s p.data
'

test_expect_success 'the same with a path, a leading "ruby" word and --' '
	echo x | "$RUBY" ./identity.rb a >expect &&
	echo x | "$RPERF" record -q -o p.data -- ./identity.rb a >actual &&
	test_cmp expect actual &&
	echo x | "$RPERF" record -q -o p.data ruby ./identity.rb a >actual &&
	test_cmp expect actual
'

test_expect_success 'arguments that look like rperf options belong to the script' '
	echo x | "$RUBY" identity.rb -o -F 5 --mode >expect &&
	echo x | "$RPERF" record -q -o p.data identity.rb -o -F 5 --mode >actual &&
	test_cmp expect actual
'

test_expect_success 'a script read from stdin' '
	echo "puts \$0; p ARGV" | "$RUBY" - a b >expect &&
	echo "puts \$0; p ARGV" | "$RPERF" record -q -o p.data - a b >actual &&
	test_cmp expect actual
'

test_expect_success 'Rperf is defined for the script, and running' '
	"$RPERF" record -q -o p.data -e "p Rperf.running?" >out &&
	test_grep "^true$" out
'

# What only report's browser (libncursesw) and push (libcurl) need is
# loaded when they start: mapped at every start, the two curses
# libraries cost each record some 0.3 ms of CPU before the first line.
test_expect_success 'the script runs with no terminal or HTTP library loaded' '
	"$RPERF" record -q -o p.data -e "puts File.read(%q(/proc/self/maps))" >maps &&
	test_grep libruby maps &&
	! grep -E "lib(ncurses|tinfo|curl)" maps
'

test_done
