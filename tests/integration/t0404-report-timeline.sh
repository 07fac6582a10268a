#!/bin/sh
# Timelines: a profile with timestamps (record --timeline) of
# tests/fixtures/timeline.rb (a CPU-bound thread, one sleeping 50 ms at a
# time, one reading a pipe, a forced GC) becomes speedscope's JSON and an
# SVG timeline in which each thread shows its known pattern at the times
# the fixture noted itself; the speedscope file loads in the real
# speedscope (from the npm registry) in headless Chromium, the SVG renders
# there too.  Without chromium, npm or the registry the browser checks
# are skipped.
. "$TEST_SRCDIR/test-lib.sh"

# How far (ms) a state's edge may lie from the fixture's own clock
# reading, once the offset of its first line from the sampler's start is
# known.  A sleep's length is only bounded loosely (45 to 80 ms for 50):
# on a loaded machine the kernel wakes a sleeper late, and the fixture
# cannot read its clock at that moment, only once the GVL is back.
TOL_MS=${RPERF_TIMELINE_TOL_MS:-5}

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	if command -v "$c" >/dev/null 2>&1; then
		CHROMIUM=$c
		break
	fi
done

# Run headless Chromium on URL $1 and print the DOM after its scripts
# ran (virtual time: the page's timers run without waiting).
chrome_dom() {
	_ud=$(mktemp -d "$TRASH/chrome.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --disable-extensions \
		--user-data-dir="$_ud" --virtual-time-budget=10000 --dump-dom "$1" \
		2>>"$TRASH/chrome.err"
}

# A screenshot of URL $1 into $2, $3 pixels wide and $4 high.
chrome_shot() {
	_ud=$(mktemp -d "$TRASH/chrome.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --disable-extensions \
		--user-data-dir="$_ud" --virtual-time-budget=10000 \
		--window-size="$3,$4" --hide-scrollbars --screenshot="$2" "$1" \
		2>>"$TRASH/chrome.err"
}

# Append comments to a gzipped pprof profile (argv: file, comments...):
# a string table entry and a comment naming it each, as protobuf allows
# a repeated field to continue anywhere.  The user marks (Rperf.mark) are
# such comments, "mark: PID THREAD START END NAME"; the fixture makes real
# ones around its reads, and these add the cases it does not: nested,
# overlapping, on a thread without samples.
cat >addcomment.py <<'PY'
import gzip, sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v, i

def enc(v):
    out = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)

raw = gzip.decompress(open(sys.argv[1], 'rb').read())
i = nstr = 0
while i < len(raw):
    key, i = varint(raw, i)
    wire = key & 7
    if wire == 0:
        _, i = varint(raw, i)
    elif wire == 2:
        n, i = varint(raw, i)
        i += n
    elif wire == 1:
        i += 8
    elif wire == 5:
        i += 4
    if key >> 3 == 6:
        nstr += 1
out = bytearray(raw)
for c in sys.argv[2:]:
    s = c.encode()
    out += b'\x32' + enc(len(s)) + s + b'\x68' + enc(nstr)
    nstr += 1
open(sys.argv[1], 'wb').write(gzip.compress(bytes(out)))
PY

# How many distinct colours a PNG screenshot has (argv: file, and
# optionally x0 y0 x1 y1 to look at that box only): a blank page has one
# or two; then "R,G,B N" for each colour of 50 pixels or more.  A plain
# PNG reader (8-bit RGB or RGBA, as Chromium writes).
cat >pngcolors.py <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'\x89PNG\r\n\x1a\n'
i, idat = 8, b''
while i < len(b):
    n, t = struct.unpack('>I4s', b[i:i + 8])
    body = b[i + 8:i + 8 + n]
    if t == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif t == b'IDAT':
        idat += body
    i += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
x0, y0, x1, y1 = (int(v) for v in sys.argv[2:6]) if len(sys.argv) > 5 else (0, 0, w, h)
prev, colors, pos = bytearray(stride), {}, 0
for y in range(h):
    f, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
    pos += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + prev[x]) & 255
        elif f == 3: line[x] = (line[x] + (a + prev[x]) // 2) & 255
        elif f == 4:
            p = a + prev[x] - c
            pa, pb, pc = abs(p - a), abs(p - prev[x]), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else prev[x] if pb <= pc else c)) & 255
    prev = line
    if y0 <= y < y1:
        for x in range(x0, min(x1, w)):
            c = bytes(line[x * bpp:x * bpp + 3])
            colors[c] = colors.get(c, 0) + 1
print(len(colors))
for c, n in sorted(colors.items(), key=lambda kv: -kv[1]):
    if n >= 50:
        print('%d,%d,%d %d' % (c[0], c[1], c[2], n))
PY

# The checks of a speedscope file (argv: file, the fixture's times): the
# schema's shape, events nested and in time order, each thread's pattern
# at the fixture's times.  Prints what it found; fails on the first
# mismatch.
cat >check_speedscope.py <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]))
tol = float(sys.argv[3])
assert d['$schema'] == 'https://www.speedscope.app/file-format-schema.json'
frames = d['shared']['frames']
assert all(isinstance(f['name'], str) for f in frames)
prof = {}
for p in d['profiles']:
    assert p['type'] == 'evented' and p['unit'] == 'nanoseconds', p['name']
    assert p['startValue'] == 0 and p['endValue'] > 0
    stack, last, spans = [], 0, []
    for e in p['events']:
        assert e['at'] >= last, (p['name'], 'time goes back', e)
        assert e['at'] <= p['endValue'], (p['name'], 'after the end', e)
        last = e['at']
        if e['type'] == 'O':
            stack.append((e['frame'], e['at']))
        else:
            assert stack and stack[-1][0] == e['frame'], (p['name'], 'not nested', e)
            f, at = stack.pop()
            spans.append((frames[f]['name'], at / 1e6, e['at'] / 1e6, len(stack)))
    assert not stack, (p['name'], 'frames left open')
    prof[p['name']] = spans
print('profiles:', sorted(prof))

def state(name, frame):
    # The spans of pseudo-frame FRAME of profile NAME, adjacent ones merged.
    out = []
    for f, a, b, _ in sorted(s for s in prof[name] if s[0] == frame):
        if out and a - out[-1][1] < 0.01:
            out[-1][1] = b
        else:
            out.append([a, b])
    return out

def thread(label):
    names = [n for n in prof if n.startswith('thread ') and n.endswith('(' + label + ')')]
    assert len(names) == 1, (label, sorted(prof))
    return names[0]

