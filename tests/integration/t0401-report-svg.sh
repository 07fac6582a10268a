#!/bin/sh
# rperf report -o x.svg: the flame graph is well-formed XML whatever the
# frame names, loads in headless Chromium without a script error, draws
# the expected frames, zooms on a click, searches, and stays quick with
# 100k unique stacks.  Without chromium the browser checks are skipped.
. "$TEST_SRCDIR/test-lib.sh"

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		CHROMIUM=$c
		break
	fi
done

# Run headless Chromium on $1 and print the DOM after its scripts ran.
chrome_dom() {
	_ud=$(mktemp -d "$TRASH/chrome.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --disable-extensions \
		--user-data-dir="$_ud" --dump-dom "file://$TRASH/$1" \
		2>"$TRASH/chrome.err"
}

# Wrap flame graph $1 into HTML page $2 that then runs check.js with the
# settings $3 (a JS object) and writes what it found into <pre id=result>.
wrap() {
	{
		printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8">\n'
		printf '<script>var errs = []; window.onerror = function (m) { errs.push(String(m)); };</script>\n'
		printf '</head><body>\n'
		sed 1d "$1"
		printf '<script>var CFG = %s;\n' "$3"
		cat check.js
		printf '</script></body></html>\n'
	} >"$2"
}

# The lines check.js wrote, from a dumped DOM on stdin, unescaped.
results() {
	tr '\n' '\001' | sed -n 's/.*<pre id="result">\([^<]*\)<\/pre>.*/\1/p' |
		tr '\001' '\n' |
		sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g'
}

cat >check.js <<'JS'
(function () {
	var out = [], k;
	function node(name) {
		for (var i = 0; i < N; i++) if (fg.names[nm[i]] === name) return i;
		return -1;
	}
	function rect(i) {
		return document.querySelector('#frames g[data-i="' + i + '"] rect');
	}
	function width(i) {
		return Math.round(+rect(i).getAttribute('width'));
	}
	try {
		out.push('errors=' + errs.length + ' ' + errs.join('|'));
		out.push('drawn=' + document.querySelectorAll('#frames g').length);
		for (k = 0; k < CFG.want.length; k++)
			out.push('has ' + CFG.want[k] + '=' +
			    (node(CFG.want[k]) >= 0 && rect(node(CFG.want[k])) !== null));
		var z = node(CFG.zoom);
		out.push('full=' + (fg.width - 20));
		out.push('before=' + width(z));
		rect(z).dispatchEvent(new MouseEvent('click', { bubbles: true }));
		out.push('after=' + width(z));
		out.push('unzoom=' + document.getElementById('unzoom').getAttribute('class'));
		rect(z).dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
		out.push('details=' + document.getElementById('details').textContent);
		out.push('search=' + search(CFG.search).toFixed(1));
		out.push('matched=' + document.getElementById('matched').textContent);
		document.getElementById('unzoom').dispatchEvent(new MouseEvent('click', { bubbles: true }));
		out.push('reset=' + width(z));
		out.push('ms=' + Math.round(performance.now()));
	} catch (e) {
		out.push('exception=' + e);
	}
	var pre = document.createElement('pre');
	pre.id = 'result';
	pre.textContent = out.join('\n');
	document.body.appendChild(pre);
})();
JS

# Known weights (in ms) and hostile names; the last one is not UTF-8.
cat >evil.folded <<'EOF2'
main;a<b&c"d'e;leaf]]>x 30000000
main;</script><script>alert(1)</script> 20000000
main;work;hot 40000000
main;work;cold 10000000
main;work;hot;[GVL blocked] 5000000
EOF2
printf 'main;bad\377\376utf8 7000000\n' >>evil.folded

test_expect_success 'report -o x.svg writes well-formed SVG, names escaped' '
	"$RPERF" report -o evil.svg evil.folded &&
	sed -n 2p evil.svg | grep -q "^<svg " &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" evil.svg &&
	test "$(grep -c "<script" evil.svg)" -eq 1 &&
	! grep -q "alert(1)</script>" evil.svg &&
	! ls evil.svg.tmp* 2>/dev/null &&
	! grep -E -q "(src|href)=\"http" evil.svg
'

test_expect_success '--format svg writes to stdout; filters apply' '
	"$RPERF" report --format svg --focus "^hot$" evil.folded >focus.svg &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" focus.svg &&
	grep -q "\"hot\"" focus.svg && ! grep -q "\"cold\"" focus.svg &&
	grep -q "Total 45.00 ms" focus.svg && grep -q -- "--focus" focus.svg
'

test_expect_success 'a recorded profile with VM states becomes a flame graph' '
	"$RPERF" record -q -m wall -o s.pb.gz "$FIXTURES/sleeper.rb" 0.2 &&
	"$RPERF" report -o s.svg s.pb.gz &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" s.svg &&
	grep -q "Kernel#sleep" s.svg
'

if test -z "$CHROMIUM"; then
	test_skip 'flame graphs in a browser' 'no chromium: apt-get install chromium'
	test_done
fi

test_expect_success 'the standalone SVG draws its frames in Chromium' '
	chrome_dom evil.svg >evil.dom &&
	grep -q "class=\"f\"" evil.dom &&
	grep -q ">work<" evil.dom &&
	grep -q "&lt;/script&gt;&lt;script&gt;alert(1)" evil.dom
'

test_expect_success 'names survive exactly; hover, zoom, search and reset work' '
	wrap evil.svg evil.html "{ want: [\"work\", \"hot\", \"[GVL blocked]\", \"a<b&c\\\"d'"'"'e\", \"leaf]]>x\", \"<\\/script><script>alert(1)<\\/script>\", \"bad\\ufffd\\ufffdutf8\"], zoom: \"work\", search: \"^hot\$\" }" &&
	chrome_dom evil.html | results >res &&
	cat res &&
	test_grep "^errors=0 $" res &&
	! grep -q "=false$" res &&
	test_grep "^has bad" res &&
	test_grep "^full=1180$" res &&
	test_grep "^before=[0-9]+$" res && ! grep -q "^before=1180$" res &&
	test_grep "^after=1180$" res &&
	test_grep "^unzoom=btn$" res &&
	test_grep "^details=work \(55.00 ms, 49.11%\)$" res &&
	test_grep "^search=40.2$" res &&
	test_grep "^matched=Matched: 40.2%$" res &&
	test_grep "^reset=[0-9]+$" res && ! grep -q "^reset=1180$" res
'

test_expect_success 'the VM states are drawn in their own colors' '
	chrome_dom s.svg >s.dom &&
	grep -q ">Kernel#sleep<" s.dom &&
	grep -q ">\[GVL blocked\]<" s.dom &&
	grep -q "rgb(140,150,180)" s.dom
'

test_expect_success '100k unique stacks: a small file that renders quickly' '
	python3 "$TEST_SRCDIR/../bench/report/gen.py" 100000 20000 >big.folded &&
	"$RPERF" report -o big.pb.gz big.folded &&
	"$RPERF" report -o big.svg big.pb.gz &&
	size=$(wc -c <big.svg) && echo "svg: $size bytes" &&
	test "$size" -lt 10000000 &&
	wrap big.svg big.html "{ want: [\"<main>\"], zoom: \"<main>\", search: \"Klass1#\" }" &&
	start=$(date +%s) &&
	chrome_dom big.html | results >big.res &&
	end=$(date +%s) &&
	cat big.res && echo "chromium took $((end - start)) s" &&
	test_grep "^errors=0 $" big.res &&
	test_grep "^has <main>=true$" big.res &&
	test_grep "^after=1180$" big.res &&
	ms=$(sed -n "s/^ms=//p" big.res) && test "$ms" -lt 15000
'

test_done
