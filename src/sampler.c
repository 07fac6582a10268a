/*
 * sampler.c: the safepoint sampler (see sampler.h for the idea).
 *
 * Who runs what:
 * - The timer (a POSIX timer whose real-time signal goes to the worker
 *   thread, or the worker thread itself sleeping between ticks) only
 *   counts the tick and triggers the postponed job.  The signal handler
 *   touches no Ruby API and allocates nothing.
 * - The postponed job runs on the thread holding the GVL at a safepoint:
 *   it bills the thread's clock since its previous sample to the current
 *   stack and appends the raw frame VALUEs to the active sample buffer.
 *   No Ruby object is made and no string is built there.
 * - The GVL hooks (wall mode) and the GC hooks split time into labelled
 *   samples: off the GVL (%GVL=blocked), waiting for it (%GVL=wait), GC
 *   marking and sweeping (%GC=mark, %GC=sweep).  The hooks that run
 *   without the GVL (SUSPENDED, READY) only store timestamps in the
 *   thread's own record.  The stack is taken when the thread gets the GVL
 *   back: it cannot have changed while the thread ran no Ruby code.
 * - The worker thread (no GVL, not a Ruby thread) folds full buffers into
 *   the frame table (frame VALUE and line -> id) and the stack table
 *   (frame ids, thread, label set, VM state -> weight), so memory grows
 *   with unique stacks, not with run time.
 * - Frame VALUEs held here are marked for the GC (pinned, so compaction
 *   cannot move them) until the profile is built, where they are resolved
 *   to names with the GVL held.
 *
 * Billing: each thread keeps `prev`, the reading of its clock (its CPU
 * clock in cpu mode, CLOCK_MONOTONIC in wall mode) up to which its time
 * has been billed.  Every sample bills [prev, now) and moves prev to now;
 * GC samples bill the GC's own span and push prev forward by as much, so
 * the next timer sample does not bill it again.  The arithmetic of both
 * splits, around a GVL release and across a GC, is in aggregate.c.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <ruby.h>
#include <ruby/debug.h>
#include <ruby/thread.h>

#include "aggregate.h"
#include "cpuclock.h"
#include "profile.h"
#include "sampler.h"
#include "util.h"
#include "xmalloc.h"

/* Buffer this many samples before handing them to the worker. */
#define SAMPLER_SWAP_THRESHOLD	1024

/* One sample as the job records it: raw frames, not yet interned. */
struct sampler_sample {
	size_t frame_off;
	int depth;
	int thread_seq;
	int label_set;
	int state;
	int64_t weight;
	int64_t time_ns;	/* since start, for --no-aggregate */
};

struct sampler_buffer {
	struct sampler_sample *samples;
	size_t nsamples, samples_cap;
	VALUE *frames;
	int *lines;
	size_t nframes, frames_cap;
};

/* Per Ruby thread; lives in the thread's specific storage. */
struct sampler_thread {
	VALUE thread;
	int seq;
	clockid_t cpu_clock;	/* this thread's CPU clock, readable anywhere */
	/* The fast reading of the same clock, on this thread only; its
	 * origin moved onto cpu_clock's by clock_offset. */
	struct cpuclock clock;
	int64_t clock_offset;
	int clock_open;
	int64_t prev;		/* clock reading billed up to */
	int label_set;
	/* Set without the GVL by SUSPENDED/READY, read at RESUMED. */
	int suspended;
	int64_t suspended_at;
	int64_t ready_at;
	/* The stack last captured on this thread (for the job, the hooks
	 * and the time left at exit or stop). */
	int depth;
	VALUE stack[SAMPLER_MAX_DEPTH];
	int lines[SAMPLER_MAX_DEPTH];
	struct sampler_thread *next;
	struct sampler_thread **pprev;
};

/* One sample kept whole with --no-aggregate. */
struct sampler_raw {
	uint32_t stack;
	int64_t weight;
	int64_t time_ns;
};

struct sampler_thread_name {
	int seq;
	char *name;
};

struct sampler {
	struct sampler_config cfg;
	int started;
	/* Set in a forked child (pthread_atfork), where nothing is sampled:
	 * a flag, not getpid(), because getpid() is a system call and the
	 * hooks check this on every event. */
	volatile int forked;
	atomic_int armed;		/* the timer runs and hooks record */
	atomic_int building;		/* a profile is being built: job idles */
	int profile_depth;		/* nested Rperf.profile blocks */

	rb_postponed_job_handle_t job;
	rb_postponed_job_handle_t interval_job;
	rb_postponed_job_handle_t control_job;
	atomic_int pending_arm;		/* for the control job */
	atomic_int pending_disarm;
	atomic_int pending_snapshot;
	struct sigaction old_control_action;
	int control_set;
	int64_t sent_real_ns;		/* CLOCK_REALTIME of the last interval's end */
	size_t raw_sent;		/* raw samples handed out as intervals */
	rb_internal_thread_specific_key_t key;
	rb_internal_thread_event_hook_t *gvl_hook;
	int event_hooks;
	VALUE wrapper;			/* marks our frames for the GC */

	/* timer */
	int use_signal;
	timer_t timer;
	int timer_made;
	struct sigaction old_action;
	int handler_set;
	pthread_t worker;
	int worker_made;
	atomic_int worker_tid;

	/* worker hand-off */
	pthread_mutex_t worker_mutex;
	pthread_cond_t worker_cond;
	int quit;
	atomic_int swap_pending;	/* the standby buffer awaits the worker */
	atomic_int active;		/* buffer the job writes */
	struct sampler_buffer buffers[2];

	/* aggregate; table_mutex guards it and the standby buffer against
	 * the GC's mark function while the worker changes them */
	pthread_mutex_t table_mutex;
	struct agg_frames frames;
	struct agg_stacks stacks;
	struct sampler_raw *raw;
	size_t nraw, raw_cap;

	/* threads */
	struct sampler_thread *threads;
	int next_seq;
	struct sampler_thread_name *names;
	size_t nnames, names_cap;

	/* GC window in progress */
	struct agg_gc_window gc;
	struct sampler_thread *gc_td;	/* the thread billed for it */
	int gc_captured;		/* gc_td's stack is taken */

	/* metadata */
	int64_t start_real_ns;		/* CLOCK_REALTIME at start */
	int64_t start_mono;
	char **comments;
	size_t ncomments, comments_cap;

	/* stats */
	atomic_uint_fast64_t triggers;
	uint64_t samples;
	uint64_t timer_samples;
	uint64_t job_ns;
	uint64_t nthreads;
	uint64_t worker_cpu_ns;		/* read before the worker exits */
};

