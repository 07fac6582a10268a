# frozen_string_literal: true
# workload.rb: methods that allocate known numbers and kinds of objects, for
# bench/alloc/accuracy.  Each method's truth is measured by the workload
# itself: GC.stat(:total_allocated_objects) around the call, and, when
# TRUTH_OUT is set (a plain ruby run), ObjectSpace.memsize_of of the
# objects it makes.  keep_arrays keeps its objects to the end; no_alloc
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
    a = Array.new(3, i)
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

# Sizes: the sampling error of a method's estimate is about
# sqrt(rate / its allocations): 1.8% for 3 million at rate 1024, 3.2% for
# one million, 7% for 200,000, so the 5% target needs millions.
PLAN = [
  [:make_strings, 3_000_000], [:make_arrays, 3_000_000], [:make_hashes, 3_000_000],
  [:make_nodes, 3_000_000], [:make_structs, 3_000_000], [:keep_arrays, 2_000_000],
  [:no_alloc, 20_000_000],
]
$kept = Array.new(2_000_000)

# The sizes are measured on the first 100,000 objects of a second call
# (in a sink, so that they stay alive to be measured), every object of a
# method being the same size; the counts on the call without a sink.
truth = {}
PLAN.each do |name, n|
  before = GC.stat(:total_allocated_objects)
  send(name, n, nil)
  objects = GC.stat(:total_allocated_objects) - before
  bytes = 0
  if ENV["TRUTH_OUT"] && name != :no_alloc
    m = [n, 100_000].min
    sink = Array.new(m)
    send(name, m, sink)
    bytes = (sink.sum { |o| ObjectSpace.memsize_of(o) } * objects.to_f / m).round
    sink = nil
  end
  truth[name] = { "objects" => objects, "bytes" => bytes }
end
GC.start
File.write(ENV["TRUTH_OUT"], JSON.generate(truth)) if ENV["TRUTH_OUT"]
