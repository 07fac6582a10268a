#!/bin/sh
# rperf report's terminal browser, driven in a real terminal: tmux runs
# "rperf report" in a detached session of a fixed size, send-keys types,
# capture-pane reads the screen, and the checks are what a person would
# see: the hot function on top, its callers, the tree opening, search,
# f/i/u changing the total and the filter line (two filters stacked and
# undone one at a time, the tree as --stdio's), threads, labels, source
# lines, the keys, q and signals leaving the shell's screen as it was.
# Off a terminal, or with --stdio, the text report is unchanged.
. "$TEST_SRCDIR/test-lib.sh"

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"

cat >k.folded <<'EOF2'
main;work;fib;fib 60000000
main;work;hot 29000000
main;idle;[GVL blocked] 8000000
main;gc;[GC marking] 2000000
main;App::Module1::AVeryLongClassNameThatGoesOnAndOn::AndOnAndOnAndOnAndOnAndOn#and_a_long_method_name 1000000
EOF2

# A tmux server of our own (its socket in the scratch directory), with
# no user configuration, and one shell in a 100x30 window.
TMUX_SOCK=$TRASH/tmux.sock
tm() { tmux -S "$TMUX_SOCK" -f /dev/null "$@"; }
# Killed before test_done, which removes the socket with the scratch
# directory; the trap is for a file that dies before that.
trap 'tm kill-server >/dev/null 2>&1' EXIT
tm new-session -d -s t -x 100 -y 30 sh || skip_all "tmux cannot start a session here"

# Type KEYS (tmux key names) into the session.
keys() { tm send-keys -t t "$@"; }
# Run a command line in the session's shell, after a clear screen and a
# marker the test can find again once the browser is gone.
run() {
	keys -l "clear; echo BEFORE; $*; echo rc=\$?"
	keys Enter
}
# A fresh shell in the window, whatever ran there killed, on a clear
# screen: the last browser's screen stays until something draws, and
# must not be taken for the next one's.
fresh() {
	tm respawn-pane -k -t t sh &&
	keys -l "clear" && keys Enter &&
	_i=0 &&
	while snap && grep -q "? keys" screen.txt; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || return 1
		sleep 0.1
	done
}
# A fresh shell and on it a
# browser on ARGS, the functions shown: each test starts from here.
browse() {
	fresh &&
	run "\"$RPERF\" report $*" &&
	see "^[0-9]+/[0-9]+ .*\? keys"
}
# The screen now, into screen.txt.
snap() { tm capture-pane -p -t t >screen.txt; }
# Wait (up to 10 s) until the screen shows a line matching REGEX.
see() {
	_i=0
	while [ $_i -lt 100 ]; do
		snap
		grep -E -q -- "$1" screen.txt && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "never saw '$1' on the screen:" >&2
	cat screen.txt >&2
	return 1
}
# Wait (up to 10 s) until no line of the screen matches REGEX (a key's
# redraw can come after the lines it keeps).
gone() {
	_i=0
	while [ $_i -lt 100 ]; do
		snap
		grep -E -q -- "$1" screen.txt || return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	echo "still on the screen: '$1':" >&2
	cat screen.txt >&2
	return 1
}
# Leave the browser with q and check it exited 0 and gave the screen
# back: the marker is there, the browser's title line is not.
quit_ok() {
	keys q &&
	see "^rc=" &&
	test_grep "^BEFORE$" screen.txt &&
	test_grep "^rc=0$" screen.txt &&
	test_grep ! "Filters:" screen.txt
}

test_expect_success 'off a terminal: the text report, as ever' '
	"$RPERF" report k.folded | cat >piped &&
	"$RPERF" report --stdio k.folded >stdio &&
	test_cmp piped stdio &&
	test_grep "^Flat profile" piped &&
	test_grep "^ +60.00 +60.0%  fib$" piped &&
	test_grep "^ +29.00 +29.0%  hot$" piped
'

test_expect_success '--tui off a terminal, or with an output, is a usage error' '
	test_expect_code 2 "$RPERF" report --tui k.folded >out 2>err &&
	test_grep "needs a terminal" err &&
	test_expect_code 2 "$RPERF" report --tui --stdio k.folded 2>err &&
	test_expect_code 2 "$RPERF" report --tui -o x.folded k.folded 2>err &&
	test_grep "cannot be combined" err &&
	# --source-dir where the browser is ruled out; text to a pipe is not
	test_expect_code 2 "$RPERF" report --stdio --source-dir . k.folded 2>err &&
	test_grep "^rperf report: --source-dir is for the browser" err &&
	test_expect_code 2 "$RPERF" report --source-dir . -o x.folded k.folded 2>err &&
	test_grep "^rperf report: --source-dir is for the browser" err &&
	"$RPERF" report --source-dir . k.folded >out 2>err &&
	test_grep "^Flat profile" out && ! test -s err
