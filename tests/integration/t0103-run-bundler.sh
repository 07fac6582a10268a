#!/bin/sh
# require "bundler/setup" works in a directory with a Gemfile.
. "$TEST_SRCDIR/test-lib.sh"

cp -r "$FIXTURES"/bundle/. .

test_expect_success 'bundler/setup and a default gem' '
	"$RUBY" app.rb >expect 2>expect.err &&
	"$RPERF" record -q -o p.data app.rb >actual 2>actual.err &&
	test_cmp expect actual &&
	test_cmp expect.err actual.err &&
	test_grep "bundled" actual &&
	test -s p.data
'

test_done
