/*
 * sampler-int.h: what the parts of the sampler share; nothing but
 * src/sampler*.c may include it (sampler.h is the API).  One state,
 * `sampler`, is kept by sampler.c (start, stop, snapshots, control
 * jobs), sampler-timer.c (clocks, timer, worker),
 * sampler-tick.c (the frame each tick found), sampler-hooks.c (the
 * job and the VM hooks, billing), sampler-threads.c
 * (thread records, GC marking, fork), sampler-frames.c (each frame's own
 * iseq and its name) and sampler-build.c (the profile).
 *
 * Who runs what:
 * - The timer (a POSIX timer whose real-time signal goes to the worker
 *   thread, or the worker thread itself sleeping between ticks) counts
 *   the tick and signals the thread holding the GVL (tracked by the GVL
 *   hook and the job), which notes its own innermost control frame in the
 *   handler and triggers the postponed job; with --peek the timer reads
 *   that frame itself, with plain loads (see sampler-tick.c), and
 *   triggers the job.  The signal handlers touch no Ruby API but
 *   rb_postponed_job_trigger, take no lock and allocate nothing.
 * - The postponed job runs on the thread holding the GVL at a safepoint:
 *   it bills the thread's clock from its previous sample up to the tick
 *   (sampler_job_upto) to the stack the tick found, and appends the raw frame VALUEs to the active sample buffer.
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
 * Self time: the job runs at the next safepoint, very often the `leave`
 * of a small method the thread called after the tick, or the return of a
 * C method (Ruby checks interrupts there with the C frame still on top),
 * so the stack there would bill the caller's own work to its callees.
 * When the frame noted at the tick is a caller of the job's leaf, still
 * running the same iseq, the job bills the stack cut at that frame
 * (sampler_tick_cut); when it was called by the job's leaf and has
 * returned, it is put back on top if the job knows its frame VALUE.  A C
 * method noted at the tick is known by its caller's call site: while the
 * caller is still there the stack is cut at the C method, and once the
 * caller has moved on the C method is put back on top if the job has
 * seen which one that site calls (else the caller takes the time).  When
 * the noted frame is the leaf, is gone otherwise, or nothing was noted
 * (no control-frame mirror for this Ruby, or the tick came in a GC), the
 * stack at the safepoint.  The weight is the same
 * either way.  With --lines the noted frame's line is that of the pc
 * noted at the tick (sampler_frames_line).  The GVL hook is installed in
 * cpu mode too, to track the holder, and a fiber switch hook tracks the
 * context (fiber) it runs, which the tick reads first.
 *
 * Billing: each thread keeps `prev`, the reading of its clock (its CPU
 * clock in cpu mode, CLOCK_MONOTONIC in wall mode) up to which its time
 * has been billed.  Every sample bills [prev, now) and moves prev to now;
 * GC samples bill the GC's own span and push prev forward by as much, so
 * the next timer sample does not bill it again.  The arithmetic of both
 * splits, around a GVL release and across a GC, is in aggregate.c.
 *
 * Compiling (require, load, eval of a string) runs in C with no safepoint
 * of its own: the only ones it reaches are in the Ruby methods the
 * compiler calls (Integer#-@, to fold a negative literal), and then the
 * first of the compiled code.  So the job drops a method frame called
 * straight from a compile site (a C frame seen on top when Ruby reported
 * a script compiled) and bills the caller, and when a tick fell due
 * during the compile, the SCRIPT_COMPILED hook takes its sample there, at
 * the compile site, instead of the job at the compiled code's first
 * safepoint.  (Only then: a sample at every compile would bill the code
 * run since the previous sample to the compile site.)  A site is known
 * once it has compiled; the samples of its first compile still in the
 * active buffer are mended then.
 *
 * Boot: every sample taken before the script's first line (rubygems,
 * -r libraries, the script's own compile) gets the pseudo-frame
 * SAMPLER_FRAME_BOOT at its root, above its real stack; a sample with no
 * Ruby frame after boot gets SAMPLER_FRAME_NONE.  Both are words that no
 * frame VALUE can be, named by sampler-build.c.
 */
#ifndef RPERF_SAMPLER_INT_H
#define RPERF_SAMPLER_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <ruby.h>
#include <ruby/debug.h>
#include <ruby/thread.h>

#include "aggregate.h"
#include "cpuclock.h"
#include "sampler.h"

/* The pseudo-frames (never a frame VALUE: rb_profile_frames gives
 * method entries and iseqs, never special constants). */
#define SAMPLER_FRAME_BOOT		Qtrue		/* "(ruby boot)" */
#define SAMPLER_FRAME_NONE		Qnil		/* "(no Ruby frame)" */
#define SAMPLER_FRAME_THREAD_START	INT2FIX(1)	/* "(thread start)" */
#define SAMPLER_FRAME_THREAD_END	INT2FIX(2)	/* "(thread end)" */
#define SAMPLER_FRAME_UNSAMPLED		INT2FIX(3)	/* "(unsampled thread)" */
#define SAMPLER_FRAME_PSEUDO(f)		RB_SPECIAL_CONST_P(f)
/* A frame of code compiled at run time, named early (sampler-resolved.c):
 * entry K of that table. */
#define SAMPLER_FRAME_RESOLVED_BASE	1024
#define SAMPLER_FRAME_RESOLVED(k)	LONG2FIX(SAMPLER_FRAME_RESOLVED_BASE + (long)(k))
#define SAMPLER_FRAME_IS_RESOLVED(f) \
	(FIXNUM_P(f) && FIX2LONG(f) >= SAMPLER_FRAME_RESOLVED_BASE)

/* The frames of run-time compiled code last named, by VALUE. */
#define SAMPLER_RESOLVE_CACHE	512

/* The most compile sites (Kernel#require, Kernel#eval, ...) remembered. */
#define SAMPLER_COMPILE_SITES	16

/* Idle ticks in a row before the timer pauses (see sampler_tick_pause). */
#define SAMPLER_IDLE_TICKS	4

/* The job times itself once in this many runs (see sampler_job). */
#define SAMPLER_JOB_TIMED	16

/* A thread's fast CPU clock is opened once it has read its clock this
 * many times by system call (see sampler_thread_open_clock). */
#define SAMPLER_FAST_CLOCK_READS	64

