/*
 * check_alloc.c: the allocation sampler's arithmetic (the geometric
 * distance, the scaling) and its table of live sampled objects, without
 * Ruby.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "testutil.h"

/* The uniform draw is in (0, 1] and spread over it. */
START_TEST(test_rng_unit)
{
	struct alloc_rng rng;
	int i, low = 0;
	double sum = 0;

	alloc_rng_seed(&rng, 0);
	ck_assert(rng.s != 0);
	for (i = 0; i < 100000; i++) {
		double u = alloc_rng_unit(&rng);

		ck_assert(u > 0 && u <= 1);
		sum += u;
		low += u < 0.1;
	}
	ck_assert(fabs(sum / 100000 - 0.5) < 0.01);
	ck_assert(low > 9000 && low < 11000);
}
END_TEST

/* The distance has mean RATE and the geometric's tail: P(D > k) =
 * (1 - 1/RATE)^k, and never less than 1. */
START_TEST(test_distance_geometric)
{
	static const double rates[] = { 2, 16, 512, 1024, 1000.5 };
	struct alloc_rng rng;
	size_t r;
	int i, n = 200000;

	alloc_rng_seed(&rng, 42);
	for (r = 0; r < sizeof rates / sizeof rates[0]; r++) {
		double rate = rates[r], sum = 0, k = rate, tail = 0;

		for (i = 0; i < n; i++) {
			int64_t d = alloc_next_distance(&rng, rate);

			ck_assert(d >= 1);
			sum += (double)d;
			tail += d > k;
		}
		/* the mean within 1% (its sd is about rate/sqrt(n) = 0.2%) */
		ck_assert_msg(fabs(sum / n / rate - 1) < 0.01, "rate %g: mean %g", rate,
		    sum / n);
		/* P(D > rate) = (1 - 1/rate)^rate, about 1/e */
		ck_assert_msg(fabs(tail / n - pow(1 - 1 / rate, k)) < 0.01,
		    "rate %g: tail %g", rate, tail / n);
	}
	/* rate 1 (or less): every allocation */
	for (i = 0; i < 100; i++)
		ck_assert_int_eq(alloc_next_distance(&rng, 1), 1);
	ck_assert_int_eq(alloc_next_distance(&rng, 0.5), 1);
}
END_TEST

/* Sampling a stream by the distances and scaling each sample estimates
 * the true counts and bytes without bias, for any size mix, and a
 * periodic pattern does not alias. */
START_TEST(test_scaled_totals_unbiased)
{
	struct alloc_rng rng;
	int64_t next, n = 2000000, i, est_n = 0, est_b = 0, true_b = 0;
	int64_t est_big = 0, true_big = 0;
	double rate = 512;

	alloc_rng_seed(&rng, 7);
	next = alloc_next_distance(&rng, rate);
	for (i = 0; i < n; i++) {
		/* every 16th object is big, at a phase a sampler taking
		 * every 512th would always hit (sixteen times too many) */
		int64_t size = i % 16 == 0 ? 400 : 40;

		true_b += size;
		true_big += size == 400;
		if (--next > 0)
			continue;
		next = alloc_next_distance(&rng, rate);
		struct alloc_scaled s = alloc_scale(rate, size);

		est_n += s.objects;
		est_b += s.bytes;
		est_big += size == 400 ? s.objects : 0;
	}
	ck_assert_msg(fabs((double)est_n / n - 1) < 0.03, "objects %lld", (long long)est_n);
	ck_assert_msg(fabs((double)est_b / true_b - 1) < 0.05, "bytes %lld of %lld",
	    (long long)est_b, (long long)true_b);
	ck_assert_msg(fabs((double)est_big / true_big - 1) < 0.25, "big %lld of %lld",
	    (long long)est_big, (long long)true_big);
	/* one sample stands for RATE objects and RATE times its bytes */
	ck_assert_int_eq(alloc_scale(512, 40).objects, 512);
	ck_assert_int_eq(alloc_scale(512, 40).bytes, 512 * 40);
	ck_assert_int_eq(alloc_scale(1, 40).bytes, 40);
	ck_assert_int_eq(alloc_scale(0, 40).objects, 1);
}
END_TEST

/* Insert, find, remove with backward shift: everything left stays
 * findable, whatever collides. */
