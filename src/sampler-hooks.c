/*
 * sampler-hooks.c: the postponed job and the VM hooks, and how they bill
 * a thread's time.  The job samples the thread holding the GVL; the GVL
 * hook (wall mode) splits a release into running, blocked and waiting
 * (agg_split_gvl) and bills it, the running part carried to the
 * thread's next sample but with --timeline (sampler_bill_release); the
 * GC hook bills each GC window as marking and sweeping (agg_gc_event);
 * the thread hook bills a thread's last time.
 * Each appends raw frame VALUEs to the active sample buffer, never a Ruby
 * object or a string.  The GVL hook's SUSPENDED and READY events run
 * without the GVL: there it must only store timestamps in the thread's
 * own record, never call Ruby nor allocate.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* A GVL hook left installed in a forked child (see sampler_hooks_remove),
 * reused when the child samples again. */
static rb_internal_thread_event_hook_t *sampler_orphan_gvl_hook;

/* The reading of TD's billing clock: its CPU clock or the wall clock. */
int64_t
sampler_clock(const struct sampler_thread *td)
{
	int64_t now;

	if (sampler.cfg.mode == SAMPLER_WALL)
		return util_mono_ns();
	if (td->mn) {
		int64_t acc, base;
		clockid_t clock;
		unsigned seq;
		int running;

		/* A consistent reading of what the thread may be changing. */
		do {
			while ((seq = atomic_load_explicit(&td->mn_seq, memory_order_acquire)) & 1)
				sched_yield();
			acc = td->mn_acc;
			base = td->mn_base;
			running = td->mn_running;
			clock = td->cpu_clock;
			atomic_thread_fence(memory_order_acquire);
		} while (atomic_load_explicit(&td->mn_seq, memory_order_relaxed) != seq);
		if (!running || sampler_read_clock(clock, &now) != 0)
			return acc;
		return acc + (now > base ? now - base : 0);
	}
	if (sampler_read_clock(td->cpu_clock, &now) != 0)
		return td->prev;	/* the thread is gone: nothing more to bill */
	return now;
}

/* TD's billing clock read on TD's own thread: the fast CPU clock. */
int64_t
sampler_clock_self(struct sampler_thread *td)
{
	if (sampler.cfg.mode == SAMPLER_WALL)
		return sampler_clock(td);
	if (!td->clock_open) {
		td->slow_reads++;
		return sampler_clock(td);
	}
	return cpuclock_read(&td->clock) + td->clock_offset;
}

/* What one sample is of: the thread (its number, labels and capture),
 * its stack of DEPTH frames, innermost first, with each frame's own iseq
 * and line (LINES may be NULL without --lines), and the pseudo-frame
 * that stands for an empty stack (0: "(no Ruby frame)"). */
struct sampler_of {
	/* The thread whose stack it is (its last samples are looked at
	 * first), or NULL. */
	struct sampler_thread *td;
	int seq, label_set, capture;
	/* How many of its frames are of run-time compiled code, and which:
	 * frame i is if the capture's count root-first (TCUM, TWB frames of
	 * a capture of TDEPTH, cut at TOP) grows at it. */
	int transient;
	const uint16_t *tcum;
	int tdepth, twb, top;
	const VALUE *frames, *owns;
	const int *lines;
	int depth;
	VALUE empty;
};

static void sampler_record_of(const struct sampler_of *o, int64_t weight, int state,
    int64_t end);

/* Mark in MARKS which of the DEPTH frames of O are of run-time compiled
 * code, up to N (a pseudo-frame at the root is not); whether any is.  A
 * frame put on the stack after the capture (a C method the tick saw,
 * sampler_tick_cut) is not either: it lies past the count. */
static int
sampler_record_marks(const struct sampler_of *o, unsigned char *marks, int depth, int n)
{
	int i, k, any = 0;

	for (i = 0; i < depth; i++) {
		k = o->tdepth - 1 - (o->top + i);
		marks[i] = k >= 0 && k < o->twb &&
		    o->tcum[k] != (k > 0 ? o->tcum[k - 1] : 0);
		any |= marks[i];
	}
	for (; i < n; i++)
		marks[i] = 0;
	return any;
}

/*
 * Keep O, the first stack a tick found TD in, whole (with the GVL): its
 * thread's end bills to it (sampler_bill_end).  Once a thread, some 20
 * bytes a frame; marked with the live stacks.  Not a stack with code
 * that runs once in it (a file's top, a class body, an eval's code:
 * O's transient count): kept to the thread's end, it would keep that
 * code alive past the GC that frees it (sampler_resolved_mark); a later
 * tick's stack is kept instead.
 */
static void
sampler_first_keep(struct sampler_thread *td, const struct sampler_of *o)
{
	struct sampler_first *f;
	size_t n = (size_t)o->depth;
	char *p;

	p = xmalloc(sizeof *f + n * (2 * sizeof(VALUE) + sizeof(int)));
	f = (struct sampler_first *)(void *)p;
	p += sizeof *f;
	f->frames = (VALUE *)(void *)p;
	f->owns = f->frames + n;
	f->lines = (int *)(void *)(f->owns + n);
	memcpy(f->frames, o->frames, n * sizeof(VALUE));
	memcpy(f->owns, o->owns, n * sizeof(VALUE));
	memcpy(f->lines, o->lines, n * sizeof(int));
	f->depth = o->depth;
	f->label_set = o->label_set;
	f->capture = o->capture;
	pthread_mutex_lock(&sampler.lock);
	td->first = f;
	pthread_mutex_unlock(&sampler.lock);
}

/* What a sample of TD's current stack is of, under its labels and
 * capture now.  A thread of another Ractor may get here, for itself,
 * while a profile is built (the main thread bills every thread at the
 * end, on purpose: that one goes in), so its seq is negative (looked at
 * again under the lock). */
static struct sampler_of
sampler_of_stack(struct sampler_thread *td)
{
	struct sampler_of o = {
		.td = td,
		.seq = td->key, .label_set = td->label_set, .capture = td->capture,
		.frames = td->stack + td->top, .owns = td->own + td->top,
		.lines = td->lines + td->top, .depth = td->depth - td->top,
		.empty = td->empty,
		/* Named by the main Ractor's jobs only. */
		.transient = td->ractor == 0 ? td->transient : 0,
		.tcum = td->wb_transient, .tdepth = td->depth, .twb = td->wb_depth,
		.top = td->top,
	};

	if (td->ractor != 0 && !sampler_ractor_main())
		o.seq = -o.seq;
	return o;
}

/* Append one sample of TD's current stack to the active buffer, with
 * the boot pseudo-frame at its root before the script's first line and
 * the no-frame one in place of an empty stack after; its time (kept with
 * --no-aggregate) is END, the CLOCK_MONOTONIC reading where the span it
 * bills ends, or now for 0.  TICK: the sample of a tick's job on TD, the
 * stack where the tick found it (the first is kept for TD's end; not a
 * release's or a wake-up's stack, which are not where ticks land). */
static void
sampler_record_from(struct sampler_thread *td, int64_t weight, int state, int64_t end,
    int tick)
{
	struct sampler_of o;

	if (weight <= 0)
		return;
	o = sampler_of_stack(td);
	if (tick && td->first == NULL && o.depth > 0 && o.transient == 0 &&
	    td->ractor == 0 && sampler.cfg.aggregate && td->thread != rb_thread_main())
		sampler_first_keep(td, &o);
	sampler_record_of(&o, weight, state, end);
}

/* sampler_record_from, not a tick's sample. */
static void
sampler_record_until(struct sampler_thread *td, int64_t weight, int state, int64_t end)
{
	sampler_record_from(td, weight, state, end, 0);
}