'

test_expect_success 'keys that cannot be read, or --stdio: the text on a terminal too' '
	fresh &&
	run "\"$RPERF\" report k.folded </dev/null" &&
	see "^rc=0$" && test_grep "^Flat profile" screen.txt &&
	run "cat k.folded | \"$RPERF\" report -" &&
	see "^rc=0$" && test_grep "^Flat profile" screen.txt &&
	run "\"$RPERF\" report --stdio k.folded" &&
	see "^rc=0$" && test_grep "^Flat profile" screen.txt &&
	run "TERM=no-such-terminal \"$RPERF\" report k.folded" &&
	see "^rc=0$" && test_grep "^Flat profile" screen.txt &&
	run "TERM=no-such-terminal \"$RPERF\" report --tui k.folded 2>err" &&
	see "^rc=1$" && test_grep "cannot draw on this terminal" err
'

test_expect_success 'on a terminal: the functions, the hot one on top' '
	browse k.folded &&
	test_grep "^Filters: none" screen.txt &&
	sed -n 4p screen.txt >row &&
	test_grep "^ +60.00 +60.0% +60.00 +60.0%  fib *$" row &&
	test_grep "^1/7 " screen.txt
'

test_expect_success 'Enter on it shows its callers' '
	browse k.folded && keys Enter &&
	see "Callers of fib" &&
	see "^ +60.00 +60.0% +0.00    \+ fib" &&
	test_grep "^ +60.00 +60.0% +60.00  - fib" screen.txt &&
	test_grep "^ +60.00 +60.0% +0.00    \+ fib" screen.txt &&
	keys Down Right && see "^ +60.00 .*      \+ work" &&
	keys Escape && see "^1/7 "
'

test_expect_success 'the call tree opens on Enter and closes on Left' '
	browse k.folded && keys 2 && see "Call tree" &&
	# (the title can be drawn before the rows: wait for them)
	see "^ +89.00 +89.0% +0.00    \+ work$" &&
	test_grep "^ +100.00 100.0% +0.00  - main$" screen.txt &&
	keys Down Enter && see "^ +60.00 +60.0% +0.00      \+ fib$" &&
	test_grep "^ +29.00 +29.0% +29.00        hot$" screen.txt &&
	keys Left && see "^ +89.00 +89.0% +0.00    \+ work$" &&
	gone "hot"
'

test_expect_success 'search finds a closed node and moves there; n the next' '
	browse k.folded && keys 2 && see "Call tree" &&
	keys / h o t && see "^/hot" &&
	keys Enter && see "^ +29.00 +29.0% +29.00        hot$" &&
	test_grep "^4/" screen.txt &&
	keys Escape && see "^1/7 " &&
	keys / i d l && keys Enter && see "^3/7 " &&
	keys g / w o && keys Enter && see "^7/7 " &&
	keys / m a i n && keys Enter && see "^6/7 " &&
	keys n && see "^6/7 "
'

test_expect_success 'n and N go round the matches and say when they wrap' '
	browse k.folded &&
	keys / o && keys Enter && see "^2/7 " &&
	keys n && see "^5/7 " && keys n && see "^7/7 " &&
	keys n && see "^2/7  search wrapped to the top " &&
	keys N && see "^7/7  search wrapped to the bottom " &&
	keys N && see "^5/7  \? keys" &&
	keys 2 && see "^ +89.00 +89.0% +0.00    \+ work$" &&
	keys / f i b && keys Enter && see "^3/7 " &&
	keys N && see "^4/8  search wrapped to the bottom " &&
	test_grep "^ +60.00 +60.0% +60.00          fib$" screen.txt
'

test_expect_success 'the search is a regex, case ignored unless it has a capital' '
	browse k.folded &&
	keys / && keys -l "^(gc|idle)\$" && keys Enter && see "^3/7 " &&
	keys n && see "^4/7 " &&
	keys / M O D U L E && keys Enter && see "^4/7  not found: MODULE " &&
	keys / m o d u l e && keys Enter && see "^5/7 " &&
	keys g / && keys -l "i.l" && keys Enter && see "^3/7 "
'

