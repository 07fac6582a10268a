/*
 * sampler-timer.c: the sampler's clocks, its timer and its worker thread.
 * The timer (a POSIX timer whose real-time signal goes to the worker, or
 * the worker itself sleeping between ticks) only counts the tick and has
 * where the GVL holder is noted (sampler-tick.c) and the postponed job
 * triggered; the worker folds full sample buffers into
 * the frame and stack tables and triggers the interval and control jobs
 * when they are due.  The signal handlers and the worker hold no GVL:
 * they must never touch the Ruby API beyond rb_postponed_job_trigger,
 * and the handlers must never allocate.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"
#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* Read clock ID in nanoseconds into *NS; 0, or -1 (nothing read). */
int
sampler_read_clock(clockid_t id, int64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return -1;
	*ns = (int64_t)ts.tv_sec * UTIL_NS_PER_SEC + ts.tv_nsec;
	return 0;
}

/* The real time now, in ns since the epoch. */
int64_t
sampler_real_ns(void)
{
	int64_t now = 0;

	sampler_read_clock(CLOCK_REALTIME, &now);
	return now;
}

/* NS nanoseconds as a timespec. */
static struct timespec
sampler_timespec(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = ns / UTIL_NS_PER_SEC;
	ts.tv_nsec = ns % UTIL_NS_PER_SEC;
	return ts;
}

/* The sampling period in nanoseconds. */
int64_t
sampler_period_ns(void)
{
	return UTIL_NS_PER_SEC / sampler.cfg.frequency;
}

/*
 * The time of the tick of the period that starts at GRID (on the grid of
 * periods from the timer's start): anywhere in it, at random, so that
 * each period has one tick but a program that repeats itself every
 * period (or every few) is not seen at the same point of its turn all
 * run long.  A hash of GRID, so that the worker and the signal handler
 * need no generator's state.  With ticks at the start of each period, a
 * loop paced to a turn a millisecond (0.3 ms of work, then a sleep to
 * the next whole millisecond: tests/fixtures/paced_loop.rb) was seen at
 * one point of its turn, one that differed from run to run: in cpu mode
 * its work got 0-99% of the CPU time it used nearly all of (ten runs;
 * now 93-96%).  The ticks that came while it slept found no thread to
 * bill, and where all did, its time went wherever the thread was at the
 * end.  Loops less neat come near enough: 0.3 ms of work and a sleep of
 * 0.7 ms, 1.005 ms a turn here (work_and_sleep.rb), billed Kernel#sleep
 * 84-100% of its CPU time in two runs of three once, for 6% (now 5-7%).
 */
static int64_t
sampler_tick_at(int64_t grid)
{
	uint64_t period = (uint64_t)sampler_period_ns();

	return grid + (int64_t)(profile_mix((uint64_t)grid ^ sampler.tick_seed) % period);
}

/* Arm the POSIX timer for the tick of the period from GRID, once: the
 * handler arms the next.  Async-signal-safe. */
static void
sampler_timer_arm(int64_t grid)
{
	struct itimerspec its;

	memset(&its, 0, sizeof its);
	atomic_store(&sampler.timer_grid, grid);
	its.it_value = sampler_timespec(sampler_tick_at(grid));
	timer_settime(sampler.timer, TIMER_ABSTIME, &its, NULL);
}

static int64_t sampler_next_tick(int64_t now);

/* Start (ON) or stop the POSIX timer, leaving timer_state alone: on the
 * grid of periods from the anchor sampler_timer_set has just set. */
static void
sampler_timer_settime(int on)
{
	struct itimerspec its;

	if (on) {
		sampler_timer_arm(sampler_next_tick(util_mono_ns()));
		return;
	}
	memset(&its, 0, sizeof its);
	timer_settime(sampler.timer, 0, &its, NULL);
}

