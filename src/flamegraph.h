/*
 * flamegraph.h: the SVG flame graph writer.  One self-contained file (its
 * CSS and script inline, nothing fetched): frames sized by weight, root at
 * the bottom, VM states as colored pseudo-frames on top of the leaf,
 * details on hover, zoom on click, a search box; or, given a base
 * profile, a differential flame graph in the target's shape, red where
 * time grew and blue where it shrank.
 */
#ifndef RPERF_FLAMEGRAPH_H
#define RPERF_FLAMEGRAPH_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

#define FLAMEGRAPH_DEFAULT_WIDTH 1200

struct flamegraph_opts {
	size_t value_index;	/* (size_t)-1: the profile's default value */
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* a second line (filters); may be NULL */
	int width;		/* pixels; 0: FLAMEGRAPH_DEFAULT_WIDTH */
	/* Differential: compare the profile with BASE (NULL for none),
	 * whose values are multiplied by BASE_SCALE first. */
	const struct profile *base;
	size_t base_value_index;
	double base_scale;
};

/* Fill O with the defaults. */
void flamegraph_opts_init(struct flamegraph_opts *o);

/*
 * Write P as an SVG flame graph to FP; O may be NULL for the defaults.
 * Stacks are merged into a tree first, and frames narrower than a tenth
 * of a pixel at the full view are left out (their weight stays in their
 * parent), so the file stays small with 100k unique stacks.  Returns 0,
 * or -1 with errno set on a write error, or with EFBIG, having written
 * nothing, when the stacks need more tree nodes than 32-bit ids allow.
 */
int flamegraph_write(const struct profile *p, FILE *fp,
    const struct flamegraph_opts *o);

#endif
