# The program behind tests/golden/*.pb.gz: threads, labels, a sleep, GC,
# a block, a class and odd characters in a method name, so every part of
# a report has something to show.  Re-recording changes the golden files;
# see t0305-golden-outputs.sh.
class Parser
  def parse(n) = n.times.sum { |i| i * 3 }
  define_method(:"weird \"name\" <&>") { |n| parse(n) }
end

def alloc(n) = Array.new(n) { |i| "s#{i}" }
def wait_a_bit = sleep(0.02)

p = Parser.new
Rperf.label(endpoint: "GET /users/:id") { p.parse(1_200_000) }
Rperf.label(endpoint: "POST /jobs") { p.send(:"weird \"name\" <&>", 600_000) }
t = Thread.new { Thread.current.name = "worker"; alloc(200_000); GC.start }
wait_a_bit
t.join