/* Sample INDEX of buffer ACTIVE, of O, is the last in STATE. */
static void
sampler_record_last(const struct sampler_of *o, int state, int active, size_t index)
{
	struct sampler_last l = {
		.active = active, .swaps = sampler.swaps, .index = index,
		.captures = o->td != NULL ? o->td->captures : 0,
	};

	sampler.last[state] = l;
	if (o->td != NULL)
		o->td->last[state] = l;
}

/* Whether L is a sample still waiting in the active buffer B (ACTIVE). */
static int
sampler_last_valid(const struct sampler_last *l, const struct sampler_buffer *b, int active)
{
	return l->active == active && l->swaps == sampler.swaps && l->index < b->nsamples;
}

/*
 * Add WEIGHT to the last sample recorded in STATE, in the active buffer B
 * (ACTIVE), if it is of the same key as O (thread SEQ, labels, capture,
 * the DEPTH frames with their own iseqs and lines, and ROOT, the
 * pseudo-frame at the root, or Qundef): 1, or 0 if not (it is made).
 * The worker would have folded the two into one entry: a program that
 * lets the GVL go a hundred thousand times a second in one C method
 * (Dir.glob, a loop of small reads) made three samples a release in wall
 * mode, each a dozen cache lines to write on the profiled thread and a
 * stack to intern on the worker.  The thread's own last sample in that
 * state, recorded since its last capture, has its frames (the stack is
 * changed only by a capture, and after one in the job, before any
 * sample, where the count is taken again); any other is compared frame
 * by frame.  Not with --no-aggregate (each sample keeps its own time)
 * nor for one with frames of run-time compiled code (the job names
 * those in the buffer).  With sampler.lock held.
 */
static int
sampler_record_merge(struct sampler_buffer *b, int active, const struct sampler_of *o,
    int seq, int depth, VALUE root, int state, int64_t weight)
{
	const struct sampler_last *l;
	struct sampler_sample *s;
	int n = depth + (root != Qundef), same = 0;

	if (!sampler.cfg.aggregate || o->transient > 0 || state < 0 ||
	    state >= SAMPLER_LAST_STATES)
		return 0;
	l = o->td != NULL ? &o->td->last[state] : NULL;
	if (l != NULL && l->captures != 0 && l->captures == o->td->captures &&
	    sampler_last_valid(l, b, active))
		same = 1;
	else if (!sampler_last_valid(l = &sampler.last[state], b, active))
		return 0;
	s = &b->samples[l->index];
	if (s->thread_seq != seq || s->label_set != o->label_set ||
	    s->capture != o->capture || s->state != state || s->transient ||
	    s->depth != n || s->count == UINT32_MAX)
		return 0;
	if (root != Qundef && b->frames[s->frame_off + depth] != root)
		return 0;
	if (!same && depth > 0 &&
	    (memcmp(b->frames + s->frame_off, o->frames, depth * sizeof(VALUE)) != 0 ||
	    memcmp(b->owns + s->frame_off, o->owns, depth * sizeof(VALUE)) != 0 ||
	    (sampler.cfg.lines &&
	    memcmp(b->lines + s->frame_off, o->lines, depth * sizeof(int)) != 0)))
		return 0;
	s->weight += weight;
	s->count++;
	sampler_record_last(o, state, active, (size_t)(s - b->samples));
	return 1;
}

/*
 * Give B room for what makes it full (sampler_buffer_full) at once, and
 * a stack more: grown from nothing by doubling, each step copied the
 * buffer into new memory, writing pages for the first time twice over.
 * Pages not yet written cost nothing, so a buffer never filled costs
 * only what it holds.  Where the worker is busy and B fills further, it
 * grows as before.
 */
static void
sampler_buffer_alloc(struct sampler_buffer *b)
{
	size_t frames = SAMPLER_SWAP_FRAMES + SAMPLER_MAX_DEPTH + 1;

	b->samples = xmalloc(SAMPLER_SWAP_THRESHOLD * sizeof *b->samples);
	b->samples_cap = SAMPLER_SWAP_THRESHOLD;
	b->frames = xrealloc(b->frames, frames * sizeof *b->frames);
	b->owns = xrealloc(b->owns, frames * sizeof *b->owns);
	b->marks = xrealloc(b->marks, frames);
	if (sampler.cfg.lines)
		b->lines = xrealloc(b->lines, frames * sizeof *b->lines);
	b->frames_cap = frames;
}

/* The sample O, as sampler_record_until says; a negative O->seq is a
 * thread of another Ractor recording itself, which a build leaves out. */
static void
sampler_record_of(const struct sampler_of *o, int64_t weight, int state, int64_t end)
{
	struct sampler_buffer *b;
	struct sampler_sample *s;
	int active, depth = o->depth, n, seq = o->seq;
	VALUE root = Qundef;

	if (weight <= 0)
		return;
	pthread_mutex_lock(&sampler.lock);
	if (seq < 0) {
		if (atomic_load(&sampler.building)) {
			pthread_mutex_unlock(&sampler.lock);
			return;
		}
		seq = -seq;
	}
	if (sampler.booting)
		root = SAMPLER_FRAME_BOOT;
	else if (depth == 0)
		root = o->empty != 0 ? o->empty : SAMPLER_FRAME_NONE;
	if (root != Qundef && depth == SAMPLER_MAX_DEPTH)
		depth--;	/* a stack cut short already: its root gives way */
	n = depth + (root != Qundef);
	active = atomic_load(&sampler.active);
	b = &sampler.buffers[active];
	if (sampler_record_merge(b, active, o, seq, depth, root, state, weight)) {
		sampler.samples++;
		pthread_mutex_unlock(&sampler.lock);
		return;
	}
	if (b->samples == NULL)
		sampler_buffer_alloc(b);
	if (b->nsamples == b->samples_cap)
		xgrow((void **)&b->samples, &b->samples_cap, b->nsamples + 1,
		    sizeof *b->samples);
	if (b->nframes + (size_t)n > b->frames_cap) {
		size_t cap = b->frames_cap;

		xgrow((void **)&b->frames, &cap, b->nframes + n, sizeof *b->frames);
		b->owns = xrealloc(b->owns, cap * sizeof *b->owns);
		b->marks = xrealloc(b->marks, cap);
		if (sampler.cfg.lines)
			b->lines = xrealloc(b->lines, cap * sizeof *b->lines);
		b->frames_cap = cap;
	}
	/* Lines are kept only with --lines (b->lines stays NULL without). */
	if (depth > 0) {	/* the buffers may still be NULL */
		memcpy(b->frames + b->nframes, o->frames, depth * sizeof(VALUE));
		memcpy(b->owns + b->nframes, o->owns, depth * sizeof(VALUE));
		if (sampler.cfg.lines)
			memcpy(b->lines + b->nframes, o->lines, depth * sizeof(int));
	}
	if (root != Qundef) {
		b->frames[b->nframes + depth] = root;
		b->owns[b->nframes + depth] = 0;
		if (sampler.cfg.lines)
			b->lines[b->nframes + depth] = 0;
	}
	s = &b->samples[b->nsamples++];
	s->frame_off = b->nframes;
	s->depth = n;
	s->thread_seq = seq;
	s->label_set = o->label_set;
	s->capture = o->capture;
	s->transient = o->transient > 0 && sampler_record_marks(o, b->marks + b->nframes, depth, n);
	if (s->transient) {
		atomic_fetch_add_explicit(&b->pending, 1, memory_order_relaxed);
		/* Named soon, not at the next tick (a second away at -F 1):
		 * until then the sample keeps the code alive, and a GC's
		 * sample cannot name it in the GC. */
		if (!atomic_load_explicit(&sampler.in_job, memory_order_relaxed) &&
		    !atomic_exchange(&sampler.pending_resolve, 1))
			rb_postponed_job_trigger(sampler.control_job);
	}
	s->state = state;
	s->weight = weight;
	s->count = 1;
	s->time_ns = sampler.cfg.aggregate ? 0 :
	    (end != 0 ? end : util_mono_ns()) - sampler.start_mono;
	b->nframes += n;
	sampler.samples++;
	if (state >= 0 && state < SAMPLER_LAST_STATES)
		sampler_record_last(o, state, active, b->nsamples - 1);

	sampler_swap_locked();
	pthread_mutex_unlock(&sampler.lock);
}