static struct sampler sampler;
static void sampler_interval_job(void *arg);
static void sampler_control_job(void *arg);
/* A GVL hook left installed in a forked child (see sampler_teardown),
 * reused when the child samples again. */
static rb_internal_thread_event_hook_t *sampler_orphan_gvl_hook;
static int sampler_atfork_set;
static int sampler_key_made;

static const rb_data_type_t sampler_wrapper_type;

/* Read clock ID in nanoseconds into *NS; 0, or -1 (nothing read). */
static int
sampler_read_clock(clockid_t id, int64_t *ns)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return -1;
	*ns = (int64_t)ts.tv_sec * UTIL_NS_PER_SEC + ts.tv_nsec;
	return 0;
}

/* The real time now, in ns since the epoch. */
static int64_t
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
static int64_t
sampler_period_ns(void)
{
	return UTIL_NS_PER_SEC / sampler.cfg.frequency;
}

/* The reading of TD's billing clock: its CPU clock or the wall clock. */
static int64_t
sampler_clock(const struct sampler_thread *td)
{
	int64_t now;

	if (sampler.cfg.mode == SAMPLER_WALL)
		return util_mono_ns();
	if (sampler_read_clock(td->cpu_clock, &now) != 0)
		return td->prev;	/* the thread is gone: nothing more to bill */
	return now;
}

/* TD's billing clock read on TD's own thread: the fast CPU clock. */
static int64_t
sampler_clock_self(struct sampler_thread *td)
{
	if (sampler.cfg.mode == SAMPLER_WALL || !td->clock_open)
		return sampler_clock(td);
	return cpuclock_read(&td->clock) + td->clock_offset;
}

/* The default timer signal, SIGRTMIN+8. */
int
sampler_default_signal(void)
{
	return SIGRTMIN + 8;
}

/* ------------------------------------------------------------------ */
/* Sample buffers (written by the job and hooks, with the GVL)        */
/* ------------------------------------------------------------------ */

/* Append one sample of TD's current stack to the active buffer. */
static void
sampler_record(struct sampler_thread *td, int64_t weight, int state)
{
	struct sampler_buffer *b;
	struct sampler_sample *s;
	int active;

	if (weight <= 0)
		return;
	active = atomic_load(&sampler.active);
	b = &sampler.buffers[active];
	xgrow((void **)&b->samples, &b->samples_cap, b->nsamples + 1, sizeof *b->samples);
	if (b->nframes + (size_t)td->depth > b->frames_cap) {
		size_t cap = b->frames_cap;

		xgrow((void **)&b->frames, &cap, b->nframes + td->depth, sizeof *b->frames);
		b->lines = xrealloc(b->lines, cap * sizeof *b->lines);
		b->frames_cap = cap;
	}
	if (td->depth > 0) {	/* the buffers may still be NULL */
		memcpy(b->frames + b->nframes, td->stack, td->depth * sizeof(VALUE));
		memcpy(b->lines + b->nframes, td->lines, td->depth * sizeof(int));
	}
	s = &b->samples[b->nsamples++];
	s->frame_off = b->nframes;
	s->depth = td->depth;
	s->thread_seq = td->seq;
	s->label_set = td->label_set;
	s->state = state;
	s->weight = weight;
	s->time_ns = sampler.cfg.aggregate ? 0 : util_mono_ns() - sampler.start_mono;
	b->nframes += td->depth;
	sampler.samples++;

	/* Hand a full buffer to the worker when it is free. */
	if (b->nsamples >= SAMPLER_SWAP_THRESHOLD && sampler.worker_made &&
	    !atomic_load(&sampler.swap_pending)) {
		pthread_mutex_lock(&sampler.worker_mutex);
		atomic_store(&sampler.active, active ^ 1);
		atomic_store(&sampler.swap_pending, 1);
		pthread_cond_signal(&sampler.worker_cond);
		pthread_mutex_unlock(&sampler.worker_mutex);
	}
}

/* Capture TD's stack into TD (SELF: TD is the current thread; else
 * another thread's, with the GVL). */
static void
sampler_capture(struct sampler_thread *td, int self)
{
	int *lines = sampler.cfg.lines ? td->lines : NULL;
	int depth = self ?
	    rb_profile_frames(0, SAMPLER_MAX_DEPTH, td->stack, lines) :
	    rb_profile_thread_frames(td->thread, 0, SAMPLER_MAX_DEPTH, td->stack, lines);

	if (depth < 0)
		depth = 0;
	if (!sampler.cfg.lines)
		memset(td->lines, 0, depth * sizeof(int));
	td->depth = depth;
}

/*
 * Capture TD's stack (SELF: TD is the current thread) for billing the
 * rest of its time; where no Ruby frame is left (a thread's end, the end
 * proc at stop), the last stack it was seen with is billed instead.
 */
static void
sampler_capture_or_keep(struct sampler_thread *td, int self)
{
	int depth = td->depth;

	sampler_capture(td, self);
	if (td->depth == 0)
		td->depth = depth;
}

/* ------------------------------------------------------------------ */
/* Threads                                                            */
/* ------------------------------------------------------------------ */

/* The record of THREAD, or NULL. */
static struct sampler_thread *
sampler_thread_get(VALUE thread)
{
	return rb_internal_thread_specific_get(thread, sampler.key);
}

/* Make the record of the current thread (with the GVL, on that thread). */
static struct sampler_thread *
sampler_thread_create(VALUE thread)
{
	struct sampler_thread *td = xcalloc(1, sizeof *td);

	td->thread = thread;
	td->seq = ++sampler.next_seq;
	if (pthread_getcpuclockid(pthread_self(), &td->cpu_clock) != 0)
		td->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
	if (sampler.cfg.mode == SAMPLER_CPU) {
		int64_t now = 0;

		cpuclock_open(&td->clock);
		sampler_read_clock(td->cpu_clock, &now);
		td->clock_offset = now - cpuclock_read(&td->clock);
		td->clock_open = 1;
	}
	td->prev = sampler_clock_self(td);
	td->next = sampler.threads;
	if (td->next != NULL)
		td->next->pprev = &td->next;
	td->pprev = &sampler.threads;
	sampler.threads = td;
	sampler.nthreads++;
	rb_internal_thread_specific_set(thread, sampler.key, td);
	return td;
}

