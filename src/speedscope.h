/*
 * speedscope.h: the speedscope writer.  speedscope (www.speedscope.app,
 * also a static page in its npm package) is the offline viewer rbspy and
 * py-spy users know; its JSON file format keeps the frames once, shared,
 * and a list of profiles that each refer to them.
 *
 * A profile whose samples carry timestamps (record --no-aggregate) is
 * written as one "evented" profile per thread: frames opened and closed
 * at the times of the thread's spans (timeline.h), so that what the
 * thread did shows where it happened and a gap (idle, off-CPU in cpu
 * mode) stays empty; VM states are pseudo-frames on top of the stack, as
 * in the flame graph; the user marks of each thread follow it as a
 * profile "marks: ..." of their own.  A profile without timestamps is
 * written as one "sampled" profile per thread, each stack once per
 * sample with its weight, in the order of the profile's samples (which
 * says nothing of time).
 */
#ifndef RPERF_SPEEDSCOPE_H
#define RPERF_SPEEDSCOPE_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

/*
 * Write value VI of P as a speedscope file named NAME (may be NULL) to
 * FP.  Returns 0, or -1 with errno set on a write error.
 */
int speedscope_write(const struct profile *p, FILE *fp, size_t vi,
    const char *name);

#endif