/* Whether buffer B holds FACTOR times what makes it full. */
static int
sampler_buffer_full(const struct sampler_buffer *b, size_t factor)
{
	return b->nsamples >= factor * SAMPLER_SWAP_THRESHOLD ||
	    b->nframes >= factor * SAMPLER_SWAP_FRAMES;
}

/*
 * Hand the active buffer to the worker if it is full and the worker is
 * free, and once the job has named its frames of run-time compiled code
 * (the job calls this too, when it has); one much fuller goes as it is
 * (its frames are then kept alive, and named at the build).  Holding the
 * sampler's lock.
 *
 * Full is a number of samples or of frames, whichever comes first: the
 * two buffers take turns, so the pages they have grown into are written
 * again and again, and a page first written costs a fault (13 us each
 * on the VMs here, where Ruby's own boot spends some 20 ms of its 75 in
 * faults).  By samples alone, deep stacks grew each buffer to megabytes
 * (1024 samples of 200 frames, 17 bytes a frame) and Ruby's boot under
 * wall mode, whose every release of the GVL is a sample of some 40
 * frames, wrote 168 fresh pages there; 38 now (a one-line script: 1,831
 * faults in all -> 1,770, 1.7 ms less, medians of 40 runs interleaved).
 */
void
sampler_swap_locked(void)
{
	int active = atomic_load(&sampler.active);
	struct sampler_buffer *b = &sampler.buffers[active];

	if (sampler_buffer_full(b, 1) && sampler.worker_made &&
	    !atomic_load(&sampler.swap_pending) &&
	    (atomic_load_explicit(&b->pending, memory_order_relaxed) == 0 ||
	    sampler_buffer_full(b, 4))) {
		pthread_mutex_lock(&sampler.worker_mutex);
		atomic_store(&sampler.active, active ^ 1);
		sampler.swaps++;
		atomic_store(&sampler.swap_pending, 1);
		pthread_mutex_unlock(&sampler.worker_mutex);
		sampler_worker_kick();
	}
}

/* sampler_record_until, the span ending now. */
static void
sampler_record(struct sampler_thread *td, int64_t weight, int state)
{
	sampler_record_until(td, weight, state, 0);
}

/* Bill the blocked and waiting spans TD's releases carried
 * (sampler_carry_release) to O, the stack of the sample just recorded,
 * the span ending at END (0: now). */
static void
sampler_record_carried_of(struct sampler_thread *td, const struct sampler_of *o, int64_t end)
{
	sampler_record_of(o, td->carry_blocked, AGG_STATE_GVL_BLOCKED, end);
	sampler_record_of(o, td->carry_wait, AGG_STATE_GVL_WAIT, end);
	td->carry_blocked = td->carry_wait = 0;
}

/* sampler_record_carried_of, with TD's current stack. */
static void
sampler_record_carried(struct sampler_thread *td, int64_t end)
{
	struct sampler_of o;

	if (td->carry_blocked == 0 && td->carry_wait == 0)
		return;
	o = sampler_of_stack(td);
	sampler_record_carried_of(td, &o, end);
}

/*
 * Every frame the tables and caches keep was captured here first, so
 * here it goes through sampler_wb.  That reads each frame object's
 * header (19 ns a frame at depth 200, mostly cache misses), so the frames
 * the last capture of TD already passed, from the root up to the first
 * difference, are skipped, as long as no GC step has begun since: until
 * one does, no object dies, so the same VALUE is the same object.
 */
static void
sampler_capture_wb(struct sampler_thread *td, int depth)
{
	int k = 0, j;

	if (!sampler.cfg.alloc_only && td->wb_gen == sampler.gc_gen) {
		while (k < depth && k < td->wb_depth &&
		    td->wb_frames[k] == td->stack[depth - 1 - k] &&
		    td->wb_owns[k] == td->own[depth - 1 - k])
			k++;
	}
	for (; k < depth; k++) {
		j = depth - 1 - k;
		sampler_wb(td->stack[j]);
		sampler_wb(td->own[j]);
		td->wb_frames[k] = td->stack[j];
		td->wb_owns[k] = td->own[j];
		td->wb_transient[k] = (uint16_t)((k > 0 ? td->wb_transient[k - 1] : 0) +
		    (sampler_frames_once(td->stack[j]) ||
		    sampler_frames_once(td->own[j])));
	}
	td->wb_depth = depth;
	td->wb_gen = sampler.gc_gen;
	td->transient = depth > 0 ? td->wb_transient[depth - 1] : 0;
}

/*
 * Whether TD's stack, whose print is P, is the one its last capture took,
 * still in TD untouched: nothing changed it since (a change after a
 * capture counts as one, see sampler_job), no GC step began (an object
 * freed, its address reused), and the control frames print the same.  A
 * thread that lets the GVL go again and again from one C method (a
 * directory walk, a loop of small reads) runs no Ruby code in between,
 * and a loop runs the same frames from tick to tick: the print, a walk of
 * the control frames of some nanoseconds a frame, stands in for
 * rb_profile_frames and the own iseqs, which took microseconds on a deep
 * stack.
 */
static int
sampler_capture_same(const struct sampler_thread *td, const struct sampler_frames_print *p)
{
	return td->print_at != 0 && td->print_at == td->captures &&
	    td->print_gen == sampler.gc_gen && td->top == 0 &&
	    p->hash == td->print.hash && p->ec == td->print.ec &&
	    p->cfp == td->print.cfp && p->n == td->print.n;
}

/* Capture TD's stack into TD (SELF: TD is the current thread; else
 * another thread's, with the GVL). */
void
sampler_capture(struct sampler_thread *td, int self)
{
	int *lines = sampler.cfg.lines ? td->lines : NULL;
	struct sampler_frames_print p;
	int printed = self && td->ractor == 0 &&
	    sampler_frames_print(td->vm_thread, sampler.cfg.lines, &p);
	int depth;

	if (printed && sampler_capture_same(td, &p)) {
		if (td->depth > 0) {
			td->stack_label_set = td->label_set;
			td->stack_capture = td->capture;
		}
		return;
	}
	depth = self ?
	    rb_profile_frames(0, SAMPLER_MAX_DEPTH, td->stack, lines) :
	    rb_profile_thread_frames(td->thread, 0, SAMPLER_MAX_DEPTH, td->stack, lines);
	if (depth < 0)
		depth = 0;
	td->captures++;
	if (printed) {
		td->print = p;
		td->print_at = td->captures;
		td->print_gen = sampler.gc_gen;
	}
	sampler_frames_own(td->vm_thread, td->stack, depth, SAMPLER_MAX_DEPTH, td->own,
	    &td->cfp_base, td->cfps);
	sampler_capture_wb(td, depth);
	td->depth = depth;
	td->top = 0;
	if (depth > 0) {
		td->stack_label_set = td->label_set;
		td->stack_capture = td->capture;
	}
}

/*
 * Capture TD's stack (SELF: TD is the current thread) for billing the
 * rest of its time; where no Ruby frame is left (a thread's end, the end
 * proc at stop), the last stack it was seen with is kept instead: 1.
 */
static int
sampler_capture_or_keep(struct sampler_thread *td, int self)
{
	int depth = td->depth, top = td->top;

	sampler_capture(td, self);
	if (td->depth == 0) {
		td->depth = depth;
		td->top = top;
		td->captures++;	/* not the stack the capture took */
		return 1;
	}
	return 0;
}

