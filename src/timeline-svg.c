/*
 * timeline-svg.c: the SVG timeline writer (see timeline-svg.h).
 *
 * The threads' spans (timeline.c) are merged into pieces of at least a
 * tenth of a pixel at the full view and written as compact JSON data: the
 * frame names once, the stacks once as a tree of nodes (a frame under its
 * caller), then per thread its pieces as (start, length, state, stack,
 * mix) in microseconds and its marks; the inline script (timeline-svg-script.c)
 * lays out and draws only what the current view needs, merging again at
 * the pixel.  Every string goes through the JSON escaper with
 * JSON_XML_SAFE, which keeps the script's CDATA section and the XML
 * well-formed, and the script sets names only as text.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "json.h"
#include "numfmt.h"
#include "timeline-svg.h"
#include "timeline.h"
#include "xmalloc.h"

/* Layout: the margins above the lanes, the label column, a lane's and a
 * mark row's height, the legend and details area below. */
#define TSVG_TOP 96
#define TSVG_LABEL 170
#define TSVG_LANE 22
#define TSVG_MARK_ROW 16
/* Overlapping marks stack into as many rows as they need, up to this
 * many (beyond, the last row takes the rest): a lane stays on screen
 * whatever a program marks. */
#define TSVG_MARK_ROWS_MAX 64
#define TSVG_BOTTOM (34 + 14 * (TIMELINE_SVG_STACK_FRAMES + 3))

extern const char timeline_svg_css[], timeline_svg_js[];

/* The names and stacks written once for the whole file.  The stacks are
 * a tree: a node is a frame's name under its caller's node (node 0, the
 * root, has none), so that a stack is one node, its leaf, and stacks
 * that share callers share their nodes.  The script walks a stack up
 * from its leaf for the hover, and the search tests each node's name
 * once and passes a match down to its callees. */
struct tsvg {
	const struct profile *p;
	uint32_t *name_out;	/* profile string id -> name index + 1 */
	const char **names;	/* the names written, in order */
	char **owned;		/* names made here, to free */
	size_t nnames, nowned;
	uint32_t *parent, *name;	/* node -> its caller's node, its name */
	size_t nnodes, cap;
	size_t *slot;		/* hash of (parent, name): node + 1, 0 free */
	size_t nslots;
};

/* The name index of function FN of P (0: none), added when new. */
static uint32_t
tsvg_name(struct tsvg *w, uint64_t fn)
{
	const struct profile *p = w->p;
	str_id id = fn != 0 && fn <= p->nfunctions ? p->functions[fn - 1].name : 0;
	char buf[FRAMES_NAME_MAX];
	const char *name;

	if (w->name_out[id] != 0)
		return w->name_out[id] - 1;
	/* A real frame must not pass for a VM state (frames.h). */
	name = frames_name(profile_str(p, id), buf);
	if (name == buf) {
		char *alt = xstrdup(buf);

		w->owned = xrealloc(w->owned, (w->nowned + 1) * sizeof *w->owned);
		w->owned[w->nowned++] = alt;
		name = alt;
	}
	w->names = xrealloc(w->names, (w->nnames + 1) * sizeof *w->names);
	w->names[w->nnames++] = name;
	w->name_out[id] = (uint32_t)w->nnames;
	return (uint32_t)w->nnames - 1;
}

/* The hash of node (PARENT, NAME). */
static size_t
tsvg_hash(uint32_t parent, uint32_t name)
{
	return (size_t)profile_mix(((uint64_t)parent << 32) | name);
}

/* Double the nodes' hash table. */
static void
tsvg_rehash(struct tsvg *w)
{
	size_t i, n = w->nslots ? w->nslots * 2 : 1024;

	free(w->slot);
	w->slot = xcalloc(n, sizeof *w->slot);
	w->nslots = n;
	for (i = 1; i < w->nnodes; i++) {
		size_t h = tsvg_hash(w->parent[i], w->name[i]) & (n - 1);

		while (w->slot[h] != 0)
			h = (h + 1) & (n - 1);
		w->slot[h] = i + 1;
	}
}

