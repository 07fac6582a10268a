# A small program with an obvious hot spot, to try rperf on:
#   ./rperf record -p examples/fib.rb
# fib dominates the CPU profile; the sleep shows up only in wall mode
# (./rperf record -m wall -p examples/fib.rb) as %GVL=blocked time.

def fib(n)
  n < 2 ? n : fib(n - 1) + fib(n - 2)
end

def build_report(values)
  values.map { |v| format("%8d", v) }.join("\n")
end

def wait_for_io
  sleep 0.2
end

Rperf.label(phase: "compute") { puts fib(27) } if defined?(Rperf)
puts build_report(Array.new(50_000) { |i| i * i }).size
wait_for_io
