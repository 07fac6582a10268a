/*
 * bench.c: nanoseconds per read of the calling thread's CPU time, by
 * cpuclock_read (whatever kind the machine allows), by cpuclock forced
 * onto the system call, and by clock_gettime directly, plus
 * CLOCK_MONOTONIC for scale.  Not built by make; by hand:
 *
 *   cc -O2 -D_GNU_SOURCE -Isrc bench/cpuclock/bench.c src/cpuclock.c -lpthread \
 *       -o /tmp/cpuclock-bench && /tmp/cpuclock-bench [reads]
 *
 * A CPU-bound loop, so CPUCLOCK_SWITCH mostly takes its fast path; the
 * "after a switch" line forces a context switch before every read to show
 * its slow path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpuclock.h"

/* A clock's nanoseconds. */
static int64_t
bench_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds per cpuclock_read over N reads (wall clock). */
static double
bench_cpuclock(struct cpuclock *c, long n)
{
	volatile int64_t sink = 0;
	int64_t t0 = bench_ns(CLOCK_MONOTONIC);
	long i;

	for (i = 0; i < n; i++)
		sink += cpuclock_read(c);
	return (double)(bench_ns(CLOCK_MONOTONIC) - t0) / (double)n;
}

/* Nanoseconds per clock_gettime(ID) over N reads. */
static double
bench_clock(clockid_t id, long n)
{
	volatile int64_t sink = 0;
	int64_t t0 = bench_ns(CLOCK_MONOTONIC);
	long i;

	for (i = 0; i < n; i++)
		sink += bench_ns(id);
	return (double)(bench_ns(CLOCK_MONOTONIC) - t0) / (double)n;
}

/* Nanoseconds per cpuclock_read just after a switch (sleep excluded). */
static double
bench_after_switch(struct cpuclock *c, long n)
{
	struct timespec nap = { 0, 1000 };
	volatile int64_t sink = 0;
	int64_t total = 0, t0;
	long i;

	for (i = 0; i < n; i++) {
		nanosleep(&nap, NULL);
		t0 = bench_ns(CLOCK_MONOTONIC);
		sink += cpuclock_read(c);
		total += bench_ns(CLOCK_MONOTONIC) - t0;
	}
	return (double)total / (double)n;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	struct cpuclock fast, slow;

	cpuclock_open(&fast);
	setenv("RPERF_NO_PERF_CLOCK", "1", 1);
	cpuclock_open(&slow);
	unsetenv("RPERF_NO_PERF_CLOCK");

	(void)bench_cpuclock(&fast, n / 10);	/* warm up */
	printf("cpuclock_read (%s)           %7.1f ns\n",
	    cpuclock_kind_name(&fast), bench_cpuclock(&fast, n));
	printf("cpuclock_read (%s), after a switch %7.1f ns\n",
	    cpuclock_kind_name(&fast), bench_after_switch(&fast, 2000));
	printf("cpuclock_read (%s)        %7.1f ns\n",
	    cpuclock_kind_name(&slow), bench_cpuclock(&slow, n));
	printf("clock_gettime(THREAD_CPUTIME)   %7.1f ns\n",
	    bench_clock(CLOCK_THREAD_CPUTIME_ID, n));
	printf("clock_gettime(MONOTONIC)        %7.1f ns\n",
	    bench_clock(CLOCK_MONOTONIC, n));
	cpuclock_close(&fast);
	cpuclock_close(&slow);
	return 0;
}
