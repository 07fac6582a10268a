# For bench/accuracy/against (stackprof as the reference: vernier bills a
# waiting fiber's time to its yield): external iteration, each
# Enumerator#next a fiber switch into Object#steps, which runs a short C
# method under two one-line methods and yields the result back.  The
# thread changes fibers twice in a few microseconds, so a tick's read of
# the running fiber from another CPU often overlaps a switch: read from
# the fiber it has just left, the frame is the one that fiber stands
# still at (its yield, or Enumerator#next on the main fiber), not where
# the thread runs.  stackprof gives String#match? about 21% of the self
# time, Enumerator#next (the yield's name as well as the caller's) 37%.
#   ruby fiber_turns.rb [SECONDS]   (2.5 by default)
SUBJECT = "hello world 12345"
PATTERN = %r{^[^\d.:-]?[[:alpha:]_\s!@#$%^&*(){}<>|/\\~;=]+}

def inner(s) = s.match?(PATTERN)
def step(s) = inner(s)
def steps = loop { yield step(SUBJECT) }

seconds = Float(ARGV[0] || 2.5)
turns = to_enum(:steps)
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
20_000.times { turns.next } while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
