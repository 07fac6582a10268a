/*
 * check_aggregate.c: the sampler's frame and stack tables, the GVL split
 * and the GC window, without Ruby.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "testutil.h"

START_TEST(test_frames_dedup)
{
	struct agg_frames ft = { 0 };

	ck_assert_uint_eq(agg_frames_intern(&ft, 0x1000, 0, 0), 0);
	ck_assert_uint_eq(agg_frames_intern(&ft, 0x2000, 0, 0), 1);
	ck_assert_uint_eq(agg_frames_intern(&ft, 0x1000, 0, 0), 0);
	/* The same frame at another line is another frame. */
	ck_assert_uint_eq(agg_frames_intern(&ft, 0x1000, 0, 7), 2);
	ck_assert_uint_eq(agg_frames_intern(&ft, 0x1000, 0, 7), 2);
	/* So is the same frame with another own word (a block of it). */
	ck_assert_uint_eq(agg_frames_intern(&ft, 0x1000, 0x3000, 7), 3);
	ck_assert_uint_eq(agg_frames_intern(&ft, 0x1000, 0x3000, 7), 3);
	ck_assert_uint_eq(ft.count, 4);
	ck_assert(ft.keys[2] == 0x1000 && ft.lines[2] == 7 && ft.owns[2] == 0);
	ck_assert(ft.keys[3] == 0x1000 && ft.owns[3] == 0x3000);
	agg_frames_release(&ft);
	ck_assert_uint_eq(ft.count, 0);
}
END_TEST

START_TEST(test_frames_grow)
{
	struct agg_frames ft = { 0 };
	uintptr_t k;

	/* Enough keys to rehash many times; ids stay stable. */
	for (k = 0; k < 100000; k++)
		ck_assert_uint_eq(agg_frames_intern(&ft, (k + 1) * 40, 0, 0), k);
	for (k = 0; k < 100000; k += 997)
		ck_assert_uint_eq(agg_frames_intern(&ft, (k + 1) * 40, 0, 0), k);
	ck_assert_uint_eq(ft.count, 100000);
	ck_assert(ft.nbuckets >= 2 * ft.count);
	agg_frames_release(&ft);
}
END_TEST

START_TEST(test_stacks_key)
{
	struct agg_stacks st = { 0 };
	uint32_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 };
	uint32_t k;

	k = agg_stacks_add(&st, a, 3, 1, 0, 0, 100);
	ck_assert_uint_eq(agg_stacks_add(&st, a, 3, 1, 0, 0, 50), k);
	ck_assert_int_eq(st.entries[k].weight, 150);
	ck_assert_int_eq(st.entries[k].count, 2);
	/* A sample that stands for several (merged in a buffer). */
	ck_assert_uint_eq(agg_stacks_add_n(&st, a, 3, 1, 0, 0, 30, 3), k);
	ck_assert_int_eq(st.entries[k].weight, 180);
	ck_assert_int_eq(st.entries[k].count, 5);
	/* Every part of the key separates stacks. */
	ck_assert_uint_ne(agg_stacks_add(&st, b, 3, 1, 0, 0, 1), k);
	ck_assert_uint_ne(agg_stacks_add(&st, a, 2, 1, 0, 0, 1), k);
	ck_assert_uint_ne(agg_stacks_add(&st, a, 3, 2, 0, 0, 1), k);
	ck_assert_uint_ne(agg_stacks_add(&st, a, 3, 1, 5, 0, 1), k);
	ck_assert_uint_ne(agg_stacks_add(&st, a, 3, 1, 0, 3, 1), k);
	ck_assert_uint_eq(st.count, 6);
	/* An empty stack is a key too. */
	k = agg_stacks_add(&st, NULL, 0, 1, 0, 0, 9);
	ck_assert_uint_eq(agg_stacks_add(&st, NULL, 0, 1, 0, 0, 1), k);
	ck_assert_int_eq(st.entries[k].weight, 10);
	agg_stacks_release(&st);
}
END_TEST

START_TEST(test_stacks_total_and_clear)
{
	struct agg_stacks st = { 0 };
	uint32_t ids[64];
	int64_t total = 0, sum = 0;
	size_t i;
	int n;

	/* 200k samples over a few thousand stacks: weights add up. */
	srand(42);
	for (i = 0; i < 200000; i++) {
		int depth = 1 + rand() % 64;
		int64_t w = 1 + rand() % 5000;

		for (n = 0; n < depth; n++)
			ids[n] = (uint32_t)(rand() % 3);
		agg_stacks_add(&st, ids, (uint32_t)depth, 1 + rand() % 2, 0, rand() % 5, w);
		total += w;
	}
	for (i = 0; i < st.count; i++)
		sum += st.entries[i].weight;
	ck_assert_int_eq(sum, total);
	n = (int)st.count;
	agg_stacks_clear(&st);
	ck_assert_uint_eq(st.count, (size_t)n);
	for (i = 0; i < st.count; i++)
		ck_assert_int_eq(st.entries[i].weight, 0);
	agg_stacks_release(&st);
}
END_TEST