test_expect_success 'a bad regex is a message on the status line, not a crash' '
	browse k.folded &&
	keys / && keys -l "(fib" &&
	see "^/\(fib +bad regex .\(fib.: " &&
	keys Enter && see "^bad regex .\(fib.: " &&
	keys j && see "^2/7 " &&
	keys n && see "^bad regex .\(fib.: " &&
	quit_ok
'

test_expect_success 'f keeps the samples with the function, i drops them, u undoes' '
	browse k.folded && keys f &&
	see "^Filters: --focus .\^fib\\$. \(kept 60.00 of 100.00 ms, 60.0%\)" &&
	test_grep "Total 60.00 ms" screen.txt &&
	gone "hot" &&
	keys u && see "^Filters: none" &&
	keys j && keys i &&
	see "^Filters: --ignore .\^hot\\$. \(kept 71.00 of 100.00 ms, 71.0%\)" &&
	test_grep "Total 71.00 ms" screen.txt &&
	keys u && see "Total 100.00 ms"
'

test_expect_success 'a second i narrows the first, the tree is as --stdio --tree, u steps back' '
	"$RPERF" report --stdio --tree --ignore "^hot\$" --ignore "^idle\$" \
	    k.folded >tree2 &&
	test_grep "^ +63.00 +100.0%  main$" tree2 &&
	test_grep "^ +60.00 +95.2%    work$" tree2 &&
	test_grep "^ +2.00 +3.2%    gc$" tree2 &&
	browse k.folded && keys j i &&
	see "^Filters: --ignore .\^hot\\$. \(kept 71.00" &&
	keys / i d l e Enter i &&
	see "^Filters: --ignore .\^hot\\$. --ignore .\^idle\\$. \(kept 63.00" &&
	keys 2 && see "^ +63.00 100.0% +0.00  - main$" &&
	test_grep "^ +60.00 +95.2% +0.00    \+ work$" screen.txt &&
	test_grep "^ +2.00 +3.2% +0.00    \+ gc$" screen.txt &&
	test_grep ! " \+ idle$" screen.txt &&
	keys u && see "^ +71.00 100.0% +0.00  - main$" &&
	test_grep "^ +8.00 +11.3% +0.00    \+ idle$" screen.txt &&
	test_grep "^Filters: --ignore .\^hot\\$. \(kept 71.00" screen.txt &&
	keys u && see "^ +89.00 +89.0% +0.00    \+ work$" &&
	test_grep "^Filters: none" screen.txt
'

test_expect_success 'VM states: Enter keeps one, as --tagfocus' '
	browse k.folded && keys l && see "VM states and labels" &&
	see "^ +8.00 +8.0%  \[GVL blocked\] \(%GVL=blocked\)" &&
	keys Enter &&
	see "^Filters: --tagfocus %GVL=blocked \(kept 8.00 of 100.00 ms" &&
	test_grep "idle" screen.txt && gone "fib" &&
	keys u && see "^Filters: none"
'

test_expect_success 'nothing kept: every view says so, and no key breaks it' '
	browse --focus no-such-function k.folded &&
	test_grep "^ no samples match the filters" screen.txt &&
	test_grep "^Filters: --focus .no-such-function. \(kept 0.00 of 100.00 ms" screen.txt &&
	keys Enter c a f i u s / x Enter n 2 Enter Right Left l Enter t Enter 4 3 1 &&
	keys Escape Escape Escape Escape Escape Escape Escape &&
	see "^0/0 " && test_grep "no samples match" screen.txt &&
	quit_ok
'

test_expect_success '? shows the keys; q leaves with status 0 and the screen back' '
	browse k.folded && keys "?" && see "^ q +quit" &&
	test_grep "^ f +focus" screen.txt &&
	test_grep "^ /" screen.txt &&
	test_grep "n N the next, previous" screen.txt &&
	test_grep "^ w or 5 .*(--timeline)" screen.txt &&
	test_grep "^ m or 6 .*allocation sites.*v: the next sample type" screen.txt &&
	keys Escape && see "^1/7 " &&
	quit_ok
'

# (These quit before the window is made wide again: tmux, told to grow
# the window while the browser is on the alternate screen, gave the main
# screen back with a row of the browser's left in it, once in four runs.)
test_expect_success 'at 80 columns long names lose their start, never a figure' '
	tm resize-window -t t -x 80 -y 24 &&
	browse --sort cum k.folded &&
	test_grep "\*Cum ms" screen.txt &&
	test_grep "^ +1.00 +1.0% +1.00 +1.0%  \.\..*#and_a_long_method_name$" screen.txt &&
	awk "length > 80 { exit 1 }" screen.txt &&
	test_grep "Cum ms" screen.txt &&
	tm resize-window -t t -x 60 -y 20 && sleep 0.3 &&
	see "^ +1.00 +1.0% +1.00 +1.0%  \.\..*method_name" &&
	quit_ok &&
	tm resize-window -t t -x 100 -y 30
