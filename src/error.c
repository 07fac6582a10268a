/*
 * error.c: formatting one-line error messages into caller buffers (see
 * error.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

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
