/*
 * sampler.c: the safepoint sampler's life (see sampler.h for the idea,
 * sampler-int.h for its parts): start and stop, arming and disarming,
 * snapshots and intervals, the control job of --delay, --duration and
 * the snapshot signal, and what the Rperf module asks of it (profile
 * blocks, label sets).  Everything here runs with the GVL; it must leave
 * nothing installed (timer, handlers, hooks, worker) on any exit path,
 * and it never calls the Rperf module: what it needs from it comes
 * through sampler_config.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile.h"
#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

struct sampler sampler;
static void sampler_interval_job(void *arg);
static void sampler_control_job(void *arg);

/* Set while sampler_restart_in_child starts the sampler again. */
static int sampler_child_start;

/* SIGRTMIN+8: the signal that reaches other Ractors' threads at a tick when
 * the timer has none (--signal, the timer's, otherwise). */
int
sampler_default_signal(void)
{
	return SIGRTMIN + 8;
}

/* Arm or disarm sampling. */
static void
sampler_arm(int on)
{
	struct sampler_thread *td;

	if (on) {
		sampler_read_clock(CLOCK_PROCESS_CPUTIME_ID, &sampler.proc_cpu_at);
		sampler_reset_baselines();
		if (sampler_frames_mirrored() && (td = sampler_thread_current()) != NULL)
			sampler_tick_holder(td, 1);
		atomic_store(&sampler.armed, 1);
		if (!sampler.cfg.alloc_only)	/* -m alloc: no timer */
			sampler_timer_set(1);
	} else {
		int64_t now = 0;

		sampler_timer_set(0);
		if (atomic_exchange(&sampler.armed, 0) &&
		    sampler_read_clock(CLOCK_PROCESS_CPUTIME_ID, &now) == 0)
			sampler.proc_cpu_ns += now - sampler.proc_cpu_at;
	}
}

/* Bill the current thread up to now, then disarm (the end of a profile
 * block or of --duration). */
static void
sampler_disarm_here(void)
{
	struct sampler_thread *td = sampler_thread_current();

	if (td != NULL) {
		sampler_capture(td, 1);
		sampler_bill_rest(td, sampler_clock_self(td));
	}
	sampler_arm(0);
}

/*
 * Undo whatever sampler_start did so far; used on failure and at stop.
 * In a forked child the tables are its parent's: they are forgotten, not
 * freed.  Their pages are the parent's until the child writes to one, and
 * freeing writes malloc's bookkeeping into each: a copy of every page the
 * tables hold, for memory the child has no use for (on a run that had
 * loaded its gems, a few ms of CPU in each child, more than the fork).
 */
static void
sampler_teardown(void)
{
	int drop = sampler.forked;
	size_t i;

	atomic_store(&sampler.armed, 0);
	sampler_timer_release();
	sampler_hooks_remove();
	sampler_alloc_release(drop);
	sampler_threads_release();
	sampler_ractor_stop();
	sampler_tables_release(drop);
	if (!drop) {
		for (i = 0; i < sampler.ncomments; i++)
			free(sampler.comments[i]);
		free(sampler.comments);
	}
	sampler.comments = NULL;
	sampler.ncomments = sampler.comments_cap = 0;
	sampler.started = 0;
}

/* Install the hooks; arm the timer unless deferred. */
int
sampler_start(const struct sampler_config *cfg, char *err, size_t errlen)
{
	struct sampler_thread *main_td;

	if (sampler.started) {
		snprintf(err, errlen, "the sampler is already running");
		return -1;
	}
	sampler_worker_reap(0);		/* its lock and condition are about to go */
	memset(&sampler, 0, sizeof sampler);
	sampler.cfg = *cfg;
	/* A forked child's script runs on: no clock check now, and no
	 * start-up to tick slowly (set before the timer starts). */
	atomic_store(&sampler.probe_late, sampler_child_start);
	atomic_store(&sampler.booting, !sampler_child_start);
	sampler.wrapper = Qfalse;
	sampler.use_signal = cfg->signal > 0;
	{
		/* As Ruby reads it (thread_pthread.c) at its boot. */
		const char *mn = getenv("RUBY_MN_THREADS");

		sampler.mn_main = mn != NULL && atoi(mn) > 0;
	}
	sampler_tick_init();
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
	sampler_threads_init();
	if (sampler_ractor_start(err, errlen) != 0) {
		sampler_threads_release();
		return -1;
	}
	sampler.started = 1;
	main_td = sampler_thread_create(rb_thread_current());
	sampler_hooks_install();
	if (sampler_alloc_start(err, errlen) != 0 ||
	    sampler_timer_start(err, errlen) != 0) {
		sampler_teardown();
		return -1;
	}
	if (!cfg->defer && cfg->delay_ns <= 0) {
		sampler_arm(1);
		sampler_bill_boot(main_td, sampler_child_start);
	}
	return 0;
}

/* The script's first line is next: boot ends. */
void
sampler_boot_done(void)
{
	struct sampler_thread *td;

	if (!sampler.started || sampler.forked || !sampler.booting)
		return;
	/* No Ruby frame is left: the script's compile is billed to the
	 * pseudo-frame alone, not to the last stack of rubygems. */
	if (atomic_load(&sampler.armed) && !atomic_load(&sampler.building) &&
	    (td = sampler_thread_get(rb_thread_current())) != NULL) {
		sampler_capture(td, 1);
		sampler_bill_rest(td, sampler_clock_self(td));
	}
	sampler.booting = 0;
	atomic_store(&sampler.probe_late, 1);
	sampler_timer_boot_done();
}

