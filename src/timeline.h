/*
 * timeline.h: what each thread did and when, from a profile whose samples
 * carry their time (record --timeline or --no-aggregate: a numeric label
 * "timestamp", the end of the span the sample bills, in ns since the
 * start).  Each sample is a span [timestamp - weight, timestamp] of its
 * thread in its VM state; spans are ordered and clipped so that a
 * thread's never overlap.  The writers of the per-thread views (the text
 * summary, speedscope, the SVG timeline) and rperf report's time window
 * read it.  Plain C over the profile model; no Ruby.
 */
#ifndef RPERF_TIMELINE_H
#define RPERF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numfmt.h"
#include "profile.h"

/* A span's state: running, or PROFILE_STATE_x + 1. */
enum timeline_state {
	TIMELINE_RUNNING,
	TIMELINE_GVL_BLOCKED,
	TIMELINE_GVL_WAIT,
	TIMELINE_GC_MARK,
	TIMELINE_GC_SWEEP,
};
#define TIMELINE_NSTATES 5

struct timeline_span {
	int64_t start, end;	/* ns since the profile's start */
	size_t sample;		/* index into the profile's samples */
	int state;		/* enum timeline_state */
};

struct timeline_thread {
	int64_t id;		/* the "thread" label, or 0 */
	const char *name;	/* "thread_name", or NULL (owned by the profile) */
	int64_t pid;		/* the "pid" label of merged children, or 0 */
	struct timeline_span *spans;	/* in time order */
	size_t nspans;
	int64_t total[TIMELINE_NSTATES];
	int64_t first, last;	/* its first span's start, last span's end */
};

/* A user's span (Rperf.mark), from the profile's comments
 * "mark: PID THREAD START END NAME" (ns since the start; PID 0 for the
 * profiled process itself). */
struct timeline_mark {
	int64_t pid, thread;
	int64_t start, end;
	const char *name;	/* owned by the profile */
};
#define TIMELINE_MARK_COMMENT "mark"

/* Whether mark M is one of the process's own events (a fork, an exec, a
 * snapshot, recorded so): no length, and a name that starts with the
 * event in brackets ("[fork] child 4242"). */
int timeline_mark_is_event(const struct timeline_mark *m);

struct timeline {
	struct timeline_thread *threads;	/* by pid, then thread id */
	size_t nthreads;
	struct timeline_mark *marks;	/* by start, the longer first */
	size_t nmarks;
	int64_t end;		/* the latest span end */
	size_t value_index;	/* the value the spans measure */
};

/*
 * Build the timeline of P's value VI into TL.  Returns 0, or -1 when P's
 * samples carry no timestamps (a profile recorded without --timeline or
 * --no-aggregate).
 */
int timeline_build(const struct profile *p, size_t vi, struct timeline *tl);
void timeline_release(struct timeline *tl);

/* Whether any sample of P carries a timestamp. */
int timeline_has_times(const struct profile *p);

/* The timestamp of sample S (ns since the start), or -1. */
int64_t timeline_sample_time(const struct profile *p, const struct profile_sample *s);

/*
 * Keep only the samples of P whose time lies in [FROM_NS, TO_NS] (TO_NS <
 * 0: no end); returns how many are kept.  Samples without a time go.
 */
size_t timeline_cut(struct profile *p, int64_t from_ns, int64_t to_ns);

/*
 * The per-thread summary of the text report: for each thread its busy
 * time, GVL wait, blocked and GC time, and the longest GVL waits with the
 * thread that held the GVL meanwhile (the one whose running or GC spans
 * overlap the wait most: GC runs on the GVL's holder), at most TOP of
 * them.  Values in U.
 */
void timeline_write_summary(const struct profile *p, const struct timeline *tl,
    FILE *fp, const struct numfmt_unit *u, size_t top);

#endif
