/*
 * timeline.c: the per-thread timeline of a profile with timestamps (see
 * timeline.h): spans from samples, a time window, the text summary.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "timeline.h"
#include "xmalloc.h"

/* The label "timestamp" and its unit. */
#define TIMELINE_LABEL "timestamp"

int64_t
timeline_sample_time(const struct profile *p, const struct profile_sample *s)
{
	const struct profile_label *l = profile_sample_label(p, s, TIMELINE_LABEL);

	return l != NULL && l->str == 0 && l->num >= 0 ? l->num : -1;
}

int
timeline_has_times(const struct profile *p)
{
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		if (timeline_sample_time(p, &p->samples[i]) >= 0)
			return 1;
	}
	return 0;
}

/* The state of sample S. */
static int
timeline_state(const struct profile *p, const struct profile_sample *s)
{
	struct profile_vm_state vs = profile_sample_state(p, s);

	if (vs.gc_state >= 0)
		return vs.gc_state + 1;
	if (vs.gvl_state >= 0)
		return vs.gvl_state + 1;
	return TIMELINE_RUNNING;
}

/* One span before it has a thread. */
struct timeline_raw {
	int64_t pid, thread;
	struct timeline_span span;
};

static int
timeline_raw_cmp(const void *a, const void *b)
{
	const struct timeline_raw *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->span.end != y->span.end)
		return x->span.end < y->span.end ? -1 : 1;
	return x->span.sample < y->span.sample ? -1 : x->span.sample > y->span.sample;
}

/* A numeric label of S, or 0. */
static int64_t
timeline_num(const struct profile *p, const struct profile_sample *s, const char *key)
{
	const struct profile_label *l = profile_sample_label(p, s, key);

	return l != NULL && l->str == 0 ? l->num : 0;
}

static int
timeline_mark_cmp(const void *a, const void *b)
{
	const struct timeline_mark *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* The longer first: a mark that starts with another holds it. */
	return x->end > y->end ? -1 : x->end < y->end;
}

/* The marks of P's comments into TL, by start (the outer one first). */
static void
timeline_marks(const struct profile *p, struct timeline *tl)
{
	size_t i, klen = strlen(TIMELINE_MARK_COMMENT);

	for (i = 0; i < p->ncomments; i++) {
		const char *c = profile_str(p, p->comments[i]);
		long long pid, thread, start, end;
		int off = 0;

		if (strncmp(c, TIMELINE_MARK_COMMENT, klen) != 0 || c[klen] != ':')
			continue;
		if (sscanf(c + klen + 1, " %lld %lld %lld %lld %n", &pid, &thread, &start, &end,
		    &off) != 4 || off == 0 || start < 0 || end < start)
			continue;
		tl->marks = xrealloc(tl->marks, (tl->nmarks + 1) * sizeof *tl->marks);
		tl->marks[tl->nmarks].pid = pid;
		tl->marks[tl->nmarks].thread = thread;
		tl->marks[tl->nmarks].start = start;
		tl->marks[tl->nmarks].end = end;
		tl->marks[tl->nmarks].name = c + klen + 1 + off;
		tl->nmarks++;
	}
	if (tl->nmarks > 1)
		qsort(tl->marks, tl->nmarks, sizeof *tl->marks, timeline_mark_cmp);
}

