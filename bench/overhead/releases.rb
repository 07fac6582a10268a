# bench/overhead/releases.rb DEPTH N: let the GVL go N times (a one-byte
# IO#syswrite to /dev/null, which Ruby makes without the GVL) at Ruby
# stack depth DEPTH, and print the mean real time of one, in ns: what a
# release costs under a profiler's GVL hooks (wall mode bills each one).
def down(d, &b) = d <= 1 ? b.call : down(d - 1, &b)
depth = Integer(ARGV[0] || 5)
n = Integer(ARGV[1] || 200_000)
File.open(File::NULL, "w") do |io|
  down(depth) do
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    n.times { io.syswrite("x") }
    puts "release_ns #{(Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t) / n}"
  end
end
