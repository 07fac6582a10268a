# The small Rack app of bench/server/run, on WEBrick: GET /items/N builds a
# little JSON-like answer (a few hundred microseconds of Ruby, as a small
# real endpoint would take); under rperf, Rperf::Rack labels each request.
#   PORT (required), READY: file written once listening
#   NO_MIDDLEWARE  under rperf too, leave Rperf::Rack out
require "rack"
require "rack/handler/webrick"
require "webrick"

ITEMS = Array.new(200) { |i| { id: i, name: "item #{i}", price: i * 3 } }.freeze

app = lambda do |env|
  id = env["PATH_INFO"][%r{\A/items/(\d+)\z}, 1].to_i
  picked = ITEMS.select { |it| (it[:id] + id).odd? }.first(20)
  body = +"["
  picked.each { |it| body << "{\"id\":#{it[:id]},\"name\":\"#{it[:name]}\",\"price\":#{it[:price]}}," }
  body.chomp!(",")
  body << "]\n"
  [200, { "content-type" => "application/json" }, [body]]
end

builder = Rack::Builder.new
builder.use Rperf::Rack if defined?(Rperf) && !ENV["NO_MIDDLEWARE"]
builder.run app
ready = ENV["READY"]
trap("TERM") { Rack::Handler::WEBrick.shutdown }
Rack::Handler::WEBrick.run(
  builder.to_app, Host: "127.0.0.1", Port: Integer(ENV.fetch("PORT")),
  Logger: WEBrick::Log.new(File::NULL), AccessLog: [],
  StartCallback: -> { File.write(ready, Process.pid.to_s) if ready }
)
