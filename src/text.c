/*
 * text.c: the human-readable report (see text.h).
 *
 * Everything is computed from the model in one pass per table and printed
 * with column widths measured from the rows actually shown, so columns line
 * up whatever the magnitudes.  Orders are total: ties fall back to names
 * and then ids, so the same profile always gives the same report.  Times
 * are shown in milliseconds when the value is in nanoseconds; other units
 * are printed as integers (numfmt.h).  Nothing here changes the profile.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "secret.h"
#include "text.h"
#include "timeline.h"
#include "xmalloc.h"

/* Widest function name column before names overflow it. */
#define TEXT_NAME_WIDTH 60

/* One row of a function table. */
struct text_func {
	size_t id;		/* function index + 1 */
	const char *name;
	char *where;		/* "file:line" or "" */
	int64_t self, cum;
};

/* One row of the thread table. */
struct text_thread {
	int has_num;
	int64_t num;
	const char *name;
	int64_t value;
};

/* The header of a table's value column for unit U. */
static void
text_value_head(char *buf, size_t len, const struct numfmt_unit *u)
{
	if (u->ms)
		snprintf(buf, len, "Time ms");
	else if (*u->suffix != '\0')
		snprintf(buf, len, "Value %s", u->suffix);
	else
		snprintf(buf, len, "Count");
}

/* VALUE (a comment's text) with separators when it is an integer, else
 * as it is. */
static const char *
text_numeric(char *buf, size_t len, const char *value)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(value, &end, 10);
	if (*value != '\0' && *end == '\0' && errno == 0)
		return numfmt_int(buf, len, n);
	return value;
}

/* Print a comment that holds a count, with separators when numeric. */
static void
text_print_count(FILE *fp, const char *title, const char *value)
{
	char buf[48];

	fprintf(fp, "%-10s%s\n", title, text_numeric(buf, sizeof buf, value));
}

/* "Capture:  GET /users/:id, status 200": what Rperf.capture_end said of
 * a request's or job's own profile. */
static void
text_capture_line(const struct profile *p, FILE *fp)
{
	static const char *const keys[] = { "kind", "status", "queue", "pid" };
	const char *name = profile_comment_value(p, PROFILE_COMMENT_CAPTURE "name");
	char key[64];
	size_t i;

	if (name == NULL)
		return;
	fprintf(fp, "%-10s%s", "Capture:", name);
	for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		const char *v;

		snprintf(key, sizeof key, "%s%s", PROFILE_COMMENT_CAPTURE, keys[i]);
		if ((v = profile_comment_value(p, key)) != NULL)
			fprintf(fp, ", %s %s", keys[i], v);
	}
	fputc('\n', fp);
}

/*
 * cpu mode: the process's CPU time no sample bills, when there is any to
 * speak of (10 ms, or 1%): time that would otherwise vanish
 * without a word (threads rperf could not reach, see rperf-record(1)).
 */
static void
text_print_unattributed(const struct profile *p, FILE *fp)
{
	const char *u = profile_comment_value(p, PROFILE_COMMENT_UNATTRIBUTED);
	const char *c = profile_comment_value(p, PROFILE_COMMENT_PROCESS_CPU);
	struct numfmt_unit ms = { 1, "ms" };
	char a[64], b[64], pct[32];
	long long un, proc;

	if (u == NULL || c == NULL || sscanf(u, "%lld", &un) != 1 ||
	    sscanf(c, "%lld", &proc) != 1 || proc <= 0)
		return;
	if (un < 10000000 && un * 100 < proc)
		return;
	numfmt_pct(pct, sizeof pct, (double)un, (double)proc);
	fprintf(fp, "%-10s%s ms of the process's %s ms of CPU (%s) not billed to any sample\n",
	    "Unbilled:", numfmt_value(a, sizeof a, &ms, un), numfmt_value(b, sizeof b, &ms, proc),
	    pct);
}

