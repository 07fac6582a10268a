/*
 * aggregate.h: the sampler's tables, in plain C so they are unit-tested
 * without Ruby.  The frame table gives each distinct (frame, line) an id
 * in order of first sight; the stack table merges samples with the same
 * frame ids, thread, label set and VM state into one weight and count.
 * Frames are opaque words here (Ruby VALUEs in the sampler, which marks
 * them for the GC).  agg_split_gvl holds the arithmetic of billing a
 * thread's time around a GVL release.  Allocation failure exits (xmalloc).
 */
#ifndef RPERF_AGGREGATE_H
#define RPERF_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

struct agg_frames {
	uintptr_t *keys;	/* keys[id] */
	int *lines;		/* lines[id] */
	size_t count, cap;
	uint32_t *buckets;	/* id + 1; 0 is empty */
	size_t nbuckets;
};

struct agg_stack {
	size_t ids_off;		/* into agg_stacks.ids */
	uint32_t depth;
	int thread;
	int label_set;
	int state;
	uint32_t hash;
	int64_t weight;
	int64_t count;
	int64_t sent_weight;	/* weight and count already handed out as */
	int64_t sent_count;	/* an interval (see the sampler's push) */
};

struct agg_stacks {
	struct agg_stack *entries;
	size_t count, cap;
	uint32_t *ids;
	size_t nids, ids_cap;
	uint32_t *buckets;	/* entry index + 1; 0 is empty */
	size_t nbuckets;
};

/* The id of frame (KEY, LINE), added when new. */
uint32_t agg_frames_intern(struct agg_frames *ft, uintptr_t key, int line);
void agg_frames_release(struct agg_frames *ft);

/* The index of the entry for this stack key, added (weight 0) when new. */
uint32_t agg_stacks_intern(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state);
/* Add one sample of WEIGHT to the entry for this key. */
uint32_t agg_stacks_add(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state, int64_t weight);
/* Zero every weight and count (and what was sent), keeping the keys. */
void agg_stacks_clear(struct agg_stacks *st);
void agg_stacks_release(struct agg_stacks *st);

/*
 * Split a thread's time [PREV, NOW) around a GVL release at SUSPENDED and
 * a request to get it back at READY (0 if none was seen): running up to
 * the release, blocked off the GVL until the request, waiting for the GVL
 * after it.  Timestamps are clamped into order, so the three parts are
 * never negative and always add up to NOW - PREV (when NOW >= PREV).
 */
struct agg_gvl_split {
	int64_t running;
	int64_t blocked;
	int64_t wait;
};
void agg_split_gvl(int64_t prev, int64_t suspended, int64_t ready, int64_t now,
    struct agg_gvl_split *out);

#endif
