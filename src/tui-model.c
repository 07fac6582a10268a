/*
 * tui-model.c: the rows of the browser's views, computed from the profile
 * with no ncurses (see tui-int.h).  Filters are report.c's own, applied
 * to a copy of the samples the command line left, so a key's filter means
 * exactly what the option of the same name means; the trees are
 * report.c's too.  The flat table adds up like text.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tui-int.h"
#include "xmalloc.h"

void
tui_model_init(struct tui *t, struct profile *p, const struct tui_opts *o)
{
	memset(t, 0, sizeof *t);
	t->p = p;
	t->o = o;
	t->vi = profile_value_index(p, o->value_index);
	numfmt_unit_init(&t->u, p, t->vi);
	t->nall = p->nsamples;
	t->all = xcalloc(t->nall ? t->nall : 1, sizeof *t->all);
	memcpy(t->all, p->samples, t->nall * sizeof *t->all);
	t->desc = xstrdup(o->filters);
	t->total = profile_total(p, t->vi);
	t->sort_cum = o->sort_cum;
}

/* The call tree of the samples kept, or NULL when it is too large. */
static struct report_tree *
tui_build_tree(struct tui *t)
{
	struct report_tree *tree = report_tree_new();

	if (report_tree_add(tree, t->p, t->vi, 0, 1.0) != 0) {
		report_tree_free(tree);
		return NULL;
	}
	report_tree_sort(tree, 1);
	return tree;
}

void
tui_model_release(struct tui *t)
{
	size_t i;

	for (i = 0; i < t->nrules; i++)
		free(t->rules[i].arg);
	free(t->rules);
	free(t->all);
	free(t->desc);
	report_tree_free(t->tree);
}

int
tui_refilter(struct tui *t, char *err, size_t errlen)
{
	struct report_filter f;
	const char *mine;
	size_t i;

	report_filter_init(&f);
	for (i = 0; i < t->nrules; i++) {
		if (report_filter_add(&f, t->rules[i].kind, t->rules[i].arg,
		    err, errlen) != 0) {
			report_filter_release(&f);
			return -1;
		}
	}
	memcpy(t->p->samples, t->all, t->nall * sizeof *t->all);
	t->p->nsamples = t->nall;
	report_filter_apply(t->p, &f);
	t->total = profile_total(t->p, t->vi);
	/* Built here, once a filter, so that showing it costs nothing. */
	report_tree_free(t->tree);
	t->tree = tui_build_tree(t);
	mine = report_filter_describe(&f);
	free(t->desc);
	t->desc = xasprintf("%s%s%s", t->o->filters,
	    *t->o->filters && *mine ? " " : "", mine);
	report_filter_release(&f);
	return 0;
}

int
tui_add_rule(struct tui *t, enum report_rule_kind kind, const char *arg,
    char *err, size_t errlen)
{
	void *v = t->rules;

	xgrow(&v, &t->rcap, t->nrules + 1, sizeof *t->rules);
	t->rules = v;
	t->rules[t->nrules].kind = kind;
	t->rules[t->nrules++].arg = xstrdup(arg);
	if (tui_refilter(t, err, errlen) == 0)
		return 0;
	free(t->rules[--t->nrules].arg);
	return -1;
}

int
tui_undo_rule(struct tui *t)
{
	char err[256];

	if (t->nrules == 0)
		return -1;
	free(t->rules[--t->nrules].arg);
	return tui_refilter(t, err, sizeof err);
}

/* --- list views --- */

/* Append a row to V; its NAME and ARG are taken over. */
static struct tui_item *
tui_push(struct tui_view *v, size_t *cap, char *name, int64_t value)
{
	struct tui_item *it;
	void *p = v->items;

	xgrow(&p, cap, v->nitems + 1, sizeof *v->items);
	v->items = p;
	it = &v->items[v->nitems++];
	memset(it, 0, sizeof *it);
	it->name = name;
	it->cum = value;
	it->kind = -1;
	return it;
}

static int tui_sort_cum;	/* for qsort, which takes no argument */

