#!/bin/sh
# t0305-golden-outputs: reports, conversions, diffs, flame graphs and the
# shape of 'rperf stat' for fixed inputs are byte-for-byte what they were.
#
# The inputs are profiles recorded once from tests/golden/golden.rb and
# kept in tests/golden/; the expected outputs are in tests/golden/expect/.
# This is what checks a restructuring that must not change behaviour: any
# change to an output shows here as a diff.  After an intended change,
# regenerate the expected files with
#   RPERF_GOLDEN_UPDATE=1 make check TESTS=tests/integration/t0305-golden-outputs.sh
# and read the diff of tests/golden/expect/ before committing it.
. "$TEST_SRCDIR/test-lib.sh"

GOLDEN="$TEST_SRCDIR/golden"

# Compare FILE with the expected file NAME (or store it when updating).
golden_check() {
	if [ -n "$RPERF_GOLDEN_UPDATE" ]; then
		cp "$1" "$GOLDEN/expect/$2"
		return 0
	fi
	test_cmp "$GOLDEN/expect/$2" "$1"
}

# Run "rperf ARGS..." into out, expecting success, and compare with NAME.
golden_run() {
	_name=$1
	shift
	"$RPERF" "$@" >out 2>err || { cat err >&2; return 1; }
	golden_check out "$_name"
}

# The inputs are copied here and named relatively, since names given on
# the command line appear in some outputs (diff headers, titles).
cp "$GOLDEN"/wall.pb.gz "$GOLDEN"/cpu.pb.gz "$GOLDEN"/cpu2.pb.gz . || exit 1

test_expect_success 'text report, default tables' '
	golden_run report-wall.txt report wall.pb.gz &&
	golden_run report-cpu.txt report cpu.pb.gz
'

test_expect_success 'text report, sorted by cumulative time, top 8' '
	golden_run report-cum-top8.txt report --sort cum --top 8 wall.pb.gz
'

test_expect_success 'call tree with a minimum percent' '
	golden_run report-tree.txt report --tree --min-percent 0.5 wall.pb.gz
'

test_expect_success 'filters: focus, ignore, tags, thread' '
	golden_run report-focus.txt report --focus "Parser#" --ignore sum wall.pb.gz &&
	golden_run report-tag.txt report --tagfocus "endpoint=GET /users/:id" cpu.pb.gz &&
	golden_run report-tagignore.txt report --tagignore "endpoint=POST /jobs" cpu.pb.gz &&
	golden_run report-thread.txt report --thread worker wall.pb.gz
'

test_expect_success 'folded output, and folded read back' '
	golden_run wall.folded report --format folded wall.pb.gz &&
	"$RPERF" report -o cpu.folded cpu.pb.gz &&
	golden_check cpu.folded cpu.folded &&
	golden_run report-from-folded.txt report cpu.folded
'

test_expect_success 'pprof conversion is byte-stable' '
	"$RPERF" report -o conv.pb.gz wall.pb.gz &&
	golden_check conv.pb.gz wall-converted.pb.gz &&
	"$RPERF" report --format pprof -o conv2.pprof cpu.folded &&
	golden_check conv2.pprof cpu-from-folded.pprof
'

test_expect_success 'flame graph SVG' '
	"$RPERF" report -o flame.svg wall.pb.gz &&
	golden_check flame.svg flame-wall.svg &&
	golden_run flame-cpu.svg report --format svg --focus Parser cpu.pb.gz
'

test_expect_success 'diff: text, normalised, filtered, SVG' '
	golden_run diff.txt diff cpu.pb.gz cpu2.pb.gz &&
	golden_run diff-normalize.txt diff --normalize --top 10 cpu.pb.gz cpu2.pb.gz &&
	golden_run diff-focus.txt diff --focus Parser --thread 1 cpu.pb.gz cpu2.pb.gz &&
	"$RPERF" diff -o diff.svg cpu.pb.gz cpu2.pb.gz &&
	golden_check diff.svg diff.svg
'

# stat runs a script, so its figures change from run to run: its shape
# (lines, labels, units, keys, order) must not.
test_expect_success 'stat text and JSON keep their shape' '
	cp "$GOLDEN/golden.rb" g.rb &&
	"$RPERF" stat g.rb >stat.out 2>&1 &&
	sed -E "s/[0-9][0-9,.]*/N/g; s/ +/ /g" stat.out >stat.shape &&
	golden_check stat.shape stat.shape &&
	"$RPERF" stat --json g.rb >stat.json 2>&1 &&
	test -s stat.json &&
	sed -E "s/-?[0-9][0-9.e+-]*/N/g" stat.json >json.shape &&
	golden_check json.shape stat-json.shape
'

test_done
