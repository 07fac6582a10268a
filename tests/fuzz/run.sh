#!/bin/sh
# run.sh: build the libFuzzer harnesses, replay every stored regression and
# seed, then fuzz each reader for a bounded time on a copy of its corpus.
# Nothing in the source tree is written: new inputs and crashers go under
# WORK.  Prints one "PASS fuzz_NAME: ..." or "FAIL fuzz_NAME: ..." line per
# fuzzer and exits 1 when a build, a replay or a fuzzer failed.
#
# Usage: tests/fuzz/run.sh [WORK]
#   WORK           scratch directory (default: a new one under $TMPDIR)
#   FUZZ_SECONDS   fuzzing time per fuzzer (default 60)
#   CC             the clang to build with (default clang)
# Needs clang with its libFuzzer and sanitizer runtimes, protoc-c,
# pkg-config, protobuf-c and zlib (Debian bookworm: clang
# libclang-rt-14-dev protobuf-c-compiler libprotobuf-c-dev zlib1g-dev
# pkg-config).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../src
secs=${FUZZ_SECONDS:-60}
if [ $# -gt 0 ]; then
	work=$1
	mkdir -p "$work" || exit 1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/rperf-fuzz.XXXXXX") || exit 1
fi
work=$(cd "$work" && pwd)
status=0

# Print a FAIL line for the whole run and stop.
run_die() {
	echo "FAIL fuzz: $*"
	exit 1
}

case $secs in
''|*[!0-9]*) run_die "FUZZ_SECONDS must be a number of seconds, not '$secs'" ;;
esac
mkdir -p "$work/src" "$work/regressions" || exit 1
protoc-c --proto_path="$src" --c_out="$work/src" "$src/profile.proto" \
    >"$work/build.log" 2>&1 ||
	run_die "cannot generate the protobuf code (see $work/build.log)"
"$here/build.sh" "$work" "$work" >>"$work/build.log" 2>&1 ||
	run_die "cannot build the fuzzers (see $work/build.log)"

for name in pprof folded; do
	bin=$work/fuzz_$name
	log=$work/fuzz_$name.log
	corpus=$work/corpus-$name
	case $name in
	pprof) maxlen=16384 ;;
	*) maxlen=4096 ;;
	esac
	rm -rf "$corpus"
	cp -R "$here/corpus/$name" "$corpus" || exit 1

	# Every stored regression must still pass, whichever reader it broke.
	set -- "$here"/regressions/* "$here"/corpus/*/*
	if ! "$bin" -runs=1 "$@" >"$log.replay" 2>&1; then
		echo "FAIL fuzz_$name: a stored regression or seed fails" \
		    "again (see $log.replay)"
		status=1
		continue
	fi

	# -malloc_limit_mb turns a trusted declared length into a crash;
	# -timeout turns a hang into one.
	"$bin" -max_total_time="$secs" -max_len=$maxlen -malloc_limit_mb=1024 \
	    -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
	    -artifact_prefix="$work/regressions/$name-" "$corpus" \
	    >"$log" 2>&1
	rc=$?
	stats=$(awk '
		/^#[0-9]+/ && /cov:/ {
			for (i = 1; i <= NF; i++) {
				if ($i == "cov:") cov = $(i + 1)
				if ($i == "ft:") ft = $(i + 1)
				if ($i == "corp:") corp = $(i + 1)
			}
		}
		/^stat::number_of_executed_units:/ { runs = $2 }
		/^stat::average_exec_per_sec:/ { eps = $2 }
		END {
			printf "%s runs, %s exec/s, coverage %s edges, " \
			    "%s features, corpus %s", runs, eps, cov, ft, corp
		}' "$log")
	crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | head -n 1)
	if [ $rc -eq 0 ] && [ -z "$crash" ]; then
		echo "PASS fuzz_$name: $secs s, $stats"
	elif [ -n "$crash" ]; then
		echo "FAIL fuzz_$name: crash after $stats; input kept as" \
		    "$crash (see $log; keep it in tests/fuzz/regressions)"
		status=1
	else
		echo "FAIL fuzz_$name: exit status $rc (see $log)"
		status=1
	fi
done
exit $status
