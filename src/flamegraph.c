/*
 * flamegraph.c: the SVG flame graph writer (see flamegraph.h).
 *
 * The stacks are merged into a call tree (report.c), cut to the frames at
 * least a tenth of a pixel wide, and written as compact JSON data (names
 * once, then name, depth and value per frame in preorder) which a small
 * inline script lays out and draws; only frames wide enough to see are
 * turned into SVG elements, so a profile with 100k unique stacks opens
 * quickly.  Every name goes through the JSON escaper (json.c, with
 * JSON_XML_SAFE), which also keeps the script's CDATA section and the XML well-formed (no "<", ">", "&",
 * invalid UTF-8 or control characters survive literally), and the script
 * only ever sets names as text, never as markup.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "numfmt.h"
#include "json.h"
#include "report.h"
#include "xmalloc.h"

/* Layout: frame height and the margins above and below the frames. */
#define FLAMEGRAPH_FRAME_HEIGHT 16
#define FLAMEGRAPH_TOP 76
#define FLAMEGRAPH_BOTTOM 30

/* The stylesheet. */
static const char flamegraph_css[] =
    "text { font-family: Verdana, Helvetica, sans-serif; font-size: 12px; fill: #000; }\n"
    "#title { font-size: 17px; text-anchor: middle; }\n"
    "#subtitle { text-anchor: middle; fill: #555; }\n"
    ".f { cursor: pointer; }\n"
    ".f text { font-size: 11px; pointer-events: none; }\n"
    ".f:hover rect { stroke: #000; stroke-width: 0.6; }\n"
    ".faded rect { opacity: 0.55; }\n"
    ".btn { cursor: pointer; fill: #00c; }\n"
    ".btn.off { opacity: 0; pointer-events: none; }\n"
    "#matched { text-anchor: end; }\n"
    "input { font: 12px Verdana, Helvetica, sans-serif; width: 100%; box-sizing: border-box; }\n";

