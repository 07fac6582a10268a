/*
 * sampler.h: the safepoint sampler.  A timer asks the VM for a sample at
 * its next safepoint (a postponed job); each sample weighs the time that
 * passed on the sampled thread's clock from that thread's previous sample
 * up to the tick (what runs after it goes to the next), so the delay to
 * the safepoint does not bias the profile.  GVL and GC hooks
 * bill the time a thread spends off the GVL, waiting for it and in GC as
 * labelled samples, and move the thread's clock baseline past what they
 * billed, so every nanosecond is billed once.
 */
#ifndef RPERF_SAMPLER_H
#define RPERF_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

struct profile;

enum sampler_mode {
	SAMPLER_CPU,		/* CLOCK_THREAD_CPUTIME_ID per thread */
	SAMPLER_WALL		/* CLOCK_MONOTONIC */
};

#define SAMPLER_DEFAULT_FREQUENCY	1000
#define SAMPLER_MAX_FREQUENCY		10000
#define SAMPLER_MAX_DEPTH		512
#define SAMPLER_DEFAULT_RAW_MAX		2000000

/* Add one key/value label to the sample being built. */
typedef void sampler_label_add_fn(void *add_arg, const char *key, const char *value);

struct sampler_config {
	enum sampler_mode mode;
	int frequency;		/* Hz, 1..SAMPLER_MAX_FREQUENCY */
	int signal;		/* real-time signal for the timer; 0: a thread */
	int peek;		/* the worker reads where the GVL holder is,
				 * without signalling it (see sampler-tick.c) */
	int lines;		/* record the line of each frame */
	int aggregate;		/* 0: keep every sample with its time */
	size_t raw_max;		/* ...at most this many (0: the default); the
				 * rest are merged, without their time */
	int defer;		/* timer disarmed until Rperf.profile */
	/*
	 * Allocation samples: one allocation in alloc_rate on average
	 * (0: none); with alloc_only (-m alloc) no timer runs and the
	 * profile has only the memory sample types.
	 */
	int alloc_rate;
	int alloc_only;
	/*
	 * Intervals (for pushing to a profile store): every interval_ns the
	 * profile of the time since the previous interval is handed to
	 * interval_fn, on a Ruby thread holding the GVL (it must be quick
	 * and must not call Ruby); the last, partial one at stop.  The
	 * intervals add up to the whole run, which sampler_stop still
	 * returns.  The profile's time_nanos and duration_nanos say which
	 * interval it is; interval_fn must not keep it.
	 */
	int64_t interval_ns;	/* 0: no intervals */
	void (*interval_fn)(const struct profile *p, void *arg);
	void *interval_arg;
	/* Start sampling DELAY_NS after start; stop DURATION_NS later. */
	int64_t delay_ns;
	int64_t duration_ns;	/* 0: until the end */
	/*
	 * A signal that asks for a snapshot (0: none): its handler only
	 * triggers a job, which hands the profile so far to snapshot_fn on
	 * a Ruby thread holding the GVL.
	 */
	int control_signal;
	void (*snapshot_fn)(const struct profile *p, void *arg);
	void *snapshot_arg;
	/*
	 * The labels of label set ID (a thread's, set with
	 * sampler_set_label_set; 0, the empty set, is never asked for):
	 * label_fn calls ADD once per key/value.  Called with the GVL while
	 * a profile is built.  NULL: samples carry no such labels.
	 */
	void (*label_fn)(int id, sampler_label_add_fn *add, void *add_arg, void *arg);
	void *label_arg;
};

/* Counters for the text report and "rperf stat". */
struct sampler_stats {
	uint64_t triggers;	/* timer expirations */
	uint64_t samples;	/* samples recorded, of every kind */
	uint64_t timer_samples;	/* of those, taken by the timer's job */
	uint64_t job_ns;	/* wall time spent in the job itself (estimated) */
	uint64_t threads;	/* Ruby threads seen */
	int64_t duration_ns;	/* from start to stop */
	uint64_t worker_cpu_ns;	/* CPU time of the sampler's own thread */
	uint64_t thread_notes;	/* ticks whose frame the thread noted itself
				 * (signalled; not with --peek) */
};

/* SIGRTMIN+8: the signal that reaches other Ractors' threads at a tick when
 * the timer has none (--signal, the timer's, otherwise). */
