/*
 * formats.c: the table of profile formats (see formats.h): one row a
 * format, the adapters between the rows and each format's own reader and
 * writer, recognition of an input by its content, and the names and
 * extension lists derived from the rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "flamegraph.h"
#include "folded.h"
#include "formats.h"
#include "pprof.h"
#include "secret.h"
#include "speedscope.h"
#include "timeline-svg.h"
#include "xmalloc.h"

/* Whether BUF is text: no control bytes but tab, CR and LF. */
static int
formats_is_text(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if ((buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n' &&
		    buf[i] != '\r') || buf[i] == 0x7f)
			return 0;
	}
	return 1;
}

/* Whether C may begin text. */
static int
formats_text_first_byte(uint8_t c)
{
	return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
}

/* --- pprof --- */

static const char *const formats_pprof_exts[] = { ".pb.gz", ".pprof", ".pb",
    ".data", NULL };

/* Gzip is pprof's usual wrapping; raw protobuf is binary, text is not
 * it; a profile's first field is almost always sample_type or sample, so
 * one that starts so and does not parse is corrupt rather than foreign. */
static enum format_sniff
formats_pprof_sniff(const uint8_t *buf, size_t len, int text)
{
	if (pprof_is_gzip(buf, len))
		return FORMAT_SNIFF_YES;
	if (text)
		return FORMAT_SNIFF_NO;
	return buf[0] == 0x0a || buf[0] == 0x12 ? FORMAT_SNIFF_YES :
	    FORMAT_SNIFF_MAYBE;
}

/* Gzip (0x1f), or the first byte of a protobuf key: a field number from
 * 1 and a wire type protobuf still uses (0, 1, 2 or 5); fields the
 * Profile message does not know are allowed, as protobuf allows them. */
static int
formats_pprof_first_byte(uint8_t c)
{
	unsigned wire = c & 7;

	return c == 0x1f || (c >= 8 && (wire == 0 || wire == 1 || wire == 2 ||
	    wire == 5));
}

/* Parse pprof, gzipped or raw. */
static struct profile *
formats_pprof_parse(const uint8_t *buf, size_t len, char *detail, size_t detaillen)
{
	return pprof_parse(buf, len, detail, detaillen);
}

