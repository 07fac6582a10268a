/*
 * check_cpuclock.c: the fast per-thread CPU clock against
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID): busy, sleeping, preempted, in
 * the kernel, on other threads, and forced onto the system call.  The
 * arithmetic of the TSC kind runs on a fake page, since many machines
 * (KVM guests) never offer it.  Timing bounds are loose enough for a
 * loaded CI machine: 1% plus 200 us.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* sched_setaffinity, when built by hand */
#endif
#include <check.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpuclock.h"
#include "testutil.h"

/* The system call's view of this thread's CPU time. */
static int64_t
thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spin until this thread has used NS of CPU time. */
static void
burn(int64_t ns)
{
	int64_t end = thread_ns() + ns;
	volatile uint64_t x = 0;
	int i;

	while (thread_ns() < end)
		for (i = 0; i < 10000; i++)
			x += (uint64_t)i * 2654435761u;
}

/* Whether FAST and SLOW deltas agree within 1% plus 200 us. */
static int
agree(int64_t fast, int64_t slow)
{
	int64_t diff = fast > slow ? fast - slow : slow - fast;

	return diff <= slow / 100 + 200000;
}

/*
 * Burn BUSY ns on C's thread, measuring it both ways, up to three times:
 * in a VM the host can stop the CPU for a millisecond (steal time), which
 * the fast clock counts and the system call does not.  A real fault, such
 * as missing a switch, fails every attempt.
 */
static int
busy_agrees(struct cpuclock *c, int64_t busy, int64_t *fast, int64_t *slow)
{
	int64_t f0, s0;
	int i;

	for (i = 0; i < 3; i++) {
		f0 = cpuclock_read(c);
		s0 = thread_ns();
		burn(busy);
		*fast = cpuclock_read(c) - f0;
		*slow = thread_ns() - s0;
		if (agree(*fast, *slow))
			return 1;
	}
	return 0;
}

/* Assert that C measures a busy stretch of BUSY ns like the system call. */
static void
check_busy(struct cpuclock *c, const char *what, int64_t busy)
{
	int64_t fast, slow;

	if (!busy_agrees(c, busy, &fast, &slow))
		ck_abort_msg("%s: fast %lld ns, clock_gettime %lld ns", what,
		    (long long)fast, (long long)slow);
	ck_assert_int_ge(slow, busy);
}

START_TEST(test_busy_agrees)
{
	struct cpuclock c;

	cpuclock_open(&c);
	check_busy(&c, "busy 100 ms", 100000000);
	check_busy(&c, "busy 20 ms", 20000000);
	cpuclock_close(&c);
}
END_TEST

/* The probe's thread, for test_lazy_then_probe: says who it is, waits
 * for the probe to be opened for it, runs it. */
struct probe_arg {
	struct cpuclock probe;
	int tid, opened;
};