/* The current thread's record, made if needed. */
static struct sampler_thread *
sampler_thread_current(void)
{
	VALUE thread = rb_thread_current();
	struct sampler_thread *td = sampler_thread_get(thread);

	return td != NULL ? td : sampler_thread_create(thread);
}

/* Remember TD's thread name (Thread#name) for the profile. */
static VALUE
sampler_thread_name_body(VALUE arg)
{
	return rb_funcall((VALUE)arg, rb_intern("name"), 0);
}

static void
sampler_thread_save_name(struct sampler_thread *td)
{
	VALUE name;
	size_t i;
	int state = 0;

	name = rb_protect(sampler_thread_name_body, td->thread, &state);
	if (state != 0) {
		rb_set_errinfo(Qnil);
		return;
	}
	if (!RB_TYPE_P(name, T_STRING))
		return;
	for (i = 0; i < sampler.nnames; i++) {
		if (sampler.names[i].seq == td->seq) {
			free(sampler.names[i].name);
			sampler.names[i].name = xstrndup(RSTRING_PTR(name), RSTRING_LEN(name));
			return;
		}
	}
	xgrow((void **)&sampler.names, &sampler.names_cap, sampler.nnames + 1,
	    sizeof *sampler.names);
	sampler.names[sampler.nnames].seq = td->seq;
	sampler.names[sampler.nnames].name = xstrndup(RSTRING_PTR(name), RSTRING_LEN(name));
	sampler.nnames++;
}

/* Unlink and free TD (with the GVL). */
static void
sampler_thread_free(struct sampler_thread *td)
{
	rb_internal_thread_specific_set(td->thread, sampler.key, NULL);
	*td->pprev = td->next;
	if (td->next != NULL)
		td->next->pprev = td->pprev;
	if (td->clock_open)
		cpuclock_close(&td->clock);
	free(td);
}

/*
 * Bill what TD has not been billed up to NOW.  A thread off the GVL is
 * billed as the RESUMED hook would: running up to the suspension, then
 * blocked and waiting (wall mode).  Stack: CAPTURED already holds it.
 */
static void
sampler_bill_rest(struct sampler_thread *td, int64_t now)
{
	if (sampler.cfg.mode == SAMPLER_WALL && td->suspended) {
		struct agg_gvl_split split;

		agg_split_gvl(td->prev, td->suspended_at, td->ready_at, now, &split);
		sampler_record(td, split.running, AGG_STATE_NORMAL);
		sampler_record(td, split.blocked, AGG_STATE_GVL_BLOCKED);
		sampler_record(td, split.wait, AGG_STATE_GVL_WAIT);
		td->suspended = 0;
	} else {
		sampler_record(td, now - td->prev, AGG_STATE_NORMAL);
	}
	td->prev = now;
}

/* Bill the rest of TD's time (SELF: TD is the current thread) to the
 * stack it has now, or to its last one where no Ruby frame is left. */
static void
sampler_bill_last(struct sampler_thread *td, int self)
{
	sampler_capture_or_keep(td, self);
	sampler_bill_rest(td, self ? sampler_clock_self(td) : sampler_clock(td));
}

/* ------------------------------------------------------------------ */
/* The job and the hooks                                              */
/* ------------------------------------------------------------------ */

/* The postponed job: one timer sample of the thread holding the GVL. */
static void
sampler_job(void *arg)
{
	struct sampler_thread *td;
	int64_t t0, now;

	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    sampler.forked)
		return;
	t0 = util_mono_ns();
	td = sampler_thread_current();
	now = sampler_clock_self(td);
	if (now > td->prev) {
		sampler_capture(td, 1);
		sampler_record(td, now - td->prev, AGG_STATE_NORMAL);
		td->prev = now;
		sampler.timer_samples++;
	}
	sampler.job_ns += (uint64_t)(util_mono_ns() - t0);
}

/* GVL hook (wall mode).  Only RESUMED holds the GVL. */
static void
sampler_gvl_hook(rb_event_flag_t event, const rb_internal_thread_event_data_t *data,
    void *arg)
{
	struct sampler_thread *td;
	int64_t now;

	if (!atomic_load(&sampler.armed) || sampler.forked ||
	    sampler.cfg.mode != SAMPLER_WALL)
		return;
	td = sampler_thread_get(data->thread);
	if (event & RUBY_INTERNAL_THREAD_EVENT_SUSPENDED) {
		if (td != NULL) {
			td->suspended_at = util_mono_ns();
			td->ready_at = 0;
			td->suspended = 1;
		}
		return;
	}
	if (event & RUBY_INTERNAL_THREAD_EVENT_READY) {
		if (td != NULL)
			td->ready_at = util_mono_ns();
		return;
	}
	/* RESUMED, with the GVL. */
	if (atomic_load(&sampler.building))
		return;
	if (td == NULL) {
		if (data->thread != rb_thread_current())
			return;
		sampler_thread_create(data->thread);
		return;
	}
	if (!td->suspended)
		return;
	now = util_mono_ns();
	sampler_capture(td, data->thread == rb_thread_current());
	sampler_bill_rest(td, now);
}

/* The window event of GC hook event EVENT. */
static enum agg_gc_event
sampler_gc_event(rb_event_flag_t event)
{
	if (event & RUBY_INTERNAL_EVENT_GC_ENTER)
		return AGG_GC_ENTER;
	if (event & RUBY_INTERNAL_EVENT_GC_START)
		return AGG_GC_START;
	if (event & RUBY_INTERNAL_EVENT_GC_END_MARK)
		return AGG_GC_END_MARK;
	if (event & RUBY_INTERNAL_EVENT_GC_END_SWEEP)
		return AGG_GC_END_SWEEP;
	return AGG_GC_EXIT;
}

/* GC hook: bills each GC window to the thread that entered it, split
 * into mark and sweep spans (see agg_gc_event for the arithmetic). */
static void
sampler_gc_hook(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
	enum agg_gc_event ev = sampler_gc_event(event);
	struct sampler_thread *td;
	int64_t w;
	int state;

	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    sampler.forked)
		return;
	if (ev == AGG_GC_ENTER) {
		td = sampler_thread_get(rb_thread_current());
		sampler.gc_td = td;
		sampler.gc_captured = 0;
		agg_gc_enter(&sampler.gc, td != NULL, td != NULL ? sampler_clock_self(td) : 0);
		return;
	}
	td = sampler.gc_td;
	if (!agg_gc_bills(&sampler.gc, ev)) {
		agg_gc_event(&sampler.gc, ev, 0, NULL, &state);
	} else if ((w = agg_gc_event(&sampler.gc, ev, sampler_clock_self(td), &td->prev,
	    &state)) > 0) {
		if (!sampler.gc_captured) {
			sampler_capture(td, 1);
			sampler.gc_captured = 1;
		}
		sampler_record(td, w, state);
	}
	if (ev == AGG_GC_EXIT)
		sampler.gc_td = NULL;
}