/* Print the header lines. */
static void
text_print_header(const struct profile *p, FILE *fp, size_t vi,
    const struct numfmt_unit *u, int64_t total)
{
	const char *command = profile_comment_value(p,
	    PROFILE_COMMENT_COMMAND);
	const char *mode = profile_comment_value(p, PROFILE_COMMENT_MODE);
	const char *freq = profile_comment_value(p, PROFILE_COMMENT_FREQUENCY);
	const char *alloc_rate = profile_comment_value(p, PROFILE_COMMENT_ALLOC_RATE);
	const char *samples = profile_comment_value(p,
	    PROFILE_COMMENT_SAMPLES);
	const char *triggers = profile_comment_value(p,
	    PROFILE_COMMENT_TRIGGERS);
	const char *rperf = profile_comment_value(p, PROFILE_COMMENT_RPERF);
	const char *ruby = profile_comment_value(p, PROFILE_COMMENT_RUBY);
	const char *type = profile_str(p, p->value_types[vi].type);
	char buf[64];

	if (rperf != NULL || ruby != NULL) {
		fprintf(fp, "%-10s", "Recorder:");
		if (rperf != NULL)
			fprintf(fp, "rperf %s%s", rperf, ruby ? ", " : "");
		if (ruby != NULL)
			fprintf(fp, "ruby %s", ruby);
		fputc('\n', fp);
	}
	if (command != NULL) {
		/* profiles of older rperfs stored it with its secrets */
		char *clean = secret_scrub_command(command);

		fprintf(fp, "%-10s%s\n", "Command:", clean);
		free(clean);
	}
	text_capture_line(p, fp);
	{
		const char *full = profile_comment_value(p, PROFILE_COMMENT_TIMELINE_FULL);

		if (full != NULL)
			fprintf(fp, "%-10sfull (--timeline-max): %s\n", "Timeline:", full);
		if ((full = profile_comment_value(p, PROFILE_COMMENT_WINDOW)) != NULL)
			fprintf(fp, "%-10s%s after the start\n", "Window:", full);
	}
	fprintf(fp, "%-10s%s", "Mode:", mode ? mode : type);
	if (freq != NULL)
		fprintf(fp, ", %s Hz", text_numeric(buf, sizeof buf, freq));
	if (alloc_rate != NULL)
		fprintf(fp, ", 1 allocation in %s", text_numeric(buf, sizeof buf, alloc_rate));
	fputc('\n', fp);
	fprintf(fp, "%-10s%s%s%s (%s)\n", "Total:",
	    numfmt_value(buf, sizeof buf, u, total), *u->suffix ? " " : "",
	    u->suffix, type);
	if (p->duration_nanos > 0) {
		struct numfmt_unit ms = { 1, "ms" };

		fprintf(fp, "%-10s%s ms\n", "Duration:",
		    numfmt_value(buf, sizeof buf, &ms, p->duration_nanos));
	}
	if (samples != NULL)
		text_print_count(fp, "Samples:", samples);
	else {
		snprintf(buf, sizeof buf, "%zu", p->nsamples);
		text_print_count(fp, "Samples:", buf);
	}
	if (triggers != NULL)
		text_print_count(fp, "Triggers:", triggers);
	text_print_unattributed(p, fp);
}

/* Order functions by self value, descending, then name, location, id. */
static int
text_cmp_self(const void *a, const void *b)
{
	const struct text_func *fa = a, *fb = b;
	int c;

	if (fa->self != fb->self)
		return fa->self > fb->self ? -1 : 1;
	if ((c = strcmp(fa->name, fb->name)) != 0)
		return c;
	if ((c = strcmp(fa->where, fb->where)) != 0)
		return c;
	return fa->id < fb->id ? -1 : fa->id > fb->id;
}

/* Order functions by cumulative value, descending, then as text_cmp_self. */
static int
text_cmp_cum(const void *a, const void *b)
{
	const struct text_func *fa = a, *fb = b;

	if (fa->cum != fb->cum)
		return fa->cum > fb->cum ? -1 : 1;
	return text_cmp_self(a, b);
}