/* The node of NAME called from node PARENT, added when new. */
static uint32_t
tsvg_node(struct tsvg *w, uint32_t parent, uint32_t name)
{
	size_t h, k;

	if (2 * (w->nnodes + 1) > w->nslots)
		tsvg_rehash(w);
	h = tsvg_hash(parent, name) & (w->nslots - 1);
	for (; (k = w->slot[h]) != 0; h = (h + 1) & (w->nslots - 1)) {
		if (w->parent[k - 1] == parent && w->name[k - 1] == name)
			return (uint32_t)k - 1;
	}
	if (w->nnodes == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->parent = xrealloc(w->parent, w->cap * sizeof *w->parent);
		w->name = xrealloc(w->name, w->cap * sizeof *w->name);
	}
	w->parent[w->nnodes] = parent;
	w->name[w->nnodes] = name;
	w->slot[h] = ++w->nnodes;
	return (uint32_t)w->nnodes - 1;
}

/* The leaf node of sample S's stack (0, the root, for an empty one). */
static uint32_t
tsvg_stack(struct tsvg *w, const struct profile_sample *s)
{
	const uint64_t *locs = profile_sample_locs(w->p, s);
	uint32_t node = 0, j;

	for (j = s->nloc; j-- > 0; )
		node = tsvg_node(w, node, tsvg_name(w,
		    profile_location_function_id(w->p, locs[j])));
	return node;
}

/* Spans merged for the view: where they begin and end, the time of each
 * state in them and the longest span's sample. */
struct tsvg_piece {
	int64_t start, end, dur[TIMELINE_NSTATES], longest;
	size_t sample;
};

/* Microseconds from nanoseconds, rounded. */
static int64_t
tsvg_us(int64_t ns)
{
	return (ns + 500) / 1000;
}

/* Write piece PC (the lane's Nth) to FP; a piece of several states gets
 * its mix, the microseconds of each state, into MIX (NMIX of them). */
static void
tsvg_piece(struct tsvg *w, FILE *fp, const struct tsvg_piece *pc, size_t n,
    int64_t (**mix)[TIMELINE_NSTATES], size_t *nmix)
{
	int state = 0, k, states = 0;

	for (k = 0; k < TIMELINE_NSTATES; k++) {
		states += pc->dur[k] > 0;
		if (pc->dur[k] > pc->dur[state])
			state = k;
	}
	fprintf(fp, "%s%" PRId64 ",%" PRId64 ",%d,%" PRIu32 ",", n == 0 ? "" : n % 8 == 0 ?
	    ",\n" : ",", tsvg_us(pc->start), tsvg_us(pc->end) - tsvg_us(pc->start),
	    state, tsvg_stack(w, &w->p->samples[pc->sample]));
	if (states > 1) {
		*mix = xrealloc(*mix, (*nmix + 1) * sizeof **mix);
		for (k = 0; k < TIMELINE_NSTATES; k++)
			(*mix)[*nmix][k] = tsvg_us(pc->dur[k]);
		fprintf(fp, "%zu", ++*nmix);
	} else {
		fputc('0', fp);
	}
}

/* Write a lane's name: "thread N (name)", "pid P thread N (name)". */
static void
tsvg_lane_name(FILE *fp, int64_t pid, int64_t thread, const char *name)
{
	char *s;

	if (pid != 0)
		s = xasprintf("pid %" PRId64 " thread %" PRId64 "%s%s%s", pid, thread,
		    name ? " (" : "", name ? name : "", name ? ")" : "");
	else
		s = xasprintf("thread %" PRId64 "%s%s%s", thread, name ? " (" : "",
		    name ? name : "", name ? ")" : "");
	fputs("{\"name\":", fp);
	json_write_string(fp, s, JSON_XML_SAFE);
	free(s);
}

/* Write the marks of thread (PID, THREAD) of TL, at least GRAIN long,
 * and its process events (no length, taking GRAIN of their row), each on
 * the first row where it fits (marks come by start, the longer first, so
 * one that holds another is above it); returns how many rows they take. */