/* Slots of each of a thread's caches of frames seen (struct
 * sampler_seen_cache): first, and at most (powers of two); and the
 * lookups that find another frame's entry in the slot that make it grow
 * to the most. */
#define SAMPLER_SEEN_MIN	64
#define SAMPLER_SEEN_MAX	1024
#define SAMPLER_SEEN_GROW	32
#define SAMPLER_SEEN_WAYS	4
/* Threads numbered each its own in a run; later ones may take the number
 * of one that ended (sampler_thread_create). */
#define SAMPLER_THREAD_KEYS	1000

/* Buffer this many samples, or this many frames, before handing them to
 * the worker (sampler_swap_locked). */
#define SAMPLER_SWAP_THRESHOLD	1024
#define SAMPLER_SWAP_FRAMES	4096
/* States whose last sample a sample of the same key may add to: the
 * thread states of aggregate.h (AGG_STATE_NORMAL to _GC_SWEEP). */
#define SAMPLER_LAST_STATES	(AGG_STATE_GC_SWEEP + 1)

/* One sample as the job records it: raw frames, not yet interned. */
struct sampler_sample {
	size_t frame_off;
	int depth;
	int thread_seq;
	int label_set;
	int state;
	int capture;		/* the thread's innermost open capture, or 0 */
	int transient;		/* has frames of run-time compiled code, unnamed */
	int64_t weight;
	int64_t time_ns;	/* since start, for --no-aggregate */
	/* Samples it stands for: those of the same key recorded after it
	 * while it was the last of its state are added to it (merged runs
	 * only; sampler_record_merge). */
	uint32_t count;
};

/* Samples and their frames, written by the job and the hooks; two of
 * them, one handed to the worker while the other fills. */
struct sampler_buffer {
	struct sampler_sample *samples;
	size_t nsamples, samples_cap;
	VALUE *frames;
	VALUE *owns;		/* each frame's own iseq, or 0 */
	int *lines;
	size_t nframes, frames_cap;
	/* Which frames are of run-time compiled code (kept for samples
	 * with transient set only); samples with transient set, and those
	 * the job has looked at (sampler-resolved.c). */
	unsigned char *marks;
	atomic_int pending;
	size_t scanned;
};

/* A sample in a buffer: the buffer's index, its swap count then, the
 * sample's index; and for a thread's own, its capture count then. */
struct sampler_last {
	int active;
	uint64_t swaps;
	size_t index;
	uint64_t captures;
};

/* A print of the stack a thread runs (sampler_frames_print): its
 * context, innermost control frame and frame count, and a hash of each
 * frame's pc, iseq and method entry or cref. */
struct sampler_frames_print {
	const void *ec, *cfp;
	int n;
	uint64_t hash;
};

/*
 * A thread's caches of the frames its jobs have seen, each in sets of
 * SAMPLER_SEEN_WAYS slots, and marked (sampler_mark), for the frames a
 * tick noted and the job finds gone (sampler_tick_cut).  (Direct-mapped,
 * as they were, a load and dump of YAML (bench/accuracy/libs.rb yaml)
 * found the frame a tick needed lost to another in its slot on 3-6% of
 * its 2,400 ticks, each billed to the job's own stack; in sets of four,
 * about 2%.)  Allocated apart from the thread's record, by its first
 * job, so that a thread never sampled (a short request's) pays nothing
 * for them, with SAMPLER_SEEN_MIN slots each; grown to
 * SAMPLER_SEEN_MAX once SAMPLER_SEEN_GROW lookups have found
 * another frame's entry where they looked (sampler_tick_grow).  A
 * program's working set of call sites can be much larger than the
 * first size: with 64 slots, in a profile of RDoc's markup
 * (bench/accuracy/libs.rb rdoc) one tick in eight of those that found
 * the thread in a C method returned by the job was billed to the
 * caller, the method's call site having lost its slot to another since
 * (StringScanner#scan 4.0-4.5% of the self time where stackprof gives
 * 6.7-7.5%); with 1024, one in 150 or fewer (scan 4.9-5.3%).  Not 1024
 * from the start: the 56 KiB, all touched by a boot's first jobs, were
 * some 15 page faults more before a short script's first line.
 */
struct sampler_seen_cache {
	unsigned n;		/* slots in each, a power of two */
	unsigned collisions;	/* lookups that found another's entry */
	unsigned turn;		/* the slot of a full set taken next */
	/* The frame VALUE and line last seen for an own iseq: what a Ruby
	 * frame gone by the job was. */
	struct sampler_seen {
		VALUE own, frame;
		int line;
	} *frames;
	/* The C methods seen on top of its stack, by their caller's pc (the
	 * call site): the frame VALUE for a C method noted at a tick and
	 * returned before the job. */
	struct sampler_seen_c {
		const VALUE *site;
		VALUE caller, frame;	/* the caller's own iseq, the C method's frame */
	} *c;
	/* The C methods' entries seen on its stacks, by address: one a tick
	 * noted is known alive when found here. */
	VALUE *me;
};

/*
 * The first stack a tick found a thread in, kept whole (sampler_first_keep):
 * its frames, own iseqs and lines (innermost first), and its labels and
 * capture.
 */
struct sampler_first {
	int label_set, capture;
	int depth;
	VALUE *frames, *owns;
	int *lines;
};

