/*
 * frames.h: a sample's stack as the tree-shaped views show it: the call
 * tree and flame graph (report.c), speedscope (speedscope.c) and the SVG
 * timeline's names (timeline-svg.c).  One place for the order of the
 * frames (root first, then the VM states as pseudo-frames on top, the
 * GVL's and then the GC's, as folded stacks have them) and for how a
 * function's name shows ("[unknown]" for none; a real function named like
 * a VM state's pseudo-frame in parentheses, so it cannot pass for one).
 */
#ifndef RPERF_FRAMES_H
#define RPERF_FRAMES_H

#include <stdint.h>

#include "profile.h"

/* Room for a name frames_name() makes: a state's pseudo-frame, disguised. */
#define FRAMES_NAME_MAX 32

/* How function name NAME shows: NAME, "[unknown]", or its disguise
 * written into BUF. */
const char *frames_name(const char *name, char buf[FRAMES_NAME_MAX]);

/* A walk over one sample's frames. */
struct frames_walk {
	const struct profile *p;
	const uint64_t *locs;
	uint32_t left;		/* locations not yet walked */
	int state[2];		/* the VM states to come, profile_states indexes */
	int nstate, k;
};

void frames_walk_begin(struct frames_walk *w, const struct profile *p,
    const struct profile_sample *s);
/* The next frame, root first: a location id (> 0; ids out of range are
 * passed over), or -(1 + its profile_states index) for a VM state; 0 at
 * the end. */
int64_t frames_walk_next(struct frames_walk *w);
/* Whether nothing is left: the frame last returned was the top one. */
int frames_walk_done(const struct frames_walk *w);

#endif
