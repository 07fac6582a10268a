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
# configure's config.h, or a stub with what the data side uses, in a
# directory of our own: never written into the build or source tree,
# where it would shadow the real one.
inc=$(mkdir -p "$out" && cd "$out" && pwd)/.fuzz-include
mkdir -p "$inc"
if [ -f "$build/config.h" ]; then
	cp "$build/config.h" "$inc/config.h"
else
	echo '#define PACKAGE_VERSION "fuzz"' >"$inc/config.h"
fi
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I$inc -I$src -I$build/src"
# The data side, as Makefile.am lists it, so that a new file there
# cannot leave the fuzzers unbuildable.
lib=$(sed -n '/^DATA_SOURCES = /,/^[^[:space:]]/p' "$here/../../Makefile.am" |
	grep -o 'src/[A-Za-z0-9_-]*\.c' | sed "s|^src/|$src/|" | tr '\n' ' ')
[ -n "$lib" ] || { echo "build.sh: no DATA_SOURCES in Makefile.am" >&2; exit 1; }
lib="$lib $build/src/profile.pb-c.c"
libs="$(pkg-config --libs libprotobuf-c zlib) -ldl -lpthread -lm"
$cc $flags -o "$out/fuzz_pprof" "$here/fuzz_pprof.c" $lib $libs
$cc $flags -o "$out/fuzz_folded" "$here/fuzz_folded.c" $lib $libs
