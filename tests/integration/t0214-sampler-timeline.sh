#!/bin/sh
# record --timeline: every sample with its time, per-thread summaries
# that add up, Rperf.mark spans, --timeline-max, report --from/--to.
. "$TEST_SRCDIR/test-lib.sh"

cat >threads.rb <<'RUBY'
r, w = IO.pipe
cpu = Thread.new { x = 0; t = Time.now; x += 1 while Time.now - t < 0.6 }
cpu.name = "cpu"
sleeper = Thread.new { Rperf.mark("naps") { 6.times { sleep 0.1 } } }
sleeper.name = "sleeper"
io = Thread.new { 6.times { r.read(1) } }
io.name = "io"
6.times { sleep 0.1; w.write("x") }
GC.start
[cpu, sleeper, io].each(&:join)
p Rperf.mark("value") { 42 }
t = Rperf.mark_start("apart")
sleep 0.02
Rperf.mark_stop(t)
Rperf.mark_stop(nil)
begin
  Rperf.mark("no block")
rescue ArgumentError => e
  puts "ArgumentError: #{e.message}"
end
RUBY

# The per-thread rows of the summary: "NAME running wait blocked gc".
summary_rows() {
	sed -n '/^Timeline (per thread/,/^$/p' "$1" | awk 'NR > 2 && NF >= 6 {
		name = $1; if ($2 ~ /^\(/) { name = name " " $2; $2 = "" ; $0 = $0; }
		n = NF; gsub(",", "", $0); print $1, $(NF-4), $(NF-3), $(NF-2), $(NF-1) }'
}

