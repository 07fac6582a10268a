/*
 * error.c: one-line error messages, into caller buffers or on stderr
 * under the one prefix (see error.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"

static const char *error_prefix_text = "rperf";

/* Format a one-line message into ERR; nothing when ERR is NULL or empty. */
void
error_set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Set the prefix of printed messages. */
void
error_set_prefix(const char *prefix)
{
	error_prefix_text = prefix != NULL ? prefix : "rperf";
}

/* Print "PREFIX: MESSAGE\n" on stderr in one write where stdio allows. */
int
error_vprint(const char *fmt, va_list ap)
{
	char buf[4096];
	int n;

	fflush(stdout);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n < 0)
		buf[0] = '\0';
	fprintf(stderr, "%s: %s\n", error_prefix_text, buf);
	return -1;
}

/* Print one message; -1. */
int
error_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vprint(fmt, ap);
	va_end(ap);
	return -1;
}

/* Print one message and exit with STATUS. */
void
error_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vprint(fmt, ap);
	va_end(ap);
	exit(status);
}
