/*
 * numfmt.c: numbers, values and percentages as rperf prints them (see
 * numfmt.h).
 *
 * Everything goes through one digit grouper, which takes decimal text as
 * printf wrote it, so integers, doubles and values share one notion of
 * where the commas go.  Values in milliseconds are rounded to hundredths
 * in integer arithmetic on the magnitude, never through double, so that
 * INT64_MIN and the difference of two extreme values print exactly.
 * Nothing here allocates or prints.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"

/* SIGN, then the decimal text DIGITS with a ',' between each group of
 * three digits of its integer part (the part before any '.'), into BUF. */
static char *
format_group(char *buf, size_t len, const char *sign, const char *digits)
{
	const char *dot = strchr(digits, '.');
	size_t lead = dot ? (size_t)(dot - digits) : strlen(digits);
	size_t i, at = 0;

	if (len == 0)
		return buf;
	for (; *sign != '\0' && at + 1 < len; sign++)
		buf[at++] = *sign;
	for (i = 0; i < lead && at + 1 < len; i++) {
		if (i != 0 && (lead - i) % 3 == 0 && at + 2 < len)
			buf[at++] = ',';
		buf[at++] = digits[i];
	}
	for (i = lead; digits[i] != '\0' && at + 1 < len; i++)
		buf[at++] = digits[i];
	buf[at] = '\0';
	return buf;
}

/* |V| as an unsigned magnitude, safe for INT64_MIN. */
static uint64_t
format_abs(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* Magnitude M in U with SIGN ("-", "+" or "") in front, into BUF: a
 * magnitude, so that a difference of two int64_t values prints exactly. */
static char *
format_mag(char *buf, size_t len, const struct numfmt_unit *u, uint64_t m,
    const char *sign)
{
	char digits[48];
	uint64_t ms, frac;

	if (!u->ms) {
		snprintf(digits, sizeof digits, "%" PRIu64, m);
		return format_group(buf, len, sign, digits);
	}
	/* Hundredths of a millisecond, rounded, without doubles. */
	ms = m / 1000000;
	frac = (m % 1000000 + 5000) / 10000;
	if (frac == 100) {
		ms++;
		frac = 0;
	}
	snprintf(digits, sizeof digits, "%" PRIu64 ".%02u", ms,
	    (unsigned)frac);
	return format_group(buf, len, sign, digits);
}

/* The unit of value VI of P. */
void
numfmt_unit_init(struct numfmt_unit *u, const struct profile *p, size_t vi)
{
	const char *unit = vi < p->nvalue_types ?
	    profile_str(p, p->value_types[vi].unit) : "";

	u->ms = strcmp(unit, "nanoseconds") == 0;
	if (u->ms)
		u->suffix = "ms";
	else if (strcmp(unit, "count") == 0)
		u->suffix = "";
	else
		u->suffix = unit;
}

/* V with thousands separators. */
char *
numfmt_int(char *buf, size_t len, int64_t v)
{
	static const struct numfmt_unit count = { 0, "" };

	return format_mag(buf, len, &count, format_abs(v), v < 0 ? "-" : "");
}

/* X with DECIMALS decimals and thousands separators. */
char *
numfmt_double(char *buf, size_t len, double x, int decimals)
{
	char digits[64];

	snprintf(digits, sizeof digits, "%.*f", decimals, x < 0 ? -x : x);
	return format_group(buf, len, x < 0 ? "-" : "", digits);
}

/* V in U. */
char *
numfmt_value(char *buf, size_t len, const struct numfmt_unit *u, int64_t v)
{
	return format_mag(buf, len, u, format_abs(v), v < 0 ? "-" : "");
}

/* V in U with its sign. */
char *
numfmt_delta(char *buf, size_t len, const struct numfmt_unit *u, int64_t v)
{
	return format_mag(buf, len, u, format_abs(v), v < 0 ? "-" :
	    v > 0 ? "+" : "");
}

/* |AFTER - BEFORE| as an unsigned magnitude. */
uint64_t
numfmt_gap(int64_t before, int64_t after)
{
	/* Modulo 2^64 the unsigned difference is exact: it is below 2^64. */
	return after >= before ? (uint64_t)after - (uint64_t)before :
	    (uint64_t)before - (uint64_t)after;
}

/* AFTER - BEFORE in U with its sign. */
char *
numfmt_change(char *buf, size_t len, const struct numfmt_unit *u,
    int64_t before, int64_t after)
{
	return format_mag(buf, len, u, numfmt_gap(before, after),
	    after < before ? "-" : after > before ? "+" : "");
}

/* PART as a percentage of WHOLE. */
char *
numfmt_pct(char *buf, size_t len, double part, double whole)
{
	if (whole == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * part / whole);
	return buf;
}
