#!/bin/sh
# rperf push against a local stand-in for Pyroscope's /ingest
# (tests/push-receiver.py): the request it makes, what the profile part
# holds, authentication and headers, errors that name the URL but never
# a secret, retries, and spool files, which are deleted only once a 2xx
# took them.
. "$TEST_SRCDIR/test-lib.sh"

. "$TEST_SRCDIR/push-lib.sh"
CHECK_PUSH="$TEST_BUILDDIR/unit/check_push"

test_expect_success 'record a cpu profile to push' '
	"$RPERF" record -q -o app.pb.gz "$FIXTURES/sleeper.rb" 0.1 &&
	"$RPERF" record -q -m wall -o walls.pb.gz "$FIXTURES/sleeper.rb" 0.2 &&
	test -s app.pb.gz && test -s walls.pb.gz
'

test_expect_success 'usage errors exit 2 and say what is wrong' '
	test_expect_code 2 "$RPERF" push app.pb.gz 2>err &&
	test_grep "^rperf push: --url is required" err &&
	test_expect_code 2 "$RPERF" push --url http://127.0.0.1:9 2>err &&
	test_grep "no file to push" err &&
	test_expect_code 2 "$RPERF" push --url ftp://h/ app.pb.gz 2>err &&
	test_grep "must start with http:// or https://" err &&
	test_expect_code 2 "$RPERF" push --url http://h/ --tag env app.pb.gz 2>err &&
	test_grep "invalid tag .env." err &&
	test_expect_code 2 "$RPERF" push --url http://h/ --mode gc app.pb.gz 2>err &&
	test_grep "invalid mode .gc." err &&
	test_expect_code 2 "$RPERF" push --url http://h/ \
	    --push-header "X-Key s3cr3t" app.pb.gz 2>err &&
	test_grep "invalid header" err && test_grep ! s3cr3t err
'

test_expect_success 'one request with the query, headers and profile' '
	receiver_start r1 &&
	rc=0 && "$RPERF" push --url "$URL/" --app-name shop --tag env=prod \
	    --tag region=eu-1 --tenant team-a --push-header "X-Extra: yes" \
	    app.pb.gz >out 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 &&
	test_grep "^sent .app.pb.gz. to .http://127.0.0.1:[0-9]+/ingest.$" out &&
	test ! -s err &&
	test_line_count 1 r1/log &&
	test_grep "^1 200 /ingest$" r1/log &&
	test "$(param r1/1 name)" = "shop.cpu{env=prod,region=eu-1}" &&
	test_grep "^name=shop\.cpu%7Benv%3Dprod%2Cregion%3Deu-1%7D&" r1/1.query &&
	test "$(param r1/1 format)" = pprof &&
	test "$(param r1/1 spyName)" = rperf &&
	test "$(param r1/1 sampleRate)" = 1000 &&
	from=$(param r1/1 from) && until=$(param r1/1 until) &&
	test "$from" -gt 1700000000 && test "$until" -ge "$from" &&
	# (an interval shorter than a second ends at from + 1, which may
	# still be the next second)
	now=$(date +%s) && test "$until" -le $((now + 1)) && test "$from" -ge $((now - 600)) &&
	test_grep "^X-Scope-OrgID: team-a$" r1/1.headers &&
	test_grep "^X-Extra: yes$" r1/1.headers &&
	test_grep "^Content-Type: multipart/form-data; boundary=" r1/1.headers &&
	test_grep "^User-Agent: rperf/" r1/1.headers &&
	test_grep ! "^Authorization:" r1/1.headers &&
	od -An -tx1 -N2 r1/1.profile | grep -q "1f 8b"
'

test_expect_success 'the profile part has the same total as rperf report' '
	want=$(report_total_ns app.pb.gz) &&
	got=$(report_total_ns r1/1.profile) &&
	echo "sent $want received $got" &&
	test "$want" -eq "$got" && test "$want" -gt 0
'

if test -n "$GO" && "$GO" version >/dev/null 2>&1; then
	test_expect_success 'go tool pprof reads the profile part, same total' '
		"$GO" tool pprof -raw r1/1.profile >raw 2>&1 &&
		test_grep "^PeriodType: cpu nanoseconds" raw &&
		"$GO" tool pprof -top -unit=ns r1/1.profile >top 2>&1 &&
		go_total=$(sed -n "s/.*Total samples = \([0-9]*\)ns.*/\1/p" top) &&
		ours=$(report_total_ns app.pb.gz) &&
		echo "go $go_total rperf $ours" &&
		within_pct "$go_total" "$ours" 0.01
	'
else
	test_skip 'go tool pprof reads the profile part' 'no go'
fi

test_expect_success 'defaults: app name from the file, mode from the profile' '
	receiver_start r2 &&
	rc=0 && "$RPERF" push -q --url "$URL" walls.pb.gz >out 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 && test ! -s out && test ! -s err &&
	test "$(param r2/1 name)" = "walls.wall{}"
'