/* Print the top rows of FUNCS (already sorted) by self or cumulative. */
static void
text_print_functions(FILE *fp, const struct text_func *all, size_t n,
    size_t nall, size_t top, int cum, const struct numfmt_unit *u,
    int64_t total, double min_pct)
{
	char buf[64], pct[32], head[64];
	size_t i, rows = 0, vw, nw = strlen("Function"), len;
	const struct text_func **funcs;

	/* The rows worth something, in order (negative values included). */
	funcs = xcalloc(n ? n : 1, sizeof *funcs);
	for (i = 0; i < n && rows < top; i++) {
		int64_t v = cum ? all[i].cum : all[i].self;

		if (v != 0 && (min_pct <= 0 ||
		    100.0 * (double)v >= min_pct * (double)total))
			funcs[rows++] = &all[i];
	}

	snprintf(head, sizeof head, "%s%s%s", cum ? "Cum" : "Self",
	    *u->suffix ? " " : "", u->suffix);
	vw = strlen(head);
	for (i = 0; i < rows; i++) {
		numfmt_value(buf, sizeof buf, u, cum ? funcs[i]->cum :
		    funcs[i]->self);
		if (strlen(buf) > vw)
			vw = strlen(buf);
		len = strlen(funcs[i]->name);
		if (len > nw)
			nw = len > TEXT_NAME_WIDTH ? TEXT_NAME_WIDTH : len;
	}

	fprintf(fp, "\n%s (top %zu of %zu functions):\n",
	    cum ? "Cumulative profile" : "Flat profile", rows, nall);
	fprintf(fp, "  %*s  %6s  %-*s  %s\n", (int)vw, head, "%", (int)nw,
	    "Function", "Location");
	for (i = 0; i < rows; i++) {
		int64_t v = cum ? funcs[i]->cum : funcs[i]->self;

		numfmt_value(buf, sizeof buf, u, v);
		numfmt_pct(pct, sizeof pct, v, total);
		if (*funcs[i]->where == '\0')
			fprintf(fp, "  %*s  %6s  %s\n", (int)vw, buf, pct,
			    funcs[i]->name);
		else
			fprintf(fp, "  %*s  %6s  %-*s  %s\n", (int)vw, buf,
			    pct, (int)nw, funcs[i]->name, funcs[i]->where);
	}
	free(funcs);
}

/* Build the function rows and print the flat and cumulative tables. */
static void
text_functions(const struct profile *p, FILE *fp, size_t vi, size_t top,
    int sort_cum, double min_pct, const struct numfmt_unit *u, int64_t total)
{
	struct text_func *funcs, *rows;
	size_t *stamp, i, n = 0, pass;
	uint32_t j;

	if (p->nfunctions == 0)
		return;
	funcs = xcalloc(p->nfunctions, sizeof *funcs);
	stamp = xcalloc(p->nfunctions, sizeof *stamp);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		int64_t w = profile_sample_values(p, s)[vi];

		for (j = 0; j < s->nloc; j++) {
			uint64_t fn = profile_location_function_id(p, locs[j]);
			size_t f;

			if (fn == 0)
				continue;
			f = fn - 1;
			if (j == 0)
				funcs[f].self = profile_add_sat(funcs[f].self,
				    w);
			if (stamp[f] != i + 1) {
				stamp[f] = i + 1;
				funcs[f].cum = profile_add_sat(funcs[f].cum,
				    w);
			}
		}
	}
	free(stamp);

	rows = xcalloc(p->nfunctions, sizeof *rows);
	for (i = 0; i < p->nfunctions; i++) {
		const struct profile_function *f = &p->functions[i];
		const char *file = profile_str(p, f->filename);

		if (funcs[i].self == 0 && funcs[i].cum == 0)
			continue;
		rows[n] = funcs[i];
		rows[n].id = i + 1;
		rows[n].name = profile_str(p, f->name);
		if (*rows[n].name == '\0')
			rows[n].name = "[unknown]";
		if (*file == '\0')
			rows[n].where = xstrdup("");
		else if (f->start_line > 0)
			rows[n].where = xasprintf("%s:%" PRId64, file,
			    f->start_line);
		else
			rows[n].where = xstrdup(file);
		n++;
	}
	for (pass = 0; pass < 2; pass++) {
		int cum = (pass == 0) == (sort_cum != 0);
		size_t shown = 0;

		qsort(rows, n, sizeof *rows, cum ? text_cmp_cum :
		    text_cmp_self);
		/* Sorted by value, so rows worth 0 are at the end (or not). */
		for (i = 0; i < n; i++) {
			if ((cum ? rows[i].cum : rows[i].self) != 0)
				shown++;
		}
		text_print_functions(fp, rows, n, shown, top, cum, u, total,
		    min_pct);
	}
	for (i = 0; i < n; i++)
		free(rows[i].where);
	free(rows);
	free(funcs);
}

