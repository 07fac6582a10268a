# For bench/accuracy/against (no truth of its own): libraries nobody here
# wrote, each kept busy for SECONDS (2.5 by default) of wall time.
#   ruby libs.rb csv|csvblock|rexml|rdoc|raise|mix [SECONDS]
# csv: CSV.parse with the :numeric converters, which try Integer() and
#   Float() on every field and rescue what they raise; the rows come from
#   an Enumerator, a fiber.
# csvblock: CSV.parse with a block that does as much work per row as the
#   parse (Integer() on each field, rescued): the thread is found in the
#   parse's fiber at some ticks and in the block at others.
# rexml: parse a document of 300 elements, then an XPath query over it.
# rdoc: RDoc markup to HTML.
# raise: Integer() on a string that is not a number, rescued, and a
#   String#encode: short C methods under one Ruby frame.
# mix: a block that calls String#upcase, a Ruby method of arithmetic and
#   Array#sort in turn.
# erb: an ERB template compiled once (its code a method made with
#   def_method) and rendered over and over: a loop over rows with
#   escaping, code no file holds.
# yaml: Psych: a document of nested hashes dumped and loaded again (a C
#   parser and emitter under Ruby visitors and builders).
# json: JSON.generate and JSON.parse of nested hashes and arrays (C
#   under a thin Ruby layer), and JSON.pretty_generate.
kind = ARGV[0] or abort "usage: libs.rb csv|csvblock|rexml|rdoc|raise|mix|erb|yaml|json [SECONDS]"
seconds = Float(ARGV[1] || 2.5)

def busy(seconds)
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  n = 0
  n += yield while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < seconds
  n
end

def arith(i)
  x = i * 3 + 1
  y = x ^ (x >> 3)
  (y & 0xffff) + x - y
end

def int_or_self(s)
  Integer(s)
rescue ArgumentError
  s
end

case kind
when "csv"
  require "csv"
  data = CSV.generate do |out|
    2000.times { |i| out << [i, "name #{i}", i * 1.5, i.even? ? "x#{i}" : i.to_s, "2024-01-#{i % 28 + 1}"] }
  end
  p(busy(seconds) { n = 0; CSV.parse(data, converters: :numeric) { |row| n += row.size }; n })
when "csvblock"
  require "csv"
  data = CSV.generate { |out| 2000.times { |i| out << [i, "name #{i}", i * 1.5] } }
  p(busy(seconds) { n = 0; CSV.parse(data) { |row| row.each { |f| int_or_self(f) }; n += 1 }; n })
when "rexml"
  require "rexml/document"
  xml = +"<root>"
  300.times { |i| xml << %(<item id="#{i}" kind="#{i % 3}"><name>n#{i}</name><v>#{i * 2}</v></item>) }
  xml << "</root>"
  p(busy(seconds) do
    n = 0
    doc = REXML::Document.new(xml)
    REXML::XPath.each(doc, "//item[@kind='1']") { |e| n += e.attributes["id"].to_i }
    n
  end)
when "rdoc"
  require "rdoc"
  text = (1..60).map do |i|
    "= Heading #{i}\n\nSome *bold* and _em_ text, +code+ and http://example.com/#{i}.\n\n" \
      "* one\n* two\n\n  verbatim #{i}\n"
  end.join("\n")
  html = RDoc::Markup::ToHtml.new(RDoc::Options.new)
  p(busy(seconds) { html.convert(text).size })
when "raise"
  p(busy(seconds) { 200.times { |i| int_or_self("name #{i}"); "x".encode(Encoding::UTF_8) }; 200 })
when "mix"
  s = "hello world " * 4
  a = [3, 1, 2]
  p(busy(seconds) { 500.times { |i| s.upcase; arith(i); a.sort }; 500 })
when "erb"
  require "erb"
  Row = Struct.new(:id, :name, :price)
  rows = (1..50).map { |i| Row.new(i, "item <#{i}> & co", i * 1.25) }
  page = Class.new do
    def initialize(rows) = @rows = rows
    def h(s) = ERB::Util.html_escape(s)
  end
  ERB.new(<<~T, trim_mode: "-").def_method(page, "render()", "(page)")
    <table>
    <%- @rows.each do |r| -%>
      <tr class="<%= r.id.even? ? "even" : "odd" %>"><td><%= r.id %></td><td><%= h(r.name) %></td><td><%= format("%.2f", r.price) %></td></tr>
    <%- end -%>
    </table>
  T
  view = page.new(rows)
  p(busy(seconds) { view.render.size })
when "yaml"
  require "yaml"
  doc = (1..40).to_h { |i| ["key#{i}", { "n" => i, "f" => i / 3.0, "s" => "text #{i}", "a" => [i, "x#{i}", true] }] }
  p(busy(seconds) { YAML.load(YAML.dump(doc)).size })
when "json"
  require "json"
  doc = (1..200).map { |i| { "id" => i, "name" => "n#{i}", "tags" => %w[a b c], "v" => i * 0.5, "ok" => i.even? } }
  p(busy(seconds) { JSON.parse(JSON.generate(doc)).size + JSON.pretty_generate(doc).size })
else
  abort "libs.rb: unknown workload '#{kind}'"
end
