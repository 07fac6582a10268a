/*
 * testutil.h: helpers shared by the data-side Check tests: a small known
 * profile, a semantic profile comparison, capturing a writer's output in
 * memory, and reading files and directories of test inputs.  Header-only
 * (static inline) so each test stays one translation unit.
 */
#ifndef RPERF_TESTUTIL_H
#define RPERF_TESTUTIL_H

#include <sys/resource.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "profile.h"
#include "xmalloc.h"

/* Add a sample to P from frame names (root first, NULL-terminated);
 * its values SAMPLES and NS, then zeros for any further value type (up
 * to eight in all). */
static inline void
tu_add(struct profile *p, const char *const *frames, int64_t samples,
    int64_t ns, const struct profile_label *labels, size_t nlabels)
{
	uint64_t locs[64];
	int64_t values[8] = { samples, ns };
	size_t n = 0, i;

	if (p->nvalue_types > sizeof values / sizeof values[0])
		abort();
	while (frames[n] != NULL)
		n++;
	for (i = 0; i < n; i++) {
		const char *name = frames[i];
		char file[64];
		uint64_t fn;

		snprintf(file, sizeof file, "%s.rb", name[0] == '<' ? "main" :
		    "lib/x");
		fn = profile_function(p, name, name, file,
		    (int64_t)strlen(name));
		locs[n - 1 - i] = profile_location(p, fn, (int64_t)(10 * i +
		    2));
	}
	profile_add_sample(p, locs, n, values, labels, nlabels);
}

/* A label on P: string when STR is not NULL, numeric otherwise. */
static inline struct profile_label
tu_label(struct profile *p, const char *key, const char *str, int64_t num)
{
	struct profile_label l;

	memset(&l, 0, sizeof l);
	l.key = profile_intern(p, key);
	l.str = profile_intern(p, str);
	if (str == NULL)
		l.num = num;
	return l;
}

/* A small rperf-like profile with threads, VM states and comments. */
static inline struct profile *
tu_sample_profile(void)
{
	static const char *const types[] = { "samples", "cpu" };
	static const char *const units[] = { "count", "nanoseconds" };
	static const char *const s1[] = { "<main>", "Object#work",
	    "Foo::Bar#baz", NULL };
	static const char *const s2[] = { "<main>", "Object#work", NULL };
	static const char *const s3[] = { "<main>", "Kernel#sleep", NULL };
	static const char *const s4[] = { "<main>", "Object#work",
	    "Object#work", "Foo::Bar#baz", NULL };
	struct profile *p = profile_new();
	struct profile_label l[3];

	profile_set_value_types(p, 2, types, units);
	l[0] = tu_label(p, "thread", NULL, 1);
	l[1] = tu_label(p, "thread_name", "main", 0);
	tu_add(p, s1, 3, 3000000, l, 2);
	tu_add(p, s2, 1, 1000000, l, 2);
	tu_add(p, s1, 2, 2000000, l, 2);
	l[2] = tu_label(p, "%GVL", "blocked", 0);
	tu_add(p, s3, 4, 4000000, l, 3);
	l[0] = tu_label(p, "thread", NULL, 2);
	l[1] = tu_label(p, "thread_name", "worker", 0);
	l[2] = tu_label(p, "%GC", "mark", 0);
	tu_add(p, s4, 1, 1500000, l, 3);
	tu_add(p, s4, 1, 500000, l, 2);
	p->period_type.type = profile_intern(p, "cpu");
	p->period_type.unit = profile_intern(p, "nanoseconds");
	p->period = 1000000;
	p->time_nanos = 1700000000123456789LL;
	p->duration_nanos = 2500000000LL;
	profile_add_comment(p, "rperf: 0.1.0");
	profile_add_comment(p, "ruby: 3.4.5");
	profile_add_comment(p, "mode: cpu");
	profile_add_comment(p, "frequency: 1000");
	profile_add_comment(p, "samples: 12");
	profile_add_comment(p, "triggers: 13");
	profile_add_comment(p, "command: ruby app.rb");
	return p;
}

/* Compare two strings by id; record WHAT in WHY when they differ. */
static inline int
tu_same_str(const struct profile *a, str_id x, const struct profile *b,
    str_id y, const char *what, char *why, size_t whylen)
{
	if (strcmp(profile_str(a, x), profile_str(b, y)) == 0)
		return 1;
	snprintf(why, whylen, "%s: '%s' != '%s'", what, profile_str(a, x),
	    profile_str(b, y));
	return 0;
}