START_TEST(test_live_table)
{
	struct alloc_live t;
	struct alloc_live_entry e;
	uintptr_t k;
	int i;

	alloc_live_init(&t, 10);
	ck_assert_uint_eq(t.nbuckets, 16);
	ck_assert_ptr_null(alloc_live_find(&t, 0x1000));
	ck_assert_ptr_null(alloc_live_insert(&t, 0, 1, 0, 8));	/* 0 is no key */
	for (i = 1; i <= 14; i++)
		ck_assert_ptr_nonnull(alloc_live_insert(&t, (uintptr_t)i * 40, i, 0, i * 10));
	/* 7/8 of 16 is 14: no room for a 15th without growing */
	ck_assert(!alloc_live_room(&t, 1));
	ck_assert_ptr_null(alloc_live_insert(&t, 15 * 40, 15, 0, 150));
	ck_assert(alloc_live_crowded(&t));
	for (i = 1; i <= 14; i += 2) {
		ck_assert_int_eq(alloc_live_remove(&t, (uintptr_t)i * 40, &e), 1);
		ck_assert_uint_eq(e.site, i);
		ck_assert_int_eq(e.size, i * 10);
	}
	ck_assert_int_eq(alloc_live_remove(&t, 40, NULL), 0);
	ck_assert_uint_eq(t.count, 7);
	for (i = 1; i <= 14; i++) {
		struct alloc_live_entry *f = alloc_live_find(&t, (uintptr_t)i * 40);

		if (i % 2)
			ck_assert_ptr_null(f);
		else
			ck_assert(f != NULL && f->site == (uint32_t)i);
	}
	alloc_live_grow(&t);
	ck_assert_uint_eq(t.nbuckets, 32);
	for (i = 2; i <= 14; i += 2)
		ck_assert_ptr_nonnull(alloc_live_find(&t, (uintptr_t)i * 40));
	alloc_live_release(&t);

	/* churn: a random mix of inserts and removes against a plain array */
	{
		enum { N = 4096 };
		static uintptr_t keys[N];
		static int in[N];
		struct alloc_rng rng;
		int step;

		alloc_rng_seed(&rng, 3);
		alloc_live_init(&t, 64);
		for (i = 0; i < N; i++)
			keys[i] = (uintptr_t)(0x10000 + i * 40);
		for (step = 0; step < 200000; step++) {
			int j = (int)(alloc_rng_next(&rng) % N);

			if (in[j]) {
				ck_assert_int_eq(alloc_live_remove(&t, keys[j], NULL), 1);
				in[j] = 0;
			} else {
				if (!alloc_live_room(&t, 1))
					alloc_live_grow(&t);
				ck_assert_ptr_nonnull(alloc_live_insert(&t, keys[j], j, 0, 0));
				in[j] = 1;
			}
		}
		for (i = 0; i < N; i++) {
			struct alloc_live_entry *f = alloc_live_find(&t, keys[i]);

			ck_assert_int_eq(f != NULL, in[i]);
			if (f != NULL)
				ck_assert_uint_eq(f->site, i);
		}
		alloc_live_release(&t);
	}
	(void)k;
}
END_TEST

/* A compaction's moves: every entry found under its new key. */
static uintptr_t
move_odd(uintptr_t k, void *arg)
{
	return (k / 40) % 2 ? k + *(uintptr_t *)arg : k;
}

START_TEST(test_live_rekey)
{
	struct alloc_live t;
	uintptr_t shift = 1000000;
	int i;

	alloc_live_init(&t, 256);
	for (i = 1; i <= 100; i++)
		alloc_live_insert(&t, (uintptr_t)i * 40, i, 0, 0);
	ck_assert_uint_eq(alloc_live_rekey(&t, move_odd, &shift), 50);
	ck_assert_uint_eq(t.count, 100);
	for (i = 1; i <= 100; i++) {
		uintptr_t k = (uintptr_t)i * 40 + (i % 2 ? shift : 0);
		struct alloc_live_entry *f = alloc_live_find(&t, k);

		ck_assert(f != NULL && f->site == (uint32_t)i);
		if (i % 2)
			ck_assert_ptr_null(alloc_live_find(&t, (uintptr_t)i * 40));
	}
	shift = 0;
	ck_assert_uint_eq(alloc_live_rekey(&t, move_odd, &shift), 0);
	alloc_live_release(&t);
}
END_TEST

/* The tests of the allocation sampler's arithmetic and table. */
static Suite *
alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("core");

	/* A million draws: some seconds under ASan on a loaded machine, past
	 * Check's default of 4 (a CI run here). */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_rng_unit);
	tcase_add_test(tc, test_distance_geometric);
	tcase_add_test(tc, test_scaled_totals_unbiased);
	tcase_add_test(tc, test_live_table);
	tcase_add_test(tc, test_live_rekey);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(alloc_suite());
}
