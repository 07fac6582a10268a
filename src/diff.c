/*
 * diff.c: per-function deltas between two profiles (see diff.h).
 *
 * Each profile is folded into per-name sums in one pass over its samples
 * (a name counts once per sample for the cumulative value, however often
 * it recurs on the stack), so the cost is linear in the frames of both.
 * Orders are total (delta, then name), so the same pair of profiles gives
 * the same report.  Scaling for --normalize happens on the sums, in
 * doubles, rounded once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "error.h"
#include "xmalloc.h"

/* Widest function name column before names overflow it. */
#define DIFF_NAME_WIDTH 60

/* Add value VI of P to D's rows, into the base or the target columns. */
static void
diff_add(struct diff *d, const struct profile *p, size_t vi, int base)
{
	str_id *ids = xcalloc(p->nfunctions + 1, sizeof *ids);
	size_t *stamp, i;
	void *v;

	for (i = 0; i < p->nfunctions; i++) {
		const char *name = profile_str(p, p->functions[i].name);

		ids[i] = profile_intern(d->names, *name ? name : "[unknown]");
	}
	if (d->names->nstrings > d->nrows) {
		size_t cap = d->nrows;

		v = d->rows;
		xgrow(&v, &cap, d->names->nstrings, sizeof *d->rows);
		d->rows = v;
		memset(d->rows + d->nrows, 0, (d->names->nstrings - d->nrows) *
		    sizeof *d->rows);
		d->nrows = d->names->nstrings;
	}
	stamp = xcalloc(d->nrows, sizeof *stamp);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		int64_t w = profile_sample_values(p, s)[vi];
		uint32_t j;

		for (j = 0; j < s->nloc; j++) {
			uint64_t fn = profile_location_function_id(p, locs[j]);
			struct diff_row *r;

			if (fn == 0)
				continue;
			r = &d->rows[ids[fn - 1]];
			if (j == 0) {
				int64_t *self = base ? &r->base_self :
				    &r->target_self;

				*self = profile_add_sat(*self, w);
			}
			if (stamp[ids[fn - 1]] != i + 1) {
				int64_t *cum = base ? &r->base_cum :
				    &r->target_cum;

				stamp[ids[fn - 1]] = i + 1;
				*cum = profile_add_sat(*cum, w);
			}
		}
	}
	free(stamp);
	free(ids);
}

