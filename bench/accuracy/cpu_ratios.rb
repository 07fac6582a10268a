# mode: cpu.  Pure-Ruby busy loops whose costs are 1:2:4:8.
require_relative "measure"

def spin(n)
  x = 0
  i = 0
  while i < n
    x += i
    i += 1
  end
  x
end

def loop_a = measure("Object#loop_a") { spin(250_000) }
def loop_b = measure("Object#loop_b") { spin(500_000) }
def loop_c = measure("Object#loop_c") { spin(1_000_000) }
def loop_d = measure("Object#loop_d") { spin(2_000_000) }

12.times do
  loop_a
  loop_b
  loop_c
  loop_d
end