/* Thread begin/end hook (with the GVL, on the thread itself). */
static void
sampler_thread_hook(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
	VALUE thread;
	struct sampler_thread *td;

	if (!sampler.started || sampler.forked)
		return;
	thread = rb_thread_current();
	td = sampler_thread_get(thread);
	if (event & RUBY_EVENT_THREAD_BEGIN) {
		if (td == NULL)
			sampler_thread_create(thread);
		return;
	}
	/* THREAD_END: bill the rest of the thread's life and drop it. */
	if (td == NULL)
		return;
	if (atomic_load(&sampler.armed) && !atomic_load(&sampler.building))
		sampler_bill_last(td, 1);
	sampler_thread_save_name(td);
	sampler_thread_free(td);
}

/* ------------------------------------------------------------------ */
/* The timer                                                          */
/* ------------------------------------------------------------------ */

/* The timer signal's handler: count and ask for a sample. Nothing else. */
static void
sampler_signal_handler(int sig)
{
	int saved = errno;

	atomic_fetch_add(&sampler.triggers, 1);
	rb_postponed_job_trigger(sampler.job);
	errno = saved;
}

/* The control signal's handler: ask for a snapshot.  Nothing else. */
static void
sampler_control_handler(int sig)
{
	int saved = errno;

	atomic_store(&sampler.pending_snapshot, 1);
	rb_postponed_job_trigger(sampler.control_job);
	errno = saved;
}

/* Start or stop the POSIX timer. */
static void
sampler_timer_set(int on)
{
	struct itimerspec its;

	if (!sampler.timer_made)
		return;
	memset(&its, 0, sizeof its);
	if (on) {
		its.it_value = sampler_timespec(sampler_period_ns());
		its.it_interval = its.it_value;
	}
	timer_settime(sampler.timer, 0, &its, NULL);
}

/* ------------------------------------------------------------------ */
/* Aggregation (the worker, or the GVL holder at stop and snapshot)   */
/* ------------------------------------------------------------------ */

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
			    b->frames[s->frame_off + d], b->lines[s->frame_off + d]);
		k = agg_stacks_add(&sampler.stacks, ids, (uint32_t)s->depth,
		    s->thread_seq, s->label_set, s->state, s->weight);
		if (!sampler.cfg.aggregate) {
			xgrow((void **)&sampler.raw, &sampler.raw_cap, sampler.nraw + 1,
			    sizeof *sampler.raw);
			sampler.raw[sampler.nraw].stack = k;
			sampler.raw[sampler.nraw].weight = s->weight;
			sampler.raw[sampler.nraw].time_ns = s->time_ns;
			sampler.nraw++;
		}
		pthread_mutex_unlock(&sampler.table_mutex);
	}
	pthread_mutex_lock(&sampler.table_mutex);
	b->nsamples = 0;
	b->nframes = 0;
	pthread_mutex_unlock(&sampler.table_mutex);
}