/* Whether sampling has started and not stopped, in this process. */
int
sampler_running(void)
{
	return sampler.started && !sampler.forked;
}

/* Add the comment "KEY: VALUE" to every profile this sampler builds. */
void
sampler_add_comment(const char *key, const char *value)
{
	xgrow((void **)&sampler.comments, &sampler.comments_cap, sampler.ncomments + 1,
	    sizeof *sampler.comments);
	sampler.comments[sampler.ncomments++] = xasprintf("%s: %s", key, value);
}

/*
 * Hold the job off (building) and fold every sample taken into the
 * tables, then save the live threads' names: what building a profile
 * needs.  The caller clears building when done.
 */
void
sampler_collect(void)
{
	atomic_store(&sampler.building, 1);
	sampler_wait_worker();
	pthread_mutex_lock(&sampler.lock);	/* threads of other Ractors */
	pthread_mutex_lock(&sampler.worker_mutex);
	sampler_drain();
	pthread_mutex_unlock(&sampler.worker_mutex);
	pthread_mutex_unlock(&sampler.lock);
	sampler_alloc_collect();
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
	sampler_alloc_settle();
	sampler_hooks_remove();
	sampler_alloc_hooks_remove();
	sampler_worker_quit();

	/* Bill each live thread's time since its last sample. */
	current = rb_thread_current();
	if (was_armed) {
		for (td = sampler.threads; td != NULL; td = td->next) {
			/* Another Ractor's thread runs on, in parallel: its
			 * frames cannot be read from here; its last stack. */
			if (td->ractor != 0)
				sampler_bill_rest(td, sampler_clock(td));
			else
				sampler_bill_last(td, td->thread == current);
		}
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
	atomic_store(&sampler.building, 1);
	sampler_alloc_settle();
	sampler_collect();
	sampler_fill_stats(stats);
	p = sampler_build(0);
	if (clear) {
		pthread_mutex_lock(&sampler.table_mutex);
		agg_stacks_clear(&sampler.stacks);
		sampler_captures_cleared();
		sampler.nraw = 0;
		sampler.raw_capped = 0;
		sampler.raw_sent = 0;
		pthread_mutex_unlock(&sampler.table_mutex);
		sampler.samples = 0;
		sampler.timer_samples = 0;
		sampler.proc_cpu_ns = 0;
		sampler_read_clock(CLOCK_PROCESS_CPUTIME_ID, &sampler.proc_cpu_at);
		atomic_store(&sampler.triggers, 0);
		atomic_store(&sampler.thread_notes, 0);
		atomic_store(&sampler.gc_tick, 0);
		atomic_store(&sampler.gc_running, 0);
		{
			/* Marks keep their place on the new clock (closed
			 * ones before it are not shown). */
			int64_t shift = util_mono_ns() - sampler.start_mono;
			size_t i;

			for (i = 0; i < sampler.nmarks; i++) {
				sampler.marks[i].start -= shift;
				if (sampler.marks[i].end >= 0)
					sampler.marks[i].end = sampler.marks[i].end >= shift ?
					    sampler.marks[i].end - shift : -2;
			}
		}
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

/* Set the current thread's label set (time a GC tick left unbilled is
 * billed under the labels it ran with first: see sampler_tick_in_gc). */
void
sampler_set_label_set(int id)
{
	struct sampler_thread *td;

	if (!sampler_running())
		return;
	if ((td = sampler_thread_current()) == NULL)
		return;
	if (td->gc_deferred && td->label_set != id) {
		td->gc_deferred = 0;
		sampler_bill_now();
	}
	td->label_set = id;
	sampler_tick_labels(td);
}

/* The control job (with the GVL): arm or disarm on --delay/--duration,
 * copy the tables for windows, take the snapshot the control signal
 * asked for, and name the frames of samples the tick's job did not take. */
static void
sampler_control_job(void *arg)
{
	struct sampler_thread *td;
	struct profile *p;

	if (!sampler_running())
		return;
	if (atomic_exchange(&sampler.pending_resolve, 0) && atomic_load(&sampler.armed) &&
	    !atomic_load(&sampler.building) && (td = sampler_thread_current()) != NULL &&
	    td->ractor == 0)
		sampler_resolve_pending();
	if (atomic_exchange(&sampler.pending_arm, 0) && !atomic_load(&sampler.armed))
		sampler_arm(1);
	if (atomic_exchange(&sampler.pending_disarm, 0) && atomic_load(&sampler.armed))
		sampler_disarm_here();
	if (atomic_exchange(&sampler.pending_window, 0) && !atomic_load(&sampler.building)) {
		atomic_store(&sampler.building, 1);
		sampler_wait_worker();
		pthread_mutex_lock(&sampler.worker_mutex);
		sampler_drain();
		pthread_mutex_unlock(&sampler.worker_mutex);
		sampler_window_copy(util_mono_ns());
		atomic_store(&sampler.building, 0);
	}
	if (atomic_exchange(&sampler.pending_snapshot, 0) && sampler.cfg.snapshot_fn != NULL &&
	    !atomic_load(&sampler.building)) {
		sampler_mark_event("[snapshot]");
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
	int rc;

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
	sampler_child_start = 1;
	rc = sampler_start(&cfg, err, errlen);
	sampler_child_start = 0;
	if (rc != 0)
		return -1;
	return 0;
}
