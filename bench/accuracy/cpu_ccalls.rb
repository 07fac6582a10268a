# mode: cpu.  Long C calls that reach no safepoint for many milliseconds:
# sorting a big Array, multiplying big Integers, String#*.  A profiler
# that counts samples bills them to whatever runs after; weights by time
# bill them in full.
require_relative "measure"

ARR = Array.new(300_000) { |i| (i * 7919) % 1_000_003 }
BIG = 7**200_000

def sort_big = measure("Object#sort_big") { ARR.sort }
def mul_big = measure("Object#mul_big") { BIG * BIG }
def repeat_str = measure("Object#repeat_str") { ("abcdefgh" * 4_000_000).size }
def ruby_loop = measure("Object#ruby_loop") { x = 0; 300_000.times { x += 1 }; x }

8.times do
  sort_big
  mul_big
  repeat_str
  ruby_loop
end
