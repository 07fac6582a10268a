/*
 * check_diff.c: unit tests for diff.c: per-function self and cumulative
 * sums across two profiles matched by name, recursion counted once,
 * --normalize scaling, the text report with new and vanished functions,
 * refusing to compare different units, and the regression gate: medians
 * of several runs, when it trips and the verdict it prints.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "testutil.h"

/* The row of D called NAME. */
static const struct diff_row *
row(const struct diff *d, const char *name)
{
	size_t i;

	for (i = 1; i < d->nrows; i++) {
		if (strcmp(d->rows[i].name, name) == 0)
			return &d->rows[i];
	}
	ck_abort_msg("no row %s", name);
	return NULL;
}

/* A profile of one sample per stack (root first) with weights in ns. */
static struct profile *
small(const char *const *a, int64_t wa, const char *const *b, int64_t wb)
{
	static const char *const types[] = { "samples", "cpu" };
	static const char *const units[] = { "count", "nanoseconds" };
	struct profile *p = profile_new();

	profile_set_value_types(p, 2, types, units);
	tu_add(p, a, 1, wa, NULL, 0);
	if (b != NULL)
		tu_add(p, b, 1, wb, NULL, 0);
	return p;
}

START_TEST(test_compute)
{
	static const char *const s1[] = { "main", "work", "old", NULL };
	static const char *const s2[] = { "main", "work", "work", "new", NULL };
	struct profile *base = small(s1, 10, NULL, 0);
	struct profile *target = small(s2, 30, s1, 10);
	struct diff d;
	char err[128];

	ck_assert_int_eq(diff_compute(&d, base, (size_t)-1, target,
	    (size_t)-1, 0, err, sizeof err), 0);
	ck_assert_int_eq(d.base_total, 10);
	ck_assert_int_eq(d.target_total, 40);
	ck_assert_int_eq(row(&d, "work")->target_cum, 40);
	ck_assert_int_eq(row(&d, "work")->base_cum, 10);
	ck_assert_int_eq(row(&d, "new")->target_self, 30);
	ck_assert_int_eq(row(&d, "new")->base_self, 0);
	ck_assert_int_eq(row(&d, "old")->base_self, 10);
	diff_release(&d);

	ck_assert_int_eq(diff_compute(&d, base, (size_t)-1, target,
	    (size_t)-1, 1, err, sizeof err), 0);
	ck_assert(d.scale == 4.0);
	ck_assert_int_eq(d.base_total, 40);
	ck_assert_int_eq(d.base_raw_total, 10);
	ck_assert_int_eq(row(&d, "old")->base_self, 40);
	diff_release(&d);
	profile_free(base);
	profile_free(target);
}
END_TEST

START_TEST(test_write)
{
	static const char *const s1[] = { "main", "work", "old", NULL };
	static const char *const s2[] = { "main", "work", "new", NULL };
	static const char expected[] =
	    "Base:    b.pb.gz, total 10.00 ms\n"
	    "Target:  t.pb.gz, total 25.00 ms\n"
	    "Delta:   +15.00 ms (+150.0%)\n"
	    "Filters: --focus 'x'\n"
	    "\n"
	    "Flat delta (top 2 of 2 changed functions):\n"
	    "  Base ms  Target ms  Delta ms    Change  Function\n"
	    "     0.00      25.00    +25.00       new  new\n"
	    "    10.00       0.00    -10.00  vanished  old\n"
	    "\n"
	    "Cumulative delta (top 2 of 4 changed functions):\n"
	    "  Base ms  Target ms  Delta ms   Change  Function\n"
	    "     0.00      25.00    +25.00      new  new\n"
	    "    10.00      25.00    +15.00  +150.0%  main\n";
	struct profile *base = small(s1, 10000000, NULL, 0);
	struct profile *target = small(s2, 25000000, NULL, 0);
	struct diff_opts o = { 2, "b.pb.gz", "t.pb.gz", "--focus 'x'" };
	struct diff d;
	char err[128], *buf = NULL;
	size_t len;
	int rc;

	ck_assert_int_eq(diff_compute(&d, base, (size_t)-1, target,
	    (size_t)-1, 0, err, sizeof err), 0);
	TU_CAPTURE(buf, len, rc, diff_write(&d, fp, &o));
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(buf, expected);
	free(buf);
	diff_release(&d);
	profile_free(base);
	profile_free(target);
}
END_TEST

START_TEST(test_extreme_values)
{
	/* Deltas of extreme values overflowed int64_t (undefined behaviour,
	 * and a wrong delta printed); they now print exactly. */
	static const char *const s1[] = { "main", "x", NULL };
	static const char *const s2[] = { "main", "y", NULL };
	struct profile *base = small(s1, INT64_MAX, s2, INT64_MIN);
	struct profile *target = small(s1, INT64_MIN, s2, INT64_MAX);
	struct diff_opts o = { 0, "a", "b", "" };
	struct diff d;
	char err[128], *out = NULL;
	size_t len;
	int rc;

	ck_assert_int_eq(diff_compute(&d, base, (size_t)-1, target,
	    (size_t)-1, 0, err, sizeof err), 0);
	TU_CAPTURE(out, len, rc, diff_write(&d, fp, &o));
	ck_assert_int_eq(rc, 0);
	/* 2^64 - 1 ns either way; relative to the base, -200%. */
	ck_assert_msg(strstr(out, "  -18,446,744,073,709.55  -200.0%  x\n") !=
	    NULL, "%s", out);
	ck_assert_msg(strstr(out, "  +18,446,744,073,709.55  -200.0%  y\n") !=
	    NULL, "%s", out);
	free(out);
	diff_release(&d);
	profile_free(base);
	profile_free(target);
}
END_TEST

