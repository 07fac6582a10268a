/*
 * check_folded.c: unit tests for the folded stack reader and writer
 * (folded.c): exact output for a known profile, round trips through the
 * model, files from other tools, and malformed input rejected with the
 * line number.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "pprof.h"
#include "testutil.h"

/* Write P folded on value VI; returns the text. */
static char *
write_folded(const struct profile *p, size_t vi)
{
	char *buf = NULL;
	size_t len;
	int rc;

	TU_CAPTURE(buf, len, rc, folded_write(p, fp, vi));
	ck_assert_int_eq(rc, 0);
	return buf;
}

/* Parse TEXT, which must succeed. */
static struct profile *
parse_ok(const char *text)
{
	char err[256] = "";
	struct profile *p = folded_parse(text, strlen(text), err, sizeof err);

	ck_assert_msg(p != NULL, "folded_parse: %s", err);
	return p;
}

/* Parse TEXT, which must fail with exactly WANT. */
static void
parse_fails(const char *text, const char *want)
{
	char err[256] = "";
	struct profile *p = folded_parse(text, strlen(text), err, sizeof err);

	ck_assert_msg(p == NULL, "'%s' accepted", text);
	ck_assert_str_eq(err, want);
}

START_TEST(test_write_known)
{
	struct profile *p = tu_sample_profile();
	char *out;

	out = write_folded(p, 1);
	ck_assert_str_eq(out,
	    "<main>;Kernel#sleep;[GVL blocked] 4000000\n"
	    "<main>;Object#work 1000000\n"
	    "<main>;Object#work;Foo::Bar#baz 5000000\n"
	    "<main>;Object#work;Object#work;Foo::Bar#baz 500000\n"
	    "<main>;Object#work;Object#work;Foo::Bar#baz;[GC marking] "
	    "1500000\n");
	free(out);
	out = write_folded(p, 0);
	ck_assert_ptr_nonnull(strstr(out, "<main>;Object#work;Foo::Bar#baz 5\n"));
	free(out);
	out = write_folded(p, 7);
	ck_assert_str_eq(out, "");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_write_sanitizes)
{
	static const char *const s[] = { "a;b", "c\nd", "", NULL };
	static const char *const t[] = { "samples", "cpu" };
	static const char *const u[] = { "count", "nanoseconds" };
	struct profile *p = profile_new();
	int64_t v[2] = { 1, 0 };
	char *out;

	profile_set_value_types(p, 2, t, u);
	tu_add(p, s, 1, 7, NULL, 0);
	profile_add_sample(p, NULL, 0, v, NULL, 0);
	out = write_folded(p, 1);
	ck_assert_str_eq(out, "a_b;c_d;[unknown] 7\n");
	free(out);
	out = write_folded(p, 0);
	ck_assert_str_eq(out, "[unknown] 1\na_b;c_d;[unknown] 1\n");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_round_trip_text)
{
	static const char text[] =
	    "<main>;Integer#times;block in <main> 10\n"
	    "<main>;Kernel#sleep;[GVL blocked] 20\n"
	    "<main>;Kernel#sleep;[GVL wait] 5\n"
	    "<main>;Object#alloc;[GC marking] 3\n"
	    "<main>;Object#alloc;[GC sweeping] 4\n"
	    "[GC sweeping] 2\n"
	    "a;b;c 9223372036854775807\n";
	struct profile *p = parse_ok(text);
	char *out = write_folded(p, p->default_value);

	ck_assert_str_eq(out, text);
	ck_assert_uint_eq(p->nvalue_types, 1);
	ck_assert_str_eq(profile_str(p, p->value_types[0].type), "weight");
	ck_assert_str_eq(profile_str(p, p->value_types[0].unit),
	    "nanoseconds");
	ck_assert_str_eq(profile_sample_label_str(p, &p->samples[1], "%GVL"),
	    "blocked");
	ck_assert_uint_eq(p->samples[1].nloc, 2);
	ck_assert_str_eq(profile_sample_label_str(p, &p->samples[4], "%GC"),
	    "sweep");
	ck_assert_uint_eq(p->samples[5].nloc, 0);
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_round_trip_model)
{
	/* model -> folded -> model -> folded keeps every weight and state. */
	struct profile *p = tu_sample_profile(), *q;
	char *a = write_folded(p, 1), *b;

	q = parse_ok(a);
	ck_assert_int_eq(profile_total(q, 0), profile_total(p, 1));
	b = write_folded(q, 0);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	profile_free(q);
	profile_free(p);
}
END_TEST

