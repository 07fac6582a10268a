/*
 * frames.c: a sample's stack as the tree-shaped views show it (see
 * frames.h).
 */
#include <stdio.h>
#include <string.h>

#include "frames.h"

const char *
frames_name(const char *name, char buf[FRAMES_NAME_MAX])
{
	size_t k, n;

	if (name == NULL || *name == '\0')
		return "[unknown]";
	for (k = 0; k < PROFILE_NSTATES; k++) {
		if (strcmp(name, profile_states[k].frame) != 0)
			continue;
		/* "[GVL wait]" shows as "(GVL wait)" */
		n = strlen(name);
		snprintf(buf, FRAMES_NAME_MAX, "(%.*s)", (int)(n - 2), name + 1);
		return buf;
	}
	return name;
}

void
frames_walk_begin(struct frames_walk *w, const struct profile *p,
    const struct profile_sample *s)
{
	struct profile_vm_state st = profile_sample_state(p, s);

	w->p = p;
	w->locs = profile_sample_locs(p, s);
	w->left = s->nloc;
	w->nstate = w->k = 0;
	if (st.gvl_state >= 0)
		w->state[w->nstate++] = st.gvl_state;
	if (st.gc_state >= 0)
		w->state[w->nstate++] = st.gc_state;
}

int64_t
frames_walk_next(struct frames_walk *w)
{
	while (w->left > 0) {
		uint64_t l = w->locs[--w->left];

		if (l != 0 && l <= w->p->nlocations)
			return (int64_t)l;
	}
	if (w->k < w->nstate)
		return -1 - w->state[w->k++];
	return 0;
}

int
frames_walk_done(const struct frames_walk *w)
{
	return w->left == 0 && w->k == w->nstate;
}
