/*
 * json.c: the JSON string escaper (see json.h).
 *
 * One pass over the bytes.  ASCII is escaped by a small rule; with
 * JSON_XML_SAFE a byte of 0x80 or more starts a UTF-8 sequence that is
 * checked whole (length, continuation bytes, overlong forms, surrogates,
 * the range) and copied only when valid, so nothing the reader of an SVG
 * would choke on passes through.  Writes to a stdio stream; the caller
 * checks the stream for errors.
 */
#include <stdio.h>

#include "json.h"

/* Whether ASCII byte C must be written as \u00XX under FLAGS. */
static int
json_escape_ascii(unsigned c, int flags)
{
	if (c < 0x20)
		return 1;
	return (flags & JSON_XML_SAFE) && (c == 0x7f || c == '<' ||
	    c == '>' || c == '&');
}

/* The length of the valid UTF-8 sequence at U (its code point in *CP),
 * or 0 when U does not start one. */
static unsigned
json_utf8_length(const unsigned char *u, unsigned *cp)
{
	unsigned need, min, i;

	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 1, *cp = u[0] & 0x1f, min = 0x80;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 2, *cp = u[0] & 0x0f, min = 0x800;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 3, *cp = u[0] & 0x07, min = 0x10000;
	} else
		return 0;
	for (i = 1; i <= need; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (u[i] & 0x3f);
	}
	if (*cp < min || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return need + 1;
}

/* Write S as a quoted JSON string to FP. */
void
json_write_string(FILE *fp, const char *s, int flags)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c, cp, n;

	fputc('"', fp);
	while ((c = *u) != '\0') {
		if (c < 0x80 || !(flags & JSON_XML_SAFE)) {
			if (c == '"' || c == '\\')
				fprintf(fp, "\\%c", c);
			else if (json_escape_ascii(c, flags))
				fprintf(fp, "\\u%04x", c);
			else
				fputc((int)c, fp);
			u++;
			continue;
		}
		n = json_utf8_length(u, &cp);
		if (n == 0) {
			fputs("\\ufffd", fp);
			u++;
		} else {
			if (cp == 0x2028 || cp == 0x2029 || cp == 0xfffe ||
			    cp == 0xffff)
				fprintf(fp, "\\u%04x", cp);
			else
				fwrite(u, 1, n, fp);
			u += n;
		}
	}
	fputc('"', fp);
}