/*
 * In cpu mode a tick that finds no thread holding the GVL has nothing to
 * sample: every thread sleeps, waits, or runs C code without the GVL,
 * whose CPU time its own clock bills at its next sample (the tick still
 * asks for that sample, at the first safepoint after a thread takes the
 * GVL).  Ticking on while the program is idle would only wake this
 * process a thousand times a second: a sleeping server would pay for it
 * (some 40 us of CPU a tick on a virtual machine).  So such a tick stops
 * the timer, and the next thread to take the GVL restarts it
 * (sampler_timer_resume).  The tick stops the timer before it says so,
 * and looks at the holder again after: a thread that took the GVL
 * meanwhile either sees PAUSED and restarts it, or is seen here, and
 * only one of them wins the exchange.  Not with other Ractors (each has
 * its own lock and holder: the first thread of one to run restarts the
 * timer the same way) or M:N threads; timer_settime may be called from
 * a signal handler.  Without a signal the worker is the timer: it stops
 * ticking (sampler_worker_main), and a restart wakes it.
 *
 * Only after SAMPLER_IDLE_TICKS idle ticks in a row: a busy server is
 * idle for a moment between requests many times a period, and a pause
 * and restart for each cost two system calls, the restart on the thread
 * that takes the GVL (7.8 a request on a WEBrick app at ~900 requests a
 * second).  The count is the ticks' own: only the tick touches it.
 */
static void
sampler_tick_pause(void)
{
	static int idle;
	int on = SAMPLER_TIMER_ON;

	if ((sampler.use_signal && !sampler.timer_made) || sampler.cfg.mode != SAMPLER_CPU ||
	    !sampler_frames_mirrored() || sampler.mn_main ||
	    atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed) ||
	    atomic_load(&sampler.gvl_holder) != 0 ||
	    atomic_load_explicit(&sampler.timer_state, memory_order_relaxed) != SAMPLER_TIMER_ON) {
		idle = 0;
		return;
	}
	if (++idle < SAMPLER_IDLE_TICKS)
		return;
	idle = 0;
	if (sampler.use_signal)
		sampler_timer_settime(0);
	if (!atomic_compare_exchange_strong(&sampler.timer_state, &on, SAMPLER_TIMER_PAUSED))
		return;		/* turned off meanwhile: it stays off */
	if (atomic_load(&sampler.gvl_holder) != 0 || atomic_load(&sampler.ractors_seen))
		sampler_timer_resume();
}

/* Whether this thread is the worker. */
static __thread int sampler_on_worker;

/* See sampler-int.h: a new worker_seq, and the worker woken if it
 * sleeps on the old one (one system call). */