/* The script that lays out and draws the frames from the data. */
static const char flamegraph_js[] =
    "var SVGNS = 'http://www.w3.org/2000/svg';\n"
    "var FH = 16, PAD = 10;\n"
    "var N = 0, nm, dp, val, bas, xs, par, hit = null;\n"
    "var zoomed = 0, maxDelta = 0, matchPct = 0;\n"
    "var nameHit = null;\n"
    "\n"
    "function fgInit() {\n"
    "	var a = fg.nodes, st = fg.diff ? 4 : 3, nx = [0], ps = [], i, d;\n"
    "	N = a.length / st;\n"
    "	nm = new Int32Array(N); dp = new Int32Array(N); par = new Int32Array(N);\n"
    "	val = new Float64Array(N); bas = new Float64Array(N); xs = new Float64Array(N);\n"
    "	for (i = 0; i < N; i++) {\n"
    "		nm[i] = a[i * st]; d = dp[i] = a[i * st + 1]; val[i] = a[i * st + 2];\n"
    "		if (fg.diff) {\n"
    "			bas[i] = a[i * st + 3];\n"
    "			if (i > 0) maxDelta = Math.max(maxDelta, Math.abs(val[i] - bas[i]));\n"
    "		}\n"
    "		xs[i] = nx[d] || 0;\n"
    "		nx[d] = xs[i] + val[i];\n"
    "		nx[d + 1] = xs[i];\n"
    "		ps[d] = i;\n"
    "		par[i] = d > 0 ? ps[d - 1] : -1;\n"
    "	}\n"
    "	var g = document.getElementById('frames');\n"
    "	g.addEventListener('click', function (e) {\n"
    "		var f = frameOf(e.target);\n"
    "		if (f >= 0) zoom(f);\n"
    "	});\n"
    "	g.addEventListener('mouseover', function (e) {\n"
    "		var f = frameOf(e.target);\n"
    "		if (f >= 0) details(describe(f));\n"
    "	});\n"
    "	g.addEventListener('mouseout', function () { details(' '); });\n"
    "	document.getElementById('unzoom').addEventListener('click', function () { zoom(0); });\n"
    "	var t = document.getElementById('term');\n"
    "	if (t) t.addEventListener('input', function () { search(t.value); });\n"
    "	document.addEventListener('keydown', function (e) {\n"
    "		if (e.key === 'Escape') zoom(0);\n"
    "	});\n"
    "	render();\n"
    "}\n"
    "\n"
    "function frameOf(el) {\n"
    "	while (el && el.getAttribute) {\n"
    "		var v = el.getAttribute('data-i');\n"
    "		if (v !== null) return +v;\n"
    "		el = el.parentNode;\n"
    "	}\n"
    "	return -1;\n"
    "}\n"
    "\n"
    "function details(s) {\n"
    "	document.getElementById('details').textContent = s;\n"
    "}\n"
    "\n"
    "function fmt(v) {\n"
    "	if (fg.ms) return (v / 1e6).toFixed(2) + ' ms';\n"
    "	return Math.round(v) + (fg.unit ? ' ' + fg.unit : ' samples');\n"
    "}\n"
    "\n"
    "function pct(v, t) {\n"
    "	return t ? (100 * v / t).toFixed(2) + '%' : '-';\n"
    "}\n"
    "\n"
    "function describe(i) {\n"
    "	var s = fg.names[nm[i]] + ' (' + fmt(val[i]) + ', ' + pct(val[i], val[0]) + ')';\n"
    "	if (fg.diff) {\n"
    "		var d = val[i] - bas[i];\n"
    "		s += ' base ' + fmt(bas[i]) + ', ' + (d >= 0 ? '+' : '-') + fmt(Math.abs(d));\n"
    "		s += bas[i] ? ' (' + (d >= 0 ? '+' : '') + (100 * d / bas[i]).toFixed(1) + '%)' : ' (new)';\n"
    "	}\n"
    "	return s;\n"
    "}\n"
    "\n"
    "function hash(s) {\n"
    "	var h = 2166136261, i;\n"
    "	for (i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);\n"
    "	return (h >>> 0) / 4294967296;\n"
    "}\n"
    "\n"
    "var STATE_COLORS = ['rgb(140,150,180)', 'rgb(180,140,215)', 'rgb(95,180,95)', 'rgb(70,165,165)'];\n"
    "\n"
    "function color(i) {\n"
    "	var n = nm[i];\n"
    "	if (hit && hit[i]) return 'rgb(230,0,230)';\n"
    "	if (fg.diff) {\n"
    "		var d = val[i] - bas[i], r = maxDelta ? Math.min(1, Math.abs(d) / maxDelta) : 0;\n"
    "		var c = Math.round(245 - 200 * r);\n"
    "		if (d > 0) return 'rgb(255,' + c + ',' + c + ')';\n"
    "		if (d < 0) return 'rgb(' + c + ',' + c + ',255)';\n"
    "		return 'rgb(245,245,245)';\n"
    "	}\n"
    "	if (n < 4) return STATE_COLORS[n];\n"
    "	var h = hash(fg.names[n]), h2 = hash(fg.names[n] + '.');\n"
    "	return 'rgb(' + Math.round(205 + 50 * h2) + ',' + Math.round(230 * h) + ',' + Math.round(55 * h2) + ')';\n"
    "}\n"
    "\n"
    "function fit(s, w) {\n"
    "	var k = Math.floor((w - 6) / 7);\n"
    "	if (s.length <= k) return s;\n"
    "	return k > 2 ? s.slice(0, k - 2) + '..' : '';\n"
    "}\n"
    "\n"
    "function frame(i, x, w, faded) {\n"
    "	var g = document.createElementNS(SVGNS, 'g'), r = document.createElementNS(SVGNS, 'rect');\n"
    "	var y = fg.height - fg.bottom - (dp[i] + 1) * FH;\n"
    "	g.setAttribute('class', faded ? 'f faded' : 'f');\n"
    "	g.setAttribute('data-i', i);\n"
    "	r.setAttribute('x', x.toFixed(2));\n"
    "	r.setAttribute('y', y);\n"
    "	r.setAttribute('width', w.toFixed(2));\n"
    "	r.setAttribute('height', FH - 1);\n"
    "	r.setAttribute('rx', 2);\n"
    "	r.setAttribute('fill', color(i));\n"
    "	g.appendChild(r);\n"
    "	if (w > 21) {\n"
    "		var t = document.createElementNS(SVGNS, 'text');\n"
    "		t.setAttribute('x', (x + 3).toFixed(2));\n"
    "		t.setAttribute('y', y + 11.5);\n"
    "		t.textContent = fit(fg.names[nm[i]], w);\n"
    "		g.appendChild(t);\n"
    "	}\n"
    "	return g;\n"
    "}\n"
    "\n"
    "function render() {\n"
    "	var g = document.getElementById('frames'), z = zoomed, zx = xs[z], zw = val[z] || 1;\n"
    "	var usable = fg.width - 2 * PAD, sc = usable / zw, anc = {}, frag = document.createDocumentFragment();\n"
    "	var i, x, w;\n"
    "	for (i = z; i >= 0; i = par[i]) anc[i] = 1;\n"
    "	for (i = 0; i < N; i++) {\n"
    "		if (dp[i] <= dp[z]) {\n"
    "			if (!anc[i]) continue;\n"
    "			x = 0; w = usable;\n"
    "		} else {\n"
    "			if (xs[i] < zx || xs[i] >= zx + zw) continue;\n"
    "			w = val[i] * sc;\n"
    "			if (w < 0.3) continue;\n"
    "			x = (xs[i] - zx) * sc;\n"
    "		}\n"
    "		frag.appendChild(frame(i, PAD + x, w, anc[i] && i !== z));\n"
    "	}\n"
    "	g.textContent = '';\n"
    "	g.appendChild(frag);\n"
    "	document.getElementById('unzoom').setAttribute('class', z ? 'btn' : 'btn off');\n"
    "}\n"
    "\n"
    "function zoom(i) {\n"
    "	zoomed = i >= 0 && i < N ? i : 0;\n"
    "	render();\n"
    "}\n"
    "\n"
    "function search(term) {\n"
    "	var m = document.getElementById('matched'), re = null, i, cover = -1, sum = 0;\n"
    "	if (!term) {\n"
    "		hit = null; matchPct = 0; m.textContent = ' ';\n"
    "		render();\n"
    "		return 0;\n"
    "	}\n"
    "	try { re = new RegExp(term); } catch (e) { re = null; }\n"
    "	var memo = {};\n"
    "	hit = new Uint8Array(N);\n"
    "	for (i = 0; i < N; i++) {\n"
    "		var n = nm[i];\n"
    "		if (!(n in memo)) {\n"
    "			var s = fg.names[n];\n"
    "			memo[n] = re ? re.test(s) : s.indexOf(term) >= 0;\n"
    "		}\n"
    "		if (cover >= 0 && dp[i] <= cover) cover = -1;\n"
    "		if (memo[n]) {\n"
    "			hit[i] = 1;\n"
    "			if (cover < 0 && i > 0) { sum += val[i]; cover = dp[i]; }\n"
    "		}\n"
    "	}\n"
    "	matchPct = val[0] ? 100 * sum / val[0] : 0;\n"
    "	m.textContent = 'Matched: ' + matchPct.toFixed(1) + '%';\n"
    "	render();\n"
    "	return matchPct;\n"
    "}\n"
    "\n"
    "fgInit();\n";

