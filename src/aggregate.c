/*
 * aggregate.c: the frame and stack tables of the sampler, the GVL split
 * and the GC window (see aggregate.h).  Open addressing with power-of-two bucket
 * arrays kept at most half full; entries live in dense arrays, so ids are
 * stable and iteration is in order of first sight.
 */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "xmalloc.h"

/* Mix a word into a hash (a 64-bit finaliser folded to 32 bits). */
static uint32_t
agg_hash_mix(uint32_t h, uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	h ^= (uint32_t)v ^ (uint32_t)(v >> 32);
	return h * 0x9e3779b1u;
}

/* Grow and rebuild the frame table's buckets. */
static void
agg_frames_rehash(struct agg_frames *ft)
{
	size_t n = ft->nbuckets ? ft->nbuckets * 2 : 1024, i, j;

	free(ft->buckets);
	ft->buckets = xcalloc(n, sizeof *ft->buckets);
	ft->nbuckets = n;
	for (i = 0; i < ft->count; i++) {
		j = agg_hash_mix(agg_hash_mix((uint32_t)ft->lines[i], ft->keys[i]),
		    ft->owns[i]) & (n - 1);
		while (ft->buckets[j] != 0)
			j = (j + 1) & (n - 1);
		ft->buckets[j] = (uint32_t)i + 1;
	}
}

/* The id of frame (KEY, OWN, LINE), added when new. */
uint32_t
agg_frames_intern(struct agg_frames *ft, uintptr_t key, uintptr_t own, int line)
{
	size_t j;
	uint32_t id;

	if ((ft->count + 1) * 2 > ft->nbuckets)
		agg_frames_rehash(ft);
	j = agg_hash_mix(agg_hash_mix((uint32_t)line, key), own) & (ft->nbuckets - 1);
	while ((id = ft->buckets[j]) != 0) {
		if (ft->keys[id - 1] == key && ft->owns[id - 1] == own &&
		    ft->lines[id - 1] == line)
			return id - 1;
		j = (j + 1) & (ft->nbuckets - 1);
	}
	if (ft->count == ft->cap) {
		size_t cap = ft->cap;

		xgrow((void **)&ft->keys, &cap, ft->count + 1, sizeof *ft->keys);
		ft->owns = xrealloc(ft->owns, cap * sizeof *ft->owns);
		ft->lines = xrealloc(ft->lines, cap * sizeof *ft->lines);
		ft->cap = cap;
	}
	ft->keys[ft->count] = key;
	ft->owns[ft->count] = own;
	ft->lines[ft->count] = line;
	ft->buckets[j] = (uint32_t)++ft->count;
	return (uint32_t)(ft->count - 1);
}

/* Free the frame table's memory and empty it. */
void
agg_frames_release(struct agg_frames *ft)
{
	free(ft->keys);
	free(ft->owns);
	free(ft->lines);
	free(ft->buckets);
	memset(ft, 0, sizeof *ft);
}

/* Grow and rebuild the stack table's buckets. */
static void
agg_stacks_rehash(struct agg_stacks *st)
{
	size_t n = st->nbuckets ? st->nbuckets * 2 : 1024, i, j;

	free(st->buckets);
	st->buckets = xcalloc(n, sizeof *st->buckets);
	st->nbuckets = n;
	for (i = 0; i < st->count; i++) {
		j = st->entries[i].hash & (n - 1);
		while (st->buckets[j] != 0)
			j = (j + 1) & (n - 1);
		st->buckets[j] = (uint32_t)i + 1;
	}
}

/* The index of the entry for this stack key, added when new. */
uint32_t
agg_stacks_intern(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state)
{
	struct agg_stack *e;
	uint32_t h = 0x811c9dc5u, k;
	size_t j, i;

	for (i = 0; i < depth; i++)
		h = agg_hash_mix(h, ids[i]);
	h = agg_hash_mix(h, ((uint64_t)(uint32_t)thread << 32) | (uint32_t)label_set);
	h = agg_hash_mix(h, (uint64_t)(uint32_t)state);
	if ((st->count + 1) * 2 > st->nbuckets)
		agg_stacks_rehash(st);
	j = h & (st->nbuckets - 1);
	while ((k = st->buckets[j]) != 0) {
		e = &st->entries[k - 1];
		if (e->hash == h && e->depth == depth && e->thread == thread &&
		    e->label_set == label_set && e->state == state &&
		    (depth == 0 || memcmp(st->ids + e->ids_off, ids, depth * sizeof *ids) == 0))
			return k - 1;
		j = (j + 1) & (st->nbuckets - 1);
	}
	xgrow((void **)&st->entries, &st->cap, st->count + 1, sizeof *st->entries);
	xgrow((void **)&st->ids, &st->ids_cap, st->nids + depth, sizeof *st->ids);
	if (depth > 0)
		memcpy(st->ids + st->nids, ids, depth * sizeof *ids);
	e = &st->entries[st->count];
	e->ids_off = st->nids;
	e->depth = depth;
	e->thread = thread;
	e->label_set = label_set;
	e->state = state;
	e->hash = h;
	e->weight = 0;
	e->count = 0;
	e->sent_weight = 0;
	e->sent_count = 0;
	st->nids += depth;
	st->buckets[j] = (uint32_t)++st->count;
	return (uint32_t)(st->count - 1);
}

