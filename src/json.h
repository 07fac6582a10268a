/*
 * json.h: writing JSON strings, the one escaper for everything rperf
 * prints as JSON ("rperf stat --json" and the data embedded in the SVG
 * flame graph).  rperf writes JSON by hand; its numbers and keys need no
 * escaping, so a string writer is all it needs.
 */
#ifndef RPERF_JSON_H
#define RPERF_JSON_H

#include <stdio.h>

/*
 * For a string that lands inside XML or an inline script: "<", ">", "&",
 * DEL, U+2028, U+2029, U+FFFE and U+FFFF are escaped too, and bytes that
 * are not valid UTF-8 become U+FFFD, so that the text can break neither a
 * CDATA section nor the XML around it.
 */
#define JSON_XML_SAFE 1

/* Write S as a quoted JSON string to FP: '"' and '\\' escaped, control
 * characters as \u00XX, and with JSON_XML_SAFE in FLAGS as above;
 * without it, other bytes are copied as they are. */
void json_write_string(FILE *fp, const char *s, int flags);

#endif
