/*
 * check_profile.c: unit tests for the profile model (profile.c): interning,
 * deduplication of functions and locations, samples and their accessors,
 * comments, totals, and building a large profile quickly.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.h"
#include "testutil.h"

START_TEST(test_intern)
{
	struct profile *p = profile_new();
	str_id a, b;

	ck_assert_uint_eq(profile_intern(p, NULL), 0);
	ck_assert_uint_eq(profile_intern(p, ""), 0);
	a = profile_intern(p, "foo");
	b = profile_intern(p, "bar");
	ck_assert_uint_ne(a, 0);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(profile_intern(p, "foo"), a);
	ck_assert_uint_eq(profile_intern_len(p, "foobar", 3), a);
	ck_assert_uint_eq(profile_intern_len(p, "bar\0zzz", 7), b);
	ck_assert_str_eq(profile_str(p, a), "foo");
	ck_assert_str_eq(profile_str(p, 0), "");
	ck_assert_str_eq(profile_str(p, 12345), "");
	ck_assert_uint_eq(p->nstrings, 3);
	profile_free(p);
}
END_TEST

START_TEST(test_intern_many)
{
	struct profile *p = profile_new();
	char buf[32];
	int i;

	for (i = 0; i < 50000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		ck_assert_uint_eq(profile_intern(p, buf), (str_id)i + 1);
	}
	for (i = 0; i < 50000; i += 7) {
		snprintf(buf, sizeof buf, "s%d", i);
		ck_assert_uint_eq(profile_intern(p, buf), (str_id)i + 1);
	}
	ck_assert_uint_eq(p->nstrings, 50001);
	profile_free(p);
}
END_TEST

enum { BLOCKS_N = 3000, BLOCKS_LONG = 300 * 1024 };

/* The Ith string of test_intern_blocks, written into BUF (BLOCKS_LONG + 1
 * bytes): its length. */
static size_t
blocks_string(char *buf, int i)
{
	size_t len = i % 500 == 7 ? BLOCKS_LONG - (size_t)i : (size_t)(i * 37 % 2000) + 1;

	memset(buf, 'a' + i % 26, len);
	snprintf(buf, 16, "%d:", i);
	buf[strlen(buf)] = 'x';
	buf[len] = '\0';
	return len;
}

/* Strings of every length, some longer than a whole block of the
 * string store, read back whole after all were added. */
START_TEST(test_intern_blocks)
{
	struct profile *p = profile_new();
	char *buf = malloc(BLOCKS_LONG + 1);
	str_id ids[BLOCKS_N];
	size_t len;
	int i;

	for (i = 0; i < BLOCKS_N; i++) {
		blocks_string(buf, i);
		ids[i] = profile_intern(p, buf);
		ck_assert_uint_eq(ids[i], (str_id)i + 1);
	}
	for (i = 0; i < BLOCKS_N; i++) {
		len = blocks_string(buf, i);
		ck_assert_uint_eq(strlen(profile_str(p, ids[i])), len);
		ck_assert_int_eq(memcmp(profile_str(p, ids[i]), buf, len + 1), 0);
		ck_assert_uint_eq(profile_intern(p, buf), ids[i]);
	}
	ck_assert_uint_ge(profile_footprint(p), (size_t)6 * BLOCKS_LONG);
	free(buf);
	profile_free(p);
}
END_TEST