/* The worker: folds handed-over buffers; in thread-timer mode, ticks too. */
static void *
sampler_worker_main(void *arg)
{
	int64_t period = sampler_period_ns();
	int64_t next_tick = 0, next_interval = util_mono_ns() + sampler.cfg.interval_ns;
	int64_t arm_at = sampler.cfg.delay_ns > 0 ? sampler.start_mono + sampler.cfg.delay_ns : 0;
	int64_t disarm_at = sampler.cfg.duration_ns > 0 ?
	    sampler.start_mono + sampler.cfg.delay_ns + sampler.cfg.duration_ns : 0;
	int was_ticking = 0;
	sigset_t set;

	/* Only the timer signal is ours to take; Ruby's are not. */
	sigfillset(&set);
	if (sampler.use_signal)
		sigdelset(&set, sampler.cfg.signal);
	pthread_sigmask(SIG_SETMASK, &set, NULL);
	atomic_store(&sampler.worker_tid, (int)syscall(SYS_gettid));

	pthread_mutex_lock(&sampler.worker_mutex);
	while (!sampler.quit) {
		int64_t now, deadline = INT64_MAX;
		int ticking;

		if (atomic_load(&sampler.swap_pending)) {
			int standby = atomic_load(&sampler.active) ^ 1;

			pthread_mutex_unlock(&sampler.worker_mutex);
			sampler_aggregate(&sampler.buffers[standby]);
			pthread_mutex_lock(&sampler.worker_mutex);
			atomic_store(&sampler.swap_pending, 0);
			pthread_cond_broadcast(&sampler.worker_cond);
			continue;
		}
		/* The timer thread ticks at absolute times, so no drift. */
		now = util_mono_ns();
		ticking = !sampler.use_signal && atomic_load(&sampler.armed);
		if (ticking && !was_ticking)
			next_tick = now + period;
		was_ticking = ticking;
		if (ticking)
			deadline = next_tick;
		if (sampler.cfg.interval_ns > 0 && next_interval < deadline)
			deadline = next_interval;
		if (arm_at > 0 && arm_at < deadline)
			deadline = arm_at;
		if (disarm_at > 0 && disarm_at < deadline)
			deadline = disarm_at;
		if (deadline == INT64_MAX) {
			pthread_cond_wait(&sampler.worker_cond, &sampler.worker_mutex);
		} else if (deadline > now) {
			struct timespec ts = sampler_timespec(deadline);

			pthread_cond_timedwait(&sampler.worker_cond, &sampler.worker_mutex, &ts);
		}
		if (sampler.quit)
			break;
		now = util_mono_ns();
		if (ticking && atomic_load(&sampler.armed) && now >= next_tick) {
			atomic_fetch_add(&sampler.triggers, 1);
			rb_postponed_job_trigger(sampler.job);
			next_tick += period;
			/* Far behind (the machine was busy): skip missed ticks. */
			if (now - next_tick > 10 * period)
				next_tick = now + period;
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

/* ------------------------------------------------------------------ */
/* GC marking of frames we hold                                       */
/* ------------------------------------------------------------------ */

/* Mark every frame VALUE we hold (pinning them: we keep raw VALUEs). */
static void
sampler_mark(void *ptr)
{
	struct sampler_thread *td;
	int i;

	if (!sampler.started || sampler.forked)
		return;
	pthread_mutex_lock(&sampler.table_mutex);
	for (i = 0; i < 2; i++) {
		if (sampler.buffers[i].nframes > 0)
			rb_gc_mark_locations(sampler.buffers[i].frames,
			    sampler.buffers[i].frames + sampler.buffers[i].nframes);
	}
	if (sampler.frames.count > 0)
		rb_gc_mark_locations((const VALUE *)sampler.frames.keys,
		    (const VALUE *)sampler.frames.keys + sampler.frames.count);
	pthread_mutex_unlock(&sampler.table_mutex);
	for (td = sampler.threads; td != NULL; td = td->next) {
		if (td->depth > 0)
			rb_gc_mark_locations(td->stack, td->stack + td->depth);
	}
}

static const rb_data_type_t sampler_wrapper_type = {
	.wrap_struct_name = "rperf_sampler",
	.function = { .dmark = sampler_mark },
	.flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* ------------------------------------------------------------------ */
/* Fork                                                               */
/* ------------------------------------------------------------------ */

/* Make the locks (afresh in a forked child, where a thread that is gone
 * may hold them); the worker's waits are on CLOCK_MONOTONIC. */
static void
sampler_locks_init(void)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&sampler.worker_mutex, NULL);
	pthread_mutex_init(&sampler.table_mutex, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sampler.worker_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* Before a fork: wait until the worker is out of the tables, where it
 * allocates, so that no allocator lock is held across the fork by a
 * thread the child will not have (glibc's malloc guards itself; the
 * sanitizers' allocators of older compilers do not). */
static void
sampler_atfork_prepare(void)
{
	if (sampler.started && !sampler.forked)
		pthread_mutex_lock(&sampler.table_mutex);
}

/* After a fork, in the parent: let the worker go on. */
static void
sampler_atfork_parent(void)
{
	if (sampler.started && !sampler.forked)
		pthread_mutex_unlock(&sampler.table_mutex);
}

/* In a forked child the timer and worker are gone and the locks may be
 * held by a thread that no longer exists: make them usable, sample nothing. */
static void
sampler_atfork_child(void)
{
	if (!sampler.started)
		return;
	sampler.forked = 1;
	atomic_store(&sampler.armed, 0);
	sampler_locks_init();
	sampler.worker_made = 0;
	sampler.timer_made = 0;
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                     */
/* ------------------------------------------------------------------ */

/* Reset every thread's baseline to now (the timer is being armed). */
static void
sampler_reset_baselines(void)
{
	struct sampler_thread *td;

	VALUE current = rb_thread_current();

	for (td = sampler.threads; td != NULL; td = td->next) {
		td->prev = td->thread == current ? sampler_clock_self(td) : sampler_clock(td);
		td->suspended = 0;
	}
}

/* Arm or disarm sampling. */
static void
sampler_arm(int on)
{
	if (on) {
		sampler_reset_baselines();
		atomic_store(&sampler.armed, 1);
		if (sampler.use_signal)
			sampler_timer_set(1);
		else {
			pthread_mutex_lock(&sampler.worker_mutex);
			pthread_cond_broadcast(&sampler.worker_cond);
			pthread_mutex_unlock(&sampler.worker_mutex);
		}
	} else {
		if (sampler.use_signal)
			sampler_timer_set(0);
		atomic_store(&sampler.armed, 0);
	}
}

/* Stop the worker thread and wait for it to end. */
static void
sampler_worker_quit(void)
{
	if (!sampler.worker_made)
		return;
	pthread_mutex_lock(&sampler.worker_mutex);
	sampler.quit = 1;
	pthread_cond_broadcast(&sampler.worker_cond);
	pthread_mutex_unlock(&sampler.worker_mutex);
	pthread_join(sampler.worker, NULL);
	sampler.worker_made = 0;
}

/* Remove the GVL, GC and thread hooks. */
static void
sampler_hooks_remove(void)
{
	/* In a forked child the GVL hook stays, inert: removing it takes a
	 * lock that a thread of the parent may have held at the fork, and
	 * Ruby does not reset it. */
	if (sampler.gvl_hook != NULL && !sampler.forked)
		rb_internal_thread_remove_event_hook(sampler.gvl_hook);
	else if (sampler.gvl_hook != NULL)
		sampler_orphan_gvl_hook = sampler.gvl_hook;
	sampler.gvl_hook = NULL;
	if (sampler.event_hooks) {
		rb_remove_event_hook(sampler_gc_hook);
		rb_remove_event_hook(sampler_thread_hook);
		sampler.event_hooks = 0;
	}
}

/* Bill the current thread up to now, then disarm (the end of a profile
 * block or of --duration). */
static void
sampler_disarm_here(void)
{
	struct sampler_thread *td = sampler_thread_current();

	sampler_capture(td, 1);
	sampler_bill_rest(td, sampler_clock_self(td));
	sampler_arm(0);
}

/* Undo whatever sampler_start did so far; used on failure and at stop. */
static void
sampler_teardown(void)
{
	int i;

	atomic_store(&sampler.armed, 0);
	if (sampler.timer_made) {
		timer_delete(sampler.timer);
		sampler.timer_made = 0;
	}
	sampler_worker_quit();
	if (sampler.handler_set) {
		sigaction(sampler.cfg.signal, &sampler.old_action, NULL);
		sampler.handler_set = 0;
	}
	sampler_hooks_remove();
	if (sampler.control_set) {
		sigaction(sampler.cfg.control_signal, &sampler.old_control_action, NULL);
		sampler.control_set = 0;
	}
	while (sampler.threads != NULL)
		sampler_thread_free(sampler.threads);
	for (i = 0; i < 2; i++) {
		free(sampler.buffers[i].samples);
		free(sampler.buffers[i].frames);
		free(sampler.buffers[i].lines);
	}
	memset(sampler.buffers, 0, sizeof sampler.buffers);
	agg_frames_release(&sampler.frames);
	agg_stacks_release(&sampler.stacks);
	free(sampler.raw);
	sampler.raw = NULL;
	sampler.nraw = sampler.raw_cap = 0;
	for (i = 0; i < (int)sampler.nnames; i++)
		free(sampler.names[i].name);
	free(sampler.names);
	sampler.names = NULL;
	sampler.nnames = sampler.names_cap = 0;
	for (i = 0; i < (int)sampler.ncomments; i++)
		free(sampler.comments[i]);
	free(sampler.comments);
	sampler.comments = NULL;
	sampler.ncomments = sampler.comments_cap = 0;
	if (sampler.wrapper != Qfalse) {
		DATA_PTR(sampler.wrapper) = NULL;
		rb_gc_unregister_address(&sampler.wrapper);
		sampler.wrapper = Qfalse;
	}
	sampler.started = 0;
}

/* Install the hooks; arm the timer unless deferred. */
int
sampler_start(const struct sampler_config *cfg, char *err, size_t errlen)
{
	struct sigaction sa;
	struct sigevent sev;

	if (sampler.started) {
		snprintf(err, errlen, "the sampler is already running");
		return -1;
	}
	memset(&sampler, 0, sizeof sampler);
	sampler.cfg = *cfg;
	sampler.wrapper = Qfalse;
	sampler.use_signal = cfg->signal > 0;
	sampler_locks_init();
	sampler.start_real_ns = sampler_real_ns();
	sampler.start_mono = util_mono_ns();
	sampler.sent_real_ns = sampler.start_real_ns;

	sampler.job = rb_postponed_job_preregister(0, sampler_job, NULL);
	sampler.interval_job = rb_postponed_job_preregister(0, sampler_interval_job, NULL);
	sampler.control_job = rb_postponed_job_preregister(0, sampler_control_job, NULL);
	if (sampler.job == POSTPONED_JOB_HANDLE_INVALID ||
	    sampler.interval_job == POSTPONED_JOB_HANDLE_INVALID ||
	    sampler.control_job == POSTPONED_JOB_HANDLE_INVALID) {
		snprintf(err, errlen, "cannot register the sampling job: Ruby's job table is full");
		return -1;
	}
	if (!sampler_key_made) {
		sampler.key = rb_internal_thread_specific_key_create();
		sampler_key_made = 1;
	}
	if (!sampler_atfork_set) {
		pthread_atfork(sampler_atfork_prepare, sampler_atfork_parent,
		    sampler_atfork_child);
		sampler_atfork_set = 1;
	}
	sampler.wrapper = TypedData_Wrap_Struct(0, &sampler_wrapper_type, &sampler);
	rb_gc_register_address(&sampler.wrapper);
	sampler.started = 1;

	sampler_thread_create(rb_thread_current());
	rb_add_event_hook(sampler_gc_hook,
	    RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK |
	    RUBY_INTERNAL_EVENT_GC_END_SWEEP | RUBY_INTERNAL_EVENT_GC_ENTER |
	    RUBY_INTERNAL_EVENT_GC_EXIT, Qnil);
	rb_add_event_hook(sampler_thread_hook,
	    RUBY_EVENT_THREAD_BEGIN | RUBY_EVENT_THREAD_END, Qnil);
	sampler.event_hooks = 1;
	if (sampler_orphan_gvl_hook != NULL) {
		/* Left by the parent in this forked child: it is ours. */
		sampler.gvl_hook = sampler_orphan_gvl_hook;
		sampler_orphan_gvl_hook = NULL;
	} else if (cfg->mode == SAMPLER_WALL) {
		sampler.gvl_hook = rb_internal_thread_add_event_hook(sampler_gvl_hook,
		    RUBY_INTERNAL_THREAD_EVENT_SUSPENDED | RUBY_INTERNAL_THREAD_EVENT_READY |
		    RUBY_INTERNAL_THREAD_EVENT_RESUMED, NULL);
	}
	if (cfg->control_signal > 0) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = sampler_control_handler;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(cfg->control_signal, &sa, &sampler.old_control_action) != 0) {
			snprintf(err, errlen, "cannot install a handler for signal %d: %s",
			    cfg->control_signal, strerror(errno));
			goto fail;
		}
		sampler.control_set = 1;
	}

	if (sampler.use_signal) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = sampler_signal_handler;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		if (sigaction(cfg->signal, &sa, &sampler.old_action) != 0) {
			snprintf(err, errlen, "cannot install a handler for signal %d: %s",
			    cfg->signal, strerror(errno));
			goto fail;
		}
		sampler.handler_set = 1;
	}
	if (pthread_create(&sampler.worker, NULL, sampler_worker_main, NULL) != 0) {
		snprintf(err, errlen, "cannot start the sampler thread: %s", strerror(errno));
		goto fail;
	}
	sampler.worker_made = 1;
	if (sampler.use_signal) {
		while (atomic_load(&sampler.worker_tid) == 0)
			sched_yield();
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = cfg->signal;
		sev._sigev_un._tid = atomic_load(&sampler.worker_tid);
		if (timer_create(CLOCK_MONOTONIC, &sev, &sampler.timer) != 0) {
			snprintf(err, errlen, "cannot create the sampling timer: %s", strerror(errno));
			goto fail;
		}
		sampler.timer_made = 1;
	}
	if (!cfg->defer && cfg->delay_ns <= 0)
		sampler_arm(1);
	return 0;
fail:
	sampler_teardown();
	return -1;
}

/* Whether sampling has started and not stopped, in this process. */
int
sampler_running(void)
{
	return sampler.started && !sampler.forked;
}

/* Add a comment line to every profile this sampler builds. */
void
sampler_add_comment(const char *comment)
{
	xgrow((void **)&sampler.comments, &sampler.comments_cap, sampler.ncomments + 1,
	    sizeof *sampler.comments);
	sampler.comments[sampler.ncomments++] = xstrdup(comment);
}

/* ------------------------------------------------------------------ */
/* Building the profile (with the GVL)                                */
/* ------------------------------------------------------------------ */

struct sampler_label_ctx {
	struct profile *p;
	struct profile_label *labels;
	size_t n, cap;
};

/* Append a string label to the context's list. */
static void
sampler_add_label(void *arg, const char *key, const char *value)
{
	struct sampler_label_ctx *c = arg;

	xgrow((void **)&c->labels, &c->cap, c->n + 1, sizeof *c->labels);
	memset(&c->labels[c->n], 0, sizeof c->labels[c->n]);
	c->labels[c->n].key = profile_intern(c->p, key);
	c->labels[c->n].str = profile_intern(c->p, value);
	c->n++;
}

/* Append a numeric label. */
static void
sampler_add_num_label(struct sampler_label_ctx *c, const char *key, int64_t num,
    const char *unit)
{
	xgrow((void **)&c->labels, &c->cap, c->n + 1, sizeof *c->labels);
	memset(&c->labels[c->n], 0, sizeof c->labels[c->n]);
	c->labels[c->n].key = profile_intern(c->p, key);
	c->labels[c->n].num = num;
	if (unit != NULL)
		c->labels[c->n].num_unit = profile_intern(c->p, unit);
	c->n++;
}

/* A Ruby string (or nil) as a new C string. */
static char *
sampler_cstr(VALUE s)
{
	if (!RB_TYPE_P(s, T_STRING))
		return xstrdup("");
	return xstrndup(RSTRING_PTR(s), RSTRING_LEN(s));
}

/* The location id of frame ID, resolving the frame the first time. */
static uint64_t
sampler_location(struct profile *p, uint64_t *cache, uint32_t id)
{
	VALUE f;
	char *name, *file;
	uint64_t fn;
	int64_t first = 0;
	VALUE v;

	if (cache[id] != 0)
		return cache[id];
	f = sampler.frames.keys[id];
	name = sampler_cstr(rb_profile_frame_full_label(f));
	v = rb_profile_frame_path(f);
	file = sampler_cstr(v);
	v = rb_profile_frame_first_lineno(f);
	if (FIXNUM_P(v))
		first = FIX2LONG(v);
	fn = profile_function(p, name, name, file, first);
	cache[id] = profile_location(p, fn, sampler.frames.lines[id]);
	free(name);
	free(file);
	return cache[id];
}

/* The name saved for thread SEQ, or NULL. */
static const char *
sampler_thread_name(int seq)
{
	size_t i;

	for (i = 0; i < sampler.nnames; i++) {
		if (sampler.names[i].seq == seq)
			return sampler.names[i].name;
	}
	return NULL;
}

/* Add one sample of stack entry K with the given weight and count. */
static void
sampler_emit(struct profile *p, uint64_t *cache, struct sampler_label_ctx *lc,
    const struct agg_stack *e, int64_t count, int64_t weight, int64_t time_ns,
    int with_time)
{
	uint64_t locs[SAMPLER_MAX_DEPTH];
	int64_t values[2];
	const char *tname;
	uint32_t d;

	for (d = 0; d < e->depth; d++)
		locs[d] = sampler_location(p, cache, sampler.stacks.ids[e->ids_off + d]);
	lc->n = 0;
	sampler_add_num_label(lc, "thread", e->thread, NULL);
	if ((tname = sampler_thread_name(e->thread)) != NULL)
		sampler_add_label(lc, "thread_name", tname);
	if (e->state != AGG_STATE_NORMAL)
		sampler_add_label(lc, profile_states[e->state - 1].key,
		    profile_states[e->state - 1].value);
	if (e->label_set != 0 && sampler.cfg.label_fn != NULL)
		sampler.cfg.label_fn(e->label_set, sampler_add_label, lc, sampler.cfg.label_arg);
	if (with_time)
		sampler_add_num_label(lc, "timestamp", time_ns, "nanoseconds");
	values[0] = count;
	values[1] = weight;
	profile_add_sample(p, locs, e->depth, values, lc->labels, lc->n);
}

/* Save the names of live threads. */
static void
sampler_save_live_names(void)
{
	struct sampler_thread *td;

	for (td = sampler.threads; td != NULL; td = td->next)
		sampler_thread_save_name(td);
}

/*
 * Build a profile from the tables (everything aggregated already): the
 * whole run, or with DELTA what came since the last interval, which then
 * counts as handed out.
 */
static struct profile *
sampler_build(int delta)
{
	static const char *const types[] = { "samples", NULL };
	static const char *const units[] = { "count", "nanoseconds" };
	const char *mode = sampler.cfg.mode == SAMPLER_WALL ? "wall" : "cpu";
	const char *tv[2] = { types[0], mode };
	struct sampler_label_ctx lc;
	struct profile *p = profile_new();
	uint64_t *cache;
	size_t i;
	char buf[128];

	profile_set_value_types(p, 2, tv, units);
	p->period_type.type = profile_intern(p, mode);
	p->period_type.unit = profile_intern(p, "nanoseconds");
	p->period = sampler_period_ns();
	p->time_nanos = sampler.start_real_ns;
	p->duration_nanos = util_mono_ns() - sampler.start_mono;
	if (delta) {
		int64_t now = sampler_real_ns();

		p->time_nanos = sampler.sent_real_ns;
		p->duration_nanos = now - sampler.sent_real_ns;
		sampler.sent_real_ns = now;
	}

	memset(&lc, 0, sizeof lc);
	lc.p = p;
	cache = xcalloc(sampler.frames.count + 1, sizeof *cache);
	if (sampler.cfg.aggregate) {
		for (i = 0; i < sampler.stacks.count; i++) {
			struct agg_stack *e = &sampler.stacks.entries[i];
			int64_t count = e->count, weight = e->weight;

			if (delta) {
				count -= e->sent_count;
				weight -= e->sent_weight;
				e->sent_count = e->count;
				e->sent_weight = e->weight;
			}
			if (count > 0)
				sampler_emit(p, cache, &lc, e, count, weight, 0, 0);
		}
	} else {
		for (i = delta ? sampler.raw_sent : 0; i < sampler.nraw; i++) {
			const struct sampler_raw *r = &sampler.raw[i];

			sampler_emit(p, cache, &lc, &sampler.stacks.entries[r->stack], 1,
			    r->weight, r->time_ns, 1);
		}
		if (delta)
			sampler.raw_sent = sampler.nraw;
	}
	free(cache);
	free(lc.labels);

	for (i = 0; i < sampler.ncomments; i++)
		profile_add_comment(p, sampler.comments[i]);
	snprintf(buf, sizeof buf, "mode: %s", mode);
	profile_add_comment(p, buf);
	snprintf(buf, sizeof buf, "frequency: %d", sampler.cfg.frequency);
	profile_add_comment(p, buf);
	snprintf(buf, sizeof buf, "samples: %llu", (unsigned long long)sampler.samples);
	profile_add_comment(p, buf);
	snprintf(buf, sizeof buf, "triggers: %llu",
	    (unsigned long long)atomic_load(&sampler.triggers));
	profile_add_comment(p, buf);
	snprintf(buf, sizeof buf, "threads: %llu", (unsigned long long)sampler.nthreads);
	profile_add_comment(p, buf);
	return p;
}

/* Fill STATS from the counters. */
static void
sampler_fill_stats(struct sampler_stats *stats)
{
	if (stats == NULL)
		return;
	stats->triggers = atomic_load(&sampler.triggers);
	stats->samples = sampler.samples;
	stats->timer_samples = sampler.timer_samples;
	stats->job_ns = sampler.job_ns;
	stats->threads = sampler.nthreads;
	stats->duration_ns = util_mono_ns() - sampler.start_mono;
	stats->worker_cpu_ns = sampler.worker_cpu_ns;
}

/* Wait until the worker has folded any buffer handed to it. */
static void
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
static void
sampler_drain(void)
{
	int active = atomic_load(&sampler.active);

	if (atomic_load(&sampler.swap_pending)) {
		sampler_aggregate(&sampler.buffers[active ^ 1]);
		atomic_store(&sampler.swap_pending, 0);
	}
	sampler_aggregate(&sampler.buffers[active]);
}

/*
 * Hold the job off (building) and fold every sample taken into the
 * tables, then save the live threads' names: what building a profile
 * needs.  The caller clears building when done.
 */
static void
sampler_collect(void)
{
	atomic_store(&sampler.building, 1);
	sampler_wait_worker();
	pthread_mutex_lock(&sampler.worker_mutex);
	sampler_drain();
	pthread_mutex_unlock(&sampler.worker_mutex);
	sampler_save_live_names();
}

/* Hand P to FN (interval or snapshot) and free it. */
static void
sampler_hand_out(struct profile *p, void (*fn)(const struct profile *, void *), void *arg)
{
	fn(p, arg);
	profile_free(p);
}

/* Stop, remove every hook, and build the profile. */
struct profile *
sampler_stop(struct sampler_stats *stats)
{
	struct sampler_thread *td;
	struct profile *p;
	VALUE current;
	int was_armed;

	if (!sampler.started)
		return NULL;
	if (sampler.forked) {
		/* A forked child: drop the parent's state and hooks. */
		sampler_teardown();
		return NULL;
	}
	was_armed = atomic_load(&sampler.armed);
	atomic_store(&sampler.building, 1);
	sampler_arm(0);
	sampler_hooks_remove();
	if (sampler.worker_made) {
		clockid_t cid;
		int64_t ns;

		if (pthread_getcpuclockid(sampler.worker, &cid) == 0 &&
		    sampler_read_clock(cid, &ns) == 0)
			sampler.worker_cpu_ns = (uint64_t)ns;
	}
	sampler_worker_quit();

	/* Bill each live thread's time since its last sample. */
	current = rb_thread_current();
	if (was_armed) {
		for (td = sampler.threads; td != NULL; td = td->next)
			sampler_bill_last(td, td->thread == current);
	}
	sampler_collect();
	sampler_fill_stats(stats);
	if (sampler.cfg.interval_fn != NULL)	/* the last, partial interval */
		sampler_hand_out(sampler_build(1), sampler.cfg.interval_fn,
		    sampler.cfg.interval_arg);
	p = sampler_build(0);
	sampler_teardown();
	return p;
}

/* The profile so far; with CLEAR, start the aggregate afresh. */
struct profile *
sampler_snapshot(int clear, struct sampler_stats *stats)
{
	struct profile *p;

	if (!sampler_running())
		return NULL;
	sampler_collect();
	sampler_fill_stats(stats);
	p = sampler_build(0);
	if (clear) {
		pthread_mutex_lock(&sampler.table_mutex);
		agg_stacks_clear(&sampler.stacks);
		sampler.nraw = 0;
		sampler.raw_sent = 0;
		pthread_mutex_unlock(&sampler.table_mutex);
		sampler.samples = 0;
		sampler.timer_samples = 0;
		atomic_store(&sampler.triggers, 0);
		sampler.start_mono = util_mono_ns();
		sampler.start_real_ns = sampler_real_ns();
		sampler.sent_real_ns = sampler.start_real_ns;
	}
	atomic_store(&sampler.building, 0);
	return p;
}

/* The interval job: hand what came since the last interval to the
 * interval function (on a Ruby thread, with the GVL). */
static void
sampler_interval_job(void *arg)
{
	struct profile *p;

	if (!sampler_running() || sampler.cfg.interval_fn == NULL ||
	    atomic_load(&sampler.building))
		return;
	sampler_collect();
	p = sampler_build(1);
	atomic_store(&sampler.building, 0);
	sampler_hand_out(p, sampler.cfg.interval_fn, sampler.cfg.interval_arg);
}

/* Entering an Rperf.profile block: in defer mode, arm on the first. */
void
sampler_profile_enter(void)
{
	if (!sampler_running())
		return;
	if (sampler.profile_depth++ == 0 && sampler.cfg.defer)
		sampler_arm(1);
}

/* Leaving one: in defer mode, bill the current thread and disarm. */
void
sampler_profile_leave(void)
{
	if (!sampler_running() || sampler.profile_depth == 0)
		return;
	if (--sampler.profile_depth == 0 && sampler.cfg.defer)
		sampler_disarm_here();
}

/* The current thread's label set. */
int
sampler_current_label_set(void)
{
	struct sampler_thread *td;

	if (!sampler_running())
		return 0;
	td = sampler_thread_get(rb_thread_current());
	return td != NULL ? td->label_set : 0;
}

/* Set the current thread's label set. */
void
sampler_set_label_set(int id)
{
	if (!sampler_running())
		return;
	sampler_thread_current()->label_set = id;
}

/* The control job (with the GVL): arm or disarm on --delay/--duration,
 * and take the snapshot the control signal asked for. */
static void
sampler_control_job(void *arg)
{
	struct profile *p;

	if (!sampler_running())
		return;
	if (atomic_exchange(&sampler.pending_arm, 0) && !atomic_load(&sampler.armed))
		sampler_arm(1);
	if (atomic_exchange(&sampler.pending_disarm, 0) && atomic_load(&sampler.armed))
		sampler_disarm_here();
	if (atomic_exchange(&sampler.pending_snapshot, 0) && sampler.cfg.snapshot_fn != NULL &&
	    !atomic_load(&sampler.building)) {
		p = sampler_snapshot(0, NULL);
		if (p != NULL)
			sampler_hand_out(p, sampler.cfg.snapshot_fn, sampler.cfg.snapshot_arg);
	}
}

/* Whether this process is the child of a fork of a sampled process. */
int
sampler_forked(void)
{
	return sampler.forked;
}

/* In a forked child: drop the parent's state, sample afresh. */
int
sampler_restart_in_child(char *err, size_t errlen)
{
	struct sampler_config cfg;

	if (!sampler.forked) {
		snprintf(err, errlen, "not a forked child");
		return -1;
	}
	cfg = sampler.cfg;
	cfg.interval_ns = 0;
	cfg.interval_fn = NULL;
	cfg.delay_ns = 0;
	sampler_teardown();
	sampler.forked = 0;
	return sampler_start(&cfg, err, errlen);
}