/* Write S as XML character data (for the title lines). */
static void
flamegraph_xml_str(FILE *fp, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u != '\0'; u++) {
		switch (*u) {
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '&':
			fputs("&amp;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		default:
			/* Control characters are not allowed in XML 1.0;
			 * bytes over 0x7f are checked by the JSON path only,
			 * so keep plain ASCII here. */
			fputc(*u < 0x20 || *u >= 0x7f ? '?' : *u, fp);
		}
	}
}

void
flamegraph_opts_init(struct flamegraph_opts *o)
{
	memset(o, 0, sizeof *o);
	o->value_index = (size_t)-1;
	o->base_value_index = (size_t)-1;
	o->base_scale = 1.0;
	o->width = FLAMEGRAPH_DEFAULT_WIDTH;
}

/* Write the frames of T worth at least CUT as JSON, preorder; the deepest
 * depth written goes to *MAXDEPTH. */
static void
flamegraph_nodes(FILE *fp, const struct report_tree *t, int64_t cut,
    int diff, uint32_t *out_name, uint32_t *maxdepth)
{
	uint32_t c = 0;
	size_t written = 0;

	*maxdepth = 0;
	fputs("[", fp);
	while (1) {
		const struct report_node *n = &t->nodes[c];
		int shown = c == 0 || n->value >= cut;

		if (shown) {
			/* A line break now and then keeps lines short. */
			fprintf(fp, "%s%" PRIu32 ",%" PRIu32 ",%" PRId64,
			    written == 0 ? "" : written % 16 == 0 ? ",\n" :
			    ",", out_name[n->name], n->depth, n->value);
			if (diff)
				fprintf(fp, ",%" PRId64, n->base);
			written++;
			if (n->depth > *maxdepth)
				*maxdepth = n->depth;
			if (n->child != 0) {
				c = n->child;
				continue;
			}
		}
		while (c != 0 && t->nodes[c].next == 0)
			c = t->nodes[c].parent;
		if (c == 0)
			break;
		c = t->nodes[c].next;
	}
	fputs("]", fp);
}

