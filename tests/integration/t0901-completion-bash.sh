#!/bin/sh
# t0901-completion-bash: completions/rperf, driven the way bash drives it
# (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT, then _rperf), offers
# rperf's commands, record's flags and their values, and stops offering
# rperf's flags once the script has been typed.  It runs once with
# bash-completion loaded (when installed) and once without, since the
# script has a fallback for each of _init_completion and _filedir.
#
# Exit status: 0 on success, 1 on failure, 77 when bash is not installed.
. "$TEST_SRCDIR/test-lib.sh"

if ! command -v bash >/dev/null 2>&1; then
	skip_all "bash is not installed"
fi

script=$TEST_SRCDIR/../completions/rperf
rperf=$RPERF
tmp=$TRASH

# The completion calls "rperf" by name: put the binary under test first.
mkdir "$tmp/bin" "$tmp/work" "$tmp/work/lib" || exit 1
ln -s "$rperf" "$tmp/bin/rperf" || exit 1
: >"$tmp/work/app.rb"
: >"$tmp/work/notes.txt"
: >"$tmp/work/cpu.pb.gz"
: >"$tmp/work/s.folded"
: >"$tmp/work/flame.svg"

cat >"$tmp/drive.bash" <<'EOF'
# Usage: bash drive.bash SCRIPT [BASH_COMPLETION]
failed=0
[ -n "$2" ] && . "$2"
. "$1" || { echo "FAIL: cannot source $1"; exit 1; }
label=${2:+with bash-completion}
label=${label:-without bash-completion}

# Complete LINE (the cursor at its end); the candidates go to $reply,
# sorted, one space between them.
complete_line()
{
    COMP_LINE=$1
    COMP_POINT=${#1}
    read -r -a COMP_WORDS <<<"$1"
    [[ $1 == *' ' ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _rperf
    reply=$(printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ')
    reply=${reply% }
}

# LINE must complete to exactly WANT.
expect()
{
    complete_line "$1"
    if [[ $reply == "$2" ]]; then
        echo "ok - [$1] -> [$2] ($label)"
    else
        echo "FAIL: [$1] completed to [$reply], wanted [$2] ($label)"
        failed=1
    fi
}

# LINE's candidates must not include WORD.
expect_not()
{
    complete_line "$1"
    if [[ " $reply " == *" $2 "* ]]; then
        echo "FAIL: [$1] offered $2 among [$reply] ($label)"
        failed=1
    else
        echo "ok - [$1] does not offer $2 ($label)"
    fi
}

expect 'rperf rec' 'record'
expect 'rperf help rec' 'record'
expect 'rperf record --mo' '--mode'
expect 'rperf record --mode ' 'alloc cpu wall'
expect 'rperf record -m ' 'alloc cpu wall'
expect 'rperf stat -m ' 'cpu wall'
expect 'rperf report --sample-index ' 'alloc_objects alloc_space cpu inuse_objects inuse_space samples wall'
expect 'rperf record --format ' 'folded pprof speedscope svg text'
expect 'rperf record --format t' 'text'
expect 'rperf record -p --mo' '--mode'
expect 'rperf record ' 'app.rb lib'
expect 'rperf record -- ' 'app.rb lib'
expect_not 'rperf record x.rb --mo' '--mode'
expect_not 'rperf record -I lib --mo' '--mode'
expect_not 'rperf record -- --mo' '--mode'
expect 'rperf record x.rb n' 'notes.txt'
# Profiles: the extensions of the formats rperf reads, from the program.
expect 'rperf report ' 'cpu.pb.gz lib s.folded'
expect 'rperf diff cpu.pb.gz ' 'cpu.pb.gz lib s.folded'
expect 'rperf report --format ' 'folded pprof speedscope svg text'
expect 'rperf diff --format ' 'svg text'
exit $failed
EOF

# Each line the driver prints ("ok - ..." or "FAIL: ...") is one test.
drive() {
	PATH="$tmp/bin:$PATH" bash --norc --noprofile "$tmp/drive.bash" "$script" "$@" \
	    >"$tmp/drive.out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) test_pass "${line#ok - }" ;;
		"FAIL: "*) test_fail "${line#FAIL: }" ;;
		*) echo "# $line" ;;
		esac
	done <"$tmp/drive.out"
	[ "$rc" -eq 0 ] || [ "$test_failed" -gt 0 ] ||
		test_fail "the driver exited $rc"
}

cd "$tmp/work" || exit 1
bc=/usr/share/bash-completion/bash_completion
if [ -f "$bc" ]; then
	drive "$bc"
else
	echo "# bash-completion is not installed: only the fallback is tested"
fi
drive
test_done
