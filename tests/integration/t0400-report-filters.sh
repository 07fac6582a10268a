#!/bin/sh
# rperf report's filters (--focus, --ignore, --tagfocus, --tagignore,
# --thread), --min-percent and --tree, on folded files with known weights
# and on a recorded profile; filters apply to conversions too; bad
# values are usage errors.
. "$TEST_SRCDIR/test-lib.sh"

cat >k.folded <<'EOF2'
main;work;fib;fib 60000000
main;work;hot 30000000
main;idle;[GVL blocked] 8000000
main;gc;[GC marking] 2000000
EOF2

test_expect_success '--focus keeps only matching stacks and says so' '
	"$RPERF" report --focus "^fib$" k.folded >out &&
	test_grep "^Filters: +--focus .\^fib\\$. \(kept 60.00 of 100.00 ms, 60.0%\)$" out &&
	test_grep "^Total: +60.00 ms" out &&
	test_grep ! "hot" out
'

test_expect_success '--ignore drops matching stacks; filters combine' '
	"$RPERF" report --ignore fib --ignore idle k.folded >out &&
	test_grep "^Total: +32.00 ms" out &&
	"$RPERF" report --focus work --ignore fib k.folded >out &&
	test_grep "^Total: +30.00 ms" out &&
	test_grep "^Filters: +--focus .work. --ignore .fib." out
'

test_expect_success '--tagfocus and --tagignore work on VM states' '
	"$RPERF" report --tagfocus %GVL=blocked k.folded >out &&
	test_grep "^Total: +8.00 ms" out &&
	"$RPERF" report --tagignore %GVL=blocked --tagignore %GC=mark k.folded >out &&
	test_grep "^Total: +90.00 ms" out &&
	test_grep "^Filters: +--tagignore %GVL=blocked --tagignore %GC=mark" out &&
	"$RPERF" report --tagfocus %GVL=blocked --tagfocus %GVL=wait k.folded >out &&
	test_grep "^Total: +8.00 ms" out
'

test_expect_success 'filters apply to conversions' '
	"$RPERF" report --focus fib -o f.folded k.folded &&
	test_line_count 1 f.folded &&
	test_grep "^main;work;fib;fib 60000000$" f.folded &&
	"$RPERF" report --ignore fib -o f.pb.gz k.folded &&
	"$RPERF" report -o back.folded f.pb.gz &&
	test_line_count 3 back.folded &&
	test "$(folded_sum back.folded)" -eq 40000000
'

test_expect_success 'no sample left: said so, status 0' '
	"$RPERF" report --focus nothing-like-this k.folded >out &&
	test_grep "no samples match the filters" out
'

test_expect_success '--min-percent cuts the tables' '
	"$RPERF" report --min-percent 25 k.folded >out &&
	sed -n "/^Flat/,/^$/p" out >flat &&
	test_grep "fib" flat && test_grep "hot" flat &&
	test_grep ! "idle" flat
'

test_expect_success '--tree prints the call tree, root first, cut at 1%' '
	printf "main;tiny 500000\n" >>k.folded &&
	"$RPERF" report --tree k.folded >tree &&
	cat tree &&
	sed -n 3p tree | grep -q "^ *100.50  100.0%  main$" &&
	sed -n 4p tree | grep -q "^ *90.00   89.6%    work$" &&
	sed -n 5p tree | grep -q "^ *60.00   59.7%      fib$" &&
	sed -n 6p tree | grep -q "^ *60.00   59.7%        fib$" &&
	test_grep "^ *8.00    8.0%      \[GVL blocked\]$" tree &&
	test_grep ! "tiny" tree &&
	"$RPERF" report --tree --min-percent 0 k.folded >tree0 &&
	test_grep "tiny" tree0 &&
	"$RPERF" report --tree --min-percent 50 k.folded >tree50 &&
	test_grep ! "idle" tree50
'

test_expect_success 'filters on a recorded profile: threads and GVL states' '
	"$RPERF" record -q -m wall -o t.pb.gz "$FIXTURES/threads.rb" &&
	"$RPERF" report --thread 1 t.pb.gz >one &&
	test_grep "^Filters: +--thread 1 " one &&
	sed -n "/^Threads:/,\$p" one >threads &&
	test_line_count 3 threads &&
	"$RPERF" report --tagfocus thread=1 t.pb.gz >one2 &&
	test_grep "^Total:" one2 &&
	test "$(grep "^Total:" one)" = "$(grep "^Total:" one2)" &&
	"$RPERF" report --tagignore %GVL=blocked -o nb.folded t.pb.gz &&
	test_grep ! "GVL blocked" nb.folded
'

test_expect_success 'bad filter values are usage errors (status 2)' '
	test_expect_code 2 "$RPERF" report --focus "(" k.folded 2>err &&
	test_grep "invalid regex" err &&
	test_expect_code 2 "$RPERF" report --ignore "[" k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --tagfocus nokey k.folded 2>err &&
	test_grep "KEY=VALUE" err &&
	test_expect_code 2 "$RPERF" report --tagignore =x k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --min-percent 101 k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --min-percent abc k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --thread "" k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --tree --format pprof k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --format png k.folded 2>err
'

test_done
