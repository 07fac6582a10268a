/*
 * timeline-svg.h: the SVG timeline writer (rperf report --timeline -o
 * FILE.svg).  One self-contained file like the flame graph: a lane per
 * thread, coloured by VM state along time (running, GVL wait, GVL
 * blocked, GC marking, GC sweeping; idle where the thread has no sample),
 * each thread's user marks as labelled spans in rows below its lane (as
 * many rows as overlapping marks need), a time axis, a legend; hovering
 * shows the state, duration, time and stack under the pointer, a click
 * zooms into what was clicked, a drag into the range dragged, and "Reset
 * Zoom" or Escape goes back.  A search box, as in the flame graph, takes
 * a regex and draws the pieces whose stack has a matching frame in the
 * search colour in every lane, and the share of the threads' time they
 * hold ("Matched: N%"; a piece of several spans counts by the stack of
 * its longest span).
 */
#ifndef RPERF_TIMELINE_SVG_H
#define RPERF_TIMELINE_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

#define TIMELINE_SVG_DEFAULT_WIDTH 1200

/*
 * Spans are merged into pieces at least TIMELINE_SVG_PIECES_PER_PX-th of
 * a pixel long at the full view (a piece of several states is drawn in
 * the one it spent most time in, and says so on hover), so a thread
 * writes at most about width * TIMELINE_SVG_PIECES_PER_PX pieces however
 * long the run; marks shorter than that are left out.
 */
#define TIMELINE_SVG_PIECES_PER_PX 10

/* Frames of a stack shown on hover, leaf first. */
#define TIMELINE_SVG_STACK_FRAMES 8

struct timeline_svg_opts {
	size_t value_index;	/* (size_t)-1: the profile's default value */
	const char *title;	/* NULL: "Timeline" */
	const char *subtitle;	/* a second line (filters); may be NULL */
	int width;		/* pixels; 0: TIMELINE_SVG_DEFAULT_WIDTH */
};

/*
 * Write the timeline of P to FP.  Returns 0; -1 with errno set on a write
 * error, or with errno ENOMSG, having written nothing, when P's samples
 * carry no timestamps or the value is not a time.
 */
int timeline_svg_write(const struct profile *p, FILE *fp,
    const struct timeline_svg_opts *o);

#endif