int
timeline_build(const struct profile *p, size_t vi, struct timeline *tl)
{
	struct timeline_raw *raw;
	size_t i, j, n = 0;

	memset(tl, 0, sizeof *tl);
	tl->value_index = vi;
	if (!timeline_has_times(p))
		return -1;
	raw = xcalloc(p->nsamples + 1, sizeof *raw);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		int64_t t = timeline_sample_time(p, s), w;

		if (t < 0 || vi >= p->nvalue_types)
			continue;
		w = profile_sample_values(p, s)[vi];
		if (w <= 0)
			continue;
		raw[n].pid = timeline_num(p, s, "pid");
		raw[n].thread = timeline_num(p, s, "thread");
		raw[n].span.end = t;
		raw[n].span.start = w < t ? t - w : 0;
		raw[n].span.sample = i;
		raw[n].span.state = timeline_state(p, s);
		n++;
	}
	qsort(raw, n, sizeof *raw, timeline_raw_cmp);
	timeline_marks(p, tl);
	for (i = 0; i < n; i = j) {
		struct timeline_thread *th;
		int64_t prev_end = 0;

		for (j = i; j < n && raw[j].pid == raw[i].pid && raw[j].thread == raw[i].thread; j++)
			;
		tl->threads = xrealloc(tl->threads, (tl->nthreads + 1) * sizeof *tl->threads);
		th = &tl->threads[tl->nthreads++];
		memset(th, 0, sizeof *th);
		th->id = raw[i].thread;
		th->pid = raw[i].pid;
		th->name = profile_sample_label_str(p, &p->samples[raw[i].span.sample],
		    "thread_name");
		th->spans = xcalloc(j - i, sizeof *th->spans);
		for (; i < j; i++) {
			struct timeline_span sp = raw[i].span;

			/* A span starts where the thread's previous one ended at
			 * the earliest: their clocks are read apart. */
			/* The totals are the samples' own weights, as in the
			 * other tables; the span drawn may be cut short where a
			 * GC billed inside a running stretch overlaps it. */
			th->total[sp.state] += profile_sample_values(p,
			    &p->samples[sp.sample])[vi];
			if (sp.start < prev_end)
				sp.start = prev_end;
			if (sp.end <= sp.start && th->nspans > 0)
				continue;
			th->spans[th->nspans++] = sp;
			prev_end = sp.end;
			if (th->name == NULL)
				th->name = profile_sample_label_str(p, &p->samples[sp.sample],
				    "thread_name");
		}
		if (th->nspans > 0) {
			th->first = th->spans[0].start;
			th->last = th->spans[th->nspans - 1].end;
			if (th->last > tl->end)
				tl->end = th->last;
		}
	}
	free(raw);
	return 0;
}

void
timeline_release(struct timeline *tl)
{
	size_t i;

	for (i = 0; i < tl->nthreads; i++)
		free(tl->threads[i].spans);
	free(tl->threads);
	free(tl->marks);
	memset(tl, 0, sizeof *tl);
}

size_t
timeline_cut(struct profile *p, int64_t from_ns, int64_t to_ns)
{
	size_t i, n = 0;

	for (i = 0; i < p->nsamples; i++) {
		int64_t t = timeline_sample_time(p, &p->samples[i]);

		if (t < 0 || t < from_ns || (to_ns >= 0 && t > to_ns))
			continue;
		p->samples[n++] = p->samples[i];
	}
	p->nsamples = n;
	return n;
}

/* One GVL wait and who ran meanwhile. */
struct timeline_wait {
	const struct timeline_thread *th;
	const struct timeline_span *span;
	const struct timeline_thread *holder;
	int64_t overlap;
};

static int
timeline_wait_cmp(const void *a, const void *b)
{
	const struct timeline_wait *x = a, *y = b;
	int64_t dx = x->span->end - x->span->start, dy = y->span->end - y->span->start;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->span->start < y->span->start ? -1 : x->span->start > y->span->start;
}

/* How long TH held the GVL within [S, E]: it ran or collected garbage
 * (Ruby's GC runs on the thread that holds the GVL). */
