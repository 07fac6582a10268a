# mode: cpu.  Sub-microsecond calls: ten one-line methods with the same
# body, called in a shuffled order, method N (1..10) N times as often as
# method 1.  Since their bodies cost the same, each method's share of the
# ten methods' total time is its share of the calls: that share is what
# the profile must show (a time-per-sample profiler sees these calls only
# through where its samples land).
require_relative "measure"

CALLS = Integer(ENV.fetch("CALLS", "24_000_000").delete("_"))
NAMES = (1..10).map { |n| :"m#{n}" }
NAMES.each { |name| eval("def #{name}(x) = x + 1") }

rng = Random.new(42)
unit = CALLS / 55
order = NAMES.each_with_index.flat_map { |name, i| [name] * (unit * (i + 1) / 1000) }
order.shuffle!(random: rng)
counts = Hash.new(0)
order.each { |name| counts[name] += 1000 }

def run_order(order)
  x = 0
  order.each do |name|
    # 1000 calls of NAME, so the share of calls is exact while the order
    # of the methods is shuffled at a grain far finer than a sample.
    i = 0
    case name
    when :m1 then (x = m1(x); i += 1) while i < 1000
    when :m2 then (x = m2(x); i += 1) while i < 1000
    when :m3 then (x = m3(x); i += 1) while i < 1000
    when :m4 then (x = m4(x); i += 1) while i < 1000
    when :m5 then (x = m5(x); i += 1) while i < 1000
    when :m6 then (x = m6(x); i += 1) while i < 1000
    when :m7 then (x = m7(x); i += 1) while i < 1000
    when :m8 then (x = m8(x); i += 1) while i < 1000
    when :m9 then (x = m9(x); i += 1) while i < 1000
    when :m10 then (x = m10(x); i += 1) while i < 1000
    end
  end
  x
end

measure("Object#run_order") { run_order(order) }
# The shares: calls per method, reported as "calls" for check.rb.
Measure::LOCK.synchronize do
  counts.each { |name, n| Measure::TOTALS["Object##{name}"]["calls"] = n }
end
