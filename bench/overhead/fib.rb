# CPU-bound: naive Fibonacci.  Prints this thread's CPU time (ns) and,
# under rperf, the sampling job's own cost.
def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)
fib(Integer(ARGV[0] || 35))
require_relative "report"