sleeps = [e for e in ev if e[0] == 'sleep']
reads = [e for e in ev if e[0] == 'read']
gc = [e for e in ev if e[0] == 'gc'][0]
# The sleeper is blocked 50 ms five times; the offset of the fixture's
# clock is where its first line ran on the profile's.
naps = [s for s in state(thread('sleeper'), '[GVL blocked]') if s[1] - s[0] >= 40]
assert len(naps) == len(sleeps) == 5, (naps, sleeps)
offs = sorted(n[0] - s[1] for n, s in zip(naps, sleeps))
off = offs[2]
print('offset: %.2f ms' % off)
assert 0 <= off < 3000, off
naps_fr = sorted((a, b) for f, a, b, _ in prof[thread('sleeper')] if f == 'Object#nap')
for n, s in zip(naps, sleeps):
    assert abs(n[0] - off - s[1]) <= tol, ('sleep starts', n, s, off)
    assert 45 <= n[1] - n[0] <= 80, ('sleep lasts', n)
    # nap returns (after the GVL is back) when the fixture reads its clock
    fr = [f for f in naps_fr if f[0] <= n[0] + 0.01 and n[1] <= f[1] + 0.01]
    assert fr and abs(fr[0][1] - off - s[2]) <= tol, ('sleep ends', n, fr, s, off)
print('sleeper: 5 naps of 50 ms at the right times')
# The reader is blocked from each read's start until the pipe has data.
blocked = state(thread('reader'), '[GVL blocked]')
idle = sorted(blocked + state(thread('reader'), '[GVL wait]'))
for r in reads:
    b = [x for x in blocked if abs(x[0] - off - r[1]) <= tol]
    assert b, ('read starts', r, blocked, off)
    merged = [x for x in idle if r[1] + off - tol <= x[0] and x[1] <= r[2] + off + tol]
    assert sum(x[1] - x[0] for x in merged) >= r[2] - r[1] - 2 * tol, ('read waits', r, merged)
print('reader: 3 reads blocked at the right times')
# The CPU thread is never blocked; it runs or waits for the GVL.
assert not [x for x in state(thread('cpu'), '[GVL blocked]') if x[1] - x[0] > 1]
busy = sum(b - a for f, a, b, depth in prof[thread('cpu')] if depth == 0)
waits = sum(b - a for a, b in state(thread('cpu'), '[GVL wait]'))
assert busy - waits > 200, (busy, waits)
print('cpu: runs %.0f ms, never blocked' % (busy - waits))
# The forced GC marks within the fixture's GC.start.
main = [n for n in prof if n.startswith('thread 1') and not n.startswith('marks')][0]
marking = [x for x in state(main, '[GC marking]')
           if gc[1] + off - tol <= x[0] and x[1] <= gc[2] + off + tol]
assert marking, ('gc', state(main, '[GC marking]'), gc, off)
print('gc: marked in GC.start')
# Each read is a mark of the reader's (Rperf.mark) around it.
ev_marks = [(f, a, b) for f, a, b, _ in prof['marks: ' + thread('reader')]]
assert [m[0] for m in ev_marks] == ['read 1', 'read 2', 'read 3'], ev_marks
for m, r in zip(ev_marks, reads):
    assert abs(m[1] - off - r[1]) <= tol and abs(m[2] - off - r[2]) <= tol, ('mark', m, r)
print('marks: the reads at their times')
json.dump({'offset': off}, open('offset.json', 'w'))
PY

test_expect_success 'record the fixture with timestamps' '
	"$RPERF" record -q -m wall --timeline -o t.pb.gz \
		"$FIXTURES/timeline.rb" times.json &&
	cat times.json &&
	"$RPERF" report t.pb.gz >t.txt &&
	test_grep "^  3 \(sleeper\)" t.txt
'

test_expect_success 'speedscope: an evented profile a thread, each pattern at its time' '
	"$RPERF" report -o t.speedscope.json t.pb.gz &&
	python3 check_speedscope.py t.speedscope.json times.json "$TOL_MS" &&
	"$RPERF" report --format speedscope t.pb.gz >stdout.json &&
	cmp t.speedscope.json stdout.json
'