test_expect_success 'wall: each thread is accounted for, its summary adds up to its time' '
	"$RPERF" record -q -m wall --timeline -o tl.pb.gz threads.rb >out &&
	test_grep "^42$" out &&
	test_grep "^ArgumentError: Rperf.mark needs a block" out &&
	"$RPERF" report tl.pb.gz >report &&
	test_grep "^Timeline \(per thread, ms\):$" report &&
	test_grep "^Longest GVL waits" report &&
	sed -n "/^Threads:/,/^$/p" report | awk "NR > 2 && NF >= 3 { gsub(\",\", \"\"); print \$1, \$(NF-1) }" | sort >threads &&
	summary_rows report | awk "{ print \$1, \$2 + \$3 + \$4 + \$5 }" | sort >sums &&
	cat threads sums &&
	join threads sums >both && test_line_count 4 both &&
	awk "{ d = \$2 - \$3; if (d < 0) d = -d; if (d > 0.05) { print \"thread \" \$1 \": \" \$2 \" vs \" \$3; exit 1 } }" both &&
	# the sleeper slept six times 100 ms, the reader waited as long
	summary_rows report | awk "\$1 == 3 { b = \$4 } \$1 == 4 { c = \$4 }
		END { if (b < 570 || b > 900 || c < 500 || c > 900) { print \"blocked \" b \", \" c; exit 1 } }"
'

# Each sample a span where it ends: a thread's runs before it lets the
# GVL go are billed there as spans of their own (sampler_bill_release),
# so the thread's lane is covered from end to end.  Carried to its next
# sample instead, as without --timeline, they were clipped away: two
# threads handing a Queue back and forth had 61-78% of their time drawn.
test_expect_success 'wall: a thread that lets the GVL go often has every moment drawn' '
	"$RPERF" record -q -m wall --timeline -o q.pb.gz "$FIXTURES/queue_turns.rb" 3000 qtruth &&
	"$RPERF" report -o q.speedscope.json q.pb.gz &&
	"$RPERF" report q.pb.gz >q.txt &&
	sed -n "/^Threads:/,/^$/p" q.txt | awk "NR > 2 && NF >= 3 { gsub(\",\", \"\"); print \$1, \$(NF-1) }" >qthreads &&
	python3 -c "
import json, sys
d = json.load(open(\"q.speedscope.json\"))
for p in d[\"profiles\"]:
    depth = covered = since = 0
    for e in p[\"events\"]:
        if e[\"type\"] == \"O\":
            since = e[\"at\"] if depth == 0 else since
            depth += 1
        else:
            depth -= 1
            covered += e[\"at\"] - since if depth == 0 else 0
    print(p[\"name\"].split()[-1], covered / 1e6)
" | sort >qdrawn &&
	join qthreads qdrawn >qboth && cat qboth && test_line_count 2 qboth &&
	awk "\$3 < 0.95 * \$2 { print \"thread \" \$1 \": \" \$3 \" ms drawn of \" \$2; exit 1 }" qboth
'

test_expect_success 'marks are in the profile, each on its thread' '
	if test -z "$GO"; then echo "no go: skipped"; exit 0; fi &&
	"$GO" tool pprof -comments tl.pb.gz >comments 2>&1 &&
	test_grep "^mark: 0 3 [0-9]+ [0-9]+ naps$" comments &&
	test_grep "^mark: 0 1 [0-9]+ [0-9]+ value$" comments &&
	test_grep "^mark: 0 1 [0-9]+ [0-9]+ apart$" comments &&
	awk "/^mark: .* naps$/ { d = \$5 - \$4; if (d < 590e6 || d > 1000e6) { print d; exit 1 } }" comments
'

test_expect_success 'go tool pprof reads the times, and a profile it wrote is still a timeline' '
	if test -z "$GO"; then echo "no go: skipped"; exit 0; fi &&
	"$GO" tool pprof -raw tl.pb.gz >raw 2>&1 &&
	test_grep "^ +thread:\[[0-9]+\] timestamp:\[[0-9]+ nanoseconds\]$" raw &&
	"$GO" tool pprof -proto tl.pb.gz >re.pb.gz 2>/dev/null &&
	"$RPERF" report re.pb.gz >re.txt &&
	sed -n "/^Timeline (per/,\$p" report >a.tl && sed -n "/^Timeline (per/,\$p" re.txt >b.tl &&
	test "$(wc -l <a.tl)" -gt 3 &&
	test_cmp a.tl b.tl &&
	"$RPERF" report --timeline -o re.svg re.pb.gz &&
	"$RPERF" report --timeline -o tl.svg tl.pb.gz &&
	grep -c "\"name\":" re.svg >n.re && grep -c "\"name\":" tl.svg >n.tl && test_cmp n.tl n.re
'

test_expect_success 'report --from/--to keeps a time window, for every output' '
	"$RPERF" report --format folded tl.pb.gz >all.folded &&
	"$RPERF" report --from 0.2 --to 0.3 --format folded tl.pb.gz >win.folded &&
	all=$(folded_sum all.folded) && win=$(folded_sum win.folded) &&
	echo "all $all window $win" &&
	num_ge "$all" "$win" && num_ge "$win" 1 &&
	# four threads, a tenth of a second, plus one sample each side
	num_ge 600000000 "$win" &&
	"$RPERF" report --from 0.2 --to 0.3 tl.pb.gz >w.txt &&
	test_grep "^Window: +0.200 s to 0.300 s after the start$" w.txt &&
	# the header speaks of the window: its length and samples, and none
	# of the figures of the whole run (triggers, unbilled CPU)
	test_grep "^Duration: +100.00 ms$" w.txt &&
	"$RPERF" report tl.pb.gz >full.txt &&
	n_all=$(sed -n "s/^Samples: *//p" full.txt | tr -d ,) &&
	n_win=$(sed -n "s/^Samples: *//p" w.txt | tr -d ,) &&
	echo "samples: all $n_all window $n_win" &&
	test "$n_win" -ge 1 && test "$n_win" -lt "$n_all" &&
	test_grep "^Triggers:" full.txt && test_grep ! "^Triggers:" w.txt &&
	"$RPERF" record -q -o plain.pb.gz -e 1 &&
	test_expect_code 1 "$RPERF" report --from 1 plain.pb.gz 2>err &&
	test_grep "^rperf report: .plain.pb.gz. has no sample times for --from/--to \(record it with --timeline\)$" err &&
	test_expect_code 2 "$RPERF" report --from x tl.pb.gz 2>err &&
	test_expect_code 2 "$RPERF" report --from 2 --to 1 tl.pb.gz 2>err &&
	test_grep "comes before" err
'

test_expect_success '--timeline-max: the rest is merged, every nanosecond still billed, and said' '
	"$RPERF" record -q -m wall --timeline --timeline-max 50 -o cap.pb.gz threads.rb >/dev/null &&
	"$RPERF" report cap.pb.gz >cap.txt &&
	test_grep "^Timeline: full \(--timeline-max\): 50 samples kept with their time, up to [0-9.]+ s; [0-9]+ later ones merged$" cap.txt &&
	# the views of the timeline say it too: their lanes end early
	"$RPERF" report --timeline -o cap.svg cap.pb.gz &&
	test_grep "<text id=\"subtitle\"[^>]*>.*; timeline full \(--timeline-max\): 50 samples kept with their time, up to [0-9.]+ s; [0-9]+ later ones merged</text>" cap.svg &&
	"$RPERF" report -o cap.speedscope.json cap.pb.gz &&
	test_grep "\"name\":\"[^\"]* \(timeline full, --timeline-max: 50 samples kept with their time, up to [0-9.]+ s; [0-9]+ later ones merged\)\"" cap.speedscope.json &&
	"$RPERF" report --format folded cap.pb.gz >cap.folded &&
	"$RPERF" report --from 0 --format folded cap.pb.gz >timed.folded &&
	total=$(folded_sum cap.folded) && timed=$(folded_sum timed.folded) &&
	echo "total $total timed $timed" &&
	num_ge "$total" 1000000000 && num_ge "$total" "$((timed + 1))" &&
	test_expect_code 2 "$RPERF" record --timeline-max 5 -e 1 2>err &&
	test_grep "goes with --timeline" err &&
	test_expect_code 2 "$RPERF" record --timeline --timeline-max 0 -e 1 2>err
'

test_expect_success 'without --timeline, marks cost nothing and the block runs' '
	"$RPERF" record -q -o nm.pb.gz -e "p Rperf.mark(:x) { 7 }; p Rperf.mark_start(:y)" >out &&
	test_grep "^7$" out && test_grep "^nil$" out
'

test_expect_success 'a forked child: its times and marks on the parent'"'"'s clock, with its pid' '
	if test -z "$GO"; then echo "no go: skipped"; exit 0; fi &&
	cat >fork.rb <<-\RUBY &&
	Rperf.mark("parent nap") { sleep 0.2 }
	pid = fork { Rperf.mark("child work") { sleep 0.1 } }
	Process.wait(pid)
	RUBY
	"$RPERF" record -q -m wall --timeline -o fork.pb.gz fork.rb &&
	"$GO" tool pprof -comments fork.pb.gz >comments 2>&1 &&
	grep "^mark: " comments >comments.marks &&
	# the two marks, and the fork as a process event
	test_line_count 3 comments.marks &&
	test_grep "^mark: [0-9]+ 1 [0-9]+ [0-9]+ \[fork\] child [0-9]+$" comments.marks &&
	parent_end=$(awk "/ parent nap$/ { print \$5 }" comments.marks) &&
	child_start=$(awk "/ child work$/ { print \$4 }" comments.marks) &&
	num_ge "$child_start" "$parent_end" &&
	test "$(awk "/ child work$/ { print \$2 }" comments.marks)" != 0 &&
	"$RPERF" report fork.pb.gz >fork.txt &&
	sed -n "/^Timeline (per/,/^\$/p" fork.txt >tl.txt && cat tl.txt &&
	test "$(grep -c "^  [0-9]*/1 " tl.txt)" = 2
'

test_expect_success 'process events: a fork, snapshots and an exec are marks of no length, in order' '
	if test -z "$GO"; then echo "no go: skipped"; exit 0; fi &&
	cat >events.rb <<-\RUBY &&
	pid = fork { sleep 0.01 }
	Process.wait(pid)
	File.write("child.pid", pid.to_s)
	sleep 0.02
	Rperf.snapshot
	sleep 0.02
	system(ENV.fetch("RPERF_BIN"), "snapshot", Process.pid.to_s)
	sleep 0.3
	exec "true"
	RUBY
	RPERF_BIN="$RPERF" "$RPERF" record -q -m wall --timeline -o ev.pb.gz events.rb &&
	"$GO" tool pprof -comments ev.pb.gz >comments 2>&1 &&
	grep "^mark: " comments >marks && cat marks &&
	test_line_count 4 marks &&
	awk "NR == 1 && \$6 == \"[fork]\" && \$7 == \"child\" && \$8 == $(cat child.pid) { n++ }
		NR == 2 && \$6 == \"[snapshot]\" { n++ } NR == 3 && \$6 == \"[snapshot]\" { n++ }
		NR == 4 && \$6 == \"[exec]\" { n++ }
		\$3 != 1 || \$4 != \$5 || \$4 < last { print \"bad: \" \$0; exit 1 }
		{ last = \$4 } END { if (n != 4) { print n; exit 1 } }" marks &&
	"$RPERF" report --stdio ev.pb.gz >ev.txt &&
	sed -n "/^Process events/,/^\$/p" ev.txt >events.txt && cat events.txt &&
	test "$(grep -E -c "^ *[0-9.,]+  ([0-9]+/)?1  +\[" events.txt)" = 4 &&
	"$RPERF" report --timeline -o ev.svg ev.pb.gz &&
	test_grep "\[exec\]" ev.svg
'

test_done