static int
tsvg_marks(FILE *fp, const struct timeline *tl, int64_t pid, int64_t thread,
    int64_t grain)
{
	int64_t row_end[TSVG_MARK_ROWS_MAX];
	size_t i, n = 0;
	int rows = 0, r;

	fputs(",\"m\":[", fp);
	for (i = 0; i < tl->nmarks; i++) {
		const struct timeline_mark *m = &tl->marks[i];
		int64_t end = m->end;

		if (m->pid != pid || m->thread != thread)
			continue;
		if (timeline_mark_is_event(m))
			end = m->start + grain;
		else if (m->end - m->start < grain)
			continue;
		for (r = 0; r < rows && row_end[r] > m->start; r++)
			;
		if (r == TSVG_MARK_ROWS_MAX)
			r = TSVG_MARK_ROWS_MAX - 1;
		/* (on the last row, full, a mark may overlap: the later end) */
		if (r == rows)
			row_end[rows++] = end;
		else if (row_end[r] < end)
			row_end[r] = end;
		fprintf(fp, "%s[%" PRId64 ",%" PRId64 ",%d,", n++ == 0 ? "" : ",\n",
		    tsvg_us(m->start), tsvg_us(m->end) - tsvg_us(m->start), r);
		json_write_string(fp, m->name, JSON_XML_SAFE);
		fputc(']', fp);
	}
	fprintf(fp, "],\"rows\":%d}", rows);
	return rows;
}

/* Write one thread's lane: its totals, pieces, mixes and marks; returns
 * the rows its marks take. */
static int
tsvg_thread(struct tsvg *w, FILE *fp, const struct timeline *tl,
    const struct timeline_thread *th, int64_t grain)
{
	int64_t (*mix)[TIMELINE_NSTATES] = NULL;
	struct tsvg_piece pc;
	size_t i, n = 0, nmix = 0;
	int k, have = 0;

	tsvg_lane_name(fp, th->pid, th->id, th->name);
	fputs(",\"tot\":[", fp);
	for (k = 0; k < TIMELINE_NSTATES; k++)
		fprintf(fp, "%s%" PRId64, k ? "," : "", tsvg_us(th->total[k]));
	fputs("],\n\"p\":[", fp);
	for (i = 0; i < th->nspans; i++) {
		const struct timeline_span *sp = &th->spans[i];

		/* A piece ends once it is a grain long, or at a gap that is. */
		if (have && (pc.end - pc.start >= grain || sp->start - pc.end >= grain)) {
			tsvg_piece(w, fp, &pc, n++, &mix, &nmix);
			have = 0;
		}
		if (!have) {
			memset(&pc, 0, sizeof pc);
			pc.start = sp->start;
			pc.longest = -1;
			have = 1;
		}
		pc.end = sp->end;
		pc.dur[sp->state] += sp->end - sp->start;
		if (sp->end - sp->start > pc.longest) {
			pc.longest = sp->end - sp->start;
			pc.sample = sp->sample;
		}
	}
	if (have)
		tsvg_piece(w, fp, &pc, n++, &mix, &nmix);
	fputs("],\n\"x\":[", fp);
	for (i = 0; i < nmix; i++) {
		fprintf(fp, "%s[", i == 0 ? "" : i % 8 == 0 ? ",\n" : ",");
		for (k = 0; k < TIMELINE_NSTATES; k++)
			fprintf(fp, "%s%" PRId64, k ? "," : "", mix[i][k]);
		fputc(']', fp);
	}
	fputc(']', fp);
	free(mix);
	return tsvg_marks(fp, tl, th->pid, th->id, grain);
}

/* Whether TL has a thread (PID, THREAD) or an earlier mark of it than
 * mark I. */
static int
tsvg_mark_seen(const struct timeline *tl, size_t i)
{
	const struct timeline_mark *m = &tl->marks[i];
	size_t k;

	for (k = 0; k < tl->nthreads; k++) {
		if (tl->threads[k].pid == m->pid && tl->threads[k].id == m->thread)
			return 1;
	}
	for (k = 0; k < i; k++) {
		if (tl->marks[k].pid == m->pid && tl->marks[k].thread == m->thread)
			return 1;
	}
	return 0;
}

/* Write the data (the JSON object tl) to FP; the height of the lanes
 * goes to *LANES_H. */
