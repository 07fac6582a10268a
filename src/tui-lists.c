/*
 * tui-lists.c: the browser's threads and labels views (see tui-int.h):
 * the samples' values added up per thread, per VM state and per label
 * KEY=VALUE, each row carrying the filter that Enter adds for it
 * (--thread, --tagfocus).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui-int.h"
#include "xmalloc.h"

/* A sum by key: samples' values added up per (A, B), sorted by both. */
struct tui_tally {
	uint64_t a, b;
	int64_t w;
};

static int
tui_cmp_tally(const void *x, const void *y)
{
	const struct tui_tally *p = x, *q = y;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

/* Sort the N entries of T and merge equal keys; the count left. */
static size_t
tui_tally_merge(struct tui_tally *t, size_t n)
{
	size_t i, k = 0;

	if (n == 0)
		return 0;	/* T may be NULL, which qsort() must not get */
	qsort(t, n, sizeof *t, tui_cmp_tally);
	for (i = 0; i < n; i++) {
		if (k > 0 && t[k - 1].a == t[i].a && t[k - 1].b == t[i].b)
			t[k - 1].w = profile_add_sat(t[k - 1].w, t[i].w);
		else
			t[k++] = t[i];
	}
	return k;
}

void
tui_fill_threads(struct tui *t, struct tui_view *v)
{
	const struct profile *p = t->p;
	struct tui_tally *ty = xcalloc(p->nsamples + 1, sizeof *ty);
	size_t i, n = 0, cap = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l = profile_sample_label(p, s,
		    "thread");
		const struct profile_label *name = profile_sample_label(p, s,
		    "thread_name");

		if (l == NULL || l->str != 0)
			continue;
		ty[n].a = (uint64_t)l->num;
		ty[n].b = name != NULL ? name->str : 0;
		ty[n++].w = profile_sample_values(p, s)[t->vi];
	}
	n = tui_tally_merge(ty, n);
	for (i = 0; i < n; i++) {
		struct tui_item *it = tui_push(v, &cap, xasprintf("%" PRId64
		    "  %s", (int64_t)ty[i].a, profile_str(p, (str_id)ty[i].b)),
		    ty[i].w);

		it->kind = REPORT_THREAD;
		it->arg = xasprintf("%" PRId64, (int64_t)ty[i].a);
	}
	free(ty);
	if (v->nitems > 1)
		qsort(v->items, v->nitems, sizeof *v->items, tui_cmp_value);
}

/* Label rows by key ("key=" ends each key's prefix of ARG), then by
 * value, largest first. */
static int
tui_cmp_label(const void *a, const void *b)
{
	const struct tui_item *x = a, *y = b;
	size_t kx = strcspn(x->arg, "="), ky = strcspn(y->arg, "=");
	int c = strncmp(x->arg, y->arg, kx < ky ? kx : ky);

	if (c != 0 || kx != ky)
		return c != 0 ? c : kx < ky ? -1 : 1;
	return tui_cmp_value(a, b);
}

void
tui_fill_labels(struct tui *t, struct tui_view *v)
{
	const struct profile *p = t->p;
	int64_t states[PROFILE_NSTATES] = { 0 };
	struct tui_tally *ty = NULL;
	size_t i, k, n = 0, tcap = 0, cap = 0, first;
	/* Per key string: 0 not looked at yet, 2 skipped, 3 shown. */
	uint8_t *skip = xcalloc(p->nstrings + 1, 1);
	uint32_t j;
	int any = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l = profile_sample_labels(p, s);
		struct profile_vm_state st = profile_sample_state(p, s);
		int64_t w = profile_sample_values(p, s)[t->vi];

		if (st.gvl_state >= 0)
			states[st.gvl_state] = profile_add_sat(
			    states[st.gvl_state], w), any = 1;
		if (st.gc_state >= 0)
			states[st.gc_state] = profile_add_sat(
			    states[st.gc_state], w), any = 1;
		for (j = 0; j < s->nlabel; j++) {
			void *vp = ty;

			if (l[j].key >= p->nstrings)
				continue;
			if (skip[l[j].key] == 0)
				skip[l[j].key] = profile_label_is_builtin(
				    profile_str(p, l[j].key)) ? 2 : 3;
			if (skip[l[j].key] == 2)
				continue;
			xgrow(&vp, &tcap, n + 1, sizeof *ty);
			ty = vp;
			/* Strings and numbers apart: the low bit of A. */
			ty[n].a = (uint64_t)l[j].key << 1 | (l[j].str == 0);
			ty[n].b = l[j].str != 0 ? l[j].str : (uint64_t)l[j].num;
			ty[n++].w = w;
		}
	}
	free(skip);
	for (k = 0; any && k < PROFILE_NSTATES; k++) {
		struct tui_item *it = tui_push(v, &cap,
		    xasprintf("%s (%s=%s)", profile_states[k].frame,
		    profile_states[k].key, profile_states[k].value), states[k]);

		it->kind = REPORT_TAGFOCUS;
		it->arg = xasprintf("%s=%s", profile_states[k].key,
		    profile_states[k].value);
	}
	first = v->nitems;
	n = tui_tally_merge(ty, n);
	for (i = 0; i < n; i++) {
		const char *key = profile_str(p, (str_id)(ty[i].a >> 1));
		char *kv = ty[i].a & 1 ? xasprintf("%s=%" PRId64, key,
		    (int64_t)ty[i].b) : xasprintf("%s=%s", key,
		    profile_str(p, (str_id)ty[i].b));

		tui_push(v, &cap, xstrdup(kv), ty[i].w)->arg = kv;
		v->items[v->nitems - 1].kind = REPORT_TAGFOCUS;
	}
	free(ty);
	if (v->nitems - first > 1)
		qsort(v->items + first, v->nitems - first, sizeof *v->items,
		    tui_cmp_label);
}