test_expect_success 'token and basic auth are sent, never shown' '
	receiver_start r3 &&
	rc=0 && RPERF_PUSH_TOKEN=s3cr3t "$RPERF" push --url "$URL" app.pb.gz \
	    >out 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 &&
	test_grep "^Authorization: Bearer s3cr3t$" r3/1.headers &&
	test_grep ! s3cr3t out && test_grep ! s3cr3t err &&
	receiver_start r4 &&
	port=${URL##*:} &&
	rc=0 && "$RPERF" push --url "http://me:pa55w0rd@127.0.0.1:$port/" app.pb.gz \
	    >out 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 &&
	test_grep "^Authorization: Basic $(printf me:pa55w0rd | base64)$" r4/1.headers &&
	test_grep ! pa55w0rd out && test_grep ! pa55w0rd err
'

test_expect_success '401: one line naming the URL, no secret, exit 1' '
	receiver_start r5 --status 401 &&
	port=${URL##*:} &&
	rc=0 && "$RPERF" push --url "http://me:pa55w0rd@127.0.0.1:$port" \
	    --push-header "X-Api-Key: hdrs3cr3t" app.pb.gz >out 2>err || rc=$?
	receiver_stop && test "$rc" -eq 1 &&
	cat err &&
	test_line_count 1 err &&
	test_grep "^rperf push: push of .app.pb.gz. to .http://127.0.0.1:$port/ingest. failed: 401 Unauthorized" err &&
	test_grep ! "s3cr3t|pa55w0rd" err && test_grep ! "s3cr3t|pa55w0rd" out &&
	test_line_count 1 r5/log &&
	receiver_start r5b --status 401 &&
	export RPERF_PUSH_TOKEN=s3cr3t &&
	rc=0 && "$RPERF" push --url "$URL" \
	    --push-header "X-Api-Key: hdrs3cr3t" app.pb.gz >out 2>err || rc=$?
	receiver_stop && test "$rc" -eq 1 &&
	test_line_count 1 err &&
	test_grep "failed: 401 Unauthorized" err &&
	test_grep ! "s3cr3t" err && test_grep ! "s3cr3t" out
'

test_expect_success '503 twice, then 200: retried and sent' '
	receiver_start r6 --fail-first 2 &&
	rc=0 && "$RPERF" push -q --url "$URL" app.pb.gz 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 && test ! -s err &&
	test_line_count 3 r6/log && test_grep "^3 200 " r6/log
'

test_expect_success 'a server down at first: retried until it is up' '
	receiver_start r7 --start-after 1 &&
	rc=0 && "$RPERF" push -q --url "$URL" app.pb.gz 2>err || rc=$?
	receiver_stop &&
	test "$rc" -eq 0 && test_line_count 1 r7/log
'

test_expect_success 'a server that stays down: gives up after --push-timeout' '
	receiver_start r8 --status 503 &&
	start=$(date +%s) &&
	rc=0 && "$RPERF" push --push-timeout 1.5 --url "$URL" \
	    app.pb.gz 2>err || rc=$?
	receiver_stop && test "$rc" -eq 1 &&
	test $(($(date +%s) - start)) -le 5 &&
	test_line_count 1 err &&
	test_grep "failed: 503 Service Unavailable" err &&
	test -f app.pb.gz
'

if test -x "$CHECK_PUSH"; then
	test_expect_success 'spool files written at exit when the server is down' '
		receiver_start r9 --status 503 &&
		rc=0 && "$CHECK_PUSH" --spool spool "$URL" app.pb.gz 2>err || rc=$?
		receiver_stop &&
		test "$rc" -eq 0 && cat err &&
		test_grep "^rperf: push: saved an unsent profile to .spool/spooled\.cpu-[0-9]+-[0-9]+-[0-9]+\.spool.$" err &&
		ls spool/*.spool >files && test_line_count 1 files &&
		test_grep "^rperf-spool 1$" "$(cat files)"
	'

	test_expect_success 'a spool file is kept when the push fails' '
		cp spool/*.spool keep.spool &&
		receiver_start r10 --status 500 &&
		rc=0 && "$RPERF" push --push-timeout 1 --url "$URL" spool \
		    2>err || rc=$?
		receiver_stop && test "$rc" -eq 1 &&
		test_grep "failed: 500 " err &&
		ls spool/*.spool >files && test_line_count 1 files &&
		receiver_start r11 --status 400 &&
		rc=0 && "$RPERF" push --url "$URL" spool/*.spool \
		    2>err || rc=$?
		receiver_stop && test "$rc" -eq 1 &&
		test_line_count 1 r11/log &&
		ls spool/*.spool >files && test_line_count 1 files
	'

	test_expect_success 'a spool file is sent as recorded, then deleted' '
		receiver_start r12 &&
		rc=0 && "$RPERF" push --url "$URL" spool >out 2>err || rc=$?
		receiver_stop &&
		test "$rc" -eq 0 && test ! -s err &&
		test_grep "and deleted it$" out &&
		! ls spool/*.spool 2>/dev/null &&
		test "$(param r12/1 name)" = "spooled.cpu{env=test}" &&
		test "$(param r12/1 sampleRate)" = 99 &&
		test "$(param r12/1 from)" = "$(param r1/1 from)" &&
		test "$(report_total_ns r12/1.profile)" -eq "$(report_total_ns app.pb.gz)"
	'

	test_expect_success 'options override what a spool file recorded' '
		receiver_start r13 &&
		rc=0 && "$RPERF" push -q --url "$URL" --app-name other --tag env=prod \
		    --tag k=v keep.spool 2>err || rc=$?
		receiver_stop &&
		test "$rc" -eq 0 && ! test -e keep.spool &&
		test "$(param r13/1 name)" = "other.cpu{env=prod,k=v}"
	'
else
	test_skip 'spool files' 'no tests/unit/check_push'
fi

test_expect_success 'a file that is not a profile fails alone, others are sent' '
	printf "junk\n" >junk.data &&
	receiver_start r14 &&
	rc=0 && "$RPERF" push -q --url "$URL" junk.data missing.data \
	    app.pb.gz 2>err || rc=$?
	receiver_stop && test "$rc" -eq 1 &&
	test_line_count 2 err &&
	test_grep "junk.data" err && test_grep "missing.data" err &&
	test_line_count 1 r14/log && test -f app.pb.gz
'

test_done
