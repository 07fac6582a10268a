# Print what the overhead driver reads: this thread's CPU time, and under
# rperf the job's own time and count (Rperf.snapshot).
puts "thread_cpu_ns #{Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)}"
# (Not with BENCH_NO_SNAPSHOT: the snapshot Hash of a --timeline run has
# an entry per sample, which costs more than the timeline itself.)
if defined?(Rperf) && !ENV["BENCH_NO_SNAPSHOT"] && (s = Rperf.snapshot)
  puts "job_ns #{s[:sampling_time_ns]}"
  puts "job_count #{s[:job_count]}"
  puts "samples #{s[:sampling_count]}"
end
