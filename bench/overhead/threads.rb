# bench/overhead/threads.rb N: start and join N threads that do nothing,
# one after another (what a thread-per-request server does per request),
# and print the process's CPU time per thread, in ns: Ruby's cost of a
# thread's birth and end, and under rperf what sampling adds to it.
n = Integer(ARGV[0] || 3000)
t = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond)
n.times { Thread.new { nil }.join }
puts "cpu_ns_per_thread #{(Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond) - t) / n}"
