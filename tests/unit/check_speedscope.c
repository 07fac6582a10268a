/*
 * check_speedscope.c: unit tests for the speedscope writer, reading its
 * output back as JSON (tjson.h): the shared frames (the VM states first,
 * then the locations in the order samples first use them), a sampled
 * profile a thread with its stacks, weights and totals when samples have
 * no time, and with times an evented profile a thread whose opens and
 * closes follow its spans, then its marks nested in a profile of their
 * own.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "speedscope.h"
#include "testutil.h"
#include "tjson.h"

#define MS 1000000LL

/* The speedscope file of value VI of P, parsed. */
static struct tj *
speedscope(const struct profile *p, size_t vi, const char *name)
{
	char *buf = NULL;
	size_t len;
	struct tj *d;
	int rc;

	TU_CAPTURE(buf, len, rc, speedscope_write(p, fp, vi, name));
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(strlen(buf), len);
	/* Nothing that could break out of an HTML or SVG page. */
	ck_assert_ptr_null(strpbrk(buf, "<>&"));
	d = tj_parse(buf);
	ck_assert_msg(d != NULL, "not JSON: %s", buf);
	free(buf);
	return d;
}

/* Frame I of D as "name file:line" ("name" alone without a file). */
static char *
frame(const struct tj *d, size_t i)
{
	const struct tj *f = tj_at(tj_get(tj_get(d, "shared"), "frames"), i);

	ck_assert_ptr_nonnull(f);
	if (tj_get(f, "file") == NULL)
		return xstrdup(tj_str(tj_get(f, "name")));
	return xasprintf("%s %s:%lld", tj_str(tj_get(f, "name")),
	    tj_str(tj_get(f, "file")), (long long)tj_int(tj_get(f, "line")));
}

static void
frame_is(const struct tj *d, size_t i, const char *want)
{
	char *got = frame(d, i);

	ck_assert_str_eq(got, want);
	free(got);
}

/* The items of array A (of integers, or of arrays of them: one level
 * deep) as text, "1,2;3" for [[1,2],[3]]. */
static char *
ints(const struct tj *a)
{
	char *out = xstrdup(""), *next;
	size_t i, k;

	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, TJ_ARR);
	for (i = 0; i < a->n; i++) {
		const struct tj *v = &a->items[i];

		if (v->type == TJ_ARR) {
			for (k = 0; k < v->n; k++) {
				next = xasprintf("%s%s%lld", out, k ? "," : i ? ";" : "",
				    (long long)tj_int(&v->items[k]));
				free(out);
				out = next;
			}
			if (v->n == 0) {
				next = xasprintf("%s%s", out, i ? ";" : "");
				free(out);
				out = next;
			}
		} else {
			next = xasprintf("%s%s%lld", out, i ? "," : "",
			    (long long)tj_int(v));
			free(out);
			out = next;
		}
	}
	return out;
}

static void
ints_are(const struct tj *a, const char *want)
{
	char *got = ints(a);

	ck_assert_str_eq(got, want);
	free(got);
}

/* The events of evented profile P as "O4@0 C4@10 ...", times in ms. */
static char *
events(const struct tj *p)
{
	const struct tj *ev = tj_get(p, "events");
	char *out = xstrdup(""), *next;
	size_t i;

	ck_assert_ptr_nonnull(ev);
	for (i = 0; i < ev->n; i++) {
		const struct tj *e = &ev->items[i];
		int64_t at = tj_int(tj_get(e, "at"));

		ck_assert_int_eq(at % MS, 0);
		next = xasprintf("%s%s%s%lld@%lld", out, i ? " " : "",
		    tj_str(tj_get(e, "type")), (long long)tj_int(tj_get(e, "frame")),
		    (long long)(at / MS));
		free(out);
		out = next;
	}
	return out;
}

