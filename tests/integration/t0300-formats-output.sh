#!/bin/sh
# Output formats: chosen by option or extension, readable by go tool
# pprof with the same totals as rperf's own report, and convertible.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success 'record a wall profile with a sleep' '
	"$RPERF" record -q -m wall -o s.pb.gz "$FIXTURES/sleeper.rb" 0.3 &&
	test -s s.pb.gz &&
	od -An -tx1 -N2 s.pb.gz | grep -q "1f 8b"
'

test_expect_success 'formats follow the extension or --format' '
	"$RPERF" record -q -o a.folded -e 1 && test_grep " [0-9]+$" a.folded &&
	"$RPERF" record -q -o a.collapsed -e 1 && test_grep " [0-9]+$" a.collapsed &&
	"$RPERF" record -q -o a.txt -e 1 && test_grep "^Mode: " a.txt &&
	"$RPERF" record -q -o a.data -e 1 && od -An -tx1 -N2 a.data | grep -q "1f 8b" &&
	"$RPERF" record -q --format text -o b.data -e 1 && test_grep "^Mode: " b.data &&
	"$RPERF" record -q --format folded -o - -e 1 >c.out && test_grep " [0-9]+$" c.out &&
	"$RPERF" record -q -p -e 1 >d.out && test_grep "^Total: " d.out &&
	! test -e rperf.data
'

test_expect_success 'rperf report reads what record wrote' '
	"$RPERF" report s.pb.gz >report &&
	test_grep "^Mode: +wall" report &&
	test_grep "Kernel#sleep" report
'

if test -n "$GO" && "$GO" version >/dev/null 2>&1; then
	test_expect_success 'go tool pprof -top agrees with rperf on the total' '
		"$GO" tool pprof -top -unit=ns s.pb.gz >top 2>&1 &&
		go_total=$(sed -n "s/.*Total samples = \([0-9]*\)ns.*/\1/p" top) &&
		ours=$(sed -n "s/^Total: *//p" report | sed "s/ ms.*//" | tr -d ,) &&
		ours_ns=$(awk -v t="$ours" "BEGIN { printf \"%d\", t * 1e6 }") &&
		echo "go $go_total rperf $ours_ns" &&
		within_pct "$go_total" "$ours_ns" 0.01
	'

	test_expect_success 'go tool pprof -tagfocus=%GVL=blocked agrees with the folded stacks' '
		"$GO" tool pprof -top -unit=ns -nodefraction=0 -tagfocus=%GVL=blocked s.pb.gz >blocked 2>&1 &&
		go_blocked=$(sed -n "s/^Showing nodes accounting for \([0-9]*\)ns.*/\1/p" blocked) &&
		"$RPERF" report -o s.folded s.pb.gz &&
		# (go shows no node for a sample without frames; leave those out)
		ours=$(folded_sum s.folded ";\[GVL blocked\] ") &&
		echo "go $go_blocked rperf $ours" &&
		test "$go_blocked" -eq "$ours" &&
		num_ge "$ours" 290000000
	'

	test_expect_success 'go tool pprof -raw reads every sample' '
		"$GO" tool pprof -raw s.pb.gz >raw 2>&1 &&
		test_grep "^PeriodType: wall nanoseconds" raw &&
		test_grep "samples/count wall/nanoseconds" raw &&
		test_grep "thread:\[1\]" raw &&
		test_grep "%GVL:\[blocked\]" raw
	'
else
	test_skip 'go tool pprof checks' 'no go'
fi

test_expect_success 'pprof -> folded -> pprof -> folded keeps every weight' '
	"$RPERF" report -o one.folded s.pb.gz &&
	"$RPERF" report -o back.pb.gz one.folded &&
	"$RPERF" report -o two.folded back.pb.gz &&
	test_cmp one.folded two.folded &&
	test "$(folded_sum one.folded)" -eq "$(folded_sum s.folded)"
'

test_expect_success 'bad input to report: one line, status 1' '
	test_expect_code 1 "$RPERF" report missing.data 2>err &&
	test_grep "^rperf report: cannot read .missing.data.: No such file or directory$" err &&
	printf "not a profile\n" >junk &&
	test_expect_code 1 "$RPERF" report junk 2>err &&
	test_line_count 1 err &&
	head -c 100 s.pb.gz >cut.pb.gz &&
	test_expect_code 1 "$RPERF" report cut.pb.gz 2>err &&
	test_grep "cut.pb.gz" err && test_line_count 1 err &&
	: >empty.data &&
	test_expect_code 1 "$RPERF" report empty.data 2>err &&
	test_grep "empty" err &&
	test_expect_code 1 timeout 10 "$RPERF" report /dev/zero 2>err &&
	test_grep "^rperf report: ./dev/zero. is not a pprof or folded profile$" err
'

test_expect_success 'an empty profile is reported as empty' '
	"$RPERF" record -q --defer -o e.pb.gz -e 1 &&
	"$RPERF" report e.pb.gz >out &&
	grep -qi "empty" out
'

test_expect_success 'report usage errors exit 2' '
	test_expect_code 2 "$RPERF" report --top 0 s.pb.gz 2>err &&
	test_expect_code 2 "$RPERF" report --sort size s.pb.gz 2>err &&
	test_expect_code 2 "$RPERF" report a b 2>err &&
	test_grep "too many arguments" err
'

test_expect_success 'every format of the table can be recorded, by name and by extension' '
	cat >hot.rb <<-\EOF &&
	def hot_loop = 300_000.times { |i| i * i }
	hot_loop
	EOF
	for f in $("$RPERF" --version | sed -n "s/^features: //p"); do
		case $f in timer-signal) continue ;; esac
		"$RPERF" record -q --format "$f" -o "by-name.$f" hot.rb || return 1
		test -s "by-name.$f" || return 1
	done &&
	"$RPERF" record -q -o flame.svg hot.rb &&
	test_grep "^<svg " flame.svg &&
	test_grep "Object#hot_loop" flame.svg &&
	test_grep "Flame Graph: rperf record -q -o flame.svg hot.rb" flame.svg &&
	test_grep "^<svg " by-name.svg &&
	"$RPERF" record -q -o snap.data -e "
		def work = 200_000.times { |i| i * i }
		work
		puts Rperf.snapshot(output: %q(snap.svg))
		begin; Rperf.snapshot(format: :json); rescue ArgumentError => e; puts e.message; end" >out &&
	test_grep "^snap.svg$" out &&
	test_grep "^<svg " snap.svg &&
	test_grep "expected pprof, folded, text, svg or speedscope" out
'

test_expect_success 'unknown formats are usage errors naming what is accepted' '
	test_expect_code 2 "$RPERF" record --format svgz -e 1 2>err &&
	test_grep "^rperf record: unknown format .svgz. \(expected pprof, folded, text, svg or speedscope\)$" err &&
	test_expect_code 2 "$RPERF" report --format json s.pb.gz 2>err &&
	test_grep "^rperf report: unknown format .json. \(expected pprof, folded, text, svg or speedscope\)$" err &&
	test_expect_code 2 "$RPERF" diff --format pprof a b 2>err &&
	test_grep "^rperf diff: unknown format .pprof. \(expected text or svg\)$" err
'

test_done
