/*
 * cpuclock.c: a thread's own CPU time without a system call (see
 * cpuclock.h).  Owns the perf_event fd and page of each open clock and the
 * process-wide answer to whether the kernel refreshes that page when a
 * thread is switched in.  cpuclock_read runs in signal handlers: it must
 * never allocate, lock, block or call anything not async-signal-safe.
 *
 * The event is PERF_COUNT_SW_TASK_CLOCK on the calling thread.  For an
 * event bound to one task, perf's context time only advances while the
 * task is on a CPU, so the page's time_enabled (equal to time_running
 * for a software event, which is never multiplexed) is the thread's
 * on-CPU time since the event was opened, as of the page's last update.
 * The kernel updates the page (lock += 2) every time the thread is
 * switched in, not when it is switched out; cpuclock_switch_check
 * confirms that once per process before CPUCLOCK_SWITCH relies on it.
 *
 * CPUCLOCK_TSC: with cap_user_time, time_offset + cyc2ns(rdtsc) is the
 * perf clock now minus the perf clock at the last update, the formula of
 * <linux/perf_event.h>.  The reader is running, so it has run without a
 * break since that update (the last switch-in) and its CPU time is
 * time_enabled plus that delta.  Kernels set cap_user_time only when
 * sched_clock is the TSC and stable; most KVM guests use kvm-clock and
 * get CPUCLOCK_SWITCH instead.
 *
 * CPUCLOCK_SWITCH: if the page's lock is the same before and after a
 * CLOCK_MONOTONIC read as it was when the anchor was taken, the thread
 * has not left its CPU since, so its CPU time grew exactly as much as the
 * monotonic clock.  Otherwise one clock_gettime(CLOCK_THREAD_CPUTIME_ID)
 * gives the time and a new anchor.  A CPU-bound thread pays the system
 * call only after being preempted or blocking.  Under a hypervisor the
 * monotonic clock also runs while the host has stopped the virtual CPU,
 * which the kernel leaves out of the thread's CPU time; see
 * cpuclock_read_switch.
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpuclock.h"

/* struct perf_event_mmap_page's capability bits (see the uapi header). */
#define CPUCLOCK_CAP_USER_TIME		(1ULL << 3)
#define CPUCLOCK_CAP_USER_TIME_SHORT	(1ULL << 5)

/* Compiler barrier: the page and the anchor change under us only from
 * the kernel between our instructions' runs, or from a signal handler on
 * this thread, so ordering against this thread's own code is enough. */
#define cpuclock_barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* Whether the page is refreshed on switch-in: 0 unknown, 1 yes, -1 no. */
static int cpuclock_switch_ok;

/*
 * How many fork()s deep this process is.  perf maps its pages with
 * VM_DONTCOPY, so in a child an inherited clock's page is gone and reading
 * it would fault; a clock opened at another generation reads by system
 * call instead.
 */
static unsigned cpuclock_forks;
static pthread_once_t cpuclock_once = PTHREAD_ONCE_INIT;

/* In a child of fork(): retire the clocks inherited from the parent. */
static void
cpuclock_atfork_child(void)
{
	__atomic_add_fetch(&cpuclock_forks, 1, __ATOMIC_RELAXED);
}

/* Register the fork handler, once per process. */
static void
cpuclock_init(void)
{
	(void)pthread_atfork(NULL, NULL, cpuclock_atfork_child);
}

/* A clock's nanoseconds as one integer. */
static int64_t
cpuclock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The page's lock word, read once. */
static uint32_t
cpuclock_lock(const struct cpuclock *c)
{
	const struct perf_event_mmap_page *pg = c->page;

	return __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
}

#if defined(__x86_64__)
/* The TSC. */
static inline uint64_t
cpuclock_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* CPUCLOCK_TSC's read; -1 if the page no longer offers cap_user_time. */
static int64_t
cpuclock_read_tsc(const struct cpuclock *c)
{
	const volatile struct perf_event_mmap_page *pg = c->page;
	uint64_t caps, enabled, cyc, offset, quot, rem, cycles, mask;
	uint32_t seq, mult;
	uint16_t shift;

	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		cpuclock_barrier();
		caps = pg->capabilities;
		enabled = pg->time_enabled;
		mult = pg->time_mult;
		shift = pg->time_shift;
		offset = pg->time_offset;
		cycles = pg->time_cycles;
		mask = pg->time_mask;
		cyc = cpuclock_rdtsc();
		cpuclock_barrier();
	} while ((seq & 1) != 0 ||
	    __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE) != seq);

	if ((caps & CPUCLOCK_CAP_USER_TIME) == 0)
		return -1;
	if ((caps & CPUCLOCK_CAP_USER_TIME_SHORT) != 0)
		cyc = cycles + ((cyc - cycles) & mask);
	/* Split so cyc * mult cannot overflow 64 bits. */
	quot = cyc >> shift;
	rem = cyc & (((uint64_t)1 << shift) - 1);
	return (int64_t)(enabled + offset + quot * mult +
	    ((rem * mult) >> shift));
}
#endif

