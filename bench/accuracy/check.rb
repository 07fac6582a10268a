# check.rb FOLDED MEASURED.json MODE: compare each measured method's
# inclusive time (cpu or wall) with the weight the profile gives it
# (samples whose stack contains the method, each counted once), print a
# line per method and the mean relative error; exit 1 when the mean
# exceeds the target (2% cpu, 3% wall).  Methods measured by their
# number of "calls" instead (same-cost bodies) are compared by share: a
# method's share of those methods' profiled time against its share of
# their calls, and against the error an ideal sampler would make by
# chance alone with as many samples (the counting floor, simulated): a
# sampler at 1000 Hz sees a 1 s run through about 1000 samples, so a
# method with 2% of the calls gets about 20 of them, give or take 4.
# Methods measured by "self_share" (a share of the self time of the
# methods "self_of") are compared by that share, in percentage points:
# the error must be within 3 points.
require "json"

# The mean relative error of the shares WANT (summing to 1) estimated from
# N samples drawn at random, over TRIALS simulated runs.
def counting_floor(want, n, trials = 400)
  rng = Random.new(1)
  cum = want.each_with_object([]) { |w, a| a << (a.last || 0) + w }
  total = 0.0
  trials.times do
    hits = Array.new(want.size, 0)
    n.times { r = rng.rand; hits[cum.index { |c| r < c } || want.size - 1] += 1 }
    total += want.each_with_index.sum { |w, i| (hits[i].fdiv(n) - w).abs / w } / want.size
  end
  total / trials
end

folded, measured_path, mode = ARGV
measured = JSON.parse(File.read(measured_path))
incl = Hash.new(0)
self_ns = Hash.new(0)
File.foreach(folded) do |line|
  stack, weight = line.rpartition(" ").values_at(0, 2)
  frames = stack.split(";")
  self_ns[frames.last] += Integer(weight)
  frames.uniq.each { |f| incl[f] += Integer(weight) if measured.key?(f) }
end

status = 0
by_self = measured.select { |_, t| t.key?("self_share") }
by_self.each do |name, t|
  measured.delete(name)
  want = t["self_share"]
  total = t["self_of"].sum { |f| self_ns[f] }
  got = total.zero? ? 0 : self_ns[name].fdiv(total)
  err = (got - want).abs * 100
  printf("  %-22s self share: truth %6.2f%%  profiled %6.2f%%  error %5.2f points (target <= 3)\n",
    name, want * 100, got * 100, err)
  printf("  %-22s (the whole line of the call: %.2f%%)\n", "", t["self_share_max"] * 100) if t["self_share_max"]
  status = 1 if err > 3
end
exit(status) if measured.empty?

by_calls = measured.select { |_, t| t.key?("calls") }
unless by_calls.empty?
  calls = by_calls.sum { |_, t| t["calls"] }
  time = by_calls.sum { |name, _| incl[name] }
  by_calls.keys.each { |name| measured.delete(name) }
  errors = by_calls.sort.map do |name, t|
    want = t["calls"].fdiv(calls)
    got = time.zero? ? 0 : incl[name].fdiv(time)
    err = (got - want).abs.fdiv(want)
    printf("  %-22s calls %6.2f%%  profiled %6.2f%%  error %6.2f%%\n", name, want * 100, got * 100, err * 100)
    err
  end
  want = by_calls.sort.map { |_, t| t["calls"].fdiv(calls) }
  samples = [(time / 1e6).round, 1].max	# 1 ms per sample at 1000 Hz
  printf("  mean error of the call shares %.2f%% (an ideal sampler's by chance with %d samples: %.2f%%)\n",
    errors.sum / errors.size * 100, samples, counting_floor(want, samples) * 100)
end

errors = measured.sort.map do |name, t|
  want = t[mode]
  got = incl[name]
  err = (got - want).abs.fdiv(want)
  printf("  %-22s measured %9.2f ms  profiled %9.2f ms  error %6.2f%%\n", name, want / 1e6, got / 1e6, err * 100)
  err
end
mean = errors.sum / errors.size
target = mode == "cpu" ? 0.02 : 0.03
printf("  mean error %.2f%% (target <= %.0f%%)\n", mean * 100, target * 100)
exit(mean <= target ? status : 1)
