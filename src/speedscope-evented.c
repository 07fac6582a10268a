/*
 * speedscope-evented.c: the evented profiles of the speedscope writer
 * (see speedscope.h): a thread's spans as frames opened and closed at
 * their times, and its user marks, nested as speedscope needs them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "speedscope-int.h"
#include "xmalloc.h"

/* For qsort and bsearch: the strings pointed to. */
static int
speedscope_strcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void
speedscope_mark_names(struct speedscope *w, const struct timeline *tl)
{
	size_t i, n = 0;

	if (tl->nmarks == 0)
		return;
	w->marks = xcalloc(tl->nmarks, sizeof *w->marks);
	for (i = 0; i < tl->nmarks; i++)
		w->marks[i] = tl->marks[i].name;
	qsort(w->marks, tl->nmarks, sizeof *w->marks, speedscope_strcmp);
	for (i = 0; i < tl->nmarks; i++) {
		if (n == 0 || strcmp(w->marks[n - 1], w->marks[i]) != 0)
			w->marks[n++] = w->marks[i];
	}
	w->nmarks = n;
}

/* The frame index of mark name NAME. */
static uint32_t
speedscope_mark_frame(const struct speedscope *w, const char *name)
{
	const char **at = bsearch(&name, w->marks, w->nmarks, sizeof *w->marks,
	    speedscope_strcmp);

	return (uint32_t)(w->nframes + (size_t)(at - w->marks));
}

/* Write an event: open (TYPE 'O') or close ('C') FRAME at AT; a line
 * break now and then keeps lines short. */
static void
speedscope_event(struct speedscope *w, char type, uint32_t frame, int64_t at)
{
	fprintf(w->fp, "%s{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":%" PRId64 "}",
	    w->nevents == 0 ? "" : w->nevents % 8 == 0 ? ",\n" : ",", type, frame, at);
	w->nevents++;
}

/* Close the open frames down to the first KEEP, at AT. */
static void
speedscope_close(struct speedscope *w, size_t keep, int64_t at)
{
	while (w->nopen > keep) {
		w->nopen--;
		speedscope_event(w, 'C', w->open[w->nopen], at);
	}
}

/* Make the N frames of w->stack the open ones at AT: the frames they
 * share with what is open stay open. */
static void
speedscope_move(struct speedscope *w, size_t n, int64_t at)
{
	size_t k = 0;

	while (k < n && k < w->nopen && w->open[k] == w->stack[k])
		k++;
	speedscope_close(w, k, at);
	for (; k < n; k++) {
		w->open[w->nopen++] = w->stack[k];
		speedscope_event(w, 'O', w->stack[k], at);
	}
}

/* One thread's spans as an evented profile: a span's stack is open for
 * the span; where the thread has no span, nothing is. */
static void
speedscope_thread(struct speedscope *w, const struct timeline_thread *th,
    int64_t end)
{
	int64_t prev = 0;
	size_t i;

	speedscope_begin(w, "evented", "", th->pid, th->id, th->name,
	    "nanoseconds", end);
	for (i = 0; i < th->nspans; i++) {
		const struct timeline_span *sp = &th->spans[i];

		if (sp->start > prev)
			speedscope_close(w, 0, prev);
		speedscope_move(w, speedscope_stack(w, &w->p->samples[sp->sample]),
		    sp->start);
		prev = sp->end;
	}
	speedscope_close(w, 0, prev);
	fputs("]}", w->fp);
}

/* Marks by start, and the longer first where two start together, so
 * that the one that holds the other is opened first. */
static int
speedscope_mark_cmp(const void *a, const void *b)
{
	const struct timeline_mark *x = *(const struct timeline_mark *const *)a;
	const struct timeline_mark *y = *(const struct timeline_mark *const *)b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end;
}

/* The marks of thread (PID, THREAD) in TL as an evented profile of their
 * own.  speedscope needs them nested: a mark that begins inside another
 * and ends after it is cut at the other's end; marks nested deeper than
 * 64 are left out. */