/*
 * Bill TD's release of the GVL up to NOW (wall mode; TD's stack is
 * captured, where it let the GVL go: Thread::Queue#pop, IO#read): its
 * blocked and waiting spans, and the time it ran before the release,
 * since its last sample.  With CARRY (the RESUMED hook, when the thread
 * will be sampled again) that running span is carried to its next sample
 * instead: it ran in code no tick saw, not in the C method that let the
 * GVL go.  The ticks find a thread running in proportion to the time it
 * runs, and a tick's sample bills what was carried with its own time,
 * under the labels of that moment: in the long run each stack and label
 * set gets its share.  Billed at the release, two threads handing a
 * Queue back and forth with 20 and 80 us of work a turn had 1-3% of that
 * work billed to it, the rest to Thread::Queue#pop
 * (tests/fixtures/queue_turns.rb), and a label around a short part of a
 * loop that ends in a sleep took 97% of the loop's running time for its
 * 17% (labelled_release.rb).  Not for a thread of another Ractor, whose
 * job bills no carry, nor with --timeline: there each sample is a span
 * of the thread's time, drawn where it ends, and a sample that took
 * carried time would draw it over the releases that came between (the
 * timeline clips it), leaving the thread's runs before them blank.
 */
static void
sampler_bill_release(struct sampler_thread *td, int64_t now, int carry)
{
	struct agg_gvl_split split;

	agg_split_gvl(td->prev, td->suspended_at, td->ready_at, now, &split);
	split.blocked += td->carry_blocked;
	split.wait += td->carry_wait;
	td->carry_blocked = td->carry_wait = 0;
	/* Each part stamped with its own end (--no-aggregate).  Under one
	 * hold of the (recursive) lock. */
	pthread_mutex_lock(&sampler.lock);
	if (!carry)
		sampler_record_until(td, split.running + td->carry, AGG_STATE_NORMAL,
		    now - split.wait - split.blocked);
	sampler_record_until(td, split.blocked, AGG_STATE_GVL_BLOCKED, now - split.wait);
	sampler_record_until(td, split.wait, AGG_STATE_GVL_WAIT, now);
	pthread_mutex_unlock(&sampler.lock);
	td->carry = carry ? td->carry + split.running : 0;
	td->suspended = 0;
}

/*
 * TD's release of the GVL in Ruby's start-up (before the script's first
 * line) ends at NOW (RESUMED, wall mode): when it was short, leave all
 * of it to TD's next sample, its running span as sampler_bill_release
 * carries it and its blocked and waiting spans beside it, to be billed
 * in their own states to the stack of that sample; 1.  Start-up lets the
 * GVL go around each file it reads, some 2,000 times for a one-line
 * script, each for a few microseconds: a capture of some 40 frames and
 * three samples at each (1.3-2 us a release, 2.3 M instructions in all,
 * and the worker's tables and the profile as many stacks more) cost
 * more than the releases, where start-up's ticks come only 100 times a
 * second (sampler_tick_stride).  A release longer than a sampling period
 * (the start-up of a library that sleeps, waits on a socket) is billed
 * where it let the GVL go, as after start-up: 0.  Not for what
 * sampler_bill_release carries nothing of (a thread of another Ractor,
 * --timeline or --no-aggregate).
 */
static int
sampler_carry_release(struct sampler_thread *td, int64_t now)
{
	struct agg_gvl_split split;

	if (!atomic_load_explicit(&sampler.booting, memory_order_relaxed) ||
	    td->ractor != 0 || !sampler.cfg.aggregate)
		return 0;
	agg_split_gvl(td->prev, td->suspended_at, td->ready_at, now, &split);
	if (split.blocked + split.wait >= sampler_period_ns())
		return 0;
	td->carry += split.running;
	td->carry_blocked += split.blocked;
	td->carry_wait += split.wait;
	td->suspended = 0;
	return 1;
}

/*
 * Bill what TD has not been billed up to NOW.  A thread off the GVL is
 * billed as the RESUMED hook would, but for the time it ran before the
 * release, billed with it: no sample of it is to come.  TD's stack is
 * captured already.
 */
void
sampler_bill_rest(struct sampler_thread *td, int64_t now)
{
	if (sampler.cfg.mode == SAMPLER_WALL && td->suspended) {
		sampler_bill_release(td, now, 0);
	} else {
		pthread_mutex_lock(&sampler.lock);
		sampler_record(td, now - td->prev + td->carry, AGG_STATE_NORMAL);
		sampler_record_carried(td, 0);
		pthread_mutex_unlock(&sampler.lock);
		td->carry = 0;
	}
	td->prev = now;
}

/*
 * The sampler has just been armed at its start, with TD the record of
 * the thread that started it: bill the time this process ran before, and
 * move the profile's start back to the process's, so that the weights add
 * up to the process's time, not the sampler's.  In a process rperf
 * started, that is the exec, loading libruby, rperf's own start and
 * Ruby's init, billed to "(ruby boot)" alone (17-19 ms of a one-line
 * script's 94 ms of CPU on the VMs here went to nothing).  In a forked
 * child (CHILD) or a daemon, it is the fork's return and Ruby's and
 * rperf's set-up after it, billed to the stack at the fork call (some
 * 1 ms a fork, which a fork-per-job worker lost on every job).  In cpu
 * mode the thread's CPU clock since it began (at the exec, or the
 * fork; since main if another program ran before the exec, see
 * util_inherited()); in wall mode the time since util_origin_ns().
 */
void
sampler_bill_boot(struct sampler_thread *td, int child)
{
	int64_t upto = td->prev, from = 0, now = util_mono_ns();
	int64_t origin = util_origin_ns(), back;
	/* NULL in a forked child, whose clocks start at the fork */
	const struct util_inherited *in = util_inherited();

	if (sampler.cfg.alloc_only || !atomic_load(&sampler.armed))
		return;
	if (sampler.cfg.mode == SAMPLER_WALL) {
		if (origin <= 0)
			return;		/* not noted: nothing to bill from */
		from = origin;
	} else if (td->mn) {
		from = upto - td->mn_base;	/* its clock counts from there */
	} else if (in != NULL) {
		from = in->thread_cpu;	/* another program's */
	}
	if (from >= upto)
		return;
	/* The profile's start: the process's, in cpu mode too (Duration is
	 * real time). */
	back = origin > 0 && origin < now ? now - origin : upto - from;
	sampler.start_mono -= back;
	sampler.start_real_ns -= back;
	sampler.sent_real_ns = sampler.start_real_ns;
	/* the process's CPU since it began */
	sampler.proc_cpu_at = in != NULL ? in->proc_cpu : 0;
	if (child)
		sampler_capture(td, 1);
	else
		td->empty = SAMPLER_FRAME_BOOT;
	td->prev = from;
	sampler_bill_rest(td, upto);
	td->empty = 0;
}

/* What this native thread's CPU clock read when the last thread record
 * on it was billed for the last time (0 before any): a native thread
 * reused for another Ruby thread bills only what came after.  And that
 * thread's number, until its exit is billed (0 then). */
static __thread int64_t sampler_native_billed;
static __thread int sampler_native_key;

/*
 * TD's thread, made while the sampler was armed, has just got its record
 * (cpu mode, on the thread): bill the CPU time its native thread spent
 * before, making the thread and setting up Ruby on it, where no Ruby
 * frame runs yet.  Without this a program that starts many short threads
 * (a thread a request) lost some 30 us of each thread's CPU.
 */
void
sampler_bill_birth(struct sampler_thread *td)
{
	int64_t upto = td->prev;

	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    upto <= sampler_native_billed)
		return;
	td->prev = sampler_native_billed;
	td->empty = SAMPLER_FRAME_THREAD_START;
	sampler_bill_rest(td, upto);
	td->empty = 0;
}