/* By self or cumulative value, largest first, then name and id. */
static int
tui_cmp_flat(const void *a, const void *b)
{
	const struct tui_item *x = a, *y = b;
	int64_t vx = tui_sort_cum ? x->cum : x->self;
	int64_t vy = tui_sort_cum ? y->cum : y->self;
	int c;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* By value, largest first, then name. */
static int
tui_cmp_value(const void *a, const void *b)
{
	const struct tui_item *x = a, *y = b;

	if (x->cum != y->cum)
		return x->cum > y->cum ? -1 : 1;
	return strcmp(x->name, y->name);
}

void
tui_flat_sort(struct tui *t, struct tui_view *v)
{
	tui_sort_cum = t->sort_cum;
	qsort(v->items, v->nitems, sizeof *v->items, tui_cmp_flat);
}

/* The flat table: each function's self and cumulative value. */
static void
tui_fill_flat(struct tui *t, struct tui_view *v)
{
	const struct profile *p = t->p;
	int64_t *self = xcalloc(p->nfunctions + 1, sizeof *self);
	int64_t *cum = xcalloc(p->nfunctions + 1, sizeof *cum);
	size_t *stamp = xcalloc(p->nfunctions + 1, sizeof *stamp), i, cap = 0;
	uint32_t j;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		int64_t w = profile_sample_values(p, s)[t->vi];

		for (j = 0; j < s->nloc; j++) {
			uint64_t fn = profile_location_function_id(p, locs[j]);

			if (fn == 0)
				continue;
			if (j == 0)
				self[fn] = profile_add_sat(self[fn], w);
			/* Recursion counts once in the cumulative value. */
			if (stamp[fn] != i + 1) {
				stamp[fn] = i + 1;
				cum[fn] = profile_add_sat(cum[fn], w);
			}
		}
	}
	for (i = 1; i <= p->nfunctions; i++) {
		const char *name = profile_str(p, p->functions[i - 1].name);
		struct tui_item *it;

		if (self[i] == 0 && cum[i] == 0)
			continue;
		it = tui_push(v, &cap, xstrdup(*name ? name : "[unknown]"),
		    cum[i]);
		it->fn = i;
		it->self = self[i];
	}
	free(self);
	free(cum);
	free(stamp);
	tui_flat_sort(t, v);
}

/* The threads, by value: Enter keeps the one selected (--thread). */
static void
tui_fill_threads(struct tui *t, struct tui_view *v)
{
	const struct profile *p = t->p;
	size_t i, k, cap = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l = profile_sample_label(p, s,
		    "thread");
		const char *name = profile_sample_label_str(p, s, "thread_name");
		int64_t w = profile_sample_values(p, s)[t->vi];
		char *label, *arg;

		if (l == NULL || l->str != 0)
			continue;
		label = xasprintf("%" PRId64 "  %s", l->num, name ? name : "");
		/* A few threads: a linear search is cheapest to read. */
		for (k = 0; k < v->nitems; k++) {
			if (strcmp(v->items[k].name, label) == 0)
				break;
		}
		if (k < v->nitems) {
			v->items[k].cum = profile_add_sat(v->items[k].cum, w);
			free(label);
			continue;
		}
		arg = xasprintf("%" PRId64, l->num);
		tui_push(v, &cap, label, w)->arg = arg;
		v->items[v->nitems - 1].kind = REPORT_THREAD;
	}
	qsort(v->items, v->nitems, sizeof *v->items, tui_cmp_value);
}

/* Whether labels of KEY are shown elsewhere (threads) or are VM states. */
static int
tui_label_skipped(const char *key)
{
	size_t i;

	if (strcmp(key, "thread") == 0 || strcmp(key, "thread_name") == 0 ||
	    strcmp(key, "timestamp") == 0)
		return 1;
	for (i = 0; i < PROFILE_NSTATES; i++) {
		if (strcmp(profile_states[i].key, key) == 0)
			return 1;
	}
	return 0;
}

/* The VM states, then every other label KEY=VALUE, each key's values
 * by value: Enter keeps the samples with the label (--tagfocus). */