/* V times SCALE, rounded. */
static int64_t
diff_scale(int64_t v, double scale)
{
	double x = (double)v * scale;

	if (x >= 9.2e18)
		return INT64_MAX;
	if (x <= -9.2e18)
		return INT64_MIN;
	return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

int
diff_compute(struct diff *d, const struct profile *base, size_t bvi,
    const struct profile *target, size_t tvi, int normalize, char *err,
    size_t errlen)
{
	const char *bu, *tu;
	size_t i;

	memset(d, 0, sizeof *d);
	d->names = profile_new();
	d->scale = 1.0;
	bvi = profile_value_index(base, bvi);
	tvi = profile_value_index(target, tvi);
	bu = bvi < base->nvalue_types ?
	    profile_str(base, base->value_types[bvi].unit) : "";
	tu = tvi < target->nvalue_types ?
	    profile_str(target, target->value_types[tvi].unit) : "";
	numfmt_unit_init(&d->unit, target, tvi);
	if (bvi < base->nvalue_types && tvi < target->nvalue_types &&
	    strcmp(bu, tu) != 0) {
		error_set(err, errlen, "cannot compare values in %s with "
		    "values in %s", *bu ? bu : "no unit", *tu ? tu : "no unit");
		return -1;
	}
	if (bvi < base->nvalue_types) {
		diff_add(d, base, bvi, 1);
		d->base_raw_total = profile_total(base, bvi);
	}
	if (tvi < target->nvalue_types) {
		diff_add(d, target, tvi, 0);
		d->target_total = profile_total(target, tvi);
	}
	d->base_total = d->base_raw_total;
	if (normalize && d->base_raw_total != 0 && d->target_total != 0) {
		d->scale = (double)d->target_total /
		    (double)d->base_raw_total;
		for (i = 0; i < d->nrows; i++) {
			d->rows[i].base_self = diff_scale(d->rows[i].base_self,
			    d->scale);
			d->rows[i].base_cum = diff_scale(d->rows[i].base_cum,
			    d->scale);
		}
		d->base_total = d->target_total;
	}
	for (i = 0; i < d->nrows; i++)
		d->rows[i].name = profile_str(d->names, (str_id)i);
	return 0;
}

void
diff_release(struct diff *d)
{
	free(d->rows);
	profile_free(d->names);
	memset(d, 0, sizeof *d);
}

/* The size of the change of row R in the flat (CUM 0) or cumulative
 * (CUM 1) table: a magnitude, since the difference of two int64_t values
 * need not fit in one. */
static uint64_t
diff_gap(const struct diff_row *r, int cum)
{
	return cum ? numfmt_gap(r->base_cum, r->target_cum) :
	    numfmt_gap(r->base_self, r->target_self);
}

/* Whether the comparators below order by cumulative values. */
static int diff_sort_cum;

/* Order rows by absolute delta, largest first, then by name. */
static int
diff_cmp(const void *a, const void *b)
{
	const struct diff_row *x = *(const struct diff_row *const *)a;
	const struct diff_row *y = *(const struct diff_row *const *)b;
	uint64_t dx = diff_gap(x, diff_sort_cum);
	uint64_t dy = diff_gap(y, diff_sort_cum);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The change column of a row: "+12.5%", "new" or "vanished". */
static void
diff_change(char *buf, size_t len, int64_t before, int64_t after)
{
	if (before == 0 && after != 0)
		snprintf(buf, len, "new");
	else if (after == 0 && before != 0)
		snprintf(buf, len, "vanished");
	else if (before == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", 100.0 * ((double)after -
		    (double)before) / (double)before);
}

/* Print the flat (CUM 0) or cumulative (CUM 1) table of D. */
static void
diff_table(const struct diff *d, FILE *fp, size_t top, int cum)
{
	const struct numfmt_unit *u = &d->unit;
	const struct diff_row **rows;
	char b[48], t[48], dl[48], ch[32], hb[32], ht[32], hd[32];
	size_t i, n = 0, shown, wb, wt, wd, wc = strlen("Change"), nw;

	rows = xcalloc(d->nrows + 1, sizeof *rows);
	for (i = 1; i < d->nrows; i++) {
		if (diff_gap(&d->rows[i], cum) != 0)
			rows[n++] = &d->rows[i];
	}
	diff_sort_cum = cum;
	qsort(rows, n, sizeof *rows, diff_cmp);
	shown = n < top ? n : top;

	snprintf(hb, sizeof hb, "Base%s%s", *u->suffix ? " " : "", u->suffix);
	snprintf(ht, sizeof ht, "Target%s%s", *u->suffix ? " " : "",
	    u->suffix);
	snprintf(hd, sizeof hd, "Delta%s%s", *u->suffix ? " " : "",
	    u->suffix);
	wb = strlen(hb), wt = strlen(ht), wd = strlen(hd);
	nw = strlen("Function");
	for (i = 0; i < shown; i++) {
		const struct diff_row *r = rows[i];
		int64_t before = cum ? r->base_cum : r->base_self;
		int64_t after = cum ? r->target_cum : r->target_self;

		numfmt_value(b, sizeof b, u, before);
		numfmt_value(t, sizeof t, u, after);
		numfmt_change(dl, sizeof dl, u, before, after);
		diff_change(ch, sizeof ch, before, after);
		wb = strlen(b) > wb ? strlen(b) : wb;
		wt = strlen(t) > wt ? strlen(t) : wt;
		wd = strlen(dl) > wd ? strlen(dl) : wd;
		wc = strlen(ch) > wc ? strlen(ch) : wc;
		if (strlen(r->name) > nw)
			nw = strlen(r->name);
	}
	fprintf(fp, "\n%s delta (top %zu of %zu changed functions):\n",
	    cum ? "Cumulative" : "Flat", shown, n);
	fprintf(fp, "  %*s  %*s  %*s  %*s  %s\n", (int)wb, hb, (int)wt, ht,
	    (int)wd, hd, (int)wc, "Change", "Function");
	for (i = 0; i < shown; i++) {
		const struct diff_row *r = rows[i];
		int64_t before = cum ? r->base_cum : r->base_self;
		int64_t after = cum ? r->target_cum : r->target_self;

		diff_change(ch, sizeof ch, before, after);
		fprintf(fp, "  %*s  %*s  %*s  %*s  %s\n", (int)wb,
		    numfmt_value(b, sizeof b, u, before), (int)wt,
		    numfmt_value(t, sizeof t, u, after), (int)wd,
		    numfmt_change(dl, sizeof dl, u, before, after),
		    (int)wc, ch, r->name);
	}
	free(rows);
}

int
diff_write(const struct diff *d, FILE *fp, const struct diff_opts *o)
{
	const struct numfmt_unit *u = &d->unit;
	char b[48], t[48], dl[48], ch[32];
	size_t top = o && o->top ? o->top : DIFF_DEFAULT_TOP;

	fprintf(fp, "%-9s%s, total %s%s%s\n", "Base:",
	    o && o->base_name ? o->base_name : "base",
	    numfmt_value(b, sizeof b, u, d->base_raw_total),
	    *u->suffix ? " " : "", u->suffix);
	fprintf(fp, "%-9s%s, total %s%s%s\n", "Target:",
	    o && o->target_name ? o->target_name : "target",
	    numfmt_value(t, sizeof t, u, d->target_total),
	    *u->suffix ? " " : "", u->suffix);
	if (d->scale != 1.0)
		fprintf(fp, "%-9sbase scaled by %.4g to the target's total\n",
		    "Scale:", d->scale);
	diff_change(ch, sizeof ch, d->base_total, d->target_total);
	fprintf(fp, "%-9s%s%s%s (%s)\n", "Delta:",
	    numfmt_change(dl, sizeof dl, u, d->base_total,
	    d->target_total), *u->suffix ? " " : "", u->suffix, ch);
	if (o && o->filters && *o->filters)
		fprintf(fp, "%-9s%s\n", "Filters:", o->filters);
	diff_table(d, fp, top, 0);
	diff_table(d, fp, top, 1);
	if (fflush(fp) != 0 || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* Order doubles ascending (qsort). */
static int
diff_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
diff_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, diff_cmp_double);
	if (n % 2 == 1)
		return v[n / 2];
	return v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

size_t
diff_median_run(const double *v, size_t n)
{
	size_t i, j, below, equal;

	/* The run with fewer than half the others below it and enough
	 * equal or below to reach the lower middle; quadratic, but N is a
	 * handful of runs and the order stays stable. */
	for (i = 0; i < n; i++) {
		below = equal = 0;
		for (j = 0; j < n; j++) {
			if (v[j] < v[i])
				below++;
			else if (v[j] == v[i] && j < i)
				equal++;
		}
		if (below + equal == (n - 1) / 2)
			return i;
	}
	return 0;
}

int
diff_gate_tripped(const struct diff_gate *g)
{
	if (g->before <= 0)
		return g->after > g->before;
	return 100.0 * (g->after - g->before) / g->before > g->limit;
}

/* The change from BEFORE to AFTER as "+12.3%", or "new". */
static void
diff_gate_change(char *buf, size_t len, double before, double after)
{
	if (before <= 0 && after > before)
		snprintf(buf, len, "new");
	else if (before <= 0)
		snprintf(buf, len, "+0.0%%");
	else
		snprintf(buf, len, "%+.1f%%", 100.0 * (after - before) / before);
}

/* Value V of G's side in D's unit, or as a percentage with SHARE. */
static char *
diff_gate_value(char *buf, size_t len, const struct diff *d,
    const struct diff_gate *g, double v)
{
	const struct numfmt_unit *u = &d->unit;
	char n[48];

	if (g->share) {
		snprintf(buf, len, "%.1f%%", 100.0 * v);
		return buf;
	}
	numfmt_value(n, sizeof n, u, diff_scale(1, v));
	snprintf(buf, len, "%s%s%s", n, *u->suffix ? " " : "", u->suffix);
	return buf;
}

/* Order rows by cumulative growth, largest first, then by name. */
static int
diff_cmp_growth(const void *a, const void *b)
{
	const struct diff_row *x = *(const struct diff_row *const *)a;
	const struct diff_row *y = *(const struct diff_row *const *)b;
	double gx = (double)x->target_cum - (double)x->base_cum;
	double gy = (double)y->target_cum - (double)y->base_cum;

	if (gx != gy)
		return gx > gy ? -1 : 1;
	return strcmp(x->name, y->name);
}

int
diff_gate_write(const struct diff *d, const struct diff_gate *g, FILE *fp)
{
	struct diff_row *grown, **rows;
	char b[64], t[64], ch[32], runs[64];
	size_t i, n = 0, top = g->top ? g->top : DIFF_GATE_TOP;
	size_t nw = 0, bw = 0, tw = 0;
	int tripped = diff_gate_tripped(g);

	runs[0] = '\0';
	if (g->nbase > 1 || g->ntarget > 1)
		snprintf(runs, sizeof runs, "; medians of %zu and %zu runs",
		    g->nbase, g->ntarget);
	diff_gate_change(ch, sizeof ch, g->before, g->after);
	fprintf(fp, "%s: %s: %s %s -> %s%s (%s, limit %g%%%s)\n", g->prefix,
	    tripped ? "regression" : "within the limit", g->what,
	    diff_gate_value(b, sizeof b, d, g, g->before),
	    diff_gate_value(t, sizeof t, d, g, g->after),
	    g->share ? " of the total" : "", ch, g->limit, runs);

	/* Name what grew, the rows copied with the base scaled as the gate
	 * sees it. */
	grown = xcalloc(d->nrows + 1, sizeof *grown);
	rows = xcalloc(d->nrows + 1, sizeof *rows);
	for (i = 1; tripped && i < d->nrows; i++) {
		const struct diff_row *r = &d->rows[i];
		struct diff_row *c = &grown[n];

		if (g->named != NULL ? !g->named(r->name, g->named_arg) :
		    r->base_cum == d->base_total &&
		    r->target_cum == d->target_total)
			continue;
		*c = *r;
		c->base_cum = diff_scale(r->base_cum, g->scale);
		if (c->target_cum > c->base_cum) {
			rows[n] = c;
			n++;
		}
	}
	qsort(rows, n, sizeof *rows, diff_cmp_growth);
	if (n > top)
		n = top;
	/* Columns, so that the figures line up. */
	for (i = 0; i < n; i++) {
		const struct numfmt_unit *u = &d->unit;

		if (strlen(rows[i]->name) > nw)
			nw = strlen(rows[i]->name);
		if (strlen(numfmt_value(b, sizeof b, u, rows[i]->base_cum)) > bw)
			bw = strlen(b);
		if (strlen(numfmt_value(t, sizeof t, u, rows[i]->target_cum)) > tw)
			tw = strlen(t);
	}
	for (i = 0; i < n; i++) {
		const struct diff_row *r = rows[i];
		const struct numfmt_unit *u = &d->unit;

		numfmt_value(b, sizeof b, u, r->base_cum);
		numfmt_value(t, sizeof t, u, r->target_cum);
		diff_gate_change(ch, sizeof ch, (double)r->base_cum,
		    (double)r->target_cum);
		fprintf(fp, "  %-*s  %*s%s%s -> %*s%s%s (%s)\n", (int)nw,
		    r->name, (int)bw, b, *u->suffix ? " " : "", u->suffix,
		    (int)tw, t, *u->suffix ? " " : "", u->suffix, ch);
	}
	free(rows);
	free(grown);
	if (fflush(fp) != 0 || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
