# Loaded by every accuracy workload: measure(:name) { ... } adds the
# block's inclusive CPU time (this thread's clock) and wall time to the
# totals of method NAME, and at exit the totals are written as JSON to
# $ACCURACY_OUT.  The workloads wrap whole method bodies, so the name is
# the method the profile should bill.
require "json"

module Measure
  TOTALS = Hash.new { |h, k| h[k] = { "cpu" => 0, "wall" => 0 } }
  LOCK = Mutex.new

  def self.now
    [Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond),
     Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)]
  end
end

def measure(name)
  cpu0, wall0 = Measure.now
  yield
ensure
  cpu1, wall1 = Measure.now
  Measure::LOCK.synchronize do
    t = Measure::TOTALS[name.to_s]
    t["cpu"] += cpu1 - cpu0
    t["wall"] += wall1 - wall0
  end
end

at_exit do
  File.write(ENV.fetch("ACCURACY_OUT"), JSON.generate(Measure::TOTALS)) if ENV["ACCURACY_OUT"]
end
