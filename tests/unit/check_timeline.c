/*
 * check_timeline.c: unit tests for timeline.c on small hand-built
 * profiles with known answers: spans from timed samples (order, clipping
 * where clocks overlap, VM states, threads of merged children), user
 * marks sorted with the longer of two that start together first, the
 * --from/--to cut, the per-thread totals against the samples' weights,
 * and the summary's GVL waits with the thread that ran meanwhile.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "timeline.h"

#define MS 1000000LL

static const char *const st_work[] = { "<main>", "Object#work", NULL };
static const char *const st_baz[] = { "<main>", "Object#work", "Foo::Bar#baz", NULL };
static const char *const st_sleep[] = { "<main>", "Kernel#sleep", NULL };

/* A profile of counts and wall nanoseconds, as record -m wall writes. */
static struct profile *
wall_profile(void)
{
	static const char *const types[] = { "samples", "wall" };
	static const char *const units[] = { "count", "nanoseconds" };
	struct profile *p = profile_new();

	profile_set_value_types(p, 2, types, units);
	return p;
}

/* Add a sample of STACK to P: thread THREAD (named NAME when not NULL)
 * of process PID (0: the profiled one), ending at AT ns (< 0: no time),
 * WEIGHT ns long, in VM state GVL and GC (label values or NULL). */
static void
timed(struct profile *p, const char *const *stack, int64_t pid, int64_t thread,
    const char *name, int64_t at, int64_t weight, const char *gvl, const char *gc)
{
	struct profile_label l[6];
	size_t n = 0;

	l[n++] = tu_label(p, "thread", NULL, thread);
	if (name != NULL)
		l[n++] = tu_label(p, "thread_name", name, 0);
	if (pid != 0)
		l[n++] = tu_label(p, "pid", NULL, pid);
	if (at >= 0)
		l[n++] = tu_label(p, "timestamp", NULL, at);
	if (gvl != NULL)
		l[n++] = tu_label(p, PROFILE_LABEL_GVL, gvl, 0);
	if (gc != NULL)
		l[n++] = tu_label(p, PROFILE_LABEL_GC, gc, 0);
	tu_add(p, stack, 1, weight, l, n);
}

/* The profile of test_spans, its samples out of time order. */
static struct profile *
spans_profile(void)
{
	struct profile *p = wall_profile();

	/* 0: blocked [20, 30] ms after a gap of 5 ms */
	timed(p, st_sleep, 0, 1, "main", 30 * MS, 10 * MS, "blocked", NULL);
	/* 1: running [0, 10] */
	timed(p, st_work, 0, 1, "main", 10 * MS, 10 * MS, NULL, NULL);
	/* 2: a worker running [0, 12] */
	timed(p, st_baz, 0, 2, "worker", 12 * MS, 12 * MS, NULL, NULL);
	/* 3: waiting for the GVL [10, 15] */
	timed(p, st_work, 0, 1, "main", 15 * MS, 5 * MS, "wait", NULL);
	/* 4: GC marking billed [28, 32]: drawn from 30, where the block
	 * ended, its whole weight in the totals */
	timed(p, st_baz, 0, 1, "main", 32 * MS, 4 * MS, NULL, "mark");
	/* 5: ends with 4, so nothing of it is left to draw; counted */
	timed(p, st_work, 0, 1, "main", 32 * MS, 1 * MS, NULL, NULL);
	/* 6: no time: not on the timeline at all */
	timed(p, st_work, 0, 1, "main", -1, 7 * MS, NULL, NULL);
	/* 7: no weight: no span */
	timed(p, st_work, 0, 1, "main", 40 * MS, 0, NULL, NULL);
	/* 8: GC sweeping while waiting: the GC's state wins */
	timed(p, st_baz, 0, 2, "worker", 20 * MS, 8 * MS, "wait", "sweep");
	/* 9: a merged child's thread 1, a thread of its own */
	timed(p, st_work, 5, 1, NULL, 5 * MS, 5 * MS, NULL, NULL);
	return p;
}