static void
tsvg_data(struct tsvg *w, FILE *fp, const struct timeline *tl, int width,
    int64_t start, int64_t end, const struct numfmt_unit *u, int *lanes_h)
{
	char *lanes = NULL;
	size_t len = 0, i, nlanes = 0;
	FILE *mem = open_memstream(&lanes, &len);
	int64_t grain = (end - start) / ((int64_t)(width - TSVG_LABEL - 10) *
	    TIMELINE_SVG_PIECES_PER_PX);

	if (mem == NULL)
		abort();
	if (grain < 1000)
		grain = 1000;
	*lanes_h = 0;
	for (i = 0; i < tl->nthreads; i++) {
		fputs(nlanes++ == 0 ? "\n" : ",\n", mem);
		*lanes_h += TSVG_LANE + TSVG_MARK_ROW * tsvg_thread(w, mem, tl,
		    &tl->threads[i], grain);
	}
	for (i = 0; i < tl->nmarks; i++) {
		if (tsvg_mark_seen(tl, i))
			continue;
		fputs(nlanes++ == 0 ? "\n" : ",\n", mem);
		tsvg_lane_name(mem, tl->marks[i].pid, tl->marks[i].thread, NULL);
		fputs(",\"tot\":[0,0,0,0,0],\"p\":[],\"x\":[]", mem);
		*lanes_h += TSVG_LANE + TSVG_MARK_ROW * tsvg_marks(mem, tl,
		    tl->marks[i].pid, tl->marks[i].thread, grain);
	}
	if (fclose(mem) != 0)
		abort();

	fprintf(fp, "var tl = {\"width\":%d,\"top\":%d,\"label\":%d,\"lane\":%d,"
	    "\"markRow\":%d,\"frames\":%d,\"start\":%" PRId64 ",\"end\":%" PRId64
	    ",\"unit\":", width, TSVG_TOP, TSVG_LABEL, TSVG_LANE, TSVG_MARK_ROW,
	    TIMELINE_SVG_STACK_FRAMES, tsvg_us(start), tsvg_us(end));
	json_write_string(fp, u->suffix, JSON_XML_SAFE);
	fputs(",\n\"names\":[", fp);
	for (i = 0; i < w->nnames; i++) {
		fputs(i == 0 ? "" : i % 8 == 0 ? ",\n" : ",", fp);
		json_write_string(fp, w->names[i], JSON_XML_SAFE);
	}
	/* The nodes as (parent, name) pairs; the root's name is -1. */
	fputs("],\n\"nodes\":[0,-1", fp);
	for (i = 1; i < w->nnodes; i++)
		fprintf(fp, "%s%" PRIu32 ",%" PRIu32, i % 16 == 0 ? ",\n" : ",",
		    w->parent[i], w->name[i]);
	fputs("],\n\"lanes\":[", fp);
	fwrite(lanes, 1, len, fp);
	fputs("]};\n", fp);
	free(lanes);
}

/* Write S as XML character data, plain ASCII (for the title lines). */
static void
tsvg_xml_str(FILE *fp, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;

	for (; *c != '\0'; c++) {
		if (*c == '<')
			fputs("&lt;", fp);
		else if (*c == '>')
			fputs("&gt;", fp);
		else if (*c == '&')
			fputs("&amp;", fp);
		else
			fputc(*c < 0x20 || *c >= 0x7f ? '?' : *c, fp);
	}
}

