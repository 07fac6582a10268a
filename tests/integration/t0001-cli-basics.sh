#!/bin/sh
# The program's own command line: help, version, usage errors.
. "$TEST_SRCDIR/test-lib.sh"

test_expect_success '--version names rperf and the embedded ruby' '
	"$RPERF" --version >out &&
	test_grep "^rperf [0-9]+\.[0-9]+\.[0-9]+$" out &&
	test_grep "^ruby 3\.[3-9]" out &&
	test_grep "^features: " out
'

test_expect_success '--help lists the commands' '
	"$RPERF" --help >out &&
	test_grep "^usage: rperf" out &&
	test_grep "^  record " out
'

test_expect_success 'no arguments: usage on stderr, status 2' '
	test_expect_code 2 "$RPERF" 2>err &&
	test_grep "^usage: rperf" err
'

test_expect_success 'unknown command: one line and a hint, status 2' '
	test_expect_code 2 "$RPERF" frobnicate 2>err &&
	test_grep "^rperf: .frobnicate. is not an rperf command$" err &&
	test_line_count 2 err
'

test_expect_success 'commands are matched exactly, not by prefix' '
	test_expect_code 2 "$RPERF" rec -e 1 2>err &&
	test_grep "is not an rperf command" err
'

test_expect_success 'unknown global option: status 2' '
	test_expect_code 2 "$RPERF" --frobnicate 2>err &&
	test_grep "unknown option .--frobnicate." err
'

test_expect_success 'record --help prints the options and exits 0' '
	"$RPERF" record --help >out &&
	test_grep "^usage: rperf record \[options\] \[--\] \[ruby options\] SCRIPT \[ARGS...\]" out &&
	test_grep "frequency HZ" out
'

test_expect_success 'help record shows the same without a terminal' '
	"$RPERF" help record >out &&
	test_grep "^usage: rperf record" out
'

test_expect_success 'help of an unknown command fails' '
	test_expect_code 2 "$RPERF" help frobnicate 2>err &&
	test_grep "no such command" err
'

for bad in "--frob x.rb:unknown option .--frob." \
	"-F 0 -e 1:invalid frequency .0." \
	"-F 10001 -e 1:invalid frequency .10001." \
	"-F abc -e 1:invalid frequency .abc." \
	"-f 0 -e 1:invalid frequency .0." \
	"-m bogus -e 1:unknown mode .bogus." \
	"--format svgz -e 1:unknown format .svgz." \
	"--signal 3 -e 1:invalid signal .3." \
	"-o:option .-o. needs a value" \
	":no script given"
do
	args=${bad%%:*}
	msg=${bad#*:}
	test_expect_success "record $args: usage error, status 2" "
		test_expect_code 2 \"\$RPERF\" record $args 2>err &&
		test_grep \"^rperf record: $msg\" err &&
		test_grep \"^Try 'rperf record --help'\" err &&
		test_line_count 2 err &&
		! test -e rperf.data
	"
done

test_expect_success 'valid values are accepted' '
	"$RPERF" record -q -F 1 -m wall --format folded -o x.folded -e 1 &&
	"$RPERF" record -q -f 10000 --signal=false -o y.data -e 1 &&
	"$RPERF" record -q --frequency=250 --mode=cpu --signal 40 -o z.data -e 1 &&
	test -s y.data && test -e x.folded && test -s z.data
'

test_expect_success 'a full stdout is an error, not a silent short write' '
	if test -w /dev/full; then
		test_expect_code 1 "$RPERF" --help >/dev/full 2>err &&
		test_grep "cannot write standard output" err
	fi
'

test_done