static void
speedscope_marks(struct speedscope *w, const struct timeline *tl, int64_t pid,
    int64_t thread, const char *thname, int64_t end)
{
	const struct timeline_mark **ms = xcalloc(tl->nmarks, sizeof *ms);
	int64_t ends[64];
	size_t i, n = 0;

	for (i = 0; i < tl->nmarks; i++) {
		if (tl->marks[i].pid == pid && tl->marks[i].thread == thread &&
		    tl->marks[i].end >= w->start)
			ms[n++] = &tl->marks[i];
	}
	qsort(ms, n, sizeof *ms, speedscope_mark_cmp);
	speedscope_begin(w, "evented", "marks: ", pid, thread, thname,
	    "nanoseconds", end);
	for (i = 0; i < n; i++) {
		int64_t e = ms[i]->end;

		while (w->nopen > 0 && ends[w->nopen - 1] <= ms[i]->start)
			speedscope_close(w, w->nopen - 1, ends[w->nopen - 1]);
		if (w->nopen == sizeof ends / sizeof ends[0] || w->nopen >= w->cap)
			continue;
		if (w->nopen > 0 && e > ends[w->nopen - 1])
			e = ends[w->nopen - 1];
		ends[w->nopen] = e;
		w->open[w->nopen++] = speedscope_mark_frame(w, ms[i]->name);
		speedscope_event(w, 'O', w->open[w->nopen - 1],
		    ms[i]->start > w->start ? ms[i]->start : w->start);
	}
	while (w->nopen > 0)
		speedscope_close(w, w->nopen - 1, ends[w->nopen - 1]);
	fputs("]}", w->fp);
	free(ms);
}

/* Whether thread (PID, THREAD) has a mark in TL. */
static int
speedscope_has_marks(const struct timeline *tl, int64_t pid, int64_t thread)
{
	size_t i;

	for (i = 0; i < tl->nmarks; i++) {
		if (tl->marks[i].pid == pid && tl->marks[i].thread == thread)
			return 1;
	}
	return 0;
}

/* Whether TL has a thread (PID, THREAD). */
static int
speedscope_has_thread(const struct timeline *tl, int64_t pid, int64_t thread)
{
	size_t i;

	for (i = 0; i < tl->nthreads; i++) {
		if (tl->threads[i].pid == pid && tl->threads[i].id == thread)
			return 1;
	}
	return 0;
}

/* Where the view of a profile cut to a window (rperf report --from)
 * begins: its threads' first span, so that speedscope does not show the
 * time before the window as an empty stretch. */
static int64_t
speedscope_window_start(const struct speedscope *w, const struct timeline *tl)
{
	int64_t start = -1;
	size_t i;

	if (profile_comment_value(w->p, PROFILE_COMMENT_WINDOW) == NULL)
		return 0;
	for (i = 0; i < tl->nthreads; i++) {
		const struct timeline_thread *th = &tl->threads[i];

		if (th->nspans > 0 && (start < 0 || th->spans[0].start < start))
			start = th->spans[0].start;
	}
	return start > 0 ? start : 0;
}

void
speedscope_evented(struct speedscope *w, const struct timeline *tl)
{
	int64_t end = tl->end;
	size_t i;

	w->start = speedscope_window_start(w, tl);

	for (i = 0; i < tl->nmarks; i++) {
		if (tl->marks[i].end > end)
			end = tl->marks[i].end;
	}
	for (i = 0; i < tl->nthreads; i++) {
		const struct timeline_thread *th = &tl->threads[i];

		speedscope_thread(w, th, end);
		if (speedscope_has_marks(tl, th->pid, th->id))
			speedscope_marks(w, tl, th->pid, th->id, th->name, end);
	}
	for (i = 0; i < tl->nmarks; i++) {
		const struct timeline_mark *m = &tl->marks[i];
		size_t k;

		if (speedscope_has_thread(tl, m->pid, m->thread))
			continue;
		for (k = 0; k < i; k++) {
			if (tl->marks[k].pid == m->pid && tl->marks[k].thread == m->thread)
				break;
		}
		if (k == i)
			speedscope_marks(w, tl, m->pid, m->thread, NULL, end);
	}
}
