# frozen_string_literal: true
#
# rperf/rack.rb: Rack middleware for apps run under `rperf record`.
#
#   use Rperf::Rack                                   # endpoint and status labels
#   use Rperf::Rack, slow: 0.5, dir: "tmp/rperf"      # + a profile per slow request
#   use Rperf::Rack, viewer: "/rperf",                # + the in-app viewer
#       authorize: ->(env) { env["REMOTE_ADDR"] == "127.0.0.1" }
#
# Every time sample of a request is labelled endpoint="GET /users/:id" and
# status="2xx".  The endpoint is, first found: the label: proc's answer,
# Rails' route pattern (given by Rails 7.1 on, looked up in the app's
# route set before), Sinatra's route, Rails' controller#action, else
# the method and the path with its ids (numbers, UUIDs, long hex strings)
# replaced by ":id"; past max_endpoints: distinct paths of that last kind
# a request is labelled "GET (other)", so that a crawler cannot make the
# label set grow without bound.  Both labels are put on when the request
# ends (the route is known only after the app routed it), on the samples
# the request's own thread took.  Under `rperf record --timeline` each
# request is also a mark on its thread's timeline, named when it ends by
# its endpoint and status ("GET /users/:id 200").
#
# When this process is not sampling time (rperf record -m alloc) the
# path-derived endpoint labels the request's allocation samples; when rperf
# is not profiling at all the middleware only passes requests on.

require_relative "capture"