/* Print the VM-state breakdown when the profile records VM states. */
static void
text_states_table(const struct profile *p, FILE *fp, size_t vi,
    const struct numfmt_unit *u, int64_t total)
{
	int64_t sums[PROFILE_NSTATES + 2] = { 0 };
	const char *titles[PROFILE_NSTATES + 2];
	char buf[64], pct[32], head[64];
	size_t i, k, vw;
	int any = profile_comment_value(p, PROFILE_COMMENT_RPERF) != NULL;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct profile_vm_state st = profile_sample_state(p, s);
		int64_t w = profile_sample_values(p, s)[vi];

		k = 0;		/* normal execution */
		if (st.gvl != NULL || st.gc != NULL) {
			/* A known GVL state first, as the table lists it. */
			any = 1;
			if (st.gvl_state >= 0)
				k = (size_t)st.gvl_state + 1;
			else if (st.gc_state >= 0)
				k = (size_t)st.gc_state + 1;
			else
				k = PROFILE_NSTATES + 1;	/* other */
		}
		sums[k] = profile_add_sat(sums[k], w);
	}
	if (!any)
		return;
	titles[0] = "normal execution";
	for (k = 0; k < PROFILE_NSTATES; k++)
		titles[k + 1] = profile_states[k].title;
	titles[PROFILE_NSTATES + 1] = "other VM state";

	text_value_head(head, sizeof head, u);
	vw = strlen(head);
	for (k = 0; k < PROFILE_NSTATES + 2; k++) {
		numfmt_value(buf, sizeof buf, u, sums[k]);
		if (strlen(buf) > vw)
			vw = strlen(buf);
	}
	fprintf(fp, "\nVM state:\n");
	fprintf(fp, "  %*s  %6s  %s\n", (int)vw, head, "%", "State");
	for (k = 0; k < PROFILE_NSTATES + 2; k++) {
		if (k == PROFILE_NSTATES + 1 && sums[k] == 0)
			continue;
		fprintf(fp, "  %*s  %6s  %s\n", (int)vw,
		    numfmt_value(buf, sizeof buf, u, sums[k]),
		    numfmt_pct(pct, sizeof pct, sums[k], total), titles[k]);
	}
}

/* Order threads by number, then name (to group equal ones). */
static int
text_cmp_thread_key(const void *a, const void *b)
{
	const struct text_thread *ta = a, *tb = b;

	if (ta->has_num != tb->has_num)
		return ta->has_num ? -1 : 1;
	if (ta->num != tb->num)
		return ta->num < tb->num ? -1 : 1;
	return strcmp(ta->name, tb->name);
}

/* Order threads by value, descending, then as text_cmp_thread_key. */
static int
text_cmp_thread(const void *a, const void *b)
{
	const struct text_thread *ta = a, *tb = b;

	if (ta->value != tb->value)
		return ta->value > tb->value ? -1 : 1;
	return text_cmp_thread_key(a, b);
}

