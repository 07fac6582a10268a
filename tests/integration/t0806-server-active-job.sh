#!/bin/sh
# Rperf::ActiveJob in Debian's ActiveJob 6.1 (on the provisioned Ruby,
# which it loads on), inline adapter: job and queue labels with shares
# following the jobs' known cost (1:4), job_status=error for a raising job, a
# profile file for the slow job only, and a job performed inside a Rack
# request carrying both the request's and the job's labels.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

inc=$(real_ruby_libs ruby-activejob ruby-activesupport ruby-globalid ruby-concurrent \
	ruby-i18n ruby-tzinfo ruby-minitest ruby-zeitwerk) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
"$RUBY" $inc -e 'require "active_job"' 2>/dev/null ||
	skip_all "Debian's ActiveJob does not load on $("$RUBY" -e 'print RUBY_VERSION')"

test_expect_success 'the jobs run with Rperf::ActiveJob included' '
	SLOW_DIR=$TRASH/slow "$RPERF" record -o aj.pb.gz -- $inc \
		"$FIXTURES/servers/active_job_app.rb" >out 2>&1 &&
	test_grep "^failed as planned" out &&
	test_grep "^200$" out &&
	test_grep "^jobs done$" out
'

test_expect_success 'job labels: the shares follow the jobs cost (1:4)' '
	"$RPERF" report --format folded --tagfocus job=LightJob --tagignore "endpoint=POST /signup" aj.pb.gz >light.folded &&
	"$RPERF" report --format folded --tagfocus job=HeavyJob aj.pb.gz >heavy.folded &&
	test_grep "LightJob#light_work" light.folded &&
	test_grep ! "heavy_work" light.folded &&
	test_grep "HeavyJob#heavy_work" heavy.folded &&
	light=$(folded_sum light.folded) && heavy=$(folded_sum heavy.folded) &&
	lc=$(awk "/^cpu light/ { print \$3 }" out) &&
	hc=$(awk "/^cpu light/ { print \$5 }" out) &&
	check_label_ratio "$light" "$heavy" "$lc" "$hc"
'

test_expect_success 'queue and status labels' '
	"$RPERF" report --format folded --tagfocus queue=bulk aj.pb.gz >bulk.folded &&
	test_cmp heavy.folded bulk.folded &&
	"$RPERF" report --format folded --tagfocus job=FailJob --tagfocus job_status=error aj.pb.gz >fail.folded &&
	test_grep "spin" fail.folded
'

test_expect_success 'a job performed in a request has both labels' '
	"$RPERF" report --format folded --tagfocus "endpoint=POST /signup" \
		--tagfocus job=LightJob --tagfocus job_status=ok aj.pb.gz >nested.folded &&
	test_grep "LightJob#light_work" nested.folded &&
	"$RPERF" report --format folded --tagfocus "endpoint=POST /signup" \
		--tagfocus status=2xx aj.pb.gz >req.folded &&
	test_grep "LightJob#light_work" req.folded
'

test_expect_success 'the slow job, and only it, got a profile file' '
	ls slow >files &&
	test_line_count 1 files &&
	"$RPERF" report --format folded "slow/$(cat files)" >slow.folded &&
	test_grep "SlowJob#slow_work" slow.folded &&
	test_grep ! "light_work|heavy_work" slow.folded
'

test_done