void
sampler_worker_kick(void)
{
	atomic_fetch_add(&sampler.worker_seq, 1);
	syscall(SYS_futex, &sampler.worker_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/*
 * The worker sleeps, without worker_mutex, until DEADLINE (a
 * CLOCK_MONOTONIC time; INT64_MAX: none) or until worker_seq is no longer
 * SEQ, read before it looked at its state: a change made after that look
 * kicks it, or finds it awake.  A futex on that word, not
 * pthread_cond_timedwait: glibc takes the mutex back after a wait as if
 * it were contended, so that each tick's unlock made a second system call
 * with no one to wake (strace: two futex calls a tick, now one).  The
 * worker's CPU time a tick, some 15 us on the VMs here, is mostly its
 * wake-up, which this does not change.
 */
static void
sampler_worker_sleep(unsigned seq, int64_t deadline)
{
	struct timespec ts;

	pthread_mutex_unlock(&sampler.worker_mutex);
	if (deadline == INT64_MAX) {
		syscall(SYS_futex, &sampler.worker_seq, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
	} else {
		ts = sampler_timespec(deadline);
		syscall(SYS_futex, &sampler.worker_seq, FUTEX_WAIT_BITSET_PRIVATE, seq, &ts,
		    NULL, FUTEX_BITSET_MATCH_ANY);
	}
	pthread_mutex_lock(&sampler.worker_mutex);
}

/* Without a signal: have the worker look at the timer's state again
 * (not from the worker itself, which does so after its tick). */
static void
sampler_worker_wake(void)
{
	if (sampler_on_worker || !sampler.worker_made)
		return;
	sampler_worker_kick();
}

/*
 * Ruby's own start-up, before the script's first line (its prelude,
 * RubyGems, the -r libraries and the script's compile), is ticked at most
 * SAMPLER_BOOT_HZ times a second for its first SAMPLER_BOOT_SLOW_NS.
 * Each sample weighs the time since the thread's last, so the totals stay
 * exact and only the start-up's breakdown is coarser.  The ticks cost the
 * start-up more than their jobs: it takes a page fault every few
 * microseconds, and on the VMs here a fault takes 3.5-5 us longer while
 * the other CPU wakes a thousand times a second, whoever wakes it (a 1 kHz
 * sleeper in another process cost a one-line script ~2 ms).  A one-line
 * script took ~4.8 ms longer to reach its first line at 1000 Hz than at
 * 1 Hz, for some 75 ticks whose jobs took 0.5 ms.  A start-up that goes on
 * past SAMPLER_BOOT_SLOW_NS (a large -r library) is ticked at the full
 * rate from then on.
 */
#define SAMPLER_BOOT_HZ		100
#define SAMPLER_BOOT_SLOW_NS	(UTIL_NS_PER_SEC / 4)

/* Periods from one tick to the next at NOW: 1, or more while Ruby
 * starts.  Async-signal-safe. */
static int64_t
sampler_tick_stride(int64_t now)
{
	if (sampler.cfg.frequency <= SAMPLER_BOOT_HZ || !atomic_load(&sampler.booting) ||
	    now - sampler.start_mono >= SAMPLER_BOOT_SLOW_NS)
		return 1;
	return (sampler.cfg.frequency + SAMPLER_BOOT_HZ - 1) / SAMPLER_BOOT_HZ;
}

/* The next tick after NOW on the grid of periods from the timer's start. */
static int64_t
sampler_next_tick(int64_t now)
{
	int64_t period = sampler_period_ns(), anchor = atomic_load(&sampler.timer_anchor);

	return anchor + ((now - anchor) / period + 1) * period;
}

/* The grid point of the tick after the one at GRID, at NOW: a stride of
 * periods on; far behind (the machine was busy), the next on the grid
 * after NOW, the periods missed skipped.  The worker's rule and the
 * timer signal's alike.  Async-signal-safe. */
static int64_t
sampler_grid_after(int64_t grid, int64_t now)
{
	int64_t period = sampler_period_ns();

	grid += period * sampler_tick_stride(now);
	if (now - grid > 10 * period)
		grid = sampler_next_tick(now);
	return grid;
}

/*
 * Restart a stopped timer on the ticks it would have had: the next one
 * on the grid of periods from its start, not a period from now.  A
 * timer restarted a period after each thread took the GVL would tick at
 * the same point of every request or job that begins so, and bill their
 * first and last periods alike every time: a bias, not noise.  Without
 * a signal, wake the worker (unless this is the worker, in its tick):
 * it takes up the grid itself.
 */
void
sampler_timer_resume(void)
{
	int paused = SAMPLER_TIMER_PAUSED;

	if (atomic_load(&sampler.timer_state) != SAMPLER_TIMER_PAUSED ||
	    !atomic_compare_exchange_strong(&sampler.timer_state, &paused, SAMPLER_TIMER_ON))
		return;
	if (!sampler.use_signal) {
		sampler_worker_wake();
		return;
	}
	sampler_timer_arm(sampler_next_tick(util_mono_ns()));
}

/* The script's first line is next (booting was just cleared): tick at
 * the full rate from now on, not after the start-up's stride (the worker
 * takes up the grid). */
void
sampler_timer_boot_done(void)
{
	if (atomic_load(&sampler.timer_state) != SAMPLER_TIMER_ON)
		return;
	if (!sampler.use_signal) {
		sampler_worker_wake();
		return;
	}
	sampler_timer_arm(sampler_next_tick(util_mono_ns()));
}

/* Count a tick, note where the GVL holder is, and ask for a sample. */
static void
sampler_tick(void)
{
	uint_fast64_t tick = atomic_fetch_add(&sampler.triggers, 1) + 1;

	if (atomic_load(&sampler.gc_running))
		atomic_store(&sampler.gc_tick, tick);
	if (!sampler_tick_ask(tick)) {
		sampler_tick_note(tick);
		rb_postponed_job_trigger(sampler.job);
		sampler_tick_poke();
	}
	sampler_ractor_tick();
	sampler_tick_pause();
}

/* In the timer signal's handler, after a tick: arm the timer for the
 * next tick (sampler_grid_after), unless the tick paused it or it was
 * stopped (a restart arms it afresh). */
static void
sampler_timer_rearm(void)
{
	if (atomic_load(&sampler.timer_state) != SAMPLER_TIMER_ON)
		return;
	sampler_timer_arm(sampler_grid_after(atomic_load(&sampler.timer_grid), util_mono_ns()));
}

/* The timer signal's handler: a tick, or, sent by the worker, the GVL
 * holder's request for a note of its frame (sampler_tick_answer) or a
 * thread of another Ractor's for the job (sampler-ractor.c).  Nothing
 * else. */
static void
sampler_signal_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)sig;
	(void)uc;
	if (si != NULL && si->si_code == SI_TKILL) {
		if (!sampler_tick_answer())
			sampler_ractor_signalled();
	} else {
		atomic_fetch_add(&sampler.in_tick, 1);
		if (!atomic_load(&sampler.ticks_off)) {
			sampler_tick();
			sampler_timer_rearm();
		}
		atomic_fetch_sub(&sampler.in_tick, 1);
	}
	errno = saved;
}

/* The control signal's handler: ask for a snapshot.  Nothing else. */
static void
sampler_control_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)sig;
	(void)si;
	(void)uc;
	atomic_store(&sampler.pending_snapshot, 1);
	rb_postponed_job_trigger(sampler.control_job);
	errno = saved;
}

