/*
 * xmalloc.c: allocation wrappers that exit on out-of-memory (see xmalloc.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "xmalloc.h"

/* Report and leave: nothing sensible can follow an allocation failure. */
static void
xmalloc_die(size_t n)
{
	error_die(1, "out of memory allocating %zu bytes", n);
}

/* malloc that never returns NULL. */
void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		xmalloc_die(n);
	return p;
}

/* calloc that never returns NULL and checks the multiplication. */
void *
xcalloc(size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		xmalloc_die(SIZE_MAX);
	p = calloc(n ? n : 1, size ? size : 1);
	if (p == NULL)
		xmalloc_die(n * size);
	return p;
}

/* realloc that never returns NULL. */
void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		xmalloc_die(n);
	return q;
}

/* Geometric growth of an array to hold at least NEED elements. */
void
xgrow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			xmalloc_die(SIZE_MAX);
		n *= 2;
	}
	*p = xrealloc(*p, n * size);
	*cap = n;
}

/* strdup that never returns NULL. */
char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* strndup that never returns NULL. */
char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* asprintf that never fails. */
char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		xmalloc_die(strlen(fmt));
	return s;
}
