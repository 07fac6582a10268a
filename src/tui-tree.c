/*
 * tui-tree.c: the browser's indexes of the profile (functions by name,
 * each sample's functions), the callers of a function, built from the
 * samples it is on, and the rows an outline shows as its nodes open and
 * close.  The call tree itself is tui-kept.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tui-int.h"
#include "xmalloc.h"

static const struct profile *tui_names_of;	/* for qsort */

/* Function ids by name, then id. */
static int
tui_cmp_fn_name(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct profile *p = tui_names_of;
	int c = strcmp(profile_str(p, p->functions[x - 1].name),
	    profile_str(p, p->functions[y - 1].name));

	return c != 0 ? c : x < y ? -1 : x > y;
}

/* BYNAME and CANON, once: names do not change. */
void
tui_index_names(struct tui *t)
{
	const struct profile *p = t->p;
	size_t i;

	t->byname = xcalloc(p->nfunctions + 1, sizeof *t->byname);
	t->canon = xcalloc(p->nfunctions + 1, sizeof *t->canon);
	for (i = 0; i < p->nfunctions; i++)
		t->byname[i] = (uint32_t)(i + 1);
	tui_names_of = p;
	if (p->nfunctions > 1)
		qsort(t->byname, p->nfunctions, sizeof *t->byname,
		    tui_cmp_fn_name);
	for (i = 0; i < p->nfunctions; i++) {
		uint32_t id = t->byname[i];

		t->canon[id] = i > 0 && p->functions[id - 1].name ==
		    p->functions[t->byname[i - 1] - 1].name ?
		    t->canon[t->byname[i - 1]] : id;
	}
}

void
tui_index_frames(struct tui *t)
{
	const struct profile *p = t->p;
	size_t *stamp = xcalloc(p->nfunctions + 1, sizeof *stamp);
	size_t i, n = 0, cap = 0;
	uint32_t j;

	t->foff = xcalloc(t->nall + 1, sizeof *t->foff);
	t->leaf_fn = xcalloc(t->nall + 1, sizeof *t->leaf_fn);
	t->selfish = xcalloc(t->nall + 1, 1);
	for (i = 0; i < t->nall; i++) {
		const struct profile_sample *s = &t->all[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		struct profile_vm_state st = profile_sample_state(p, s);

		t->foff[i] = n;
		for (j = 0; j < s->nloc; j++) {
			uint64_t fn = profile_location_function_id(p, locs[j]);
			void *v = t->fns;

			if (j == 0)
				t->leaf_fn[i] = (uint32_t)fn;
			/* Recursion lists a function once. */
			if (fn == 0 || stamp[fn] == i + 1)
				continue;
			stamp[fn] = i + 1;
			xgrow(&v, &cap, n + 1, sizeof *t->fns);
			t->fns = v;
			t->fns[n++] = (uint32_t)fn;
		}
		/* Where report_tree_add() bills a sample's self value: its
		 * leaf frame, or the VM state above it. */
		t->selfish[i] = t->leaf_fn[i] != 0 || st.gvl_state >= 0 ||
		    st.gc_state >= 0;
	}
	t->foff[t->nall] = n;
	free(stamp);
}

/* The canonical id of the function called NAME, or 0. */
static uint32_t
tui_find_name(const struct tui *t, const char *name)
{
	const struct profile *p = t->p;
	size_t lo = 0, hi = p->nfunctions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(profile_str(p,
		    p->functions[t->byname[mid] - 1].name), name);

		if (c == 0)
			return t->canon[t->byname[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* The nodes of O shown: the open nodes' children, depth first. */
void
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

/* The call tree (SUBJECT NULL) or the callers of SUBJECT into V. */
int
tui_fill_outline(struct tui *t, struct tui_view *v, const char *subject,
    char *err, size_t errlen)
{
	struct tui_outline *o = &v->o;
	uint32_t c;
	int rc;

	if (subject == NULL) {
		o->t = tui_tree(t);
		o->shared = 1;
		rc = o->t == NULL ? -1 : 0;
	} else {
		uint32_t fn = tui_find_name(t, subject);
		struct profile sub = *t->p;
		size_t i, k, f;

		/* Only the samples with the function, when it is one (a VM
		 * state is not): the same tree, at a fraction of the cost.
		 * They are found in the lists of each sample's functions
		 * (tui_index_frames()), read in order: a few milliseconds
		 * for 100k stacks.  SUB shares everything with the profile
		 * but the list of samples, and report.c only reads it. */
		if (fn != 0) {
			sub.samples = xcalloc(t->p->nsamples + 1,
			    sizeof *sub.samples);
			for (sub.nsamples = 0, k = 0; k < t->p->nsamples; k++) {
				i = t->kept[k];
				for (f = t->foff[i]; f < t->foff[i + 1]; f++) {
					if (t->canon[t->fns[f]] == fn)
						break;
				}
				if (f < t->foff[i + 1])
					sub.samples[sub.nsamples++] =
					    t->p->samples[k];
			}
		}
		o->t = report_tree_new();
		rc = report_tree_add_callers(o->t, &sub, t->vi, subject);
		if (rc == 0)
			report_tree_sort(o->t, 1);
		if (fn != 0)
			free(sub.samples);
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
