/*
 * check_flamegraph.c: unit tests for flamegraph.c: the SVG's fixed parts,
 * escaping of hostile and invalid names (JSON inside CDATA inside XML),
 * the frame data of a known profile, pruning of frames too narrow to see,
 * and the differential mode's base values.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "testutil.h"

/* The SVG of P with options O. */
static char *
svg(const struct profile *p, const struct flamegraph_opts *o)
{
	char *buf = NULL;
	size_t len;
	int rc;

	TU_CAPTURE(buf, len, rc, flamegraph_write(p, fp, o));
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(strlen(buf), len);
	return buf;
}

START_TEST(test_known)
{
	struct profile *p = tu_sample_profile();
	struct flamegraph_opts o;
	char *out;

	flamegraph_opts_init(&o);
	o.title = "t <&> \"q\"";
	out = svg(p, &o);
	ck_assert(strncmp(out, "<?xml version=\"1.0\"", 19) == 0);
	ck_assert_ptr_nonnull(strstr(out, ">t &lt;&amp;&gt; &quot;q&quot;<"));
	ck_assert_ptr_nonnull(strstr(out, "Total 12.00 ms"));
	ck_assert_ptr_nonnull(strstr(out, "\"names\":[\"[GVL blocked]\","
	    "\"[GVL wait]\",\"[GC marking]\",\"[GC sweeping]\",\"all\""));
	/* Root first, children by name: <main> holds everything. */
	ck_assert_ptr_nonnull(strstr(out, "\"nodes\":[4,0,12000000,5,1,12000000,"));
	ck_assert_ptr_nonnull(strstr(out, "\"diff\":0"));
	ck_assert_ptr_null(strstr(out, "http://www.w3.org/1999/xlink"));
	ck_assert_ptr_nonnull(strstr(out, "]]></script>\n</svg>\n"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_escaping)
{
	static const char *const evil[] = { "main", "a\"b\\c</script>]]>&",
	    "bad\xff\xc3(\xe2\x80\xa8ok\xc3\xa9", "ctl\x01", NULL };
	static const char *const types[] = { "cpu" };
	static const char *const units[] = { "nanoseconds" };
	struct profile *p = profile_new();
	char *out, *cdata;

	profile_set_value_types(p, 1, types, units);
	tu_add(p, evil, 1, 5, NULL, 0);
	/* tu_add takes two values; only the first type exists here. */
	out = svg(p, NULL);
	cdata = strstr(out, "<script");
	ck_assert_ptr_nonnull(cdata);
	ck_assert_ptr_nonnull(strstr(out,
	    "\"a\\\"b\\\\c\\u003c/script\\u003e]]\\u003e\\u0026\""));
	ck_assert_ptr_nonnull(strstr(out,
	    "\"bad\\ufffd\\ufffd(\\u2028ok\xc3\xa9\""));
	ck_assert_ptr_nonnull(strstr(out, "\"ctl\\u0001\""));
	/* Only the script's own end closes its CDATA. */
	ck_assert_ptr_eq(strstr(cdata, "]]>"), strstr(out, "]]></script>"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_prune_and_diff)
{
	static const char *const big[] = { "main", "big", NULL };
	static const char *const tiny[] = { "main", "tiny", NULL };
	struct profile *p = profile_new(), *base;
	static const char *const types[] = { "samples", "cpu" };
	static const char *const units[] = { "count", "nanoseconds" };
	struct flamegraph_opts o;
	char *out;

	profile_set_value_types(p, 2, types, units);
	tu_add(p, big, 1, 100000000, NULL, 0);
	tu_add(p, tiny, 1, 1000, NULL, 0);
	out = svg(p, NULL);
	/* 1 us of 100 ms is far under a tenth of a pixel. */
	ck_assert_ptr_nonnull(strstr(out, "\"big\""));
	ck_assert_ptr_null(strstr(out, "\"tiny\""));
	ck_assert_ptr_nonnull(strstr(out, "[4,0,100001000,5,1,100001000,6,2,100000000]"));
	free(out);

	base = profile_new();
	profile_set_value_types(base, 2, types, units);
	tu_add(base, big, 1, 10000000, NULL, 0);
	flamegraph_opts_init(&o);
	o.base = base;
	o.base_scale = 2.0;
	out = svg(p, &o);
	ck_assert_ptr_nonnull(strstr(out, "\"diff\":1"));
	ck_assert_ptr_nonnull(strstr(out, "Differential Flame Graph"));
	ck_assert_ptr_nonnull(strstr(out,
	    "[4,0,100001000,20000000,5,1,100001000,20000000,"
	    "6,2,100000000,20000000]"));
	free(out);
	profile_free(base);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
flamegraph_suite(void)
{
	Suite *s = suite_create("flamegraph");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_known);
	tcase_add_test(tc, test_escaping);
	tcase_add_test(tc, test_prune_and_diff);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(flamegraph_suite());
}