START_TEST(test_split_gvl)
{
	struct agg_gvl_split s;

	/* ran 10, blocked 30, waited 20 */
	agg_split_gvl(100, 110, 140, 160, &s);
	ck_assert_int_eq(s.running, 10);
	ck_assert_int_eq(s.blocked, 30);
	ck_assert_int_eq(s.wait, 20);
	/* no READY seen: all blocked */
	agg_split_gvl(100, 110, 0, 160, &s);
	ck_assert_int_eq(s.running, 10);
	ck_assert_int_eq(s.blocked, 50);
	ck_assert_int_eq(s.wait, 0);
	/* a stale READY from an earlier release counts as none */
	agg_split_gvl(100, 110, 105, 160, &s);
	ck_assert_int_eq(s.blocked, 50);
	/* released before the baseline was reset (sampling resumed) */
	agg_split_gvl(100, 90, 130, 160, &s);
	ck_assert_int_eq(s.running, 0);
	ck_assert_int_eq(s.blocked, 30);
	ck_assert_int_eq(s.wait, 30);
	/* out-of-order clocks never give negative parts */
	agg_split_gvl(100, 200, 300, 150, &s);
	ck_assert_int_ge(s.running, 0);
	ck_assert_int_ge(s.blocked, 0);
	ck_assert_int_ge(s.wait, 0);
	ck_assert_int_eq(s.running + s.blocked + s.wait, 50);
}
END_TEST

/* Run EV on W at NOW for a thread with baseline *PREV; the weight, and
 * the state it is billed in through *STATE (-1 when nothing is billed). */
static int64_t
gc_step(struct agg_gc_window *w, enum agg_gc_event ev, int64_t now, int64_t *prev,
    int *state)
{
	int64_t weight;

	*state = -1;
	if (ev == AGG_GC_ENTER) {
		agg_gc_enter(w, 1, now);
		return 0;
	}
	weight = agg_gc_event(w, ev, now, prev, state);
	if (weight == 0)
		*state = -1;
	return weight;
}

START_TEST(test_gc_mark_and_sweep)
{
	struct agg_gc_window w;
	int64_t prev = 100;
	int state;

	memset(&w, 0, sizeof w);
	/* ran 100..150, GC from 150: marks 30, sweeps 20 */
	ck_assert_int_eq(gc_step(&w, AGG_GC_ENTER, 150, &prev, &state), 0);
	ck_assert_int_eq(gc_step(&w, AGG_GC_START, 0, &prev, &state), 0);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_MARK, 180, &prev, &state), 30);
	ck_assert_int_eq(state, AGG_STATE_GC_MARK);
	ck_assert_int_eq(prev, 130);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_SWEEP, 200, &prev, &state), 20);
	ck_assert_int_eq(state, AGG_STATE_GC_SWEEP);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 200, &prev, &state), 0);
	ck_assert_int_eq(state, -1);
	/* the GC's 50 are billed: the next sample bills only the 50 run */
	ck_assert_int_eq(prev, 150);
	ck_assert_int_eq(w.open, 0);
	ck_assert_int_eq(w.phase, 0);
}
END_TEST

START_TEST(test_gc_lazy_sweep)
{
	struct agg_gc_window w;
	int64_t prev = 0;
	int state;

	memset(&w, 0, sizeof w);
	/* one entry marks and leaves sweeping for later */
	gc_step(&w, AGG_GC_ENTER, 10, &prev, &state);
	gc_step(&w, AGG_GC_START, 10, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_MARK, 40, &prev, &state), 30);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 45, &prev, &state), 5);
	ck_assert_int_eq(state, AGG_STATE_GC_SWEEP);
	ck_assert_int_eq(w.phase, AGG_STATE_GC_SWEEP);
	/* a later entry sweeps on: billed as sweeping from the start */
	gc_step(&w, AGG_GC_ENTER, 100, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_SWEEP, 112, &prev, &state), 12);
	ck_assert_int_eq(state, AGG_STATE_GC_SWEEP);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 112, &prev, &state), 0);
	ck_assert_int_eq(prev, 47);
	/* and the next GC marks again */
	gc_step(&w, AGG_GC_ENTER, 200, &prev, &state);
	gc_step(&w, AGG_GC_START, 200, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 201, &prev, &state), 1);
	ck_assert_int_eq(state, AGG_STATE_GC_MARK);
}
END_TEST

START_TEST(test_gc_boundaries)
{
	struct agg_gc_window w;
	int64_t prev = 100;
	int state;

	memset(&w, 0, sizeof w);
	/* zero-length segments bill nothing and leave the baseline */
	gc_step(&w, AGG_GC_ENTER, 120, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_MARK, 120, &prev, &state), 0);
	ck_assert_int_eq(state, -1);
	ck_assert_int_eq(prev, 100);
	/* the clock went back: nothing, and the next segment starts there */
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_SWEEP, 110, &prev, &state), 0);
	ck_assert_int_eq(w.seg_start, 110);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 115, &prev, &state), 5);
	ck_assert_int_eq(prev, 105);

	/* a span that starts before the baseline bills only what follows it */
	memset(&w, 0, sizeof w);
	prev = 100;
	gc_step(&w, AGG_GC_ENTER, 90, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_MARK, 130, &prev, &state), 30);
	ck_assert_int_eq(prev, 130);
	/* ... and one wholly before it bills nothing */
	memset(&w, 0, sizeof w);
	prev = 100;
	gc_step(&w, AGG_GC_ENTER, 80, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 95, &prev, &state), 0);
	ck_assert_int_eq(prev, 100);
}
END_TEST

