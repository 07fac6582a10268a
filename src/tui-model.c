/*
 * tui-model.c: the rows of the browser's views, computed from the profile
 * with no ncurses (see tui-int.h).  Filters are report.c's own, applied
 * to a copy of the samples the command line left, so a key's filter means
 * exactly what the option of the same name means; the call tree is
 * report.c's, made once (tui-tree.c derives a filter's from it).  The
 * flat table adds up like text.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tui-int.h"
#include "xmalloc.h"

static void tui_pop_rule(struct tui *t);

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
	t->total_read = o->totals_read ? o->totals_read[t->vi] : o->total_read;
	t->sort_cum = o->sort_cum;
	t->kept = xcalloc(t->nall + 1, sizeof *t->kept);
	tui_index_names(t);
	tui_index_frames(t);
}

void
tui_model_release(struct tui *t)
{
	while (t->nrules > 0)
		tui_pop_rule(t);
	free(t->rules);
	free(t->all);
	free(t->desc);
	tui_trees_release(t);
	free(t->byname);
	free(t->canon);
	free(t->fns);
	free(t->foff);
	free(t->leaf_fn);
	free(t->selfish);
	free(t->kept);
	tui_match_release(&t->match);
}

/* The samples that rule N - 1 of F (a --focus or --ignore) keeps of
 * those the rules before it kept, into T->kept; their number.  Only the
 * new rule is tested, on each sample's list of functions, its regex once
 * a name: a filter never brings back a sample that an earlier one of
 * these kinds dropped. */
static size_t
tui_keep_narrower(struct tui *t, const struct report_filter *f, size_t n)
{
	const struct tui_rule *prev = n > 1 ? &t->rules[n - 2] : NULL;
	size_t nbase = prev ? prev->nkept : t->nall, i, j, k = 0, x;
	uint8_t *match = xcalloc(t->p->nfunctions + 1, 1);
	int focus = f->rules[n - 1].kind == REPORT_FOCUS;

	report_rule_functions(f, n - 1, t->p, match);
	for (j = 0; j < nbase; j++) {
		i = prev ? prev->kept[j] : j;
		for (x = t->foff[i]; x < t->foff[i + 1]; x++) {
			if (match[t->fns[x]])
				break;
		}
		if ((x < t->foff[i + 1]) == focus)
			t->kept[k++] = i;
	}
	free(match);
	return k;
}

/* Every rule applied by report.c to all the samples, into T->kept. */
static size_t
tui_keep_all(struct tui *t, const struct report_filter *f)
{
	size_t i, k;

	memcpy(t->p->samples, t->all, t->nall * sizeof *t->all);
	t->p->nsamples = t->nall;
	report_filter_apply(t->p, f);
	/* Which samples of ALL were kept: the filter keeps them in order. */
	for (i = 0, k = 0; i < t->nall && k < t->p->nsamples; i++) {
		if (t->all[i].loc_off == t->p->samples[k].loc_off &&
		    t->all[i].value_off == t->p->samples[k].value_off)
			t->kept[k++] = i;
	}
	return k;
}

int
tui_refilter(struct tui *t, char *err, size_t errlen)
{
	struct report_filter f;
	struct tui_rule *top = t->nrules ? &t->rules[t->nrules - 1] : NULL;
	const char *mine;
	size_t i, n;

	report_filter_init(&f);
	for (i = 0; i < t->nrules; i++) {
		if (report_filter_add(&f, t->rules[i].kind, t->rules[i].arg,
		    err, errlen) != 0) {
			report_filter_release(&f);
			return -1;
		}
	}
	/* The whole tree, of every sample, once (again after v). */
	if (t->whole == NULL) {
		memcpy(t->p->samples, t->all, t->nall * sizeof *t->all);
		t->p->nsamples = t->nall;
		t->whole = tui_build_tree(t);
	}
	/* The samples kept: noted when the last rule came (u comes back
	 * to it), or the ones the rules before it kept narrowed by it, or
	 * every rule applied again (a thread or a label: those of the same
	 * key are alternatives, so one can bring samples back). */
	if (top == NULL) {
		for (n = 0; n < t->nall; n++)
			t->kept[n] = n;
	} else if (top->kept != NULL) {
		n = top->nkept;
		memcpy(t->kept, top->kept, n * sizeof *t->kept);
	} else if ((top->kind == REPORT_FOCUS || top->kind == REPORT_IGNORE) &&
	    (t->nrules == 1 || t->rules[t->nrules - 2].kept != NULL))
		n = tui_keep_narrower(t, &f, t->nrules);
	else
		n = tui_keep_all(t, &f);
	if (top != NULL && top->kept == NULL) {
		top->kept = xmalloc((n + 1) * sizeof *top->kept);
		memcpy(top->kept, t->kept, n * sizeof *top->kept);
		top->nkept = n;
	}
	for (i = 0; i < n; i++)
		t->p->samples[i] = t->all[t->kept[i]];
	t->p->nsamples = n;
	t->total = profile_total(t->p, t->vi);
	/* The tree of these samples is made when a view shows it
	 * (tui_tree()); the last one's memory is kept for it. */
	if (t->tree != t->whole && t->tree != NULL && t->spare == NULL) {
		/* Made from the whole tree (tui_kept_tree()): its nodes and
		 * names are the next such tree's. */
		t->spare = t->tree->nodes;
		t->spare_cap = t->tree->cap;
		t->tree->nodes = NULL;
		profile_free(t->spare_names);
		t->spare_names = t->tree->names;
		t->tree->names = NULL;
		report_tree_free(t->tree);
	} else if (t->tree != t->whole)
		report_tree_free(t->tree);
	t->tree = t->nrules == 0 ? t->whole : NULL;
	t->tree_stale = t->nrules != 0;
	mine = report_filter_describe(&f);
	free(t->desc);
	t->desc = xasprintf("%s%s%s", t->o->filters,
	    *t->o->filters && *mine ? " " : "", mine);
	report_filter_release(&f);
	return 0;
}

