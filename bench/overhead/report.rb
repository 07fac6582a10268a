# Print what the overhead driver reads: this thread's CPU time, and under
# rperf the job's own time and count (Rperf.snapshot).
puts "thread_cpu_ns #{Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)}"
if defined?(Rperf) && (s = Rperf.snapshot)
  puts "job_ns #{s[:sampling_time_ns]}"
  puts "job_count #{s[:job_count]}"
  puts "samples #{s[:sampling_count]}"
end
