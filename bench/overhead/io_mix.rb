# A thread/IO mix: threads passing data through pipes, short sleeps and
# some CPU work, about 2 s in all.
rounds = Integer(ARGV[0] || 1100)
r, w = IO.pipe
reader = Thread.new { n = 0; n += r.read(4096).to_s.size while n < rounds * 4096; n }
workers = 3.times.map do
  Thread.new do
    x = 0
    rounds.times { 3_000.times { x += 1 }; sleep 0.001 }
    x
  end
end
rounds.times { w.write("x" * 4096); 2_000.times.sum }
workers.each(&:join)
reader.join
require_relative "report"
