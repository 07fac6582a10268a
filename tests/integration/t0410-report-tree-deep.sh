#!/bin/sh
# rperf report --tree on a 100,000-deep stack: its output once grew with
# the square of the depth (1.2 MB of profile, 10 GB of tree); lines now
# stop indenting at 64 levels and the tree stops at 1024, with a line
# saying so, as go tool pprof -tree keeps its output small.
. "$TEST_SRCDIR/test-lib.sh"

awk 'BEGIN {
	for (i = 0; i < 100000; i++)
		printf "%sf%d", i ? ";" : "", i
	print " 10000000"
	for (i = 0; i < 50; i++)
		printf "%s%d", i ? ";g" : "f", i
	print " 5000000"
}' >deep.folded

test_expect_success 'the tree of a 100k-deep stack is small and fast' '
	"$RPERF" report --format pprof -o deep.pb.gz deep.folded &&
	# 2 MB of output at most: a file size limit turns the old 10 GB
	# into a quick failure.
	(ulimit -f 4096 && "$RPERF" report --tree deep.pb.gz >out) &&
	test $(wc -c <out) -lt 300000 &&
	test_line_count 1076 out &&
	test_grep "^ *10.00  *66.7%  *\\(depth 65\\) f64$" out &&
	test_grep "^ *\\(calls deeper than 1024 levels not shown\\)$" out &&
	test_grep ! " f1024$" out
'

test_expect_success 'a shallow branch beside the deep one is all shown' '
	test_grep "^ *15.00  *100.0%  f0$" out &&
	test_grep "^ *5.00  *33.3%  *g49$" out
'

test_done
