/*
 * cmd-report-list.c: "rperf report --list DIR": the profiles in a
 * directory, slowest first, one line each: when it began, how long it
 * took, its status and name (the "capture" comments Rperf.capture_end
 * writes: a request's endpoint, a job's class), the function with the
 * most self time, and the file.  Made for the directories of slow
 * requests and jobs that the Rack, Sidekiq and ActiveJob helpers fill,
 * it lists any profiles.  Files that are not profiles are skipped with a
 * warning; the directory is read once and bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "formats.h"
#include "numfmt.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "util.h"
#include "xmalloc.h"

/* The most directory entries looked at. */
#define CMD_LIST_MAX_FILES 100000

/* One profile of the listing. */
struct cmd_list_row {
	char *file;
	char *name, *status, *top;
	int64_t time_nanos, duration_nanos;
	int64_t total;		/* of the value shown, after the filters */
	struct numfmt_unit unit;
};

struct cmd_list {
	const char *dir;
	const struct cmd_list_opts *o;
	struct cmd_list_row *rows;
	size_t n, cap;
};

/* The function with the most self value VI in P (NULL: no samples). */
static char *
cmd_list_top(const struct profile *p, size_t vi)
{
	int64_t *self = xcalloc(p->nfunctions + 1, sizeof *self);
	size_t i, best = 0;
	char *name = NULL;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		const struct profile_location *l;

		if (s->nloc == 0 || locs[0] == 0 || locs[0] > p->nlocations)
			continue;
		l = &p->locations[locs[0] - 1];
		if (l->function == 0 || l->function > p->nfunctions)
			continue;
		self[l->function] += profile_sample_values(p, s)[vi];
	}
	for (i = 1; i <= p->nfunctions; i++) {
		if (self[i] > 0 && (best == 0 || self[i] > self[best]))
			best = i;
	}
	if (best != 0)
		name = xstrdup(profile_str(p, p->functions[best - 1].name));
	free(self);
	return name;
}

/* A capture comment of P, copied, or NULL. */
static char *
cmd_list_meta(const struct profile *p, const char *key)
{
	char k[64];
	const char *v;

	snprintf(k, sizeof k, "%s%s", PROFILE_COMMENT_CAPTURE, key);
	v = profile_comment_value(p, k);
	return v != NULL && *v != '\0' ? xstrdup(v) : NULL;
}

/* Read DIR/NAME into a row, unless the filters leave nothing of it. */
static void
cmd_list_add(struct cmd_list *l, int dirfd, const char *name)
{
	char display[4096], err[512];
	struct cmd_list_row *row;
	struct profile *p;
	size_t vi;

	snprintf(display, sizeof display, "%s/%s", l->dir, name);
	p = profile_read_at(dirfd, name, display, err, sizeof err);
	if (p == NULL) {
		error_note("%s; skipped", err);
		return;
	}
	vi = profile_value_index(p, TEXT_VALUE_DEFAULT);
	if (l->o->sample_index != NULL &&
	    profile_value_by_name(p, l->o->sample_index, &vi) != 0) {
		error_note("'%s' has no sample type '%s'; skipped", display,
		    l->o->sample_index);
		profile_free(p);
		return;
	}
	report_filter_apply(p, l->o->filter);
	if (report_filter_active(l->o->filter) && p->nsamples == 0) {
		profile_free(p);
		return;
	}
	xgrow((void **)&l->rows, &l->cap, l->n + 1, sizeof *l->rows);
	row = &l->rows[l->n++];
	memset(row, 0, sizeof *row);
	row->file = xstrdup(name);
	row->name = cmd_list_meta(p, "name");
	row->status = cmd_list_meta(p, "status");
	row->top = cmd_list_top(p, vi);
	row->time_nanos = p->time_nanos;
	row->duration_nanos = p->duration_nanos;
	row->total = profile_total(p, vi);
	numfmt_unit_init(&row->unit, p, vi);
	profile_free(p);
}