/* Per Ruby thread; lives in the thread's specific storage. */
struct sampler_thread {
	VALUE thread;
	void *vm_thread;	/* the VM's record, if mirrored (sampler-frames.c) */
	int seq;
	/* Its number in the profile (the "thread" label): its own seq, or
	 * the number a thread that ended gave back (sampler_thread_create). */
	int key;
	clockid_t cpu_clock;	/* this thread's CPU clock, readable anywhere */
	/* The fast reading of the same clock, on this thread only; its
	 * origin moved onto cpu_clock's by clock_offset. */
	struct cpuclock clock;
	int64_t clock_offset;
	int clock_open;
	int slow_reads;		/* by system call, up to the fast clock's opening */
	int64_t prev;		/* clock reading billed up to */
	int label_set;
	int capture;		/* innermost open capture (sampler-capture.c) */
	/* A tick found it in a GC step and took no sample: its time since
	 * prev waits for the next tick, and a change of its labels bills it
	 * first (sampler_tick_in_gc). */
	int gc_deferred;
	/* Its Ractor: 0 the main one, -1 another not numbered yet, else that
	 * one's number (sampler-ractor.c); its slot there (-1: none), its
	 * kernel thread id, and the tick its job served last. */
	int ractor;
	int slot;
	pid_t tid;
	uint_fast64_t served;
	/* M:N threads (another Ractor's, or any with RUBY_MN_THREADS):
	 * the native thread under it changes and runs other Ruby threads
	 * too, so its CPU time is the sum of its runs (cpu mode), each read
	 * on the native thread's clock (cpu_clock then follows it). */
	int mn;
	int mn_running;
	int64_t mn_acc, mn_base;
	/* Odd while the thread changes the three above: the main thread
	 * reads them at a build, while the thread may be ending a run. */
	atomic_uint mn_seq;
	/* Set without the GVL by SUSPENDED/READY, read at RESUMED. */
	int suspended;
	int64_t suspended_at;
	int64_t ready_at;
	/* In cpu mode (see sampler_job_elsewhere): its CPU clock when it
	 * last let the GVL go (0: it has it back), set by SUSPENDED on the
	 * thread; the CPU time it spent off the GVL since its clock read
	 * OFF_AT (its PREV then), summed by RESUMED; and the time a sample
	 * left to the next one of its own (added to it). */
	int64_t suspended_cpu, off_cpu, off_at, carry;
	/* In wall mode, the blocked and waiting spans of releases of the
	 * GVL in Ruby's start-up left to its next sample, as CARRY is (see
	 * sampler_carry_release), billed beside it in their own states. */
	int64_t carry_blocked, carry_wait;
	/* The stack last captured on this thread (for the job, the hooks
	 * and the time left at exit or stop). */
	int depth;
	int top;		/* the stack billed starts there (sampler_tick_cut) */
	/* The label set and capture in force when it was captured: what
	 * time billed to it later, where no Ruby frame is left, carries. */
	int stack_label_set;
	int stack_capture;
	/* The pseudo-frame billed for while the stack is empty, when not
	 * "(no Ruby frame)": "(thread start)" while its birth is billed,
	 * "(unsampled thread)" at its end when no sample ever saw a stack. */
	VALUE empty;
	/* The frames (and own iseqs) of the last capture, root first, that
	 * went through sampler_wb in GC generation wb_gen (sampler_capture). */
	VALUE wb_frames[SAMPLER_MAX_DEPTH];
	VALUE wb_owns[SAMPLER_MAX_DEPTH];
	int wb_depth;
	uint64_t wb_gen;
	/* Captures taken (sampler_capture; a change to the stack after one
	 * counts as one), and the print of the stack the last capture took,
	 * at capture number print_at, GC generation print_gen (print_at 0:
	 * none): while nothing changed it and no GC step began, the same
	 * print is the same stack (sampler_capture_same). */
	uint64_t captures, print_at, print_gen;
	struct sampler_frames_print print;
	/* Its last sample in each state (sampler_record_merge). */
	struct sampler_last last[SAMPLER_LAST_STATES];
	/* How many of wb_frames[0..k] are of run-time compiled code, and of
	 * the whole capture (sampler-resolved.c). */
	uint16_t wb_transient[SAMPLER_MAX_DEPTH];
	int transient;
	VALUE stack[SAMPLER_MAX_DEPTH];
	VALUE own[SAMPLER_MAX_DEPTH];	/* each frame's own iseq, or 0 */
	int lines[SAMPLER_MAX_DEPTH];
	/* Frame j's control frame is cfp_base + j when cfp_base is set (every
	 * frame gave an entry), else cfps[j] (NULL for a C frame not paired
	 * with its control frame). */
	const void *cfp_base;
	const void *cfps[SAMPLER_MAX_DEPTH];
	/* What its jobs have seen (sampler_tick_seen), made by the first
	 * job that needs it; NULL before. */
	struct sampler_seen_cache *seen;
	/* The first stack a tick found it in, for its end
	 * (sampler_bill_end); NULL before, and for the main thread, a
	 * thread of another Ractor, or without aggregation. */
	struct sampler_first *first;
	struct sampler_thread *next;
	struct sampler_thread **pprev;
};

/* One sample kept whole with --no-aggregate. */
struct sampler_raw {
	uint32_t stack;
	int64_t weight;
	int64_t time_ns;
};

/* A capture's samples folded so far: an entry and what it got. */
struct sampler_capture_item {
	uint32_t stack;
	int64_t weight;
	int64_t count;
};

/* An open capture (sampler-capture.c). */
struct sampler_capture {
	int id;
	int parent;		/* the capture open around it, or 0 */
	int thread_seq;
	uint64_t begin_swaps;	/* sampler.swaps when it began */
	size_t begin_index;	/* the active buffer's length then */
	int64_t begin_mono, begin_real, end_mono;
	struct sampler_capture_item *items;
	size_t nitems, items_cap;
	size_t merged;		/* items[0, merged) have distinct entries */
	size_t *raws;		/* --no-aggregate: its raw samples */
	size_t nraws, raws_cap;
};

/* A user's span on the timeline (sampler-marks.c). */
struct sampler_mark {
	char *name;
	int thread_seq;
	int64_t start, end;	/* since the start; end -1 while open, -2 when
				 * closed before a snapshot cleared the tables */
};

/* Window copies kept, one a minute (sampler-capture.c). */
#define SAMPLER_WINDOW_SLOTS	16

/* Every entry's weight and count (values[2i], values[2i+1]) at MONO. */
struct sampler_window_slot {
	int64_t *values;
	size_t n, cap;
	int64_t mono, real;
};

/* What a profile is built of (sampler_build_of); zero: the whole run. */
struct sampler_build_src {
	int delta;		/* since the last interval, which is marked sent */
	/* A window: less these (weight, count pairs by entry; NBASE of
	 * them), or with --no-aggregate the raw samples from SINCE_NS on. */
	const int64_t *base;
	size_t nbase;
	int64_t since_ns;
	/* A capture: these entries only (or, --no-aggregate, raw samples),
	 * maybe none. */
	int capture;
	const struct sampler_capture_item *items;
	size_t nitems;
	const size_t *raws;
	size_t nraws;
	int64_t time_nanos, duration_nanos;	/* 0: the run's */
	int time_only;		/* without the allocation sites */
};

