#!/bin/sh
# Every nanosecond is billed once: the weights add up to the time that
# passed on each thread's clock, within 1%.
. "$TEST_SRCDIR/test-lib.sh"

# The bound, in percent.  Under ASan rperf's own code runs several times
# slower, which moved a thread's figure by 1.05% once: the sanitizer run
# checks memory, the plain runs check this bound.
bound=1
[ -n "${RPERF_SANITIZERS:-}" ] && bound=3

# Thread N's time (ns) from a text report's thread table.
thread_ns() {
	awk -v t="$2" '/^Threads:/ { on = 1; next } on && $1 == t { gsub(",", "", $(NF-1)); printf "%.0f\n", $(NF-1) * 1e6 }' "$1"
}

test_expect_success 'cpu mode: each thread is billed its own CPU time' '
	"$RPERF" record -q -o c.pb "$FIXTURES/invariant.rb" >out &&
	"$RPERF" report --stdio --ignore "^\(ruby boot\)\$" c.pb >c.txt &&
	cat out &&
	for t in 1 2 3; do
		seen=$(sed -n "s/^thread $t //p" out) &&
		billed=$(thread_ns c.txt $t) &&
		echo "thread $t: seen $seen billed $billed" &&
		within_pct "$billed" "$seen" $bound || exit 1
	done
'

test_expect_success 'wall mode: the main thread is billed the whole run' '
	"$RPERF" record -q -m wall -o w.txt "$FIXTURES/invariant.rb" >out &&
	duration=$(sed -n "s/^Duration: *//p" w.txt | tr -d , | sed "s/ ms//") &&
	duration_ns=$(awk -v d="$duration" "BEGIN { printf \"%.0f\", d * 1e6 }") &&
	billed=$(thread_ns w.txt 1) &&
	echo "duration $duration_ns billed $billed" &&
	within_pct "$billed" "$duration_ns" $bound
'

test_done