/* Install HANDLER for signal SIG, the old action kept in *OLD; 0, or -1
 * with a message in ERR. */
static int
sampler_timer_handler(int sig, void (*handler)(int, siginfo_t *, void *),
    struct sigaction *old, char *err, size_t errlen)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, old) == 0)
		return 0;
	snprintf(err, errlen, "cannot install a handler for signal %d: %s", sig,
	    strerror(errno));
	return -1;
}

/* Start or stop the POSIX timer, or the worker's ticking (with the GVL). */
void
sampler_timer_set(int on)
{
	if (sampler.use_signal && !sampler.timer_made)
		return;
	atomic_store(&sampler.timer_anchor, util_mono_ns());
	atomic_store(&sampler.timer_state, on ? SAMPLER_TIMER_ON : SAMPLER_TIMER_OFF);
	if (sampler.use_signal)
		sampler_timer_settime(on);
	else
		sampler_worker_wake();
}

/* Fold every sample of B into the tables, then empty B. */
static void
sampler_aggregate(struct sampler_buffer *b)
{
	uint32_t ids[SAMPLER_MAX_DEPTH];
	size_t i;
	int d;

	for (i = 0; i < b->nsamples; i++) {
		const struct sampler_sample *s = &b->samples[i];
		uint32_t k;

		pthread_mutex_lock(&sampler.table_mutex);
		for (d = 0; d < s->depth; d++)
			ids[d] = agg_frames_intern(&sampler.frames,
			    b->frames[s->frame_off + d], b->owns[s->frame_off + d],
			    b->lines != NULL ? b->lines[s->frame_off + d] : 0);
		k = agg_stacks_add_n(&sampler.stacks, ids, (uint32_t)s->depth,
		    s->thread_seq, s->label_set, s->state, s->weight, s->count);
		if (!sampler.cfg.aggregate && sampler.nraw >= sampler_raw_max()) {
			/* The timeline is full: merged only (see sampler_build). */
			if (sampler.raw_capped++ == 0)
				sampler.raw_capped_at = s->time_ns;
		} else if (!sampler.cfg.aggregate) {
			xgrow((void **)&sampler.raw, &sampler.raw_cap, sampler.nraw + 1,
			    sizeof *sampler.raw);
			sampler.raw[sampler.nraw].stack = k;
			sampler.raw[sampler.nraw].weight = s->weight;
			sampler.raw[sampler.nraw].time_ns = s->time_ns;
			sampler.nraw++;
		}
		if (s->capture != 0)
			sampler_capture_fold(s->capture, k, s->weight, s->count,
			    sampler.cfg.aggregate || sampler.raw_capped ? SIZE_MAX :
			    sampler.nraw - 1);
		pthread_mutex_unlock(&sampler.table_mutex);
	}
	pthread_mutex_lock(&sampler.table_mutex);
	b->nsamples = 0;
	b->nframes = 0;
	b->scanned = 0;
	atomic_store(&b->pending, 0);
	pthread_mutex_unlock(&sampler.table_mutex);
}

/*
 * On the worker, at its start (cpu mode): find out whether the kernel
 * refreshes a perf page when a thread is switched in (cpuclock.c), on
 * this thread, so that the script does not wait for it.  The first perf
 * event a machine opens while it has none costs its opener some 300 us
 * on the VMs here (the kernel turns on its scheduler hooks for perf),
 * which the script's thread paid at start-up when it opened the event
 * for the worker; opened here, the script's own later opening
 * (sampler_thread_open_clock) finds them on.  The event's descriptor
 * lives from the open to the mmap: only while Ruby boots, before the
 * script's first line, can a file the program opens get another number
 * than under ruby for that, and only one that boot code opens; a worker
 * that starts later skips the check (the thread then opens its clock by
 * system call readings until one has run: cpuclock_open_lazy).
 */
