#!/bin/sh
# t0902-completion-fish-zsh: the fish and zsh completions, with the rperf
# under test first in PATH.
#
# fish: "complete -C LINE" lists the candidates, so record's flags, their
# values and the switch to files after the script are checked directly.
# zsh: _rperf must load through compinit without a word on stderr and be
# registered for rperf; then, in an interactive zsh on a pseudo-terminal
# (zsh/zpty), TAB must really complete "rperf record --mo".  Each line
# typed there is followed by a marker command, and the output is read up
# to the marker, so the check waits for zsh, not for a fixed time.
#
# Exit status: 0 on success, 1 on failure, 77 when neither fish nor zsh
# is installed.  A missing shell skips its part with a message.
. "$TEST_SRCDIR/test-lib.sh"

compdir=$TEST_SRCDIR/../completions
rperf=$RPERF
fail() {
	test_fail "$*"
}

if ! command -v fish >/dev/null 2>&1 && ! command -v zsh >/dev/null 2>&1; then
	skip_all "neither fish nor zsh is installed"
fi

tmp=$TRASH
mkdir "$tmp/bin" "$tmp/work" "$tmp/work/lib" "$tmp/home" || exit 1
ln -s "$rperf" "$tmp/bin/rperf" || exit 1
: >"$tmp/work/app.rb"
: >"$tmp/work/notes.txt"
: >"$tmp/work/cpu.pb.gz"
: >"$tmp/work/s.folded"
: >"$tmp/work/cpu.svg"
cd "$tmp/work" || exit 1
# Keep the user's shell configuration out of it.
HOME=$tmp/home
XDG_CONFIG_HOME=$tmp/home/.config
XDG_DATA_HOME=$tmp/home/.local/share
export HOME XDG_CONFIG_HOME XDG_DATA_HOME

# ---- fish ----

# The candidates fish offers for LINE, without descriptions, sorted, on
# one line.
fish_complete() {
	PATH="$tmp/bin:$PATH" fish --no-config -c \
	    'source $argv[1]; and complete -C $argv[2]' "$compdir/rperf.fish" "$1" \
	    2>"$tmp/fish.err" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'
}

# fish must complete LINE to exactly WANT.
fish_expect() {
	got=$(fish_complete "$1")
	if [ -s "$tmp/fish.err" ]; then
		fail "fish [$1]: errors: $(cat "$tmp/fish.err")"
	elif [ "$got" = "$2" ]; then
		test_pass "fish [$1] -> [$2]"
	else
		fail "fish [$1] completed to [$got], wanted [$2]"
	fi
}

# fish must not offer WORD for LINE.
fish_expect_not() {
	got=$(fish_complete "$1")
	case " $got " in
	*" $2 "*) fail "fish [$1] offered $2 among [$got]" ;;
	*) test_pass "fish [$1] does not offer $2" ;;
	esac
}

if command -v fish >/dev/null 2>&1; then
	fish_expect 'rperf rec' 'record'
	fish_expect 'rperf record --mo' '--mode'
	fish_expect 'rperf record --mode ' 'alloc cpu wall'
	fish_expect 'rperf record --mode=' '--mode=alloc --mode=cpu --mode=wall'
	fish_expect 'rperf record --format ' 'folded pprof speedscope svg text'
	fish_expect 'rperf record ' 'app.rb lib/'
	fish_expect_not 'rperf record x.rb --mo' '--mode'
	fish_expect_not 'rperf record -I lib --mo' '--mode'
	fish_expect 'rperf record x.rb n' 'notes.txt'
	fish_expect 'rperf report ' 'cpu.pb.gz lib/ s.folded'
	fish_expect 'rperf diff --format ' 'svg text'
else
	echo "# skip: fish is not installed"
fi

# ---- zsh ----

if command -v zsh >/dev/null 2>&1; then
	mkdir "$tmp/fpath" && cp "$compdir/_rperf" "$tmp/fpath/" || exit 1

	# Loading: compinit picks _rperf up from fpath for rperf, and the
	# file parses (autoload +X loads the definition without running it).
	zsh -f -c '
		fpath=("$1" $fpath)
		autoload -Uz compinit && compinit -u -d "$2/zcompdump" &&
		autoload -Uz _rperf &&
		autoload +X _rperf &&
		print -r -- "rperf=$_comps[rperf]"
	' zsh "$tmp/fpath" "$tmp" >"$tmp/zsh.out" 2>"$tmp/zsh.err"
	rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$tmp/zsh.err" ]; then
		fail "zsh: loading _rperf failed (status $rc): $(cat "$tmp/zsh.err")"
	elif [ "$(cat "$tmp/zsh.out")" != "rperf=_rperf" ]; then
		fail "zsh: compinit did not register _rperf for rperf: $(cat "$tmp/zsh.out")"
	else
		test_pass "zsh: _rperf loads and is registered for rperf"
	fi

	# Completing: type LINE, TAB, then kill the line and run a marker
	# command; everything zsh echoes before the marker is what TAB did.
	cat >"$tmp/drive.zsh" <<'EOF'
