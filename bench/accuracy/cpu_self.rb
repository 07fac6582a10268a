# mode: cpu.  Self time: a loop method does a few lines of integer
# arithmetic inline and calls a one-line method once per iteration.  The
# callee's share of the loop's time is known by construction: the same
# loop with the call written inline, timed against the original
# (interleaved rounds, the median of the rounds' shares), costs the
# original's time less what the call adds.  The profile must give the
# callee that share of the two methods' self time, not the caller's work
# billed to it (the next safepoint after a tick is usually the callee's
# return).  The share is a lower bound of the callee frame's time (its
# own instruction, x + 1, runs inline in the construction); the whole
# line of the call, also measured, is an upper bound and is shown.
# Under YJIT most of what a call adds is pushing and popping the frame,
# done in the caller's machine code: no profiler that reads the frame
# the thread is in can bill it to the callee.
require_relative "measure"

YJIT = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?
ITERS = Integer(ENV.fetch("ITERS", YJIT ? "100_000_000" : "15_000_000").delete("_"))
CHUNK = 10_000	# loop calls of this many iterations, so that YJIT compiles them
ROUNDS = Integer(ENV.fetch("ROUNDS", "15"))

def callee(x) = x + 1

def run_loop(n)
  a = 1
  b = 2
  i = 0
  while i < n
    a = (a * 31 + i) & 0xffff
    b = (b ^ a) + 7
    a = (a + b * 3) & 0xffff
    b = (b - a) & 0xffff
    b = callee(b)
    i += 1
  end
  a + b
end

def run_inlined(n)
  a = 1
  b = 2
  i = 0
  while i < n
    a = (a * 31 + i) & 0xffff
    b = (b ^ a) + 7
    a = (a + b * 3) & 0xffff
    b = (b - a) & 0xffff
    b += 1
    i += 1
  end
  a + b
end

# The loop without the call and without its work: the callee's own
# instructions run in the callee's frame, so its self time is at most
# what the whole line costs (the caller's part of the call, pushing the
# argument and storing the result, a few instructions, is in it too).
def run_without(n)
  a = 1
  b = 2
  i = 0
  while i < n
    a = (a * 31 + i) & 0xffff
    b = (b ^ a) + 7
    a = (a + b * 3) & 0xffff
    b = (b - a) & 0xffff
    i += 1
  end
  a + b
end

def cpu_ns = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)

# CPU time of N iterations of loop method NAME, in chunks.
def timed(name, n)
  t0 = cpu_ns
  (n / CHUNK).times { send(name, CHUNK) }
  cpu_ns - t0
end

raise "not the same loop" unless run_loop(CHUNK) == run_inlined(CHUNK)
# Interleaved rounds, in a rotating order; the shares are medians of
# each round's, so that a round slowed by the machine's other work
# weighs no more than one.
shares = []
shares_max = []
ROUNDS.times do |r|
  t = {}
  %i[run_loop run_inlined run_without].rotate(r).each { |m| t[m] = timed(m, ITERS / ROUNDS) }
  shares << (t[:run_loop] - t[:run_inlined]).fdiv(t[:run_loop])
  shares_max << (t[:run_loop] - t[:run_without]).fdiv(t[:run_loop])
end
median = ->(a) { a.sort[a.size / 2] }
share = median.(shares)
share_max = median.(shares_max)
$stderr.printf("cpu_self: callee share %.2f%% (the whole line: %.2f%%)\n",
  share * 100, share_max * 100) if ENV["VERBOSE"]
# For check.rb: the callee's share of the self time of the two methods,
# and what the whole line of the call costs (an upper bound, shown).
Measure::LOCK.synchronize do
  Measure::TOTALS["Object#callee"]["self_share"] = share
  Measure::TOTALS["Object#callee"]["self_share_max"] = share_max
  Measure::TOTALS["Object#callee"]["self_of"] = ["Object#run_loop", "Object#callee"]
end