/* Print the thread table when samples carry thread labels. */
static void
text_threads_table(const struct profile *p, FILE *fp, size_t vi,
    size_t top, const struct numfmt_unit *u, int64_t total)
{
	struct text_thread *t;
	char buf[64], pct[32], head[64], num[32];
	size_t i, j, n = 0, nw = strlen("Name"), tw = strlen("Thread"), vw;
	int any = 0;

	if (p->nsamples == 0)
		return;
	t = xcalloc(p->nsamples, sizeof *t);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l;
		const char *name;

		l = profile_sample_label(p, s, "thread");
		name = profile_sample_label_str(p, s, "thread_name");
		if (l != NULL && l->str == 0) {
			t[i].has_num = 1;
			t[i].num = l->num;
			any = 1;
		}
		t[i].name = name ? name : "";
		t[i].value = profile_sample_values(p, s)[vi];
	}
	if (!any) {
		free(t);
		return;
	}
	qsort(t, p->nsamples, sizeof *t, text_cmp_thread_key);
	for (i = 0; i < p->nsamples; i = j) {
		t[n] = t[i];
		for (j = i + 1; j < p->nsamples &&
		    text_cmp_thread_key(&t[i], &t[j]) == 0; j++)
			t[n].value = profile_add_sat(t[n].value, t[j].value);
		n++;
	}
	qsort(t, n, sizeof *t, text_cmp_thread);
	if (n > top)
		n = top;

	text_value_head(head, sizeof head, u);
	vw = strlen(head);
	for (i = 0; i < n; i++) {
		numfmt_value(buf, sizeof buf, u, t[i].value);
		if (strlen(buf) > vw)
			vw = strlen(buf);
		if (strlen(t[i].name) > nw)
			nw = strlen(t[i].name);
		snprintf(num, sizeof num, "%" PRId64, t[i].num);
		if (strlen(num) > tw)
			tw = strlen(num);
	}
	if (nw > TEXT_NAME_WIDTH)
		nw = TEXT_NAME_WIDTH;
	fprintf(fp, "\nThreads:\n");
	fprintf(fp, "  %*s  %-*s  %*s  %6s\n", (int)tw, "Thread", (int)nw,
	    "Name", (int)vw, head, "%");
	for (i = 0; i < n; i++) {
		if (t[i].has_num)
			snprintf(num, sizeof num, "%" PRId64, t[i].num);
		else
			snprintf(num, sizeof num, "-");
		fprintf(fp, "  %*s  %-*s  %*s  %6s\n", (int)tw, num, (int)nw,
		    t[i].name, (int)vw,
		    numfmt_value(buf, sizeof buf, u, t[i].value),
		    numfmt_pct(pct, sizeof pct, t[i].value, total));
	}
	free(t);
}

/* One (label key, value) of the labels table and what it got. */
struct text_label {
	str_id key;
	str_id str;		/* 0: numeric */
	int64_t num;
	int64_t value;
};

/* By key name, then value (strings before numbers). */
static int
text_cmp_label_key(const struct profile *p, const struct text_label *a,
    const struct text_label *b)
{
	int c = strcmp(profile_str(p, a->key), profile_str(p, b->key));

	if (c != 0)
		return c;
	if ((a->str == 0) != (b->str == 0))
		return a->str == 0 ? 1 : -1;
	if (a->str != 0)
		return strcmp(profile_str(p, a->str), profile_str(p, b->str));
	return a->num < b->num ? -1 : a->num > b->num;
}

static const struct profile *text_label_profile;	/* for qsort */

static int
text_cmp_label(const void *a, const void *b)
{
	return text_cmp_label_key(text_label_profile, a, b);
}

/* By key name, then value, descending. */
static int
text_cmp_label_value(const void *a, const void *b)
{
	const struct text_label *x = a, *y = b;
	int c = strcmp(profile_str(text_label_profile, x->key),
	    profile_str(text_label_profile, y->key));

	if (c != 0)
		return c;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return text_cmp_label_key(text_label_profile, x, y);
}

/*
 * The labels table, when samples carry labels of their own (Rperf.label,
 * the servers' endpoint and job, pid, an allocation's class): per key,
 * its top TOP values by value, and what had no such label.
 */