/*
 * A thread of the main Ractor, whose record THREAD_END billed and
 * dropped, is done (EXITED, on it, without the GVL; cpu mode): bill its
 * CPU time since, Ruby's teardown of the thread (joiners woken, mutexes
 * let go, the GVL handed on), where no Ruby frame runs.  Some 20 us a
 * thread, which a thread-per-request server lost on every request.  The
 * little the native thread does after this hook goes unbilled.
 */
static void
sampler_bill_exit(void)
{
	struct sampler_of o = { .seq = sampler_native_key, .empty = SAMPLER_FRAME_THREAD_END };
	int64_t now;

	if (o.seq == 0)
		return;
	sampler_native_key = 0;
	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    sampler_read_clock(CLOCK_THREAD_CPUTIME_ID, &now) != 0)
		return;
	sampler_record_of(&o, now - sampler_native_billed, AGG_STATE_NORMAL, 0);
	sampler_native_billed = now;
}

/*
 * Bill TD's time up to NOW to the stack it was last seen with, under the
 * labels and capture of that moment: the stack and its labels are one
 * observation.  (A server thread that ends after its request billed the
 * tail of the request's work, seen last, without the request's labels,
 * which its middleware had taken off by then.)
 */
static void
sampler_bill_rest_as_seen(struct sampler_thread *td, int64_t now)
{
	int label_set = td->label_set, capture = td->capture;

	td->label_set = td->stack_label_set;
	td->capture = td->stack_capture;
	sampler_bill_rest(td, now);
	td->label_set = label_set;
	td->capture = capture;
}

/*
 * TD's thread ends with no Ruby frame left (THREAD_END, or EXITED for
 * another Ractor's): bill its time since its last sample, up to NOW, to
 * the first stack a tick found it in, under the labels and capture of
 * that sample.  A sample bills the time since the thread's previous one
 * to the stack the tick found, so the ticks inside a thread's life cover
 * all of it in the long run but its first period: its first tick's
 * sample bills only the time from its start, and the stacks of that
 * period come out short, by half a period a thread on average, as much
 * as its end leaves unbilled.  Given to the stack seen last, that part
 * was billed twice at the end and missed at the start: threads of 2.5 ms
 * of work and then 2.5 ms more (tests/fixtures/thread_ends.rb, 1 kHz)
 * had the second 19-24% over its clock and the first 23-25% under (now
 * within 5%), and the work of a Sinatra route on WEBrick, seen last on
 * its connection's thread, came out 4-12% over (11% in a CI run under
 * ASan; now 0-6%: the part also holds the time up to the ticks lost near
 * the thread's end, whose jobs ran on another thread, and where a tick
 * first found the thread in that work, the work takes it all).  Not the
 * first sample of any kind: a release's or a wake-up's stack is not
 * where ticks land (the fixture's Object#cpu_clock, where each thread
 * first woke, took its end).  Where no first stack was kept (a thread of
 * another Ractor; --timeline or --no-aggregate, whose samples are spans
 * that end where they are drawn; a thread every tick found in code that
 * runs once), the stack seen last, under its labels; where no sample
 * ever saw one, TD's empty pseudo-frame ("(unsampled thread)").
 */
static void
sampler_bill_end(struct sampler_thread *td, int64_t now)
{
	const struct sampler_first *f = td->first;
	struct sampler_of o = {
		.td = td, .seq = td->key, .empty = td->empty,
	};

	if (f == NULL || (sampler.cfg.mode == SAMPLER_WALL && td->suspended)) {
		sampler_bill_rest_as_seen(td, now);
		return;
	}
	o.label_set = f->label_set;
	o.capture = f->capture;
	o.frames = f->frames;
	o.owns = f->owns;
	o.lines = f->lines;
	o.depth = f->depth;
	pthread_mutex_lock(&sampler.lock);
	sampler_record_of(&o, now - td->prev + td->carry, AGG_STATE_NORMAL, 0);
	sampler_record_carried_of(td, &o, 0);
	pthread_mutex_unlock(&sampler.lock);
	td->carry = 0;
	td->prev = now;
}

/* Bill the rest of TD's time (SELF: TD is the current thread) to the
 * stack it has now, or to its last one where no Ruby frame is left. */
void
sampler_bill_last(struct sampler_thread *td, int self)
{
	int64_t now;
	int kept = sampler_capture_or_keep(td, self);

	now = self ? sampler_clock_self(td) : sampler_clock(td);
	if (kept)
		sampler_bill_rest_as_seen(td, now);
	else
		sampler_bill_rest(td, now);
}

/* Whether time can be billed now, outside a sample: sampling runs in
 * this process, armed, for time (not -m alloc), and no build is on. */
static int
sampler_billing_now(void)
{
	return sampler_running() && !sampler.cfg.alloc_only && atomic_load(&sampler.armed) &&
	    !atomic_load(&sampler.building);
}

/* See sampler.h (with the GVL; threads of the main Ractor). */
void
sampler_bill_now(void)
{
	struct sampler_thread *td;

	if (!sampler_billing_now())
		return;
	td = sampler_thread_current();
	if (td != NULL && td->ractor == 0)
		sampler_bill_last(td, 1);
}

/* See sampler.h (with the GVL). */
void
sampler_bill_all_now(void)
{
	struct sampler_thread *td, *self;

	if (!sampler_billing_now())
		return;
	self = sampler_thread_current();
	/* As at the stop; another Ractor's threads are left to themselves
	 * (they run on, in parallel, and bill themselves). */
	for (td = sampler.threads; td != NULL; td = td->next) {
		if (td->ractor == 0)
			sampler_bill_last(td, td == self);
	}
}

/* The type bits of frame F (its imemo kind): a method entry's differ
 * from an iseq's (a block, a script's top, an eval'd string). */
static VALUE
sampler_frame_kind(VALUE f)
{
	return RBASIC(f)->flags & (RUBY_T_MASK | ((VALUE)0xf << RUBY_FL_USHIFT));
}

/* Whether F is a compile site. */
static int
sampler_is_compile_site(VALUE f)
{
	int i;

	for (i = 0; i < sampler.ncompile_sites; i++) {
		if (sampler.compile_sites[i] == f)
			return 1;
	}
	return 0;
}

/*
 * Drop TD's leaf frame when it is a method called straight from a compile
 * site (Integer#-@, which the compiler calls to fold a negative literal):
 * the job ran at its first safepoint, but the time since the previous
 * sample went to compiling.  What runs above a compile site for real is
 * the compiled code, a block or a script's top, not a method entry; a
 * method a compile site calls itself (to_path) runs for microseconds.
 * In boot, a method alone on the stack is called the same way while the
 * script itself (or a -e) is compiled, with no Ruby frame below.
 */
static int
sampler_drop_compile_callee(struct sampler_thread *td)
{
	if (td->depth < 1 || sampler_frame_kind(td->stack[0]) != sampler.method_kind)
		return 0;
	if (td->depth == 1) {
		if (sampler.booting && !sampler_is_compile_site(td->stack[0])) {
			td->depth = 0;
			return 1;
		}
		return 0;
	}
	if (sampler_is_compile_site(td->stack[1])) {
		td->depth--;
		memmove(td->stack, td->stack + 1, td->depth * sizeof *td->stack);
		memmove(td->own, td->own + 1, td->depth * sizeof *td->own);
		memmove(td->lines, td->lines + 1, td->depth * sizeof *td->lines);
		return 1;
	}
	return 0;
}

/* The job on TD, a thread of a Ractor other than the main one: its
 * sample if a tick asked for one, then pass on what it may have taken
 * from other such threads (sampler-ractor.c).  The frame noted at the
 * tick and the compile sites are the main Ractor's: not used here. */
