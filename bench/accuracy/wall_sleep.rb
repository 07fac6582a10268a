# mode: wall.  Sleeps of different lengths in different methods, between
# bits of CPU work.
require_relative "measure"

def nap_short = measure("Object#nap_short") { sleep 0.02 }
def nap_long = measure("Object#nap_long") { sleep 0.06 }
def busy = measure("Object#busy") { x = 0; 200_000.times { x += 1 } }

10.times do
  nap_short
  busy
  nap_long
end
