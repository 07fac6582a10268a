# bench/overhead/forks.rb N: fork N children one after another, each of
# which ends at once (exit!), as a fork-per-job worker's do around their
# job, and print per child: the parent's CPU time from before the fork to
# the child's end, the child's CPU time and its minor page faults (each
# a page of the parent's it wrote to and so had copied).  A few libraries
# are loaded first, so that the parent has the tables of a real run.
require "json"
require "set"
require "uri"
n = Integer(ARGV[0] || 200)
stat = -> { File.read("/proc/self/stat").split(") ").last.split }
faults0 = Integer(stat.call[8])	# cminflt: the waited-for children's
t0 = Process.times
cpu0 = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
n.times { Process.wait(fork { exit!(0) }) }
cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond) - cpu0
t = Process.times
children = (t.cutime + t.cstime) - (t0.cutime + t0.cstime)
puts "parent_ns_per_fork #{cpu / n}"
puts "child_ns #{(children * 1e9 / n).round}"
puts "child_faults #{(Integer(stat.call[8]) - faults0) / n}"
