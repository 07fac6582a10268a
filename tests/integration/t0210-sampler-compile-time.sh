#!/bin/sh
# Compiling runs in C without a safepoint: its time goes to the require or
# eval that compiles, not to a method the compiler calls (Integer#-@ folds
# negative literals) nor to the first frame of the compiled code.  What
# runs before the script's first line sits under one "(ruby boot)" frame.
. "$TEST_SRCDIR/test-lib.sh"

# Weight (ns) of the folded stacks of FILE that match the regex.
weight() {
	folded_sum "$1" "$2"
}

test_expect_success 'a large file to compile (tens of ms)' '
	"$RUBY" -e "
	  File.open(%q(big.rb), %q(w)) do |f|
	    f.puts %q(module SlowCompileBody)
	    4000.times { |i| f.puts %Q(  def self.m#{i}(x) = [x - #{i}, -#{i}, -#{i + 1}.5, x * -#{i + 2}, { k: -#{i} }]) }
	    f.puts %q(end)
	  end" &&
	"$RPERF" record -q -o p.folded "$FIXTURES/slow_compile.rb" "$PWD/big.rb" >out &&
	cat out
'

test_expect_success 'the compile is billed to Kernel#require and Kernel#eval' '
	req=$(sed -n "s/^require //p" out) &&
	ev=$(sed -n "s/^eval //p" out) &&
	req_self=$(weight p.folded "^<main>(;Kernel#require)+ [0-9]+\$") &&
	ev_self=$(weight p.folded "^<main>;Kernel#eval [0-9]+\$") &&
	echo "require took $req, self $req_self; eval took $ev, self $ev_self" &&
	num_ge "$req_self" $((req * 6 / 10)) &&
	num_ge "$ev_self" $((ev * 6 / 10))
'

# A method called straight from require or eval (not the compiled code,
# which is <top (required)> or <compiled>, nor a GC pseudo-frame) runs for
# microseconds: it may not carry the compile.  One tick may find the
# thread in it, and a sample weighs a period, or two where the tick
# before found a GC running and took none (sampler_tick_in_gc): 2.5 ms is
# more than that, and less than a compile billed to such a method carried
# (3 to 4.5 ms; Monitor#synchronize under the boot's require once read
# 1.2 ms on Ruby 3.3, one sample).
test_expect_success 'no method the compiler calls carries the compile' '
	awk "/^<main>;/ {
		s = \$0
		sub(/ [0-9]+\$/, \"\", s)
		n = split(s, f, \";\")
		if (n >= 2 && f[n - 1] ~ /^Kernel#(require|require_relative|load|eval)\$/ &&
		    f[n] !~ /^(<|\\[|Kernel#)/)
			w[f[n]] += \$NF
	} END { for (k in w) print k, w[k] }" p.folded >callees &&
	cat callees &&
	awk "\$NF > 2500000 { bad = 1 } END { exit bad }" callees &&
	# (on Ruby 3.3 the eval went to Module#const_added, the first
	# safepoint of "module SlowCompileEval")
	phantom=$(weight p.folded "^<main>;.*(Integer#-@|Module#const_added) [0-9]+\$") &&
	echo "Integer#-@ and Module#const_added after boot: $phantom" &&
	test "$phantom" -lt 1000000
'

# In boot too, where the first file required (rubygems.rb) compiles
# before any compile site is known: its samples are put right once it is.
# Naming Ruby's own code (<internal:numeric>) early, as code compiled from
# a string, once undid that: Integer#-@ carried 3 to 4.5 ms of the boot.
# (Ruby 3.3 names an eval's code like the method that evals it, as in
# Gem::Specification.load;Kernel#eval;Gem::Specification.load: that leaf
# is the gemspec's own code, running.)
test_expect_success 'in boot, no method the compiler calls carries a compile' '
	awk "/^\\(ruby boot\\);/ {
		s = \$0
		sub(/ [0-9]+\$/, \"\", s)
		n = split(s, f, \";\")
		if (n >= 3 && f[n - 1] ~ /^Kernel#(require|require_relative|load|eval)\$/ &&
		    f[n] !~ /^(<|\\[|\\(|Kernel#)/ && f[n] != f[n - 2])
			w[f[n]] += \$NF
	} END { for (k in w) print k, w[k] }" p.folded >boot_callees &&
	cat boot_callees &&
	awk "\$NF > 2500000 { bad = 1 } END { exit bad }" boot_callees
'

# After boot a stack starts at the script (<main>, or the at_exit block).
test_expect_success 'boot samples sit under one (ruby boot) frame' '
	test_grep "^\\(ruby boot\\)" p.folded &&
	! grep -v -E "^((block in )?<main>|\\(ruby boot\\))[; ]" p.folded &&
	! grep "unknown" p.folded &&
	"$RPERF" report --format folded --ignore "\\(ruby boot\\)" p.folded >noboot &&
	test "$(weight noboot)" = "$(weight p.folded "^(block in )?<main>")"
'

# From the script's first line: the thread's clock also counts rperf's
# start and the VM's before the sampler is installed, which took 6-16 ms
# of CPU on one VM and 22 ms on another whose page faults cost 14 us each
# (a sanitizer build takes several times longer).  The samples after
# boot bill the same stretch but for up to a sample period at its start.
bound=1
[ -n "${RPERF_SANITIZERS:-}" ] && bound=3

test_expect_success 'every nanosecond is billed once' '
	cpu=$(sed -n "s/^cpu //p" out) &&
	start=$(sed -n "s/^start //p" out) &&
	total=$(weight p.folded "^(block in )?<main>") &&
	echo "cpu $cpu from the first line $((cpu - start)), billed $total after boot" &&
	within_pct "$total" "$((cpu - start))" $bound
'

test_done