/* The name of a thread (by its sequence number) for the profile. */
struct sampler_thread_name {
	int key;
	char *name;
};

/* sampler.timer_state */
enum {
	SAMPLER_TIMER_OFF,	/* not sampling */
	SAMPLER_TIMER_ON,
	SAMPLER_TIMER_PAUSED	/* stopped by an idle tick until a thread runs */
};

/* The sampler's whole state (one per process). */
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
	/* The script's first line is not reached: Ruby's start-up, ticked at
	 * most SAMPLER_BOOT_HZ times a second (sampler_tick_stride, which
	 * the worker and the timer signal's handler read). */
	atomic_int booting;
	int quiet_allocs;		/* rperf itself allocates: not sampled */
	/* The frames seen on top when a script was compiled, and the type
	 * bits of such a frame (a method entry), for the job's test. */
	VALUE compile_sites[SAMPLER_COMPILE_SITES];
	int ncompile_sites;
	VALUE method_kind;

	rb_postponed_job_handle_t job;
	rb_postponed_job_handle_t interval_job;
	rb_postponed_job_handle_t control_job;
	atomic_int pending_arm;		/* for the control job */
	atomic_int pending_disarm;
	atomic_int pending_snapshot;
	atomic_int pending_window;	/* a window copy is due */
	/* A sample the tick's job did not take (a GC's, a thread switch's,
	 * the compile hook's) has frames to name (sampler_resolve_pending). */
	atomic_int pending_resolve;
	struct sigaction old_control_action;
	int control_set;
	int64_t sent_real_ns;		/* CLOCK_REALTIME of the last interval's end */
	size_t raw_sent;		/* raw samples handed out as intervals */
	rb_internal_thread_specific_key_t key;
	/* Set (cpu mode) on a thread whose native thread is made while
	 * the sampler is armed: its record bills the CPU time before it. */
	rb_internal_thread_specific_key_t born_key;
	rb_internal_thread_event_hook_t *gvl_hook;
	int event_hooks;
	VALUE wrapper;			/* marks our frames for the GC */

	/* timer */
	int use_signal;
	pid_t pid;
	atomic_uintptr_t gvl_holder;	/* the GVL holder's VM record, or 0 */
	/* The kernel id of the thread that took the GVL last (not cleared
	 * when it lets it go), which a tick signals to note its own frame;
	 * and the tick it is asked to note (0: none asked). */
	atomic_int holder_tid;
	atomic_uint_fast64_t note_asked;
	/* Ticks whose frame the holder noted itself, in the handler. */
	atomic_uint_fast64_t thread_notes;
	atomic_int signals_held;	/* see sampler_hold_signals */
	atomic_uintptr_t holder_ec;	/* its context, while it may be poked */
	timer_t timer;
	int timer_made;
	/* SAMPLER_TIMER_*: whether the timer runs, or a tick stopped it
	 * because no thread held the GVL (cpu mode; sampler-timer.c). */
	atomic_int timer_state;
	/* When the timer was started (CLOCK_MONOTONIC ns): a restarted one
	 * keeps to the ticks it would have had. */
	_Atomic int64_t timer_anchor;
	/* The label set and capture of the GVL holder (packed: label set
	 * high, capture low) and whose they are (its VM record, 0 while
	 * they change), for the tick's note (sampler_tick_labels). */
	atomic_uint_fast64_t holder_labels;
	atomic_uintptr_t holder_labels_of;
	/* The start of the period whose tick the POSIX timer is armed for
	 * (it is armed for one tick at a time: sampler_tick_at), and the
	 * seed of the ticks' places in their periods. */
	_Atomic int64_t timer_grid;
	uint64_t tick_seed;
	struct sigaction old_action;
	int handler_set;
	pthread_t worker;
	int worker_made;
	atomic_int worker_tid;
	/* The fast CPU clock's kernel check, run by the worker (cpu mode)
	 * when probe_ready is set and the script's first line is not yet
	 * reached (probe_late; see sampler_worker_probe). */
	struct cpuclock probe;
	int probe_ready;
	atomic_int probe_late;

	/* The main Ractor's threads are M:N (RUBY_MN_THREADS). */
	int mn_main;
	/* A thread of another Ractor has run (set before its first Ruby
	 * code): from then on the allocation table is shared. */
	atomic_int ractors_seen;

	/* worker hand-off: worker_mutex guards the worker's state;
	 * worker_cond wakes those who wait for the worker (worker_busy,
	 * swap_pending); the worker itself sleeps on worker_seq, which
	 * sampler_worker_kick moves on (see sampler_worker_sleep). */
	pthread_mutex_t worker_mutex;
	pthread_cond_t worker_cond;
	atomic_uint worker_seq;
	int quit;
	int worker_busy;		/* folding or probing, without worker_mutex */
	/* Told to end, the worker may still take a timer signal already
	 * queued: its handler then does nothing (ticks_off), and the stop
	 * waits for one that began before (in_tick, below). */
	atomic_int ticks_off;
	atomic_int swap_pending;	/* the standby buffer awaits the worker */
	atomic_int active;		/* buffer the job writes */
	struct sampler_buffer buffers[2];
	/* The last sample recorded in each state, under the lock: a sample
	 * of the same key adds to it (sampler_record_merge). */
	struct sampler_last last[SAMPLER_LAST_STATES];

	/* aggregate; table_mutex guards it and the standby buffer against
	 * the GC's mark function while the worker changes them */
	pthread_mutex_t table_mutex;
	struct agg_frames frames;
	struct agg_stacks stacks;
	struct sampler_raw *raw;
	size_t nraw, raw_cap;
	uint64_t raw_capped;		/* samples not kept: the timeline was full */
	int64_t raw_capped_at;		/* the time of the first of them */
	/* buffers handed to the worker or drained (a buffer's samples
	 * start afresh then), with the GVL */
	uint64_t swaps;

	/* marks (sampler-marks.c), with the GVL */
	struct sampler_mark *marks;
	size_t nmarks, marks_cap;
	uint64_t marks_dropped;

	/* captures and window copies (sampler-capture.c), under table_mutex */
	struct sampler_capture **captures;
	size_t ncaptures, captures_cap;
	int next_capture;
	atomic_int window_on;
	struct sampler_window_slot window[SAMPLER_WINDOW_SLOTS];
	size_t nwindow, window_next;
	int64_t window_last, window_step;

	/* threads */
	struct sampler_thread *threads;
	int next_seq;
	struct sampler_thread_name *names;	/* by key */
	size_t nnames, names_cap;
	int *free_keys;		/* numbers ended threads gave back */
	size_t nfree_keys, free_keys_cap;

	/* GC window in progress */
	struct agg_gc_window gc;
	struct sampler_thread *gc_td;	/* the thread billed for it */

	/* The process's CPU time while armed: up to the last disarm, and
	 * the reading at the last arm (for the unattributed time). */
	int64_t proc_cpu_ns;
	int64_t proc_cpu_at;

	/* metadata */
	int64_t start_real_ns;		/* CLOCK_REALTIME at start */
	int64_t start_mono;
	char **comments;
	size_t ncomments, comments_cap;

	/* A GC step runs (between its ENTER and EXIT events). */
	atomic_int gc_running;
	atomic_uint_fast64_t gc_gen;	/* GC steps begun (no object dies between two) */
	uint64_t nthreads;
	uint64_t worker_cpu_ns;		/* read before the worker exits */

	/*
	 * What the worker writes at every tick, and what the job writes at
	 * every sample, each on cache lines of their own.  The job reads the
	 * tick's line (its number) once a sample; but a field it wrote on a
	 * line the worker reads or writes at every tick, or one the worker
	 * wrote on a line the job reads, would cost the profiled thread a
	 * transfer of that line from the other CPU at every sample (some
	 * 100-200 ns on the VMs here).
	 */
	_Alignas(64) atomic_uint_fast64_t triggers;	/* ticks so far */
	/* The last tick that found a GC step running (sampler_tick_in_gc). */
	atomic_uint_fast64_t gc_tick;
	atomic_int in_tick;		/* a tick runs (see ticks_off) */
	atomic_int poking;		/* a tick is poking holder_ec */

	/* Guards what threads of different Ractors, each holding only its
	 * own Ractor's lock, may change at once: the active buffer, the
	 * thread list, the names (recursive; held only around plain memory
	 * work, never across a Ruby call: the GC's mark function takes it). */
	_Alignas(64) pthread_mutex_t lock;
	/* The timer count the job (or the compile hook, in its stead) last
	 * took a sample for: a tick is pending while triggers differs. */
	uint_fast64_t triggers_served;
	atomic_int in_job;		/* the tick's job is recording */
	uint64_t samples;
	uint64_t timer_samples;
	uint64_t job_ns;	/* estimated from one job in SAMPLER_JOB_TIMED */
	uint64_t jobs;		/* jobs run, for that estimate */
	/* (The struct's size is a multiple of its alignment, 64: nothing
	 * else shares the job's last line.) */
};