START_TEST(test_gc_empty_entry)
{
	struct agg_gc_window w;
	int64_t prev = 100;
	int state;

	memset(&w, 0, sizeof w);
	/* an entry with no GC under way and none starting (the allocator
	 * looking for a page) is no GC: the next sample bills its time */
	gc_step(&w, AGG_GC_ENTER, 150, &prev, &state);
	ck_assert_int_eq(agg_gc_bills(&w, AGG_GC_EXIT), 0);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 160, &prev, &state), 0);
	ck_assert_int_eq(state, -1);
	ck_assert_int_eq(prev, 100);
	ck_assert_int_eq(w.open, 0);
	/* one in which a marking starts is marking from the entry */
	gc_step(&w, AGG_GC_ENTER, 200, &prev, &state);
	ck_assert_int_eq(agg_gc_bills(&w, AGG_GC_EXIT), 0);
	gc_step(&w, AGG_GC_START, 0, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 230, &prev, &state), 30);
	ck_assert_int_eq(state, AGG_STATE_GC_MARK);
	ck_assert_int_eq(prev, 130);
	/* an incremental marking's later entry marks on */
	gc_step(&w, AGG_GC_ENTER, 300, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_MARK, 310, &prev, &state), 10);
	ck_assert_int_eq(state, AGG_STATE_GC_MARK);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 312, &prev, &state), 2);
	ck_assert_int_eq(state, AGG_STATE_GC_SWEEP);
	/* the sweep ended: a later look for a page bills nothing again */
	gc_step(&w, AGG_GC_ENTER, 400, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_END_SWEEP, 405, &prev, &state), 5);
	ck_assert_int_eq(state, AGG_STATE_GC_SWEEP);
	gc_step(&w, AGG_GC_EXIT, 405, &prev, &state);
	gc_step(&w, AGG_GC_ENTER, 500, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 501, &prev, &state), 0);
	ck_assert_int_eq(prev, 147);
}
END_TEST

START_TEST(test_gc_unbilled_and_overlapping)
{
	struct agg_gc_window w;
	int64_t prev = 0;
	int state = 7;

	memset(&w, 0, sizeof w);
	/* a window on a thread not billed follows the phase, bills nothing */
	agg_gc_enter(&w, 0, 0);
	ck_assert_int_eq(agg_gc_bills(&w, AGG_GC_END_MARK), 0);
	agg_gc_event(&w, AGG_GC_START, 0, NULL, &state);
	ck_assert_int_eq(agg_gc_event(&w, AGG_GC_END_MARK, 50, NULL, &state), 0);
	ck_assert_int_eq(state, 7);
	ck_assert_int_eq(w.phase, AGG_STATE_GC_SWEEP);
	agg_gc_event(&w, AGG_GC_EXIT, 60, NULL, &state);
	/* events outside any window bill nothing */
	ck_assert_int_eq(agg_gc_bills(&w, AGG_GC_END_SWEEP), 0);
	agg_gc_event(&w, AGG_GC_END_SWEEP, 70, NULL, &state);
	ck_assert_int_eq(w.phase, 0);
	/* START never bills, even in a billed window */
	agg_gc_enter(&w, 1, 100);
	ck_assert_int_eq(agg_gc_bills(&w, AGG_GC_START), 0);
	/* an entry while a window is open starts it afresh */
	gc_step(&w, AGG_GC_ENTER, 140, &prev, &state);
	gc_step(&w, AGG_GC_START, 140, &prev, &state);
	ck_assert_int_eq(gc_step(&w, AGG_GC_EXIT, 150, &prev, &state), 10);
	ck_assert_int_eq(prev, 10);
	/* after EXIT nothing is billed until the next ENTER */
	ck_assert_int_eq(agg_gc_bills(&w, AGG_GC_EXIT), 0);
}
END_TEST

/* The tests of the aggregation tables and the billing arithmetic. */
static Suite *
aggregate_suite(void)
{
	Suite *s = suite_create("aggregate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_frames_dedup);
	tcase_add_test(tc, test_frames_grow);
	tcase_add_test(tc, test_stacks_key);
	tcase_add_test(tc, test_stacks_total_and_clear);
	tcase_add_test(tc, test_split_gvl);
	tcase_add_test(tc, test_gc_mark_and_sweep);
	tcase_add_test(tc, test_gc_lazy_sweep);
	tcase_add_test(tc, test_gc_boundaries);
	tcase_add_test(tc, test_gc_empty_entry);
	tcase_add_test(tc, test_gc_unbilled_and_overlapping);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(aggregate_suite());
}