/* Whether A and B hold the same profile (by content, not by ids). */
static inline int
tu_profiles_equal(const struct profile *a, const struct profile *b,
    char *why, size_t whylen)
{
	size_t i, k;

	snprintf(why, whylen, "equal");
	if (a->nvalue_types != b->nvalue_types || a->nsamples != b->nsamples ||
	    a->ncomments != b->ncomments) {
		snprintf(why, whylen, "counts differ: types %zu/%zu samples "
		    "%zu/%zu comments %zu/%zu", a->nvalue_types,
		    b->nvalue_types, a->nsamples, b->nsamples, a->ncomments,
		    b->ncomments);
		return 0;
	}
	if (a->default_value != b->default_value || a->period != b->period ||
	    a->time_nanos != b->time_nanos ||
	    a->duration_nanos != b->duration_nanos) {
		snprintf(why, whylen, "header fields differ");
		return 0;
	}
	for (i = 0; i < a->nvalue_types; i++) {
		if (!tu_same_str(a, a->value_types[i].type, b,
		    b->value_types[i].type, "type", why, whylen) ||
		    !tu_same_str(a, a->value_types[i].unit, b,
		    b->value_types[i].unit, "unit", why, whylen))
			return 0;
	}
	if (!tu_same_str(a, a->period_type.type, b, b->period_type.type,
	    "period type", why, whylen) ||
	    !tu_same_str(a, a->period_type.unit, b, b->period_type.unit,
	    "period unit", why, whylen))
		return 0;
	for (i = 0; i < a->ncomments; i++) {
		if (!tu_same_str(a, a->comments[i], b, b->comments[i],
		    "comment", why, whylen))
			return 0;
	}
	for (i = 0; i < a->nsamples; i++) {
		const struct profile_sample *sa = &a->samples[i];
		const struct profile_sample *sb = &b->samples[i];
		const uint64_t *la = profile_sample_locs(a, sa);
		const uint64_t *lb = profile_sample_locs(b, sb);
		const struct profile_label *xa = profile_sample_labels(a, sa);
		const struct profile_label *xb = profile_sample_labels(b, sb);

		if (sa->nloc != sb->nloc || sa->nlabel != sb->nlabel) {
			snprintf(why, whylen, "sample %zu: shape differs", i);
			return 0;
		}
		for (k = 0; k < a->nvalue_types; k++) {
			if (profile_sample_values(a, sa)[k] !=
			    profile_sample_values(b, sb)[k]) {
				snprintf(why, whylen, "sample %zu: value %zu "
				    "differs", i, k);
				return 0;
			}
		}
		for (k = 0; k < sa->nloc; k++) {
			const struct profile_location *pa =
			    &a->locations[la[k] - 1];
			const struct profile_location *pb =
			    &b->locations[lb[k] - 1];
			const struct profile_function *fa =
			    profile_location_function(a, la[k]);
			const struct profile_function *fb =
			    profile_location_function(b, lb[k]);

			if (pa->line != pb->line ||
			    fa->start_line != fb->start_line ||
			    !tu_same_str(a, fa->name, b, fb->name, "name", why,
			    whylen) ||
			    !tu_same_str(a, fa->system_name, b,
			    fb->system_name, "system name", why, whylen) ||
			    !tu_same_str(a, fa->filename, b, fb->filename,
			    "file", why, whylen)) {
				if (strcmp(why, "equal") == 0)
					snprintf(why, whylen, "sample %zu "
					    "frame %zu differs", i, k);
				return 0;
			}
		}
		for (k = 0; k < sa->nlabel; k++) {
			if (xa[k].num != xb[k].num ||
			    !tu_same_str(a, xa[k].key, b, xb[k].key, "label",
			    why, whylen) ||
			    !tu_same_str(a, xa[k].str, b, xb[k].str, "label",
			    why, whylen) ||
			    !tu_same_str(a, xa[k].num_unit, b, xb[k].num_unit,
			    "label unit", why, whylen)) {
				if (strcmp(why, "equal") == 0)
					snprintf(why, whylen, "sample %zu "
					    "label %zu differs", i, k);
				return 0;
			}
		}
	}
	return 1;
}

/* Run WRITE into memory; returns the bytes (NUL-terminated) and length. */
#define TU_CAPTURE(buf, len, rc, call) do {				\
	FILE *fp_ = open_memstream(&(buf), &(len));			\
	FILE *fp = fp_;							\
	(rc) = (call);							\
	fclose(fp_);							\
	(void)fp;							\
} while (0)

/* Read a whole file into memory (NUL-terminated); NULL if unreadable. */
static inline uint8_t *
tu_read_file(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (fp == NULL)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap + 1);
		}
		got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0)
			break;
	}
	fclose(fp);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Call FN on every regular file in SUBDIR of $TEST_SRCDIR; the count. */
static inline size_t
tu_each_file(const char *subdir, void (*fn)(const char *, const uint8_t *,
    size_t))
{
	const char *src = getenv("TEST_SRCDIR");
	struct dirent *de;
	char *dir, *path;
	size_t n = 0, len;
	uint8_t *buf;
	DIR *d;

	if (src == NULL)
		src = "tests";
	dir = xasprintf("%s/%s", src, subdir);
	d = opendir(dir);
	if (d == NULL) {
		free(dir);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		buf = tu_read_file(path, &len);
		if (buf != NULL) {
			fn(path, buf, len);
			n++;
		}
		free(buf);
		free(path);
	}
	closedir(d);
	free(dir);
	return n;
}

#if defined(__SANITIZE_ADDRESS__)
#define TU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_ASAN 1
#endif
#endif

/* How much slower sanitized code runs, for limits on CPU time. */
#ifdef TU_ASAN
#define TU_CPU_SCALE 4.0
#else
#define TU_CPU_SCALE 1.0
#endif

/* CPU seconds this process has used: unlike the wall clock, not slowed
 * down by other work on the machine. */
static inline double
tu_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Limit this (forked) test's address space to what it maps now plus MB
 * MiB, so that a reader spending more dies and the test fails; not under
 * ASan, whose shadow memory needs address space of its own. */
static inline void
tu_limit_memory(size_t mb)
{
#ifndef TU_ASAN
	unsigned long pages = 0;
	struct rlimit rl;
	FILE *fp = fopen("/proc/self/statm", "r");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fscanf(fp, "%lu", &pages), 1);
	fclose(fp);
	rl.rlim_cur = rl.rlim_max = (rlim_t)pages * 4096 +
	    ((rlim_t)mb << 20);
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
#else
	(void)mb;
#endif
}

/* Run suite S; the exit status of a test program. */
static inline int
tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* The number of entries (other than . and ..) in DIR. */
static inline int
tu_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	}
	closedir(d);
	return n;
}

#endif
