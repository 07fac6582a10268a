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
lib="$src/profile.c $src/pprof.c $src/folded.c $src/text.c $src/error.c $src/xmalloc.c $build/src/profile.pb-c.c"
libs=$(pkg-config --libs libprotobuf-c zlib)
$cc $flags -o "$out/fuzz_pprof" "$here/fuzz_pprof.c" $lib $libs
$cc $flags -o "$out/fuzz_folded" "$here/fuzz_folded.c" $lib $libs
