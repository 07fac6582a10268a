#!/bin/sh
# Rperf::Sidekiq in Debian's Sidekiq 6 against a real redis-server, under
# rperf record: job and queue labels, their shares against the jobs' known
# CPU cost (1:4), job_status=error on a failing job, and a profile file for
# the slow job only.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

command -v redis-server >/dev/null || skip_all "no redis-server (./bootstrap installs it)"
inc=$(real_ruby_libs ruby-sidekiq ruby-redis ruby-connection-pool ruby-rack) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
bin=$(real_gem_bin sidekiq) || skip_all "no sidekiq in Debian's ruby-sidekiq"
port=$(free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
	--daemonize yes --pidfile "$TRASH/redis.pid" --logfile "$TRASH/redis.log" >/dev/null
wait_for "test -s '$TRASH/redis.pid'" 50 || skip_all "redis-server did not start"
redis_pid=$(cat "$TRASH/redis.pid")
sidekiq_pid=
stop_servers() {
	[ -n "$sidekiq_pid" ] && kill -KILL "$sidekiq_pid" 2>/dev/null
	kill "$redis_pid" 2>/dev/null
}
trap stop_servers EXIT
REDIS_URL="redis://127.0.0.1:$port/0"
DONE_FILE="$TRASH/done.txt"
SLOW_DIR="$TRASH/slow"
export REDIS_URL DONE_FILE SLOW_DIR

cat >enqueue.rb <<'RUBY'
require "./jobs"
8.times { |i| LightJob.perform_async(i) }
8.times { |i| HeavyJob.perform_async(i) }
SlowJob.perform_async(2.0)
FailJob.perform_async
RUBY

test_expect_success 'sidekiq runs the jobs with Rperf::Sidekiq installed' '
	cp "$FIXTURES/servers/sidekiq_jobs.rb" jobs.rb &&
	cp "$FIXTURES/servers/work.rb" work.rb &&
	"$RUBY" $inc enqueue.rb || exit 1
	SLOW=1.5 "$RPERF" record -o sk.pb.gz -- $inc "$bin/sidekiq" -r ./jobs.rb -c 1 -q default -q bulk \
		>sk.out 2>&1 &
	sidekiq_pid=$!
	wait_for "test \$(wc -l <done.txt) -eq 18" 600 || { cat sk.out; false; } &&
	sleep 0.3 &&
	kill -TERM "$sidekiq_pid" && wait "$sidekiq_pid" && sidekiq_pid= &&
	test_grep "wrote .*sk.pb.gz" sk.out
'

# What the eight heavy jobs were billed beyond the eight light ones,
# against the same excess of the jobs' own thread clocks, within 4% (not
# against the nominal 1:4, which the clocks themselves leave on a loaded
# machine).  What a job costs besides its work (the middleware, appending
# to done.txt) is in its label and not in its clock, the same for both
# kinds: the excess leaves it out, where a ratio of the totals read it
# (check_label_excess, as t0800 does), and outside the GC (a GC the rest
# of a job starts is in its label and not in its clock).
test_expect_success 'job labels: the shares follow the jobs cost (1:4)' '
	"$RPERF" report --format folded --tagfocus job=LightJob sk.pb.gz >light.folded &&
	"$RPERF" report --format folded --tagfocus job=HeavyJob sk.pb.gz >heavy.folded &&
	test_grep "LightJob#light_work" light.folded &&
	test_grep ! "HeavyJob" light.folded &&
	test_grep "HeavyJob#heavy_work" heavy.folded &&
	light=$(folded_sum_outside_gc light.folded) && heavy=$(folded_sum_outside_gc heavy.folded) &&
	lc=$(awk "\$1 == \"light\" { s += \$2 } END { print s * 1e9 }" done.txt) &&
	hc=$(awk "\$1 == \"heavy\" { s += \$2 } END { print s * 1e9 }" done.txt) &&
	check_label_excess "$light" "$heavy" "$lc" "$hc"
'

test_expect_success 'queue and status labels' '
	"$RPERF" report --format folded --tagfocus queue=bulk sk.pb.gz >bulk.folded &&
	test_cmp heavy.folded bulk.folded &&
	"$RPERF" report --format folded --tagfocus job=FailJob --tagfocus job_status=error sk.pb.gz >fail.folded &&
	test -s fail.folded &&
	"$RPERF" report --format folded --tagfocus job=LightJob --tagfocus job_status=ok sk.pb.gz >ok.folded &&
	test_cmp light.folded ok.folded
'

test_expect_success 'the slow job, and only it, got a profile file' '
	ls slow >files &&
	test_line_count 1 files &&
	test_grep "^[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9]+-[0-9]+\.pb\.gz$" files &&
	"$RPERF" report --format folded "slow/$(cat files)" >slow.folded &&
	test_grep "SlowJob#slow_work" slow.folded &&
	test_grep ! "light_work|heavy_work" slow.folded
'

stop_servers
test_done