/*
 * How long an anchor is trusted.  Within it the CPU time is taken to grow
 * with CLOCK_MONOTONIC, which also counts time a hypervisor stole from the
 * virtual CPU; re-anchoring this often (one system call every few samples
 * at 1000 Hz) bounds that error to the steal of one such stretch.
 */
#define CPUCLOCK_ANCHOR_MAX_NS	(4 * 1000 * 1000)

/* CPUCLOCK_SWITCH's unclamped read: the anchor if it still holds, else
 * re-anchor. */
static int64_t
cpuclock_switch_raw(struct cpuclock *c)
{
	uint32_t l1, l2;
	unsigned gen;
	int64_t cpu, mono;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		l1 = cpuclock_lock(c);
		gen = c->gen;
		cpuclock_barrier();
		if ((gen & 1) == 0 && (l1 & 1) == 0 && l1 == c->anchor_lock) {
			cpu = c->anchor_cpu;
			mono = c->anchor_mono;
			cpuclock_barrier();
			mono = cpuclock_ns(CLOCK_MONOTONIC) - mono;
			cpuclock_barrier();
			l2 = cpuclock_lock(c);
			if (l2 != l1 || c->gen != gen)
				continue;	/* switched in between, or a handler re-anchored */
			if (mono <= CPUCLOCK_ANCHOR_MAX_NS)
				return cpu + (mono > 0 ? mono : 0);
			/* An old anchor: re-anchor, so that time the host stole
			 * from the virtual CPU cannot pile up. */
		}

		/*
		 * Anchor: the monotonic time read after the CPU time, so fast
		 * reads err low by the system call's return, never high; a
		 * slow read after them (the common case, after a switch)
		 * stays ahead of them.
		 */
		l1 = cpuclock_lock(c);
		cpuclock_barrier();
		cpu = cpuclock_ns(CLOCK_THREAD_CPUTIME_ID);
		mono = cpuclock_ns(CLOCK_MONOTONIC);
		cpuclock_barrier();
		l2 = cpuclock_lock(c);
		if (l1 != l2 || (l1 & 1) != 0 || (gen & 1) != 0)
			return cpu;	/* no anchor to trust; next read is slow */
		if (c->gen != gen)
			continue;	/* a handler anchored meanwhile: use it */
		c->gen = gen + 1;
		cpuclock_barrier();
		c->anchor_lock = l1;
		c->anchor_cpu = cpu;
		c->anchor_mono = mono;
		cpuclock_barrier();
		c->gen = gen + 2;
		return cpu;
	}
	return cpuclock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * CPUCLOCK_SWITCH's read, never below the last one.  A host that stops
 * the virtual CPU (steal time) inside an anchored stretch makes the fast
 * read count time that the next system call leaves out; holding the
 * value until the system call catches up keeps the clock non-decreasing
 * and its long-run increments those of CLOCK_THREAD_CPUTIME_ID, rather
 * than drifting by the steal.
 */
static int64_t
cpuclock_read_switch(struct cpuclock *c)
{
	int64_t t = cpuclock_switch_raw(c), last = c->last;

	if (t < last)
		return last;
	c->last = t;
	return t;
}

/* Whether C's page is refreshed when the thread is switched in: sleep
 * briefly (a switch out and in) and see that the lock moved. */
static int
cpuclock_switch_check(const struct cpuclock *c)
{
	struct timespec nap = { 0, 1000 };
	uint32_t before;
	int i, cut = 0;

	for (i = 0; i < 3; i++) {
		before = cpuclock_lock(c);
		if (nanosleep(&nap, NULL) != 0 && cut++ < 8) {
			i--;	/* a signal cut the nap short: nap again */
			continue;
		}
		if (cpuclock_lock(c) != before)
			return 1;
	}
	return 0;
}

/* Open the task-clock event of thread TID (0: the calling thread) and
 * map its page. */
static int
cpuclock_perf_open(struct cpuclock *c, int tid)
{
	struct perf_event_attr attr;
	long pagesize = sysconf(_SC_PAGESIZE);
	void *page;
	int fd;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	/*
	 * Allowed at perf_event_paranoid 2 without CAP_PERFMON.  The page's
	 * times come from the task's context, not from what the event
	 * counts, so they still include time in the kernel.
	 */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1,
	    PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	page = mmap(NULL, (size_t)pagesize, PROT_READ, MAP_SHARED, fd, 0);
	/* The mapping keeps the event alive.  Holding no descriptor keeps
	 * the script's file descriptor numbers what they are under ruby. */
	close(fd);
	if (page == MAP_FAILED)
		return -1;
	c->page = page;
	return 0;
}

/*
 * Prepare P to find out whether the kernel refreshes a perf page when a
 * thread is switched in, on thread TID (of this process; 0: the calling
 * thread), unless that is known already; 1 if P is ready for
 * cpuclock_probe_run on TID, else 0.  The event's descriptor is closed
 * before this returns (see cpuclock_perf_open).
 */
int
cpuclock_probe_open(struct cpuclock *p, int tid)
{
	(void)pthread_once(&cpuclock_once, cpuclock_init);
	memset(p, 0, sizeof *p);
	p->forks = __atomic_load_n(&cpuclock_forks, __ATOMIC_RELAXED);
	if (__atomic_load_n(&cpuclock_switch_ok, __ATOMIC_RELAXED) != 0)
		return 0;
	return cpuclock_perf_open(p, tid) == 0;
}

