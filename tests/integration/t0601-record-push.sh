#!/bin/sh
# rperf record --push: every interval reaches the ingest endpoint, the
# intervals add up to the run, retries, spooling, auth and secrets.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/push-lib.sh"

# Sum of the wall/cpu values of a received profile, via rperf report.
received_ns() {
	cp "$1.profile" "$1.pb.gz" &&
	"$RPERF" report --format folded -o "$1.folded" "$1.pb.gz" &&
	folded_sum "$1.folded"
}

test_expect_success 'a 3 s script with --push-interval 1: an interval a second, adding up' '
	receiver_start r1 &&
	RPERF_PUSH_TOKEN=s3cr3t "$RPERF" record -m wall -o whole.pb.gz --push "$URL" \
	    --push-interval 1 --app-name shop --tag env=test --tenant acme \
	    --push-header "X-Extra: hello" -e "
		t = Time.now; x = 0
		while Time.now - t < 3; x += 1; sleep 0.01 if x % 5000 == 0; end" >out 2>err &&
	receiver_stop &&
	n=$(ls r1/*.profile | wc -l) &&
	echo "$n intervals" &&
	test "$n" -ge 3 && test "$n" -le 5 &&
	test "$(param r1/1 name)" = "shop.wall{env=test}" &&
	test "$(param r1/1 format)" = pprof &&
	test "$(param r1/1 spyName)" = rperf &&
	test "$(param r1/1 sampleRate)" = 1000 &&
	grep -qi "^x-scope-orgid: acme" r1/1.headers &&
	grep -qi "^x-extra: hello" r1/1.headers &&
	grep -qi "^authorization: bearer s3cr3t" r1/1.headers &&
	! grep -q s3cr3t out err &&
	sum=0 &&
	for f in r1/*.profile; do
		v=$(received_ns "${f%.profile}") || exit 1
		sum=$((sum + v))
	done &&
	"$RPERF" report --format folded -o whole.folded whole.pb.gz &&
	whole=$(folded_sum whole.folded) &&
	echo "intervals $sum whole $whole" &&
	test "$sum" -eq "$whole" &&
	if test -n "$GO"; then
		"$GO" tool pprof -raw r1/1.pb.gz >raw 2>&1 && test_grep "^PeriodType: wall" raw
	fi
'

test_expect_success 'the server is down at the start, then up: intervals arrive after retries' '
	receiver_start r2 --start-after 1.5 &&
	"$RPERF" record -q -o /dev/null --push "$URL" --push-interval 0.5 --push-timeout 10 \
	    -e "t = Time.now; 1 while Time.now - t < 2.5" 2>err &&
	receiver_stop &&
	n=$(ls r2/*.profile | wc -l) &&
	echo "$n intervals" &&
	test "$n" -ge 4
'

test_expect_success 'the server never comes up: intervals are spooled, rperf push sends them later' '
	receiver_start r3 &&
	receiver_stop &&
	"$RPERF" record -o /dev/null --push "$URL" --push-interval 0.5 --push-timeout 1 \
	    --spool spool -e "t = Time.now; 1 while Time.now - t < 1.2" 2>err &&
	test_grep "saved an unsent profile" err &&
	n=$(ls spool/*.spool | wc -l) &&
	test "$n" -ge 2 &&
	receiver_start r4 &&
	"$RPERF" push --url "$URL" spool &&
	receiver_stop &&
	test "$(ls r4/*.profile | wc -l)" -eq "$n" &&
	test -z "$(ls spool)"
'

test_expect_success 'a 401: one clear line, no secret, the run goes on' '
	receiver_start r5 --status 401 &&
	rc=0 &&
	"$RPERF" record -o /dev/null --push "http://user:pw@${URL#http://}" \
	    --push-header "X-Api-Key: t0ps3cret" --push-interval 0.5 --push-timeout 1 \
	    --spool spool5 -e "t = Time.now; 1 while Time.now - t < 1" \
	    >out 2>err || rc=$? &&
	receiver_stop &&
	test_grep "failed: 401" err &&
	! grep -q "t0ps3cret\|user:pw\|:pw@" out err &&
	test "$(grep -c "failed: 401" err)" -eq 1
'

test_expect_success 'record --push usage errors exit 2' '
	test_expect_code 2 "$RPERF" record --push ftp://x -e 1 2>err &&
	test_expect_code 2 "$RPERF" record --tag a=b -e 1 2>err &&
	test_expect_code 2 "$RPERF" record --push http://127.0.0.1:1 --push-interval 0 -e 1 2>err
'

test_expect_success 'memory profiles are pushed too: intervals of allocations, what is in use at each' '
	receiver_start r9 &&
	"$RPERF" record -q -m alloc -o whole-alloc.pb.gz --push "$URL" --push-interval 0.5 \
	    --app-name mem -e "
		keep = []; t = Time.now
		while Time.now - t < 2; keep << Array.new(20) { |i| i.to_s }; keep.shift if keep.size > 2000; end" 2>err &&
	receiver_stop &&
	n=$(ls r9/*.profile | wc -l) &&
	echo "$n intervals" &&
	test "$n" -ge 3 &&
	test "$(param r9/1 name)" = "mem.alloc{}" &&
	sum=0 &&
	for f in r9/*.profile; do
		cp "$f" "${f%.profile}.pb.gz" &&
		"$RPERF" report --sample-index alloc_objects --format folded \
		    -o "${f%.profile}.folded" "${f%.profile}.pb.gz" &&
		sum=$((sum + $(folded_sum "${f%.profile}.folded"))) || exit 1
	done &&
	"$RPERF" report --sample-index alloc_objects --format folded -o wa.folded whole-alloc.pb.gz &&
	whole=$(folded_sum wa.folded) &&
	echo "allocated: intervals $sum, whole run $whole" &&
	test "$sum" -eq "$whole" &&
	"$RPERF" report --sample-index inuse_objects --format folded -o in1.folded r9/1.pb.gz &&
	test "$(folded_sum in1.folded)" -gt 0 &&
	receiver_start r10 &&
	"$RPERF" record -q --alloc -o /dev/null --push "$URL" --push-interval 0.5 \
	    -e "t = Time.now; a = []; a << \"x\" * 10 while Time.now - t < 1" 2>err &&
	receiver_stop &&
	test "$(param r10/1 name)" = "$(basename "$(pwd)").cpu{}" ||
	case "$(param r10/1 name)" in *.cpu{}) ;; *) false ;; esac &&
	cp r10/1.profile r10-1.pb.gz &&
	"$RPERF" report --sample-index alloc_space r10-1.pb.gz >r10.txt &&
	test_grep "^Total: .*alloc_space" r10.txt
'

test_done