static void
span_is(const struct timeline_thread *th, size_t i, int64_t start, int64_t end,
    int state, size_t sample)
{
	ck_assert_uint_lt(i, th->nspans);
	ck_assert_int_eq(th->spans[i].start, start);
	ck_assert_int_eq(th->spans[i].end, end);
	ck_assert_int_eq(th->spans[i].state, state);
	ck_assert_uint_eq(th->spans[i].sample, sample);
}

START_TEST(test_spans)
{
	struct profile *p = spans_profile();
	const struct timeline_thread *th;
	struct timeline tl;

	ck_assert(timeline_has_times(p));
	ck_assert_int_eq(timeline_sample_time(p, &p->samples[0]), 30 * MS);
	ck_assert_int_eq(timeline_sample_time(p, &p->samples[6]), -1);
	ck_assert_int_eq(timeline_build(p, 1, &tl), 0);
	ck_assert_uint_eq(tl.value_index, 1);
	ck_assert_uint_eq(tl.nthreads, 3);
	ck_assert_int_eq(tl.end, 32 * MS);

	th = &tl.threads[0];
	ck_assert_int_eq(th->pid, 0);
	ck_assert_int_eq(th->id, 1);
	ck_assert_str_eq(th->name, "main");
	ck_assert_uint_eq(th->nspans, 4);
	span_is(th, 0, 0, 10 * MS, TIMELINE_RUNNING, 1);
	span_is(th, 1, 10 * MS, 15 * MS, TIMELINE_GVL_WAIT, 3);
	span_is(th, 2, 20 * MS, 30 * MS, TIMELINE_GVL_BLOCKED, 0);
	span_is(th, 3, 30 * MS, 32 * MS, TIMELINE_GC_MARK, 4);
	ck_assert_int_eq(th->first, 0);
	ck_assert_int_eq(th->last, 32 * MS);

	th = &tl.threads[1];
	ck_assert_int_eq(th->id, 2);
	ck_assert_str_eq(th->name, "worker");
	ck_assert_uint_eq(th->nspans, 2);
	span_is(th, 0, 0, 12 * MS, TIMELINE_RUNNING, 2);
	span_is(th, 1, 12 * MS, 20 * MS, TIMELINE_GC_SWEEP, 8);

	th = &tl.threads[2];
	ck_assert_int_eq(th->pid, 5);
	ck_assert_int_eq(th->id, 1);
	ck_assert_ptr_null(th->name);
	ck_assert_uint_eq(th->nspans, 1);
	span_is(th, 0, 0, 5 * MS, TIMELINE_RUNNING, 9);
	timeline_release(&tl);
	ck_assert_uint_eq(tl.nthreads, 0);

	/* The counts: a sample is a span of 1 "ns" before its time. */
	ck_assert_int_eq(timeline_build(p, 0, &tl), 0);
	ck_assert_uint_eq(tl.threads[0].nspans, 5);
	span_is(&tl.threads[0], 0, 10 * MS - 1, 10 * MS, TIMELINE_RUNNING, 1);
	timeline_release(&tl);
	profile_free(p);

	/* No times at all: no timeline. */
	p = tu_sample_profile();
	ck_assert(!timeline_has_times(p));
	ck_assert_int_eq(timeline_build(p, 1, &tl), -1);
	ck_assert_uint_eq(tl.nthreads, 0);
	timeline_release(&tl);
	profile_free(p);
}
END_TEST

START_TEST(test_totals_are_the_weights)
{
	struct profile *p = spans_profile();
	int64_t want[TIMELINE_NSTATES] = { 11 * MS, 10 * MS, 5 * MS, 4 * MS, 8 * MS };
	int64_t got[TIMELINE_NSTATES] = { 0 }, sum = 0;
	struct timeline tl;
	size_t i;
	int k;

	ck_assert_int_eq(timeline_build(p, 1, &tl), 0);
	for (i = 0; i < tl.nthreads; i++) {
		for (k = 0; k < TIMELINE_NSTATES; k++) {
			got[k] += tl.threads[i].total[k];
			sum += tl.threads[i].total[k];
		}
	}
	/* running: 10 + 1 (main) + 12 (worker) + 5 (child) */
	want[TIMELINE_RUNNING] = 28 * MS;
	for (k = 0; k < TIMELINE_NSTATES; k++)
		ck_assert_int_eq(got[k], want[k]);
	/* Every timed sample's weight, the untimed one's (7 ms) not. */
	ck_assert_int_eq(sum, profile_total(p, 1) - 7 * MS);
	/* main alone: its clipped spans still count in full */
	ck_assert_int_eq(tl.threads[0].total[TIMELINE_RUNNING], 11 * MS);
	ck_assert_int_eq(tl.threads[0].total[TIMELINE_GC_MARK], 4 * MS);
	timeline_release(&tl);
	profile_free(p);
}
END_TEST