static void
sampler_worker_probe(void)
{
	if (atomic_load(&sampler.probe_late) ||
	    !cpuclock_probe_open(&sampler.probe, 0))
		return;
	cpuclock_probe_run(&sampler.probe);
}

/* The worker: folds handed-over buffers; in thread-timer mode, ticks too. */
static void *
sampler_worker_main(void *arg)
{
	int64_t next_tick = 0, tick_at = 0, next_interval = util_mono_ns() + sampler.cfg.interval_ns;
	int64_t arm_at = sampler.cfg.delay_ns > 0 ? sampler.start_mono + sampler.cfg.delay_ns : 0;
	int64_t disarm_at = sampler.cfg.duration_ns > 0 ?
	    sampler.start_mono + sampler.cfg.delay_ns + sampler.cfg.duration_ns : 0;
	int was_ticking = 0, was_slow = 0;
	sigset_t set;

	/* Only the timer signal is ours to take; Ruby's are not. */
	sigfillset(&set);
	if (sampler.use_signal)
		sigdelset(&set, sampler.cfg.signal);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	/* Named for top -H, perf and gdb (and bench/overhead --split). */
	pthread_setname_np(pthread_self(), "rperf-worker");
	sampler_on_worker = 1;
	atomic_store(&sampler.worker_tid, (int)syscall(SYS_gettid));

	pthread_mutex_lock(&sampler.worker_mutex);
	for (;;) {
		/* (Read before anything it looks at: sampler_worker_sleep.) */
		unsigned seq = atomic_load(&sampler.worker_seq);
		int64_t now, stride, deadline = INT64_MAX;
		int ticking;

		if (sampler.quit)
			break;
		if (sampler.probe_ready) {
			sampler.probe_ready = 0;
			sampler.worker_busy = 1;
			pthread_mutex_unlock(&sampler.worker_mutex);
			sampler_worker_probe();
			pthread_mutex_lock(&sampler.worker_mutex);
			sampler.worker_busy = 0;
			pthread_cond_broadcast(&sampler.worker_cond);
			continue;
		}
		if (atomic_load(&sampler.swap_pending)) {
			int standby = atomic_load(&sampler.active) ^ 1;

			sampler.worker_busy = 1;
			pthread_mutex_unlock(&sampler.worker_mutex);
			sampler_aggregate(&sampler.buffers[standby]);
			pthread_mutex_lock(&sampler.worker_mutex);
			sampler.worker_busy = 0;
			atomic_store(&sampler.swap_pending, 0);
			pthread_cond_broadcast(&sampler.worker_cond);
			continue;
		}
		/* The timer thread ticks at absolute times, so no drift, on
		 * the grid of periods from the arming (sampler_timer_resume),
		 * unless its ticks are paused. */
		now = util_mono_ns();
		ticking = !sampler.use_signal && !sampler.cfg.alloc_only &&
		    atomic_load(&sampler.armed) &&
		    atomic_load(&sampler.timer_state) == SAMPLER_TIMER_ON;
		stride = sampler_tick_stride(now);
		/* (Also when the start-up's stride ends: its next tick may
		 * be some periods away.) */
		if (ticking && (!was_ticking || (was_slow && stride == 1))) {
			next_tick = sampler_next_tick(now);
			tick_at = sampler_tick_at(next_tick);
		}
		was_ticking = ticking;
		was_slow = stride > 1;
		if (ticking)
			deadline = tick_at;
		if (sampler.cfg.interval_ns > 0 && next_interval < deadline)
			deadline = next_interval;
		if (arm_at > 0 && arm_at < deadline)
			deadline = arm_at;
		if (disarm_at > 0 && disarm_at < deadline)
			deadline = disarm_at;
		if (sampler_window_due() < deadline)
			deadline = sampler_window_due();
		if (deadline > now)
			sampler_worker_sleep(seq, deadline);
		if (sampler.quit)
			break;
		now = util_mono_ns();
		if (ticking && atomic_load(&sampler.armed) && now >= tick_at) {
			sampler_tick();
			next_tick = sampler_grid_after(next_tick, now);
			tick_at = sampler_tick_at(next_tick);
		}
		if (arm_at > 0 && now >= arm_at) {
			atomic_store(&sampler.pending_arm, 1);
			rb_postponed_job_trigger(sampler.control_job);
			arm_at = 0;
		}
		if (disarm_at > 0 && now >= disarm_at) {
			atomic_store(&sampler.pending_disarm, 1);
			rb_postponed_job_trigger(sampler.control_job);
			disarm_at = 0;
		}
		if (now >= sampler_window_due()) {
			/* Copied by the control job, once every sample is folded. */
			sampler.window_last = now;
			atomic_store(&sampler.pending_window, 1);
			rb_postponed_job_trigger(sampler.control_job);
		}
		if (sampler.cfg.interval_ns > 0 && now >= next_interval) {
			rb_postponed_job_trigger(sampler.interval_job);
			next_interval += sampler.cfg.interval_ns;
			if (next_interval <= now)
				next_interval = now + sampler.cfg.interval_ns;
		}
	}
	pthread_mutex_unlock(&sampler.worker_mutex);
	return NULL;
}