static void
text_labels_table(const struct profile *p, FILE *fp, size_t vi, size_t top,
    const struct numfmt_unit *u, int64_t total)
{
	struct text_label *t = NULL;
	size_t i, j, k, n = 0, cap = 0, kw = strlen("Label"), lw = strlen("(unset)"), vw;
	char buf[64], pct[32], head[64], num[32];

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l = profile_sample_labels(p, s);

		for (j = 0; j < s->nlabel; j++) {
			if (profile_label_is_builtin(profile_str(p, l[j].key)))
				continue;
			xgrow((void **)&t, &cap, n + 1, sizeof *t);
			t[n].key = l[j].key;
			t[n].str = l[j].str;
			t[n].num = l[j].num;
			t[n].value = profile_sample_values(p, s)[vi];
			n++;
		}
	}
	if (n == 0)
		return;
	text_label_profile = p;
	qsort(t, n, sizeof *t, text_cmp_label);
	for (i = 0, k = 0; i < n; i = j) {
		t[k] = t[i];
		for (j = i + 1; j < n && text_cmp_label(&t[i], &t[j]) == 0; j++)
			t[k].value = profile_add_sat(t[k].value, t[j].value);
		k++;
	}
	n = k;
	qsort(t, n, sizeof *t, text_cmp_label_value);

	text_value_head(head, sizeof head, u);
	vw = strlen(head);
	for (i = 0; i < n; i++) {
		const char *v = t[i].str ? profile_str(p, t[i].str) : NULL;

		if (strlen(profile_str(p, t[i].key)) > kw)
			kw = strlen(profile_str(p, t[i].key));
		if (v == NULL) {
			snprintf(num, sizeof num, "%" PRId64, t[i].num);
			v = num;
		}
		if (strlen(v) > lw)
			lw = strlen(v);
		numfmt_value(buf, sizeof buf, u, t[i].value);
		if (strlen(buf) > vw)
			vw = strlen(buf);
	}
	if (kw > 24)
		kw = 24;
	if (lw > TEXT_NAME_WIDTH)
		lw = TEXT_NAME_WIDTH;
	fprintf(fp, "\nLabels:\n");
	fprintf(fp, "  %-*s  %-*s  %*s  %6s\n", (int)kw, "Label", (int)lw, "Value",
	    (int)vw, head, "%");
	for (i = 0; i < n; i = j) {
		int64_t keyed = 0;
		size_t shown = 0;

		for (j = i; j < n && t[j].key == t[i].key; j++) {
			keyed = profile_add_sat(keyed, t[j].value);
			if (shown++ >= top)
				continue;
			if (t[j].str == 0)
				snprintf(num, sizeof num, "%" PRId64, t[j].num);
			fprintf(fp, "  %-*s  %-*.*s  %*s  %6s\n", (int)kw,
			    j == i ? profile_str(p, t[j].key) : "", (int)lw, (int)lw,
			    t[j].str ? profile_str(p, t[j].str) : num, (int)vw,
			    numfmt_value(buf, sizeof buf, u, t[j].value),
			    numfmt_pct(pct, sizeof pct, t[j].value, total));
		}
		if (shown > top)
			fprintf(fp, "  %-*s  (%zu more values)\n", (int)kw, "", shown - top);
		if (keyed < total)
			fprintf(fp, "  %-*s  %-*s  %*s  %6s\n", (int)kw, "", (int)lw, "(unset)",
			    (int)vw, numfmt_value(buf, sizeof buf, u, total - keyed),
			    numfmt_pct(pct, sizeof pct, total - keyed, total));
	}
	free(t);
}

/* One row of the allocation sites table: a leaf function's four memory
 * values. */
struct text_site {
	size_t fn;		/* function index */
	int64_t v[4];
};

