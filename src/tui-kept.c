/*
 * tui-kept.c: the browser's call trees (see tui-int.h).  The tree of all
 * the samples is built once by report.c and laid out in preorder, so that
 * a node's subtree is a run of nodes and the samples that end in it a run
 * of the samples listed by their last node.  The tree of the samples a
 * filter keeps is then made from it in one pass: a node's value is the
 * difference of two running sums over the samples kept, a subtree worth
 * nothing is stepped over, and nothing is hashed or built anew.  It is
 * made when a view shows it, not at each filter.
 */
#include <stdlib.h>
#include <string.h>

#include "tui-int.h"
#include "xmalloc.h"

/* Number T's nodes again in preorder, children in their order (LEAF's
 * N node ids too).  A parent still comes before its children, the
 * outline's walks read memory in order, a node's subtree is the nodes
 * from it to its END, and tui_kept_tree() makes a filtered tree in one
 * pass from the first node to the last, its children in the order they
 * had. */
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

void
tui_trees_release(struct tui *t)
{
	if (t->tree != t->whole)
		report_tree_free(t->tree);
	report_tree_free(t->whole);
	t->tree = t->whole = NULL;
	t->tree_stale = 0;
	free(t->leaf);
	free(t->wnodes);
	free(t->lo);
	free(t->byleaf);
	free(t->leafval);
	free(t->kgen);
	free(t->ksum);
	free(t->kselfsum);
	free(t->kpath);
	free(t->klast);
	free(t->kunsorted);
	free(t->spare);
	profile_free(t->spare_names);
	t->leaf = t->lo = t->byleaf = t->kgen = t->kpath = t->klast = NULL;
	t->wnodes = NULL;
	t->leafval = t->ksum = t->kselfsum = NULL;
	t->kunsorted = NULL;
	t->spare = NULL;
	t->spare_cap = 0;
	t->spare_names = NULL;
	t->kgen_now = 0;
	t->maxdepth = 0;
}

int
tui_set_value(struct tui *t, size_t vi, char *err, size_t errlen)
{
	/* Everything made for the last sample type goes. */
	tui_trees_release(t);
	t->vi = vi;
	numfmt_unit_init(&t->u, t->p, vi);
	t->total_read = t->o->totals_read ? t->o->totals_read[vi] :
	    t->o->total_read;
	return tui_refilter(t, err, errlen);
}

/* N * SIZE bytes, zeroed and touched now: the first filter would
 * otherwise wait for the kernel to hand over some 100 MB (1.8M nodes on
 * the bench fixture) page by page, which took longer than its work. */
static void *
tui_touched(size_t n, size_t size)
{
	void *p = xmalloc(n * size + 1);

	memset(p, 0, n * size + 1);
	return p;
}

/* What tui_kept_tree() reads, from TREE (all the samples, in preorder):
 * the nodes' names, parents, depths and ends; the samples by their last
 * node (a counting sort) with their values; and LO. */
static void
tui_index_whole(struct tui *t, const struct report_tree *tree)
{
	size_t n = tree->nnodes, i, j;
	uint32_t *count = xcalloc(n + 1, sizeof *count);
	struct tui_wnode *wn;

	t->wnodes = wn = xmalloc(n * sizeof *wn);
	for (i = 0; i < n; i++) {
		wn[i].name = tree->nodes[i].name;
		wn[i].parent = tree->nodes[i].parent;
		wn[i].depth = tree->nodes[i].depth;
		wn[i].end = 1;	/* the size of its subtree, for now */
		if (wn[i].depth > t->maxdepth)
			t->maxdepth = wn[i].depth;
	}
	for (i = n; i-- > 1;)
		wn[wn[i].parent].end += wn[i].end;
	for (i = 0; i < n; i++)
		wn[i].end += (uint32_t)i;
	for (i = 0; i < t->nall; i++)
		count[t->leaf[i] + 1]++;
	/* LO[i]: how many samples end before node i, in the order of
	 * BYLEAF; LO[n] is every sample. */
	t->lo = xmalloc((n + 1) * sizeof *t->lo);
	for (i = 0, j = 0; i <= n; i++) {
		j += count[i];
		t->lo[i] = (uint32_t)j;
		count[i] = (uint32_t)j;
	}
	t->byleaf = xmalloc((t->nall + 1) * sizeof *t->byleaf);
	t->leafval = xmalloc((t->nall + 1) * sizeof *t->leafval);
	for (i = 0; i < t->nall; i++)
		t->byleaf[count[t->leaf[i]]++] = (uint32_t)i;
	for (i = 0; i < t->nall; i++)
		t->leafval[i] = profile_sample_values(t->p,
		    &t->all[t->byleaf[i]])[t->vi];
	free(count);
}

struct report_tree *
tui_build_tree(struct tui *t)
{
	struct report_tree *tree = report_tree_new();
	size_t n;

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
	tui_index_whole(t, tree);
	n = tree->nnodes;
	t->kgen = xcalloc(t->nall + 1, sizeof *t->kgen);
	t->ksum = tui_touched(t->nall + 1, sizeof *t->ksum);
	t->kselfsum = tui_touched(t->nall + 1, sizeof *t->kselfsum);
	t->kpath = tui_touched(t->maxdepth + 2, sizeof *t->kpath);
	t->klast = tui_touched(t->maxdepth + 2, sizeof *t->klast);
	t->kunsorted = tui_touched(n, 1);
	t->spare = tui_touched(n, sizeof *t->spare);
	t->spare_cap = n;
	return tree;
}