/* Wait until the worker has folded any buffer handed to it. */
void
sampler_wait_worker(void)
{
	if (!sampler.worker_made)
		return;
	pthread_mutex_lock(&sampler.worker_mutex);
	while (atomic_load(&sampler.swap_pending))
		pthread_cond_wait(&sampler.worker_cond, &sampler.worker_mutex);
	pthread_mutex_unlock(&sampler.worker_mutex);
}

/* Fold both buffers into the tables (the worker is idle or gone). */
void
sampler_drain(void)
{
	int active = atomic_load(&sampler.active);

	if (atomic_load(&sampler.swap_pending)) {
		sampler_aggregate(&sampler.buffers[active ^ 1]);
		atomic_store(&sampler.swap_pending, 0);
	}
	sampler_aggregate(&sampler.buffers[active]);
	sampler.swaps++;	/* the active buffer starts afresh */
}

/* A worker told to end and not yet joined. */
static pthread_t sampler_worker_ending;
static int sampler_worker_ending_set;

/*
 * Tell the worker thread to end, noting the CPU time it used.  It is
 * waited for only until it is out of the tables and the clock probe,
 * where it works without worker_mutex, and out of a tick's handler;
 * after that it touches nothing but worker_mutex and worker_cond on its
 * way out (a timer signal still queued for it finds ticks_off).  Joining
 * it at once cost the end of every run two wake-ups across CPUs,
 * 0.35-0.45 ms on the VMs here (the worker woken on its CPU, then this
 * thread by its exit); the profile is built meanwhile instead.
 */
void
sampler_worker_quit(void)
{
	clockid_t cid;
	int64_t ns;

	if (!sampler.worker_made)
		return;
	if (pthread_getcpuclockid(sampler.worker, &cid) == 0 &&
	    sampler_read_clock(cid, &ns) == 0)
		sampler.worker_cpu_ns = (uint64_t)ns;
	atomic_store(&sampler.ticks_off, 1);
	while (atomic_load(&sampler.in_tick) != 0)
		sched_yield();
	pthread_mutex_lock(&sampler.worker_mutex);
	sampler.quit = 1;
	sampler_worker_kick();
	while (sampler.worker_busy)
		pthread_cond_wait(&sampler.worker_cond, &sampler.worker_mutex);
	pthread_mutex_unlock(&sampler.worker_mutex);
	sampler_worker_ending = sampler.worker;
	sampler_worker_ending_set = 1;
	sampler.worker_made = 0;
}

/* See sampler-int.h. */
void
sampler_worker_reap(int forked)
{
	if (sampler_worker_ending_set && !forked)
		pthread_join(sampler_worker_ending, NULL);
	sampler_worker_ending_set = 0;
}

/*
 * Install the signal handlers, start the worker and make the timer
 * (whatever was done is undone by sampler_timer_release).
 *
 * Neither the handlers nor the worker may resolve a symbol lazily.  The
 * dynamic linker marks a thread that resolves one; dlopen (Ruby loads its
 * encodings so while it reads its options) waits until no thread is so
 * marked, sleeping until the thread clears its mark.  A handler that
 * resolved a symbol while interrupting its thread's own resolution cleared
 * the mark early, without the wake-up, and dlopen slept for ever (a run
 * caught so running t0105's table, once in some 20,000).  rperf is linked
 * with -z now, which binds its own calls at load, and the job trigger the
 * handlers and the worker call is made once here, so that whatever libruby
 * resolves on that path is resolved before they exist (the job it asks for
 * finds no tick to serve).
 */