/* Write pprof (gzipped). */
static int
formats_pprof_write(const struct profile *p, FILE *fp, const struct format_opts *o)
{
	char perr[256];

	(void)o;
	if (pprof_write(p, fp, perr, sizeof perr) != 0) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

const struct format format_pprof = {
	.name = "pprof",
	.exts = formats_pprof_exts,
	.flags = FORMAT_BINARY | FORMAT_RECORD | FORMAT_CONVERT | FORMAT_PROFILE,
	.first_byte = formats_pprof_first_byte,
	.sniff = formats_pprof_sniff,
	.parse = formats_pprof_parse,
	.write = formats_pprof_write,
};

/* --- folded stacks --- */

static const char *const formats_folded_exts[] = { ".folded", ".collapsed", NULL };

/* Whether BUF is text whose first non-blank line ends in an integer. */
static enum format_sniff
formats_folded_sniff(const uint8_t *buf, size_t len, int text)
{
	const uint8_t *end = buf + len, *eol, *stop, *tok;

	if (!text)
		return FORMAT_SNIFF_NO;
	for (; buf < end; buf = eol + 1) {
		eol = memchr(buf, '\n', (size_t)(end - buf));
		if (eol == NULL)
			eol = end;
		stop = eol;
		while (stop > buf && (stop[-1] == ' ' || stop[-1] == '\t' ||
		    stop[-1] == '\r'))
			stop--;
		if (stop == buf)
			continue;
		for (tok = stop; tok > buf && tok[-1] >= '0' && tok[-1] <= '9'; tok--)
			;
		if (tok > buf && tok[-1] == '-')
			tok--;
		return tok != stop && (tok == buf || tok[-1] == ' ' ||
		    tok[-1] == '\t') ? FORMAT_SNIFF_YES : FORMAT_SNIFF_NO;
	}
	return FORMAT_SNIFF_NO;
}

/* Parse folded stacks. */
static struct profile *
formats_folded_parse(const uint8_t *buf, size_t len, char *detail, size_t detaillen)
{
	return folded_parse((const char *)buf, len, detail, detaillen);
}

/* Write folded stacks of the value shown. */
static int
formats_folded_write(const struct profile *p, FILE *fp, const struct format_opts *o)
{
	return folded_write(p, fp, format_value_index(p, o));
}

const struct format format_folded = {
	.name = "folded",
	.exts = formats_folded_exts,
	.flags = FORMAT_RECORD | FORMAT_CONVERT | FORMAT_PROFILE,
	.first_byte = formats_text_first_byte,
	.sniff = formats_folded_sniff,
	.parse = formats_folded_parse,
	.write = formats_folded_write,
};

/* --- the text report --- */

static const char *const formats_text_exts[] = { ".txt", NULL };

/* Write the text report. */
static int
formats_text_write(const struct profile *p, FILE *fp, const struct format_opts *o)
{
	return text_write(p, fp, o != NULL ? o->text : NULL);
}

const struct format format_text = {
	.name = "text",
	.exts = formats_text_exts,
	.flags = FORMAT_RECORD | FORMAT_CONVERT | FORMAT_DIFF | FORMAT_TREE,
	.write = formats_text_write,
};

/* --- the SVG flame graph --- */

static const char *const formats_svg_exts[] = { ".svg", NULL };

/* Write a flame graph (or with o->timeline the timeline) titled by the
 * command the profile names, else by what it was read from. */
static int
formats_svg_write(const struct profile *p, FILE *fp, const struct format_opts *o)
{
	struct flamegraph_opts fo;
	const char *command = profile_comment_value(p, PROFILE_COMMENT_COMMAND);
	const char *source = o != NULL ? o->source : NULL;
	const char *what = o != NULL && o->timeline ? "Timeline" : "Flame Graph";
	char *title, *clean = command ? secret_scrub_command(command) : NULL;
	int rc;

	if (clean != NULL)
		title = xasprintf("%s: %s", what, clean);
	else if (source != NULL)
		title = xasprintf("%s: %s", what, strcmp(source, "-") == 0 ?
		    "standard input" : source);
	else
		title = xstrdup(what);
	free(clean);
	if (o != NULL && o->timeline) {
		struct timeline_svg_opts to = { format_value_index(p, o), title,
		    o->subtitle, 0 };

		rc = timeline_svg_write(p, fp, &to);
		free(title);
		return rc;
	}
	flamegraph_opts_init(&fo);
	fo.title = title;
	fo.value_index = format_value_index(p, o);
	if (o != NULL)
		fo.subtitle = o->subtitle;
	rc = flamegraph_write(p, fp, &fo);
	free(title);
	return rc;
}

const struct format format_svg = {
	.name = "svg",
	.exts = formats_svg_exts,
	.flags = FORMAT_RECORD | FORMAT_CONVERT | FORMAT_DIFF,
	.write = formats_svg_write,
};

/* --- speedscope --- */

static const char *const formats_speedscope_exts[] = { ".speedscope.json", NULL };

/* Write speedscope's JSON, named by the command the profile names, else
 * by what it was read from. */
static int
formats_speedscope_write(const struct profile *p, FILE *fp, const struct format_opts *o)
{
	const char *command = profile_comment_value(p, PROFILE_COMMENT_COMMAND);
	const char *source = o != NULL ? o->source : NULL;
	char *clean = command ? secret_scrub_command(command) : NULL;
	int rc;

	rc = speedscope_write(p, fp, format_value_index(p, o), clean != NULL ? clean :
	    source != NULL && strcmp(source, "-") != 0 ? source : NULL);
	free(clean);
	return rc;
}

const struct format format_speedscope = {
	.name = "speedscope",
	.exts = formats_speedscope_exts,
	.flags = FORMAT_RECORD | FORMAT_CONVERT,
	.write = formats_speedscope_write,
};

/* --- the table --- */

const struct format *const format_table[] = {
	&format_pprof,
	&format_folded,
	&format_text,
	&format_svg,
	&format_speedscope,
	NULL,
};

/* Whether F has every flag of NEED (FORMAT_READ: has a reader). */
static int
formats_match(const struct format *f, unsigned need)
{
	if ((need & FORMAT_READ) && f->parse == NULL)
		return 0;
	return (f->flags & need & ~FORMAT_READ) == (need & ~FORMAT_READ);
}

const struct format *
format_by_name(const char *name, unsigned need)
{
	size_t i;

	for (i = 0; name != NULL && format_table[i] != NULL; i++) {
		if (strcmp(name, format_table[i]->name) == 0 &&
		    formats_match(format_table[i], need))
			return format_table[i];
	}
	return NULL;
}

const struct format *
format_by_path(const char *path, unsigned need)
{
	const char *const *e;
	size_t i, len, elen;

	if (path == NULL)
		return NULL;
	len = strlen(path);
	for (i = 0; format_table[i] != NULL; i++) {
		if (!formats_match(format_table[i], need))
			continue;
		for (e = format_table[i]->exts; *e != NULL; e++) {
			elen = strlen(*e);
			if (len > elen && strcmp(path + len - elen, *e) == 0 &&
			    path[len - elen - 1] != '/')
				return format_table[i];
		}
	}
	return NULL;
}

/* Append S to BUF (of LEN bytes, holding USED), truncating. */
static void
formats_append(char *buf, size_t len, size_t *used, const char *s)
{
	int n = snprintf(buf + *used, len - *used, "%s", s);

	if (n > 0)
		*used += (size_t)n < len - *used ? (size_t)n : len - *used - 1;
}

char *
format_names(unsigned need, const char *sep, char *buf, size_t len)
{
	size_t i, n = 0, k = 0, used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; format_table[i] != NULL; i++)
		n += formats_match(format_table[i], need);
	for (i = 0; format_table[i] != NULL; i++) {
		if (!formats_match(format_table[i], need))
			continue;
		if (k > 0)
			formats_append(buf, len, &used, sep != NULL ? sep :
			    k + 1 == n ? " or " : ", ");
		formats_append(buf, len, &used, format_table[i]->name);
		k++;
	}
	return buf;
}

