#!/bin/sh
# rperf diff --fail-over: the regression gate.  Profiles of known weights
# (folded stacks) where the target is 10% slower: the gate trips above
# the limit and names what grew, passes within it, looks only at the
# --focus functions when asked, compares medians of several runs (one
# outlier does not trip it), compares shares of the total with
# --normalize; bad limits are usage errors, unreadable profiles errors.
# Then the same with real recordings of a slow and a fast variant.
. "$TEST_SRCDIR/test-lib.sh"

# 100 ms against 110 ms: fib grows from 50 to 60 ms, the rest stays.
cat >base.folded <<'EOF2'
main;work;fib 50000000
main;work;old 20000000
main;io 30000000
EOF2
cat >target.folded <<'EOF2'
main;work;fib 60000000
main;work;old 20000000
main;io 30000000
EOF2

# Runs of the same program, 99 to 102 ms; t3 is an outlier.
runs() {
	for r in "$@"; do
		name=${r%%=*} && ms=${r#*=} &&
		printf "main;work;fib %s000000\nmain;io 20000000\n" \
		    $((ms - 20)) >"$name.folded" || return 1
	done
}

test_expect_success 'over the limit: status 1, what grew on stderr, the report on stdout' '
	test_expect_code 1 "$RPERF" diff --fail-over 5 base.folded target.folded \
	    >out 2>err &&
	cat err &&
	test_grep "^Delta: +\+10.00 ms \(\+10.0%\)$" out &&
	test_grep "^rperf diff: regression: total 100.00 ms -> 110.00 ms \(\+10.0%, limit 5%\)$" err &&
	sed -n 2p err | grep -q "^  fib  *50.00 ms -> 60.00 ms (+20.0%)$" &&
	sed -n 3p err | grep -q "^  work  *70.00 ms -> 80.00 ms (+14.3%)$" &&
	test_grep ! "^  (main|old|io) " err &&
	test_line_count 3 err
'

test_expect_success 'within the limit: status 0 and one line' '
	"$RPERF" diff --fail-over 20 base.folded target.folded >out 2>err &&
	test_grep "^rperf diff: within the limit: total 100.00 ms -> 110.00 ms \(\+10.0%, limit 20%\)$" err &&
	test_line_count 1 err &&
	"$RPERF" diff --fail-over 10 base.folded target.folded 2>err &&
	"$RPERF" diff --fail-over 10% target.folded base.folded 2>err &&
	test_grep "\(-9.1%, limit 10%\)" err
'

test_expect_success '--focus: the gate looks at the matching functions only' '
	"$RPERF" diff --fail-over 5 --focus old base.folded target.folded 2>err &&
	test_grep "within the limit: focused time 20.00 ms -> 20.00 ms" err &&
	test_expect_code 1 "$RPERF" diff --fail-over 15 --focus fib \
	    base.folded target.folded 2>err &&
	test_grep "^rperf diff: regression: focused time 50.00 ms -> 60.00 ms \(\+20.0%, limit 15%\)$" err &&
	test_grep "^  fib  50.00 ms -> 60.00 ms \(\+20.0%\)$" err &&
	test_line_count 2 err
'

test_expect_success 'several runs: medians, so one outlier does not trip the gate' '
	runs b1=100 b2=99 b3=101 t1=101 t2=102 t3=150 &&
	"$RPERF" diff --fail-over 5 b1.folded b2.folded b3.folded -- \
	    t1.folded t2.folded t3.folded >out 2>err &&
	test_grep "total 100.00 ms -> 102.00 ms \(\+2.0%, limit 5%; medians of 3 and 3 runs\)$" err &&
	test_grep "^Base: +b1.folded \(the median of 3 runs\), total 100.00 ms$" out &&
	test_grep "^Target: +t2.folded \(the median of 3 runs\), total 102.00 ms$" out &&
	test_expect_code 1 "$RPERF" diff --fail-over 5 t1.folded -- t3.folded 2>err &&
	test_grep "regression: total 101.00 ms -> 150.00 ms" err &&
	runs t4=120 t5=125 &&
	test_expect_code 1 "$RPERF" diff --fail-over 5 b1.folded b2.folded b3.folded -- \
	    t1.folded t4.folded t5.folded >out 2>err &&
	test_grep "total 100.00 ms -> 120.00 ms \(\+20.0%, limit 5%; medians of 3 and 3 runs\)$" err &&
	test_grep "^Target: +t4.folded \(the median of 3 runs\)" out &&
	test_grep "^  fib" err
'

test_expect_success 'one run a side with or without --, and the profiles without a gate' '
	"$RPERF" diff base.folded target.folded >a &&
	"$RPERF" diff base.folded -- target.folded >b &&
	"$RPERF" diff -- base.folded -- target.folded >c &&
	test_cmp a b && test_cmp a c &&
	"$RPERF" diff b1.folded b2.folded -- t1.folded >out &&
	test_grep "^Base: +b2.folded \(the median of 2 runs\)" out
'

# A uniformly slower run (another machine) and one where fib's share grew.
cat >slow.folded <<'EOF2'
main;work;fib 100000000
main;work;old 40000000
main;io 60000000
EOF2

test_expect_success '--normalize: the share of the total that --focus picks out' '
	"$RPERF" diff --normalize --fail-over 5 --focus fib base.folded slow.folded \
	    >out 2>err &&
	test_grep "within the limit: focused share 50.0% -> 50.0% of the total \(\+0.0%" err &&
	test_expect_code 1 "$RPERF" diff --normalize --fail-over 5 --focus fib \
	    base.folded target.folded >out 2>err &&
	test_grep "^rperf diff: regression: focused share 50.0% -> 54.5% of the total \(\+9.1%, limit 5%\)$" err &&
	test_grep "^  fib  55.00 ms -> 60.00 ms \(\+9.1%\)$" err &&
	test_grep "^Scale: " out &&
	test_expect_code 2 "$RPERF" diff --normalize --fail-over 5 base.folded \
	    target.folded 2>err &&
	test_grep "needs --focus" err
'

test_expect_success 'a bad limit is a usage error (status 2)' '
	for pct in 0 -5 abc "" 5x nan inf 0%; do
		test_expect_code 2 "$RPERF" diff --fail-over "$pct" base.folded \
		    target.folded 2>err &&
		test_grep "invalid --fail-over" err || return 1
	done &&
	test_expect_code 2 "$RPERF" diff --fail-over 2>err &&
	test_expect_code 2 "$RPERF" diff b1.folded -- 2>err &&
	test_expect_code 2 "$RPERF" diff -- b1.folded 2>err &&
	test_expect_code 2 "$RPERF" diff b1.folded -- t1.folded -- t2.folded 2>err &&
	test_expect_code 2 "$RPERF" diff b1.folded b2.folded t1.folded 2>err &&
	test_grep "BASE... -- TARGET..." err &&
	test_expect_code 2 "$RPERF" diff b1.folded -- t1.folded --fail-over 5 2>err &&
	test_grep "option .--fail-over. after the profiles" err
'

test_expect_success 'a missing or corrupt run: one line naming it, status 1' '
	test_expect_code 1 "$RPERF" diff --fail-over 5 b1.folded missing.pb.gz -- \
	    t1.folded >out 2>err &&
	test_grep "^rperf diff: cannot read .missing.pb.gz.: No such file or directory$" err &&
	test_line_count 1 err &&
	printf "junk\n" >junk &&
	test_expect_code 1 "$RPERF" diff --fail-over 5 b1.folded -- t1.folded \
	    junk >out 2>err &&
	test_grep "junk" err &&
	test_line_count 1 err
'

# Real recordings: spin does four times the work in the slow variant.
# (Twice was too close: on a VM whose host was busy, two of the three
# fast runs took twice their CPU time for the same work, and the medians
# came out 3.5% apart.  The same variant is compared as medians of three
# runs too: one run of the fast one there took 2.4 times the others.  And
# with --normalize, as rperf-diff(1) advises where the machine's speed
# moves between runs: in a CI run here, on the 3.3 build, medians of
# three against three of the same work came out more than 50% apart in
# CPU time.)
test_expect_success 'recorded runs: the slow variant trips the gate, the same one does not' '
	for i in 1 2 3; do
		"$RPERF" record -q -o fast$i.pb.gz "$FIXTURES/hot.rb" 1 &&
		"$RPERF" record -q -o again$i.pb.gz "$FIXTURES/hot.rb" 1 &&
		"$RPERF" record -q -o slow$i.pb.gz "$FIXTURES/hot.rb" 4 || return 1
	done &&
	test_expect_code 1 "$RPERF" diff --fail-over 30 --focus Object#spin \
	    fast1.pb.gz fast2.pb.gz fast3.pb.gz -- slow1.pb.gz slow2.pb.gz \
	    slow3.pb.gz >out 2>err &&
	cat err &&
	test_grep "^rperf diff: regression: focused time .*medians of 3 and 3 runs\)$" err &&
	test_grep "^  Object#spin " err &&
	"$RPERF" diff --normalize --fail-over 50 --focus Object#spin fast1.pb.gz \
	    fast2.pb.gz fast3.pb.gz -- again1.pb.gz again2.pb.gz again3.pb.gz >out 2>err &&
	cat err &&
	test_grep "within the limit" err
'

test_done
