# mode: wall.  Three threads contending for the GVL, each in its own
# method; wall time includes the time each waits for the GVL.
require_relative "measure"

def spin(n)
  x = 0
  n.times { x += 1 }
  x
end

def worker_a = measure("Object#worker_a") { spin(3_000_000) }
def worker_b = measure("Object#worker_b") { spin(2_000_000) }
def worker_c = measure("Object#worker_c") { spin(1_000_000); sleep 0.2; spin(1_000_000) }

[Thread.new { worker_a }, Thread.new { worker_b }, Thread.new { worker_c }].each(&:join)