/* Order sites by bytes allocated, then objects, then function id. */
static int
text_cmp_site(const void *a, const void *b)
{
	const struct text_site *x = a, *y = b;

	if (x->v[1] != y->v[1])
		return x->v[1] > y->v[1] ? -1 : 1;
	if (x->v[0] != y->v[0])
		return x->v[0] > y->v[0] ? -1 : 1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/*
 * A memory profile (with Go's alloc_objects, alloc_space, inuse_objects
 * and inuse_space): the top TOP allocation sites, the leaf functions that
 * allocated, by bytes, with objects and what is still in use, whichever
 * value the rest of the report shows.
 */
static void
text_memory_table(const struct profile *p, FILE *fp, size_t top)
{
	static const char *const names[4] = { "alloc_objects", "alloc_space",
	    "inuse_objects", "inuse_space" };
	static const char *const heads[4] = { "Objects", "Bytes", "In use", "In use bytes" };
	struct text_site *sites;
	size_t vi[4], i, k, n = 0, rows, w[4];
	char buf[4][48];

	for (k = 0; k < 4; k++) {
		if (profile_value_by_name(p, names[k], &vi[k]) != 0)
			return;
	}
	if (p->nfunctions == 0)
		return;
	sites = xcalloc(p->nfunctions, sizeof *sites);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const int64_t *v = profile_sample_values(p, s);
		uint64_t fn;

		if (s->nloc == 0 ||
		    (fn = profile_location_function_id(p, profile_sample_locs(p, s)[0])) == 0)
			continue;
		for (k = 0; k < 4; k++)
			sites[fn - 1].v[k] = profile_add_sat(sites[fn - 1].v[k], v[vi[k]]);
	}
	for (i = 0; i < p->nfunctions; i++) {
		if (sites[i].v[0] == 0 && sites[i].v[1] == 0)
			continue;
		sites[n] = sites[i];
		sites[n++].fn = i;
	}
	qsort(sites, n, sizeof *sites, text_cmp_site);
	rows = n < top ? n : top;
	for (k = 0; k < 4; k++) {
		w[k] = strlen(heads[k]);
		for (i = 0; i < rows; i++) {
			numfmt_int(buf[k], sizeof buf[k], sites[i].v[k]);
			if (strlen(buf[k]) > w[k])
				w[k] = strlen(buf[k]);
		}
	}
	fprintf(fp, "\nAllocation sites (top %zu of %zu, by bytes allocated):\n", rows, n);
	fprintf(fp, "  %*s  %*s  %*s  %*s  Function\n", (int)w[0], heads[0], (int)w[1],
	    heads[1], (int)w[2], heads[2], (int)w[3], heads[3]);
	for (i = 0; i < rows; i++) {
		const char *name = profile_str(p, p->functions[sites[i].fn].name);

		for (k = 0; k < 4; k++)
			numfmt_int(buf[k], sizeof buf[k], sites[i].v[k]);
		fprintf(fp, "  %*s  %*s  %*s  %*s  %s\n", (int)w[0], buf[0], (int)w[1],
		    buf[1], (int)w[2], buf[2], (int)w[3], buf[3], *name ? name : "[unknown]");
	}
	free(sites);
}

/* The allocation sites table by itself (for rperf stat --alloc). */
void
text_write_alloc_sites(const struct profile *p, FILE *fp, size_t top)
{
	text_memory_table(p, fp, top ? top : TEXT_DEFAULT_TOP);
}

void
text_opts_init(struct text_opts *o)
{
	memset(o, 0, sizeof *o);
	o->top = TEXT_DEFAULT_TOP;
	o->value_index = TEXT_VALUE_DEFAULT;
}

int
text_write(const struct profile *p, FILE *fp, const struct text_opts *o)
{
	struct text_opts defaults;
	struct numfmt_unit u;
	size_t vi, top;
	int64_t total;

	if (o == NULL) {
		text_opts_init(&defaults);
		o = &defaults;
	}
	top = o->top ? o->top : TEXT_DEFAULT_TOP;
	vi = profile_value_index(p, o->value_index);

	if (p->nsamples == 0 || vi >= p->nvalue_types) {
		fprintf(fp, "profile is empty: no samples\n");
		goto out;
	}
	numfmt_unit_init(&u, p, vi);

	total = profile_total(p, vi);
	text_print_header(p, fp, vi, &u, total);
	text_functions(p, fp, vi, top, o->sort_cum, o->min_pct, &u, total);
	text_states_table(p, fp, vi, &u, total);
	text_threads_table(p, fp, vi, top, &u, total);
	text_labels_table(p, fp, vi, top, &u, total);
	{
		struct timeline tl;

		if (timeline_build(p, vi, &tl) == 0)
			timeline_write_summary(p, &tl, fp, &u, top < 10 ? top : 10);
		timeline_release(&tl);
	}
	text_memory_table(p, fp, top);
out:
	if (fflush(fp) != 0)
		return -1;
	if (ferror(fp)) {
		errno = EIO;
		return -1;
	}
	return 0;
}
