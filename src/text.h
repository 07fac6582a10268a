/*
 * text.h: the human-readable report: a header (command, mode, total,
 * sample and trigger counts), the top functions by self and by cumulative
 * value, the VM-state breakdown and the thread table.
 */
#ifndef RPERF_TEXT_H
#define RPERF_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"

#define TEXT_DEFAULT_TOP 50
/* value_index meaning "the profile's default value". */
#define TEXT_VALUE_DEFAULT ((size_t)-1)

struct text_opts {
	size_t top;		/* rows in each table; 0 means TEXT_DEFAULT_TOP */
	size_t value_index;	/* value to report, or TEXT_VALUE_DEFAULT */
	int sort_cum;		/* print the cumulative table first */
	double min_pct;		/* leave out rows under this percent of the total */
};

/* Fill O with the defaults: 50 rows, the default value, self first. */
void text_opts_init(struct text_opts *o);

/*
 * Write the report of P to FP; O may be NULL for the defaults.  Comments
 * read (PROFILE_COMMENT_* in profile.h): "command", "mode", "frequency",
 * "samples", "triggers", "rperf", "ruby".  Returns 0, or -1 on a write
 * error with errno set.
 */
int text_write(const struct profile *p, FILE *fp, const struct text_opts *o);

/* A memory profile's top TOP allocation sites (leaf functions, by bytes
 * allocated, with objects and what is still in use), as text_write ends
 * with; nothing when P has not Go's four memory sample types. */
void text_write_alloc_sites(const struct profile *p, FILE *fp, size_t top);

#endif