static void
sampler_job_ractor(struct sampler_thread *td)
{
	int64_t now;

	if (td->ractor < 0)
		sampler_ractor_identify(td);
	if (sampler_ractor_due(td) && (now = sampler_clock_self(td)) > td->prev) {
		sampler_capture(td, 1);
		sampler_record(td, now - td->prev, AGG_STATE_NORMAL);
		td->prev = now;
		if (!td->clock_open && td->slow_reads >= SAMPLER_FAST_CLOCK_READS)
			sampler_thread_open_clock(td);
	}
	sampler_ractor_forward(td);
}

/*
 * Whether tick TICK, the last one, found the thread holding the GVL in a
 * GC step.  The GC hook bills the step's time to the GC, with the stack
 * that started it, and leaves the thread's time before it unbilled; a
 * sample for such a tick would bill that time to the same stack, an
 * allocation's (the job runs as soon as the step ends, in the code that
 * allocated), so the more a program collects, the more of its own time
 * its allocating frames would get.  No sample is taken: the time waits
 * for the next tick that finds the thread running its own code, or for a
 * change of the thread's labels (sampler_set_label_set), which bills it
 * first, so that it stays with the request or job it belongs to.
 */
static int
sampler_tick_in_gc(uint_fast64_t tick)
{
	return atomic_load(&sampler.gc_tick) == tick;
}

/*
 * Capture TD's stack in the job, or as a GC starts on TD: 0.  Where the
 * main thread has no Ruby frame left after boot, keep the stack it was
 * last seen with instead: 1, and the job bills that as seen.  That is the
 * end of the script: Ruby's cleanup checks for interrupts first thing,
 * with no frame left, and the time since the previous sample went to the
 * script's last code, not to "(no Ruby frame)" (the stop bills the rest
 * of the thread's time the same way); so does a GC that the cleanup
 * starts (seen once in a CI run, Ruby 3.3: 0.8 ms before it and 1 ms of
 * marking under "(no Ruby frame)").  In boot, the script's own compile
 * runs with no frame, and a thread's birth and end are billed as they
 * are (see the man page).
 */
static int
sampler_job_capture(struct sampler_thread *td)
{
	if (sampler.booting || td->depth == 0 || td->thread != rb_thread_main()) {
		sampler_capture(td, 1);
		return 0;
	}
	return sampler_capture_or_keep(td, 1);
}

/*
 * Where on TD's clock the job's sample of tick TICK ends (NOW: TD's clock
 * now), with the monotonic time of that end in *END (0: now): at the
 * tick, not at the job.  The sample bills the stack the tick found, and
 * what ran between the tick and the job goes to the next sample, as a
 * signal on the thread would bill it.  Ended at the job instead, a C
 * method with no safepoint in it (Array#sort, a big Integer's *) kept
 * the time from its last tick to its return, where a signal gives it to
 * the next tick's frame, while it still took the time from the previous
 * sample to its call, as a signal does: some half a period more than it
 * ran at each call, taken from the code before it (a loop of 10 ms
 * before a sort of 22 ms, at 1000 Hz: the loop billed 5% less than it
 * ran, the sort 2% more).  TD ran from the tick to the job, holding the
 * GVL, so its clock moved as the monotonic one did (in cpu mode, unless
 * the kernel ran another thread on its CPU meanwhile: then the end is
 * early, never before the last one).  Where the tick noted no frame of
 * TD, or TD's clock moved less than that, the sample ends now.
 */
static int64_t
sampler_job_upto(struct sampler_thread *td, uint_fast64_t tick, int64_t now, int64_t *end)
{
	int64_t at = sampler_tick_mono(tick, td->vm_thread), since;

	*end = 0;
	if (at == 0 || (since = util_mono_ns() - at) <= 0 || now - since <= td->prev)
		return now;
	*end = at;
	return now - since;
}

/*
 * The job on TD for a tick that found another thread holding the GVL, or
 * none (sampler_tick_elsewhere); NOW: TD's clock.  TD's time since its
 * last sample is not billed to the stack it woke up with, where its work
 * went before (a sleep, Thread::Queue#pop), but waits for a tick that
 * finds it running.  Except, in cpu mode, the CPU time TD spent off the
 * GVL since (summed by the GVL hook): that went to the C method that let
 * the GVL go, where TD wakes up, compressing (Zlib.deflate: 96% of a
 * loop's CPU, 29% when such jobs billed nothing), reading a file,
 * handing the GVL over; it is billed there now, and the rest is carried
 * to TD's next sample.
 */
static void
sampler_job_elsewhere(struct sampler_thread *td, int64_t now)
{
	int64_t off = td->off_at == td->prev ? td->off_cpu : 0;

	if (sampler.cfg.mode != SAMPLER_CPU || off <= 0 || now <= td->prev)
		return;
	if (off > now - td->prev)
		off = now - td->prev;
	td->off_cpu = 0;
	if (sampler_job_capture(td))
		return;		/* no frame left to bill it to: it waits */
	sampler_record(td, off, AGG_STATE_NORMAL);
	td->carry += now - td->prev - off;
	td->prev = now;
}

/* The postponed job: one timer sample of the thread holding the GVL (or
 * its Ractor's lock). */
void
sampler_job(void *arg)
{
	struct sampler_thread *td;
	int64_t t0, now, upto, end;
	uint_fast64_t triggers;
	int timed, changed, label_set, seen;

	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    sampler.forked)
		return;
	if ((td = sampler_thread_current()) == NULL)
		return;		/* past its THREAD_END: nothing to sample */
	if (td->ractor != 0) {
		sampler_job_ractor(td);
		return;
	}
	/* The job's bit is one for all Ractors: a thread of another that
	 * asked for it may have lost it to this one. */
	sampler_ractor_forward(td);
	if (atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed))
		sampler_alloc_pending();
	/* The compile hook took this tick's sample already. */
	if ((triggers = atomic_load(&sampler.triggers)) == sampler.triggers_served)
		return;
	sampler.triggers_served = triggers;
	/* The job's own time is read on one job in SAMPLER_JOB_TIMED and
	 * counted for all of them: two clock reads are a tenth of a job. */
	timed = sampler.jobs++ % SAMPLER_JOB_TIMED == 0;
	t0 = timed ? util_mono_ns() : 0;
	sampler_tick_prefetch();
	if (sampler_frames_mirrored())
		sampler_tick_holder(td, 1);
	now = sampler_clock_self(td);
	/* (Next to the clock's reading: the time since the tick is from
	 * there, not from after the capture.) */
	upto = sampler_job_upto(td, triggers, now, &end);
	atomic_store_explicit(&sampler.in_job, 1, memory_order_relaxed);
	if (now > td->prev && sampler_tick_in_gc(triggers)) {
		td->gc_deferred = 1;
	} else if (sampler_tick_elsewhere(triggers, td->vm_thread)) {
		sampler_job_elsewhere(td, now);
	} else if (now > td->prev) {
		td->gc_deferred = 0;
		if (sampler_job_capture(td)) {
			sampler_bill_rest_as_seen(td, now);
		} else {
			sampler_tick_seen(td);
			sampler_tick_seen_me(td);
			/* A frame noted at the tick ran Ruby code then: no
			 * compile time to move off a callee. */
			changed = sampler_tick_cut(td, triggers, &seen);
			if (!changed && sampler.ncompile_sites > 0)
				changed = sampler_drop_compile_callee(td);
			/* A stack changed (or its line set from the tick's
			 * pc) is not the capture's: counted as another. */
			if (changed || sampler.cfg.lines)
				td->captures++;
			/* The stack the tick found, under the labels of that
			 * moment. */
			label_set = td->label_set;
			if (seen)
				td->label_set = sampler_tick_noted_labels(triggers, td);
			sampler_record_from(td, upto - td->prev + td->carry, AGG_STATE_NORMAL,
			    end, 1);
			sampler_record_carried(td, end);
			td->label_set = label_set;
			td->prev = upto;
			td->carry = 0;
		}
		sampler.timer_samples++;
		if (!td->clock_open && td->slow_reads >= SAMPLER_FAST_CLOCK_READS)
			sampler_thread_open_clock(td);
	}
	sampler_resolve_pending();
	atomic_store_explicit(&sampler.in_job, 0, memory_order_relaxed);
	if (timed)
		sampler.job_ns += (uint64_t)(util_mono_ns() - t0) * SAMPLER_JOB_TIMED;
}

