/*
 * aggregate.h: the sampler's tables, in plain C so they are unit-tested
 * without Ruby.  The frame table gives each distinct (frame, line) an id
 * in order of first sight; the stack table merges samples with the same
 * frame ids, thread, label set and VM state into one weight and count.
 * Frames are opaque pairs of words here (Ruby VALUEs in the sampler, which marks
 * them for the GC).  agg_split_gvl and the GC window hold the arithmetic
 * of billing a thread's time around a GVL release and across a GC: the
 * sampler reads the clocks and records the samples, these decide the
 * weights.  Allocation failure exits (xmalloc); the GVL split and the GC
 * window allocate nothing.
 */
#ifndef RPERF_AGGREGATE_H
#define RPERF_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

/* The VM state a sample was taken in; stored in the stack key.  Past
 * AGG_STATE_NORMAL, in the order of profile_states (state x is its
 * index x - 1). */
enum agg_state {
	AGG_STATE_NORMAL,
	AGG_STATE_GVL_BLOCKED,
	AGG_STATE_GVL_WAIT,
	AGG_STATE_GC_MARK,
	AGG_STATE_GC_SWEEP,
};

struct agg_frames {
	uintptr_t *keys;	/* keys[id] */
	uintptr_t *owns;	/* owns[id]: a second word of the key (the
				 * sampler's frame's own iseq), or 0 */
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

/* The id of frame (KEY, OWN, LINE), added when new. */
uint32_t agg_frames_intern(struct agg_frames *ft, uintptr_t key, uintptr_t own, int line);
void agg_frames_release(struct agg_frames *ft);

/* The index of the entry for this stack key, added (weight 0) when new. */
uint32_t agg_stacks_intern(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state);
/* Add one sample of WEIGHT to the entry for this key. */
uint32_t agg_stacks_add(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state, int64_t weight);
/* Add COUNT samples of WEIGHT in all to the entry for this key. */
uint32_t agg_stacks_add_n(struct agg_stacks *st, const uint32_t *ids, uint32_t depth,
    int thread, int label_set, int state, int64_t weight, int64_t count);
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

/*
 * The GC window: the span from a GC's entry to its exit, on the thread
 * that entered it, billed in segments as %GC=mark or %GC=sweep.  A GC
 * may mark in one entry and sweep (lazily) over later ones, so the phase
 * outlives the window.  Each segment is billed when it ends: its length
 * on the thread's clock, less anything before the thread's baseline
 * (billed already), and the baseline moves past what was billed, so the
 * next timer sample does not bill the GC's time again.
 */
enum agg_gc_event {
	AGG_GC_START,		/* marking begins */
	AGG_GC_ENTER,		/* the window opens */
	AGG_GC_END_MARK,	/* marking ends, sweeping begins */
	AGG_GC_END_SWEEP,	/* sweeping ends */
	AGG_GC_EXIT		/* the window closes */
};

struct agg_gc_window {
	int phase;		/* AGG_STATE_GC_MARK, _SWEEP or 0 (no GC) */
	int open;		/* between ENTER and EXIT */
	int billed;		/* open on a thread whose time is billed */
	int seg_state;		/* the state of the open segment; 0: not
				 * GC unless a marking starts in it */
	int64_t seg_start;	/* clock reading where it began */
};

/* Open the window at NOW on the entering thread's clock; BILLED: that
 * thread's time is billed (else NOW is not read). */
void agg_gc_enter(struct agg_gc_window *w, int billed, int64_t now);

/* Whether event EV (not ENTER) ends a segment that is billed, so that
 * agg_gc_event needs the billed thread's clock and baseline. */
int agg_gc_bills(const struct agg_gc_window *w, enum agg_gc_event ev);

/*
 * Event EV (not ENTER) at NOW.  When it ends a billed segment (see
 * agg_gc_bills), returns the weight to bill in *STATE (0: nothing) and
 * moves *PREV, the billed thread's baseline, past it; otherwise returns
 * 0 and reads neither NOW nor PREV (which may be NULL).
 */
int64_t agg_gc_event(struct agg_gc_window *w, enum agg_gc_event ev, int64_t now,
    int64_t *prev, int *state);

#endif
