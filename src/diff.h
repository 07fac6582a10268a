/*
 * diff.h: comparing two profiles function by function: the flat (self)
 * and cumulative values of each function name in BASE and in TARGET, and
 * the text report of their deltas, largest change first, with functions
 * that appeared or vanished marked.  Functions are matched by name, so
 * profiles from different runs, machines or formats compare.
 */
#ifndef RPERF_DIFF_H
#define RPERF_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numfmt.h"
#include "profile.h"

#define DIFF_DEFAULT_TOP 30

/* One function name and its values in both profiles. */
struct diff_row {
	const char *name;	/* owned by diff.names */
	int64_t base_self, base_cum;
	int64_t target_self, target_cum;
};

struct diff {
	struct profile *names;	/* interns the function names */
	struct diff_row *rows;	/* one per name seen in either profile */
	size_t nrows;
	int64_t base_total, target_total;	/* base_total after scaling */
	int64_t base_raw_total;	/* before scaling */
	double scale;		/* what BASE's values were multiplied by */
	struct numfmt_unit unit;
};

/*
 * Compare value BVI of BASE with value TVI of TARGET ((size_t)-1: each
 * profile's default).  With NORMALIZE, BASE's values are first scaled so
 * its total equals TARGET's.  Returns 0, or -1 with a message in ERR when
 * the two values are in different units.
 */
int diff_compute(struct diff *d, const struct profile *base, size_t bvi,
    const struct profile *target, size_t tvi, int normalize, char *err,
    size_t errlen);
void diff_release(struct diff *d);

struct diff_opts {
	size_t top;		/* rows in each table; 0: DIFF_DEFAULT_TOP */
	const char *base_name, *target_name;	/* for the header */
	const char *filters;	/* "" or the filters in force */
};

/* Write the text report of D to FP.  Returns 0, or -1 on a write error. */
int diff_write(const struct diff *d, FILE *fp, const struct diff_opts *o);

#endif