/* Add one sample of WEIGHT to the entry for this key. */
uint32_t
agg_stacks_add(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state, int64_t weight)
{
	return agg_stacks_add_n(st, ids, depth, thread, label_set, state, weight, 1);
}

/* Add COUNT samples of WEIGHT in all to the entry for this key. */
uint32_t
agg_stacks_add_n(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state, int64_t weight, int64_t count)
{
	uint32_t k = agg_stacks_intern(st, ids, depth, thread, label_set, state);

	st->entries[k].weight += weight;
	st->entries[k].count += count;
	return k;
}

/* Zero every weight and count (and what was sent), keeping the keys. */
void
agg_stacks_clear(struct agg_stacks *st)
{
	size_t i;

	for (i = 0; i < st->count; i++) {
		st->entries[i].weight = 0;
		st->entries[i].count = 0;
		st->entries[i].sent_weight = 0;
		st->entries[i].sent_count = 0;
	}
}

/* Free the stack table's memory and empty it. */
void
agg_stacks_release(struct agg_stacks *st)
{
	free(st->entries);
	free(st->ids);
	free(st->buckets);
	memset(st, 0, sizeof *st);
}

/* Split [PREV, NOW) into running, blocked and waiting around a release. */
void
agg_split_gvl(int64_t prev, int64_t suspended, int64_t ready, int64_t now,
    struct agg_gvl_split *out)
{
	if (now < prev)
		now = prev;
	if (suspended < prev)
		suspended = prev;	/* released before the baseline moved */
	if (suspended > now)
		suspended = now;
	if (ready < suspended)
		ready = now;		/* never asked for the GVL back */
	if (ready > now)
		ready = now;
	out->running = suspended - prev;
	out->blocked = ready - suspended;
	out->wait = now - ready;
}

/* Open the GC window at NOW. */
void
agg_gc_enter(struct agg_gc_window *w, int billed, int64_t now)
{
	w->open = 1;
	w->billed = billed;
	/* A lazy sweep or an incremental mark goes on in a later entry; an
	 * entry with neither under way is GC only if a marking starts in it
	 * (see agg_gc_bills). */
	w->seg_state = w->phase;
	w->seg_start = billed ? now : 0;
}

/* Whether EV ends a billed segment.  The exit of an entry in which no
 * phase was under way and no marking began bills nothing: Ruby enters
 * the GC whenever an allocation finds no free slot (with GC disabled, or
 * the last sweep done, it only looks and leaves), and that time is the
 * allocating code's, for the next sample to bill. */
int
agg_gc_bills(const struct agg_gc_window *w, enum agg_gc_event ev)
{
	if (!w->open || !w->billed)
		return 0;
	if (ev == AGG_GC_END_MARK || ev == AGG_GC_END_SWEEP)
		return 1;
	return ev == AGG_GC_EXIT && w->seg_state != 0;
}

/* End the open segment at NOW: its weight, with *PREV moved past it. */
static int64_t
agg_gc_segment(struct agg_gc_window *w, int64_t now, int64_t *prev)
{
	int64_t start = w->seg_start, weight;

	w->seg_start = now;
	if (start < *prev)
		start = *prev;		/* billed already by an earlier sample */
	weight = now - start;
	if (weight <= 0)
		return 0;		/* empty, or the clock went back */
	*prev += weight;
	return weight;
}

/* Event EV at NOW: what it bills, and the phase it leaves. */
int64_t
agg_gc_event(struct agg_gc_window *w, enum agg_gc_event ev, int64_t now,
    int64_t *prev, int *state)
{
	int64_t weight = 0;

	if (agg_gc_bills(w, ev)) {
		*state = w->seg_state;
		if (*state == 0)	/* an end of a phase that began unseen */
			*state = ev == AGG_GC_END_SWEEP ? AGG_STATE_GC_SWEEP :
			    AGG_STATE_GC_MARK;
		weight = agg_gc_segment(w, now, prev);
	}
	if (ev == AGG_GC_START) {
		w->phase = AGG_STATE_GC_MARK;
		if (w->open && w->seg_state == 0)
			w->seg_state = AGG_STATE_GC_MARK;	/* from the entry */
	} else if (ev == AGG_GC_END_MARK) {
		w->phase = AGG_STATE_GC_SWEEP;
		w->seg_state = AGG_STATE_GC_SWEEP;
	} else if (ev == AGG_GC_END_SWEEP) {
		w->phase = 0;
	} else if (ev == AGG_GC_EXIT) {
		w->open = 0;
		w->billed = 0;
	}
	return weight;
}