module Rperf
  class Rack
    STATUS_CLASS = [nil, "1xx", "2xx", "3xx", "4xx", "5xx"].freeze
    # A path segment that names one record: a number, a UUID or a long hex
    # string, optionally followed by a format extension (".json").
    ID_SEGMENT = %r{(?<=/)(?:\d+|\h{8}-\h{4}-\h{4}-\h{4}-\h{12}|\h{16,})(?=/|\z|\.[A-Za-z][A-Za-z0-9]*(?:/|\z))}.freeze
    RAILS_FORMAT = "(.:format)"
    MINUTES = [1, 5, 15].freeze
    # The most raw paths and label sets remembered (what a request costs
    # is then two Hash lookups, not a gsub and two new Hashes).
    CACHE_MAX = 4096
    VIEWS = %w[flame text folded].freeze
    # Whether this rperf has marks named when they end (mark_stop's NAME).
    MARKS = Rperf.respond_to?(:mark_start) && Rperf.method(:mark_stop).arity != 1

    # OPTIONS:
    #   label:         proc(env) -> String, the endpoint (nil: the default)
    #   slow:, dir:, keep:  a profile file per request of at least slow:
    #                  seconds, in dir:, the newest keep: (100) kept
    #   viewer:        the path of the in-app viewer (off when not given)
    #   authorize:     proc(env) -> true to let a request see the viewer;
    #                  required with viewer:
    #   max_endpoints: distinct path-derived endpoints before "(other)" (200)
    def initialize(app, label: nil, slow: nil, dir: nil, keep: 100, viewer: nil,
                   authorize: nil, max_endpoints: 200)
      @app = app
      if label && !label.respond_to?(:call)
        raise ArgumentError, "Rperf::Rack: label: must be a proc(env) -> String, not #{label.class}"
      end
      @label = label
      @log = SlowLog.new("Rperf::Rack", slow: slow, dir: dir, keep: keep)
      @max_endpoints = max_endpoints
      @paths = {}
      @by_path = {} # "GET" => { raw PATH_INFO => endpoint }
      @by_path_size = 0
      @label_sets = {} # endpoint => { status class => frozen labels }
      @label_sets_size = 0
      @viewer = nil
      if viewer
        path = viewer.to_s.chomp("/")
        raise ArgumentError, "Rperf::Rack: viewer: must be a path such as \"/rperf\", not #{viewer.inspect}" unless path.start_with?("/") && path.size > 1
        unless authorize.respond_to?(:call)
          raise ArgumentError, "Rperf::Rack: viewer: #{path.inspect} needs authorize: " \
                               "a proc(env) that returns true only for the people allowed to see " \
                               "profiles of this app, e.g. authorize: ->(env) { env[\"REMOTE_ADDR\"] == \"127.0.0.1\" }"
        end
        @viewer = Viewer.new(path, authorize)
      elsif authorize
        raise ArgumentError, "Rperf::Rack: authorize: is given but viewer: is not"
      end
      # A binary without captures (or a Rperf module of something else):
      # pass everything through.
      @enabled = SlowLog.captures?
      @alloc = Rperf.respond_to?(:allocations?) && Rperf.allocations?
    end

    def call(env)
      # The viewer's own requests are requests too: its cost shows as
      # "GET /rperf".
      app = @app
      if @viewer
        @viewer.start_windows
        app = @viewer if @viewer.match?(env)
      end
      return app.call(env) unless @enabled

      token = Rperf.capture_begin
      return call_untimed(app, env) unless token

      # With --timeline the request is a mark, named when it ends (nil,
      # and nothing more to do, without).
      mark = Rperf.mark_start("request") if MARKS
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      status = 500 # what an exception that escapes the app becomes
      begin
        # Allocation samples keep the labels of their moment: with
        # --alloc they get the path-derived endpoint now (the route's
        # replaces it on the time samples at the end).
        response = if @alloc
                     Rperf.label(endpoint: path_endpoint(env)) { app.call(env) }
                   else
                     app.call(env)
                   end
        status = response[0].to_i
        response
      ensure
        finish(token, env, status, Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0, mark)
      end
    end

    # The endpoint label of the request ENV (public for tests and for
    # apps that want the same name elsewhere).
    def endpoint(env)
      if @label
        name = begin
          @label.call(env)
        rescue StandardError => e
          env["rack.errors"]&.write("rperf: Rperf::Rack label: proc raised #{e.class}: #{e.message}\n")
          nil
        end
        return name.to_s unless name.nil?
      end
      method = client_method(env)
      if (pattern = env["action_dispatch.route_uri_pattern"])
        return "#{method} #{pattern.to_s.delete_suffix(RAILS_FORMAT)}"
      end
      if (route = env["sinatra.route"])
        return route.to_s
      end
      if (params = env["action_dispatch.request.path_parameters"]).is_a?(Hash) &&
         (controller = params[:controller]) && (action = params[:action])
        # Rails before 7.1 does not say which route matched: find it in
        # the app's route set.
        pattern = rails_route_pattern(env["action_dispatch.routes"], method, controller, action, params)
        return "#{method} #{pattern}" if pattern

        return "#{method} #{controller}##{action}"
      end
      path_endpoint(env)
    end

    private

    def call_untimed(app, env)
      return app.call(env) unless Rperf.running?

      Rperf.label(endpoint: path_endpoint(env)) { app.call(env) }
    end

    def finish(token, env, status, seconds, mark = nil)
      name = endpoint(env)
      status_class = (STATUS_CLASS[status / 100] if status >= 100) || "other"
      Rperf.mark_stop(mark, "#{name} #{status}") if mark
      meta = nil
      if @log.slow?(seconds)
        meta = { "kind" => "request", "name" => name, "status" => status.to_s, "pid" => Process.pid.to_s }
      end
      @log.finish(token, label_set(name, status_class), seconds, meta, env["rack.errors"])
    end

    def label_set(name, status_class)
      by_status = @label_sets[name]
      set = by_status && by_status[status_class]
      return set if set

      set = { endpoint: name, status: status_class }.freeze
      if @label_sets_size < CACHE_MAX
        @label_sets_size += 1
        (@label_sets[name] ||= {})[status_class] = set
      end
      set
    end

    # The route pattern ("/users/:id") of the route of ROUTES (a Rails
    # RouteSet) that sends METHOD to CONTROLLER#ACTION and captures the
    # names PARAMS has; nil unless exactly one does.  The routes are
    # indexed by controller and action once per version of the route set
    # (one that is redrawn is indexed anew); the answer is remembered by
    # method, controller and action when one route is the only candidate,
    # else by the parameter names too.
    def rails_route_pattern(routes, method, controller, action, params)
      set = routes.routes if routes.respond_to?(:routes)
      return nil unless set.respond_to?(:each) && set.respond_to?(:length) && set.respond_to?(:last)

      index = @rails_index
      unless index && index[0].equal?(set) && index[1] == set.length && index[2].equal?(set.last)
        index = @rails_index = [set, set.length, set.last, rails_routes_by_action(set), {}]
      end
      found = index[4]
      key = "#{method} #{controller}##{action}"
      pattern = found.fetch(key) do
        candidates = index[3]["#{controller}##{action}"]&.select { |r| rails_verb?(r[:verbs], method) } || []
        name = candidates.size == 1 ? candidates[0][:pattern] : false
        found[key] = name if found.size < CACHE_MAX
        name
      end
      return pattern unless pattern == false

      # Several routes lead to the action: the one whose names are those
      # the request's parameters have.
      keys = params.keys.map(&:to_s) - %w[controller action]
      full = "#{key} #{keys.sort.join(',')}"
      found.fetch(full) do
        candidates = index[3]["#{controller}##{action}"].select do |r|
          rails_verb?(r[:verbs], method) && (r[:required] - keys).empty? && (keys - r[:names] - r[:defaults]).empty?
        end
        name = (candidates[0][:pattern] if candidates.size == 1)
        found[full] = name if found.size < CACHE_MAX
        name
      end
    rescue StandardError
      nil
    end

    def rails_routes_by_action(set)
      by_action = {}
      set.each do |route|
        defaults = route.defaults
        next unless defaults.is_a?(Hash) && defaults[:controller] && defaults[:action]

        spec = route.path.spec.to_s.delete_suffix(RAILS_FORMAT)
        (by_action["#{defaults[:controller]}##{defaults[:action]}"] ||= []) << {
          pattern: (spec.empty? ? "/" : spec).freeze,
          verbs: route.verb.to_s.split("|"),
          names: route.path.names.map(&:to_s),
          required: route.required_parts.map(&:to_s),
          defaults: defaults.keys.map(&:to_s)
        }
      end
      by_action
    end

    # A route with no verbs takes any; HEAD is routed as GET.
    def rails_verb?(verbs, method)
      verbs.empty? || verbs.include?(method) || (method == "HEAD" && verbs.include?("GET"))
    end

    # The method the client sent: Rails' ShowExceptions turns a failed
    # request into "GET /404" (or /500) for its error page, and keeps
    # what the client asked for.
    def client_method(env)
      env["action_dispatch.original_request_method"] || env["REQUEST_METHOD"]
    end

    # METHOD and the path with its ids replaced, e.g. "GET /users/:id".
    def path_endpoint(env)
      method = client_method(env)
      raw = env["action_dispatch.original_path"] || env["PATH_INFO"]
      mounted = !env["SCRIPT_NAME"].to_s.empty?
      unless mounted
        known = @by_path[method]
        name = known && known[raw]
        return name if name
      end
      name = new_path_endpoint(env, method, raw)
      if !mounted && @by_path_size < CACHE_MAX && raw.is_a?(String)
        @by_path_size += 1
        (@by_path[method] ||= {})[raw.frozen? ? raw : raw.dup.freeze] = name
      end
      name
    end

    def new_path_endpoint(env, method, raw)
      path = "#{env['SCRIPT_NAME']}#{raw}"
      path = "/" if path.empty?
      path = path.gsub(ID_SEGMENT, ":id") if path.match?(/\d/)
      name = "#{method} #{path}"
      return name if @paths.key?(name)
      return "#{method} (other)" if @paths.size >= @max_endpoints

      @paths[name] = true
      name
    end

    # The in-app viewer: an HTML page with the live flame graph or text
    # tables, for the people authorize: lets in.
    class Viewer
      def initialize(path, authorize)
        require "uri"
        @path = path
        @authorize = authorize
        @windows_pid = nil
      end

      # rperf keeps a copy of the profile each minute, for "the last N
      # minutes", from the first Rperf.report(last:) of a process on.  Ask
      # for one at the first request of each process (a preforking
      # server's workers are processes of their own), so that the windows
      # are there by the time someone looks.
      def start_windows
        return if @windows_pid == Process.pid

        @windows_pid = Process.pid
        Rperf.report(format: "text", last: 60, top: 1) if Rperf.respond_to?(:report)
      rescue StandardError
        nil
      end

      def match?(env)
        p = env["PATH_INFO"]
        p == @path || p == "#{@path}/"
      end

      def call(env)
        allowed = begin
          @authorize.call(env) == true
        rescue StandardError => e
          env["rack.errors"]&.write("rperf: Rperf::Rack authorize: proc raised #{e.class}: #{e.message}\n")
          false
        end
        return plain(403, "Forbidden: the rperf viewer answers only when the app's authorize: proc says yes.\n") unless allowed
        return plain(405, "Method not allowed\n", "allow" => "GET, HEAD") unless %w[GET HEAD].include?(env["REQUEST_METHOD"])
        unless Rperf.respond_to?(:report) && Rperf.running?
          return plain(503, "rperf is not profiling this process (run it under `rperf record`).\n")
        end

        q = query(env)
        minutes = q["minutes"] == "all" ? nil : q["minutes"].to_i
        minutes = 5 unless minutes.nil? || MINUTES.include?(minutes)
        endpoints = (Rperf.label_values("endpoint") rescue []).map(&:to_s).sort
        endpoint = q["endpoint"].to_s
        endpoint = "" unless endpoints.include?(endpoint)
        view = q["view"].to_s
        opts = { last: minutes && minutes * 60 }
        opts[:tagfocus] = ["endpoint=#{endpoint}"] unless endpoint.empty?
        title = "#{endpoint.empty? ? 'All requests' : endpoint}, " \
                "#{minutes ? "last #{minutes} min" : 'whole run'}, pid #{Process.pid}"

        case view
        when "svg"
          return [200, headers("image/svg+xml"), [Rperf.report(format: "svg", **opts).to_s]]
        when "pprof"
          return [200, headers("application/octet-stream",
                               "content-disposition" => "attachment; filename=\"rperf-#{Process.pid}.pb.gz\""),
                  [Rperf.report(format: "pprof", **opts).to_s]]
        end
        view = "flame" unless VIEWS.include?(view)
        nonce = [Random.urandom(18)].pack("m0").tr("+/", "-_")
        body = page(env, view, minutes, endpoint, endpoints, title, opts, nonce)
        [200, headers("text/html; charset=utf-8", "content-security-policy" => csp(nonce)), [body]]
      end

      private

      def page(env, view, minutes, endpoint, endpoints, title, opts, nonce)
        base = "#{env['SCRIPT_NAME']}#{@path}"
        link = ->(changes) { h("#{base}?#{URI.encode_www_form(params(view, minutes, endpoint).merge(changes))}") }
        out = +""
        out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        out << "<title>rperf: #{h(title)}</title>\n<style>"
        out << "body{font:14px sans-serif;margin:1em}nav a,nav b{margin-right:.8em}"
        out << "pre{font:12px monospace;white-space:pre;overflow:auto;background:#f8f4ec;padding:.5em}"
        out << "svg{max-width:100%;height:auto}</style></head><body>\n"
        out << "<h1>rperf: #{h(title)}</h1>\n"
        out << "<form method=\"get\" action=\"#{h(base)}\">\n<label>Endpoint <select name=\"endpoint\">"
        out << "<option value=\"\"#{' selected' if endpoint.empty?}>all</option>"
        endpoints.each do |e|
          out << "<option value=\"#{h(e)}\"#{' selected' if e == endpoint}>#{h(e)}</option>"
        end
        out << "</select></label>\n<label>Window <select name=\"minutes\">"
        (MINUTES.map(&:to_s) + ["all"]).each do |m|
          sel = (minutes ? minutes.to_s : "all") == m
          out << "<option value=\"#{m}\"#{' selected' if sel}>#{m == 'all' ? 'whole run' : "last #{m} min"}</option>"
        end
        out << "</select></label>\n<input type=\"hidden\" name=\"view\" value=\"#{h(view)}\">"
        out << "<button type=\"submit\">Show</button></form>\n<nav>"
        VIEWS.each do |v|
          out << (v == view ? "<b>#{v}</b>" : "<a href=\"#{link.call('view' => v)}\">#{v}</a>")
        end
        out << "<a href=\"#{link.call('view' => 'svg')}\">svg file</a>"
        out << "<a href=\"#{link.call('view' => 'pprof')}\">pprof file</a></nav>\n"
        case view
        when "flame"
          svg = Rperf.report(format: "svg", **opts).to_s
          # Inline: drop the XML prolog, and let the flame graph's own
          # script run under this page's policy.
          svg = svg.sub(/\A<\?xml[^>]*\?>\s*/, "")
          svg = svg.sub("<script type=\"text/ecmascript\">", "<script type=\"text/ecmascript\" nonce=\"#{nonce}\">")
          out << "<div id=\"flame\">" << svg << "</div>\n"
        else
          out << "<pre>" << h(Rperf.report(format: view, **opts).to_s) << "</pre>\n"
        end
        out << "</body></html>\n"
      end

      def params(view, minutes, endpoint)
        p = { "view" => view, "minutes" => minutes ? minutes.to_s : "all" }
        p["endpoint"] = endpoint unless endpoint.empty?
        p
      end

      def query(env)
        URI.decode_www_form(env["QUERY_STRING"].to_s).to_h
      rescue ArgumentError
        {}
      end

      # A fresh nonce per page: only the flame graph's own script may run.
      def csp(nonce)
        "default-src 'none'; script-src 'nonce-#{nonce}'; style-src 'unsafe-inline'; " \
          "img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
      end

      def headers(type, extra = {})
        { "content-type" => type, "cache-control" => "no-store", "x-content-type-options" => "nosniff",
          "referrer-policy" => "no-referrer" }.merge(extra)
      end

      def plain(status, text, extra = {})
        [status, headers("text/plain; charset=utf-8").merge(extra), [text]]
      end

      HTML_ESCAPES = { "&" => "&amp;", "<" => "&lt;", ">" => "&gt;", '"' => "&quot;", "'" => "&#39;" }.freeze

      def h(text)
        text.to_s.gsub(/[&<>"']/, HTML_ESCAPES)
      end
    end
  end
end