extern struct sampler sampler;

/* sampler-timer.c: clocks, the timer, the worker and its hand-off */
/* The most raw samples kept (cfg.raw_max or the default). */
static inline size_t
sampler_raw_max(void)
{
	return sampler.cfg.raw_max > 0 ? sampler.cfg.raw_max : SAMPLER_DEFAULT_RAW_MAX;
}

/* Read clock ID in nanoseconds into *NS; 0, or -1 (nothing read). */
int sampler_read_clock(clockid_t id, int64_t *ns);
/* The real time now, in ns since the epoch. */
int64_t sampler_real_ns(void);
/* The sampling period in nanoseconds. */
int64_t sampler_period_ns(void);
/* Install the signal handlers, start the worker and make the timer;
 * 0, or -1 with a message in ERR (undone by sampler_timer_release). */
int sampler_timer_start(char *err, size_t errlen);
/* Start or stop the POSIX timer. */
void sampler_timer_set(int on);
/* A thread took the GVL: restart the timer if an idle tick stopped it. */
void sampler_timer_resume(void);
void sampler_timer_boot_done(void);
/* Delete the timer, stop the worker, restore the signal handlers. */
void sampler_timer_release(void);
/* Tell the worker thread to end (noting its CPU time), once it is out
 * of the tables; it is joined later (sampler_worker_reap). */
void sampler_worker_quit(void);
/* Join a worker told to end (before a new start), or, in a forked child,
 * where it does not exist, forget it. */
void sampler_worker_reap(int forked);
/* Wait until the worker has folded any buffer handed to it. */
void sampler_wait_worker(void);
/* Have the worker look at its state again, changed just before. */
void sampler_worker_kick(void);
/* Fold both buffers into the tables (the worker is idle or gone). */
void sampler_drain(void);
/* Free the buffers and the tables; DROP: forget the large ones (a forked
 * child's of its parent, see sampler_teardown). */
void sampler_tables_release(int drop);

/* sampler-hooks.c: the job, the VM hooks and billing (with the GVL) */
/* The reading of TD's billing clock; on TD's own thread, the fast one. */
int64_t sampler_clock(const struct sampler_thread *td);
int64_t sampler_clock_self(struct sampler_thread *td);
/* Capture TD's stack (SELF: TD is the current thread). */
void sampler_capture(struct sampler_thread *td, int self);
/* Bill what TD has not been billed up to NOW to its captured stack. */
void sampler_bill_rest(struct sampler_thread *td, int64_t now);
/* Bill the rest of TD's time to its stack now, or its last one. */
void sampler_bill_last(struct sampler_thread *td, int self);
/* TD's thread was made while armed: bill its native thread's time before
 * its record (cpu mode, on the thread, just after the record is made). */
void sampler_bill_birth(struct sampler_thread *td);
/* Bill the time TD's process ran before the sampler's start to "(ruby
 * boot)", or in a forked CHILD to the stack at the fork, and move the
 * profile's start back to the process's. */
void sampler_bill_boot(struct sampler_thread *td, int child);
/* Hand the active buffer to the worker if it is due (holding the lock). */
void sampler_swap_locked(void);
/* The postponed job: one timer sample of the thread holding the GVL. */
void sampler_job(void *arg);
/* Add the GC, thread, compile, fiber switch and GVL hooks; remove them. */
void sampler_hooks_install(void);
void sampler_hooks_remove(void);

