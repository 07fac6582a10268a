/*
 * formats.h: the table of profile formats.  Each format is one row: its
 * name, the file extensions that select it, whether it is binary, where
 * it may be written, how to recognise and parse it when it can be read,
 * and how to write it.  Names, extensions, --format checks, their error
 * and help text, completion words and the build's feature list are all
 * derived from the rows.  Adding a format: a file with its reader and
 * writer, and one row in formats.c.
 *
 * Plain C over the profile model; no Ruby.
 */
#ifndef RPERF_FORMATS_H
#define RPERF_FORMATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "text.h"

/* Where a format is used (struct format.flags). */
#define FORMAT_BINARY	0x01	/* bytes, not text: never to a terminal */
#define FORMAT_RECORD	0x02	/* record, stat, snapshots, Rperf.snapshot write it */
#define FORMAT_CONVERT	0x04	/* rperf report converts a profile to it */
#define FORMAT_DIFF	0x08	/* rperf diff draws a comparison in it */
#define FORMAT_TREE	0x10	/* report --tree is a variant of it */
#define FORMAT_PROFILE	0x20	/* it holds samples: a converted one notes its filters */

/* How sure a reader is that a whole input is in its format. */
enum format_sniff {
	FORMAT_SNIFF_NO,	/* it cannot be */
	FORMAT_SNIFF_MAYBE,	/* try it when no reader is sure */
	FORMAT_SNIFF_YES,	/* it is: failing to parse means corrupt */
};

/* What the writers take besides the profile; every field may be 0. */
struct format_opts {
	/* Rows, order, cut and the value to show (NULL: the defaults);
	 * every writer that shows one value takes text->value_index. */
	const struct text_opts *text;
	/* What the profile was read from ("-": standard input), for a
	 * title when the profile names no command. */
	const char *source;
	const char *subtitle;	/* a second title line (the filters) */
	/* svg: the timeline of a profile with timestamps instead of the
	 * flame graph (rperf report --timeline). */
	int timeline;
};

struct format {
	const char *name;
	/* Extensions that select it, the usual one first; NULL-terminated. */
	const char *const *exts;
	unsigned flags;
	/* Readers only (NULL otherwise): whether an input starting with
	 * byte C may be in this format (so that a large foreign input is
	 * refused at its first byte), whether BUF, a whole non-empty input,
	 * is (TEXT: it holds no control byte but tab, CR and LF, worked out
	 * once for all the readers), and parsing it (a detail of what is
	 * wrong in DETAIL on failure). */
	int (*first_byte)(uint8_t c);
	enum format_sniff (*sniff)(const uint8_t *buf, size_t len, int text);
	struct profile *(*parse)(const uint8_t *buf, size_t len, char *detail,
	    size_t detaillen);
	/* Write P to FP; 0, or -1 with errno set. */
	int (*write)(const struct profile *p, FILE *fp, const struct format_opts *o);
};

extern const struct format format_pprof;
extern const struct format format_folded;
extern const struct format format_text;
extern const struct format format_svg;
extern const struct format format_speedscope;

/* Every format, in the order lists show them; NULL-terminated. */
extern const struct format *const format_table[];

/* The format called NAME with every flag of NEED (0: any), or NULL. */
const struct format *format_by_name(const char *name, unsigned need);
/* The format PATH's extension selects, among those with every flag of
 * NEED, or NULL ("-", a bare extension and a directory select none). */
const struct format *format_by_path(const char *path, unsigned need);

/* The names of the formats with every flag of NEED (0: any, and
 * FORMAT_READ: those that can be read) into BUF, "a, b or c", or
 * separated by SEP when SEP is not NULL ("a b c"); returns BUF. */
#define FORMAT_READ	0x100
char *format_names(unsigned need, const char *sep, char *buf, size_t len);
/* The extensions of the formats with every flag of NEED, without their
 * dots, separated by SEP, into BUF; returns BUF. */
char *format_exts(unsigned need, const char *sep, char *buf, size_t len);

/* The index of the value a writer shows under O. */
size_t format_value_index(const struct profile *p, const struct format_opts *o);

/*
 * Recognise and parse LEN bytes, a whole input called NAME, with the
 * readers of the table.  Returns the profile and stores its format in
 * *FMT (may be NULL), or NULL with "'NAME' is empty", "'NAME' is not a
 * pprof or folded profile" or "'NAME' is truncated or corrupt: DETAIL"
 * in ERR.
 */
struct profile *format_parse(const uint8_t *buf, size_t len, const char *name,
    const struct format **fmt, char *err, size_t errlen);

/* Whether byte C may begin an input one of the readers accepts, so that
 * a large foreign input is refused at its first byte. */
int format_first_byte_ok(uint8_t c);

#endif
