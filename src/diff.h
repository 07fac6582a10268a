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

/*
 * Several runs of each side: the median of N values (V is reordered; for
 * an even N the mean of the two middle ones; 0 for none), and the index
 * of the run whose value is the median (the lower middle one for an even
 * N, the first of equal values), whose profile the report shows.
 */
double diff_median(double *v, size_t n);
size_t diff_median_run(const double *v, size_t n);

/* How many functions the verdict of a tripped gate names. */
#define DIFF_GATE_TOP 10

/*
 * The regression gate (--fail-over): BEFORE and AFTER are the medians of
 * the base and target runs, as times (or counts) in D's unit, or, with
 * SHARE, as fractions of each run's total.  It trips when AFTER exceeds
 * BEFORE by more than LIMIT percent (any AFTER above a BEFORE of 0).
 */
struct diff_gate {
	const char *prefix;	/* "rperf diff" */
	const char *what;	/* "total", "focused time" */
	double limit;		/* percent, > 0 */
	double before, after;
	int share;
	size_t nbase, ntarget;	/* runs behind the medians */
	/* The functions named are those whose cumulative time in D grew
	 * most, D's base values multiplied by SCALE first (1: as they are). */
	double scale;
	size_t top;		/* functions named; 0: DIFF_GATE_TOP */
	/* Which functions may be named: those NAMED accepts (the ones
	 * --focus matches), or when NULL all but those on every stack of
	 * both runs, whose growth only repeats the total's. */
	int (*named)(const char *name, void *arg);
	void *named_arg;
};

int diff_gate_tripped(const struct diff_gate *g);

/*
 * Write G's verdict to FP: "PREFIX: regression: ..." and one line per
 * function that grew most, or "PREFIX: within the limit: ...".  Returns
 * 0, or -1 on a write error.
 */
int diff_gate_write(const struct diff *d, const struct diff_gate *g,
    FILE *fp);

#endif
