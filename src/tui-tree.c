/*
 * tui-tree.c: the browser's trees (see tui-int.h): the call tree of all
 * the samples, built once by report.c and laid out in preorder; the tree
 * after a filter, made from it by adding up the values of the samples
 * kept at each sample's last node (no hashing, no tree built anew); the
 * callers of a function, built from the samples it is on; and the rows
 * an outline shows as its nodes open and close.
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

/* Number T's nodes again in preorder, children in their order (LEAF's
 * N node ids too).  A parent still comes before its children, the
 * outline's walks read memory in order, and tui_kept_tree() makes a
 * filtered tree in one pass from the first node to the last, its
 * children in the order they had. */
static void
tui_preorder(struct report_tree *t, uint32_t *leaf, size_t n)
{
	const struct report_node *o = t->nodes;
	struct report_node *d = xmalloc(t->nnodes * sizeof *d);
	uint32_t *id = xcalloc(t->nnodes, sizeof *id), c, k = 1;
	size_t i;

	d[0] = o[0];
	for (c = o[0].child; c != 0;) {
		id[c] = k;
		d[k++] = o[c];
		if (o[c].child != 0) {
			c = o[c].child;
			continue;
		}
		while (c != 0 && o[c].next == 0)
			c = o[c].parent;
		if (c != 0)
			c = o[c].next;
	}
	for (i = 0; i < k; i++) {
		d[i].parent = id[d[i].parent];
		d[i].child = id[d[i].child];
		d[i].next = id[d[i].next];
	}
	for (i = 0; i < n; i++)
		leaf[i] = id[leaf[i]];
	/* T's index still has the old ids: nothing adds to this tree. */
	free(t->nodes);
	t->nodes = d;
	t->cap = t->nnodes;
	free(id);
}

int
tui_set_value(struct tui *t, size_t vi, char *err, size_t errlen)
{
	/* Everything made for the last sample type goes. */
	if (t->tree != t->whole)
		report_tree_free(t->tree);
	report_tree_free(t->whole);
	t->tree = t->whole = NULL;
	free(t->leaf);
	free(t->kvalue);
	free(t->kself);
	free(t->kmap);
	free(t->ktail);
	free(t->kunsorted);
	free(t->spare);
	profile_free(t->spare_names);
	t->leaf = t->kmap = t->ktail = NULL;
	t->kvalue = t->kself = NULL;
	t->kunsorted = NULL;
	t->spare = NULL;
	t->spare_cap = 0;
	t->spare_names = NULL;
	t->vi = vi;
	numfmt_unit_init(&t->u, t->p, vi);
	t->total_read = t->o->totals_read ? t->o->totals_read[vi] :
	    t->o->total_read;
	return tui_refilter(t, err, errlen);
}

struct report_tree *
tui_build_tree(struct tui *t)
{
	struct report_tree *tree = report_tree_new();

	free(t->leaf);
	t->leaf = xcalloc(t->nall + 1, sizeof *t->leaf);
	if (report_tree_add_leaves(tree, t->p, t->vi, t->leaf) != 0) {
		report_tree_free(tree);
		free(t->leaf);
		t->leaf = NULL;
		return NULL;
	}
	report_tree_sort(tree, 1);
	tui_preorder(tree, t->leaf, t->nall);
	/* What tui_kept_tree() needs, at most the whole tree's size, taken
	 * and touched now, while the browser opens: the first filter would
	 * otherwise wait for the kernel to hand over some 100 MB (1.8M
	 * nodes) page by page, which took longer than its work. */
	t->kvalue = xmalloc(tree->nnodes * sizeof *t->kvalue);
	t->kself = xmalloc(tree->nnodes * sizeof *t->kself);
	t->kmap = xmalloc(tree->nnodes * sizeof *t->kmap);
	t->ktail = xmalloc(tree->nnodes * sizeof *t->ktail);
	t->kunsorted = xmalloc(tree->nnodes);
	t->spare = xmalloc(tree->nnodes * sizeof *t->spare);
	t->spare_cap = tree->nnodes;
	memset(t->kvalue, 0, tree->nnodes * sizeof *t->kvalue);
	memset(t->kself, 0, tree->nnodes * sizeof *t->kself);
	memset(t->kmap, 0, tree->nnodes * sizeof *t->kmap);
	memset(t->ktail, 0, tree->nnodes * sizeof *t->ktail);
	memset(t->kunsorted, 0, tree->nnodes);
	memset(t->spare, 0, tree->nnodes * sizeof *t->spare);
	return tree;
}

static const struct report_tree *tui_sorting;	/* for qsort */

/* Siblings by value, largest first, then name: report_tree_sort()'s
 * order. */
