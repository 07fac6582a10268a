#!/bin/sh
# Exit statuses and error output are ruby's; the profile is saved on
# every way out; a profile that cannot be saved is an error.
. "$TEST_SRCDIR/test-lib.sh"

# Run CODE under ruby and rperf; both statuses and stderr must agree and
# rperf must have saved a profile.
same_as_ruby() {
	"$RUBY" -e "$1" >r.out 2>r.err
	r=$?
	rm -f p.data
	"$RPERF" record -q -o p.data -e "$1" >p.out 2>p.err
	p=$?
	if [ "$r" -ne "$p" ]; then
		echo "status: ruby $r, rperf $p" >&2
		return 1
	fi
	test_cmp r.out p.out && test_cmp r.err p.err && test -s p.data &&
	echo "$p" >status
}

for code in "exit 3" "exit" "exit false" "exit!(4)" "Process.exit!(true)" \
	'abort "boom"' 'raise "kaput"' 'raise SystemExit.new(7)' \
	'at_exit { puts 1 }; at_exit { puts 2; exit 9 }' \
	'trap(:USR2) { puts "mine"; exit 6 }; Process.kill(:USR2, $$); sleep 2'
do
	test_expect_success "status and output as ruby's: $code" "
		same_as_ruby '$code'
	"
done

test_expect_success 'rperf record -e "exit 3" exits 3' '
	test_expect_code 3 "$RPERF" record -q -o p.data -e "exit 3"
'

test_expect_success 'an uncaught exception: status 1, ruby message, profile kept' '
	same_as_ruby "def fail_here = raise(ArgumentError, %q(bad thing)); fail_here" &&
	test_grep "bad thing \(ArgumentError\)" p.err &&
	test "$(cat status)" = 1
'

test_expect_success 'a missing script: ruby error naming it, status 1, no profile' '
	rm -f rperf.data &&
	test_expect_code 1 "$RPERF" record no-such-script.rb 2>err &&
	test_grep "no-such-script.rb" err &&
	! test -e rperf.data
'

test_expect_success 'a syntax error: status 1, no profile' '
	rm -f rperf.data &&
	test_expect_code 1 "$RPERF" record -e "def x(" 2>err &&
	test_grep "SyntaxError" err &&
	! test -e rperf.data
'

test_expect_success 'an unwritable output turns success into status 1' '
	test_expect_code 1 "$RPERF" record -o no/such/dir/p.data -e "puts 42" >out 2>err &&
	test_grep "^42$" out &&
	test_grep "^rperf record: cannot write .no/such/dir/p.data.: No such file or directory$" err &&
	! test -e no
'

test_expect_success 'an unwritable output keeps a failing status as it is' '
	test_expect_code 3 "$RPERF" record -o no/such/dir/p.data -e "exit 3" 2>err &&
	test_grep "cannot write" err
'

test_expect_success 'a directory as output is refused, nothing left behind' '
	mkdir outdir &&
	test_expect_code 1 "$RPERF" record -q -o outdir -e 1 2>err &&
	test_grep "cannot write .outdir." err &&
	test -z "$(ls outdir)"
'

test_expect_success 'the default output is rperf.data, with a one-line note' '
	rm -f rperf.data &&
	"$RPERF" record -e 1 2>err &&
	test -s rperf.data &&
	test_grep "^rperf record: wrote .rperf.data. \(pprof, [0-9]+ samples" err
'

test_done
