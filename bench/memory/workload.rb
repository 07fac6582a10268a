# Runs ARGV[0] seconds over a fixed set of stacks, so a profiler whose
# memory grows with unique stacks, not run time, stays flat.
def leaf_a(n) = n.times.sum
def leaf_b(n) = Array.new(n) { |i| i }.sum
def mid(k) = k.even? ? leaf_a(2_000) : leaf_b(2_000)
def top(k) = mid(k)
deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0] || 10)
k = 0
top(k += 1) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
