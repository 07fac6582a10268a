#!/bin/sh
# The session directory where forked children leave their profiles: made
# only when the script forks, never needed for the script to run, removed
# even after a child crashed, and never written to once removed, even if
# someone recreates it under the same name.
. "$TEST_SRCDIR/test-lib.sh"

mkdir tmp && chmod 1777 tmp
TMPDIR=$PWD/tmp
export TMPDIR

# Wait (at most 10 s) until process $1, not ours to wait for, is gone.
wait_gone() {
	for i in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

test_expect_success 'a run that never forks makes no session directory' '
	"$RPERF" record -q -o n.data -e "p Dir[ENV[%q(TMPDIR)] + %q(/*)]" >out &&
	test "$(cat out)" = "[]" &&
	test -z "$(ls tmp)"
'

test_expect_success 'a TMPDIR that is not there does not stop the script: one warning' '
	TMPDIR=$PWD/nowhere "$RPERF" record -q -o w.folded -e "
		puts :before
		3.times { Process.wait(fork { 100_000.times.sum }) }
		puts :after" >out 2>err &&
	printf "before\nafter\n" >expect && test_cmp expect out &&
	test_grep "^rperf record: cannot make a session directory in .*nowhere.: No such file or directory; forked processes are not profiled$" err &&
	test_line_count 1 err &&
	test -s w.folded &&
	echo file >notadir &&
	TMPDIR=$PWD/notadir "$RPERF" stat -e "Process.wait(fork { }); puts :ran" >out 2>err &&
	test_grep "^ran$" out &&
	test_grep "cannot make a session directory in .*notadir.: Not a directory" err
'

# The directory is made at the first fork: a relative TMPDIR was taken
# from wherever the script had moved to by then.
test_expect_success 'a relative TMPDIR holds the session after the script moves' '
	mkdir reltmp &&
	TMPDIR=reltmp "$RPERF" record -q -o rel.pb.gz -e "
		Dir.chdir(%q(/))
		Process.wait(fork { t = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
		  200_000.times.sum while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t < 0.05 })" 2>err &&
	test_grep ! "session directory" err &&
	test -z "$(ls reltmp)" &&
	"$RPERF" report --format folded rel.pb.gz >rel.folded &&
	test_grep "Enumerable#sum" rel.folded
'

test_expect_success 'a crashed child is not waited for and leaves nothing behind' '
	start=$(date +%s) &&
	"$RPERF" record -q -o c.pb.gz --child-timeout 20 -e "
		fork { Process.kill(:KILL, Process.pid) }
		fork { Process.kill(:SEGV, Process.pid) }
		sleep 0.3
		t = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
		200_000.times.sum while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t < 0.05" >out 2>err &&
	test $(( $(date +%s) - start )) -lt 10 &&
	test_grep "no profile from process" err &&
	test -z "$(ls tmp)" &&
	"$RPERF" report c.pb.gz >rep && test_grep "Integer#times|Enumerable#sum" rep
'

test_expect_success 'a child that outlives the run writes nothing, and says so once' '
	"$RPERF" record -q -o o.data --child-timeout 0.2 -e "
		pid = fork { t = Time.now; sleep 0.1 until File.exist?(%q(go1)) || Time.now - t > 10; 100_000.times.sum }
		File.write(%q(child1), pid.to_s)" 2>err &&
	pid=$(cat child1) &&
	test -z "$(ls tmp)" &&
	touch go1 && wait_gone "$pid" &&
	test -z "$(ls tmp)" &&
	test_grep "^rperf record: child $pid: profile not saved: the session directory .* was removed when the run ended \(see --child-timeout\)$" err &&
	test $(grep -c "^rperf record: child $pid:" err) = 1
'

# A pid used again in one run (a forking worker can go through pid_max):
# both children's profiles are merged, neither overwrites the other.  The
# pid is reused on purpose through ns_last_pid, which only root can set.
if test -w /proc/sys/kernel/ns_last_pid; then
	test_expect_success 'two children with the same pid are both merged' '
		cat >reuse.rb <<-\EOF &&
		def spin(s)
		  t = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
		  nil while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t < s
		end
		a = b = nil
		5.times do
		  a = fork { spin(0.06) }
		  Process.wait(a)
		  File.write("/proc/sys/kernel/ns_last_pid", (a - 1).to_s)
		  b = fork { spin(0.03) }
		  Process.wait(b)
		  break if a == b
		end
		puts "#{a} #{b}"
		EOF
		"$RPERF" record -q -o reuse.pb.gz reuse.rb >pids &&
		read a b <pids &&
		test "$a" = "$b" &&
		"$RPERF" report --tagfocus pid=$a --format folded reuse.pb.gz >child &&
		test_grep "Object#spin" child &&
		ms=$(folded_sum child) &&
		echo "pid $a: $ms ns" &&
		num_ge "$ms" 85000000
	'
else
	test_skip 'two children with the same pid' 'needs root to choose the next pid'
fi

if test_other_user; then
	test_expect_success 'a session directory recreated by another user is never written to' '
		echo secret >victim && chmod 600 victim &&
		"$RPERF" record -q -o r.data --child-timeout 0.2 -e "
			pid = fork { t = Time.now; sleep 0.1 until File.exist?(%q(go2)) || Time.now - t > 10; 100_000.times.sum }
			File.write(%q(child2), pid.to_s + %q( ) +
			    Dir[ENV[%q(TMPDIR)] + %q(/rperf-session.*)].first + %q( ) +
			    (Process.pid << 32 | 1).to_s)" 2>err &&
		pid=$(cut -d" " -f1 child2) && dir=$(cut -d" " -f2 child2) &&
		name=$pid.$(cut -d" " -f3 child2).pb.gz &&
		! test -e "$dir" &&
		mkdir "$dir" && ln -s "$PWD/victim" "$dir/$name" &&
		chown -h "$OTHER_USER" "$dir" "$dir/$name" &&
		touch go2 && wait_gone "$pid" &&
		test "$(cat victim)" = secret &&
		test "$(stat -c %a victim)" = 600 &&
		test "$(ls "$dir")" = "$name" && test -L "$dir/$name" &&
		test_grep "^rperf record: child $pid: profile not saved: the session directory .* was removed" err &&
		rm -rf "$dir"
	'
else
	test_skip 'a recreated session directory' 'needs root to make a second user'
fi

test_done