static void
events_are(const struct tj *p, const char *want)
{
	char *got = events(p);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_sampled)
{
	struct profile *p = tu_sample_profile();
	struct tj *d = speedscope(p, 1, "app \"x\"");
	const struct tj *ps = tj_get(d, "profiles"), *p1, *p2;
	int64_t sum = 0;
	size_t i, k;

	ck_assert_str_eq(tj_str(tj_get(d, "$schema")),
	    "https://www.speedscope.app/file-format-schema.json");
	ck_assert_str_eq(tj_str(tj_get(d, "exporter")), "rperf " PACKAGE_VERSION);
	ck_assert_str_eq(tj_str(tj_get(d, "name")), "app \"x\"");
	ck_assert_int_eq(tj_int(tj_get(d, "activeProfileIndex")), 0);
	/* The states, then the locations by first use, leaf first: a
	 * location is a frame (tu_add gives each depth its own line). */
	ck_assert_uint_eq(tj_get(tj_get(d, "shared"), "frames")->n, 10);
	frame_is(d, 0, "[GVL blocked]");
	frame_is(d, 1, "[GVL wait]");
	frame_is(d, 2, "[GC marking]");
	frame_is(d, 3, "[GC sweeping]");
	frame_is(d, 4, "Foo::Bar#baz lib/x.rb:22");
	frame_is(d, 5, "Object#work lib/x.rb:12");
	frame_is(d, 6, "<main> main.rb:2");
	frame_is(d, 7, "Kernel#sleep lib/x.rb:12");
	frame_is(d, 8, "Foo::Bar#baz lib/x.rb:32");
	frame_is(d, 9, "Object#work lib/x.rb:22");

	ck_assert_uint_eq(ps->n, 2);
	p1 = tj_at(ps, 0);
	p2 = tj_at(ps, 1);
	ck_assert_str_eq(tj_str(tj_get(p1, "type")), "sampled");
	ck_assert_str_eq(tj_str(tj_get(p1, "name")), "thread 1 (main)");
	ck_assert_str_eq(tj_str(tj_get(p1, "unit")), "nanoseconds");
	ck_assert_int_eq(tj_int(tj_get(p1, "startValue")), 0);
	ck_assert_int_eq(tj_int(tj_get(p1, "endValue")), 10 * MS);
	/* Root first, the VM state on top, in the profile's order. */
	ints_are(tj_get(p1, "samples"), "6,5,4;6,5;6,5,4;6,7,0");
	ints_are(tj_get(p1, "weights"), "3000000,1000000,2000000,4000000");
	ck_assert_str_eq(tj_str(tj_get(p2, "name")), "thread 2 (worker)");
	ck_assert_int_eq(tj_int(tj_get(p2, "endValue")), 2 * MS);
	ints_are(tj_get(p2, "samples"), "6,5,9,8,2;6,5,9,8");
	ints_are(tj_get(p2, "weights"), "1500000,500000");
	/* Each profile's weights add up to its end, all to the total. */
	for (i = 0; i < ps->n; i++) {
		const struct tj *w = tj_get(tj_at(ps, i), "weights");
		int64_t t = 0;

		ck_assert_uint_eq(w->n, tj_get(tj_at(ps, i), "samples")->n);
		for (k = 0; k < w->n; k++)
			t += tj_int(&w->items[k]);
		ck_assert_int_eq(t, tj_int(tj_get(tj_at(ps, i), "endValue")));
		sum += t;
	}
	ck_assert_int_eq(sum, profile_total(p, 1));
	tj_delete(d);

	/* The counts: no unit speedscope knows. */
	d = speedscope(p, 0, NULL);
	ck_assert_str_eq(tj_str(tj_get(d, "name")), "rperf");
	p1 = tj_at(tj_get(d, "profiles"), 0);
	ck_assert_str_eq(tj_str(tj_get(p1, "unit")), "none");
	ints_are(tj_get(p1, "weights"), "3,1,2,4");
	ck_assert_int_eq(tj_int(tj_get(p1, "endValue")), 10);
	tj_delete(d);
	profile_free(p);
}
END_TEST

START_TEST(test_no_samples)
{
	static const char *const types[] = { "cpu" };
	static const char *const units[] = { "nanoseconds" };
	struct profile *p = profile_new();
	const struct tj *p1;
	struct tj *d;

	profile_set_value_types(p, 1, types, units);
	d = speedscope(p, 0, NULL);
	ck_assert_uint_eq(tj_get(d, "profiles")->n, 1);
	p1 = tj_at(tj_get(d, "profiles"), 0);
	ck_assert_str_eq(tj_str(tj_get(p1, "name")), "no samples");
	ck_assert_uint_eq(tj_get(p1, "samples")->n, 0);
	ck_assert_uint_eq(tj_get(tj_get(d, "shared"), "frames")->n, 4);
	tj_delete(d);
	profile_free(p);
}
END_TEST

/* Add a sample of STACK on thread THREAD ("main" for 1) ending at AT
 * ms, WEIGHT ms long, in GVL state GVL (or NULL). */
static void
timed(struct profile *p, const char *const *stack, int64_t thread, int64_t at,
    int64_t weight, const char *gvl)
{
	struct profile_label l[4];
	size_t n = 0;

	l[n++] = tu_label(p, "thread", NULL, thread);
	if (thread == 1)
		l[n++] = tu_label(p, "thread_name", "main", 0);
	l[n++] = tu_label(p, "timestamp", NULL, at * MS);
	if (gvl != NULL)
		l[n++] = tu_label(p, PROFILE_LABEL_GVL, gvl, 0);
	tu_add(p, stack, 1, weight * MS, l, n);
}