START_TEST(test_marks)
{
	struct profile *p = wall_profile();
	struct timeline tl;

	timed(p, st_work, 0, 1, NULL, 1 * MS, 1 * MS, NULL, NULL);
	profile_add_comment(p, "mark: 0 1 100 200 inner");
	profile_add_comment(p, "mark: 0 1 100 500 outer name");
	profile_add_comment(p, "mark: 3 2 50 60 early");
	profile_add_comment(p, "mark: 0 1 70 60 backwards");
	profile_add_comment(p, "mark: 0 1 x");
	profile_add_comment(p, "markx: 0 1 1 2 not a mark");
	profile_add_comment(p, "mode: wall");
	profile_add_comment(p, "mark: 0 1 100 300 middle");
	profile_add_comment(p, "mark: 0 1 100 300 twin");
	ck_assert_int_eq(timeline_build(p, 1, &tl), 0);
	ck_assert_uint_eq(tl.nmarks, 5);
	ck_assert_str_eq(tl.marks[0].name, "early");
	ck_assert_int_eq(tl.marks[0].pid, 3);
	ck_assert_int_eq(tl.marks[0].thread, 2);
	ck_assert_int_eq(tl.marks[0].start, 50);
	ck_assert_int_eq(tl.marks[0].end, 60);
	ck_assert_str_eq(tl.marks[1].name, "outer name");
	ck_assert_int_eq(tl.marks[1].end, 500);
	/* middle and twin are alike: either order */
	ck_assert(strcmp(tl.marks[2].name, "middle") == 0 ||
	    strcmp(tl.marks[2].name, "twin") == 0);
	ck_assert_int_eq(tl.marks[2].end, 300);
	ck_assert_int_eq(tl.marks[3].end, 300);
	ck_assert_str_eq(tl.marks[4].name, "inner");
	ck_assert_int_eq(tl.marks[4].start, 100);
	ck_assert_int_eq(tl.marks[4].end, 200);
	/* Marks do not stretch the threads' end. */
	ck_assert_int_eq(tl.end, 1 * MS);
	timeline_release(&tl);
	profile_free(p);
}
END_TEST

/* The times of P's samples, comma-separated, in ms. */
static char *
times(const struct profile *p)
{
	char *out = xstrdup("");
	size_t i;

	for (i = 0; i < p->nsamples; i++) {
		char *next = xasprintf("%s%s%lld", out, i ? "," : "",
		    (long long)(timeline_sample_time(p, &p->samples[i]) / MS));

		free(out);
		out = next;
	}
	return out;
}

START_TEST(test_cut)
{
	struct profile *p;
	char *t;
	int64_t at;

	for (int round = 0; round < 3; round++) {
		p = wall_profile();
		for (at = 5; at <= 20; at += 5)
			timed(p, st_work, 0, 1, NULL, at * MS, 5 * MS, NULL, NULL);
		timed(p, st_work, 0, 1, NULL, -1, 5 * MS, NULL, NULL);
		timed(p, st_work, 0, 2, NULL, 11 * MS, 5 * MS, NULL, NULL);
		if (round == 0) {
			/* both ends kept */
			ck_assert_uint_eq(timeline_cut(p, 10 * MS, 15 * MS), 3);
			t = times(p);
			ck_assert_str_eq(t, "10,15,11");
		} else if (round == 1) {
			/* no end */
			ck_assert_uint_eq(timeline_cut(p, 12 * MS, -1), 2);
			t = times(p);
			ck_assert_str_eq(t, "15,20");
		} else {
			/* just after the last: nothing */
			ck_assert_uint_eq(timeline_cut(p, 20 * MS + 1, -1), 0);
			t = times(p);
			ck_assert_str_eq(t, "");
		}
		ck_assert_int_eq(profile_total(p, 1), (int64_t)p->nsamples * 5 * MS);
		free(t);
		profile_free(p);
	}
}
END_TEST

