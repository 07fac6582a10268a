/*
 * cpuclock.h: the calling thread's own CPU time, read without a system
 * call where the kernel lets us.  Each thread opens its own clock (one
 * perf_event fd and one mapped page), reads it only on that thread, and
 * closes it before exiting.  Plain C, no Ruby.  cpuclock_read never
 * allocates, never blocks and is async-signal-safe.
 *
 * Three ways to read, chosen by cpuclock_open and reported by
 * cpuclock_kind (see cpuclock.c for why each is correct):
 *   CPUCLOCK_TSC     perf's user page plus rdtsc: never a system call
 *                    (x86-64, kernel exposes cap_user_time);
 *   CPUCLOCK_SWITCH  perf's user page tells whether the thread has been
 *                    switched out since the last read: if not, the CPU
 *                    time grew by the CLOCK_MONOTONIC time (vDSO); if so,
 *                    one clock_gettime(CLOCK_THREAD_CPUTIME_ID) re-anchors;
 *   CPUCLOCK_SYSCALL clock_gettime(CLOCK_THREAD_CPUTIME_ID) every time
 *                    (no perf_event_open: seccomp, perf_event_paranoid,
 *                    or RPERF_NO_PERF_CLOCK set in the environment).
 *
 * Values are nanoseconds on an arbitrary per-thread origin: only the
 * difference of two reads on the same thread means anything.  Under a
 * hypervisor the fast kinds count time stolen by the host while the thread
 * was on a CPU, which CLOCK_THREAD_CPUTIME_ID leaves out: CPUCLOCK_TSC
 * (perf's own task-clock) keeps it, CPUCLOCK_SWITCH gives it back at the
 * next switch, so its increments follow CLOCK_THREAD_CPUTIME_ID in the
 * long run.  A read interrupted by a signal handler that reads the same
 * clock returns a correct time, but the two are not ordered.
 *
 * After fork() the child inherits its parent's clocks but not their pages
 * (perf maps them VM_DONTCOPY).  A fork handler retires them: in the child
 * they read by system call (the time of the child's thread, correct but
 * slow) until closed; close them and open new ones.  A child made without
 * libc's fork() handlers (raw clone, _Fork) must not read them at all.
 */
#ifndef RPERF_CPUCLOCK_H
#define RPERF_CPUCLOCK_H

#include <stdint.h>

enum cpuclock_kind {
	CPUCLOCK_SYSCALL = 0,
	CPUCLOCK_TSC,
	CPUCLOCK_SWITCH
};

struct cpuclock {
	void *page;		/* its mapped struct perf_event_mmap_page */
	enum cpuclock_kind kind;
	unsigned forks;		/* fork generation of the opener */

	/*
	 * CPUCLOCK_SWITCH's anchor: at page lock ANCHOR_LOCK the thread's CPU
	 * time was ANCHOR_CPU when CLOCK_MONOTONIC read ANCHOR_MONO.  GEN is
	 * odd while the anchor is being rewritten, so a signal handler that
	 * interrupts the rewrite on the same thread leaves it alone.
	 */
	volatile unsigned gen;
	uint32_t anchor_lock;
	int64_t anchor_cpu;
	int64_t anchor_mono;
	int64_t last;		/* the largest value read so far */
	int pending;		/* SWITCH opened lazily, before the probe answered */
};

/*
 * Set up the calling thread's clock in C; never fails (falls back).  The
 * first open in a process checks how the kernel treats the page, which
 * takes a short sleep (a switch out and back in) on the calling thread.
 * cpuclock_open_lazy does not wait for that: such a clock reads by system
 * call until a probe has answered, one that cpuclock_probe_open prepares
 * (opening the event for thread TID, 0 for the calling thread) and
 * cpuclock_probe_run, on thread TID, runs.
 */
void cpuclock_open(struct cpuclock *c);
void cpuclock_open_lazy(struct cpuclock *c);
int cpuclock_probe_open(struct cpuclock *p, int tid);
void cpuclock_probe_run(struct cpuclock *p);
/*
 * The calling thread's CPU time in ns, non-decreasing from one call to the
 * next.  Only on the thread that opened C.  Not const: CPUCLOCK_SWITCH
 * keeps its anchor in C.
 */
int64_t cpuclock_read(struct cpuclock *c);
/* Whether reads avoid the system call (most of the time, for SWITCH). */
int cpuclock_fast(const struct cpuclock *c);
/* "tsc", "switch" or "syscall", for --version and tests. */
const char *cpuclock_kind_name(const struct cpuclock *c);
/* Release C's page; C reads by system call afterwards. */
void cpuclock_close(struct cpuclock *c);

#endif