START_TEST(test_functions_and_locations)
{
	struct profile *p = profile_new();
	uint64_t f1, f2, f3, l1, l2;

	f1 = profile_function(p, "Foo#bar", "Foo#bar", "foo.rb", 3);
	f2 = profile_function(p, "Foo#bar", "Foo#bar", "foo.rb", 3);
	f3 = profile_function(p, "Foo#bar", "Foo#bar", "other.rb", 3);
	ck_assert_uint_eq(f1, 1);
	ck_assert_uint_eq(f1, f2);
	ck_assert_uint_eq(f3, 2);
	ck_assert_uint_eq(profile_function(p, "Foo#bar", NULL, "foo.rb", 3), 3);
	ck_assert_uint_eq(profile_function(p, "Foo#bar", "Foo#bar", "foo.rb",
	    4), 4);
	l1 = profile_location(p, f1, 10);
	l2 = profile_location(p, f1, 11);
	ck_assert_uint_ne(l1, l2);
	ck_assert_uint_eq(profile_location(p, f1, 10), l1);
	ck_assert_uint_ne(profile_location(p, f3, 10), l1);
	ck_assert_str_eq(profile_str(p,
	    profile_location_function(p, l2)->filename), "foo.rb");
	ck_assert_ptr_null(profile_location_function(p, 0));
	ck_assert_ptr_null(profile_location_function(p, 999));
	ck_assert_uint_eq(profile_function_ids(p, profile_intern(p, "Foo#bar"),
	    profile_intern(p, "Foo#bar"), profile_intern(p, "foo.rb"), 3), f1);
	profile_free(p);
}
END_TEST

START_TEST(test_samples)
{
	struct profile *p = tu_sample_profile();
	const struct profile_sample *s = &p->samples[3];
	const struct profile_label *l;

	ck_assert_uint_eq(p->nsamples, 6);
	ck_assert_uint_eq(p->nvalue_types, 2);
	ck_assert_uint_eq(p->default_value, 1);
	ck_assert_uint_eq(s->nloc, 2);
	ck_assert_uint_eq(s->nlabel, 3);
	ck_assert_int_eq(profile_sample_values(p, s)[0], 4);
	ck_assert_int_eq(profile_sample_values(p, s)[1], 4000000);
	ck_assert_str_eq(profile_sample_label_str(p, s, "%GVL"), "blocked");
	ck_assert_str_eq(profile_sample_label_str(p, s, "thread_name"), "main");
	ck_assert_ptr_null(profile_sample_label_str(p, s, "thread"));
	ck_assert_ptr_null(profile_sample_label_str(p, s, "%GC"));
	l = profile_sample_label(p, s, "thread");
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(l->num, 1);
	ck_assert_str_eq(profile_str(p, profile_location_function(p,
	    profile_sample_locs(p, s)[0])->name), "Kernel#sleep");
	ck_assert_int_eq(profile_total(p, 0), 12);
	ck_assert_int_eq(profile_total(p, 1), 12000000);
	ck_assert_int_eq(profile_total(p, 2), 0);
	profile_free(p);
}
END_TEST

START_TEST(test_comments)
{
	struct profile *p = tu_sample_profile();

	ck_assert_str_eq(profile_comment_value(p, "mode"), "cpu");
	ck_assert_str_eq(profile_comment_value(p, "command"), "ruby app.rb");
	ck_assert_ptr_null(profile_comment_value(p, "mod"));
	ck_assert_ptr_null(profile_comment_value(p, "nothing"));
	profile_add_comment(p, "mode: wall");
	ck_assert_str_eq(profile_comment_value(p, PROFILE_COMMENT_MODE),
	    "cpu");
	ck_assert_str_eq(profile_comment_match("samples:\t 12",
	    PROFILE_COMMENT_SAMPLES), "12");
	ck_assert_str_eq(profile_comment_match("samples:", "samples"), "");
	ck_assert_ptr_null(profile_comment_match("samples 12", "samples"));
	ck_assert_ptr_null(profile_comment_match("sample: 12", "samples"));
	/* What a writer adds with profile_add_meta, a reader finds. */
	profile_add_meta(p, PROFILE_COMMENT_PROCESS, "%ld", 4242L);
	ck_assert_str_eq(profile_comment_value(p, PROFILE_COMMENT_PROCESS), "4242");
	ck_assert_str_eq(profile_str(p, p->comments[p->ncomments - 1]),
	    "process: 4242");
	profile_free(p);
}
END_TEST

