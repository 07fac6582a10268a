/*
 * numfmt.h: how rperf prints numbers, the one place for it: integers and
 * decimals with thousands separators ("1,234,567", "1,234.50"), a
 * profile's values in their unit (nanoseconds as milliseconds with two
 * decimals, anything else as integers), signed changes exact even where
 * the difference of two int64_t values overflows, and percentages.  Every
 * report, the flame graph's subtitle, the diff and "rperf stat" format
 * through these, so the same figure reads the same everywhere.
 *
 * Plain C; every function writes into a caller's buffer (LEN bytes, cut
 * short rather than overrun) and returns it, so calls nest in printf's
 * arguments.
 */
#ifndef RPERF_NUMFMT_H
#define RPERF_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* How a profile's values print: nanoseconds as ms, others as integers. */
struct numfmt_unit {
	int ms;
	const char *suffix;	/* "ms", "" for counts, or the unit */
};

/* The unit of value VI of P ("" when VI is not one of P's values). */
void numfmt_unit_init(struct numfmt_unit *u, const struct profile *p,
    size_t vi);

/* V with thousands separators ("-1,234"). */
char *numfmt_int(char *buf, size_t len, int64_t v);
/* X with DECIMALS decimals and thousands separators ("1,234.50"). */
char *numfmt_double(char *buf, size_t len, double x, int decimals);

/* V in U ("1,234.50" for ms, "1,234" otherwise). */
char *numfmt_value(char *buf, size_t len, const struct numfmt_unit *u,
    int64_t v);
/* V in U with its sign ("+1.50", "-3", "0"). */
char *numfmt_delta(char *buf, size_t len, const struct numfmt_unit *u,
    int64_t v);
/* |AFTER - BEFORE|, exact even where the difference overflows int64_t. */
uint64_t numfmt_gap(int64_t before, int64_t after);
/* AFTER - BEFORE in U like numfmt_delta(), exact where the difference
 * overflows int64_t. */
char *numfmt_change(char *buf, size_t len, const struct numfmt_unit *u,
    int64_t before, int64_t after);

/* PART as a percentage of WHOLE, one decimal ("12.3%"; "-" when WHOLE
 * is 0). */
char *numfmt_pct(char *buf, size_t len, double part, double whole);

#endif