static int
tui_cmp_sibling(const void *a, const void *b)
{
	const struct report_tree *t = tui_sorting;
	const struct report_node *x = &t->nodes[*(const uint32_t *)a];
	const struct report_node *y = &t->nodes[*(const uint32_t *)b];

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(report_tree_name(t, x), report_tree_name(t, y));
}

struct report_tree *
tui_kept_tree(struct tui *t)
{
	const struct report_tree *w = t->whole;
	const struct report_node *wn;
	struct report_node *d;
	struct report_tree *tree;
	int64_t *value, *self;
	uint32_t *map, *tail, *kids = NULL, id, up, c;
	uint8_t *unsorted;
	size_t i, k, m, n, cap = 0;
	void *vp;

	if (w == NULL || t->leaf == NULL || t->spare == NULL)
		return NULL;
	/* A few samples kept (f on a function, a thread): their own tree,
	 * built as report.c builds one, costs less than a pass over every
	 * node of the whole. */
	for (k = 0, m = 0; k < t->p->nsamples && m < w->nnodes / 2; k++)
		m += t->p->samples[k].nloc;
	if (m < w->nnodes / 2) {
		tree = report_tree_new();
		if (report_tree_add(tree, t->p, t->vi, 0, 1.0) != 0) {
			report_tree_free(tree);
			return NULL;
		}
		report_tree_sort(tree, 1);
		return tree;
	}
	wn = w->nodes;
	/* All zero: the last call left them so. */
	value = t->kvalue;
	self = t->kself;
	map = t->kmap;
	tail = t->ktail;
	unsorted = t->kunsorted;
	/* Each sample's value at its last node, then every node's added
	 * to its parent's: parents come first in WHOLE, so one pass back. */
	for (k = 0; k < t->p->nsamples; k++) {
		int64_t v = profile_sample_values(t->p,
		    &t->all[t->kept[k]])[t->vi];

		i = t->kept[k];
		if (v <= 0)
			continue;
		value[t->leaf[i]] = profile_add_sat(value[t->leaf[i]], v);
		if (t->selfish[i] && t->leaf[i] != 0)
			self[t->leaf[i]] = profile_add_sat(self[t->leaf[i]], v);
	}
	for (i = w->nnodes; i-- > 1;)
		value[wn[i].parent] = profile_add_sat(value[wn[i].parent],
		    value[i]);

	/* The nodes worth something, under WHOLE's names (a copy kept
	 * from the last such tree, or interned again in the same order). */
	tree = report_tree_new();
	if (t->spare_names != NULL) {
		profile_free(tree->names);
		tree->names = t->spare_names;
		t->spare_names = NULL;
	} else {
		for (i = tree->names->nstrings; i < w->names->nstrings; i++)
			profile_intern(tree->names, w->names->strings[i]);
	}
	free(tree->nodes);
	tree->nodes = d = t->spare;
	tree->cap = t->spare_cap;
	t->spare = NULL;
	t->spare_cap = 0;
	memset(&d[0], 0, sizeof d[0]);
	d[0].name = wn[0].name;
	d[0].value = value[0];
	value[0] = 0;
	tail[0] = 0;
	unsorted[0] = 0;
	map[0] = 0;
	/* WHOLE is in preorder: one pass keeps that, each node's children
	 * in the order they had, and notes the parents whose children no
	 * longer are in order of value. */
	tui_sorting = tree;
	for (i = 1, id = 1; i < w->nnodes; i++) {
		if (value[i] <= 0)
			continue;
		map[i] = id;
		memset(&d[id], 0, sizeof d[id]);
		d[id].name = wn[i].name;
		d[id].depth = wn[i].depth;
		d[id].value = value[i];
		d[id].self = self[i];
		value[i] = self[i] = 0;	/* ready for the next call */
		tail[id] = 0;
		unsorted[id] = 0;
		d[id].parent = up = map[wn[i].parent];
		if (tail[up] == 0)
			d[up].child = id;
		else {
			d[tail[up]].next = id;
			if (!unsorted[up] && tui_cmp_sibling(&tail[up], &id) > 0)
				unsorted[up] = 1;
		}
		tail[up] = id++;
	}
	tree->nnodes = n = id;
	for (i = 0; i < n; i++) {
		if (!unsorted[i])
			continue;
		for (m = 0, c = d[i].child; c != 0; c = d[c].next) {
			vp = kids;
			xgrow(&vp, &cap, m + 1, sizeof *kids);
			kids = vp;
			kids[m++] = c;
		}
		qsort(kids, m, sizeof *kids, tui_cmp_sibling);
		d[i].child = kids[0];
		for (k = 0; k + 1 < m; k++)
			d[kids[k]].next = kids[k + 1];
		d[kids[m - 1]].next = 0;
	}
	tui_sorting = NULL;
	free(kids);
	return tree;
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
		o->t = t->tree;
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
