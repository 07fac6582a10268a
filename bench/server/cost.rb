# The middleware's own cost per request, in one process (run by
# bench/server/run under rperf record -F 1000): a trivial Rack app called
# directly, and the same app behind Rperf::Rack; prints microseconds per
# call of each and the difference.
require "rperf/rack"

N = Integer(ARGV[0] || 200_000)
app = ->(env) { [200, {}, ["ok"]] }
wrapped = Rperf::Rack.new(app)
env = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/users/12345/posts", "SCRIPT_NAME" => "" }

def per_call(app, env, n)
  best = Float::INFINITY
  5.times do
    t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    i = 0
    while i < n
      app.call(env)
      i += 1
    end
    best = [best, (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) / n].min
  end
  best * 1e6
end

bare = per_call(app, env, N)
mw = per_call(wrapped, env, N)
printf("bare_us %.3f\nmiddleware_us %.3f\ncost_us %.3f\n", bare, mw, mw - bare)