struct report_tree *
tui_tree(struct tui *t)
{
	if (t->tree_stale) {
		t->tree = tui_kept_tree(t);
		t->tree_stale = 0;
	}
	return t->tree;
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

/* The running sums of the values of the samples kept, in the order of
 * BYLEAF (KSUM; KSELFSUM of those whose node gets the self value): the
 * samples ending in nodes I to J - 1 are worth KSUM[LO[J]] - KSUM[LO[I]].
 * -1 when a sum would pass INT64_MAX, where report.c's sums saturate. */
static int
tui_sum_kept(struct tui *t)
{
	int64_t *sum = t->ksum, *self = t->kselfsum, v;
	size_t i, k;

	if (++t->kgen_now == 0) {
		memset(t->kgen, 0, t->nall * sizeof *t->kgen);
		t->kgen_now = 1;
	}
	for (k = 0; k < t->p->nsamples; k++)
		t->kgen[t->kept[k]] = t->kgen_now;
	sum[0] = self[0] = 0;
	for (i = 0; i < t->nall; i++) {
		uint32_t s = t->byleaf[i];

		v = t->leafval[i];
		if (t->kgen[s] != t->kgen_now || v <= 0)
			v = 0;
		if (sum[i] > INT64_MAX - v)
			return -1;
		sum[i + 1] = sum[i] + v;
		self[i + 1] = self[i] + (t->selfish[s] ? v : 0);
	}
	return 0;
}

/* The children of the N nodes PARENTS in order of value again: the pass
 * of tui_kept_tree() found them out of order. */
static void
tui_sort_children(struct report_tree *tree, const uint32_t *parents,
    size_t n)
{
	struct report_node *d = tree->nodes;
	uint32_t *kids = NULL, c;
	size_t i, k, m, cap = 0;
	void *vp;

	tui_sorting = tree;
	for (i = 0; i < n; i++) {
		for (m = 0, c = d[parents[i]].child; c != 0; c = d[c].next) {
			vp = kids;
			xgrow(&vp, &cap, m + 1, sizeof *kids);
			kids = vp;
			kids[m++] = c;
		}
		qsort(kids, m, sizeof *kids, tui_cmp_sibling);
		d[parents[i]].child = kids[0];
		for (k = 0; k + 1 < m; k++)
			d[kids[k]].next = kids[k + 1];
		d[kids[m - 1]].next = 0;
	}
	tui_sorting = NULL;
	free(kids);
}

struct report_tree *
tui_kept_tree(struct tui *t)
{
	const struct report_tree *w = t->whole;
	const struct tui_wnode *wn = t->wnodes;
	const uint32_t *lo = t->lo;
	const int64_t *sum = t->ksum, *selfsum = t->kselfsum;
	struct report_node *d;
	struct report_tree *tree;
	uint32_t *path = t->kpath, *last = t->klast, *parents = NULL, id, up,
	    dep;
	uint8_t *unsorted = t->kunsorted;
	size_t i, k, m, np = 0, pcap = 0;
	int64_t v;
	void *vp;

	if (w == NULL || t->leaf == NULL || t->spare == NULL)
		return NULL;
	/* A few samples kept (f on a function, a thread): their own tree,
	 * built as report.c builds one, costs less than a pass over the
	 * whole; so does a profile whose sums pass INT64_MAX. */
	for (k = 0, m = 0; k < t->p->nsamples && m < w->nnodes / 2; k++)
		m += t->p->samples[k].nloc;
	if (m < w->nnodes / 2 || tui_sum_kept(t) != 0) {
		tree = report_tree_new();
		if (report_tree_add(tree, t->p, t->vi, 0, 1.0) != 0) {
			report_tree_free(tree);
			return NULL;
		}
		report_tree_sort(tree, 1);
		return tree;
	}

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
	/* The root holds every sample kept, those left out of the tree
	 * too. */
	d[0] = (struct report_node){ .name = w->nodes[0].name,
	    .value = sum[t->nall] };
	unsorted[0] = 0;
	path[0] = 0;
	last[1] = 0;
	/* WHOLE is in preorder: one pass keeps that, each node's children
	 * in the order they had, and notes the parents whose children no
	 * longer are in order of value.  A node's parent is the last node
	 * made one level up (PATH), its previous sibling the last made at
	 * its level since (LAST). */
	for (i = 1, id = 1; i < w->nnodes;) {
		v = sum[lo[wn[i].end]] - sum[lo[i]];
		if (v <= 0) {
			i = wn[i].end;	/* nothing under it either */
			continue;
		}
		dep = wn[i].depth;
		up = path[dep - 1];
		d[id] = (struct report_node){ .name = wn[i].name,
		    .parent = up, .depth = dep, .value = v,
		    .self = selfsum[lo[i + 1]] - selfsum[lo[i]] };
		unsorted[id] = 0;
		path[dep] = id;
		last[dep + 1] = 0;
		if (last[dep] == 0)
			d[up].child = id;
		else {
			d[last[dep]].next = id;
			if (!unsorted[up] && d[last[dep]].value <= v) {
				tui_sorting = tree;
				if (tui_cmp_sibling(&last[dep], &id) > 0) {
					unsorted[up] = 1;
					vp = parents;
					xgrow(&vp, &pcap, np + 1,
					    sizeof *parents);
					parents = vp;
					parents[np++] = up;
				}
			}
		}
		last[dep] = id++;
		i++;
	}
	tree->nnodes = id;
	tui_sort_children(tree, parents, np);
	free(parents);
	return tree;
}