'

test_expect_success 'at 80 columns every filter is shown, on as many lines as it takes' '
	tm resize-window -t t -x 80 -y 24 &&
	browse k.folded &&
	keys / A V e r y Enter i &&
	see "^Filters: --ignore" &&
	keys i &&
	see "\(kept 39.00 of 100.00 ms, 39.0%\)$" &&
	awk "length > 80 { exit 1 }" screen.txt &&
	tr -d "\n" <screen.txt >joined &&
	test_grep "AVeryLongClassNameThatGoesOnAndOn::AndOnAndOnAndOnAndOnAndOn#and_a_long_method_name\\\$. *--ignore .\^fib\\\$." joined &&
	test_grep "^ +29.00 +74.4% +29.00 +74.4%  hot$" screen.txt &&
	keys u u && see "^Filters: none" &&
	quit_ok &&
	tm resize-window -t t -x 100 -y 30
'

test_expect_success 'SIGTERM and end of input give the screen back too' '
	fresh &&
	run "sh -c \"echo \\\$\\\$ >pid; exec \\\"$RPERF\\\" report k.folded\"" &&
	see "Filters: none" &&
	kill -TERM "$(cat pid)" &&
	see "^rc=143$" && test_grep "^BEFORE$" screen.txt &&
	test_grep ! "Filters:" screen.txt &&
	run "\"$RPERF\" report --tui k.folded </dev/null" &&
	see "^rc=0$" && test_grep ! "Filters:" screen.txt
'

test_expect_success 'names are bytes: UTF-8 in a UTF-8 locale, ? for each byte elsewhere' '
	printf "main;Caf\303\251#na\303\257ve 1000000\n" >u.folded &&
	browse u.folded &&
	test_grep "  Caf\?\?#na\?\?ve$" screen.txt &&
	quit_ok &&
	if locale -a 2>/dev/null | grep -qi "^c\.utf-\?8$"; then
		fresh &&
		run "LC_ALL=C.UTF-8 \"$RPERF\" report u.folded" &&
		see "^1/2 " &&
		LC_ALL=C.UTF-8 grep -q "  Caf.#na.ve$" screen.txt
	fi
'

cat >burn.rb <<'EOF2'
def burn(n)
  x = 0
  i = 0
  while i < n
    x += i
    i += 1
  end
  x
end
t = Thread.new do
  Thread.current.name = "cruncher"
  Rperf.label(job: "crunch") { burn(3_000_000) }
end
burn(1_000_000)
t.join
EOF2

test_expect_success 'a recorded profile: threads, labels, and the source lines of a function' '
	"$RPERF" record -q --lines -o burn.pb.gz burn.rb &&
	browse burn.pb.gz &&
	see "Object#burn *$" &&
	keys l && see "  job=crunch$" &&
	keys / c r u n c h && keys Enter && keys Enter &&
	see "^Filters: --tagfocus job=crunch " &&
	keys u && see "^Filters: none" &&
	keys t && see "Threads" &&
	see "cruncher" &&
	keys / c r u n && keys Enter && keys Enter &&
	see "^Filters: --thread [0-9]+ " &&
	test_grep "Object#burn" screen.txt &&
	keys u && see "^Filters: none" &&
	keys / b u r n && keys Enter && keys a &&
	see "Source of Object#burn \(burn.rb\)" &&
	test_grep "^ +[0-9.]+ +[0-9.]+ +5      x \+= i$" screen.txt &&
	test_grep "^ +1  def burn\(n\)$" screen.txt &&
	quit_ok
'