/* On P's thread: sleep briefly, see whether P's page moved, record the
 * answer for the process and release P. */
void
cpuclock_probe_run(struct cpuclock *p)
{
	if (p->page == NULL)
		return;
	if (__atomic_load_n(&cpuclock_switch_ok, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&cpuclock_switch_ok,
		    cpuclock_switch_check(p) ? 1 : -1, __ATOMIC_RELAXED);
	cpuclock_close(p);
}

/*
 * Set up the calling thread's clock; never fails (falls back).  LAZY: if
 * no probe has answered yet, do not sleep to find out here; read by
 * system call until a probe, on another thread, has answered.
 */
static void
cpuclock_open_as(struct cpuclock *c, int lazy)
{
	const char *no = getenv("RPERF_NO_PERF_CLOCK");
	int ok;

	(void)pthread_once(&cpuclock_once, cpuclock_init);
	memset(c, 0, sizeof *c);
	c->kind = CPUCLOCK_SYSCALL;
	c->forks = __atomic_load_n(&cpuclock_forks, __ATOMIC_RELAXED);
	c->anchor_lock = 1;	/* odd: never a settled lock value */
	if ((no != NULL && *no != '\0') || cpuclock_perf_open(c, 0) != 0)
		return;

#if defined(__x86_64__)
	if (cpuclock_read_tsc(c) >= 0) {
		c->kind = CPUCLOCK_TSC;
		return;
	}
#endif
	ok = __atomic_load_n(&cpuclock_switch_ok, __ATOMIC_RELAXED);
	if (ok == 0 && lazy) {
		c->kind = CPUCLOCK_SWITCH;
		c->pending = 1;
		return;
	}
	if (ok == 0) {
		ok = cpuclock_switch_check(c) ? 1 : -1;
		__atomic_store_n(&cpuclock_switch_ok, ok, __ATOMIC_RELAXED);
	}
	if (ok > 0) {
		c->kind = CPUCLOCK_SWITCH;
		return;
	}
	cpuclock_close(c);
}

/* Set up the calling thread's clock, checking the kernel if need be. */
void
cpuclock_open(struct cpuclock *c)
{
	cpuclock_open_as(c, 0);
}

/* Set up the calling thread's clock without waiting for the check. */
void
cpuclock_open_lazy(struct cpuclock *c)
{
	cpuclock_open_as(c, 1);
}

/* The calling thread's CPU time in ns. */
int64_t
cpuclock_read(struct cpuclock *c)
{
	if (c->forks != __atomic_load_n(&cpuclock_forks, __ATOMIC_RELAXED))
		return cpuclock_ns(CLOCK_THREAD_CPUTIME_ID);
	switch (c->kind) {
#if defined(__x86_64__)
	case CPUCLOCK_TSC: {
		int64_t t = cpuclock_read_tsc(c);

		if (t >= 0)
			return t;
		/*
		 * sched_clock stopped being the stable TSC (the kernel marked
		 * it unstable): the page and the system call count from
		 * different origins, so switch for good.  Rare enough that
		 * one jump in the returned value is acceptable.
		 */
		c->kind = CPUCLOCK_SYSCALL;
		break;
	}
#endif
	case CPUCLOCK_SWITCH:
		if (c->pending) {
			int ok = __atomic_load_n(&cpuclock_switch_ok, __ATOMIC_RELAXED);

			if (ok == 0)
				break;		/* no answer yet: the system call */
			if (ok < 0) {
				/* The page stays mapped until cpuclock_close;
				 * a handler may be reading it. */
				c->kind = CPUCLOCK_SYSCALL;
				break;
			}
			c->pending = 0;
		}
		return cpuclock_read_switch(c);
	default:
		break;
	}
	return cpuclock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Whether reads avoid the system call. */
int
cpuclock_fast(const struct cpuclock *c)
{
	if (c->kind == CPUCLOCK_SWITCH && c->pending)
		return __atomic_load_n(&cpuclock_switch_ok, __ATOMIC_RELAXED) > 0;
	return c->kind != CPUCLOCK_SYSCALL;
}

/* The kind of C as a word. */
const char *
cpuclock_kind_name(const struct cpuclock *c)
{
	if (c->kind == CPUCLOCK_SWITCH && !cpuclock_fast(c))
		return "syscall";
	switch (c->kind) {
	case CPUCLOCK_TSC:
		return "tsc";
	case CPUCLOCK_SWITCH:
		return "switch";
	default:
		return "syscall";
	}
}

/* Release C's page (not in a fork child: the page was not copied, and
 * munmap would free whatever now lives at its address). */
void
cpuclock_close(struct cpuclock *c)
{
	if (c->page != NULL &&
	    c->forks == __atomic_load_n(&cpuclock_forks, __ATOMIC_RELAXED))
		munmap(c->page, (size_t)sysconf(_SC_PAGESIZE));
	c->page = NULL;
	c->kind = CPUCLOCK_SYSCALL;
}
