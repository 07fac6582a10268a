/*
 * check_text.c: unit tests for the text report (text.c): the whole report
 * of a small known profile, number formatting, ordering, options, and the
 * sections that appear only when the profile has what they show.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "testutil.h"

/* The report of P with options O (NULL for defaults). */
static char *
report(const struct profile *p, const struct text_opts *o)
{
	char *buf = NULL;
	size_t len;
	int rc;

	TU_CAPTURE(buf, len, rc, text_write(p, fp, o));
	ck_assert_int_eq(rc, 0);
	return buf;
}

START_TEST(test_known_report)
{
	static const char expected[] =
	    "Recorder: rperf 0.1.0, ruby 3.4.5\n"
	    "Command:  ruby app.rb\n"
	    "Mode:     cpu, 1,000 Hz\n"
	    "Total:    12.00 ms (cpu)\n"
	    "Duration: 2,500.00 ms\n"
	    "Samples:  12\n"
	    "Triggers: 13\n"
	    "\n"
	    "Flat profile (top 3 of 3 functions):\n"
	    "  Self ms       %  Function      Location\n"
	    "     7.00   58.3%  Foo::Bar#baz  lib/x.rb:12\n"
	    "     4.00   33.3%  Kernel#sleep  lib/x.rb:12\n"
	    "     1.00    8.3%  Object#work   lib/x.rb:11\n"
	    "\n"
	    "Cumulative profile (top 4 of 4 functions):\n"
	    "  Cum ms       %  Function      Location\n"
	    "   12.00  100.0%  <main>        main.rb:6\n"
	    "    8.00   66.7%  Object#work   lib/x.rb:11\n"
	    "    7.00   58.3%  Foo::Bar#baz  lib/x.rb:12\n"
	    "    4.00   33.3%  Kernel#sleep  lib/x.rb:12\n"
	    "\n"
	    "VM state:\n"
	    "  Time ms       %  State\n"
	    "     6.50   54.2%  normal execution\n"
	    "     4.00   33.3%  GVL blocked (%GVL=blocked)\n"
	    "     0.00    0.0%  GVL wait (%GVL=wait)\n"
	    "     1.50   12.5%  GC marking (%GC=mark)\n"
	    "     0.00    0.0%  GC sweeping (%GC=sweep)\n"
	    "\n"
	    "Threads:\n"
	    "  Thread  Name    Time ms       %\n"
	    "       1  main      10.00   83.3%\n"
	    "       2  worker     2.00   16.7%\n";
	struct profile *p = tu_sample_profile();
	char *out = report(p, NULL);

	ck_assert_str_eq(out, expected);
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_options)
{
	struct profile *p = tu_sample_profile();
	struct text_opts o;
	char *out, *flat, *cum;

	text_opts_init(&o);
	ck_assert_uint_eq(o.top, 50);
	ck_assert_uint_eq(o.value_index, TEXT_VALUE_DEFAULT);
	o.value_index = 0;
	o.top = 2;
	o.sort_cum = 1;
	out = report(p, &o);
	ck_assert_ptr_nonnull(strstr(out, "Total:    12 (samples)\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "Cumulative profile (top 2 of 4 functions):\n"
	    "  Cum       %  Function     Location\n"
	    "   12  100.0%  <main>       main.rb:6\n"
	    "    8   66.7%  Object#work  lib/x.rb:11\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "Flat profile (top 2 of 3 functions):\n"
	    "  Self       %  Function      Location\n"
	    "     7   58.3%  Foo::Bar#baz  lib/x.rb:12\n"
	    "     4   33.3%  Kernel#sleep  lib/x.rb:12\n\n"));
	flat = strstr(out, "Flat profile");
	cum = strstr(out, "Cumulative profile");
	ck_assert(cum < flat);
	ck_assert_ptr_nonnull(strstr(out, "  Count       %  State\n"));
	free(out);
	/* An out-of-range value index falls back to the default. */
	o.value_index = 9;
	o.top = 0;
	o.sort_cum = 0;
	out = report(p, &o);
	ck_assert_ptr_nonnull(strstr(out, "Total:    12.00 ms (cpu)\n"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_old_command_secrets)
{
	struct profile *p = tu_sample_profile();
	size_t i;
	char *out;

	/* as rperf recorded it before it masked its command line */
	for (i = 0; i < p->ncomments; i++) {
		if (strncmp(profile_str(p, p->comments[i]), "command:", 8) == 0)
			p->comments[i] = profile_intern(p, "command: rperf record "
			    "--push http://me:pw5ecret@h/ --push-header "
			    "X-Api-Key: k3y5ecret -o x.pb.gz app.rb");
	}
	out = report(p, NULL);
	ck_assert_ptr_nonnull(strstr(out, "Command:  rperf record --push "
	    "http://me:***@h/ --push-header X-Api-Key: *** -o x.pb.gz app.rb\n"));
	ck_assert_ptr_null(strstr(out, "5ecret"));
	free(out);
	profile_free(p);
}
END_TEST

/* A memory profile gets the table of allocation sites, by bytes, with
 * all four values, whichever value the report shows; a time profile not. */
START_TEST(test_memory_sites)
{
	static const char *const types[] = { "alloc_objects", "alloc_space",
	    "inuse_objects", "inuse_space" };
	static const char *const units[] = { "count", "bytes", "count", "bytes" };
	struct profile *p = profile_new();
	struct text_opts o;
	uint64_t f1, f2, locs[2];
	int64_t v1[4] = { 1024, 40960, 1024, 40960 }, v2[4] = { 2048, 409600, 0, 0 };
	char *out;

	profile_set_value_types(p, 4, types, units);
	p->default_value = 1;
	f1 = profile_function(p, "Class#new", "Class#new", "", 0);
	f2 = profile_function(p, "String#*", "String#*", "", 0);
	locs[0] = profile_location(p, f1, 0);
	locs[1] = profile_location(p, f2, 0);
	profile_add_sample(p, &locs[0], 1, v1, NULL, 0);
	profile_add_sample(p, &locs[1], 1, v2, NULL, 0);
	text_opts_init(&o);
	o.value_index = 2;	/* inuse_objects shown above, the table the same */
	out = report(p, &o);
	ck_assert_ptr_nonnull(strstr(out, "Total:    1,024 (inuse_objects)\n"));
	ck_assert_ptr_nonnull(strstr(out,
	    "\nAllocation sites (top 2 of 2, by bytes allocated):\n"
	    "  Objects    Bytes  In use  In use bytes  Function\n"
	    "    2,048  409,600       0             0  String#*\n"
	    "    1,024   40,960   1,024        40,960  Class#new\n"));
	free(out);
	profile_free(p);
	p = tu_sample_profile();
	out = report(p, NULL);
	ck_assert_ptr_null(strstr(out, "Allocation sites"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_empty)
{
	struct profile *p = profile_new();
	char *out = report(p, NULL);

	ck_assert_str_eq(out, "profile is empty: no samples\n");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_big_numbers_and_ties)
{
	static const char *const t[] = { "samples", "wall" };
	static const char *const u[] = { "count", "nanoseconds" };
	static const char *const a[] = { "b", NULL };
	static const char *const b[] = { "a", NULL };
	static const char *const c[] = { "c", NULL };
	struct profile *p = profile_new();
	char *out;

	profile_set_value_types(p, 2, t, u);
	tu_add(p, a, 1234567, 1234567890123LL, NULL, 0);
	tu_add(p, b, 1234567, 1234567890123LL, NULL, 0);
	tu_add(p, c, 1, 4999, NULL, 0);
	out = report(p, NULL);
	ck_assert_str_eq(out,
	    "Mode:     wall\n"
	    "Total:    2,469,135.79 ms (wall)\n"
	    "Samples:  3\n"
	    "\n"
	    "Flat profile (top 3 of 3 functions):\n"
	    "       Self ms       %  Function  Location\n"
	    "  1,234,567.89   50.0%  a         lib/x.rb:1\n"
	    "  1,234,567.89   50.0%  b         lib/x.rb:1\n"
	    "          0.00    0.0%  c         lib/x.rb:1\n"
	    "\n"
	    "Cumulative profile (top 3 of 3 functions):\n"
	    "        Cum ms       %  Function  Location\n"
	    "  1,234,567.89   50.0%  a         lib/x.rb:1\n"
	    "  1,234,567.89   50.0%  b         lib/x.rb:1\n"
	    "          0.00    0.0%  c         lib/x.rb:1\n");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_unknown_and_long_names)
{
	static const char *const t[] = { "events" };
	static const char *const u[] = { "bytes" };
	struct profile *p = profile_new();
	uint64_t fn, loc;
	int64_t v = -5;
	char name[100];
	char *out;

	memset(name, 'x', 99);
	name[99] = '\0';
	profile_set_value_types(p, 1, t, u);
	fn = profile_function(p, "", NULL, NULL, 0);
	loc = profile_location(p, fn, 0);
	profile_add_sample(p, &loc, 1, &v, NULL, 0);
	v = 1000;
	fn = profile_function(p, name, NULL, "f.rb", 0);
	loc = profile_location(p, fn, 0);
	profile_add_sample(p, &loc, 1, &v, NULL, 0);
	out = report(p, NULL);
	ck_assert_ptr_nonnull(strstr(out, "Total:    995 bytes (events)\n"));
	ck_assert_ptr_nonnull(strstr(out, "  Self bytes       %  Function"));
	ck_assert_ptr_nonnull(strstr(out, "          -5   -0.5%  [unknown]\n"));
	ck_assert_ptr_nonnull(strstr(out, "  1,000  100.5%  xxxxxxxxxx"));
	ck_assert_ptr_nonnull(strstr(out, "xxx  f.rb\n"));
	ck_assert_ptr_null(strstr(out, "VM state"));
	ck_assert_ptr_null(strstr(out, "Threads"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_write_error)
{
	struct profile *p = tu_sample_profile();
	FILE *fp = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(text_write(p, fp, NULL), -1);
	fclose(fp);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
text_suite(void)
{
	Suite *s = suite_create("text");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_known_report);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_old_command_secrets);
	tcase_add_test(tc, test_big_numbers_and_ties);
	tcase_add_test(tc, test_unknown_and_long_names);
	tcase_add_test(tc, test_write_error);
	tcase_add_test(tc, test_memory_sites);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(text_suite());
}