test_expect_success 'source lines: the file is looked for beside the profile and in --source-dir' '
	mkdir -p away/prof srcs &&
	cp burn.rb srcs/ && cp burn.pb.gz away/prof/ &&
	fresh && run "(cd away && \"$RPERF\" report prof/burn.pb.gz)" &&
	see "^[0-9]+/[0-9]+ .*\? keys" &&
	keys / b u r n && keys Enter && keys a &&
	see "Source of Object#burn \(burn.rb: not readable\)" &&
	see "^[0-9]+/[0-9]+  burn.rb is neither here nor beside the profile: --source-dir DIR " &&
	test_grep "^ +[0-9.]+ +[0-9.]+ +5\$" screen.txt &&
	quit_ok &&
	fresh && run "(cd away && \"$RPERF\" report --source-dir ../srcs prof/burn.pb.gz)" &&
	see "^[0-9]+/[0-9]+ .*\? keys" &&
	keys / b u r n && keys Enter && keys a &&
	see "Source of Object#burn \(../srcs/burn.rb\)" &&
	test_grep "^ +[0-9.]+ +[0-9.]+ +5      x \+= i$" screen.txt &&
	quit_ok &&
	cp burn.rb away/prof/ &&
	fresh && run "(cd away && \"$RPERF\" report prof/burn.pb.gz)" &&
	see "^[0-9]+/[0-9]+ .*\? keys" &&
	keys / b u r n && keys Enter && keys a &&
	see "Source of Object#burn \(prof/burn.rb\)" &&
	test_grep "^ +1  def burn\(n\)$" screen.txt &&
	quit_ok
'

cat >waits.rb <<'EOF2'
def burn(n)
  x = 0
  i = 0
  while i < n
    x += i
    i += 1
  end
  x
end
t = Thread.new do
  Thread.current.name = "cruncher"
  burn(3_000_000)
end
burn(3_000_000)
t.join
EOF2

test_expect_success 'a timeline profile: w shows each thread as --stdio does' '
	"$RPERF" record -q -m wall --timeline -o waits.pb.gz waits.rb &&
	"$RPERF" report --stdio waits.pb.gz >stdio &&
	grep "^  [0-9]* (cruncher) " stdio >row &&
	browse waits.pb.gz && keys w &&
	see "Threads over time" &&
	see "^Timeline \(per thread, ms\):" &&
	test_grep "Running +GVL wait +Blocked +GC" screen.txt &&
	grep -F -x -f row screen.txt &&
	test_grep "^Longest GVL waits" screen.txt &&
	# the samples kept are the ones summed: one thread, the other gone
	keys Escape t && see "cruncher" &&
	keys / c r u n && keys Enter && keys Enter &&
	see "^Filters: --thread [0-9]+ " &&
	keys w && see "^Timeline" && test_grep "(cruncher)" screen.txt &&
	test_grep ! "^  1 " screen.txt &&
	quit_ok
'

test_expect_success 'w without sample times, m without allocations: a message' '
	browse k.folded && keys w &&
	see "no sample times: record with --timeline" &&
	keys m && see "not a memory profile: record with -m alloc" &&
	test_grep "Functions$" screen.txt &&
	quit_ok
'

cat >mem.rb <<'EOF2'
def make_strings(n)
  a = []
  n.times { |i| a << "s#{i}" * 3 }
  a
end
def make_hashes(n)
  n.times.map { |i| { i => i } }
end
keep = make_strings(50_000)
make_hashes(30_000)
EOF2

test_expect_success 'a memory profile: v cycles the sample types, m the allocation sites' '
	"$RPERF" record -q -m alloc -o mem.pb.gz mem.rb &&
	for s in alloc_objects alloc_space inuse_objects inuse_space; do
		"$RPERF" report --stdio --sample-index $s mem.pb.gz |
		sed -n "s/^Total: *//p" | sed "s/[()]/\\\\&/g" >total.$s || return 1
	done &&
	browse mem.pb.gz &&
	see "Total $(cat total.alloc_space) " &&
	keys v && see "Total $(cat total.inuse_objects) " &&
	see "^sample type inuse_objects \(3 of 4; v the next\)" &&
	keys v && see "Total $(cat total.inuse_space) " &&
	keys v && see "Total $(cat total.alloc_objects) " &&
	keys v && see "Total $(cat total.alloc_space) " &&
	# the table follows: the top function by bytes allocated, as --stdio
	"$RPERF" report --stdio --sample-index alloc_space mem.pb.gz >stdio &&
	sed -n "/^Flat profile/{n;n;p;q;}" stdio | sed "s/^.*%  //; s/  .*//" >top &&
	grep -q . top &&
	sed -n 4p screen.txt | sed "s/^.*%  //" >row && test_cmp top row &&
	keys m && see "^Allocation sites \(top [0-9]+ of [0-9]+, by bytes allocated\):" &&
	sed -n "/^Allocation sites/{n;n;p;q;}" stdio >site &&
	grep -F -x -f site screen.txt &&
	test_grep "Objects +Bytes +In use +In use bytes +Function" screen.txt &&
	quit_ok
'

tm kill-server >/dev/null 2>&1
test_done