/* Slowest first; then newest first; then by file. */
static int
cmd_list_cmp(const void *a, const void *b)
{
	const struct cmd_list_row *x = a, *y = b;

	if (x->duration_nanos != y->duration_nanos)
		return x->duration_nanos > y->duration_nanos ? -1 : 1;
	if (x->time_nanos != y->time_nanos)
		return x->time_nanos > y->time_nanos ? -1 : 1;
	return strcmp(x->file, y->file);
}

/* "2026-12-01 09:31:02.123" (UTC), or "-". */
static const char *
cmd_list_time(char *buf, size_t len, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	if (ns <= 0 || gmtime_r(&t, &tm) == NULL)
		return "-";
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03d", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    (int)(ns / 1000000 % 1000));
	return buf;
}

/* Write the listing (output_write_fn). */
static int
cmd_list_write(FILE *fp, void *arg)
{
	struct cmd_list *l = arg;
	size_t i, top = l->o->top > 0 ? l->o->top : 50;
	char when[40], dur[48], total[48];

	if (l->n == 0) {
		fprintf(fp, "no profiles in '%s'%s\n", l->dir,
		    report_filter_active(l->o->filter) ? " match the filters" : "");
		return fflush(fp);
	}
	fprintf(fp, "%zu profile%s in '%s'%s%s, slowest first\n", l->n, l->n == 1 ? "" : "s",
	    l->dir, report_filter_active(l->o->filter) ? " matching " : "",
	    report_filter_describe(l->o->filter));
	fprintf(fp, "%-23s  %10s  %-6s  %-28s  %10s  %-30s  %s\n", "BEGAN (UTC)", "DURATION",
	    "STATUS", "NAME", "SAMPLED", "TOP FUNCTION (SELF)", "FILE");
	for (i = 0; i < l->n && i < top; i++) {
		const struct cmd_list_row *r = &l->rows[i];

		snprintf(dur, sizeof dur, "%.1f ms", (double)r->duration_nanos / 1e6);
		numfmt_value(total, sizeof total, &r->unit, r->total);
		if (*r->unit.suffix != '\0') {
			size_t n = strlen(total);

			snprintf(total + n, sizeof total - n, " %s", r->unit.suffix);
		}
		fprintf(fp, "%-23s  %10s  %-6s  %-28s  %10s  %-30s  %s\n",
		    cmd_list_time(when, sizeof when, r->time_nanos), dur,
		    r->status ? r->status : "-", r->name ? r->name : "-", total,
		    r->top ? r->top : "-", r->file);
	}
	if (l->n > top)
		fprintf(fp, "(%zu more; --top N shows more)\n", l->n - top);
	return fflush(fp);
}

int
cmd_report_list(const struct cmd_list_opts *o)
{
	struct cmd_list l;
	const struct format *fmt;
	struct dirent *de;
	DIR *d;
	size_t seen = 0, i;
	char err[512];
	int fd, rc;

	memset(&l, 0, sizeof l);
	l.dir = o->dir;
	l.o = o;
	fd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		error_print("cannot list '%s': %s", o->dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return RPERF_EXIT_FAILURE;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (++seen > CMD_LIST_MAX_FILES) {
			error_note("'%s' has more than %d entries: the rest is not listed",
			    o->dir, CMD_LIST_MAX_FILES);
			break;
		}
		/* Profiles only: names that select a readable format. */
		fmt = format_by_path(de->d_name, 0);
		if (fmt == NULL || fmt->parse == NULL)
			continue;
		cmd_list_add(&l, dirfd(d), de->d_name);
	}
	closedir(d);
	qsort(l.rows, l.n, sizeof *l.rows, cmd_list_cmp);
	rc = output_write_file(o->output, cmd_list_write, &l, err, sizeof err);
	if (rc != 0)
		error_print("%s", err);
	for (i = 0; i < l.n; i++) {
		free(l.rows[i].file);
		free(l.rows[i].name);
		free(l.rows[i].status);
		free(l.rows[i].top);
	}
	free(l.rows);
	return rc != 0 ? RPERF_EXIT_FAILURE : RPERF_EXIT_OK;
}