static int64_t
timeline_running_in(const struct timeline_thread *th, int64_t s, int64_t e)
{
	size_t lo = 0, hi = th->nspans, i;
	int64_t sum = 0;

	/* the first span ending after S */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (th->spans[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < th->nspans && th->spans[i].start < e; i++) {
		const struct timeline_span *sp = &th->spans[i];
		int64_t a = sp->start > s ? sp->start : s, b = sp->end < e ? sp->end : e;

		if (sp->state != TIMELINE_GVL_BLOCKED && sp->state != TIMELINE_GVL_WAIT &&
		    b > a)
			sum += b - a;
	}
	return sum;
}

/* "1 (worker)" or "1" into BUF. */
static const char *
timeline_thread_name(char *buf, size_t len, const struct timeline_thread *th)
{
	int n = 0;

	if (th->pid != 0)
		n = snprintf(buf, len, "%" PRId64 "/", th->pid);
	snprintf(buf + n, len - (size_t)n, "%" PRId64 "%s%s%s", th->id,
	    th->name ? " (" : "", th->name ? th->name : "", th->name ? ")" : "");
	return buf;
}

int
timeline_mark_is_event(const struct timeline_mark *m)
{
	return m->start == m->end && m->name[0] == '[' && strchr(m->name, ']') != NULL;
}

/* The process events of TL, in time order, if it has any. */
static void
timeline_write_events(const struct timeline *tl, FILE *fp)
{
	size_t i, n = 0;
	char at[48], who[48];

	for (i = 0; i < tl->nmarks; i++) {
		const struct timeline_mark *m = &tl->marks[i];

		if (!timeline_mark_is_event(m))
			continue;
		if (n++ == 0)
			fprintf(fp, "\nProcess events (at: ms from the start):\n  %12s  %-10s  %s\n",
			    "At", "Thread", "Event");
		if (m->pid != 0)
			snprintf(who, sizeof who, "%" PRId64 "/%" PRId64, m->pid, m->thread);
		else
			snprintf(who, sizeof who, "%" PRId64, m->thread);
		fprintf(fp, "  %12s  %-10s  %s\n",
		    numfmt_value(at, sizeof at, &(struct numfmt_unit){ 1, "ms" }, m->start),
		    who, m->name);
	}
}

/* The shortest GVL wait listed among the longest (ns). */
#define TIMELINE_WAIT_SHOWN	10000

void
timeline_write_summary(const struct profile *p, const struct timeline *tl, FILE *fp,
    const struct numfmt_unit *u, size_t top)
{
	struct timeline_wait *w = NULL;
	size_t i, j, k, nw = 0;
	char a[48], b[48], c[48], d[48], e[48], name[128], hold[128];

	if (tl->nthreads == 0)
		return;
	fprintf(fp, "\nTimeline (per thread%s%s):\n", *u->suffix ? ", " : "", u->suffix);
	fprintf(fp, "  %-24s  %12s  %12s  %12s  %12s  %12s\n", "Thread", "Running",
	    "GVL wait", "Blocked", "GC", "First-last");
	for (i = 0; i < tl->nthreads; i++) {
		const struct timeline_thread *th = &tl->threads[i];

		fprintf(fp, "  %-24.24s  %12s  %12s  %12s  %12s  %12s\n",
		    timeline_thread_name(name, sizeof name, th),
		    numfmt_value(a, sizeof a, u, th->total[TIMELINE_RUNNING]),
		    numfmt_value(b, sizeof b, u, th->total[TIMELINE_GVL_WAIT]),
		    numfmt_value(c, sizeof c, u, th->total[TIMELINE_GVL_BLOCKED]),
		    numfmt_value(d, sizeof d, u, th->total[TIMELINE_GC_MARK] +
		    th->total[TIMELINE_GC_SWEEP]),
		    numfmt_value(e, sizeof e, u, th->last - th->first));
		for (j = 0; j < th->nspans; j++) {
			/* A wait of a few microseconds (a thread taking the
			 * GVL back as another lets go) is no one's bottleneck,
			 * and would print as 0.00 ms. */
			if (th->spans[j].state != TIMELINE_GVL_WAIT ||
			    th->spans[j].end - th->spans[j].start < TIMELINE_WAIT_SHOWN)
				continue;
			w = xrealloc(w, (nw + 1) * sizeof *w);
			w[nw].th = th;
			w[nw].span = &th->spans[j];
			w[nw].holder = NULL;
			w[nw].overlap = 0;
			nw++;
		}
	}
	timeline_write_events(tl, fp);
	if (nw == 0)
		return;
	qsort(w, nw, sizeof *w, timeline_wait_cmp);
	if (nw > top)
		nw = top;
	fprintf(fp, "\nLongest GVL waits (at: ms from the start):\n");
	fprintf(fp, "  %12s  %12s  %-24s  %s\n", "At", "Waited", "Thread",
	    "Ran meanwhile (most)");
	for (i = 0; i < nw; i++) {
		for (k = 0; k < tl->nthreads; k++) {
			const struct timeline_thread *o = &tl->threads[k];
			int64_t ran;

			if (o == w[i].th || o->pid != w[i].th->pid)
				continue;
			ran = timeline_running_in(o, w[i].span->start, w[i].span->end);
			if (ran > w[i].overlap) {
				w[i].overlap = ran;
				w[i].holder = o;
			}
		}
		if (w[i].holder != NULL)
			snprintf(hold, sizeof hold, "%s, %s", timeline_thread_name(name, sizeof name,
			    w[i].holder), numfmt_value(a, sizeof a, u, w[i].overlap));
		else
			snprintf(hold, sizeof hold, "-");
		fprintf(fp, "  %12s  %12s  %-24.24s  %s\n",
		    numfmt_value(c, sizeof c, &(struct numfmt_unit){ 1, "ms" }, w[i].span->start),
		    numfmt_value(b, sizeof b, u, w[i].span->end - w[i].span->start),
		    timeline_thread_name(name, sizeof name, w[i].th), hold);
	}
	free(w);
	(void)p;
}