/* Map the names of the frames worth at least CUT to output indexes,
 * states and the root first; writes the JSON array of names. */
static uint32_t *
flamegraph_names(FILE *fp, const struct report_tree *t, int64_t cut)
{
	size_t nnames = t->names->nstrings, i;
	uint32_t *out = xcalloc(nnames, sizeof *out), next = 0;
	int first = 1;

	fputs("[", fp);
	/* Ids 1 to 4 are the states, the root's name is next. */
	for (i = 1; i <= REPORT_NKINDS - 1; i++) {
		out[i] = next++;
		fputs(first ? "" : ",", fp);
		json_write_string(fp, profile_str(t->names, (str_id)i),
		    JSON_XML_SAFE);
		first = 0;
	}
	out[t->nodes[0].name] = next++;
	fputc(',', fp);
	json_write_string(fp, report_tree_name(t, &t->nodes[0]),
	    JSON_XML_SAFE);
	for (i = 1; i < t->nnodes; i++) {
		const struct report_node *n = &t->nodes[i];

		if (n->value < cut || out[n->name] != 0 ||
		    report_tree_kind(n->name) != REPORT_KIND_FRAME ||
		    n->name == t->nodes[0].name)
			continue;
		out[n->name] = next++;
		fputs(",\n", fp);
		json_write_string(fp, report_tree_name(t, n),
		    JSON_XML_SAFE);
	}
	fputs("]", fp);
	return out;
}

