/*
 * tick.c: what a 1000 Hz timer costs a spinning thread on this machine,
 * with no profiler at all: the floor under rperf's per-tick cost.  A loop
 * of fixed work is timed with no timer (mode 0); with a POSIX timer whose
 * signal goes to a second thread blocked in a condition wait, as rperf's
 * worker is (1); with the signal to the spinning thread itself (2); and
 * with a second thread that sleeps to each tick with clock_nanosleep, as
 * rperf's timer thread (--signal false) does (3).  Not built by make; by
 * hand, pinned to one CPU to see the whole cost and unpinned to see what
 * the spinning thread loses on two:
 *
 *   cc -O1 bench/tick/tick.c -lpthread -o /tmp/tick
 *   for m in 0 1 2 3; do taskset -c 0 /tmp/tick $m; done
 *   for m in 0 1 2 3; do /tmp/tick $m; done
 *
 * (mode 0's time) vs (mode N's time) / ticks is the cost of a tick.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS		1000000L
#define TICK_WORK	1500000000UL

static volatile long tick_count;
static pid_t tick_worker_tid;
static pthread_mutex_t tick_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tick_cond = PTHREAD_COND_INITIALIZER;

static void
tick_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	tick_count++;
}

/* Blocks for ever, as rperf's worker does between buffers. */
static void *
tick_waiter(void *arg)
{
	(void)arg;
	tick_worker_tid = (pid_t)syscall(SYS_gettid);
	pthread_mutex_lock(&tick_mutex);
	for (;;)
		pthread_cond_wait(&tick_cond, &tick_mutex);
	return NULL;
}

/* Sleeps to each tick on the grid of periods. */
static void *
tick_sleeper(void *arg)
{
	struct timespec t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (;;) {
		t.tv_nsec += TICK_NS;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_nsec -= 1000000000L;
			t.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		tick_count++;
	}
	return NULL;
}

static double
tick_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A timer ticking every TICK_NS with its signal to thread TID. */
static void
tick_timer(pid_t tid)
{
	struct itimerspec its = { { 0, TICK_NS }, { 0, TICK_NS } };
	struct sigevent ev;
	timer_t timer;

	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGRTMIN + 8;
	ev._sigev_un._tid = tid;
	if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 ||
	    timer_settime(timer, 0, &its, NULL) != 0) {
		perror("timer");
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	int mode = argc > 1 ? atoi(argv[1]) : 0;
	volatile unsigned long sum = 0;
	struct sigaction sa;
	sigset_t set;
	pthread_t t;
	unsigned long i;
	double t0;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = tick_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 8, &sa, NULL);
	pthread_create(&t, NULL, tick_waiter, NULL);
	usleep(10000);
	if (mode == 1) {
		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN + 8);
		pthread_sigmask(SIG_BLOCK, &set, NULL);	/* so it goes to the waiter */
		tick_timer(tick_worker_tid);
	} else if (mode == 2) {
		tick_timer((pid_t)syscall(SYS_gettid));
	} else if (mode == 3) {
		pthread_create(&t, NULL, tick_sleeper, NULL);
	}
	t0 = tick_now();
	for (i = 0; i < TICK_WORK; i++)
		sum += i;
	printf("mode %d: %.4f s, %ld ticks\n", mode, tick_now() - t0, tick_count);
	return 0;
}
