/*
 * error.h: the one way rperf complains.  Readers and writers of the data
 * side format a one-line message into a caller-owned buffer (ERR of
 * ERRLEN bytes) and return; commands print messages with error_print()
 * or end with error_die(), all under one prefix: "rperf NAME" once the
 * command NAME runs, "rperf" before.  A message reads like
 * "cannot read 'x': No such file or directory": lower-case, the problem
 * first, the object in quotes, no full stop.
 */
#ifndef RPERF_ERROR_H
#define RPERF_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* Format a one-line message into ERR; nothing when ERR is NULL or empty. */
void error_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The prefix of every printed message, "rperf" or "rperf NAME" (not
 * copied: pass a string that lives as long as the process). */
void error_set_prefix(const char *prefix);

/* Print "PREFIX: MESSAGE" on stderr (stdout flushed first); returns -1,
 * so that a function may end with "return error_print(...)". */
int error_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int error_vprint(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* A message that is no error ("wrote 'x'"), printed the same way. */
#define error_note(...) ((void)error_print(__VA_ARGS__))

/* error_print(), then exit with STATUS. */
void error_die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#endif