START_TEST(test_merge_and_order)
{
	struct profile *p = parse_ok("b;c 1\na 2\nb;c 3\na;z 4\n\n \t\na 5  \r\n");
	char *out = write_folded(p, 0);

	ck_assert_uint_eq(p->nsamples, 5);
	ck_assert_str_eq(out, "a 7\na;z 4\nb;c 4\n");
	free(out);
	profile_free(p);
	/* Frame text is kept exactly, edge spaces included. */
	p = parse_ok(" a;b  1\n");
	out = write_folded(p, 0);
	ck_assert_str_eq(out, " a;b  1\n");
	ck_assert_str_eq(profile_str(p, profile_location_function(p,
	    profile_sample_locs(p, &p->samples[0])[0])->name), "b ");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_other_tools)
{
	/* flamegraph.pl / perf script style: spaces and odd text in frames. */
	struct profile *p = parse_ok(
	    "perl;main::foo (x.pl:3);[unknown] 12\n"
	    "java;Foo.bar(Ljava/lang/String;)V_[j] 3\n"
	    "swapper;[k] cpu_idle\t100\n"
	    "[GVL blocked];x 1\n"
	    "x;[GC marking];[GVL wait] 2\n");
	const uint64_t *locs;
	char *out;

	ck_assert_uint_eq(p->nsamples, 5);
	ck_assert_int_eq(profile_total(p, 0), 118);
	locs = profile_sample_locs(p, &p->samples[0]);
	ck_assert_str_eq(profile_str(p, profile_location_function(p,
	    locs[1])->name), "main::foo (x.pl:3)");
	ck_assert_uint_eq(p->samples[1].nloc, 3);
	ck_assert_str_eq(profile_str(p, profile_location_function(p,
	    profile_sample_locs(p, &p->samples[2])[0])->name), "[k] cpu_idle");
	/* A pseudo-frame only counts at the end of the stack... */
	ck_assert_uint_eq(p->samples[3].nloc, 2);
	ck_assert_uint_eq(p->samples[3].nlabel, 0);
	ck_assert_uint_eq(p->samples[4].nloc, 1);
	ck_assert_uint_eq(p->samples[4].nlabel, 2);
	/* ...so elsewhere it is a real frame, which must not be written in
	 * a way that reads back as a VM state. */
	out = write_folded(p, 0);
	ck_assert_str_eq(out,
	    "(GVL blocked);x 1\n"
	    "java;Foo.bar(Ljava/lang/String;)V_[j] 3\n"
	    "perl;main::foo (x.pl:3);[unknown] 12\n"
	    "swapper;[k] cpu_idle 100\n"
	    "x;[GVL wait];[GC marking] 2\n");
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_parse_errors)
{
	parse_fails("a;b 1\na;b x\n", "line 2: weight 'x' is not an integer");
	parse_fails("a;b 1.5\n", "line 1: weight '1.5' is not an integer");
	parse_fails("\n\na -3\n", "line 3: negative weight '-3'");
	parse_fails("a;b\n", "line 1: weight 'a;b' is not an integer");
	parse_fails("12\n", "line 1: no stack before the weight");
	parse_fails("a 1\n 12\n", "line 2: no stack before the weight");
	parse_fails("a 99999999999999999999\n",
	    "line 1: weight '99999999999999999999' is too large");
	parse_fails("a 9223372036854775808\n",
	    "line 1: weight '9223372036854775808' is too large");
	parse_fails("a 1\nb 0x10", "line 2: weight '0x10' is not an integer");
}
END_TEST

START_TEST(test_parse_edges)
{
	struct profile *p;
	char *out;

	p = parse_ok("");
	ck_assert_uint_eq(p->nsamples, 0);
	profile_free(p);
	p = parse_ok("\n \n\t\n");
	ck_assert_uint_eq(p->nsamples, 0);
	profile_free(p);
	/* No final newline, empty frames, zero weights. */
	p = parse_ok("a;;b 3\nc 0\nd 1");
	ck_assert_uint_eq(p->nsamples, 3);
	out = write_folded(p, 0);
	ck_assert_str_eq(out, "a;[unknown];b 3\nd 1\n");
	free(out);
	profile_free(p);
	/* The buffer need not be NUL-terminated: only LEN bytes count. */
	{
		char err[64];

		p = folded_parse("a 12345", 3, err, sizeof err);
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(profile_total(p, 0), 1);
		profile_free(p);
	}
}
END_TEST

START_TEST(test_from_pprof)
{
	/* A profile read back from pprof folds the same as the original. */
	struct profile *p = tu_sample_profile(), *q;
	char *buf = NULL, err[256], *a, *b;
	size_t len;
	int rc;

	TU_CAPTURE(buf, len, rc, pprof_write(p, fp, err, sizeof err));
	ck_assert_int_eq(rc, 0);
	q = pprof_parse((uint8_t *)buf, len, err, sizeof err);
	ck_assert_ptr_nonnull(q);
	a = write_folded(p, 1);
	b = write_folded(q, 1);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	free(buf);
	profile_free(p);
	profile_free(q);
}
END_TEST