/*
 * The GC wrapper (sampler-threads.c) is write-barrier protected, so that
 * an old wrapper is not marked again at every minor GC (its tables hold
 * thousands of frames; an allocation-heavy program runs hundreds of
 * minor GCs a second).  So every frame VALUE put where sampler_mark finds
 * it goes through this first: a young one (new code) has the wrapper
 * remembered, and is marked, and promoted, at the next minor GC.  An old
 * one too: between the steps of an incremental major GC, one not marked
 * yet put in a wrapper marked already is marked by the barrier alone.
 */
static inline void
sampler_wb(VALUE v)
{
	if (!RB_SPECIAL_CONST_P(v) && sampler.wrapper != Qfalse)
		rb_gc_writebarrier(sampler.wrapper, v);
}

/* sampler-resolved.c: frames of code that runs once, named early */
struct sampler_resolved {
	char *name, *file;
	int64_t first;		/* its first line */
	int clause;		/* a rescue or ensure clause */
	uint32_t hash;
};
/* In the job: name the active buffer's frames of run-time compiled code. */
void sampler_resolve_pending(void);
/* FRAME (own OWN) named, if of code that runs once; else 0. */
VALUE sampler_resolve_frame(VALUE frame, VALUE own);
/* What resolved frame F (SAMPLER_FRAME_IS_RESOLVED) is named, or NULL. */
const struct sampler_resolved *sampler_resolved_get(VALUE f);
/* In a GC's marking: FRAME (own OWN) is on a thread's last stack. */
void sampler_resolved_keep(VALUE frame, VALUE own);
/* Then: mark the frames cached that are in use, let go of the rest. */
void sampler_resolved_mark(void);
/* Free the cache (DROP: forget it, see sampler_teardown). */
void sampler_resolved_release(int drop);

/* sampler-tick.c: the frame the GVL holder was in at each tick */
/* Decide whether ticks are noted in this run (at start). */
void sampler_tick_init(void);
/* TD took the GVL (ON) or let it go. */
void sampler_tick_holder(struct sampler_thread *td, int on);
/* TD's label set or capture changed (on TD, with the GVL). */
void sampler_tick_labels(struct sampler_thread *td);
/* The label set TD had at tick TICK, where noted, else its own now. */
int sampler_tick_noted_labels(uint_fast64_t tick, const struct sampler_thread *td);
/* The thread of VM record VM_THREAD switched fibers (on it, with the GVL,
 * in the fiber switched to). */
void sampler_tick_switched(void *vm_thread);
/* On the worker at a tick, after Ruby's trigger: make sure the GVL
 * holder's own context has the job's interrupt bit (signal-safe). */
void sampler_tick_poke(void);
/* A GC step begins (the holder's context must not be poked while it may
 * free fibers) or ends (the holder's current context again). */
void sampler_tick_gc(int entering);
/* At tick TICK: note the holder's frame (signal-safe; on the worker, or
 * on the holder in the signal's handler). */
void sampler_tick_note(uint_fast64_t tick);
/* On the worker at tick TICK: ask the holder, by a signal, to note its
 * own frame and ask for the job: 1, or 0 where it is not asked (then the
 * worker does both itself). */
int sampler_tick_ask(uint_fast64_t tick);
/* In the signal's handler: if this thread was asked for a note, take it
 * and ask for the job: 1, else 0. */
int sampler_tick_answer(void);
/* The monotonic time of tick TICK if it noted the frame of the thread
 * whose VM record is VM_THREAD, or 0 (in the job). */
int64_t sampler_tick_mono(uint_fast64_t tick, void *vm_thread);
/* Whether tick TICK found another thread than VM_THREAD's holding the
 * GVL, or none (in the job: then it takes no sample). */
int sampler_tick_elsewhere(uint_fast64_t tick, void *vm_thread);
/* Start fetching the tick's note (in the job, as it starts a sample). */
void sampler_tick_prefetch(void);
/* Cut TD's captured stack at the frame noted at tick TICK when that is
 * a caller of its leaf, or add the leaf's callee noted there and since
 * returned (in the job); 1 if changed; *SEEN: 1 if the stack is the
 * tick's. */
int sampler_tick_cut(struct sampler_thread *td, uint_fast64_t tick, int *seen);
/* Remember the frames of TD's captured stack by own iseq. */
void sampler_tick_seen(struct sampler_thread *td);
/* Remember the C methods near the top of TD's captured stack (with the
 * GVL): see sampler_tick_cut. */
void sampler_tick_seen_me(struct sampler_thread *td);

/* sampler-threads.c: thread records, GC marking, fork */
/* Make the locks (afresh in a forked child). */
void sampler_locks_init(void);
/* The thread key, the fork handlers and the GC wrapper; undone (but the
 * key and the fork handlers, made once) by sampler_threads_release. */
void sampler_threads_init(void);
/* The kernel id of the calling thread (one system call per native
 * thread; async-signal-safe). */
pid_t sampler_gettid(void);
void sampler_threads_release(void);
/* The record of THREAD, or NULL; make the current thread's; either (NULL
 * past the thread's THREAD_END). */
struct sampler_thread *sampler_thread_get(VALUE thread);
struct sampler_thread *sampler_thread_create(VALUE thread);
struct sampler_thread *sampler_thread_current(void);
/* Whether THREAD is past its THREAD_END; drop TD there, for good. */
int sampler_thread_ended(VALUE thread);
void sampler_thread_end(struct sampler_thread *td);
/* TD (M:N) runs from now on this native thread (ON), or stops. */
void sampler_thread_mn_run(struct sampler_thread *td, int on);
/* Open TD's fast CPU clock (cpu mode, on TD's own thread). */
void sampler_thread_open_clock(struct sampler_thread *td);
/* The index in sampler.names of thread number KEY's saved name, or
 * sampler.nnames for none. */
size_t sampler_thread_name_index(int key);
/* Remember TD's thread name; give its number back; unlink and free TD. */
int sampler_thread_save_name(struct sampler_thread *td);
void sampler_thread_give_key(struct sampler_thread *td);
void sampler_thread_free(struct sampler_thread *td);
/* Save the names of live threads. */
void sampler_save_live_names(void);
/* Reset every thread's baseline to now (the timer is being armed). */
void sampler_reset_baselines(void);

