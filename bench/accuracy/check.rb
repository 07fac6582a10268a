# check.rb FOLDED MEASURED.json MODE: compare each measured method's
# inclusive time (cpu or wall) with the weight the profile gives it
# (samples whose stack contains the method, each counted once), print a
# line per method and the mean relative error; exit 1 when the mean
# exceeds the target (2% cpu, 3% wall).
require "json"

folded, measured_path, mode = ARGV
measured = JSON.parse(File.read(measured_path))
incl = Hash.new(0)
File.foreach(folded) do |line|
  stack, weight = line.rpartition(" ").values_at(0, 2)
  frames = stack.split(";").uniq
  frames.each { |f| incl[f] += Integer(weight) if measured.key?(f) }
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
exit(mean <= target ? 0 : 1)