static void
tui_fill_labels(struct tui *t, struct tui_view *v)
{
	const struct profile *p = t->p;
	int64_t states[PROFILE_NSTATES] = { 0 };
	size_t i, k, first, cap = 0;
	uint32_t j;
	int any = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct profile_vm_state st = profile_sample_state(p, s);
		int64_t w = profile_sample_values(p, s)[t->vi];

		if (st.gvl_state >= 0)
			states[st.gvl_state] = profile_add_sat(
			    states[st.gvl_state], w), any = 1;
		if (st.gc_state >= 0)
			states[st.gc_state] = profile_add_sat(
			    states[st.gc_state], w), any = 1;
	}
	for (k = 0; any && k < PROFILE_NSTATES; k++) {
		struct tui_item *it = tui_push(v, &cap,
		    xasprintf("%s (%s=%s)", profile_states[k].frame,
		    profile_states[k].key, profile_states[k].value), states[k]);

		it->kind = REPORT_TAGFOCUS;
		it->arg = xasprintf("%s=%s", profile_states[k].key,
		    profile_states[k].value);
	}
	first = v->nitems;
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l = profile_sample_labels(p, s);
		int64_t w = profile_sample_values(p, s)[t->vi];

		for (j = 0; j < s->nlabel; j++) {
			const char *key = profile_str(p, l[j].key);
			char *kv;

			if (tui_label_skipped(key))
				continue;
			kv = l[j].str ? xasprintf("%s=%s", key,
			    profile_str(p, l[j].str)) :
			    xasprintf("%s=%" PRId64, key, l[j].num);
			for (k = first; k < v->nitems; k++) {
				if (strcmp(v->items[k].arg, kv) == 0)
					break;
			}
			if (k < v->nitems) {
				v->items[k].cum = profile_add_sat(
				    v->items[k].cum, w);
				free(kv);
				continue;
			}
			tui_push(v, &cap, xstrdup(kv), w)->arg = kv;
			v->items[v->nitems - 1].kind = REPORT_TAGFOCUS;
		}
		/* Endpoints and jobs are few; a profile labelled per
		 * request would make this slow, so it stops at 5000. */
		if (v->nitems - first > 5000)
			break;
	}
	qsort(v->items + first, v->nitems - first, sizeof *v->items,
	    tui_cmp_value);
}

/* --- trees --- */

/* The nodes of O shown: the open nodes' children, depth first. */
static void
tui_outline_rows(struct tui_outline *o)
{
	const struct report_node *n = o->t->nodes;
	uint32_t c = n[0].child;
	void *v;

	o->nrows = 0;
	while (c != 0) {
		v = o->rows;
		xgrow(&v, &o->cap, o->nrows + 1, sizeof *o->rows);
		o->rows = v;
		o->rows[o->nrows++] = c;
		if (o->open[c] && n[c].child != 0) {
			c = n[c].child;
			continue;
		}
		while (c != 0 && n[c].next == 0)
			c = n[c].parent;
		if (c != 0)
			c = n[c].next;
	}
}

void
tui_outline_set(struct tui_outline *o, size_t row, int open)
{
	uint32_t node;

	if (row >= o->nrows)
		return;
	node = o->rows[row];
	o->open[node] = open < 0 ? !o->open[node] : (uint8_t)open;
	tui_outline_rows(o);
}

long
tui_outline_find(struct tui_outline *o, size_t from, const char *needle)
{
	const struct report_tree *t = o->t;
	const struct report_node *n = t->nodes;
	uint8_t *hit = xcalloc(t->names->nstrings, 1);
	uint32_t c, start, a;
	size_t i, steps;
	long row = -1;
	int found = 0;

	/* One comparison per name, not per node. */
	for (i = 0; i < t->names->nstrings; i++)
		hit[i] = strcasestr(t->names->strings[i], needle) != NULL;
	start = from < o->nrows ? o->rows[from] : n[0].child;
	c = start;
	for (steps = 0; steps < t->nnodes && c != 0; steps++) {
		/* The next node in preorder, whether shown or not. */
		if (n[c].child != 0)
			c = n[c].child;
		else {
			while (c != 0 && n[c].next == 0)
				c = n[c].parent;
			c = c != 0 ? n[c].next : n[0].child;
		}
		if (hit[n[c].name]) {
			found = 1;
			break;
		}
		if (c == start)
			break;
	}
	free(hit);
	if (!found)
		return -1;
	for (a = n[c].parent; a != 0; a = n[a].parent)
		o->open[a] = 1;
	tui_outline_rows(o);
	for (i = 0; i < o->nrows; i++) {
		if (o->rows[i] == c) {
			row = (long)i;
			break;
		}
	}
	return row;
}

long
tui_items_find(const struct tui_view *v, size_t from, const char *needle)
{
	size_t i, k;

	for (k = 1; k <= v->nitems; k++) {
		i = (from + k) % v->nitems;
		if (strcasestr(v->items[i].name, needle) != NULL)
			return (long)i;
	}
	return -1;
}