/* sampler-frames.c: each frame's own iseq and the name Ruby gives it */
/* The VM's record of THREAD, or NULL where its layout is not known. */
void *sampler_frames_vm_thread(VALUE thread);
/* Each of the DEPTH FRAMES' own iseq (0 for C frames) into OWN, and
 * where the frames are (*BASE, or CFPS), read from VM_THREAD's control
 * frames; 1, or 0 (OWN all 0) where they disagree. */
int sampler_frames_own(void *vm_thread, const VALUE *frames, int depth, int limit,
    VALUE *own, const void **base, const void **cfps);
/* Code the worker runs while it reads the frames of a thread running on
 * another CPU (sampler_frames_peek and what it calls), built without the
 * sanitizers' checks in a build with them.  What those reads find
 * depends on how long they take: the thread stalls at each store to a
 * cache line the worker is reading, so the longer the reads, the more
 * often they find it where it stores (its calls and returns, not a long
 * C method).  Checked, every load led by a check of its shadow memory
 * (ASan) and of its pointer (UBSan), they took longer: in
 * self_time_c.rb's long loop the ticks found the thread in Kernel#is_a?
 * (1% of the time, by signals on the thread) in 13-14% of the ticks,
 * against 4-6% unchecked, and its profile gave #is_a? 15-20% of the loop
 * against 4-8% (t0211; either sanitizer alone 7-15%).  The reads are
 * bounded by hand (sampler_frames_bounds); the job checks what they
 * found with the GVL, in checked code. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define SAMPLER_UNSANITIZED __attribute__((no_sanitize("address", "undefined")))
#endif
#endif
#ifndef SAMPLER_UNSANITIZED
#define SAMPLER_UNSANITIZED
#endif
/* The control frame J frames up from BASE. */
const void *sampler_frames_nth(const void *base, int j);
/* The context VM_THREAD runs now (on that thread; from another, a
 * guess), or NULL; set its postponed-job interrupt bit
 * (async-signal-safe, EC alive). */
SAMPLER_UNSANITIZED void *sampler_frames_ec(void *vm_thread);
void sampler_frames_poke(void *ec);
/* Whether this Ruby's control frames are mirrored (1) or not (0). */
int sampler_frames_mirrored(void);
/* A print of the stack VM_THREAD (the caller's own) runs now, with each
 * frame's pc if PCS; 1, or 0 (not known). */
int sampler_frames_print(void *vm_thread, int pcs, struct sampler_frames_print *p);
/* The innermost control frames a tick notes, from the innermost up
 * (sampler_frames_peek, sampler_tick_chain).  The thread runs on for the
 * microseconds the worker reads and its job comes: with four, in
 * Psych's load and dump (bench/accuracy/libs.rb yaml, two CPUs), none of
 * them was still on the stack at the job for 6-10% of the ticks, each
 * billed to the job's own stack; with eight, 1.5-3.5% (most of those
 * had returned from 9 to 12 frames); with twelve, 1.3%. */
#define SAMPLER_CHAIN	12
struct sampler_chain {
	int n;
	/* Each frame's iseq word (0 for a C method's, an ifunc for a C
	 * block's), pc (0 for both of those), environment and receiver. */
	uintptr_t iseq[SAMPLER_CHAIN], pc[SAMPLER_CHAIN];
	uintptr_t ep[SAMPLER_CHAIN], self[SAMPLER_CHAIN];
	/* A C method's entry where it was read with the frames (or 0), and
	 * whether the worker is sure of it (see sampler_frames_peek); for a
	 * Ruby frame, the word where a method's frame has its entry, never
	 * sure. */
	uintptr_t me[SAMPLER_CHAIN];
	int me_sure[SAMPLER_CHAIN];
	/* A C block's frame: the environment it was made in, where read;
	 * else 0. */
	uintptr_t prev[SAMPLER_CHAIN];
};
/* VM_THREAD's innermost control frame, and it and its callers with a C
 * frame's method entry (or 0) and whether the worker is sure of it (the
 * frame read the same again after it; if not, the entry may be a later
 * call's), read with plain loads from the worker while the thread runs
 * (only inside sampler_tick_note's bracket; *CTX: the context to try
 * first, alive, or NULL, and on return the one read; GC_GEN: the GC
 * steps begun so far; PCS: the innermost frame's pc is wanted for its
 * line, at some cost to short C methods), unchecked: 1, or 0 (nothing
 * read).  LABELS[0] and [1]: sampler.holder_labels read right before and
 * right after the context that gives the innermost frame.
 * Async-signal-safe. */
SAMPLER_UNSANITIZED int sampler_frames_peek(void *vm_thread, const void **ctx,
    uint_fast64_t gc_gen, int pcs, const void **cfp, struct sampler_chain *chain,
    uint_fast64_t labels[2]);
/* Whether control frame CFP (current thread, with the GVL) has
 * environment pointer EP. */
int sampler_frames_has_ep(const void *cfp, uintptr_t ep);
/* Whether ME, read by sampler_frames_peek with no GC step since, is a
 * method entry (with the GVL). */
int sampler_frames_is_me(VALUE me);
/* Whether the method entry ME (sampler_frames_is_me) can be the one of
 * a C frame whose receiver was SELF, read with the frame, no GC step
 * since: SELF is a kind of the method's owner (with the GVL). */
int sampler_frames_me_fits(VALUE me, VALUE self);
/* Whether V, any word, is a slot of Ruby's object heap (with the GVL):
 * one that may be read as an object's header.  0 where libruby cannot
 * tell (Ruby 3.3). */
int sampler_frames_in_heap(VALUE v);
/* Whether the method entry ME (sampler_frames_is_me) is a class's own,
 * not a module's (with the GVL). */
int sampler_frames_me_of_class(VALUE me);
/* Whether the method entry ME (sampler_frames_is_me) is that of a method
 * written in Ruby whose body is ISEQ (with the GVL). */
int sampler_frames_me_runs(VALUE me, VALUE iseq);
/* Whether control frame CFP (current thread, with the GVL) is the one
 * sampler_frames_peek told apart by IDENT. */
int sampler_frames_is(const void *cfp, const uintptr_t ident[2]);
/* The pc of control frame CFP of the current thread (with the GVL). */
const VALUE *sampler_frames_pc(const void *cfp);
/* The line of ISEQ at pc PC, or 0 (PC not in it).  With the GVL. */
int sampler_frames_line(VALUE iseq, const VALUE *pc);
/* The control frame that frame CFP calls (the next one down). */
const void *sampler_frames_callee(const void *cfp);
/* FRAME's name as Ruby 3.4's backtrace gives it, knowing its own iseq
 * OWN (0: not known); *CLAUSE: a rescue or ensure clause. */
