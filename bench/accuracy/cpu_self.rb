# mode: cpu.  Self time: a loop method does a few lines of integer
# arithmetic inline and calls a one-line method once per iteration.  The
# callee's share of the loop's time is known by construction: the same
# loop with the call written inline, timed against the original
# (interleaved rounds, each variant's fastest), costs the original's time
# less what the call adds.  The profile must give the callee that share
# of the two methods' self time, not the caller's work billed to it (the
# next safepoint after a tick is usually the callee's return).  The share
# is a lower bound of the time in the callee's frame (its own work, x + 1,
# runs inline in the construction); the whole line of the call, also
# measured, is an upper bound, and is shown.  Under YJIT most of what a
# call adds is pushing and popping the frame, done in the caller's
# machine code: no profiler that reads the frame the thread is in can
# bill it to the callee.  (perf record -e cpu-clock with --yjit-perf on
# this loop put 4.5% of the two methods' machine-code samples in the
# callee's code, where the construction says 31-40%.)
require_relative "measure"

YJIT = defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?
ITERS = Integer(ENV.fetch("ITERS", YJIT ? "100_000_000" : "15_000_000").delete("_"))
CHUNK = 10_000	# loop calls of this many iterations, so that YJIT compiles them
ROUNDS = Integer(ENV.fetch("ROUNDS", "45"))

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
# Interleaved rounds, in a rotating order, each variant's time the
# fastest of its rounds: other work on the machine only ever slows a
# round down.
times = Hash.new { |h, k| h[k] = [] }
ROUNDS.times do |r|
  %i[run_loop run_inlined run_without].rotate(r).each { |m| times[m] << timed(m, ITERS / ROUNDS) }
end
best = times.transform_values(&:min)
share = (best[:run_loop] - best[:run_inlined]).fdiv(best[:run_loop])
share_max = (best[:run_loop] - best[:run_without]).fdiv(best[:run_loop])
$stderr.printf("cpu_self: callee share %.2f%% (the whole line: %.2f%%)\n",
  share * 100, share_max * 100) if ENV["VERBOSE"]
# For check.rb: the callee's share of the self time of the two methods,
# and what the whole line of the call costs (an upper bound, shown).
Measure::LOCK.synchronize do
  Measure::TOTALS["Object#callee"]["self_share"] = share
  Measure::TOTALS["Object#callee"]["self_share_max"] = share_max
  Measure::TOTALS["Object#callee"]["self_of"] = ["Object#run_loop", "Object#callee"]
end
