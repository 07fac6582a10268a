/*
 * xmalloc.h: allocation that never returns NULL.  rperf cannot do anything
 * useful without memory, so running out prints one line and exits 1; callers
 * stay free of NULL checks.  Not for signal handlers or code that runs
 * without the GVL inside the profiled process: those must not allocate.
 */
#ifndef RPERF_XMALLOC_H
#define RPERF_XMALLOC_H

#include <stddef.h>

/*
 * <ruby.h> defines xmalloc and friends as macros for Ruby's GC-aware
 * allocator, which must not run inside GC hooks.  rperf's files that
 * include both include this header last, so that plain malloc is used.
 */
#undef xmalloc
#undef xcalloc
#undef xrealloc
#undef xfree

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow *p (of *cap elements of SIZE bytes) so it holds at least NEED. */
void xgrow(void **p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* asprintf that dies on failure. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
