#!/bin/sh
# ruby-on-path.sh SERIES RUBY: build Ruby SERIES with ./bootstrap while a
# working ruby (RUBY, wrapped to log each call) is first on PATH, as on a
# machine with Debian's own ruby installed.  Passes when the build
# succeeds and never called that ruby (it would otherwise take it as
# BASERUBY and try to download gems for up to an hour).
#
# ./bootstrap --test runs it when SERIES is not cached yet, building into
# the real cache.  By hand, use a throwaway cache (the download of the
# source package is reused when one is there):
#   RPERF_CACHE=$(mktemp -d) tests/bootstrap/ruby-on-path.sh 3.3 ~/.cache/rperf/ruby-3.4.5/bin/ruby
# It takes about as long as one Ruby build (4-8 minutes on two cores).
set -u
series=${1:?usage: ruby-on-path.sh SERIES RUBY}
real_ruby=${2:?usage: ruby-on-path.sh SERIES RUBY}
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${RPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rperf}
default_cache=${XDG_CACHE_HOME:-$HOME/.cache}/rperf
if [ "$cache" != "$default_cache" ] && [ -d "$default_cache/src" ]; then
	mkdir -p "$cache/src" && cp -n "$default_cache/src/"* "$cache/src/" 2>/dev/null
fi
wrap=$(mktemp -d) || exit 1
trap 'rm -rf "$wrap"' EXIT
printf '#!/bin/sh\necho "ruby $*" >>"%s/calls"\nexec "%s" "$@"\n' "$wrap" "$real_ruby" >"$wrap/ruby"
chmod +x "$wrap/ruby"
PATH="$wrap:$PATH" ruby -e 'exit 0' && rm -f "$wrap/calls" ||
	{ echo "FAIL: the ruby put on PATH does not run"; exit 1; }
start=$(date +%s)
# Bounded: a build that tries to download would otherwise hang for long.
if ! RPERF_CACHE=$cache PATH="$wrap:$PATH" timeout 1800 "$top/bootstrap" --ruby "$series" >"$wrap/out" 2>&1; then
	tail -n 20 "$wrap/out"
	echo "FAIL: Ruby $series did not build with a ruby on PATH ($(($(date +%s) - start)) s)"
	exit 1
fi
if [ -s "$wrap/calls" ]; then
	echo "FAIL: the Ruby $series build called the ruby on PATH:"
	head -n 5 "$wrap/calls"
	exit 1
fi
echo "PASS: Ruby $series built with a ruby on PATH, never calling it, in $(($(date +%s) - start)) s"
