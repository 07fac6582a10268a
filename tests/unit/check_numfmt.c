/*
 * check_numfmt.c: unit tests for numfmt.c: digit grouping of integers,
 * doubles and values, milliseconds rounded in integers, signed changes
 * exact at the ends of int64_t, percentages, and buffers too small.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "numfmt.h"
#include "testutil.h"

START_TEST(test_int_and_double)
{
	char buf[64];

	ck_assert_str_eq(numfmt_int(buf, sizeof buf, 0), "0");
	ck_assert_str_eq(numfmt_int(buf, sizeof buf, 999), "999");
	ck_assert_str_eq(numfmt_int(buf, sizeof buf, 1000), "1,000");
	ck_assert_str_eq(numfmt_int(buf, sizeof buf, -1234567), "-1,234,567");
	ck_assert_str_eq(numfmt_int(buf, sizeof buf, INT64_MIN),
	    "-9,223,372,036,854,775,808");
	ck_assert_str_eq(numfmt_double(buf, sizeof buf, 1234.5, 2),
	    "1,234.50");
	ck_assert_str_eq(numfmt_double(buf, sizeof buf, 123456.0, 0),
	    "123,456");
	ck_assert_str_eq(numfmt_double(buf, sizeof buf, -1234567.891, 2),
	    "-1,234,567.89");
	/* A negative that rounds to zero keeps its sign, as printf's. */
	ck_assert_str_eq(numfmt_double(buf, sizeof buf, -0.001, 2), "-0.00");
}
END_TEST

START_TEST(test_values)
{
	struct numfmt_unit ms = { 1, "ms" }, count = { 0, "" };
	char buf[64];

	ck_assert_str_eq(numfmt_value(buf, sizeof buf, &ms, 1234567890),
	    "1,234.57");
	ck_assert_str_eq(numfmt_value(buf, sizeof buf, &ms, 9995000), "10.00");
	ck_assert_str_eq(numfmt_value(buf, sizeof buf, &ms, -1), "-0.00");
	ck_assert_str_eq(numfmt_value(buf, sizeof buf, &ms, INT64_MIN),
	    "-9,223,372,036,854.78");
	ck_assert_str_eq(numfmt_delta(buf, sizeof buf, &ms, -5000), "-0.01");
	ck_assert_str_eq(numfmt_delta(buf, sizeof buf, &count, 1234),
	    "+1,234");
	ck_assert_str_eq(numfmt_delta(buf, sizeof buf, &count, 0), "0");
	ck_assert_str_eq(numfmt_value(buf, sizeof buf, &count, INT64_MIN),
	    "-9,223,372,036,854,775,808");
	/* The change between the ends of int64_t does not fit in one. */
	ck_assert_uint_eq(numfmt_gap(INT64_MIN, INT64_MAX), UINT64_MAX);
	ck_assert_str_eq(numfmt_change(buf, sizeof buf, &count, INT64_MIN,
	    INT64_MAX), "+18,446,744,073,709,551,615");
	ck_assert_str_eq(numfmt_change(buf, sizeof buf, &count, INT64_MAX,
	    INT64_MIN), "-18,446,744,073,709,551,615");
	ck_assert_str_eq(numfmt_change(buf, sizeof buf, &ms, 7, 7), "0.00");
}
END_TEST

START_TEST(test_unit_of_profile)
{
	struct profile *p = tu_sample_profile();
	struct numfmt_unit u;

	numfmt_unit_init(&u, p, 0);
	ck_assert_int_eq(u.ms, 0);
	ck_assert_str_eq(u.suffix, "");
	numfmt_unit_init(&u, p, 1);
	ck_assert_int_eq(u.ms, 1);
	ck_assert_str_eq(u.suffix, "ms");
	numfmt_unit_init(&u, p, 99);
	ck_assert_int_eq(u.ms, 0);
	ck_assert_str_eq(u.suffix, "");
	profile_free(p);
}
END_TEST

START_TEST(test_pct_and_short_buffers)
{
	char buf[64], small[6];

	ck_assert_str_eq(numfmt_pct(buf, sizeof buf, 1, 3), "33.3%");
	ck_assert_str_eq(numfmt_pct(buf, sizeof buf, 1, 0), "-");
	ck_assert_str_eq(numfmt_pct(buf, sizeof buf, -1, 2000), "-0.1%");
	/* Cut short, never overrun. */
	ck_assert_str_eq(numfmt_int(small, sizeof small, 1234567), "1,234");
	ck_assert_str_eq(numfmt_int(small, sizeof small, 12345), "12,34");
	ck_assert_uint_eq(strlen(numfmt_int(small, 4, 12345)), 3);
	memset(small, 'x', sizeof small);
	numfmt_int(small, 1, 5);
	ck_assert_int_eq(small[0], '\0');
	ck_assert_int_eq(small[1], 'x');
}
END_TEST

/* The test suite. */
static Suite *
numfmt_suite(void)
{
	Suite *s = suite_create("numfmt");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_int_and_double);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_unit_of_profile);
	tcase_add_test(tc, test_pct_and_short_buffers);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(numfmt_suite());
}
