#!/bin/sh
# t0903-readme-layout: the Layout section of README.md names every source
# file under src/ (generated ones aside) and names no file that is gone,
# so that a newcomer can trust it to say where a change goes.
. "$TEST_SRCDIR/test-lib.sh"

top=$TEST_SRCDIR/..

# The Layout section's text, from its heading to the next one.
sed -n '/^## Layout$/,/^## /p' "$top/README.md" >layout.txt

test_expect_success 'README.md has a Layout section' '
	test_grep "^## Layout$" layout.txt &&
	test $(wc -l <layout.txt) -gt 10
'

test_expect_success 'every source file is named in it' '
	missing= &&
	for f in "$top"/src/*.c "$top"/src/*.h; do
		name=${f##*/} &&
		case $name in *.pb-c.*) continue ;; esac &&
		grep -q -e "$name" layout.txt || missing="$missing $name"
	done &&
	if test -n "$missing"; then
		echo "not in the Layout section of README.md:$missing" >&2 &&
		false
	fi
'

test_expect_success 'every src/ file it names exists' '
	grep -o "src/[A-Za-z0-9_*.-]*\.[ch]" layout.txt | sort -u >named &&
	while read -r f; do
		case $f in *"*"* | *NAME*) continue ;; esac &&
		test -f "$top/$f" || { echo "README.md names $f, which does not exist" >&2; false; } || return 1
	done <named
'

test_done