static void *
probe_thread(void *arg)
{
	struct probe_arg *a = arg;

	__atomic_store_n(&a->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (__atomic_load_n(&a->opened, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	if (a->opened > 0)
		cpuclock_probe_run(&a->probe);
	return NULL;
}

/* A clock opened lazily reads right before the probe has answered (by
 * system call) and after it (by its kind's fast path, if any); a probe on
 * another thread answers for it.  Check runs each test in a fresh child of
 * a runner that opened no clock, so no answer is known at the start. */
START_TEST(test_lazy_then_probe)
{
	struct probe_arg a = { .tid = 0 };
	struct cpuclock c, d;
	pthread_t t;
	int tid;

	cpuclock_open_lazy(&c);
	check_busy(&c, "busy 20 ms before the probe", 20000000);
	ck_assert_int_eq(pthread_create(&t, NULL, probe_thread, &a), 0);
	while ((tid = __atomic_load_n(&a.tid, __ATOMIC_ACQUIRE)) == 0)
		sched_yield();
	__atomic_store_n(&a.opened, cpuclock_probe_open(&a.probe, tid) ? 1 : -1,
	    __ATOMIC_RELEASE);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	check_busy(&c, "busy 20 ms after the probe", 20000000);
	/* The lazy clock now reads as fast as one opened after the probe. */
	cpuclock_open(&d);
	ck_assert_int_eq(cpuclock_fast(&c), cpuclock_fast(&d));
	ck_assert_str_eq(cpuclock_kind_name(&c), cpuclock_kind_name(&d));
	cpuclock_close(&d);
	cpuclock_close(&c);
}
END_TEST

START_TEST(test_sleep_not_counted)
{
	struct timespec nap = { 0, 50000000 };
	struct cpuclock c;
	int64_t f0, f1;

	cpuclock_open(&c);
	burn(5000000);
	f0 = cpuclock_read(&c);
	nanosleep(&nap, NULL);
	f1 = cpuclock_read(&c);
	ck_assert_int_ge(f1, f0);
	ck_assert_int_lt(f1 - f0, 1000000);
	/* And many short sleeps, each a switch out and back in. */
	f0 = cpuclock_read(&c);
	for (int i = 0; i < 50; i++) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		(void)cpuclock_read(&c);
	}
	f1 = cpuclock_read(&c);
	/* 50 ms asleep; what is counted is the waking and the reads, which
	 * took 7.4 ms of CPU once under ASan on a loaded VM. */
	ck_assert_int_lt(f1 - f0, 20000000);
	cpuclock_close(&c);
}
END_TEST

START_TEST(test_monotonic)
{
	struct cpuclock c;
	int64_t prev, t;
	int i;

	cpuclock_open(&c);
	prev = cpuclock_read(&c);
	for (i = 0; i < 1000000; i++) {
		t = cpuclock_read(&c);
		if (t < prev)
			ck_abort_msg("read %d went back %lld ns", i,
			    (long long)(prev - t));
		prev = t;
		if (i % 100000 == 0)
			sched_yield();
	}
	cpuclock_close(&c);
}
END_TEST

START_TEST(test_kernel_time_counted)
{
	struct cpuclock c;
	int64_t f0, s0, fast = 0, slow = 0, end;
	int i;

	cpuclock_open(&c);
	for (i = 0; i < 3; i++) {
		f0 = cpuclock_read(&c);
		s0 = thread_ns();
		end = s0 + 50000000;
		while (thread_ns() < end)
			(void)syscall(SYS_getppid);
		fast = cpuclock_read(&c) - f0;
		slow = thread_ns() - s0;
		if (agree(fast, slow))
			break;
	}
	if (i == 3)
		ck_abort_msg("system calls: fast %lld ns, clock_gettime %lld ns",
		    (long long)fast, (long long)slow);
	cpuclock_close(&c);
}
END_TEST

/* A thread that opens its own clock and checks a busy stretch. */
static void *
busy_thread(void *arg)
{
	struct cpuclock c;

	(void)arg;
	cpuclock_open(&c);
	check_busy(&c, "busy on a second thread", 80000000);
	cpuclock_close(&c);
	return NULL;
}

START_TEST(test_other_thread)
{
	struct cpuclock c;
	pthread_t t;
	int64_t f0, f1;

	cpuclock_open(&c);
	f0 = cpuclock_read(&c);
	ck_assert_int_eq(pthread_create(&t, NULL, busy_thread, NULL), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	f1 = cpuclock_read(&c);
	/* The other thread's 80 ms are not ours. */
	ck_assert_int_lt(f1 - f0, 10000000);
	cpuclock_close(&c);
}
END_TEST

/* Burn on CPU 0 while the others do too, so each is preempted often,
 * yielding now and then and reading between bursts. */
static void
preempted_burn(int64_t busy)
{
	int i;

	for (i = 0; i < 200; i++) {
		burn(busy / 200);
		if (i % 20 == 0)
			sched_yield();
	}
}

/* One of the threads competing for CPU 0; ARG gets fast and slow ns. */
static void *
preempted_thread(void *arg)
{
	int64_t *d = arg, f0, s0;
	cpu_set_t set;
	struct cpuclock c;
	int i;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	(void)sched_setaffinity(0, sizeof set, &set);
	cpuclock_open(&c);
	for (i = 0; i < 3; i++) {
		f0 = cpuclock_read(&c);
		s0 = thread_ns();
		preempted_burn(60000000);
		d[0] = cpuclock_read(&c) - f0;
		d[1] = thread_ns() - s0;
		if (agree(d[0], d[1]))
			break;
	}
	cpuclock_close(&c);
	return NULL;
}

START_TEST(test_preempted_threads)
{
	pthread_t t[3];
	int64_t d[3][2];
	int i;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL,
		    preempted_thread, d[i]), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	for (i = 0; i < 3; i++)
		if (!agree(d[i][0], d[i][1]))
			ck_abort_msg("preempted thread %d: fast %lld ns, "
			    "clock_gettime %lld ns", i, (long long)d[i][0],
			    (long long)d[i][1]);
}
END_TEST

START_TEST(test_fallback)
{
	struct cpuclock c;

	setenv("RPERF_NO_PERF_CLOCK", "1", 1);
	cpuclock_open(&c);
	unsetenv("RPERF_NO_PERF_CLOCK");
	ck_assert(!cpuclock_fast(&c));
	ck_assert_str_eq(cpuclock_kind_name(&c), "syscall");
	check_busy(&c, "fallback", 50000000);
	cpuclock_close(&c);
}
END_TEST

START_TEST(test_fork_child)
{
	struct cpuclock c;
	pid_t pid;
	int status;

	cpuclock_open(&c);
	(void)cpuclock_read(&c);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int64_t a, b;

		/* The page is not in the child; this must not fault. */
		a = cpuclock_read(&c);
		burn(2000000);
		b = cpuclock_read(&c);
		cpuclock_close(&c);
		cpuclock_open(&c);
		_exit(b - a >= 2000000 && busy_agrees(&c, 20000000, &a, &b) ?
		    0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	/* The parent's clock is untouched. */
	check_busy(&c, "parent after fork", 20000000);
	cpuclock_close(&c);
}
END_TEST

START_TEST(test_no_descriptor_and_close)
{
	struct cpuclock c;
	int before = tu_count_entries("/proc/self/fd");

	/* A clock holds no descriptor: the profiled script's fd numbers
	 * stay what they are under ruby. */
	cpuclock_open(&c);
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), before);
	check_busy(&c, "no descriptor", 20000000);
	cpuclock_close(&c);
	ck_assert_ptr_null(c.page);
	/* Still readable after close, by system call. */
	ck_assert_int_gt(cpuclock_read(&c), 0);
	cpuclock_close(&c);
}
END_TEST

#if defined(__x86_64__)
/* The TSC, for bounding the fake page's reads. */
static uint64_t
tsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

START_TEST(test_tsc_arithmetic)
{
	static struct perf_event_mmap_page pg __attribute__((aligned(4096)));
	struct cpuclock c;
	uint64_t t0, t1;
	int64_t v;

	memset(&pg, 0, sizeof pg);
	/* A real open and close, for this process's fork generation. */
	cpuclock_open(&c);
	cpuclock_close(&c);
	c.page = &pg;
	c.kind = CPUCLOCK_TSC;
	pg.lock = 6;
	pg.cap_user_time = 1;
	pg.time_enabled = 1000;
	pg.time_offset = (uint64_t)-500;	/* offsets are often negative */

	/* One ns per cycle. */
	pg.time_mult = 1;
	pg.time_shift = 0;
	t0 = tsc();
	v = cpuclock_read(&c);
	t1 = tsc();
	ck_assert_uint_ge((uint64_t)v, 500 + t0);
	ck_assert_uint_le((uint64_t)v, 500 + t1);

	/* 1.5 ns per cycle: quot * 3 + (rem * 3 >> 1), with shift 1. */
	pg.time_mult = 3;
	pg.time_shift = 1;
	t0 = tsc();
	v = cpuclock_read(&c);
	t1 = tsc();
	ck_assert_uint_ge((uint64_t)v, 500 + t0 + t0 / 2 - 1);
	ck_assert_uint_le((uint64_t)v, 500 + t1 + t1 / 2 + 1);

	/* A short counter: only the low 16 bits past time_cycles count. */
	pg.time_mult = 1;
	pg.time_shift = 0;
	pg.cap_user_time_short = 1;
	pg.time_cycles = 0;
	pg.time_mask = 0xffff;
	v = cpuclock_read(&c);
	ck_assert_int_ge(v, 500);
	ck_assert_int_le(v, 500 + 0xffff);

	/* Losing cap_user_time moves the clock onto the system call. */
	pg.cap_user_time = 0;
	ck_assert_int_gt(cpuclock_read(&c), 0);
	ck_assert_str_eq(cpuclock_kind_name(&c), "syscall");
	ck_assert_ptr_eq(c.page, &pg);	/* not ours to unmap */
}
END_TEST
#endif

/* The suite. */
static Suite *
cpuclock_suite(void)
{
	Suite *s = suite_create("cpuclock");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_busy_agrees);
	tcase_add_test(tc, test_lazy_then_probe);
	tcase_add_test(tc, test_sleep_not_counted);
	tcase_add_test(tc, test_monotonic);
	tcase_add_test(tc, test_kernel_time_counted);
	tcase_add_test(tc, test_other_thread);
	tcase_add_test(tc, test_preempted_threads);
	tcase_add_test(tc, test_fallback);
	tcase_add_test(tc, test_fork_child);
	tcase_add_test(tc, test_no_descriptor_and_close);
#if defined(__x86_64__)
	tcase_add_test(tc, test_tsc_arithmetic);
#endif
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	struct cpuclock c;
	int rc;

	/* Open no clock before the tests run (see test_lazy_then_probe). */
	rc = tu_run(cpuclock_suite());
	cpuclock_open(&c);
	printf("cpuclock: %s (%s)\n", cpuclock_kind_name(&c),
	    cpuclock_fast(&c) ? "no system call on the fast path" :
	    "clock_gettime every read");
	cpuclock_close(&c);
	return rc;
}
