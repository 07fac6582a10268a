# test-lib.sh: the helpers every integration test sources (git's t/ style).
#
#   . "$TEST_SRCDIR/test-lib.sh"
#   test_expect_success 'what it checks' '
#       commands that must all succeed
#   '
#   test_done
#
# Each test file runs in a fresh scratch directory (removed when all its
# tests pass).  Environment (set by make check, or by hand):
#   RPERF         the rperf binary under test
#   RUBY          the ruby it embeds
#   GO            the go tool, for "go tool pprof" cross-checks (may be empty)
#   TEST_SRCDIR   tests/ in the source tree
#   TEST_VERBOSE  if set, passing checks show their output too
# The output follows the TAP-like shape automake's harness prints; the exit
# status is 0 when every test passed, 1 otherwise, 77 when the whole file
# was skipped.

: "${TEST_SRCDIR:?TEST_SRCDIR must point at the tests directory}"
: "${RPERF:?RPERF must point at the rperf binary}"
FIXTURES="$TEST_SRCDIR/fixtures"
EXPECT="$TEST_SRCDIR/expect"
export FIXTURES EXPECT
# Never let a user's settings change what the tests see.
unset NO_COLOR RPERF_PUSH_TOKEN
LC_ALL=C
export LC_ALL

test_count=0
test_failed=0
test_name=$(basename "$0" .sh)
TRASH="${TEST_BUILDDIR:-${TMPDIR:-/tmp}}/trash.$test_name.$$"
rm -rf "$TRASH"
mkdir -p "$TRASH" || exit 1
cd "$TRASH" || exit 1

# Run BODY (a string of shell commands) and report the result.
test_expect_success() {
	test_count=$((test_count + 1))
	if (eval "set -e; $2") >"$TRASH/.out" 2>&1; then
		echo "ok $test_count - $1"
		# TEST_VERBOSE=1: what a passing check printed too, to see
		# how near its bounds it came.
		[ -z "${TEST_VERBOSE:-}" ] || sed 's/^/#   /' "$TRASH/.out"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		sed 's/^/#   /' "$TRASH/.out"
	fi
}

# For files that check many items in loops rather than as separate
# snippets: record one item that passed, or one that failed (with MESSAGE).
test_pass() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1"
}
test_fail() {
	test_count=$((test_count + 1))
	test_failed=$((test_failed + 1))
	echo "not ok $test_count - $1"
}

# Skip one test with a reason.
test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count # skip $1 ($2)"
}

# Skip the whole file.
skip_all() {
	echo "1..0 # SKIP $1"
	cd / && rm -rf "$TRASH"
	exit 77
}

# The command must fail (non-zero, but not by a signal such as SIGSEGV).
test_must_fail() {
	"$@"
	_rc=$?
	if [ "$_rc" -eq 0 ]; then
		echo "test_must_fail: '$*' succeeded" >&2
		return 1
	fi
	if [ "$_rc" -gt 128 ] && [ "$_rc" -ne 130 ]; then
		echo "test_must_fail: '$*' died with status $_rc" >&2
		return 1
	fi
	return 0
}

# The command must exit with exactly STATUS.
test_expect_code() {
	_want=$1
	shift
	"$@"
	_rc=$?
	if [ "$_rc" -ne "$_want" ]; then
		echo "test_expect_code: '$*' exited $_rc, wanted $_want" >&2
		return 1
	fi
	return 0
}

# Files must be identical; show the difference when not.
test_cmp() {
	diff -u "$1" "$2"
}

# FILE must contain a line matching the extended regex.
test_grep() {
	if [ "$1" = "!" ]; then
		shift
		if grep -E -q -- "$1" "$2"; then
			echo "test_grep: '$1' found in $2:" >&2
			grep -E -- "$1" "$2" | head -n 5 >&2
			return 1
		fi
		return 0
	fi
	if ! grep -E -q -- "$1" "$2"; then
		echo "test_grep: '$1' not found in $2:" >&2
		# Its head and its tail: a profile's first lines are often
		# all boot.
		_n=$(wc -l <"$2" | tr -d ' ')
		if [ "$_n" -gt 60 ]; then
			head -n 30 "$2" >&2
			echo "... ($_n lines in all; the last 30:)" >&2
			tail -n 30 "$2" >&2
		else
			cat "$2" >&2
		fi
		return 1
	fi
}

# FILE must have exactly N lines.
test_line_count() {
	_n=$(wc -l <"$2" | tr -d ' ')
	if [ "$_n" -ne "$1" ]; then
		echo "test_line_count: $2 has $_n lines, wanted $1" >&2
		return 1
	fi
}

# Sum the weights of a folded file, optionally only lines matching a regex.
folded_sum() {
	if [ $# -ge 2 ]; then
		grep -E -- "$2" "$1" | awk '{ s += $NF } END { printf "%.0f\n", s }'
	else
		awk '{ s += $NF } END { printf "%.0f\n", s }' "$1"
	fi
}

# Succeed when A and B (numbers) differ by at most PCT percent of B.
within_pct() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN {
		d = a - b; if (d < 0) d = -d
		if (b == 0) exit (a == 0 ? 0 : 1)
		if (d * 100 > p * b) { printf "%s vs %s: off by %.2f%%\n", a, b, d * 100 / b > "/dev/stderr"; exit 1 }
		exit 0 }'
}

# What was BILLED ($1, ns) is within DIV-th of what the work took by its
# own clock ($2, ns), give or take SLACK ns of sampling ($3 and $4: 5 and
# 2e6 mean a fifth, and 2 ms).
near_clock() {
	awk -v b="$1" -v o="$2" -v div="$3" -v slack="$4" 'BEGIN {
		d = b - o; if (d < 0) d = -d
		if (d <= o / div + slack) exit 0
		printf "billed %s ns against a clock of %s ns: off by %.0f ns\n", b, o, d > "/dev/stderr"
		exit 1 }'
}

# The median of the numbers in column $2 (1 if not given; columns split
# by single spaces) of the lines of file $1, an odd number of them: the
# accuracy checks that a single run on a busy machine once failed take it.
median() {
	sort -n -k"${2:-1},${2:-1}" "$1" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }' |
		cut -d" " -f"${2:-1}"
}

# The median of three runs' lines (see median).
median3() {
	median "$@"
}

# A >= B (numbers).
num_ge() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 >= b + 0) exit 0; printf "%s < %s\n", a, b > "/dev/stderr"; exit 1 }'
}

# The second local user the file and signal tests need (planting links,
# owning processes): "rperftest", made with useradd if missing.  Needs
# root; returns 1 otherwise, and the caller skips with a message.
test_other_user() {
	OTHER_USER=rperftest
	test "$(id -u)" = 0 || return 1
	id -u "$OTHER_USER" >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /usr/sbin/nologin \
			"$OTHER_USER" >/dev/null 2>&1 ||
		id -u "$OTHER_USER" >/dev/null 2>&1	# made meanwhile by another test
}

# Finish: summary line, clean up on success, exit status for the harness.
test_done() {
	echo "1..$test_count"
	if [ "$test_failed" -eq 0 ]; then
		cd / && rm -rf "$TRASH"
		exit 0
	fi
	echo "# failed $test_failed of $test_count (scratch kept in $TRASH)"
	exit 1
}
