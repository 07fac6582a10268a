/*
 * tui-panels.c: the browser's views that show a table of the text report
 * as it prints it (see tui-int.h): a timeline profile's per-thread summary
 * (busy, GVL wait, blocked, GC, the longest GVL waits) and a memory
 * profile's allocation sites.  The text report's own writers fill a
 * memory stream, and each line is a row: the browser shows the same
 * figures as "rperf report --stdio", for the samples the filters keep,
 * and computes nothing of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "text.h"
#include "timeline.h"
#include "tui-int.h"
#include "xmalloc.h"

/* Rows of the allocation sites table: all of them. */
#define TUI_PANEL_MAX_ROWS 100000

/* V's rows: the lines of BUF (LEN bytes), the blank ones at its start
 * left out.  Returns the number of rows. */
static size_t
tui_panel_lines(struct tui_view *v, const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len;
	size_t cap = 0;

	while (s < end && *s == '\n')
		s++;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		struct tui_item *it;
		void *vp = v->items;

		xgrow(&vp, &cap, v->nitems + 1, sizeof *v->items);
		v->items = vp;
		it = &v->items[v->nitems++];
		memset(it, 0, sizeof *it);
		it->name = xstrndup(s, n);
		it->kind = -1;
		s += n + 1;
	}
	return v->nitems;
}

/* The per-thread summary of a profile recorded with --timeline. */
static int
tui_fill_timeline(struct tui *t, struct tui_view *v, FILE *fp, char *err,
    size_t errlen)
{
	const struct profile *p = t->p;
	struct timeline tl;

	if (p->nsamples == 0) {
		error_set(err, errlen, "no samples match the filters");
		return -1;
	}
	if (!timeline_has_times(p)) {
		error_set(err, errlen, "no sample times: record with --timeline "
		    "for the per-thread timeline");
		return -1;
	}
	if (strcmp(profile_str(p, p->value_types[t->vi].unit),
	    "nanoseconds") != 0) {
		error_set(err, errlen, "no timeline of %s, not a time (v: the "
		    "next sample type)", profile_str(p,
		    p->value_types[t->vi].type));
		return -1;
	}
	memset(&tl, 0, sizeof tl);
	if (timeline_build(p, t->vi, &tl) == 0)
		timeline_write_summary(p, &tl, fp, &t->u, TUI_PANEL_MAX_ROWS);
	timeline_release(&tl);
	(void)v;
	return 0;
}

int
tui_fill_panel(struct tui *t, struct tui_view *v, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	int rc = 0;

	if (fp == NULL) {
		error_set(err, errlen, "out of memory");
		return -1;
	}
	if (v->kind == TUI_TIMELINE) {
		v->title = xstrdup("Threads over time (as --stdio's timeline)");
		rc = tui_fill_timeline(t, v, fp, err, errlen);
	} else {
		v->title = xstrdup("Allocation sites (all sample types)");
		text_write_alloc_sites(t->p, fp, TUI_PANEL_MAX_ROWS);
	}
	if (fclose(fp) != 0 && rc == 0) {
		error_set(err, errlen, "out of memory");
		rc = -1;
	}
	if (rc == 0 && tui_panel_lines(v, buf, len) == 0) {
		if (v->kind == TUI_ALLOCS)
			error_set(err, errlen, "not a memory profile: record "
			    "with -m alloc or --alloc for allocation sites");
		else
			error_set(err, errlen, "no threads in the samples kept");
		rc = -1;
	}
	free(buf);
	return rc;
}