int sampler_default_signal(void);

/*
 * Install the hooks and, unless deferred, arm the timer.  Needs the GVL
 * and an initialised VM.  Returns 0, or -1 with a message in ERR and
 * nothing left installed.
 */
int sampler_start(const struct sampler_config *cfg, char *err, size_t errlen);

/*
 * In the child of a fork, with the GVL: drop the parent's state and start
 * sampling afresh with the same configuration (without intervals).  0, or
 * -1 with a message in ERR.
 */
int sampler_restart_in_child(char *err, size_t errlen);

/*
 * The script is about to run its first line: bill the time so far to the
 * current stack under the boot pseudo-frame "(ruby boot)", which the
 * samples taken from here on no longer get.  With the GVL.
 */
void sampler_boot_done(void);

/* Whether this process is the child of a fork of a sampled process. */
int sampler_forked(void);

/* Whether allocations are sampled (--alloc, -m alloc). */
int sampler_alloc_on(void);

/* Whether sampling has started and not stopped (in this process). */
int sampler_running(void);

/*
 * Stop: disarm the timer, remove every hook, bill the time each live
 * thread has left, and build the profile (resolving frames needs the
 * GVL).  Returns NULL when the sampler was not running in this process
 * (e.g. in a forked child).  STATS may be NULL.
 */
struct profile *sampler_stop(struct sampler_stats *stats);

/*
 * The profile so far, without stopping; with CLEAR, the aggregate starts
 * afresh afterwards.  NULL when not running.
 */
struct profile *sampler_snapshot(int clear, struct sampler_stats *stats);

/* Rperf.profile support: count nested profile blocks; the timer runs
 * while the count is positive (in defer mode; always otherwise). */
void sampler_profile_enter(void);
void sampler_profile_leave(void);

/* The current thread's label set (see label_fn). */
int sampler_current_label_set(void);
void sampler_set_label_set(int id);

/*
 * Captures (servers, job workers): the time samples the current thread
 * takes from capture_begin (its id, or 0 when not sampling time) to
 * capture_end.  Captures nest; an outer one gets an inner one's samples.
 * At the end RELABEL (may be NULL; with the GVL, it may run Ruby) gives
 * each label set the capture's samples have a new one, in the run's
 * profile too; with OUT, the capture's samples as a profile of their own
 * in *OUT (time and duration the capture's).  capture_end returns 0, or
 * -1 when ID is no open capture of this thread.
 */
int sampler_capture_begin(void);
int sampler_capture_end(int id, int (*relabel)(int label_set, void *arg), void *arg,
    struct profile **out);
/* Bill the current thread's time up to now to its stack, labels and
 * capture as they are: a capture's end calls it once the capture's own
 * profile is written, so that the building and writing go to the
 * capture around it (or none) then, not to whichever one a later sample
 * falls in. */
void sampler_bill_now(void);
/* The same for every thread of the main Ractor, each to its own stack
 * as the stop bills it: before exec or Process.daemon, which end the
 * process (and its other threads) inside the call. */
void sampler_bill_all_now(void);
/* Right before an exec (ON): send no more signals to the script's
 * threads and take any already sent to this one, whose default action
 * would end the new program (a pending signal outlives the exec, its
 * handler does not); after an exec that failed (0): send them again. */
void sampler_hold_signals(int on);

/*
 * Marks (with --timeline): a named span of the current thread, from
 * mark_begin (its id, or 0 when marks are not kept) to mark_end, which
 * renames it when given a NAME.
 */
int sampler_mark_begin(const char *name, size_t len);
void sampler_mark_end(int id, const char *name, size_t len);
/* A process event now, NAME such as "[fork] child 4242": a mark of no
 * length (with --timeline; with the GVL). */
void sampler_mark_event(const char *name);

/*
 * Windows: the profile of about the last LAST_NS (0: the whole run) from
 * copies of the tables taken a minute apart once sampler_window_enable
 * was called (the whole run when there is no copy as old).  With the
 * GVL; NULL when not running.
 */
void sampler_window_enable(void);
struct profile *sampler_window(int64_t last_ns);

/* Add the comment "KEY: VALUE" (KEY one of PROFILE_COMMENT_*) to every
 * profile this sampler builds. */
void sampler_add_comment(const char *key, const char *value);

#endif
