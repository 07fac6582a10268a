/*
 * xmalloc.h: allocation that never returns NULL.  rperf cannot do anything
 * useful without memory, so running out prints one line and exits 1; callers
 * stay free of NULL checks.
 *
 * Inside the profiled process it may be called wherever libc's malloc
 * may: in code holding the GVL, in the GC event hooks (this is plain
 * malloc, never Ruby's GC-aware allocator, which must not run inside GC:
 * see the #undef below), and in the sampler's worker thread, which holds
 * no Ruby lock and calls no Ruby API.  Never in a signal handler, where
 * malloc is not async-signal-safe.
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
