#!/bin/sh
# Command lines run under ruby and under rperf record must print the same
# output and error text and exit with the same status: ruby's options,
# script forms, exits and signals, process titles and the locale.
. "$TEST_SRCDIR/test-lib.sh"

cp -r "$FIXTURES"/. .
printf 'alpha beta\ngamma delta\n' >input.txt
printf 'garbage line\n#!/usr/bin/env ruby\nputs "after -x: #{ARGV.inspect}"\n' >x.rb
printf 'puts "switch=#{$foo.inspect} bar=#{$bar.inspect}"\n' >s.rb
printf 'BEGIN { puts "begin" }\nEND { puts "end" }\nputs DATA.read\n__END__\ndata section\n' >data.rb
mkdir sub && printf 'puts "hello from #{Dir.pwd.split("/").last}"\n' >sub/in_dir.rb
printf 'def broken(\n' >syntax.rb
printf 'puts "utf8: #{File.read("utf8.txt").encoding} #{File.read("utf8.txt").valid_encoding?} #{File.read("utf8.txt").length}"\n' >enc.rb
printf '\303\251t\303\251\n' >utf8.txt
cat >child_env.rb <<'RUBY'
# What a child process inherits: no empty entries, the same names.
system("env", out: "env.txt")
lines = File.readlines("env.txt", chomp: true)
puts "empty=#{lines.count(&:empty?)}"
puts lines.map { |l| l[/\A[^=]*/] }.sort.join(",")
RUBY

# One command line per line: ruby's arguments, as the shell splits them.
cat >cases <<'CASES'
-e 'puts 1 + 1'
-e 'puts $0' -e 'p ARGV' a b
-x x.rb one
-s s.rb -foo -bar=baz
-C sub in_dir.rb
-n -e 'print $_.upcase' input.txt
-p -e '$_.tr!("a", "A")' input.txt
-a -n -e 'puts $F.last' input.txt
-l -n -e 'puts $_.size' input.txt
-F: -a -n -e 'p $F' input.txt
-c data.rb
-c syntax.rb
syntax.rb
data.rb
-W0 -e 'warn "quiet?"; X = 1; X = 2; puts X'
-w -e 'X = 1; X = 2'
-r set -e 'p Set.new([1, 2]).size'
-I. -r identity_helper -e 'p IdentityHelper::VALUE'
--disable-gems -e 'p defined?(Gem)'
--yjit -e 'p RubyVM::YJIT.enabled?'
-e 'exit 3'
-e 'exit!(4)'
-e 'abort "gave up"'
-e 'raise ArgumentError, "bad"'
-e 'at_exit { puts "bye" }; exit 5'
-e 'Process.kill(:TERM, $$); sleep 1'
-e 'trap(:INT) { puts "trapped"; exit 7 }; Process.kill(:INT, $$); sleep 1'
-e '$stdout.sync = true; print STDIN.read.size'
- one two <stdin.rb
no_such_script.rb
-e 'p Encoding.default_external, Encoding.default_internal'
-E ASCII-8BIT:UTF-8 -e 'p Encoding.default_external, Encoding.default_internal'
-K -e "p __ENCODING__"
enc.rb
-e 'p $PROGRAM_NAME, __FILE__, ARGV' -- -x y
-e 'p [$stdin.tty?, $0.frozen?, Process.argv0]'
-i.bak -p -e '$_.upcase!' edit.txt; cat edit.txt edit.txt.bak
-h
-v -e 'p 1'
-e 'exec "echo", "from exec"'
-e 'puts $0 = "renamed"; p $0'
child_env.rb
-e 'puts File.read("/proc/self/status").lines.grep(/^Sig(Blk|Ign)/); system("grep -E \"^Sig(Blk|Ign|Cgt)\" /proc/self/status")'
-e 'p Dir.children("/proc/self/fd").size, File.open("input.txt").fileno, Thread.list.size'
CASES

export RUBY RPERF
printf 'puts "from stdin: #{ARGV.inspect}"\n' >stdin.rb