test_expect_success 'speedscope: names escaped, frames shared, exporter named' '
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
names = [(f[\"name\"], f.get(\"file\"), f.get(\"line\")) for f in d[\"shared\"][\"frames\"]]
assert len(names) == len(set(names)), \"a frame is repeated\"
assert d[\"exporter\"].startswith(\"rperf \")
assert d[\"shared\"][\"frames\"][:4] == [{\"name\": \"[GVL blocked]\"}, {\"name\": \"[GVL wait]\"}, {\"name\": \"[GC marking]\"}, {\"name\": \"[GC sweeping]\"}]
assert any(f[\"name\"] == \"Object#nap\" and f[\"file\"].endswith(\"timeline.rb\") for f in d[\"shared\"][\"frames\"])
" t.speedscope.json &&
	! grep -q "[<>&]" t.speedscope.json
'

test_expect_success 'speedscope: marks are a profile per thread, nested' '
	cp t.pb.gz m.pb.gz &&
	python3 addcomment.py m.pb.gz "mark: 0 3 400000000 600000000 request <a&b>" \
		"mark: 0 3 450000000 500000000 db" \
		"mark: 0 3 480000000 650000000 overlaps" \
		"mark: 0 9 100000000 200000000 elsewhere" &&
	"$RPERF" report -o m.speedscope.json m.pb.gz &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
fr = d[\"shared\"][\"frames\"]
ps = {p[\"name\"]: p for p in d[\"profiles\"]}
names = [p[\"name\"] for p in d[\"profiles\"]]
i = names.index(\"thread 3 (sleeper)\")
assert names[i + 1] == \"marks: thread 3 (sleeper)\", names
assert names[-1] == \"marks: thread 9\", names
ev = [(e[\"type\"], fr[e[\"frame\"]][\"name\"], e[\"at\"]) for e in ps[\"marks: thread 3 (sleeper)\"][\"events\"]]
assert ev == [(\"O\", \"request <a&b>\", 400000000), (\"O\", \"db\", 450000000),
    (\"O\", \"overlaps\", 480000000), (\"C\", \"overlaps\", 500000000),
    (\"C\", \"db\", 500000000), (\"C\", \"request <a&b>\", 600000000)], ev
print(ev)
" m.speedscope.json >marks.out &&
	cat marks.out &&
	python3 check_speedscope.py m.speedscope.json times.json "$TOL_MS"
'

test_expect_success 'speedscope without timestamps: a sampled profile a thread' '
	"$RPERF" record -q -m wall -o agg.pb.gz "$FIXTURES/threads.rb" 2 &&
	"$RPERF" report -o agg.speedscope.json agg.pb.gz &&
	"$RPERF" report -o agg.folded agg.pb.gz &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
total = 0
for p in d[\"profiles\"]:
    assert p[\"type\"] == \"sampled\" and p[\"unit\"] == \"nanoseconds\"
    assert len(p[\"samples\"]) == len(p[\"weights\"]) > 0
    assert p[\"endValue\"] == sum(p[\"weights\"])
    assert all(0 <= f < len(d[\"shared\"][\"frames\"]) for s in p[\"samples\"] for f in s)
    total += sum(p[\"weights\"])
print(len(d[\"profiles\"]), total)
" agg.speedscope.json >agg.out &&
	cat agg.out &&
	test "$(cut -d" " -f1 agg.out)" -ge 3 &&
	test "$(cut -d" " -f2 agg.out)" = "$(folded_sum agg.folded)" &&
	"$RPERF" record -q -o rec.speedscope.json "$FIXTURES/threads.rb" 2 &&
	python3 -m json.tool rec.speedscope.json >/dev/null &&
	printf "a;b 5\na;c 7\n" | "$RPERF" report --format speedscope - >f.json &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"profiles\"][0][\"weights\"] == [5, 7], d
" f.json
'

# --- the SVG timeline ---

# The data of an SVG timeline (the object the script reads) as JSON.
cat >tldata.py <<'PY'
import json, re, sys
svg = open(sys.argv[1]).read()
m = re.search(r'var tl = (\{.*?\});\n', svg, re.S)
json.dump(json.loads(m.group(1)), sys.stdout)
PY

# The checks of an SVG timeline's data (argv: its JSON, the fixture's
# times, the tolerance): a lane per thread, the sleeper's, reader's and
# GC's states at the fixture's times.
cat >check_svg.py <<'PY'
import json, sys
tl = json.load(open(sys.argv[1]))
ev = json.load(open(sys.argv[2]))
tol = float(sys.argv[3])
off = json.load(open('offset.json'))['offset']
lanes = {l['name']: l for l in tl['lanes']}
print('lanes:', sorted(lanes))
for want in ('thread 2 (cpu)', 'thread 3 (sleeper)', 'thread 4 (reader)'):
    assert want in lanes, want

def runs(name, state):
    # (start, end) in ms of the runs of pieces mainly in STATE.
    p, out = lanes[name]['p'], []
    for i in range(0, len(p), 5):
        if p[i + 2] != state:
            continue
        a, b = p[i] / 1000.0, (p[i] + p[i + 1]) / 1000.0
        if out and a - out[-1][1] < 0.01:
            out[-1][1] = b
        else:
            out.append([a, b])
    return out

sleeps = [e for e in ev if e[0] == 'sleep']
naps = [r for r in runs('thread 3 (sleeper)', 1) if r[1] - r[0] >= 40]
assert len(naps) == 5, naps
for n, s in zip(naps, sleeps):
    assert abs(n[0] - off - s[1]) <= tol, ('sleep starts', n, s)
    assert 45 <= n[1] - n[0] <= 80, ('sleep lasts', n)
# The reader waits (blocked, then for the GVL) through each read; it runs
# for less than a piece between two reads, so only the first read's start
# shows as an edge.
blocked = runs('thread 4 (reader)', 1)
waiting = sorted(blocked + runs('thread 4 (reader)', 2))
reads = [e for e in ev if e[0] == 'read']
assert abs(blocked[0][0] - off - reads[0][1]) <= tol, ('first read', reads[0], blocked)
for r in reads:
    a, b = r[1] + off + tol, r[2] + off - tol
    inside = sum(max(0, min(b, y) - max(a, x)) for x, y in waiting)
    assert inside >= 0.95 * (b - a), ('read waits', r, waiting)
gc = [e for e in ev if e[0] == 'gc'][0]
main = [n for n in lanes if n.startswith('thread 1')][0]
marking = [r for r in runs(main, 3) if gc[1] + off - tol <= r[0] and r[1] <= gc[2] + off + tol]
assert marking, ('gc', runs(main, 3), gc)
assert not [r for r in runs('thread 2 (cpu)', 1) if r[1] - r[0] > 1]
# A piece's stack is its leaf node; a node is (caller's node, name).
nodes = tl['nodes']
def stack(n):
    out = []
    while n:
        out.append(tl['names'][nodes[2 * n + 1]])
        n = nodes[2 * n]
    return out
stacks = [stack(n) for n in range(len(nodes) // 2)]
assert all(nodes[2 * n] < n for n in range(1, len(nodes) // 2)), 'a caller after its callee'
assert any(s[:2] == ['Kernel#sleep', 'Object#nap'] for s in stacks), stacks
assert any(s[:2] == ['Kernel#sleep', 'Object#nap'] for s in map(stack, lanes['thread 3 (sleeper)']['p'][3::5]))
rm = [m for m in lanes['thread 4 (reader)']['m'] if m[3].startswith('read ')]
assert [m[3] for m in rm] == ['read 1', 'read 2', 'read 3'], rm
for m, r in zip(rm, reads):
    assert abs(m[0] / 1000.0 - off - r[1]) <= tol, ('mark starts', m, r)
    assert abs((m[0] + m[1]) / 1000.0 - off - r[2]) <= tol, ('mark ends', m, r)
print('ok: states at the fixture times, offset %.2f ms' % off)
PY

test_expect_success 'report --timeline -o x.svg: well-formed, a lane per thread' '
	"$RPERF" report --timeline -o t.svg t.pb.gz &&
	sed -n 2p t.svg | grep -q "^<svg " &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" t.svg &&
	test "$(grep -c "<script" t.svg)" -eq 1 &&
	! grep -E -q "(src|href)=\"http" t.svg &&
	grep -q "<text id=\"title\"[^>]*>Timeline: rperf record" t.svg &&
	python3 tldata.py t.svg >t.tl.json &&
	python3 check_svg.py t.tl.json times.json "$TOL_MS"
'

test_expect_success 'SVG timeline: marks in their own rows, names escaped' '
	"$RPERF" report --timeline -o m.svg m.pb.gz &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" m.svg &&
	! grep -q "<a&b>" m.svg &&
	python3 tldata.py m.svg >m.tl.json &&
	python3 -c "
import json, sys
tl = json.load(open(sys.argv[1]))
lanes = {l[\"name\"]: l for l in tl[\"lanes\"]}
m = lanes[\"thread 3 (sleeper)\"][\"m\"]
assert m == [[400000, 200000, 0, \"request <a&b>\"], [450000, 50000, 1, \"db\"],
    [480000, 170000, 2, \"overlaps\"]], m
assert lanes[\"thread 3 (sleeper)\"][\"rows\"] == 3
assert lanes[\"thread 9\"][\"m\"] == [[100000, 100000, 0, \"elsewhere\"]]
assert lanes[\"thread 9\"][\"p\"] == []
assert lanes[\"thread 2 (cpu)\"][\"rows\"] == 0
" m.tl.json &&
	python3 check_svg.py m.tl.json times.json "$TOL_MS"
'

# Eight marks on the cpu thread: six nested, one straddling the end of
# the outer ones, one after them.
test_expect_success 'SVG timeline: overlapping marks take as many rows as they need' '
	cp t.pb.gz r.pb.gz &&
	python3 addcomment.py r.pb.gz \
		"mark: 0 2 100000000 600000000 level 0" \
		"mark: 0 2 120000000 580000000 level 1" \
		"mark: 0 2 140000000 560000000 level 2" \
		"mark: 0 2 160000000 540000000 level 3" \
		"mark: 0 2 180000000 520000000 level 4" \
		"mark: 0 2 200000000 500000000 level 5" \
		"mark: 0 2 590000000 650000000 straddle" \
		"mark: 0 2 610000000 690000000 after" &&
	"$RPERF" report --timeline -o r.svg r.pb.gz &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" r.svg &&
	python3 tldata.py r.svg >r.tl.json &&
	python3 -c "
import json, sys
tl = json.load(open(sys.argv[1]))
lanes = {l[\"name\"]: l for l in tl[\"lanes\"]}
cpu = lanes[\"thread 2 (cpu)\"]
got = [(m[0], m[1], m[2], m[3]) for m in cpu[\"m\"]]
want = [(100000 + 20000 * k, 500000 - 40000 * k, k, \"level %d\" % k) for k in range(6)]
want += [(590000, 60000, 1, \"straddle\"), (610000, 80000, 0, \"after\")]
assert got == want, got
assert cpu[\"rows\"] == 6, cpu[\"rows\"]
assert lanes[\"thread 4 (reader)\"][\"rows\"] == 1
h = int(open(sys.argv[2]).read().split(\"height=\\\"\", 1)[1].split(\"\\\"\", 1)[0])
# the SVG grows by the rows: 22 a lane, 16 a mark row
rows = sum(l[\"rows\"] for l in tl[\"lanes\"])
print(\"height\", h, \"lanes\", len(tl[\"lanes\"]), \"mark rows\", rows)
assert h == tl[\"top\"] + 22 * len(tl[\"lanes\"]) + 16 * rows + 34 + 14 * 11, h
" r.tl.json r.svg
'

test_expect_success 'report --timeline --from --to: the view is the window' '
	"$RPERF" report --timeline --from 0.3 --to 0.6 -o win.svg t.pb.gz &&
	python3 tldata.py win.svg >win.tl.json &&
	python3 -c "
import json, sys
tl = json.load(open(sys.argv[1]))
ends = [l[\"p\"][i] + l[\"p\"][i + 1] for l in tl[\"lanes\"] for i in range(0, len(l[\"p\"]), 5)]
assert ends and min(ends) >= 299000 and max(ends) <= 600000, (min(ends), max(ends))
assert tl[\"end\"] == max(ends) and tl[\"start\"] < 300000, (tl[\"start\"], tl[\"end\"])
" win.tl.json
'

test_expect_success 'speedscope --from --to: each profile begins at the window' '
	"$RPERF" report --from 0.3 --to 0.6 -o win.speedscope.json t.pb.gz &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
ev = [p for p in d[\"profiles\"] if p[\"type\"] == \"evented\"]
assert ev
for p in ev:
    s = p[\"startValue\"]
    # (a sample that ends in the window may begin before it, as in the SVG)
    assert 100e6 <= s <= 300e6, (p[\"name\"], s)
    at = [e[\"at\"] for e in p[\"events\"]]
    assert not at or (min(at) >= s and max(at) <= p[\"endValue\"]), (p[\"name\"], s, at[:3])
" win.speedscope.json
'

test_expect_success '--timeline errors: no timestamps (1), not an SVG (2)' '
	"$RPERF" record -q -o agg2.pb.gz "$FIXTURES/sleeper.rb" 0.01 &&
	test_expect_code 1 "$RPERF" report --timeline -o no.svg agg2.pb.gz 2>err &&
	cat err &&
	test_grep "rperf report: .agg2.pb.gz. has no timestamps" err &&
	test_grep "record it with --timeline" err &&
	! test -e no.svg &&
	test_expect_code 1 "$RPERF" report --timeline --format svg agg.folded 2>err &&
	test_grep "agg.folded. has no timestamps" err &&
	test_expect_code 2 "$RPERF" report --timeline -o x.txt t.pb.gz 2>err &&
	test_grep "timeline draws an SVG, not text" err &&
	test_expect_code 2 "$RPERF" report --timeline --format pprof t.pb.gz 2>err &&
	test_expect_code 2 "$RPERF" report --timeline -o x.speedscope.json t.pb.gz 2>err &&
	test_grep "not speedscope" err &&
	test_expect_code 2 "$RPERF" report --timeline --tree t.pb.gz 2>err &&
	test_expect_code 2 "$RPERF" report --timeline --tui t.pb.gz 2>err &&
	test_grep "tui cannot be combined with .*--timeline" err &&
	! test -e x.txt && ! test -e x.speedscope.json &&
	"$RPERF" report --timeline t.pb.gz >stdout.svg &&
	cmp stdout.svg t.svg &&
	"$RPERF" report --timeline --tagfocus thread_name=nobody -o none.svg t.pb.gz &&
	python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" none.svg &&
	test_expect_code 1 "$RPERF" report --timeline --sample-index samples -o s.svg t.pb.gz 2>err &&
	test_grep "is not a time" err
'

# A synthetic timeline profile (argv: file, threads, seconds): 1 ms spans
# at 1000 Hz whose state changes at random (running mostly, GVL wait,
# blocked, now and then GC marking), stacks that keep a base for ~100 ms
# and change their top at every sample: about the worst a real minute
# could be.  Written as gzipped pprof by hand.
cat >genbig.py <<'PY'
import gzip, random, sys
threads, seconds = int(sys.argv[2]), float(sys.argv[3])
random.seed(7)
def varint(v):
    out = bytearray()
    if v < 0: v += 1 << 64
    while True:
        c = v & 0x7f; v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v: return bytes(out)
def field(n, wire, payload):
    return varint(n << 3 | wire) + payload
def ld(n, b): return field(n, 2, varint(len(b)) + b)
def num(n, v): return field(n, 0, varint(v))
strings, sidx = [''], {'': 0}
def s(x):
    if x not in sidx: sidx[x] = len(strings); strings.append(x)
    return sidx[x]
out = bytearray()
out += ld(1, num(1, s('samples')) + num(2, s('count')))
out += ld(1, num(1, s('wall')) + num(2, s('nanoseconds')))
nf = 300
for i in range(1, nf + 1):
    out += ld(5, num(1, i) + num(2, s('Klass%d#method_%d' % (i % 17, i))) + num(4, s('app/file%d.rb' % (i % 23))))
    out += ld(4, num(1, i) + ld(4, num(1, i) + num(2, 10 + i)))
lab = lambda k, v: ld(3, num(1, s(k)) + (num(2, s(v)) if isinstance(v, str) else num(3, v)))
n = int(seconds * 1000)
for th in range(1, threads + 1):
    base = []
    for k in range(n):
        if k % 100 == 0:
            base = [random.randint(1, nf) for _ in range(random.randint(8, 20))]
        top = [random.randint(1, nf) for _ in range(random.randint(1, 4))]
        locs = (base + top)[::-1]
        r = random.random()
        labels = lab('thread', th) + lab('thread_name', 'worker-%d' % th) + lab('timestamp', (k + 1) * 1000000)
        if r < 0.2: labels += lab('%GVL', 'wait')
        elif r < 0.3: labels += lab('%GVL', 'blocked')
        elif r < 0.32: labels += lab('%GC', 'mark')
        body = ld(1, b''.join(varint(l) for l in locs)) + ld(2, varint(1) + varint(1000000)) + labels
        out += ld(2, body)
out += num(12, 1000000) + ld(11, num(1, s('wall')) + num(2, s('nanoseconds')))
head = bytearray()
for x in strings: head += ld(6, x.encode())
open(sys.argv[1], 'wb').write(gzip.compress(bytes(head + out), 1))
PY

test_expect_success 'a minute at 1000 Hz: small files, written quickly' '
	python3 genbig.py big.pb.gz 2 60 &&
	start=$(date +%s) &&
	"$RPERF" report --timeline -o big.svg big.pb.gz &&
	"$RPERF" report -o big.speedscope.json big.pb.gz &&
	end=$(date +%s) &&
	svg=$(wc -c <big.svg) && ss=$(wc -c <big.speedscope.json) &&
	echo "svg: $svg bytes, speedscope: $ss bytes, $((end - start)) s" &&
	test "$svg" -lt 2000000 &&
	test "$ss" -lt 40000000 &&
	test $((end - start)) -lt 60 &&
	python3 tldata.py big.svg >big.tl.json &&
	python3 -c "
import json, sys
tl = json.load(open(sys.argv[1]))
for l in tl[\"lanes\"]:
    n = len(l[\"p\"]) // 5
    print(l[\"name\"], n, \"pieces\")
    assert 1000 < n <= 10300, n
    assert l[\"p\"][0] == 0 and abs(l[\"p\"][-5] + l[\"p\"][-4] - 60000000) < 10000
" big.tl.json &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d[\"profiles\"]) == 2 and len(d[\"shared\"][\"frames\"]) == 304
" big.speedscope.json
'

# --- the SVG timeline in a browser ---

# Wrap timeline $1 into HTML page $2 that then runs the check script $3
# (tlcheck.js by default), which writes what it found into <pre
# id=result>.
wrap() {
	{
		printf '<!DOCTYPE html>\n<html><head><meta charset="utf-8">\n'
		printf '<script>var errs = []; window.onerror = function (m) { errs.push(String(m)); };</script>\n'
		printf '</head><body style="margin:0">\n'
		sed 1d "$1"
		printf '<script>\n'
		cat "${3:-tlcheck.js}"
		printf '</script></body></html>\n'
	} >"$2"
}

# The lines tlcheck.js wrote, from a dumped DOM on stdin, unescaped.
results() {
	tr '\n' '\001' | sed -n 's/.*<pre id="result">\([^<]*\)<\/pre>.*/\1/p' |
		tr '\001' '\n' |
		sed 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g'
}

cat >tlcheck.js <<'JS'
(function () {
	var out = [];
	function lane(name) {
		for (var i = 0; i < tl.lanes.length; i++) if (tl.lanes[i].name === name) return i;
		return -1;
	}
	function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
	function texts(sel) { return all(sel).map(function (t) { return t.textContent; }).join('|'); }
	/* Fire a mouse event of TYPE at SVG x X over element EL. */
	function fire(el, type, x) {
		var m = el.ownerSVGElement.getScreenCTM(), r = el.getBoundingClientRect();
		el.dispatchEvent(new MouseEvent(type, { bubbles: true, clientX: m.a * x + m.e,
		    clientY: r.top + r.height / 2 }));
	}
	function naps(l) {
		return all('#lanes rect.st[data-lane="' + l + '"][data-state="1"]').filter(function (r) {
			return r.getAttribute('data-t1') - r.getAttribute('data-t0') > 40000;
		});
	}
	try {
		out.push('errors=' + errs.length + ' ' + errs.join('|'));
		out.push('labels=' + texts('#lanes text.lbl'));
		out.push('legend=' + texts('#legend text'));
		out.push('ticks=' + texts('#axis text'));
		var s = lane('thread 3 (sleeper)'), n = naps(s);
		out.push('naps=' + n.length);
		out.push('napms=' + n.map(function (r) { return Math.round((r.getAttribute('data-t1') - r.getAttribute('data-t0')) / 1000); }).join(','));
		var x = +n[0].getAttribute('x') + n[0].getAttribute('width') / 2;
		fire(n[0], 'mousemove', x);
		out.push('hover=' + texts('#details text'));
		fire(all('#lanes text.lbl')[s], 'mousemove', 20);
		out.push('label=' + texts('#details text'));
		var mk = all('#lanes rect.mk');
		out.push('marks=' + mk.length + ' ' + texts('#lanes text.mkt'));
		fire(mk[0], 'mousemove', +mk[0].getAttribute('x') + 1);
		out.push('markhover=' + texts('#details text'));
		var t0 = +n[0].getAttribute('data-t0'), t1 = +n[0].getAttribute('data-t1');
		n[0].dispatchEvent(new MouseEvent('click', { bubbles: true }));
		out.push('zoom=' + (Math.abs(v0 - (t0 - (t1 - t0) * 0.05)) < 1 && Math.abs(v1 - (t1 + (t1 - t0) * 0.05)) < 1));
		out.push('unzoom=' + document.getElementById('unzoom').getAttribute('class'));
		out.push('zoomticks=' + texts('#axis text'));
		var z = naps(s)[0];
		out.push('zoomwidth=' + Math.round(z.getAttribute('width')) + ' of ' + (X1 - X0));
		document.getElementById('unzoom').dispatchEvent(new MouseEvent('click', { bubbles: true }));
		out.push('reset=' + (v0 === tl.start && v1 === tl.end) + ' ' + document.getElementById('unzoom').getAttribute('class'));
		var bar = all('#lanes rect[data-lane="' + s + '"]')[0];
		fire(bar, 'mousedown', X0 + 100);
		fire(bar, 'mousemove', X0 + 300);
		out.push('sel=' + Math.round(document.getElementById('sel').getAttribute('width')));
		fire(bar, 'mouseup', X0 + 300);
		bar.dispatchEvent(new MouseEvent('click', { bubbles: true }));
		var want = (tl.end - tl.start) * 200 / (X1 - X0);
		out.push('drag=' + (Math.abs((v1 - v0) - want) < want / 100));
		document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
		out.push('escape=' + (v0 === tl.start && v1 === tl.end));
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

cat >bigcheck.js <<'JS'
(function () {
	var out = [];
	try {
		out.push('errors=' + errs.length + ' ' + errs.join('|'));
		zoomTo(1e6, 2e6);
		out.push('zoomed=' + document.querySelectorAll('#lanes rect.st').length);
		unzoom();
		out.push('full=' + document.querySelectorAll('#lanes rect.st').length);
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

cat >rcheck.js <<'JS'
(function () {
	var out = [];
	function lane(name) {
		for (var i = 0; i < tl.lanes.length; i++) if (tl.lanes[i].name === name) return i;
		return -1;
	}
	function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
	function texts(sel) { return all(sel).map(function (t) { return t.textContent; }).join('|'); }
	/* Type TERM into the search box; the note and each lane's matched rects. */
	function type(term) {
		var t = document.getElementById('term'), n = [];
		t.value = term;
		t.dispatchEvent(new Event('input', { bubbles: true }));
		for (var l = 0; l < tl.lanes.length; l++)
			n.push(all('#lanes rect.st[data-match][data-lane="' + l + '"]').length);
		return document.getElementById('matched').textContent + ' ' + n.join(',');
	}
	try {
		out.push('errors=' + errs.length + ' ' + errs.join('|'));
		var c = lane('thread 2 (cpu)'), ys = {}, bot = 0;
		all('#lanes rect.mk[data-lane="' + c + '"]').forEach(function (r) {
			ys[r.getAttribute('y')] = 1;
			bot = Math.max(bot, +r.getAttribute('y') + +r.getAttribute('height'));
		});
		out.push('rows=' + Object.keys(ys).length + ' laneh=' + (laneY[c + 1] - laneY[c]) +
		    ' fits=' + (bot <= laneY[c + 1] + 2));
		out.push('marktexts=' + texts('#lanes text.mkt'));
		out.push('nap=' + type('nap'));
		out.push('all=' + type('burn|read|sleep'));
		var s = lane('thread 3 (sleeper)'), r = all('#lanes rect.st[data-match][data-lane="' + s + '"]')[0];
		zoomTo(+r.getAttribute('data-t0') - 1000, +r.getAttribute('data-t1') + 1000);
		out.push('zoomed=' + all('#lanes rect.st[data-match]').length + ' ' +
		    document.getElementById('unzoom').getAttribute('class'));
		unzoom();
		out.push('cleared=' + type(''));
		out.push('badregex=' + type('(').replace(/ [0-9,]*$/, ''));
		out.push('none=' + type('no such frame at all').replace(/ [0-9,]*$/, ' ' +
		    all('#lanes rect.st[data-match]').length));
		out.push('end');
	} catch (e) {
		out.push('exception=' + e);
	}
	var pre = document.createElement('pre');
	pre.id = 'result';
	pre.textContent = out.join('\n');
	document.body.appendChild(pre);
})();
JS

# A run with process events and a timeline that fills up, for both views.
cat >events.rb <<'RUBY'
x = 0
100_000.times { x += 1 }
pid = fork { sleep 0.01 }
Process.wait(pid)
Rperf.snapshot
sleep 0.05
exec "true"
RUBY
"$RPERF" record -q -m wall --timeline --timeline-max 100 -o ev.pb.gz events.rb
"$RPERF" report --timeline -o ev.svg ev.pb.gz

cat >evcheck.js <<'JS'
(function () {
	var out = [];
	function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
	try {
		out.push('errors=' + errs.length + ' ' + errs.join('|'));
		out.push('events=' + all('#lanes text.mkt').map(function (t) { return t.textContent; }).join('|'));
		var mk = all('#lanes rect.mk'), m = mk[mk.length - 1];
		var c = m.ownerSVGElement.getScreenCTM(), r = m.getBoundingClientRect();
		m.dispatchEvent(new MouseEvent('mousemove', { bubbles: true,
		    clientX: c.a * (+m.getAttribute('x') + 0.3) + c.e, clientY: r.top + r.height / 2 }));
		out.push('hover=' + all('#details text').map(function (t) { return t.textContent; }).join('|'));
		out.push('subtitle=' + document.getElementById('subtitle').textContent);
	} catch (e) {
		out.push('exception=' + e);
	}
	var pre = document.createElement('pre');
	pre.id = 'result';
	pre.textContent = out.join('\n');
	document.body.appendChild(pre);
})();
JS

cat >rshot.js <<'JS'
search('nap|read');
JS

if test -z "$CHROMIUM"; then
	test_skip 'the SVG timeline in a browser' 'no chromium: apt-get install chromium'
else
	# The sleeper allocates (its notes), so a GC may start on it, with
	# the sleeper's own stack: its label then lists GC marking (a CI run
	# here had 328 us of it) after the three states it always has.
	test_expect_success 'the SVG timeline draws, hovers, zooms and resets in Chromium' '
		wrap m.svg m.html &&
		chrome_dom "file://$TRASH/m.html" | results >m.res &&
		cat m.res &&
		test_grep "^errors=0 $" m.res &&
		test_grep "^labels=thread 1\|thread 2 \(cpu\)\|thread 3 \(sleeper\)\|thread 4 \(reader\)\|thread 9$" m.res &&
		test_grep "^legend=running\|GVL blocked\|GVL wait\|GC marking\|GC sweeping\|idle\|mark$" m.res &&
		test_grep "^ticks=[0-9]+ ms(\|[0-9]+ ms){4,}$" m.res &&
		test_grep "^naps=5$" m.res &&
		test_grep "^napms=(4[5-9]|[5-7][0-9]),(4[5-9]|[5-7][0-9]),(4[5-9]|[5-7][0-9]),(4[5-9]|[5-7][0-9]),(4[5-9]|[5-7][0-9])$" m.res &&
		test_grep "^hover=thread 3 \(sleeper\): GVL blocked, [0-9.]+ ms at [0-9.]+ ms - [0-9.]+ ms\|(several spans, mostly GVL blocked: [^|]*\|)?  Kernel#sleep\|  Object#nap\|" m.res &&
		test_grep "^label=thread 3 \(sleeper\)\|  running: [0-9.]+ ms\|  GVL blocked: [0-9.]+ ms\|  GVL wait: [0-9.]+ ms(\|  GC (marking|sweeping): [0-9.]+ [mu]s)*$" m.res &&
		test_grep "^marks=7 request <a&b>\|db\|overlaps\|read 1\|read 2\|read 3\|elsewhere$" m.res &&
		test_grep "^markhover=thread 3 \(sleeper\): mark request <a&b>\|200.00 ms at 400.0 ms - 600.0 ms$" m.res &&
		test_grep "^zoom=true$" m.res &&
		test_grep "^unzoom=btn$" m.res &&
		test_grep "^zoomwidth=(9[0-9][0-9]) of 1020$" m.res &&
		test_grep "^reset=true btn off$" m.res &&
		test_grep "^sel=200$" m.res &&
		test_grep "^drag=true$" m.res &&
		test_grep "^escape=true$" m.res
	'

	test_expect_success 'SVG timeline in Chromium: process events labelled, a full timeline said' '
		wrap ev.svg ev.html evcheck.js &&
		chrome_dom "file://$TRASH/ev.html" | results >ev.res &&
		cat ev.res &&
		test_grep "^errors=0 $" ev.res &&
		test_grep "^events=\[fork\] child [0-9]+\|\[snapshot\]\|\[exec\]$" ev.res &&
		test_grep "^hover=(pid [0-9]+ )?thread 1: \[exec\]\|at [0-9.]+ m?s$" ev.res &&
		test_grep "^subtitle=.*; timeline full \(--timeline-max\): 100 samples kept" ev.res
	'

	test_expect_success 'the timeline of a minute at 1000 Hz renders quickly' '
		wrap big.svg big.html bigcheck.js &&
		chrome_dom "file://$TRASH/big.html" | results >big.res &&
		cat big.res &&
		test_grep "^errors=0 $" big.res &&
		z=$(sed -n "s/^zoomed=//p" big.res) && test "$z" -gt 10 &&
		f=$(sed -n "s/^full=//p" big.res) && test "$f" -gt 100 &&
		ms=$(sed -n "s/^ms=//p" big.res) && test "$ms" -lt 15000
	'

	test_expect_success 'SVG timeline in Chromium: mark rows, search in every lane' '
		wrap r.svg r.html rcheck.js &&
		chrome_dom "file://$TRASH/r.html" | results >r.res &&
		cat r.res &&
		test_grep "^errors=0 $" r.res &&
		test_grep "^rows=6 laneh=118 fits=true$" r.res &&
		test_grep "^marktexts=level 0\|level 1\|level 2\|level 3\|level 4\|level 5\|(straddle|str[a-z]*\.\.)\|(after|af[a-z]*\.\.)\|read 1\|read 2\|read 3$" r.res &&
		test_grep "^nap=Matched: [0-9.]+% 0,0,[1-9][0-9]*,0$" r.res &&
		test_grep "^all=Matched: [0-9.]+% [1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*$" r.res &&
		test_grep "^zoomed=[1-9][0-9]* btn$" r.res &&
		test_grep "^cleared=  0,0,0,0$" r.res &&
		test_grep "^badregex=Matched: [0-9.]+%$" r.res &&
		test_grep "^none=Matched: 0.0% 0$" r.res &&
		python3 -c "
import json, re, sys
tl = json.load(open(sys.argv[1]))
res = open(sys.argv[2]).read()
nodes = tl[\"nodes\"]
def matches(n, rx):
    while n:
        if re.search(rx, tl[\"names\"][nodes[2 * n + 1]]):
            return True
        n = nodes[2 * n]
    return False
for key, rx in ((\"nap\", \"nap\"), (\"all\", \"burn|read|sleep\")):
    got = float(re.search(\"^%s=Matched: ([0-9.]+)%%\" % key, res, re.M).group(1))
    hit = total = 0
    for l in tl[\"lanes\"]:
        p = l[\"p\"]
        for i in range(0, len(p), 5):
            d = sum(l[\"x\"][p[i + 4] - 1]) if p[i + 4] else p[i + 1]
            total += d
            hit += d if matches(p[i + 3], rx) else 0
    want = 100.0 * hit / total
    print(key, got, \"want %.3f\" % want)
    assert abs(got - want) <= 0.051, (key, got, want)
    assert 0 < want < 100
" r.tl.json r.res
	'

	test_expect_success 'a screenshot of the SVG timeline with a search and mark rows' '
		h=$(sed -n "2s/.* height=\"\([0-9]*\)\".*/\1/p" r.svg) &&
		wrap r.svg rshot.html rshot.js &&
		chrome_shot "file://$TRASH/rshot.html" r.png 1200 "$h" &&
		python3 pngcolors.py r.png 170 90 1190 $((h - 200)) >r.colors &&
		cat r.colors &&
		for c in 230,0,230 250,214,110 232,128,60 140,150,180; do
			grep -q "^$c " r.colors || { echo "no $c" >&2; false; } || return 1
		done
	'

	test_expect_success 'a screenshot of the SVG timeline shows the states' '
		h=$(sed -n "2s/.* height=\"\([0-9]*\)\".*/\1/p" m.svg) &&
		chrome_shot "file://$TRASH/m.svg" m.png 1200 "$h" &&
		python3 pngcolors.py m.png 170 90 1190 200 >m.colors &&
		cat m.colors &&
		test "$(head -n 1 m.colors)" -gt 8 &&
		for c in 232,128,60 140,150,180 180,140,215 232,230,222 250,214,110; do
			grep -q "^$c " m.colors || { echo "no $c" >&2; false; } || return 1
		done
	'
fi

# --- speedscope itself, in a browser ---

# speedscope's static page, from the npm registry only, kept in the build
# tree (tests/speedscope) so that a second run needs no network.
SPEEDSCOPE_VERSION=${RPERF_SPEEDSCOPE_VERSION:-1.25.0}
speedscope_page() {
	_cache=$TEST_BUILDDIR/speedscope
	_tgz=$_cache/speedscope-$SPEEDSCOPE_VERSION.tgz
	if ! test -s "$_tgz"; then
		command -v npm >/dev/null 2>&1 || return 1
		mkdir -p "$_cache" &&
		(cd "$_cache" && timeout 300 npm pack --silent \
			"speedscope@$SPEEDSCOPE_VERSION" >/dev/null 2>"$TRASH/npm.err") ||
			return 1
		test -s "$_tgz" || return 1
	fi
	mkdir -p www pkg &&
	tar xzf "$_tgz" -C pkg &&
	cp -R pkg/package/dist/release/. www/ &&
	test -f www/index.html
}

# Serve www/ on 127.0.0.1 (a free port, in $PORT); the server is stopped
# by its pid at the end.
serve() {
	(cd www && exec python3 -u -m http.server 0 --bind 127.0.0.1) \
		>http.log 2>&1 &
	HTTP_PID=$!
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		PORT=$(sed -n "s/^Serving HTTP on 127.0.0.1 port \([0-9]*\).*/\1/p" http.log)
		test -n "$PORT" && return 0
		sleep 0.5
	done
	return 1
}
stop_serving() {
	test -n "$HTTP_PID" && kill "$HTTP_PID" 2>/dev/null
	HTTP_PID=
}

if test -z "$CHROMIUM"; then
	test_skip 'speedscope in a browser' 'no chromium: apt-get install chromium'
elif ! speedscope_page; then
	test_skip 'speedscope in a browser' "speedscope $SPEEDSCOPE_VERSION not available from the npm registry"
elif ! serve; then
	test_fail 'python3 -m http.server did not start'
else
	# speedscope as it is, with a first script that notes what would
	# otherwise be lost in a headless run: script errors, console
	# errors and alerts (an import that fails alerts).
	sed 's|<head>|<head><script>var rperfErrs = []; window.onerror = function (m) { rperfErrs.push(String(m)); }; window.alert = function (m) { rperfErrs.push("alert: " + m); }; var rperfCE = console.error; console.error = function () { rperfErrs.push("console: " + Array.prototype.join.call(arguments, " ")); rperfCE.apply(console, arguments); }; setTimeout(function () { var p = document.createElement("pre"); p.id = "rperf-errors"; p.textContent = "errors=" + rperfErrs.length + " " + rperfErrs.join("\|"); document.documentElement.appendChild(p); }, 5000);</script>|' \
		www/index.html >www/check.html
	"$RPERF" report --tagfocus thread_name=nobody -o www/empty.speedscope.json m.pb.gz
	cp t.speedscope.json m.speedscope.json www/
	"$RPERF" report -o www/ev.speedscope.json ev.pb.gz
	echo '{"not": "a profile"}' >www/bad.json

	test_expect_success 'speedscope renders every thread of the file' '
		chrome_dom "http://127.0.0.1:$PORT/check.html#profileURL=http://127.0.0.1:$PORT/t.speedscope.json" >ss.dom &&
		grep -o "errors=[^<]*" ss.dom >ss.errors &&
		cat ss.errors &&
		test_grep "^errors=0 $" ss.errors &&
		grep -q "thread 1 <span[^>]*>(1/5)</span>" ss.dom &&
		for t in "thread 1" "thread 2 (cpu)" "thread 3 (sleeper)" "thread 4 (reader)" "marks: thread 4 (reader)"; do
			grep -F -q "title=\"$t\"" ss.dom || { echo "no $t" >&2; false; } || return 1
		done &&
		! grep -q -i "something went wrong\|unrecognized format" ss.dom
	'

	test_expect_success 'speedscope renders the marks and escaped names' '
		chrome_dom "http://127.0.0.1:$PORT/check.html#profileURL=http://127.0.0.1:$PORT/m.speedscope.json" >m.dom &&
		grep -o "errors=[^<]*" m.dom >m.errors &&
		test_grep "^errors=0 $" m.errors &&
		grep -q "(1/7)</span>" m.dom &&
		grep -F -q "title=\"marks: thread 3 (sleeper)\"" m.dom &&
		grep -F -q "title=\"marks: thread 9\"" m.dom
	'

	test_expect_success 'speedscope opens process events and a full timeline, and says it is full' '
		chrome_dom "http://127.0.0.1:$PORT/check.html#profileURL=http://127.0.0.1:$PORT/ev.speedscope.json" >ev.dom &&
		grep -o "errors=[^<]*" ev.dom >ev.errors &&
		cat ev.errors &&
		test_grep "^errors=0 $" ev.errors &&
		grep -E -q "title=\"marks: (pid [0-9]+ )?thread 1\"" ev.dom &&
		grep -q "timeline full, --timeline-max: 100 samples kept" ev.dom
	'

	test_expect_success 'no samples left: one empty profile, which speedscope opens' '
		chrome_dom "http://127.0.0.1:$PORT/check.html#profileURL=http://127.0.0.1:$PORT/empty.speedscope.json" >empty.dom &&
		grep -o "errors=[^<]*" empty.dom >empty.errors &&
		test_grep "^errors=0 $" empty.errors &&
		grep -q ">no samples<" empty.dom
	'

	test_expect_success 'a file speedscope cannot read is noticed (the check works)' '
		chrome_dom "http://127.0.0.1:$PORT/check.html#profileURL=http://127.0.0.1:$PORT/bad.json" >bad.dom &&
		grep -o "errors=[^<]*" bad.dom >bad.errors &&
		cat bad.errors &&
		! grep -q "^errors=0 $" bad.errors
	'

	test_expect_success 'a screenshot of speedscope is not blank' '
		chrome_shot "http://127.0.0.1:$PORT/index.html#profileURL=http://127.0.0.1:$PORT/t.speedscope.json" ss.png 1400 800 &&
		python3 pngcolors.py ss.png >ss.colors &&
		head -n 1 ss.colors &&
		test "$(head -n 1 ss.colors)" -gt 20
	'
	stop_serving
fi

test_done
