#!/bin/sh
# The in-app viewer of Rperf::Rack on a real WEBrick server: it answers
# only when the app's authorize: proc says yes, mounting it without one is
# refused, its flame graph is rperf's own SVG (well-formed, with the hot
# function), the endpoint filter and views work, and what requests put in
# labels comes out HTML-escaped.
. "$TEST_SRCDIR/test-lib.sh"
. "$TEST_SRCDIR/real-lib.sh"

command -v curl >/dev/null || skip_all "no curl"
command -v python3 >/dev/null || skip_all "no python3 (to parse the pages)"
inc=$(real_ruby_libs ruby-rack ruby-webrick) ||
	skip_all "Debian's Ruby library packages cannot be downloaded here"
port=$(free_port)
server_pid=
stop_server() {
	kill_ours "$server_pid" rack_app
}
trap stop_server EXIT
url=http://127.0.0.1:$port/rperf

# Parse an HTML page strictly enough: every element closed in order (void
# ones aside), and each inline <svg> well-formed XML.  Prints the svg
# elements' text content so the caller can grep it.
cat >check_page.py <<'PY'
import sys, re, html.parser, xml.etree.ElementTree as ET
VOID = {"meta", "input", "br", "img", "link", "hr", "option"}
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append(tag)
    def handle_startendtag(self, tag, attrs):
        pass
    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            sys.exit("unbalanced </%s>, open: %s" % (tag, self.stack))
        self.stack.pop()
page = open(sys.argv[1], encoding="utf-8").read()
# The svg is foreign content (CDATA allowed): check it as XML, then the
# page around it as HTML.
svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
for s in svgs:
    root = ET.fromstring(s)
    print("".join(root.itertext()))
P().feed(re.sub(r"<svg\b.*?</svg>", "", page, flags=re.S))
PY

test_expect_success 'mounting the viewer without authorize: is refused' '
	test_must_fail "$RPERF" record -q -o none.folded -- $inc -e "
		require \"rperf/rack\"
		Rperf::Rack.new(->(env) { [200, {}, []] }, viewer: \"/rperf\")" 2>err &&
	test_grep "viewer: \"/rperf\" needs authorize:" err
'

# The server runs across the tests below (a test body is a subshell).
LABEL_HEADER=X-Endpoint VIEWER_TOKEN=s3cret PORT=$port READY=$TRASH/ready "$RPERF" record -o v.pb.gz -- $inc \
	"$FIXTURES/servers/rack_app.rb" >server.out 2>&1 &
server_pid=$!

test_expect_success 'the server runs with the viewer mounted' '
	wait_for "test -s ready" 300 || { cat server.out; false; } &&
	for i in 1 2 3 4 5 6; do
		curl -sf -o /dev/null "http://127.0.0.1:$port/light/$i" &&
		curl -sf -o /dev/null "http://127.0.0.1:$port/heavy/$i" || exit 1
	done &&
	curl -sf -o /dev/null -H "X-Endpoint: GET /x/<script>alert(1)</script>" \
		"http://127.0.0.1:$port/light/99"
'

test_expect_success 'no token, a wrong one, or a POST: no profile' '
	test "$(curl -s -o body -w "%{http_code}" "$url")" = 403 &&
	test_grep ! "light_work|svg" body &&
	test "$(curl -s -o body -w "%{http_code}" -H "X-Rperf-Token: guess" "$url?view=svg")" = 403 &&
	test_grep ! "light_work|svg" body &&
	test "$(curl -s -o body -w "%{http_code}" -X POST -d "" -H "X-Rperf-Token: s3cret" "$url")" = 405
'

test_expect_success 'the page: live flame graph of every endpoint, escaped labels' '
	curl -s -D headers -o page.html -H "X-Rperf-Token: s3cret" "$url?minutes=5" &&
	test_grep "^HTTP/1.1 200" headers &&
	grep -qi "^content-type: text/html" headers &&
	grep -qi "^content-security-policy: default-src .none.; script-src .nonce-" headers &&
	python3 check_page.py page.html >svgtext &&
	test_grep "heavy_work" page.html &&
	test_grep "light_work" page.html &&
	test_grep "<option value=\"GET /heavy/:id\">GET /heavy/:id</option>" page.html &&
	test_grep "GET /x/&lt;script&gt;alert\(1\)&lt;/script&gt;" page.html &&
	test_grep ! "<script>alert" page.html &&
	test $(grep -c "<script" page.html) -eq 1 &&
	test_grep "<script type=\"text/ecmascript\" nonce=" page.html
'

test_expect_success 'the svg view is rperf'"'"'s flame graph and parses as XML' '
	curl -s -D headers -o flame.svg -H "X-Rperf-Token: s3cret" "$url?view=svg&minutes=all" &&
	grep -qi "^content-type: image/svg+xml" headers &&
	xmllint --noout flame.svg &&
	test_grep "heavy_work" flame.svg &&
	test_grep "Reset Zoom" flame.svg
'

test_expect_success 'the endpoint filter and the text and folded views' '
	curl -s -o heavy.html -H "X-Rperf-Token: s3cret" \
		"$url?view=folded&minutes=all&endpoint=GET+%2Fheavy%2F%3Aid" &&
	python3 check_page.py heavy.html &&
	test_grep "heavy_work" heavy.html &&
	test_grep ! "light_work" heavy.html &&
	test_grep "&lt;main&gt;" heavy.html &&
	test_grep "<option value=\"GET /heavy/:id\" selected>" heavy.html &&
	curl -s -o text.html -H "X-Rperf-Token: s3cret" \
		"$url?view=text&minutes=1&endpoint=GET+%2Flight%2F%3Aid" &&
	python3 check_page.py text.html &&
	test_grep "light_work" text.html &&
	test_grep ! "heavy_work" text.html &&
	curl -s -o pp.pb.gz -H "X-Rperf-Token: s3cret" "$url?view=pprof&minutes=all" &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /heavy/:id" pp.pb.gz >pp.folded &&
	test_grep "heavy_work" pp.folded
'

test_expect_success 'SIGTERM stops the server and writes the profile' '
	kill -TERM "$server_pid" &&
	wait_for "! kill -0 $server_pid" 300 &&
	test_grep "server stopped" server.out &&
	"$RPERF" report --format folded --tagfocus "endpoint=GET /heavy/:id" v.pb.gz >end.folded &&
	test_grep "heavy_work" end.folded
'

stop_server
test_done