int
flamegraph_write(const struct profile *p, FILE *fp,
    const struct flamegraph_opts *o)
{
	struct flamegraph_opts defaults;
	struct report_tree *t;
	struct numfmt_unit u;
	uint32_t *out_name, maxdepth;
	const char *title;
	size_t vi;
	int64_t total, cut;
	int width, height, diff;
	char buf[64];

	if (o == NULL) {
		flamegraph_opts_init(&defaults);
		o = &defaults;
	}
	width = o->width > 100 ? o->width : FLAMEGRAPH_DEFAULT_WIDTH;
	diff = o->base != NULL;
	vi = profile_value_index(p, o->value_index);
	numfmt_unit_init(&u, p, vi);
	t = report_tree_new();
	if (report_tree_add(t, p, vi, 0, 1.0) != 0 || (diff &&
	    report_tree_add(t, o->base, profile_value_index(o->base,
	    o->base_value_index), 1, o->base_scale) != 0)) {
		report_tree_free(t);
		return -1;	/* errno is EFBIG */
	}
	report_tree_sort(t, 0);
	total = t->nodes[0].value;
	/* A tenth of a pixel at the full view, over the usable width. */
	cut = total / ((int64_t)(width - 20) * 10);
	if (cut < 1)
		cut = 1;
	title = o->title ? o->title : diff ? "Differential Flame Graph" :
	    "Flame Graph";

	/* The height depends on the depth written, known only after the
	 * data; the data goes first into memory, so measure it there. */
	{
		char *data = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&data, &len);

		if (mem == NULL) {
			report_tree_free(t);
			return -1;
		}
		fprintf(mem, "var fg = {\"width\":%d,\"bottom\":%d,\"ms\":%d,"
		    "\"unit\":", width, FLAMEGRAPH_BOTTOM, u.ms);
		json_write_string(mem, u.suffix, JSON_XML_SAFE);
		fprintf(mem, ",\"diff\":%d,\n\"names\":", diff);
		out_name = flamegraph_names(mem, t, cut);
		fputs(",\n\"nodes\":", mem);
		flamegraph_nodes(mem, t, cut, diff, out_name, &maxdepth);
		free(out_name);
		height = FLAMEGRAPH_TOP + (int)(maxdepth + 1) *
		    FLAMEGRAPH_FRAME_HEIGHT + FLAMEGRAPH_BOTTOM;
		fprintf(mem, ",\n\"height\":%d};\n", height);
		if (fclose(mem) != 0) {
			free(data);
			report_tree_free(t);
			return -1;
		}

		fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\" "
		    "standalone=\"no\"?>\n");
		fprintf(fp, "<svg version=\"1.1\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n",
		    width, height, width, height);
		fprintf(fp, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n",
		    flamegraph_css);
		fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"100%%\" "
		    "height=\"100%%\" fill=\"%s\"/>\n", diff ? "#fafafa" :
		    "#f8f4ec");
		fprintf(fp, "<text id=\"title\" x=\"%d\" y=\"24\">", width / 2);
		flamegraph_xml_str(fp, title);
		fprintf(fp, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"42\">",
		    width / 2);
		fprintf(fp, "Total %s%s%s", numfmt_value(buf, sizeof buf,
		    &u, total), *u.suffix ? " " : "", u.suffix);
		if (diff)
			fputs("; red: grew since the base, blue: shrank", fp);
		if (o->subtitle != NULL && *o->subtitle != '\0') {
			fputs("; ", fp);
			flamegraph_xml_str(fp, o->subtitle);
		}
		fputs("</text>\n", fp);
		fprintf(fp, "<text id=\"unzoom\" class=\"btn off\" x=\"10\" "
		    "y=\"64\">Reset Zoom</text>\n");
		fprintf(fp, "<text id=\"matched\" x=\"%d\" y=\"64\"> </text>\n",
		    width - 240);
		fprintf(fp, "<foreignObject x=\"%d\" y=\"50\" width=\"220\" "
		    "height=\"22\"><input xmlns=\"http://www.w3.org/1999/xhtml\" "
		    "id=\"term\" type=\"search\" placeholder=\"search (regex)\"/>"
		    "</foreignObject>\n", width - 230);
		fprintf(fp, "<g id=\"frames\"></g>\n");
		fprintf(fp, "<text id=\"details\" x=\"10\" y=\"%d\"> </text>\n",
		    height - 10);
		fprintf(fp, "<script type=\"text/ecmascript\"><![CDATA[\n");
		fwrite(data, 1, len, fp);
		fputs(flamegraph_js, fp);
		fputs("]]></script>\n</svg>\n", fp);
		free(data);
	}
	report_tree_free(t);
	if (fflush(fp) != 0 || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
