/*
 * speedscope-int.h: what the parts of the speedscope writer share
 * (speedscope.c: the file, its frames and the sampled profiles;
 * speedscope-evented.c: the evented profiles of a timeline).
 */
#ifndef RPERF_SPEEDSCOPE_INT_H
#define RPERF_SPEEDSCOPE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "timeline.h"

/* What the writing of one file needs. */
struct speedscope {
	const struct profile *p;
	FILE *fp;
	size_t vi;
	uint32_t *loc_frame;	/* location id -> frame index + 1, 0: none yet */
	uint64_t *frame_loc;	/* frame index - PROFILE_NSTATES -> location */
	size_t nframes;		/* the state and location frames */
	const char **marks;	/* distinct mark names, sorted */
	size_t nmarks;
	uint32_t *stack, *open;	/* the stack wanted, the frames open */
	size_t nopen, cap;
	size_t nevents;		/* written in the current profile */
	size_t nprofiles;	/* written */
	int64_t start;		/* where every profile's view begins */
};

/* Begin a profile of TYPE ("evented" or "sampled") called PREFIX and the
 * thread's name, "thread N (name)", in UNIT, from W->start to END. */
void speedscope_begin(struct speedscope *w, const char *type, const char *prefix,
    int64_t pid, int64_t thread, const char *thname, const char *unit,
    int64_t end);

/* The frames of sample S, root first, with its VM states on top (the
 * GVL's, then the GC's, as folded stacks have them), into w->stack;
 * returns how many. */
size_t speedscope_stack(struct speedscope *w, const struct profile_sample *s);

/* The distinct names of TL's marks, sorted, into w->marks: a frame each,
 * after the locations'. */
void speedscope_mark_names(struct speedscope *w, const struct timeline *tl);

/* Every thread of TL as an evented profile, each followed by its marks;
 * then the marks of threads without samples. */
void speedscope_evented(struct speedscope *w, const struct timeline *tl);

#endif