/*
 * F is a new compile site: the samples taken while it compiled, before
 * it was known (the first file a run loads, rubygems.rb), carry a method
 * it called as their leaf; drop it from those still in the active
 * buffer, as the job now would.  Once per site, a scan of at most a
 * buffer's samples.  Only GVL holders write the active buffer.
 */
static void
sampler_drop_buffered_callees(VALUE f)
{
	struct sampler_buffer *b = &sampler.buffers[atomic_load(&sampler.active)];
	size_t i;

	for (i = 0; i < b->nsamples; i++) {
		struct sampler_sample *s = &b->samples[i];
		VALUE leaf = b->frames[s->frame_off];

		if (s->depth >= 2 && b->frames[s->frame_off + 1] == f &&
		    !RB_SPECIAL_CONST_P(leaf) &&
		    sampler_frame_kind(leaf) == sampler.method_kind) {
			s->frame_off++;
			s->depth--;
		}
	}
}

/* Remember F, the frame on top when a script was compiled (Kernel#require,
 * Kernel#eval, ...), as a compile site. */
static void
sampler_add_compile_site(VALUE f)
{
	if (sampler_is_compile_site(f) || sampler.ncompile_sites == SAMPLER_COMPILE_SITES)
		return;
	if (sampler.ncompile_sites == 0)
		sampler.method_kind = sampler_frame_kind(f);
	sampler_wb(f);
	sampler.compile_sites[sampler.ncompile_sites++] = f;
	sampler_drop_buffered_callees(f);
}

/*
 * SCRIPT_COMPILED hook: a required or loaded file, or an eval'd string,
 * is compiled and its code about to run, with the compile site (the C
 * frame of require, load or eval) on top.  When a tick fell due during
 * the compile (with no safepoint since), take its sample here, at the
 * compile site, or the first safepoint of the compiled code would take
 * it; the job then finds the tick served.
 */
static void
sampler_compiled_hook(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
	struct sampler_thread *td;
	uint_fast64_t triggers;
	VALUE top;

	if (!sampler.started || sampler.forked || atomic_load(&sampler.building))
		return;
	if (rb_profile_frames(0, 1, &top, NULL) == 1)
		sampler_add_compile_site(top);
	triggers = atomic_load(&sampler.triggers);
	if (!atomic_load(&sampler.armed) || triggers == sampler.triggers_served ||
	    (td = sampler_thread_get(rb_thread_current())) == NULL)
		return;
	sampler.triggers_served = triggers;
	if (sampler_tick_in_gc(triggers))
		return;
	sampler_capture(td, 1);
	sampler_bill_rest(td, sampler_clock_self(td));
	sampler.timer_samples++;
}

/* A thread ended (EXITED, on that thread, without its Ractor's lock).
 * The main Ractor's are billed and dropped at THREAD_END; another's,
 * whose THREAD_END goes to its own Ractor's hooks, here, as THREAD_END
 * bills the rest of its time (sampler_bill_end). */
static void
sampler_thread_exited(struct sampler_thread *td)
{
	if (td == NULL || td->ractor == 0)
		return;
	sampler_ractor_release(td);
	td->empty = SAMPLER_FRAME_UNSAMPLED;
	if (atomic_load(&sampler.armed) && !atomic_load(&sampler.building))
		sampler_bill_end(td, sampler_clock_self(td));
	sampler_thread_free(td);
}

static void sampler_off_gvl(struct sampler_thread *td, int suspended);

/* GVL hook: who holds the GVL (for the tick's signal), and in wall mode
 * the split of each release.  Only RESUMED holds the GVL. */
static void
sampler_gvl_hook(rb_event_flag_t event, const rb_internal_thread_event_data_t *data,
    void *arg)
{
	struct sampler_thread *td;
	int64_t now;

	if (sampler.forked)
		return;
	/* (In the parent, about to make the thread's native thread.) */
	if (event & RUBY_INTERNAL_THREAD_EVENT_STARTED) {
		if (atomic_load(&sampler.armed) && sampler.cfg.mode == SAMPLER_CPU)
			rb_internal_thread_specific_set(data->thread, sampler.born_key, &sampler);
		return;
	}
	td = sampler_thread_get(data->thread);
	if (event & RUBY_INTERNAL_THREAD_EVENT_EXITED) {
		if (td == NULL)
			sampler_bill_exit();
		else
			sampler_thread_exited(td);
		return;
	}
	if (td == NULL && (event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) &&
	    !atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed) &&
	    !sampler_ractor_main()) {
		atomic_store(&sampler.ractors_seen, 1);	/* see sampler-alloc.c */
		sampler_timer_resume();	/* after the store: sampler_tick_pause */
	}
	/* A new thread's first RESUMED comes before its THREAD_BEGIN (and a
	 * thread of another Ractor has none we see): make its record now,
	 * so that the ticks reach it from its first run. */
	if (td == NULL && (event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) &&
	    atomic_load(&sampler.armed) && !atomic_load(&sampler.building) &&
	    data->thread == rb_thread_current() &&
	    (sampler_frames_mirrored() || !sampler_ractor_main()) &&
	    !sampler_thread_ended(data->thread))
		td = sampler_thread_create(data->thread);
	if (td != NULL && td->ractor < 0 && (event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) &&
	    data->thread == rb_thread_current())
		sampler_ractor_adopt(td);
	if (td != NULL && td->mn && (event & (RUBY_INTERNAL_THREAD_EVENT_RESUMED |
	    RUBY_INTERNAL_THREAD_EVENT_SUSPENDED)) && data->thread == rb_thread_current())
		sampler_thread_mn_run(td, (event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) != 0);
	/* (Its kernel thread is the caller's when it is the current one.) */
	if (td != NULL && td->ractor != 0 && (!(event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) ||
	    data->thread == rb_thread_current()))
		sampler_ractor_holding(td, (event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) != 0);
	else if (td != NULL && sampler_frames_mirrored())
		sampler_tick_holder(td, (event & RUBY_INTERNAL_THREAD_EVENT_RESUMED) != 0);
	/* The CPU time off the GVL (on the thread: its own clock, read
	 * without the GVL at SUSPENDED), for sampler_job_elsewhere. */
	if ((event & (RUBY_INTERNAL_THREAD_EVENT_SUSPENDED | RUBY_INTERNAL_THREAD_EVENT_RESUMED)) &&
	    td != NULL && sampler.cfg.mode == SAMPLER_CPU && td->ractor == 0 &&
	    sampler_frames_mirrored() && atomic_load(&sampler.armed) &&
	    data->thread == rb_thread_current())
		sampler_off_gvl(td, (event & RUBY_INTERNAL_THREAD_EVENT_SUSPENDED) != 0);
	if (!atomic_load(&sampler.armed) || sampler.cfg.mode != SAMPLER_WALL)
		return;
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
		if (data->thread != rb_thread_current() || sampler_thread_ended(data->thread))
			return;
		sampler_thread_create(data->thread);
		return;
	}
	if (!td->suspended)
		return;
	now = util_mono_ns();
	if (!sampler_carry_release(td, now)) {
		sampler_capture(td, data->thread == rb_thread_current());
		sampler_bill_release(td, now, td->ractor == 0 && sampler.cfg.aggregate);
	}
	td->prev = now;
}

