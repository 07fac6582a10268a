# A small program with an obvious hot spot, to try rperf on:
#   ./rperf record -p examples/fib.rb
# fib dominates the CPU profile (nine tenths of it); build_report and the
# start-up of Ruby itself ("(ruby boot)") share the rest.  The sleep shows
# up only in wall mode (./rperf record -m wall -p examples/fib.rb), as
# Kernel#sleep with %GVL=blocked time.

def fib(n)
  n < 2 ? n : fib(n - 1) + fib(n - 2)
end

def build_report(values)
  values.map { |v| format("%8d", v) }.join("\n")
end

def wait_for_io
  sleep 0.2
end

if defined?(Rperf)
  Rperf.label(phase: "compute") { puts fib(32) }
else
  puts fib(32)
end
puts build_report(Array.new(5_000) { |i| i * i }).size
wait_for_io