START_TEST(test_evented)
{
	static const char *const types[] = { "samples", "wall" };
	static const char *const units[] = { "count", "nanoseconds" };
	static const char *const work[] = { "<main>", "Object#work", NULL };
	static const char *const baz[] = { "<main>", "Object#work", "Foo::Bar#baz", NULL };
	static const char *const sleep[] = { "<main>", "Kernel#sleep", NULL };
	struct profile *p = profile_new();
	const struct tj *ps;
	struct tj *d;

	profile_set_value_types(p, 2, types, units);
	timed(p, work, 1, 10, 10, NULL);	/* [0, 10] */
	timed(p, baz, 1, 15, 5, NULL);		/* [10, 15] */
	timed(p, sleep, 1, 30, 10, "blocked");	/* [20, 30] after a gap */
	timed(p, baz, 2, 8, 4, "wait");		/* [4, 8] */
	profile_add_comment(p, "mark: 0 1 0 15000000 req");
	profile_add_comment(p, "mark: 0 1 5000000 12000000 db");
	/* overlaps req's end: cut there, as speedscope needs them nested */
	profile_add_comment(p, "mark: 0 1 14000000 18000000 tail");
	profile_add_comment(p, "mark: 0 9 1000000 2000000 lone");
	d = speedscope(p, 1, NULL);

	/* states, work, main, baz, sleep; then the mark names, sorted */
	ck_assert_uint_eq(tj_get(tj_get(d, "shared"), "frames")->n, 12);
	frame_is(d, 4, "Object#work lib/x.rb:12");
	frame_is(d, 5, "<main> main.rb:2");
	frame_is(d, 6, "Foo::Bar#baz lib/x.rb:22");
	frame_is(d, 7, "Kernel#sleep lib/x.rb:12");
	frame_is(d, 8, "db");
	frame_is(d, 9, "lone");
	frame_is(d, 10, "req");
	frame_is(d, 11, "tail");

	ps = tj_get(d, "profiles");
	ck_assert_uint_eq(ps->n, 4);
	ck_assert_str_eq(tj_str(tj_get(tj_at(ps, 0), "name")), "thread 1 (main)");
	ck_assert_str_eq(tj_str(tj_get(tj_at(ps, 0), "type")), "evented");
	/* The end: the latest span's or mark's. */
	ck_assert_int_eq(tj_int(tj_get(tj_at(ps, 0), "endValue")), 30 * MS);
	/* What stays common stays open; a gap closes everything. */
	events_are(tj_at(ps, 0), "O5@0 O4@0 O6@10 C6@15 C4@15 C5@15 "
	    "O5@20 O7@20 O0@20 C0@30 C7@30 C5@30");
	ck_assert_str_eq(tj_str(tj_get(tj_at(ps, 1), "name")), "marks: thread 1 (main)");
	events_are(tj_at(ps, 1), "O10@0 O8@5 C8@12 O11@14 C11@15 C10@15");
	ck_assert_str_eq(tj_str(tj_get(tj_at(ps, 2), "name")), "thread 2");
	events_are(tj_at(ps, 2), "O5@4 O4@4 O6@4 O1@4 C1@8 C6@8 C4@8 C5@8");
	/* a thread with marks and no samples comes last */
	ck_assert_str_eq(tj_str(tj_get(tj_at(ps, 3), "name")), "marks: thread 9");
	events_are(tj_at(ps, 3), "O9@1 C9@2");
	tj_delete(d);
	profile_free(p);
}
END_TEST

START_TEST(test_reader_rejects)
{
	struct tj *d;

	/* The reader the tests rely on must refuse what is not JSON. */
	ck_assert_ptr_null(tj_parse("{\"a\":1,}"));
	ck_assert_ptr_null(tj_parse("[1] x"));
	ck_assert_ptr_null(tj_parse("\"tab\there\""));
	ck_assert_ptr_null(tj_parse("{\"a\" 1}"));
	d = tj_parse(" {\"k\":[1,-2,\"\\u00e9\\ud83d\\ude00\"],\"t\":true} ");
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(tj_int(tj_at(tj_get(d, "k"), 1)), -2);
	ck_assert_str_eq(tj_str(tj_at(tj_get(d, "k"), 2)), "\xc3\xa9\xf0\x9f\x98\x80");
	tj_delete(d);
}
END_TEST

static Suite *
speedscope_suite(void)
{
	Suite *s = suite_create("speedscope");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_reader_rejects);
	tcase_add_test(tc, test_sampled);
	tcase_add_test(tc, test_no_samples);
	tcase_add_test(tc, test_evented);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(speedscope_suite());
}
