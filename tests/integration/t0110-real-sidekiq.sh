#!/bin/sh
# Sidekiq (Debian's package, against a real redis-server) under rperf
# record: its heartbeat thread assigns $0, which once crashed rperf.
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
# Whatever happens, leave no server behind.
stop_servers() {
	[ -n "$sidekiq_pid" ] && kill -KILL "$sidekiq_pid" 2>/dev/null
	kill "$redis_pid" 2>/dev/null
}
trap stop_servers EXIT
REDIS_URL="redis://127.0.0.1:$port/0"
DONE_FILE="$TRASH/done.txt"
export REDIS_URL DONE_FILE

cat >app.rb <<'RUBY'
require "sidekiq"
class SquareJob
  include Sidekiq::Worker
  def perform(n)
    s = 0
    300_000.times { |i| s += i * n }
    File.open(ENV.fetch("DONE_FILE"), "a") { |f| f.puts "#{n} #{s}" }
  end
end
RUBY
cat >enqueue.rb <<'RUBY'
require_relative "app"
6.times { |i| SquareJob.perform_async(i + 1) }
RUBY

# Run sidekiq under rperf record with mode $1 until the jobs are done,
# reading its process title on the way; then stop it as an operator would.
run_sidekiq() {
	rm -f "$DONE_FILE"
	"$RUBY" $inc enqueue.rb 2>/dev/null || return 1
	"$RPERF" record -m "$1" -o "sk-$1.data" -- $inc "$bin/sidekiq" -r ./app.rb -c 2 -t 2 \
		>"sk-$1.out" 2>&1 &
	pid=$!
	sidekiq_pid=$pid
	wait_for "test \$(wc -l <'$DONE_FILE') -eq 6" 300 &&
	wait_for "tr '\\0' ' ' </proc/$pid/cmdline | grep -q '^sidekiq 6'" 100 &&
	tr '\0' ' ' </proc/$pid/cmdline >"title-$1" &&
	kill -TERM "$pid" &&
	wait "$pid" &&
	sidekiq_pid=
}

test_expect_success 'sidekiq runs its jobs and sets its title under rperf (cpu)' '
	run_sidekiq cpu &&
	test_grep "^sidekiq 6\.[0-9.]+ .*\[[0-9]+ of 2 busy\]" title-cpu &&
	test_grep "Bye!" sk-cpu.out &&
	test_grep "wrote .*sk-cpu.data" sk-cpu.out &&
	"$RPERF" report sk-cpu.data >report &&
	test_grep "SquareJob#perform" report
'

test_expect_success 'the same in wall mode' '
	run_sidekiq wall &&
	test_grep "^sidekiq 6" title-wall &&
	"$RPERF" report sk-wall.data >report &&
	test_grep "SquareJob#perform" report
'

stop_servers
test_done
