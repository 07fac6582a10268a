# For bench/accuracy/against (no truth of its own): REXML's XPath walk in
# miniature.  A block calls Hash#key?, then Class#new, whose initialize
# calls Kernel#is_a? and sets two instance variables, then Hash#[]=: C
# and Ruby frames a few hundred nanoseconds long, most of them gone by the
# time a tick's job runs, and gone sooner when the worker reads the stack
# from another CPU than the script's.  stackprof and vernier give the
# block about 47%, Class#new 24%, Hash#key? and initialize 10% each.
#   ruby short_frames.rb [SECONDS]   (2.5 by default)
class Node
  def initialize(raw, context = nil)
    @raw = raw.is_a?(Node) ? raw.raw : raw
    @context = context || {}
  end

  attr_reader :raw
end

def walk(items, set, seen)
  items.each do |it|
    next if seen.key?(it)

    set << Node.new(it, position: set.size + 1)
    seen[it] = true
  end
end

items = Array.new(200) { Object.new }
seconds = Float(ARGV[0] || 2.5)
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
n = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
  set = []
  walk(items, set, {})
  n += set.size
end
p n