# Run the shell words "ruby ARGS" and "rperf record -q -- ARGS" ($1) in an
# environment changed by the other arguments (env's own syntax), with
# input.txt as standard input; they must print the same and exit alike.
compare() {
	_line=$1
	shift
	cp input.txt edit.txt
	env "$@" sh -c "\"\$RUBY\" $_line" <input.txt >ruby.out 2>ruby.err
	echo "status $?" >>ruby.out
	cp input.txt edit.txt
	env "$@" sh -c "\"\$RPERF\" record -q -o p.data -- $_line" <input.txt >rperf.out 2>rperf.err
	echo "status $?" >>rperf.out
	# ruby names itself by its argv[0]: the path here, "ruby" under rperf.
	sed "s|$RUBY|ruby|g" ruby.err >ruby.err.n
	sed "s|$RUBY|ruby|g" ruby.out >ruby.out.n && mv ruby.out.n ruby.out
	if ! cmp -s ruby.out rperf.out || ! cmp -s ruby.err.n rperf.err; then
		echo "differs: ruby $_line ($*)"
		diff -u ruby.out rperf.out
		diff -u ruby.err.n rperf.err
		return 1
	fi
}

test_expect_success 'ruby options, script forms, exits and signals' '
	fails=0 &&
	while IFS= read -r line; do
		compare "$line" || fails=$((fails + 1))
	done <cases &&
	test "$fails" -eq 0 &&
	test "$(wc -l <cases)" -ge 30
'

for loc in "-u LC_ALL LANG=C.UTF-8" "LC_ALL=C.UTF-8" "LC_ALL=C" "LC_ALL=POSIX" \
	"-u LC_ALL -u LANG LC_CTYPE=C.UTF-8" "-u LC_ALL -u LANG -u LC_CTYPE"; do
	test_expect_success "the locale decides the encodings ($loc)" "
		compare \"-e 'p Encoding.default_external, Encoding.default_internal, Encoding.find(\\\"locale\\\")'\" $loc &&
		compare enc.rb $loc &&
		compare '-E UTF-8 -e \"p Encoding.default_external\"' $loc
	"
done

# A long environment, so that a long title fits under both.
PAD=$(printf "%4000s" "" | tr " " p)
export PAD

test_expect_success '$0 and Process.setproctitle set the title as under ruby' '
	compare proctitle.rb -u LC_ALL LANG=C.UTF-8 &&
	test_grep "short: 0=\"worker: busy\" cmdline=\[\"worker: busy\"\]" rperf.out &&
	test_grep "long: 0=true shown=true" rperf.out &&
	test_grep "huge: 0=true prefix=true" rperf.out
'

test_expect_success 'the same in wall mode and with a long title' '
	"$RUBY" proctitle.rb >expect &&
	TITLE_LEN=3500 "$RUBY" proctitle.rb >expect.long &&
	"$RPERF" record -q -m wall -o p.data proctitle.rb >actual &&
	TITLE_LEN=3500 "$RPERF" record -q -m wall -o p.data proctitle.rb >actual.long &&
	test_cmp expect actual &&
	test_cmp expect.long actual.long
'

test_expect_success 'a forked child sets its own title; the profile is whole' '
	"$RUBY" proctitle.rb fork >expect &&
	"$RPERF" record -q -o p.data proctitle.rb fork >actual &&
	test_cmp expect actual &&
	test_grep "child: 0=\"child: busy\"" actual &&
	"$RPERF" record -q --no-inherit -m wall -o p2.data proctitle.rb fork >actual2 &&
	test_cmp expect actual2 &&
	test -s p.data && test -s p2.data
'

test_expect_success 'the title is seen from outside, in ps' '
	"$RPERF" record -q -o p.data -e "\$0 = %q(rperf-title-check); sleep 2" &
	pid=$! &&
	sleep 1 &&
	tr "\0" " " </proc/$pid/cmdline >seen &&
	wait $pid &&
	test_grep "^rperf-title-check" seen
'

test_done