int
sampler_timer_start(char *err, size_t errlen)
{
	struct sigevent sev;

	rb_postponed_job_trigger(sampler.job);
	sampler.tick_seed = profile_mix((uint64_t)util_mono_ns() ^ (uint64_t)getpid());

	if (sampler.cfg.control_signal > 0) {
		if (sampler_timer_handler(sampler.cfg.control_signal, sampler_control_handler,
		    &sampler.old_control_action, err, errlen) != 0)
			return -1;
		sampler.control_set = 1;
	}
	if (sampler.use_signal) {
		if (sampler_timer_handler(sampler.cfg.signal, sampler_signal_handler,
		    &sampler.old_action, err, errlen) != 0)
			return -1;
		sampler.handler_set = 1;
	}
	/* Before the worker exists: it runs the check first thing. */
	sampler.probe_ready = sampler.cfg.mode == SAMPLER_CPU;
	if (pthread_create(&sampler.worker, NULL, sampler_worker_main, NULL) != 0) {
		snprintf(err, errlen, "cannot start the sampler thread: %s", strerror(errno));
		return -1;
	}
	sampler.worker_made = 1;
	/* Without a signal the worker is the timer: nothing to wait for (a
	 * new thread's first run is some 0.3-0.7 ms away on the VMs here,
	 * paid before the script's first line), and what it is told before
	 * it runs it finds in its first look at the state. */
	if (!sampler.use_signal)
		return 0;
	/* The worker says who it is: the timer's signal goes to it. */
	while (atomic_load(&sampler.worker_tid) == 0)
		sched_yield();
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sampler.cfg.signal;
	sev._sigev_un._tid = atomic_load(&sampler.worker_tid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &sampler.timer) != 0) {
		snprintf(err, errlen, "cannot create the sampling timer: %s", strerror(errno));
		return -1;
	}
	sampler.timer_made = 1;
	return 0;
}

/* Delete the timer, stop the worker, restore the signal handlers. */
void
sampler_timer_release(void)
{
	if (sampler.timer_made) {
		timer_delete(sampler.timer);
		sampler.timer_made = 0;
	}
	sampler_worker_quit();
	/* Gone before the signal's old action is back: by now (the profile
	 * built) it normally is, and the join costs nothing.  Linux discards a
	 * signal still queued for it when the action becomes SIG_IGN, but
	 * valgrind, which holds signals back to deliver them itself, does
	 * not, and its worker was ended by the default action. */
	sampler_worker_reap(0);
	cpuclock_close(&sampler.probe);	/* if the worker did not get to it */
	if (sampler.handler_set) {
		sampler_ractor_quiesce(sampler.cfg.signal);
		sigaction(sampler.cfg.signal, &sampler.old_action, NULL);
		sampler.handler_set = 0;
	}
	if (sampler.control_set) {
		sigaction(sampler.cfg.control_signal, &sampler.old_control_action, NULL);
		sampler.control_set = 0;
	}
}

/* Free the buffers and the tables (the worker is gone); with DROP (in a
 * forked child, of its parent's) forget the large ones instead, see
 * sampler_teardown. */
void
sampler_tables_release(int drop)
{
	int i;

	if (!drop) {
		for (i = 0; i < 2; i++) {
			free(sampler.buffers[i].samples);
			free(sampler.buffers[i].frames);
			free(sampler.buffers[i].owns);
			free(sampler.buffers[i].marks);
			free(sampler.buffers[i].lines);
		}
		agg_frames_release(&sampler.frames);
		agg_stacks_release(&sampler.stacks);
		free(sampler.raw);
	}
	memset(sampler.buffers, 0, sizeof sampler.buffers);
	memset(&sampler.frames, 0, sizeof sampler.frames);
	memset(&sampler.stacks, 0, sizeof sampler.stacks);
	sampler_captures_release();
	sampler_marks_release();
	sampler_resolved_release(drop);
	sampler.raw = NULL;
	sampler.nraw = sampler.raw_cap = 0;
	sampler.raw_capped = 0;
}
