#!/bin/sh
# Secrets given to rperf (the password of a --push or --url URL, the
# values of --push-header, $RPERF_PUSH_TOKEN) never show: not in
# /proc/PID/cmdline while rperf runs, nor in the "command:" comment of the
# profile, of the pushed intervals and of spool files, nor in rperf
# report, nor in a message that echoes a server's reply.  The script's own
# ARGV is left as it was given (and shows in its process's command line as
# under ruby).
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/push-lib.sh"

SECRETS="urlsecret|hdrsecret|argsecret|toksecret|pushsecret"

cat >script.rb <<'EOF_RB'
File.write("cmdline", File.read("/proc/self/cmdline").tr("\0", " ") + "\n")
File.write("argv", ARGV.join("\n") + "\n")
t = Time.now
sleep 0.01 while Time.now - t < 1.2
EOF_RB

# The gzipped pprof of spool file $1, decompressed, to stdout.
spool_profile() {
	n=$(grep -a -n -m1 "^$" "$1" | cut -d: -f1) &&
	tail -n +$((n + 1)) "$1" | gzip -dc
}

test_expect_success 'record --push: no secret in the process, the profile or what is pushed' '
	receiver_start r1 &&
	port=${URL##*:} &&
	{ "$RPERF" record -m wall -o out.pb.gz \
	    --push "http://user:urlsecret@127.0.0.1:$port" --push-interval 0.5 \
	    --push-header "X-Api-Key: hdrsecret" --push-header=X-Other:hdrsecret \
	    script.rb "http://me:argsecret@example.com/" >out 2>err & } &&
	pid=$! &&
	sleep 0.6 && tr "\000" " " </proc/$pid/cmdline >live &&
	wait $pid &&
	receiver_stop &&
	cat live cmdline &&
	# Once the script runs, its command line is ruby'"'"'s (see t0105): the
	# script'"'"'s own arguments as given, none of rperf'"'"'s words.
	test_grep "^ruby script.rb http://me:argsecret@example.com/ *$" live &&
	test_grep "^ruby script.rb http://me:argsecret@example.com/ *$" cmdline &&
	test_grep ! "urlsecret|hdrsecret|toksecret|pushsecret" live &&
	test_grep ! "urlsecret|hdrsecret|toksecret|pushsecret" cmdline &&
	test_grep "^http://me:argsecret@example.com/$" argv &&
	test_grep ! "$SECRETS" out && test_grep ! "$SECRETS" err &&
	"$RPERF" report out.pb.gz >report &&
	test_grep "^Command: +rperf record .*--push http://user:\*\*\*@127" report &&
	test_grep "X-Api-Key: \*\*\* --push-header=X-Other:\*\*\* script.rb http://me:\*\*\*@example.com/$" report &&
	test_grep ! "$SECRETS" report &&
	! gzip -dc out.pb.gz | grep -a -E "$SECRETS" &&
	test_grep "^X-Api-Key: hdrsecret$" r1/1.headers &&
	for f in r1/*.profile; do
		gzip -dc "$f" >"$f.raw" &&
		grep -a -q "rperf record" "$f.raw" &&
		! grep -a -E "$SECRETS" "$f.raw" || exit 1
	done
'

test_expect_success 'the spool files of a run hold no secret' '
	receiver_start r2 && receiver_stop &&
	port=${URL##*:} &&
	"$RPERF" record -q -o /dev/null --push "http://u:urlsecret@127.0.0.1:$port/" \
	    --push-interval 0.3 --push-timeout 0.2 --spool spool \
	    --push-header "Authorization: Basic hdrsecret" \
	    -e "t = Time.now; sleep 0.01 while Time.now - t < 1" 2>err &&
	ls spool/*.spool >files && test -s files &&
	for f in $(cat files); do
		spool_profile "$f" >"$f.raw" &&
		grep -a -q "rperf record" "$f.raw" &&
		! grep -a -E "$SECRETS" "$f.raw" || exit 1
	done &&
	test_grep ! "$SECRETS" err
'

test_expect_success 'rperf push: no secret in /proc/PID/cmdline while it runs' '
	"$RPERF" record -q -o app.pb.gz -e "1" &&
	receiver_start r3 --hang &&
	port=${URL##*:} &&
	{ "$RPERF" push --push-timeout 1.5 --url "http://u:pushsecret@127.0.0.1:$port" \
	    --push-header "X-Api-Key: hdrsecret" app.pb.gz >out 2>err & } &&
	pid=$! &&
	sleep 0.5 && tr "\000" " " </proc/$pid/cmdline >live &&
	rc=0 && wait $pid || rc=$?
	receiver_stop &&
	cat live &&
	test "$rc" -eq 1 &&
	test_grep "rperf push --push-timeout 1.5 --url http://u:\*+@127" live &&
	test_grep ! "$SECRETS" live && test_grep ! "$SECRETS" err
'

test_expect_success 'a 401 that echoes the credentials: masked in the message' '
	"$RPERF" record -q -o app.pb.gz -e "1" &&
	receiver_start r4 --status 401 --echo-header Authorization &&
	port=${URL##*:} &&
	rc=0 && "$RPERF" push --url "http://user:urlsecret@127.0.0.1:$port" \
	    app.pb.gz >out 2>err || rc=$?
	receiver_stop &&
	cat err &&
	test "$rc" -eq 1 &&
	test_grep "^Authorization: Basic $(printf user:urlsecret | base64)$" r4/1.headers &&
	test_grep "failed: 401 Unauthorized: Authorization: \*\*\*$" err &&
	test_grep ! "$(printf user:urlsecret | base64)" err &&
	test_grep ! "$SECRETS" err &&
	receiver_start r5 --status 403 --echo-header X-Api-Key &&
	rc=0 && "$RPERF" push --url "$URL" --push-header "X-Api-Key: hdrsecret" \
	    app.pb.gz >out 2>err || rc=$?
	receiver_stop &&
	cat err &&
	test "$rc" -eq 1 &&
	test_grep "failed: 403 Forbidden: X-Api-Key: \*\*\*$" err &&
	test_grep ! "$SECRETS" err
'

test_expect_success 'a token and credentials in the URL: refused, neither shown' '
	"$RPERF" record -q -o app.pb.gz -e "1" &&
	test_expect_code 2 env RPERF_PUSH_TOKEN=toksecret-1 "$RPERF" push \
	    --url "http://user:urlsecret@127.0.0.1:9/" app.pb.gz >out 2>err &&
	cat err &&
	test_grep "^rperf push: both RPERF_PUSH_TOKEN and a user name in the URL are given; use one of them$" err &&
	test_grep ! "$SECRETS" err &&
	test_expect_code 2 env RPERF_PUSH_TOKEN=toksecret-1 "$RPERF" record -o /dev/null \
	    --push "http://tok3nuser@127.0.0.1:9/" -e 1 >out 2>err &&
	test_grep "^rperf record: both RPERF_PUSH_TOKEN and a user name in the URL are given" err &&
	test_grep ! "$SECRETS|tok3nuser" err &&
	receiver_start r6 &&
	RPERF_PUSH_TOKEN= "$RPERF" push -q --url "http://user:urlsecret@${URL#http://}" \
	    app.pb.gz >out 2>err &&
	receiver_stop &&
	test_grep "^Authorization: Basic " r6/1.headers &&
	receiver_start r7 &&
	RPERF_PUSH_TOKEN= "$RPERF" record -q -o /dev/null --push "http://user:urlsecret@${URL#http://}" \
	    -e 1 >out 2>err &&
	receiver_stop &&
	test_grep "^Authorization: Basic " r7/1.headers
'

test_expect_success 'a mistyped option is named without its value' '
	test_expect_code 2 "$RPERF" push --url http://h/ \
	    --push-headr="X-Api-Key: hdrsecret" app.pb.gz 2>err &&
	test_grep "^rperf push: unknown option .--push-headr.$" err &&
	test_expect_code 2 "$RPERF" record --pu=http://u:urlsecret@h/ -e 1 2>err &&
	test_grep "^rperf record: unknown option .--pu.$" err &&
	test_grep ! "$SECRETS" err
'

test_done