int
timeline_svg_write(const struct profile *p, FILE *fp,
    const struct timeline_svg_opts *o)
{
	struct timeline tl;
	struct tsvg w;
	struct numfmt_unit u;
	char *data = NULL, buf[64];
	const char *full;
	size_t len = 0, vi, i;
	FILE *mem;
	int width, height, lanes_h;
	int64_t start, end;

	vi = profile_value_index(p, o != NULL ? o->value_index : (size_t)-1);
	if (vi >= p->nvalue_types || strcmp(profile_str(p, p->value_types[vi].unit),
	    "nanoseconds") != 0) {
		errno = ENOMSG;
		return -1;
	}
	/* No samples left (all filtered out): an empty timeline. */
	if (timeline_build(p, vi, &tl) != 0 && p->nsamples > 0) {
		errno = ENOMSG;
		return -1;
	}
	width = o != NULL && o->width > 400 ? o->width : TIMELINE_SVG_DEFAULT_WIDTH;
	numfmt_unit_init(&u, p, vi);
	/* The full view: from the threads' first span (the start, or where
	 * --from cut) to their last; marks outside it are drawn cut at its
	 * edges, and set it only where no thread has a span. */
	start = end = 0;
	for (i = 0; i < tl.nthreads; i++) {
		if (tl.threads[i].nspans == 0)
			continue;
		if (end == 0 || tl.threads[i].first < start)
			start = tl.threads[i].first;
		if (tl.threads[i].last > end)
			end = tl.threads[i].last;
	}
	for (i = 0; end == 0 && i < tl.nmarks; i++) {
		if (i == 0 || tl.marks[i].start < start)
			start = tl.marks[i].start;
	}
	for (i = 0; i < tl.nmarks && tl.nthreads == 0; i++) {
		if (tl.marks[i].end > end)
			end = tl.marks[i].end;
	}
	/* The process events too, unless a window was cut: an exec comes
	 * after the last sample, and a full timeline's lanes end early. */
	for (i = 0; end > 0 && i < tl.nmarks &&
	    profile_comment_value(p, PROFILE_COMMENT_WINDOW) == NULL; i++) {
		if (!timeline_mark_is_event(&tl.marks[i]))
			continue;
		if (tl.marks[i].start < start)
			start = tl.marks[i].start;
		if (tl.marks[i].start > end)
			end = tl.marks[i].start;
	}
	if (end <= start) {
		start = 0;
		end = end > 0 ? end : 1;
	}
	memset(&w, 0, sizeof w);
	w.p = p;
	w.name_out = xcalloc(p->nstrings + 1, sizeof *w.name_out);
	/* Node 0, the root: in no hash slot, so no frame ever finds it. */
	w.cap = 1024;
	w.parent = xcalloc(w.cap, sizeof *w.parent);
	w.name = xcalloc(w.cap, sizeof *w.name);
	w.nnodes = 1;
	/* Out of memory aborts, as xmalloc does. */
	if ((mem = open_memstream(&data, &len)) == NULL)
		abort();
	tsvg_data(&w, mem, &tl, width, start, end, &u, &lanes_h);
	if (fclose(mem) != 0)
		abort();
	height = TSVG_TOP + lanes_h + TSVG_BOTTOM;

	fprintf(fp, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	fprintf(fp, "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n", width, height, width, height);
	fprintf(fp, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n",
	    timeline_svg_css);
	fprintf(fp, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#fcfbf7\"/>\n");
	fprintf(fp, "<text id=\"title\" x=\"%d\" y=\"24\">", width / 2);
	tsvg_xml_str(fp, o != NULL && o->title != NULL ? o->title : "Timeline");
	fprintf(fp, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"42\">", width / 2);
	fprintf(fp, "%zu thread%s, %s", tl.nthreads, tl.nthreads == 1 ? "" : "s",
	    numfmt_value(buf, sizeof buf, &(struct numfmt_unit){ 1, "ms" }, start));
	fprintf(fp, " to %s ms", numfmt_value(buf, sizeof buf,
	    &(struct numfmt_unit){ 1, "ms" }, end));
	if (o != NULL && o->subtitle != NULL && *o->subtitle != '\0') {
		fputs("; ", fp);
		tsvg_xml_str(fp, o->subtitle);
	}
	/* A full timeline: its lanes end before the run did. */
	if ((full = profile_comment_value(p, PROFILE_COMMENT_TIMELINE_FULL)) != NULL) {
		fputs("; timeline full (--timeline-max): ", fp);
		tsvg_xml_str(fp, full);
	}
	fputs("</text>\n", fp);
	fprintf(fp, "<text id=\"unzoom\" class=\"btn off\" x=\"10\" y=\"64\">Reset Zoom</text>\n");
	/* The search box, as in the flame graph: a regex over the frames. */
	fprintf(fp, "<foreignObject x=\"100\" y=\"50\" width=\"200\" height=\"22\">"
	    "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"term\" type=\"search\" "
	    "placeholder=\"search (regex)\"/></foreignObject>\n");
	fprintf(fp, "<text id=\"matched\" x=\"308\" y=\"64\"> </text>\n");
	fprintf(fp, "<g id=\"legend\"></g>\n<g id=\"axis\"></g>\n<g id=\"lanes\"></g>\n");
	fprintf(fp, "<rect id=\"sel\" x=\"0\" y=\"%d\" width=\"0\" height=\"%d\"/>\n",
	    TSVG_TOP - 16, lanes_h + 16);
	fprintf(fp, "<g id=\"details\" transform=\"translate(10,%d)\"></g>\n",
	    TSVG_TOP + lanes_h + 30);
	fprintf(fp, "<script type=\"text/ecmascript\"><![CDATA[\n");
	fwrite(data, 1, len, fp);
	fputs(timeline_svg_js, fp);
	fputs("]]></script>\n</svg>\n", fp);

	free(data);
	for (i = 0; i < w.nowned; i++)
		free(w.owned[i]);
	free(w.owned);
	free(w.names);
	free(w.name_out);
	free(w.parent);
	free(w.name);
	free(w.slot);
	timeline_release(&tl);
	if (fflush(fp) != 0 || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