START_TEST(test_units_differ)
{
	static const char *const s1[] = { "main", NULL };
	struct profile *base = small(s1, 10, NULL, 0);
	struct profile *target = small(s1, 10, NULL, 0);
	struct diff d;
	char err[128];

	ck_assert_int_eq(diff_compute(&d, base, 0, target, 1, 0, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "cannot compare values in count with values "
	    "in nanoseconds");
	diff_release(&d);
	profile_free(base);
	profile_free(target);
}
END_TEST

START_TEST(test_median)
{
	double odd[] = { 30, 10, 20 }, even[] = { 4, 1, 3, 2 };
	double ties[] = { 5, 7, 5, 5 }, one[] = { 9 };
	double out[] = { 100, 101, 99, 500, 100.5 };

	/* The run shown is the median one, found without reordering. */
	ck_assert_uint_eq(diff_median_run(odd, 3), 2);
	ck_assert_uint_eq(diff_median_run(even, 4), 3);
	ck_assert_uint_eq(diff_median_run(ties, 4), 2);
	ck_assert_uint_eq(diff_median_run(one, 1), 0);
	ck_assert_uint_eq(diff_median_run(out, 5), 4);
	ck_assert(diff_median(odd, 3) == 20);
	ck_assert(diff_median(even, 4) == 2.5);
	ck_assert(diff_median(ties, 4) == 5);
	ck_assert(diff_median(one, 1) == 9);
	ck_assert(diff_median(out, 5) == 100.5);	/* the outlier is out */
	ck_assert(diff_median(NULL, 0) == 0);
}
END_TEST

START_TEST(test_gate_tripped)
{
	struct diff_gate g;

	memset(&g, 0, sizeof g);
	g.limit = 5;
	g.before = 100, g.after = 105;
	ck_assert(!diff_gate_tripped(&g));	/* at the limit: not over */
	g.after = 105.1;
	ck_assert(diff_gate_tripped(&g));
	g.after = 50;
	ck_assert(!diff_gate_tripped(&g));	/* faster */
	g.before = 0, g.after = 0;
	ck_assert(!diff_gate_tripped(&g));
	g.after = 1;
	ck_assert(diff_gate_tripped(&g));	/* from nothing */
}
END_TEST

/* Named: only "fib" (like --focus fib). */
static int
only_fib(const char *name, void *arg)
{
	(void)arg;
	return strcmp(name, "fib") == 0;
}

START_TEST(test_gate_write)
{
	static const char *const fib[] = { "main", "work", "fib", NULL };
	static const char *const old[] = { "main", "work", "old", NULL };
	static const char *const io[] = { "main", "io", NULL };
	static const char *const fresh[] = { "main", "new", NULL };
	struct profile *base = small(fib, 50000000, io, 50000000);
	struct profile *target = small(fib, 70000000, io, 45000000);
	struct diff_gate g;
	struct diff d;
	char err[128], *out = NULL;
	size_t len;
	int rc;

	tu_add(base, old, 1, 10000000, NULL, 0);
	tu_add(target, old, 1, 10000000, NULL, 0);
	tu_add(target, fresh, 1, 5000000, NULL, 0);
	ck_assert_int_eq(diff_compute(&d, base, (size_t)-1, target,
	    (size_t)-1, 0, err, sizeof err), 0);
	memset(&g, 0, sizeof g);
	g.prefix = "rperf diff";
	g.what = "total";
	g.limit = 5;
	g.before = 110e6, g.after = 130e6;
	g.nbase = g.ntarget = 1;
	g.scale = 1;
	/* What grew, most first; main (on every stack) and what shrank
	 * (io) or stayed (old) are not named. */
	TU_CAPTURE(out, len, rc, diff_gate_write(&d, &g, fp));
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(out,
	    "rperf diff: regression: total 110.00 ms -> 130.00 ms (+18.2%, "
	    "limit 5%)\n"
	    "  fib   50.00 ms -> 70.00 ms (+40.0%)\n"
	    "  work  60.00 ms -> 80.00 ms (+33.3%)\n"
	    "  new    0.00 ms ->  5.00 ms (new)\n");
	free(out);

	g.top = 1;
	g.named = only_fib;
	g.limit = 20;
	g.nbase = 5, g.ntarget = 3;
	TU_CAPTURE(out, len, rc, diff_gate_write(&d, &g, fp));
	ck_assert_str_eq(out,
	    "rperf diff: within the limit: total 110.00 ms -> 130.00 ms "
	    "(+18.2%, limit 20%; medians of 5 and 3 runs)\n");
	free(out);

	/* Shares, with the base scaled as the gate sees it. */
	g.limit = 2.5;
	g.share = 1;
	g.what = "focused share";
	g.before = 50.0 / 110, g.after = 70.0 / 130;
	g.scale = 130.0 / 110;
	TU_CAPTURE(out, len, rc, diff_gate_write(&d, &g, fp));
	ck_assert_str_eq(out,
	    "rperf diff: regression: focused share 45.5% -> 53.8% of the "
	    "total (+18.5%, limit 2.5%; medians of 5 and 3 runs)\n"
	    "  fib  59.09 ms -> 70.00 ms (+18.5%)\n");
	free(out);
	diff_release(&d);
	profile_free(base);
	profile_free(target);
}
END_TEST

/* The test suite. */
static Suite *
diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_compute);
	tcase_add_test(tc, test_write);
	tcase_add_test(tc, test_extreme_values);
	tcase_add_test(tc, test_units_differ);
	tcase_add_test(tc, test_median);
	tcase_add_test(tc, test_gate_tripped);
	tcase_add_test(tc, test_gate_write);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(diff_suite());
}