START_TEST(test_sample_state)
{
	struct profile *p = profile_new();
	const char *const frames[] = { "main", NULL };
	struct profile_label l[4];
	struct profile_vm_state st;

	/* None; GVL wait and GC sweep; an unknown GVL value; the first
	 * string label of a key counts, numeric ones never. */
	tu_add(p, frames, 1, 1, NULL, 0);
	l[0] = tu_label(p, "%GC", "sweep", 0);
	l[1] = tu_label(p, "%GVL", "wait", 0);
	tu_add(p, frames, 1, 1, l, 2);
	l[0] = tu_label(p, "%GVL", "spinning", 0);
	tu_add(p, frames, 1, 1, l, 1);
	l[0] = tu_label(p, "%GC", NULL, 7);
	l[1] = tu_label(p, "%GC", "mark", 0);
	l[2] = tu_label(p, "%GC", "sweep", 0);
	tu_add(p, frames, 1, 1, l, 3);

	st = profile_sample_state(p, &p->samples[0]);
	ck_assert_ptr_null(st.gvl);
	ck_assert_ptr_null(st.gc);
	ck_assert_int_eq(st.gvl_state, -1);
	ck_assert_int_eq(st.gc_state, -1);
	st = profile_sample_state(p, &p->samples[1]);
	ck_assert_str_eq(st.gvl, "wait");
	ck_assert_int_eq(st.gvl_state, PROFILE_STATE_GVL_WAIT);
	ck_assert_int_eq(st.gc_state, PROFILE_STATE_GC_SWEEP);
	st = profile_sample_state(p, &p->samples[2]);
	ck_assert_str_eq(st.gvl, "spinning");
	ck_assert_int_eq(st.gvl_state, -1);
	st = profile_sample_state(p, &p->samples[3]);
	ck_assert_ptr_null(st.gvl);
	ck_assert_str_eq(st.gc, "mark");
	ck_assert_int_eq(st.gc_state, PROFILE_STATE_GC_MARK);
	ck_assert_str_eq(profile_states[st.gc_state].frame, "[GC marking]");
	profile_free(p);
}
END_TEST

START_TEST(test_errors_do_not_exit)
{
	/* An oversized sample is refused with an error, not an exit, and
	 * a merge into a profile in error says so. */
	struct profile *p = tu_sample_profile(), *q;
	uint64_t loc = 1;
	int64_t values[2] = { 1, 1 };
	size_t n = p->nsamples;

	ck_assert_ptr_null(profile_error(p));
	ck_assert_int_eq(profile_add_sample(p, &loc, (size_t)UINT32_MAX + 1,
	    values, NULL, 0), -1);
	ck_assert_str_eq(profile_error(p), "sample too large");
	ck_assert_uint_eq(p->nsamples, n);
	ck_assert_int_eq(profile_add_sample(p, &loc, 1, values, NULL, 0), 0);
	q = profile_new_like(p);
	ck_assert_int_eq(profile_merge(q, p, NULL, 0), 0);
	ck_assert_int_eq(profile_merge(p, q, NULL, 0), -1);
	profile_free(q);
	profile_free(p);
}
END_TEST

START_TEST(test_add_sat)
{
	ck_assert_int_eq(profile_add_sat(1, 2), 3);
	ck_assert_int_eq(profile_add_sat(INT64_MAX, 1), INT64_MAX);
	ck_assert_int_eq(profile_add_sat(INT64_MIN, -1), INT64_MIN);
	ck_assert_int_eq(profile_add_sat(INT64_MAX, INT64_MIN), -1);
}
END_TEST

START_TEST(test_total_saturates)
{
	static const char *const t[] = { "x" }, *const u[] = { "count" };
	struct profile *p = profile_new();
	int64_t v = INT64_MAX;

	profile_set_value_types(p, 1, t, u);
	profile_add_sample(p, NULL, 0, &v, NULL, 0);
	profile_add_sample(p, NULL, 0, &v, NULL, 0);
	ck_assert_int_eq(profile_total(p, 0), INT64_MAX);
	profile_free(p);
}
END_TEST