char *
format_exts(unsigned need, const char *sep, char *buf, size_t len)
{
	const char *const *e;
	size_t i, k = 0, used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (i = 0; format_table[i] != NULL; i++) {
		if (!formats_match(format_table[i], need))
			continue;
		for (e = format_table[i]->exts; *e != NULL; e++) {
			if (k++ > 0)
				formats_append(buf, len, &used, sep);
			formats_append(buf, len, &used, *e + 1);
		}
	}
	return buf;
}

size_t
format_value_index(const struct profile *p, const struct format_opts *o)
{
	if (o != NULL && o->text != NULL && o->text->value_index < p->nvalue_types)
		return o->text->value_index;
	return p->default_value;
}

/* Whether BUF is all blanks. */
static int
formats_blank(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r')
			return 0;
	}
	return 1;
}

struct profile *
format_parse(const uint8_t *buf, size_t len, const char *name,
    const struct format **fmt, char *err, size_t errlen)
{
	const struct format *maybe[8], *f;
	struct profile *p;
	char detail[256], names[128];
	size_t i, nmaybe = 0;
	int text;

	if (fmt != NULL)
		*fmt = NULL;
	if (len == 0 || formats_blank(buf, len)) {
		error_set(err, errlen, "'%s' is empty", name);
		return NULL;
	}
	detail[0] = '\0';
	text = formats_is_text(buf, len);
	for (i = 0; (f = format_table[i]) != NULL; i++) {
		if (f->parse == NULL)
			continue;
		switch (f->sniff(buf, len, text)) {
		case FORMAT_SNIFF_YES:
			if ((p = f->parse(buf, len, detail, sizeof detail)) == NULL) {
				error_set(err, errlen, "'%s' is truncated or corrupt: %s",
				    name, detail);
				return NULL;
			}
			if (fmt != NULL)
				*fmt = f;
			return p;
		case FORMAT_SNIFF_MAYBE:
			if (nmaybe < sizeof maybe / sizeof maybe[0])
				maybe[nmaybe++] = f;
			break;
		default:
			break;
		}
	}
	for (i = 0; i < nmaybe; i++) {
		if ((p = maybe[i]->parse(buf, len, detail, sizeof detail)) != NULL) {
			if (fmt != NULL)
				*fmt = maybe[i];
			return p;
		}
	}
	error_set(err, errlen, "'%s' is not a %s profile", name,
	    format_names(FORMAT_READ, NULL, names, sizeof names));
	return NULL;
}

/* Whether some reader's format may begin with C. */
int
format_first_byte_ok(uint8_t c)
{
	size_t i;

	for (i = 0; format_table[i] != NULL; i++) {
		if (format_table[i]->first_byte != NULL &&
		    format_table[i]->first_byte(c))
			return 1;
	}
	return 0;
}
