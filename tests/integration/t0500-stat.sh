#!/bin/sh
# rperf stat and rperf exec: the summary, its figures, --json, -r, status.
. "$TEST_SRCDIR/test-lib.sh"

# The value of a summary line (first field, without separators).
figure() {
	awk -v l="$2" '!/Performance counter/ && index($0, l) { gsub(",", "", $1); print $1; exit }' "$1"
}
# The percent column of a time-breakdown line.
percent() {
	awk -v l="$2" 'index($0, l) { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub("%", "", $i); print $i; exit } }' "$1"
}

test_expect_success 'a CPU-bound script is nearly all CPU execution' '
	"$RPERF" stat "$FIXTURES/hot.rb" 4 >out 2>err &&
	test_grep "Performance counter stats for .rperf stat .*hot.rb 4. \(wall mode, 1000 Hz\)" err &&
	cpu=$(percent err "CPU execution") &&
	echo "cpu $cpu%" &&
	num_ge "$cpu" 80 &&
	test_grep "\[rperf\]" err && test_grep "\[ruby\]" err && test_grep "\[os\]" err &&
	test ! -s out
'

test_expect_success 'a sleep in wall mode is GVL blocked time' '
	"$RPERF" stat "$FIXTURES/sleeper.rb" 0.5 2>err &&
	blocked=$(figure err "GVL blocked") &&
	echo "blocked $blocked ms" &&
	num_ge "$blocked" 490 &&
	within_pct "$blocked" 500 5
'

test_expect_success 'contending threads show GVL wait' '
	"$RPERF" stat "$FIXTURES/threads.rb" 4 2>err &&
	wait=$(figure err "GVL wait") &&
	echo "wait $wait ms" &&
	num_ge "$wait" 50 &&
	test "$(figure err threads)" -ge 5
'

test_expect_success 'a GC-heavy script shows GC runs and time' '
	"$RPERF" stat "$FIXTURES/gc_heavy.rb" >out 2>err &&
	test_grep "gc ran" out &&
	num_ge "$(figure err "GC runs")" 5 &&
	num_ge "$(figure err "GC marking")" 1 &&
	num_ge "$(figure err "allocated objects")" 1000000
'

test_expect_success '--json: one object, numbers as numbers, same figures as the text' '
	"$RPERF" stat --json "$FIXTURES/gc_heavy.rb" >out 2>json &&
	test_line_count 1 json &&
	"$RUBY" -rjson -e "
		j = JSON.parse(File.read(ARGV[0]))
		%w[user_ms sys_ms real_ms cpu_execution_ms gvl_blocked_ms gvl_wait_ms gc_marking_ms
		   gc_sweeping_ms gc_runs gc_time_ms allocated_objects freed_objects heap_pages threads
		   peak_rss_kb page_faults_minor context_switches_voluntary samples timer_triggers
		   profiler_overhead_pct].each { |k| raise \"#{k}: #{j[k].inspect}\" unless j[k].is_a?(Numeric) }
		raise \"mode\" unless j[\"mode\"] == \"wall\" && j[\"runs\"] == 1 && j[\"exit_status\"] == 0
		raise \"gc\" unless j[\"gc_runs\"] >= 5 && j[\"allocated_objects\"] >= 1_000_000
		puts j.keys.size" json >keys &&
	"$RPERF" stat "$FIXTURES/gc_heavy.rb" 2>text &&
	lines=$(grep -c "\[\(os\|ruby\|rperf\)\]" text) &&
	test "$(cat keys)" -eq $((lines + 5))
'

test_expect_success 'the exit status and the output are the script'"'"'s' '
	test_expect_code 7 "$RPERF" stat -e "puts :hello; warn :oops; exit 7" >out 2>err &&
	test_grep "^hello$" out && test_line_count 1 out &&
	test_grep "^oops$" err &&
	test_grep "Performance counter stats" err &&
	test_expect_code 1 "$RPERF" stat -e "raise %q(boom)" 2>err &&
	test_grep "boom \(RuntimeError\)" err
'

test_expect_success '-r 3: mean and deviation over three runs' '
	"$RPERF" stat -r 3 -m cpu "$FIXTURES/hot.rb" 1 2>err &&
	test_grep "\(3 runs\)" err &&
	test_grep "\( \+- *[0-9.]+% \)" err &&
	"$RPERF" stat -r 2 --json -e "1" 2>json &&
	"$RUBY" -rjson -e "j = JSON.parse(File.read(ARGV[0])); raise unless j[%q(runs)] == 2 && j.key?(%q(real_ms_stddev))" json
'

test_expect_success '-o also saves the profile; exec adds the top tables' '
	"$RPERF" stat -o s.pb.gz "$FIXTURES/hot.rb" 1 2>err &&
	test -s s.pb.gz &&
	"$RPERF" report s.pb.gz >rep && test_grep "Object#spin" rep &&
	"$RPERF" exec --top 5 "$FIXTURES/hot.rb" 1 2>err &&
	test_grep "Performance counter stats" err &&
	test_grep "^Flat" err &&
	test_grep "Object#spin" err
'

test_expect_success 'usage errors exit 2' '
	test_expect_code 2 "$RPERF" stat -r 0 -e 1 2>err &&
	test_grep "invalid --repeat" err &&
	test_expect_code 2 "$RPERF" stat -m bogus -e 1 2>err &&
	test_expect_code 2 "$RPERF" stat 2>err &&
	test_grep "no script given" err
'

test_done