/* The summary of P (value 1, in ms) with at most TOP waits. */
static char *
summary(const struct profile *p, size_t top)
{
	struct numfmt_unit u = { 1, "ms" };
	struct timeline tl;
	char *buf = NULL;
	size_t len;
	int rc;

	ck_assert_int_eq(timeline_build(p, 1, &tl), 0);
	TU_CAPTURE(buf, len, rc, (timeline_write_summary(p, &tl, fp, &u, top), 0));
	ck_assert_int_eq(rc, 0);
	timeline_release(&tl);
	return buf;
}

START_TEST(test_summary)
{
	struct profile *p = spans_profile();
	char *out = summary(p, 5);

	ck_assert_ptr_nonnull(strstr(out, "\nTimeline (per thread, ms):\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n  1 (main)                         11.00    "
	    "      5.00         10.00          4.00         32.00\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n  2 (worker)                       12.00    "
	    "      0.00          0.00          8.00         20.00\n"));
	ck_assert_ptr_nonnull(strstr(out, "\n  5/1                               5.00    "
	    "      0.00          0.00          0.00          5.00\n"));
	/* main's one wait, [10, 15] ms: the worker held the GVL through
	 * it, running [10, 12], sweeping [12, 20] */
	ck_assert_ptr_nonnull(strstr(out, "\n         10.00          5.00  1 (main)"
	    "                  2 (worker), 5.00\n"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_gvl_wait_holder)
{
	struct profile *p = wall_profile();
	char *out;

	/* 1 waits [10, 20]; 2 runs [5, 18]; 3 runs [18, 30], then waits
	 * [30, 33]; 4 of another process runs [0, 40], never the holder. */
	timed(p, st_work, 0, 1, NULL, 20 * MS, 10 * MS, "wait", NULL);
	timed(p, st_work, 0, 2, NULL, 18 * MS, 13 * MS, NULL, NULL);
	timed(p, st_work, 0, 3, NULL, 20 * MS, 2 * MS, NULL, NULL);
	timed(p, st_work, 0, 3, NULL, 30 * MS, 10 * MS, NULL, NULL);
	timed(p, st_work, 0, 3, NULL, 33 * MS, 3 * MS, "wait", NULL);
	timed(p, st_work, 7, 4, NULL, 40 * MS, 40 * MS, NULL, NULL);
	/* 2 also waits, [18, 19]: 3 ran meanwhile */
	timed(p, st_work, 0, 2, NULL, 19 * MS, 1 * MS, "wait", NULL);

	out = summary(p, 5);
	ck_assert_ptr_nonnull(strstr(out, "\nLongest GVL waits (at: ms from the start):\n"
	    "            At        Waited  Thread                    Ran meanwhile (most)\n"
	    "         10.00         10.00  1                         2, 8.00\n"
	    "         30.00          3.00  3                         -\n"
	    "         18.00          1.00  2                         3, 1.00\n"));
	free(out);
	/* TOP: the longest only */
	out = summary(p, 1);
	ck_assert_ptr_nonnull(strstr(out, "  1                         2, 8.00\n"));
	ck_assert_ptr_null(strstr(out, "30.00 "));
	free(out);
	profile_free(p);

	/* No waits: no such table. */
	p = wall_profile();
	timed(p, st_work, 0, 1, NULL, 20 * MS, 10 * MS, NULL, NULL);
	out = summary(p, 5);
	ck_assert_ptr_null(strstr(out, "Longest GVL waits"));
	free(out);
	profile_free(p);
}
END_TEST

static Suite *
timeline_suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_spans);
	tcase_add_test(tc, test_totals_are_the_weights);
	tcase_add_test(tc, test_marks);
	tcase_add_test(tc, test_cut);
	tcase_add_test(tc, test_summary);
	tcase_add_test(tc, test_gvl_wait_holder);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(timeline_suite());
}
