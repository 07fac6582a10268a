# Spin for a fixed amount of work (ARGV[1] iterations) at stack depth
# ARGV[0], so that the cost per sample can be compared at different depths.
def down(d, &b) = d <= 1 ? b.call : down(d - 1, &b)
depth = Integer(ARGV[0] || 10)
iters = Integer(ARGV[1] || 30_000_000)
down(depth) { x = 0; i = 0; while i < iters; x += i; i += 1; end }
require_relative "report"