/*
 * TD (cpu mode, on its thread) lets the GVL go (SUSPENDED), or has it
 * back: add the CPU time it spent without it since its last sample.
 * Only once its fast clock is open: by system call, two reads a release
 * cost a thread that lets the GVL go often (a request's thread, which
 * may never open it) some 3 us a release here; until then its time off
 * the GVL goes with the rest to its next sample.
 */
static void
sampler_off_gvl(struct sampler_thread *td, int suspended)
{
	int64_t now, from;

	if (!td->clock_open) {
		td->suspended_cpu = 0;
		return;
	}
	now = sampler_clock_self(td);
	if (suspended) {
		td->suspended_cpu = now;
		return;
	}
	if (td->suspended_cpu == 0)
		return;
	from = td->suspended_cpu > td->prev ? td->suspended_cpu : td->prev;
	if (td->off_at != td->prev) {
		td->off_cpu = 0;
		td->off_at = td->prev;
	}
	if (now > from)
		td->off_cpu += now - from;
	td->suspended_cpu = 0;
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

/* The stack of TD, entering a GC in which it is billed. */
static void
sampler_gc_capture(struct sampler_thread *td)
{
	sampler_job_capture(td);
	sampler_tick_seen_me(td);
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

	if (event & RUBY_INTERNAL_EVENT_GC_ENTER) {
		sampler.gc_gen++;	/* see sampler_capture_wb */
		sampler_tick_gc(1);
		atomic_store(&sampler.gc_running, 1);
	} else if (event & RUBY_INTERNAL_EVENT_GC_EXIT) {
		atomic_store(&sampler.gc_running, 0);
		sampler_tick_gc(0);
	}
	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    sampler.forked)
		return;
	if (ev == AGG_GC_ENTER) {
		td = sampler_thread_get(rb_thread_current());
		sampler.gc_td = td;
		agg_gc_enter(&sampler.gc, td != NULL, td != NULL ? sampler_clock_self(td) : 0);
		/* The stack is taken before any marking: its frames are then
		 * marked (and pinned) by this GC.  Taken after it (at END_MARK,
		 * as once), they were not, and a compaction right after moved
		 * them: the tables kept where they had been.  An entry with no
		 * GC under way (most often the allocator looking for a page)
		 * takes it only if a marking starts in it. */
		if (td != NULL && sampler.gc.seg_state != 0)
			sampler_gc_capture(td);
		return;
	}
	td = sampler.gc_td;
	if (ev == AGG_GC_START && td != NULL && sampler.gc.open &&
	    sampler.gc.seg_state == 0)
		sampler_gc_capture(td);
	if (!agg_gc_bills(&sampler.gc, ev))
		agg_gc_event(&sampler.gc, ev, 0, NULL, &state);
	else if ((w = agg_gc_event(&sampler.gc, ev, sampler_clock_self(td), &td->prev,
	    &state)) > 0)
		sampler_record(td, w, state);
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
	/* THREAD_END: bill the rest of the thread's life and drop it; no
	 * tick notes it from now on. */
	if (td == NULL)
		return;
	sampler_tick_holder(td, 0);
	sampler_native_key = 0;
	if (atomic_load(&sampler.armed) && !atomic_load(&sampler.building)) {
		/* A thread that ran less than about a period may end before
		 * any sample saw its stack: its time goes where no frame can
		 * be blamed, under a name that says so. */
		td->empty = SAMPLER_FRAME_UNSAMPLED;
		if (sampler_capture_or_keep(td, 1))
			sampler_bill_end(td, sampler_clock_self(td));
		else
			sampler_bill_rest(td, sampler_clock_self(td));
		if (!td->mn && sampler.cfg.mode == SAMPLER_CPU) {
			sampler_native_billed = td->prev;
			sampler_native_key = td->key;
		}
	}
	if (!sampler_thread_save_name(td))
		sampler_thread_give_key(td);
	sampler_thread_end(td);
}

/* Fiber switch hook (with the GVL, on the thread, in the fiber switched
 * to): keeps the context the ticks read first current. */
static void
sampler_fiber_hook(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
	struct sampler_thread *td;

	(void)event;
	(void)data;
	(void)self;
	(void)mid;
	(void)klass;
	if (sampler.started && !sampler.forked && (td = sampler_thread_current()) != NULL)
		sampler_tick_switched(td->vm_thread);
}

/*
 * The phase of a GC already under way as the hook goes in.  A forked
 * child goes on with its parent's: a lazy sweep the parent left (GC.start
 * (immediate_sweep: false), a prefork server's boot) is finished in the
 * child's allocations, with no GC_START or END_MARK of its own to say
 * which phase it is in.
 */
static int
sampler_gc_phase_now(void)
{
	VALUE state = rb_gc_latest_gc_info(ID2SYM(rb_intern("state")));

	if (state == ID2SYM(rb_intern("sweeping")))
		return AGG_STATE_GC_SWEEP;
	if (state == ID2SYM(rb_intern("marking")))
		return AGG_STATE_GC_MARK;
	return 0;
}

/* Add the GC, thread, compile and fiber switch hooks and the GVL hook
 * (or take back the one the parent left in this forked child). */
void
sampler_hooks_install(void)
{
	rb_event_flag_t gvl_events = 0;

	sampler.gc.phase = sampler_gc_phase_now();
	if (!sampler.cfg.alloc_only)	/* -m alloc bills no time */
		rb_add_event_hook(sampler_gc_hook,
		    RUBY_INTERNAL_EVENT_GC_START | RUBY_INTERNAL_EVENT_GC_END_MARK |
		    RUBY_INTERNAL_EVENT_GC_END_SWEEP | RUBY_INTERNAL_EVENT_GC_ENTER |
		    RUBY_INTERNAL_EVENT_GC_EXIT, Qnil);
	rb_add_event_hook(sampler_thread_hook,
	    RUBY_EVENT_THREAD_BEGIN | RUBY_EVENT_THREAD_END, Qnil);
	rb_add_event_hook(sampler_compiled_hook, RUBY_EVENT_SCRIPT_COMPILED, Qnil);
	/* Where ticks note the holder's frame (see sampler_tick_switched). */
	if (sampler_frames_mirrored() && !sampler.cfg.alloc_only)
		rb_add_event_hook(sampler_fiber_hook, RUBY_EVENT_FIBER_SWITCH, Qnil);
	sampler.event_hooks = 1;
	if (sampler_orphan_gvl_hook != NULL) {
		sampler.gvl_hook = sampler_orphan_gvl_hook;
		sampler_orphan_gvl_hook = NULL;
		return;
	}
	/* Always: threads of other Ractors are known only by it. */
	gvl_events = RUBY_INTERNAL_THREAD_EVENT_SUSPENDED |
	    RUBY_INTERNAL_THREAD_EVENT_RESUMED | RUBY_INTERNAL_THREAD_EVENT_EXITED;
	if (sampler.cfg.mode == SAMPLER_WALL)
		gvl_events |= RUBY_INTERNAL_THREAD_EVENT_READY;
	else
		gvl_events |= RUBY_INTERNAL_THREAD_EVENT_STARTED;
	sampler.gvl_hook = rb_internal_thread_add_event_hook(sampler_gvl_hook,
	    gvl_events, NULL);
}

/* Remove the GVL, GC, thread, compile and fiber switch hooks. */
void
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
		rb_remove_event_hook(sampler_compiled_hook);
		rb_remove_event_hook(sampler_fiber_hook);
		sampler.event_hooks = 0;
	}
}
