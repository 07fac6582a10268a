#!/bin/sh
# Everything after rperf's own options goes to ruby as it would.
. "$TEST_SRCDIR/test-lib.sh"

cp -r "$FIXTURES"/. .

test_expect_success '-e runs code, also after rperf options' '
	"$RPERF" record -q -F 500 -m wall -o p.data -e "puts 6 * 7" >out &&
	test_grep "^42$" out
'

test_expect_success '-I and -r load a library first' '
	"$RPERF" record -q -o p.data -I lib -r greeter -e "puts Greeter.hello" >out &&
	test_grep "^hello from -I/-r$" out
'

test_expect_success 'ruby options after --' '
	"$RPERF" record -q -o p.data -- -Ilib -rgreeter -e "puts Greeter.hello" >out &&
	test_grep "^hello from -I/-r$" out
'

test_expect_success '-w turns warnings on' '
	"$RUBY" -w -e "warn :verbose if \$VERBOSE" 2>expect &&
	"$RPERF" record -q -o p.data -w -e "warn :verbose if \$VERBOSE" 2>actual &&
	test_cmp expect actual &&
	test -s actual
'

test_expect_success '-C changes directory before the script runs' '
	mkdir -p sub && echo "puts Dir.pwd" >sub/where.rb &&
	"$RPERF" record -q -o p.data -C sub where.rb >out &&
	test_grep "/sub$" out
'

test_expect_success '--yjit reaches ruby' '
	if "$RUBY" --yjit -e "exit(RubyVM::YJIT.enabled? ? 0 : 1)" 2>/dev/null; then
		"$RPERF" record -q -o p.data --yjit -e "p RubyVM::YJIT.enabled?" >out &&
		test_grep "^true$" out
	fi
'

test_expect_success '--disable-gems reaches ruby' '
	"$RPERF" record -q -o p.data --disable-gems -e "p defined?(Gem)" >out &&
	test_grep "^nil$" out
'

test_expect_success 'ruby -v style options print and exit like ruby' '
	"$RUBY" -e "puts RUBY_VERSION" >expect &&
	"$RPERF" record -q -o p.data -e "puts RUBY_VERSION" >actual &&
	test_cmp expect actual
'

test_done