/* 100k unique stacks over 20k functions: must stay fast (hash indexes). */
START_TEST(test_merge)
{
	const char *const types[] = { "samples", "cpu" };
	const char *const units[] = { "count", "nanoseconds" };
	const char *const a[] = { "main", "work", NULL };
	const char *const b[] = { "main", "other", NULL };
	struct profile *root = profile_new(), *child = profile_new(), *out;
	struct profile_label l = tu_label(child, "thread_name", "t1", 0);
	const struct profile_sample *s;
	const struct profile_label *pid;

	profile_set_value_types(root, 2, types, units);
	profile_set_value_types(child, 2, types, units);
	root->period = 1000000;
	profile_add_comment(root, "mode: cpu");
	tu_add(root, a, 1, 100, NULL, 0);
	tu_add(child, b, 2, 300, &l, 1);
	tu_add(child, a, 1, 50, NULL, 0);

	out = profile_new_like(root);
	ck_assert_uint_eq(out->nsamples, 0);
	ck_assert_int_eq(out->period, 1000000);
	ck_assert_str_eq(profile_comment_value(out, "mode"), "cpu");
	ck_assert_int_eq(profile_merge(out, root, "pid", 10), 0);
	ck_assert_int_eq(profile_merge(out, child, "pid", 11), 0);
	ck_assert_uint_eq(out->nsamples, 3);
	ck_assert_int_eq(profile_total(out, 1), 450);
	/* "main" and "work" are one function each, shared by both. */
	ck_assert_uint_eq(out->nfunctions, 3);
	s = &out->samples[1];
	pid = profile_sample_label(out, s, "pid");
	ck_assert_ptr_nonnull(pid);
	ck_assert_int_eq(pid->num, 11);
	ck_assert_str_eq(profile_sample_label_str(out, s, "thread_name"), "t1");
	/* A label of the same key is replaced, not doubled. */
	{
		struct profile *again = profile_new_like(out);

		ck_assert_int_eq(profile_merge(again, out, "pid", 99), 0);
		ck_assert_uint_eq(again->samples[1].nlabel, 2);
		ck_assert_int_eq(profile_sample_label(again, &again->samples[1], "pid")->num, 99);
		profile_free(again);
	}
	/* Value types must match. */
	{
		struct profile *one = profile_new();
		const char *const t1[] = { "samples" };
		const char *const u1[] = { "count" };

		profile_set_value_types(one, 1, t1, u1);
		ck_assert_int_eq(profile_merge(out, one, NULL, 0), -1);
		profile_free(one);
	}
	profile_free(out);
	profile_free(root);
	profile_free(child);
}
END_TEST

START_TEST(test_large_profile)
{
	static const char *const t[] = { "samples", "cpu" };
	static const char *const u[] = { "count", "nanoseconds" };
	struct profile *p = profile_new();
	uint64_t locs[16];
	int64_t v[2] = { 1, 1000 };
	char name[32];
	struct timespec t0, t1;
	double secs;
	size_t i, k;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	profile_set_value_types(p, 2, t, u);
	for (i = 0; i < 100000; i++) {
		for (k = 0; k < 16; k++) {
			size_t f = (i * 7919 + k * 104729) % 20000;
			uint64_t fn;

			snprintf(name, sizeof name, "Mod%zu#meth%zu", f % 97, f);
			fn = profile_function(p, name, name, "file.rb",
			    (int64_t)f);
			locs[k] = profile_location(p, fn, (int64_t)(i % 5));
		}
		profile_add_sample(p, locs, 16, v, NULL, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_uint_eq(p->nfunctions, 20000);
	ck_assert_uint_le(p->nlocations, 100000);
	ck_assert_uint_eq(p->nsamples, 100000);
	ck_assert_int_eq(profile_total(p, 0), 100000);
	/* Generous: a quadratic lookup would take minutes. */
	ck_assert_msg(secs < 20.0, "building took %.2f s", secs);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_intern);
	tcase_add_test(tc, test_intern_many);
	tcase_add_test(tc, test_intern_blocks);
	tcase_add_test(tc, test_functions_and_locations);
	tcase_add_test(tc, test_samples);
	tcase_add_test(tc, test_comments);
	tcase_add_test(tc, test_sample_state);
	tcase_add_test(tc, test_errors_do_not_exit);
	tcase_add_test(tc, test_add_sat);
	tcase_add_test(tc, test_total_saturates);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_large_profile);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(profile_suite());
}
