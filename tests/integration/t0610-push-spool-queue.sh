#!/bin/sh
# rperf record --push against a server that accepts connections and never
# answers: whatever is not sent is spooled, while the script runs as well
# as at its end, so the spool files cover the whole run; --spool-max
# bounds the spool directory and says what it dropped.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/push-lib.sh"

# The sum of until-ns - from-ns over the spool files in DIR, in ns.
spool_span_ns() {
	cat "$1"/*.spool | tr -d '\000' | awk '
		/^from-ns: / { from = $2 }
		/^until-ns: / { sum += $2 - from }
		END { printf "%.0f\n", sum }'
}

# The Duration: line of rperf report of $1, in ns.
report_duration_ns() {
	"$RPERF" report "$1" >"$1.report" &&
	d=$(sed -n "s/^Duration: *//p" "$1.report" | sed "s/ ms.*//" | tr -d ,) &&
	awk -v d="$d" "BEGIN { printf \"%.0f\", d * 1e6 }"
}

test_expect_success 'a server that never answers: the spool covers the whole run' '
	receiver_start r1 --hang &&
	rc=0 && "$RPERF" record -m wall -o whole.pb.gz --push "$URL" \
	    --push-interval 0.1 --push-timeout 0.5 --spool spool \
	    -e "t = Time.now; sleep 0.01 while Time.now - t < 5" >out 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 &&
	n=$(ls spool/*.spool | wc -l) &&
	span=$(spool_span_ns spool) &&
	whole=$(report_duration_ns whole.pb.gz) &&
	echo "$n spool files covering $span ns of a $whole ns run" &&
	# about 50 intervals; the queue alone never kept more than 17
	test "$n" -ge 25 &&
	within_pct "$span" "$whole" 3 &&
	test_grep ! "dropped" err &&
	# one line names the first file, one at the end counts them all
	test "$(grep -c "saved an unsent profile" err)" -eq 1 &&
	test_grep "^rperf record: push: saved $n unsent profiles in .spool.$" err
'

test_expect_success 'a relative --spool is where it was named, whatever the script chdirs to' '
	receiver_start r1c --hang &&
	mkdir elsewhere &&
	rc=0 && "$RPERF" record -m wall -o /dev/null --push "$URL" \
	    --push-interval 0.1 --push-timeout 0.3 --spool spoolc \
	    -e "Dir.chdir(%q(elsewhere)); t = Time.now; sleep 0.01 while Time.now - t < 1" \
	    >out 2>err || rc=$?
	receiver_stop &&
	cat err &&
	test "$rc" -eq 0 &&
	test "$(ls spoolc/*.spool | wc -l)" -ge 3 &&
	test ! -e elsewhere/spoolc &&
	test_grep "^rperf record: push: saved an unsent profile to .spoolc/[^/]+\.spool.$" err
'

test_expect_success 'with -q, spooling is silent' '
	receiver_start r1q --hang &&
	rc=0 && "$RPERF" record -q -m wall -o /dev/null --push "$URL" \
	    --push-interval 0.1 --push-timeout 0.3 --spool spoolq \
	    -e "t = Time.now; sleep 0.01 while Time.now - t < 1" >out 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 &&
	test "$(ls spoolq/*.spool | wc -l)" -ge 3 &&
	test_grep ! "saved" err
'

test_expect_success 'a tiny --spool-max: what does not fit is dropped, and said so' '
	receiver_start r2 --hang &&
	rc=0 && "$RPERF" record -m wall -o /dev/null --push "$URL" \
	    --push-interval 0.1 --push-timeout 0.3 --spool spool2 --spool-max 3k \
	    -e "t = Time.now; sleep 0.01 while Time.now - t < 2" >out 2>err || rc=$?
	receiver_stop &&
	cat err &&
	test "$rc" -eq 0 &&
	size=$(cat spool2/*.spool | wc -c) &&
	echo "$size bytes spooled" &&
	test "$size" -le 3072 && test "$size" -gt 0 &&
	test_grep "^rperf record: push: the spool directory .spool2. is at its limit of 3k: dropping" err &&
	test_grep "^rperf record: push: dropped [0-9]+ unsent intervals \([0-9.]+ s of profile, [0-9]+ bytes\) over the spool limit of 3k of .spool2.$" err &&
	kept=$(ls spool2/*.spool | wc -l) &&
	dropped=$(sed -n "s/.*dropped \([0-9]*\) unsent.*/\1/p" err) &&
	echo "kept $kept dropped $dropped" &&
	test $((kept + dropped)) -ge 10
'

test_expect_success 'a spool directory that cannot be made: one line, a count, status 1' '
	: >notadir &&
	receiver_start r3 --hang &&
	rc=0 && "$RPERF" record -q -m wall -o /dev/null --push "$URL" \
	    --push-interval 0.1 --push-timeout 0.3 --spool notadir/spool \
	    -e "t = Time.now; sleep 0.01 while Time.now - t < 2" >out 2>err || rc=$?
	receiver_stop &&
	cat err &&
	test "$rc" -eq 1 &&
	test_grep "^rperf record: push: could not keep an unsent profile: cannot create .notadir/spool.: Not a directory$" err &&
	test "$(grep -c "could not keep an unsent" err)" -eq 1 &&
	test_grep "^rperf record: push: could not keep [0-9]+ unsent profiles in .notadir/spool.$" err &&
	test_line_count 2 err
'

test_expect_success '--spool-max takes k, M and G, and goes with --push' '
	test_expect_code 2 "$RPERF" record --push http://127.0.0.1:1 --spool-max 0 -e 1 2>err &&
	test_grep "invalid --spool-max .0." err &&
	test_expect_code 2 "$RPERF" record --push http://127.0.0.1:1 --spool-max 10T -e 1 2>err &&
	test_grep "invalid --spool-max .10T." err &&
	test_expect_code 2 "$RPERF" record --spool-max 1M -e 1 2>err &&
	test_grep "go with --push URL" err
'

test_done
