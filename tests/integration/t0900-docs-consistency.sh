#!/bin/sh
# t0900-docs-consistency: the options of every command agree between the
# three places that show them -- "rperf CMD --help", "rperf
# --completion-helper CMD" (which the shell completions read) and the
# OPTIONS section of man/rperf-CMD.1 -- every command has a manual page
# whose SYNOPSIS is its usage string, rperf.1 points to each page, and
# mandoc lints the pages clean.
#
# The first two are printed from the same options table, so a difference
# there is a bug in cmd.c; the man pages are written by hand, and this is
# what keeps them honest.
. "$TEST_SRCDIR/test-lib.sh"
RPERF_NO_MAN=1
export RPERF_NO_MAN

mandir=$TEST_SRCDIR/../man
tmp=$TRASH
failed=0
fail() {
	test_fail "$*"
	failed=1
}

# Render a man page as plain text (no overstriking) to stdout.
if command -v mandoc >/dev/null 2>&1; then
	render() { mandoc -Tascii "$1"; }
elif command -v groff >/dev/null 2>&1; then
	render() { groff -mandoc -Tascii -P-c "$1" 2>/dev/null; }
fi
bs=$(printf '\b')
plain() { render "$1" | sed "s/.$bs//g"; }
have_render() { command -v mandoc >/dev/null 2>&1 || command -v groff >/dev/null 2>&1; }

# The flag words of an options-table line's left column: "-o, --output
# FILE" gives -o and --output; "--foo[=X]" gives --foo.
flag_words() {
	tr ', ' '\n\n' | sed -n 's/^\(--*[A-Za-z0-9][A-Za-z0-9-]*\).*/\1/p'
}

cmds=$("$RPERF" --list-cmds) || { test_fail "rperf --list-cmds failed"; test_done; }
[ -n "$cmds" ] || { test_fail "rperf --list-cmds printed nothing"; test_done; }

if ! have_render; then
	echo "# neither mandoc nor groff: man page contents not checked"
fi

for cmd in $cmds; do
	[ "$cmd" = help ] && continue
	failed=0
	page=$mandir/rperf-$cmd.1
	d=$tmp/$cmd
	mkdir -p "$d"

	# --help: the left column of the lines under "options:".
	if ! "$RPERF" "$cmd" --help >"$d/help.txt" 2>"$d/help.err"; then
		fail "rperf $cmd --help failed: $(cat "$d/help.err")"
		continue
	fi
	awk '/^options:$/ { on = 1; next }
	     on && /^$/ { exit }
	     on { sub(/^ +/, ""); i = index($0, "  "); print (i ? substr($0, 1, i - 1) : $0) }' \
	    "$d/help.txt" >"$d/help.left"
	flag_words <"$d/help.left" | sort -u >"$d/help.flags"
	[ -s "$d/help.flags" ] || fail "rperf $cmd --help lists no options"

	# The completion helper: the first field of each line but @operands.
	if ! "$RPERF" --completion-helper "$cmd" >"$d/comp.txt" 2>"$d/comp.err"; then
		fail "rperf --completion-helper $cmd failed: $(cat "$d/comp.err")"
		continue
	fi
	cut -f1 "$d/comp.txt" | grep -v '^@' | sort -u >"$d/comp.flags"
	grep -q '^@operands	' "$d/comp.txt" ||
	    fail "rperf --completion-helper $cmd: no @operands line"

	# A flag takes a value in --help (a word after the flags, or [=X])
	# exactly when the helper gives it a completion hint, which is how
	# the completions know to complete the next word as its value.
	while IFS= read -r left; do
		takes=no
		for w in $(printf '%s\n' "$left" | tr ',' ' '); do
			case $w in
			-*'[='*) takes=yes ;;
			-*) ;;
			*) takes=yes ;;
			esac
		done
		for f in $(printf '%s\n' "$left" | flag_words); do
			hint=$(awk -F '\t' -v f="$f" '$1 == f { print $2; exit }' "$d/comp.txt")
			if [ "$takes" = yes ] && [ -z "$hint" ]; then
				fail "$cmd $f: takes a value in --help but has no completion hint"
			elif [ "$takes" = no ] && [ -n "$hint" ]; then
				fail "$cmd $f: takes no value in --help but has completion hint '$hint'"
			fi
		done
	done <"$d/help.left"

	# The man page: the tags of its OPTIONS section, and its SYNOPSIS.
	if [ ! -f "$page" ]; then
		fail "command '$cmd' has no man page (man/rperf-$cmd.1)"
		: >"$d/man.flags"
	elif have_render; then
		plain "$page" >"$d/man.txt"
		awk '/^[^ ]/ { on = ($0 == "OPTIONS"); next }
		     on && /^     -/ { print }' "$d/man.txt" | flag_words | sort -u >"$d/man.flags"
		[ -s "$d/man.flags" ] || fail "man/rperf-$cmd.1: no options in its OPTIONS section"

		usage=$(sed -n '1s/^usage: //p' "$d/help.txt")
		synopsis=$(awk '/^[^ ]/ { on = ($0 == "SYNOPSIS"); next } on' "$d/man.txt" |
		    tr -s ' \t\n' '   ' | sed 's/^ //; s/ $//')
		[ "$synopsis" = "$usage" ] ||
		    fail "man/rperf-$cmd.1: SYNOPSIS is '$synopsis', usage string is '$usage'"

		plain "$mandir/rperf.1" | grep -q "rperf-$cmd(1)" ||
		    fail "man/rperf.1 does not refer to rperf-$cmd(1)"
	fi

	# Every flag must be in all three; name the ones that are not.
	if have_render && [ -f "$page" ]; then
		sources="help comp man"
	else
		sources="help comp"
	fi
	for s in $sources; do
		cat "$d/$s.flags"
	done | sort -u >"$d/all.flags"
	while IFS= read -r f; do
		for s in $sources; do
			grep -qxF -e "$f" "$d/$s.flags" && continue
			case $s in
			help) where="'rperf $cmd --help'" ;;
			comp) where="'rperf --completion-helper $cmd'" ;;
			man) where="the OPTIONS of man/rperf-$cmd.1" ;;
			esac
			fail "$cmd: flag $f is missing from $where"
		done
	done <"$d/all.flags"
	[ "$failed" -eq 0 ] && test_pass "$cmd: $(wc -l <"$d/all.flags" | tr -d ' ') flags agree"
done

# No stray page for a command that does not exist.
for page in "$mandir"/rperf-*.1; do
	[ -f "$page" ] || continue
	name=${page##*/rperf-}
	name=${name%.1}
	printf '%s\n' $cmds | grep -qxF -e "$name" ||
	    fail "man/rperf-$name.1 documents no command that rperf --list-cmds knows"
done

# The pages must lint clean.
if command -v mandoc >/dev/null 2>&1; then
	if mandoc -Tlint -W warning "$mandir"/*.1 >"$tmp/lint" 2>&1; then
		test_pass "mandoc -Tlint -W warning is clean"
	else
		fail "mandoc -Tlint -W warning reports problems:"
		sed 's/^/    /' "$tmp/lint"
	fi
else
	echo "# skip: mandoc is not installed, pages not linted"
fi

test_done
