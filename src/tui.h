/*
 * tui.h: "rperf report"'s terminal browser, drawn with ncurses: the flat
 * table, the call tree and the callers of a function, the threads, labels
 * and VM states, a function's annotated source lines, a timeline's threads
 * over time and a memory profile's allocation sites, for any of the
 * profile's sample types; filters added by key mean what --focus,
 * --ignore, --tagfocus and --thread mean.
 * cmd-report.c decides when to open it (a terminal, no output chosen).
 */
#ifndef RPERF_TUI_H
#define RPERF_TUI_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct tui_opts {
	const char *input;		/* the file name, for the title */
	size_t value_index;		/* TEXT_VALUE_DEFAULT or an index */
	const char *filters;		/* the command line's, or "" */
	int64_t total_read;		/* the total before those filters */
	const int64_t *totals_read;	/* the same per sample type, or NULL */
	int sort_cum;			/* the flat table by cumulative value */
	const char *source_dir;		/* --source-dir, or NULL */
};

/*
 * Browse P (the command line's filters applied) until the user leaves;
 * the keys' own filters drop samples of P in place.  Returns an exit
 * status, or -1, P untouched, when the terminal cannot be drawn on (an
 * unknown TERM).  The terminal is restored on every path, and a SIGINT,
 * SIGTERM or SIGHUP ends the browser and then the process by that signal.
 */
int tui_run(struct profile *p, const struct tui_opts *o, char *err, size_t errlen);

#endif