zmodload zsh/zpty || exit 2
setopt extendedglob
fp=$1; shift
zpty -b z "zsh -f -i"
zpty -w z "PS1='%% '; PROMPT_EOL_MARK=''; unsetopt beep; fpath=(${(q)fp} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)fp}/zcompdump; print READY-\$((6*7))"
# Read from the terminal until PATTERN, giving up after 20 seconds.
readto() {
	local chunk end=$(( SECONDS + 20 ))
	out=
	while (( SECONDS < end )); do
		if zpty -r -t z chunk; then
			out+=$chunk
			[[ $out == *$1* ]] && return 0
		else
			sleep 0.05
		fi
	done
	return 1
}
readto READY-42 || { print -r -- "TIMEOUT starting zsh: $out"; exit 1; }
n=0
for line in "$@"; do
	(( n++ ))
	zpty -w -n z "$line"$'\t'
	zpty -w -n z $'\x15'"print DONE-\$((1000+$n))"$'\n'
	if ! readto "DONE-$((1000 + n))"; then
		print -r -- "TIMEOUT on [$line]: $out"
		exit 1
	fi
	# Drop escape sequences and carriage returns; keep the text.
	print -r -- "<<<$line>>>${${out//$'\e'\[[0-9;?]#[A-Za-z]/}//$'\r'/}"
done
zpty -d z
exit 0
EOF
	if PATH="$tmp/bin:$PATH" TERM=dumb zsh -f "$tmp/drive.zsh" "$tmp/fpath" \
	    'rperf record --mo' 'rperf record x.rb --mo' 'rperf record -I lib --mo' \
	    'rperf rec' 'rperf report cp' \
	    >"$tmp/zpty.out" 2>&1; then
		# What follows each typed line, up to its marker.
		after() {
			awk -v l="<<<$1>>>" 'index($0, l) == 1 { on = 1 } on { print } /DONE-/ && on { exit }' \
			    "$tmp/zpty.out"
		}
		if after 'rperf record --mo' | grep -q 'rperf record --mode='; then
			test_pass "zsh [rperf record --mo] -> --mode="
		else
			fail "zsh [rperf record --mo] did not complete to --mode=: $(after 'rperf record --mo')"
		fi
		if after 'rperf record x.rb --mo' | grep -q -e '--mode'; then
			fail "zsh [rperf record x.rb --mo] offered --mode: $(after 'rperf record x.rb --mo')"
		else
			test_pass "zsh [rperf record x.rb --mo] does not offer --mode"
		fi
		if after 'rperf record -I lib --mo' | grep -q -e '--mode'; then
			fail "zsh [rperf record -I lib --mo] offered --mode: $(after 'rperf record -I lib --mo')"
		else
			test_pass "zsh [rperf record -I lib --mo] does not offer --mode"
		fi
		if after 'rperf rec' | grep -q 'rperf record'; then
			test_pass "zsh [rperf rec] -> record"
		else
			fail "zsh [rperf rec] did not complete to record: $(after 'rperf rec')"
		fi
		# Profiles by the extensions the program lists: of cpu.pb.gz
		# and cpu.svg only the profile is offered, so "cp" completes.
		if after 'rperf report cp' | grep -q 'rperf report cpu\.pb\.gz'; then
			test_pass "zsh [rperf report cp] -> cpu.pb.gz"
		else
			fail "zsh [rperf report cp] did not complete to cpu.pb.gz: $(after 'rperf report cp')"
		fi
	elif grep -q 'zpty' "$tmp/zpty.out" && ! grep -q TIMEOUT "$tmp/zpty.out"; then
		echo "# skip: zsh/zpty is not available, interactive completion not tried"
	else
		fail "zsh: driving an interactive zsh failed: $(cat "$tmp/zpty.out")"
	fi
else
	echo "# skip: zsh is not installed"
fi

test_done
