# against.rb: bench/accuracy/against's Ruby half.
#
#   against.rb stackprof|vernier OUT.folded SCRIPT [ARGS]
#     run SCRIPT under that profiler (its lib on the load path) and write
#     its samples as folded stacks, root first, weighted by sample count;
#   against.rb compare FOLDED...
#     print the self time shares outside GC and the distances (the first
#     file is rperf's; VIA keeps only stacks through one of its frames).

GC_FRAMES = ["(garbage collection)", "(marking)", "(sweeping)"].freeze

def write_folded(path, counts)
  File.open(path, "w") { |f| counts.each { |stack, n| f.puts "#{stack.join(";")} #{n}" } }
end

# Run the script as ruby would, with the profiler started first; the
# profile is written at exit (exit or an exception included).
def profile(tool, out, script, args)
  counts = Hash.new(0)
  case tool
  when "stackprof"
    require "stackprof"
    at_exit do
      StackProf.stop
      r = StackProf.results
      raw, frames, i = r[:raw] || [], r[:frames], 0
      while i < raw.size
        len = raw[i]
        counts[raw[i + 1, len].map { |id| frames[id][:name] }] += raw[i + 1 + len]
        i += len + 2
      end
      write_folded(out, counts)
    end
    StackProf.start(mode: :wall, interval: 1000, raw: true)
  when "vernier"
    require "vernier"
    at_exit do
      r = Vernier.stop_profile
      names = Hash.new { |h, k| h[k] = r.stack_table.stack(k).frames.map(&:name).reverse }
      r.threads.each_value do |t|
        t[:samples].each_with_index do |s, k|
          counts[names[s]] += t[:weights][k] if t[:sample_categories][k] == 0
        end
      end
      write_folded(out, counts)
    end
    Vernier.start_profile(mode: :wall, interval: 1000)
  else
    abort "against.rb: unknown profiler #{tool}"
  end
  ARGV.replace(args)
  $0 = script
  load File.expand_path(script)
end

# Self weight by frame outside GC, the frames under the profiler's own
# (load, the script's top) taken as the script's.
def self_shares(path, rperf, via)
  selfw = Hash.new(0.0)
  File.foreach(path) do |line|
    stack, _, w = line.chomp.rpartition(" ")
    frames = stack.split(";")
    next if frames.first == "(ruby boot)"
    frames.shift while !rperf && ["<main>", "Object#profile", "Kernel#load"].include?(frames.first)
    next if frames.empty? || (!via.empty? && (frames & via).empty?)
    leaf = frames.last
    next if leaf.start_with?("[GC ") || GC_FRAMES.include?(leaf)
    # A rescue or ensure clause is its frame's, as rperf (and Ruby 3.4's
    # backtrace) names it.
    name = leaf.sub(/\A((rescue|ensure) in )+/, "").sub(/\Ablock (\(\d+ levels\) )?in /, "")
    # An anonymous class or module is named by its address, another in
    # each process.
    name = name.gsub(/#<(Class|Module):0x\h+>/, "#<\\1:0x...>")
    # The script, loaded here, is rperf's <main>, its blocks too (in a
    # fiber as well, whose stack does not start at the script's top);
    # a library's top is under a require.
    name = "<main>" if !rperf && name == "<top (required)>" &&
                       (frames & ["Kernel#require", "Kernel#require_relative"]).empty?
    selfw[name] += Float(w)
  end
  total = selfw.values.sum
  selfw.transform_values { |v| v / total }
end

def compare(files)
  via = ENV.fetch("VIA", "").split(",")
  shares = files.each_with_index.map { |f, i| self_shares(f, i.zero?, via) }
  names = files.map { |f| File.basename(f, ".folded") }
  keys = shares.flat_map(&:keys).uniq.sort_by { |k| -shares.map { |s| s[k] || 0 }.max }
  puts format("%-56s", "self time outside GC") + names.map { |n| format("%11s", n) }.join
  keys.first(25).each do |k|
    puts format("%-56s", k[0, 56]) + shares.map { |s| format("%10.1f%%", 100 * (s[k] || 0)) }.join
  end
  shares.each_index do |i|
    (i + 1...shares.size).each do |j|
      d = (shares[i].keys | shares[j].keys).sum { |k| ((shares[i][k] || 0) - (shares[j][k] || 0)).abs } / 2
      puts format("distance %s - %s: %.1f%%", names[i], names[j], 100 * d)
    end
  end
end

case ARGV.shift
when "compare" then compare(ARGV)
when "stackprof" then profile("stackprof", ARGV.shift, ARGV.shift, ARGV)
when "vernier" then profile("vernier", ARGV.shift, ARGV.shift, ARGV)
else abort "usage: against.rb stackprof|vernier OUT SCRIPT [ARGS] | compare FOLDED..."
end