START_TEST(test_truncations_and_flips)
{
	struct profile *p = tu_sample_profile(), *q;
	char *text = write_folded(p, 1), *buf, err[256];
	size_t len = strlen(text), i;

	buf = xmalloc(len);
	for (i = 0; i <= len; i++) {
		err[0] = '\0';
		q = folded_parse(text, i, err, sizeof err);
		if (q == NULL)
			ck_assert(err[0] != '\0');
		profile_free(q);
	}
	for (i = 0; i < len; i++) {
		memcpy(buf, text, len);
		buf[i] ^= 0x5a;
		q = folded_parse(buf, len, err, sizeof err);
		if (q == NULL)
			ck_assert(strncmp(err, "line ", 5) == 0);
		profile_free(q);
	}
	free(buf);
	free(text);
	profile_free(p);
}
END_TEST

START_TEST(test_write_error)
{
	struct profile *p = tu_sample_profile();
	FILE *fp = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(folded_write(p, fp, 1), -1);
	fclose(fp);
	profile_free(p);
}
END_TEST

/* Parse one stored input: a clean error or a profile, never a crash. */
static void
replay(const char *path, const uint8_t *buf, size_t len)
{
	char err[256] = "";
	struct profile *p = folded_parse((const char *)buf, len, err,
	    sizeof err);

	if (p == NULL)
		ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL,
		    "%s: bad message", path);
	profile_free(p);
}

/* Parse the LEN bytes of TEXT, expecting a refusal with WANT within a
 * few seconds. */
static void
expect_quick_reject(const char *text, size_t len, const char *want)
{
	char err[256] = "";
	double t0 = tu_cpu_seconds(), dt;
	struct profile *p = folded_parse(text, len, err, sizeof err);

	dt = tu_cpu_seconds() - t0;
	ck_assert_msg(p == NULL, "accepted input expected to fail (%s)", want);
	ck_assert_str_eq(err, want);
	ck_assert_msg(dt < 3.0 * TU_CPU_SCALE, "refused after %.1f CPU seconds",
	    dt);
}

START_TEST(test_memory_bombs)
{
	/* One line of 64M empty frames once took 2.1 GB to read; 16M lines
	 * "a 1" took 1.4 GB.  Both are now refused within the budget (512
	 * MiB here, which arrays that double may briefly overshoot). */
	size_t n = 64 << 20, i;
	char *buf = xmalloc(n + 3);

	memset(buf, ';', n);
	memcpy(buf + n, " 1\n", 3);
	tu_limit_memory(1024);
	expect_quick_reject(buf, n + 3, "line 1: profile needs too much "
	    "memory to read");
	for (i = 0; i + 4 <= n; i += 4)
		memcpy(buf + i, "a 1\n", 4);
	expect_quick_reject(buf, n, "line 4194306: profile needs too much "
	    "memory to read");
	free(buf);
}
END_TEST

START_TEST(test_large_file_loads)
{
	/* 100k merged stacks of up to 40 frames over 2,000 functions: a big
	 * real file still loads, in little more memory than its text. */
	size_t cap = 96 << 20, len = 0, i, k, depth;
	char *buf = xmalloc(cap), err[256] = "";
	unsigned seed = 7;
	struct profile *p;

	for (i = 0; i < 100000; i++) {
		seed = seed * 1103515245 + 12345;
		depth = 2 + (seed >> 16) % 39;
		len += (size_t)sprintf(buf + len, "main");
		for (k = 0; k < depth; k++) {
			seed = seed * 1103515245 + 12345;
			len += (size_t)sprintf(buf + len,
			    ";App::Klass%u#method_%u", (seed >> 8) % 50,
			    (seed >> 12) % 2000);
		}
		len += (size_t)sprintf(buf + len, " %zu\n", i % 97 + 1);
		ck_assert_uint_lt(len, cap - 4096);
	}
	tu_limit_memory(256);
	p = folded_parse(buf, len, err, sizeof err);
	ck_assert_msg(p != NULL, "%s", err);
	ck_assert_uint_eq(p->nsamples, 100000);
	profile_free(p);
	free(buf);
}
END_TEST

START_TEST(test_fuzz_regressions)
{
	tu_each_file("fuzz/regressions", replay);
	tu_each_file("fuzz/corpus/folded", replay);
}
END_TEST

/* The test suite. */
static Suite *
folded_suite(void)
{
	Suite *s = suite_create("folded");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_write_known);
	tcase_add_test(tc, test_write_sanitizes);
	tcase_add_test(tc, test_round_trip_text);
	tcase_add_test(tc, test_round_trip_model);
	tcase_add_test(tc, test_merge_and_order);
	tcase_add_test(tc, test_other_tools);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_parse_edges);
	tcase_add_test(tc, test_from_pprof);
	tcase_add_test(tc, test_truncations_and_flips);
	tcase_add_test(tc, test_write_error);
	tcase_add_test(tc, test_memory_bombs);
	tcase_add_test(tc, test_large_file_loads);
	tcase_add_test(tc, test_fuzz_regressions);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(folded_suite());
}