VALUE sampler_frames_name(VALUE frame, VALUE own, int *clause);
/* Whether FRAME is one of rperf's methods that wrap Process's own, named
 * like the method it wraps (Process._fork).  With the GVL. */
int sampler_frames_wrapper(VALUE frame);
/* Whether FRAME is an iseq of code compiled at run time (no real path). */
int sampler_frames_transient(VALUE frame);
/* Whether FRAME is code that runs once: that, a file's top, a class body. */
int sampler_frames_once(VALUE frame);
/* Whether ISEQ is a file's top, a class body, a block in one, an eval's top. */
int sampler_frames_iseq_once(VALUE iseq);
/* What locates FRAME (own iseq OWN): its file and first line. */
VALUE sampler_frames_where(VALUE frame, VALUE own);

/* sampler-ractor.c: threads of Ractors other than the main one */
/* Number Ractors (at start, in the main one); install the signal the
 * worker uses to reach their threads; undo it. */
int sampler_ractor_start(char *err, size_t errlen);
void sampler_ractor_stop(void);
/* In a forked child: no signal is being sent (the worker is gone). */
void sampler_ractor_atfork_child(void);
/* Whether the current thread runs in the main Ractor (no Ruby call, no
 * allocation: usable in the GVL hook). */
int sampler_ractor_main(void);
/* In the job, on TD's own thread: number TD's Ractor and name it. */
void sampler_ractor_identify(struct sampler_thread *td);
/* On TD's own thread, where no Ruby call may be made (the GVL hook): TD
 * takes its Ractor's number if a job of another thread of it gave it
 * one already (so that a thread that never samples itself, one waiting
 * in Thread#join, is labelled too). */
void sampler_ractor_adopt(struct sampler_thread *td);
/* TD took its Ractor's lock (ON) or let it go: the ticks reach it while
 * it holds it.  TD ended: give its slot back. */
void sampler_ractor_holding(struct sampler_thread *td, int on);
void sampler_ractor_release(struct sampler_thread *td);
/* On the worker at each tick: ask every holder of a Ractor's lock but
 * the main one's for a sample (async-signal-safe). */
void sampler_ractor_tick(void);
/* In the job: 1 if TD (of a Ractor not the main one) is due a sample,
 * which it then is not; then let the others due know the job ran here. */
int sampler_ractor_due(struct sampler_thread *td);
void sampler_ractor_forward(struct sampler_thread *td);
/* The signal handler's part for a thread so reached. */
void sampler_ractor_signalled(void);
/* Send the worker's signal to thread TID of this process, while armed
 * (async-signal-safe): 0, or -1 (not armed, or no such thread). */
int sampler_ractor_kill(int tid);
/* Disarmed: wait until no signal is being sent, then discard any
 * pending signal SIG (its old action is restored next). */
void sampler_ractor_quiesce(int sig);
/* The Ractor of thread SEQ (0: the main one) and its name (or NULL). */
int sampler_ractor_of(int seq, const char **name);
/* Remember that thread SEQ runs in Ractor R (under the lock). */
void sampler_ractor_note_thread(int seq, int r);

/* sampler.c */
/* Hold the job off (building) and fold every sample into the tables;
 * the caller clears building when done. */
void sampler_collect(void);

/* sampler-capture.c: captures and windows */
/* A folded sample of capture ID (the worker, table_mutex held). */
void sampler_capture_fold(int id, uint32_t stack, int64_t weight, int64_t count,
    size_t raw);
/* A snapshot cleared the tables; thread SEQ is gone (table_mutex held). */
void sampler_captures_cleared(void);
void sampler_captures_thread_gone(int seq);
void sampler_captures_release(void);
/* When a copy of the tables for windows is due next (the worker asks
 * the control job for it); the copy (with the GVL, all folded). */
int64_t sampler_window_due(void);
void sampler_window_copy(int64_t now);

/* sampler-marks.c: Rperf.mark's spans */
void sampler_marks_emit(struct profile *p);
void sampler_marks_release(void);

/* sampler-build.c: the profile, from the tables (with the GVL) */
/* The whole run, or with DELTA what came since the last interval. */
struct profile *sampler_build(int delta);
/* The profile of SRC (folded already, building set). */
struct profile *sampler_build_of(const struct sampler_build_src *src);
/* Fill STATS (may be NULL) from the counters. */
void sampler_fill_stats(struct sampler_stats *stats);
/* A Ruby string (or anything else: "") as a new C string. */
char *sampler_build_cstr(VALUE s);

/* sampler-alloc.c: allocation samples (--alloc, -m alloc) */
/* Install the NEWOBJ and FREEOBJ hooks when cfg.alloc_rate is set; 0, or
 * -1 with a message in ERR. */
int sampler_alloc_start(char *err, size_t errlen);
/* Remove the hooks; fold the pending samples (with the GVL); free all. */
void sampler_alloc_hooks_remove(void);
void sampler_alloc_collect(void);
/* In the time job, on a main-Ractor thread: fold the samples an alloc
 * job run on another Ractor's thread left. */
void sampler_alloc_pending(void);
/* Before a profile: a full GC, so that "in use" is what is reachable,
 * not what is unreachable and not swept yet (with the GVL, building). */
void sampler_alloc_settle(void);
/* Remove the hooks and free the tables (DROP: forget them, see
 * sampler_teardown). */
void sampler_alloc_release(int drop);
/* The mean allocations between samples (0: not sampling them); the
 * number of sites; site I's frame ids, values (alloc_objects,
 * alloc_space, inuse_objects, inuse_space, scaled; with DELTA the
 * allocations since the last interval, marked handed out) and class (0
 * and its T_ type for a hidden object). */
double sampler_alloc_rate(void);
size_t sampler_alloc_nsites(void);
const struct agg_stack *sampler_alloc_site(size_t i, int delta, const uint32_t **ids,
    int64_t values[4], VALUE *klass, int *type);
/* Samples taken, buffers grown inside a hook, objects followed in moves. */
void sampler_alloc_counts(uint64_t *samples, uint64_t *grown, uint64_t *moved);

#endif
