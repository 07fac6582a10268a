# frozen_string_literal: true
# workload.rb: methods that allocate known numbers and kinds of objects, for
# bench/alloc/accuracy.  Each method's truth is measured by the workload
# itself: GC.stat(:total_allocated_objects) around the call, and, when
# TRUTH_OUT is set (a plain ruby run), the sum of ObjectSpace.memsize_of
# over the objects it made (kept in a sink made beforehand, so the counts
# do not change).  keep_arrays keeps its objects to the end; no_alloc
# allocates nothing.
require "json"
require "objspace" if ENV["TRUTH_OUT"]

Point = Struct.new(:x, :y)
class Node
  def initialize(a, b)
    @a = a
    @b = b
  end
end

$kept = Array.new(100_000)

def make_strings(n, sink)
  i = 0
  while i < n
    s = "x" * 600
    sink[i] = s if sink
    i += 1
  end
end

def make_arrays(n, sink)
  i = 0
  while i < n
    a = Array.new(40, i)
    sink[i] = a if sink
    i += 1
  end
end

def make_hashes(n, sink)
  i = 0
  while i < n
    h = { a: i, b: i, c: i, d: i, e: i, f: i, g: i, h: i, i: i }
    sink[i] = h if sink
    i += 1
  end
end

def make_nodes(n, sink)
  i = 0
  while i < n
    o = Node.new(i, i)
    sink[i] = o if sink
    i += 1
  end
end

def make_structs(n, sink)
  i = 0
  while i < n
    o = Point.new(i, i)
    sink[i] = o if sink
    i += 1
  end
end

def keep_arrays(n, sink)
  i = 0
  while i < n
    a = Array.new(20, i)
    $kept[i] = a
    sink[i] = a if sink
    i += 1
  end
end

def no_alloc(n, sink)
  x = 0
  i = 0
  while i < n
    x += i & 7
    i += 1
  end
  x
end

PLAN = [
  [:make_strings, 200_000], [:make_arrays, 300_000], [:make_hashes, 200_000],
  [:make_nodes, 400_000], [:make_structs, 300_000], [:keep_arrays, 100_000],
  [:no_alloc, 5_000_000],
]

truth = {}
PLAN.each do |name, n|
  sink = ENV["TRUTH_OUT"] && name != :no_alloc ? Array.new(n) : nil
  before = GC.stat(:total_allocated_objects)
  send(name, n, sink)
  objects = GC.stat(:total_allocated_objects) - before
  bytes = sink ? sink.sum { |o| ObjectSpace.memsize_of(o) } : 0
  truth[name] = { "objects" => objects, "bytes" => bytes }
  sink = nil
end
GC.start
File.write(ENV["TRUTH_OUT"], JSON.generate(truth)) if ENV["TRUTH_OUT"]
