#!/bin/sh
# build.sh: build the libFuzzer harnesses into OUT (default: .) from a
# configured build directory BUILD, which provides src/profile.pb-c.c.
# Usage: tests/fuzz/build.sh BUILD [OUT]
set -e
build=${1:?usage: build.sh BUILD [OUT]}
out=${2:-.}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../../src
cc=${CC:-clang}
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I$src -I$build/src"
# The data side, as Makefile.am lists it, so that a new file there
# cannot leave the fuzzers unbuildable.
lib=$(sed -n '/^DATA_SOURCES = /,/^[^[:space:]]/p' "$here/../../Makefile.am" |
	grep -o 'src/[A-Za-z0-9_-]*\.c' | sed "s|^src/|$src/|" | tr '\n' ' ')
[ -n "$lib" ] || { echo "build.sh: no DATA_SOURCES in Makefile.am" >&2; exit 1; }
lib="$lib $build/src/profile.pb-c.c"
# What of configure's config.h the data side uses.
mkdir -p "$build/src"
[ -f "$build/src/config.h" ] || echo '#define PACKAGE_VERSION "fuzz"' >"$build/src/config.h"
libs="$(pkg-config --libs libprotobuf-c zlib) -ldl -lpthread -lm"
$cc $flags -o "$out/fuzz_pprof" "$here/fuzz_pprof.c" $lib $libs
$cc $flags -o "$out/fuzz_folded" "$here/fuzz_folded.c" $lib $libs