/* Drop T's last rule. */
static void
tui_pop_rule(struct tui *t)
{
	struct tui_rule *r = &t->rules[--t->nrules];

	free(r->arg);
	free(r->kept);
	memset(r, 0, sizeof *r);
}

int
tui_add_rule(struct tui *t, enum report_rule_kind kind, const char *arg,
    char *err, size_t errlen)
{
	void *v = t->rules;

	xgrow(&v, &t->rcap, t->nrules + 1, sizeof *t->rules);
	t->rules = v;
	memset(&t->rules[t->nrules], 0, sizeof *t->rules);
	t->rules[t->nrules].kind = kind;
	t->rules[t->nrules++].arg = xstrdup(arg);
	if (tui_refilter(t, err, errlen) == 0)
		return 0;
	tui_pop_rule(t);
	return -1;
}

int
tui_undo_rule(struct tui *t)
{
	char err[256];

	if (t->nrules == 0)
		return -1;
	tui_pop_rule(t);
	return tui_refilter(t, err, sizeof err);
}

/* --- list views --- */

struct tui_item *
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

int
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
	if (v->nitems > 1)
		qsort(v->items, v->nitems, sizeof *v->items, tui_cmp_flat);
}

/* The flat table: each function's self and cumulative value. */
static void
tui_fill_flat(struct tui *t, struct tui_view *v)
{
	const struct profile *p = t->p;
	int64_t *self = xcalloc(p->nfunctions + 1, sizeof *self);
	int64_t *cum = xcalloc(p->nfunctions + 1, sizeof *cum);
	size_t i, k, f, cap = 0;

	/* Each sample's functions were listed once, recursion counted
	 * once (tui_index_frames()). */
	for (k = 0; k < p->nsamples; k++) {
		int64_t w = profile_sample_values(p, &p->samples[k])[t->vi];
		uint32_t lf;

		i = t->kept[k];
		if ((lf = t->leaf_fn[i]) != 0)
			self[lf] = profile_add_sat(self[lf], w);
		for (f = t->foff[i]; f < t->foff[i + 1]; f++)
			cum[t->fns[f]] = profile_add_sat(cum[t->fns[f]], w);
	}
	for (i = 1; i <= p->nfunctions; i++) {
		const char *name = profile_str(p, p->functions[i - 1].name);
		struct tui_item *it;

		if (self[i] == 0 && cum[i] == 0)
			continue;
		it = tui_push(v, &cap, (char *)(*name ? name : "[unknown]"),
		    cum[i]);
		it->fn = i;
		it->self = self[i];
	}
	free(self);
	free(cum);
	v->names_shared = 1;	/* the profile's own: 20k fewer copies */
	tui_flat_sort(t, v);
}

void
tui_view_release(struct tui_view *v)
{
	size_t i;

	for (i = 0; i < v->nitems; i++) {
		if (!v->names_shared)
			free(v->items[i].name);
		free(v->items[i].arg);
	}
	free(v->items);
	if (!v->o.shared)
		report_tree_free(v->o.t);
	free(v->o.open);
	free(v->o.rows);
	free(v->o.hit);
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
	case TUI_TIMELINE:
	case TUI_ALLOCS:
		return tui_fill_panel(t, v, err, errlen);
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
