/*
 * check_frames.c: unit tests for frames.c: how a function's name shows
 * (a real function named like a VM state's pseudo-frame disguised, none
 * as "[unknown]") and the walk over a sample's frames, root first with
 * the VM states on top, ids out of range passed over.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "testutil.h"

START_TEST(test_name)
{
	char buf[FRAMES_NAME_MAX];

	ck_assert_str_eq(frames_name("Object#work", buf), "Object#work");
	ck_assert_str_eq(frames_name("", buf), "[unknown]");
	ck_assert_str_eq(frames_name(NULL, buf), "[unknown]");
	ck_assert_str_eq(frames_name("[GVL blocked]", buf), "(GVL blocked)");
	ck_assert_str_eq(frames_name("[GVL wait]", buf), "(GVL wait)");
	ck_assert_str_eq(frames_name("[GC marking]", buf), "(GC marking)");
	ck_assert_str_eq(frames_name("[GC sweeping]", buf), "(GC sweeping)");
	/* only the states' own names */
	ck_assert_str_eq(frames_name("[GC]", buf), "[GC]");
	ck_assert_str_eq(frames_name("[GVL wait] ", buf), "[GVL wait] ");
}
END_TEST

/* The walk of sample I of P as text: "L<loc>" and "S<state>". */
static char *
walk(const struct profile *p, size_t i)
{
	struct frames_walk w;
	char *out = xstrdup(""), *next;
	int64_t f;

	frames_walk_begin(&w, p, &p->samples[i]);
	while ((f = frames_walk_next(&w)) != 0) {
		next = xasprintf("%s%s%c%lld%s", out, *out ? " " : "", f > 0 ? 'L' : 'S',
		    (long long)(f > 0 ? f : -f - 1), frames_walk_done(&w) ? "." : "");
		free(out);
		out = next;
	}
	ck_assert(frames_walk_done(&w));
	return out;
}

static void
walk_is(const struct profile *p, size_t i, const char *want)
{
	char *got = walk(p, i);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_walk)
{
	struct profile *p = tu_sample_profile();
	uint64_t locs[4];
	int64_t v[2] = { 1, 1 };
	struct profile_label l[2];

	/* <main> is location 1, work 2, baz 3 (tu_add makes them root
	 * first and stores them leaf first) */
	walk_is(p, 0, "L1 L2 L3.");
	/* Kernel#sleep, blocked: the state on top */
	walk_is(p, 3, "L1 L4 S0.");
	/* GC marking: states' index 2 */
	walk_is(p, 4, "L1 L2 L5 L6 S2.");
	/* both states: the GVL's, then the GC's; ids 0 and out of range
	 * passed over, an empty stack just its states */
	locs[0] = 0;
	locs[1] = 2;
	locs[2] = 999;
	locs[3] = 3;
	l[0] = tu_label(p, "%GC", "sweep", 0);
	l[1] = tu_label(p, "%GVL", "wait", 0);
	profile_add_sample(p, locs, 4, v, l, 2);
	walk_is(p, p->nsamples - 1, "L3 L2 S1 S3.");
	profile_add_sample(p, NULL, 0, v, l, 1);
	walk_is(p, p->nsamples - 1, "S3.");
	profile_add_sample(p, locs, 1, v, NULL, 0);
	walk_is(p, p->nsamples - 1, "");
	profile_free(p);
}
END_TEST

static Suite *
frames_suite(void)
{
	Suite *s = suite_create("frames");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_name);
	tcase_add_test(tc, test_walk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(frames_suite());
}
