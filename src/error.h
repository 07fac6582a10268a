/*
 * error.h: the one-line error messages that readers and writers hand back
 * to their callers in a caller-owned buffer (ERR of ERRLEN bytes), in the
 * form "cannot read 'x': No such file or directory".
 */
#ifndef RPERF_ERROR_H
#define RPERF_ERROR_H

#include <stddef.h>

/* Format a one-line message into ERR; nothing when ERR is NULL or empty. */
void error_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
