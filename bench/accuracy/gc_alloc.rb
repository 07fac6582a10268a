# mode: cpu.  Allocation-heavy methods: their time includes the GC they
# trigger, which the profile bills to them as %GC samples.
require_relative "measure"

def small_objects = measure("Object#small_objects") { a = nil; 300_000.times { a = [1, 2, 3] }; a }
def strings = measure("Object#strings") { s = nil; 200_000.times { |i| s = "item-#{i}" * 3 }; s }
def hashes = measure("Object#hashes") { h = nil; 100_000.times { |i| h = { a: i, b: [i] } }; h }

6.times do
  small_objects
  strings
  hashes
end