/* The call tree (SUBJECT NULL) or the callers of SUBJECT into V. */
static int
tui_fill_outline(struct tui *t, struct tui_view *v, const char *subject,
    char *err, size_t errlen)
{
	struct tui_outline *o = &v->o;
	uint32_t c;
	int rc;

	if (subject == NULL) {
		o->t = t->tree;
		o->shared = 1;
		rc = o->t == NULL ? -1 : 0;
	} else {
		o->t = report_tree_new();
		rc = report_tree_add_callers(o->t, t->p, t->vi, subject);
		if (rc == 0)
			report_tree_sort(o->t, 1);
	}
	if (rc != 0) {
		error_set(err, errlen, "the tree is too large to show");
		return -1;
	}
	o->open = xcalloc(o->t->nnodes, 1);
	/* The callers view opens on the function's own callers; a tree
	 * opens where there is only one way down (<main>, say). */
	if (subject != NULL && o->t->nnodes > 1)
		o->open[1] = 1;
	for (c = o->t->nodes[0].child; subject == NULL && c != 0 &&
	    o->t->nodes[c].next == 0 && o->t->nodes[c].depth <= 64;
	    c = o->t->nodes[c].child)
		o->open[c] = 1;
	tui_outline_rows(o);
	return 0;
}

void
tui_view_release(struct tui_view *v)
{
	size_t i;

	for (i = 0; i < v->nitems; i++) {
		free(v->items[i].name);
		free(v->items[i].arg);
	}
	free(v->items);
	if (!v->o.shared)
		report_tree_free(v->o.t);
	free(v->o.open);
	free(v->o.rows);
	free(v->title);
	free(v->subject);
	memset(v, 0, sizeof *v);
}

size_t
tui_view_rows(const struct tui_view *v)
{
	if (v->kind == TUI_TREE || v->kind == TUI_CALLERS)
		return v->o.nrows;
	return v->nitems;
}

int
tui_view_fill(struct tui *t, struct tui_view *v, const char *subject,
    uint64_t fn, char *err, size_t errlen)
{
	enum tui_kind kind = v->kind;
	char *subj = subject ? xstrdup(subject) : NULL;

	tui_view_release(v);
	v->kind = kind;
	v->subject = subj;
	v->fn = fn;
	subject = subj;
	switch (kind) {
	case TUI_FLAT:
		tui_fill_flat(t, v);
		v->title = xstrdup("Functions");
		return 0;
	case TUI_TREE:
		v->title = xstrdup("Call tree");
		return tui_fill_outline(t, v, NULL, err, errlen);
	case TUI_CALLERS:
		v->title = xasprintf("Callers of %s", subject);
		return tui_fill_outline(t, v, subject, err, errlen);
	case TUI_THREADS:
		v->title = xstrdup("Threads (Enter keeps one)");
		tui_fill_threads(t, v);
		if (v->nitems == 0) {
			error_set(err, errlen, "the samples have no thread labels");
			return -1;
		}
		return 0;
	case TUI_LABELS:
		v->title = xstrdup("VM states and labels (Enter keeps one)");
		tui_fill_labels(t, v);
		if (v->nitems == 0) {
			error_set(err, errlen, "the samples have no labels");
			return -1;
		}
		return 0;
	case TUI_SOURCE:
		return tui_fill_source(t, v, subject, fn, err, errlen);
	case TUI_HELP:
		v->title = xstrdup("Keys");
		return 0;
	}
	return 0;
}

const char *
tui_selected_name(const struct tui *t, const struct tui_view *v,
    uint64_t *fn)
{
	*fn = 0;
	switch (v->kind) {
	case TUI_FLAT:
		if (v->sel >= v->nitems)
			return NULL;
		*fn = v->items[v->sel].fn;
		return v->items[v->sel].name;
	case TUI_TREE:
	case TUI_CALLERS:
		if (v->sel >= v->o.nrows)
			return NULL;
		return report_tree_name(v->o.t, &v->o.t->nodes[v->o.rows[v->sel]]);
	default:
		return NULL;
	}
}

char *
tui_rule_arg(const char *name, enum report_rule_kind *kind)
{
	size_t k;
	char *re, *d;

	for (k = 0; k < PROFILE_NSTATES; k++) {
		if (strcmp(name, profile_states[k].frame) != 0)
			continue;
		*kind = *kind == REPORT_FOCUS ? REPORT_TAGFOCUS : REPORT_TAGIGNORE;
		return xasprintf("%s=%s", profile_states[k].key,
		    profile_states[k].value);
	}
	/* The whole name, literally: ^ and $ around it, every
	 * metacharacter of an extended regex escaped. */
	re = d = xmalloc(2 * strlen(name) + 3);
	*d++ = '^';
	for (; *name != '\0'; name++) {
		if (strchr("\\.[]()*+?{}|^$", *name) != NULL)
			*d++ = '\\';
		*d++ = *name;
	}
	*d++ = '$';
	*d = '\0';
	return re;
}
