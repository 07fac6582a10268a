/*
 * sampler-tick.c: where the thread holding the GVL was when the timer
 * fired.  The job runs at the next safepoint, which in Ruby code is very
 * often the `leave` of a small method the thread has just called; billed
 * there, a caller's own work would go to its callees.  So on each tick
 * the worker notes the GVL holder's innermost control frame (address,
 * iseq word, environment and receiver, and a C frame's method entry) and
 * its callers (up to SAMPLER_CHAIN frames in all), and the job bills the
 * stack cut at that frame when the frame is still there, among the
 * callers of the frame the job finds (sampler_tick_cut); where the frame
 * has returned since (a C method with no safepoint in it never reaches
 * the job), it is put back on the part of the stack still the same.  A
 * tick that finds the thread in a GC step takes no sample
 * (sampler_tick_in_gc).  stackprof and vernier, which capture the stack
 * in a signal handler on the thread, are the reference:
 * bench/accuracy/against compares with them.
 *
 * The worker signals the holder (sampler_tick_ask), which notes its own
 * frame in the handler, stopped where the tick found it, and asks for
 * the job itself; with --peek, or where no signal can go, the worker
 * reads the frame from its own CPU while the holder runs on, which costs
 * the holder no signal (some 4-15 us a tick on the VMs here) but gives a
 * guess that the memory system skews (see sampler_tick_ask).  Either
 * reads with plain loads (sampler_frames_peek), within a bracket that
 * keeps what it reads allocated: the same one the worker's pokes use
 * (sampler_tick_poke), which the holder waits out before it lets the
 * GVL go or ends, and a GC before it starts (only a GC frees a thread's
 * record, its VM stack or a fiber's context).  What is read of a stack
 * that may be mid-change is only a guess, which the job checks against
 * the frames it walks itself, with the GVL, before it cuts anything.
 * The note's writer holds no lock, calls no Ruby API and allocates
 * nothing.
 *
 * The holder is tracked by the GVL hook (RESUMED, SUSPENDED) and the job,
 * as its VM record; the note is a sequence of atomics published by its
 * tick number, written by one writer at a time (the holder in the
 * signal's handler, or the worker).
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* A frame of a note's chain: the fields of struct sampler_chain, a
 * cache line to each frame, so that the job fetches only those it reads
 * (most jobs read one or two). */
struct sampler_note_frame {
	_Alignas(64) atomic_uintptr_t iseq;
	atomic_uintptr_t pc, ep, self, me, me_sure, prev;
};

/* The last tick's note: the holder's VM record, the monotonic time of
 * the tick, its innermost control frame, the GC steps begun before it
 * was read, the holder's labels, and the chain of that frame and its
 * callers; TICK is written last (0 while the others change). */
static struct {
	/* The head, in one cache line. */
	_Alignas(64) atomic_uint_fast64_t tick;
	atomic_uintptr_t vm_thread;
	_Atomic int64_t mono;
	atomic_uintptr_t cfp;
	atomic_uint_fast64_t gc_gen;
	/* The holder's labels and capture (sampler.holder_labels), and 1 if
	 * they were read as the holder's. */
	atomic_uint_fast64_t labels;
	atomic_int labels_held;
	atomic_int chain_n;
	struct sampler_note_frame chain[SAMPLER_CHAIN];
} sampler_note;

/* The last tick that found no thread holding the GVL. */
static atomic_uint_fast64_t sampler_note_none;

/* The note being written (1), by the worker or the holder: one writer
 * at a time (a tick's signal can reach the holder a period late, or the
 * worker notes itself where it signals none). */
static atomic_int sampler_noting;

/* What the job reads of a note: the chain, and from it the frame's iseq
 * word and its caller's (0 for a C frame), their pcs, what tells the
 * frame from a later one in its slot (environment and receiver), the
 * caller's caller's iseq word and environment, and a C frame's method
 * entry and whether it was read standing still. */
struct sampler_noted {
	uintptr_t cfp, iseq, parent, pc, caller_pc, ident[2], grand[2], me;
	int me_sure;
	uint_fast64_t tick, gc_gen;
	void *vm_thread;
	/* Of the chain, the first frames are read with the note, the rest
	 * where needed (sampler_tick_noted_chain): READ of them so far. */
	struct sampler_chain chain;
	int read;
};

/* The frames of a chain read with the note: the frame, its caller and
 * its caller's caller. */
#define SAMPLER_NOTED_FIRST	3

/* The innermost frames of a stack that sampler_tick_seen remembers. */
#define SAMPLER_SEEN_DEPTH	4

/* Reset the tick's state for a run.  Ticks note the holder's frame
 * where this Ruby's control frames are mirrored
 * (sampler_frames_mirrored), and only there. */
void
sampler_tick_init(void)
{
	sampler.pid = getpid();
	atomic_store(&sampler.gvl_holder, (uintptr_t)0);
	atomic_store(&sampler.holder_ec, (uintptr_t)0);
	atomic_store(&sampler.poking, 0);
	atomic_store(&sampler_note.tick, 0);
	atomic_store(&sampler_noting, 0);
	atomic_store(&sampler.holder_tid, 0);
	atomic_store(&sampler.note_asked, 0);
}

static void sampler_tick_set_ec(uintptr_t ec);
static void sampler_tick_unpoke(void);

/*
 * Publish TD's label set and capture as the GVL holder's, for the ticks
 * to note with its frame (on TD, with the GVL: one writer at a time).
 * The job bills the time up to the tick to the stack the tick found,
 * and, with these, under the labels of that moment, not the job's (see
 * sampler_tick_noted_labels).  Whose they are is cleared while they
 * change; a record's address may be a new thread's, so a thread that
 * takes the GVL publishes its own before it is the holder.
 */
static void
sampler_tick_publish(const struct sampler_thread *td)
{
	uint_fast64_t v = (uint_fast64_t)(uint32_t)td->label_set << 32 | (uint32_t)td->capture;
	uintptr_t mine = (uintptr_t)td->vm_thread;

	if (atomic_load_explicit(&sampler.holder_labels_of, memory_order_relaxed) == mine &&
	    atomic_load_explicit(&sampler.holder_labels, memory_order_relaxed) == v)
		return;
	atomic_store(&sampler.holder_labels_of, (uintptr_t)0);
	atomic_store(&sampler.holder_labels, v);
	atomic_store(&sampler.holder_labels_of, mine);
}

/* TD's label set or capture changed: publish them if TD holds the GVL. */
void
sampler_tick_labels(struct sampler_thread *td)
{
	uintptr_t mine = (uintptr_t)td->vm_thread;

	if (mine != 0 && atomic_load_explicit(&sampler.gvl_holder, memory_order_relaxed) == mine)
		sampler_tick_publish(td);
}

/* TD took the GVL (ON), or let it go (only if it is the one noted as
 * holding it). */
void
sampler_tick_holder(struct sampler_thread *td, int on)
{
	void *vm_thread = td->vm_thread;
	uintptr_t mine = (uintptr_t)vm_thread;

	if (vm_thread == NULL)
		return;
	if (!on) {
		if (atomic_compare_exchange_strong(&sampler.gvl_holder, &mine, (uintptr_t)0))
			sampler_tick_unpoke();
		return;
	}
	sampler_tick_publish(td);
	/* Who to signal (sampler_tick_ask), before whose record it is. */
	if (!sampler.cfg.peek) {
		int tid = (int)sampler_gettid();

		if (atomic_load_explicit(&sampler.holder_tid, memory_order_relaxed) != tid)
			atomic_store(&sampler.holder_tid, tid);
	}
	/* Read first: a store takes the line from the worker, which reads
	 * it at every tick. */
	if (atomic_load_explicit(&sampler.gvl_holder, memory_order_relaxed) != mine)
		atomic_store(&sampler.gvl_holder, mine);
	sampler_tick_set_ec((uintptr_t)sampler_frames_ec(vm_thread));
	/* After the store: see sampler_tick_pause. */
	sampler_timer_resume();
}

/*
 * Ruby's trigger sets the job's interrupt bit on the context of the
 * thread it last saw switch in (its ractor's running_ec), which a thread
 * handed the GVL directly (its first run, often) never updates: the
 * ticks then flag a thread that is not running, and the holder runs
 * unsampled until it next blocks, its time billed later to whatever it
 * runs then.  So each tick also sets the bit on the holder's own context,
 * noted by the holder itself when it takes the GVL and switches fibers
 * (sampler_tick_switched), and by the job and a tick that finds it in
 * another fiber's.  The worker pokes (and
 * reads the holder's frames, sampler_tick_note) only between a pair of
 * counter updates; a thread stops being poked (it lets the GVL go, ends,
 * or a GC step may free a fiber's context) by clearing the context and
 * waiting out a poke or read in flight, so no poke lands on, and no read
 * reads, memory Ruby has freed.  (A tick sets a context only in place of
 * the one it read the holder's from, inside its pair of updates: one
 * cleared meanwhile stays cleared.)
 */
static void
sampler_tick_set_ec(uintptr_t ec)
{
	if (atomic_load_explicit(&sampler.holder_ec, memory_order_relaxed) != ec)
		atomic_store(&sampler.holder_ec, ec);
}

/* Stop poking the holder's context, and wait for a poke in flight. */
static void
sampler_tick_unpoke(void)
{
	int spins = 0;

	if (atomic_load(&sampler.holder_ec) == 0)
		return;
	atomic_store(&sampler.holder_ec, (uintptr_t)0);
	while (atomic_load(&sampler.poking) != 0) {
		if (++spins > 100)
			sched_yield();
	}
}

/*
 * The thread of VM record VM_THREAD switched fibers, on that thread: if
 * it holds the GVL, the context the ticks read first is the one it runs
 * now.  Without this the context was noted only by the jobs and by a
 * tick finding the thread elsewhere, so where fibers take turns every
 * microsecond or so (an Enumerator's fiber handing each value to its
 * caller) it was the other fiber's about half the time: the tick read
 * that one first, found it was not the one running, and read the right
 * one only after, by then well past where the thread was at the tick
 * (see sampler_frames_peek).  In a loop of 1.2 us of work in the main
 * fiber and 3.4 us in an Enumerator's, the main fiber's work got 15-18%
 * of the profile for 27% of the time (stackprof 26%); with the fiber's
 * work 0.7 us against 4.6 us, it got 5-10% for 17% (stackprof 15-16%).
 * Now 25-26% and 10-16%.  The hook costs a fiber switch some 17 ns (a
 * round trip through Enumerator#next: 285 -> 320 ns here).
 */
void
sampler_tick_switched(void *vm_thread)
{
	if (vm_thread != NULL &&
	    atomic_load_explicit(&sampler.gvl_holder, memory_order_relaxed) == (uintptr_t)vm_thread)
		sampler_tick_set_ec((uintptr_t)sampler_frames_ec(vm_thread));
}

void
sampler_tick_poke(void)
{
	uintptr_t ec;

	atomic_fetch_add(&sampler.poking, 1);
	if ((ec = atomic_load(&sampler.holder_ec)) != 0)
		sampler_frames_poke((void *)ec);
	atomic_fetch_sub(&sampler.poking, 1);
}

void
sampler_tick_gc(int entering)
{
	uintptr_t holder;

	if (entering) {
		sampler_tick_unpoke();
		return;
	}
	/* The GC ran on the holder: its current context is alive. */
	holder = atomic_load(&sampler.gvl_holder);
	if (holder != 0 && sampler_frames_mirrored())
		sampler_tick_set_ec((uintptr_t)sampler_frames_ec((void *)holder));
}

static void sampler_tick_note_one(uint_fast64_t tick);

/* At tick TICK (before the job is triggered): note the GVL holder's
 * innermost frame, on the worker or in the signal's handler on the
 * holder.  Async-signal-safe. */
void
sampler_tick_note(uint_fast64_t tick)
{
	int idle = 0;

	if (!atomic_compare_exchange_strong(&sampler_noting, &idle, 1))
		return;
	sampler_tick_note_one(tick);
	atomic_store(&sampler_noting, 0);
}

static void
sampler_tick_note_one(uint_fast64_t tick)
{
	uintptr_t holder, ec;
	const void *cfp, *ctx;
	uint_fast64_t gc_gen, labels[2] = { 0, 0 };
	uintptr_t labels_of;
	struct sampler_chain chain;
	int64_t mono;
	int i, r, labels_held = 0;

	if (!sampler_frames_mirrored())
		return;
	if (atomic_load(&sampler.gvl_holder) == 0) {
		atomic_store(&sampler_note_none, tick);
		return;
	}
	mono = util_mono_ns();
	atomic_store_explicit(&sampler_note.tick, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	/* The bracket: counted in, the holder read after, and read only
	 * while it may be poked (not in a GC, not letting the GVL go). */
	atomic_fetch_add(&sampler.poking, 1);
	r = 0;
	if ((holder = atomic_load(&sampler.gvl_holder)) == 0)
		atomic_store(&sampler_note_none, tick);
	else if ((ec = atomic_load(&sampler.holder_ec)) != 0) {
		/* Before the frame: no object alive then dies until the next. */
		gc_gen = atomic_load(&sampler.gc_gen);
		/* The holder's context, alive while it may be poked, is read
		 * first (see sampler_frames_peek); where the thread has switched
		 * fibers since, the one it runs now is poked from here on (not
		 * if the holder has cleared or set it meanwhile). */
		ctx = (const void *)ec;
		/* The labels as the holder's own (whose they are read before
		 * and after them), read with the innermost frame: where they
		 * changed meanwhile, the frame may be of either set. */
		labels_of = atomic_load(&sampler.holder_labels_of);
		r = sampler_frames_peek((void *)holder, &ctx, gc_gen, sampler.cfg.lines,
		    &cfp, &chain, labels);
		labels_held = labels_of == holder && labels[0] == labels[1] &&
		    atomic_load(&sampler.holder_labels_of) == holder;
		if (r != 0 && (uintptr_t)ctx != ec)
			atomic_compare_exchange_strong(&sampler.holder_ec, &ec, (uintptr_t)ctx);
	}
	atomic_fetch_sub(&sampler.poking, 1);
	if (r == 0)
		return;
	atomic_store_explicit(&sampler_note.vm_thread, holder, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.mono, mono, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.cfp, (uintptr_t)cfp, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.gc_gen, gc_gen, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.chain_n, chain.n, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.labels, labels[1], memory_order_relaxed);
	atomic_store_explicit(&sampler_note.labels_held, labels_held, memory_order_relaxed);
	for (i = 0; i < chain.n; i++) {
		struct sampler_note_frame *f = &sampler_note.chain[i];

		atomic_store_explicit(&f->iseq, chain.iseq[i], memory_order_relaxed);
		atomic_store_explicit(&f->pc, chain.pc[i], memory_order_relaxed);
		atomic_store_explicit(&f->ep, chain.ep[i], memory_order_relaxed);
		atomic_store_explicit(&f->self, chain.self[i], memory_order_relaxed);
		atomic_store_explicit(&f->me, chain.me[i], memory_order_relaxed);
		atomic_store_explicit(&f->me_sure, (uintptr_t)chain.me_sure[i],
		    memory_order_relaxed);
		atomic_store_explicit(&f->prev, chain.prev[i], memory_order_relaxed);
	}
	atomic_store_explicit(&sampler_note.tick, tick, memory_order_release);
}

/*
 * On the worker at tick TICK: ask the GVL holder to note its own frame
 * (sampler_tick_answer, in the handler of the signal sent to it), unless
 * --peek: 1 if the signal went, else 0 (no holder, or no such thread
 * any more), where the worker notes it itself.
 *
 * Read from the worker's CPU while the thread runs on, the frame is a
 * guess that the memory system skews: the thread's stores reach the
 * worker late and in bursts, and the worker's loads stall the thread at
 * its next store to the lines they read.  In the accuracy bench's
 * raising loop, Exception#exception (the last of three C methods that
 * Kernel#Integer calls before the long tail of the raise, with the same
 * frame slot) got 2.3-3.1% of the loop from the worker's reads, where it
 * runs 0.1% of the time; Kernel#Integer itself 52% where stackprof and
 * vernier give 59-62%.  Their distances to rperf (half the sum of the
 * self-time share differences) were twice theirs to each other on four
 * of the bench's nine programs.  The signal stops the thread where it is, and
 * it reads its own frames: 0.2% and 58%, and the distances the same as
 * between the two.  What it costs the thread is the signal's delivery
 * and return, some 4-10 us a tick on the VMs here (0.4-1.0% of a
 * CPU-bound loop at 1000 Hz, measured alternately in one process), and
 * 8-15 us a sample more than --peek at 10 kHz (bench/overhead/run).
 */
int
sampler_tick_ask(uint_fast64_t tick)
{
	int tid;

	/* Not where the last tick's signal is still unanswered (the thread
	 * has not run since, or blocks the signal): no job would be asked
	 * for until it is.  (Answered later, it finds nothing asked.) */
	if (sampler.cfg.peek || !sampler_frames_mirrored() ||
	    atomic_exchange(&sampler.note_asked, 0) != 0 ||
	    atomic_load(&sampler.gvl_holder) == 0 ||
	    (tid = atomic_load(&sampler.holder_tid)) == 0)
		return 0;
	atomic_store(&sampler.note_asked, tick);
	if (sampler_ractor_kill(tid) == 0)
		return 1;
	atomic_store(&sampler.note_asked, 0);
	return 0;
}

/*
 * In the handler of the worker's signal: if this thread is the one the
 * last tick asked, note the holder's frame and ask for the job, as the
 * worker would have: 1.  Else 0: a thread of another Ractor, asked for
 * its own sample; or one that another took the GVL from before the
 * signal came, where that tick has no note (its sample ends at the
 * safepoint, and the next tick is read by the worker).  A thread that
 * let the GVL go before the signal came, with no other taking it yet,
 * notes that no thread held it.  The note's bracket keeps what it reads
 * allocated either way (the thread may read another's frames, as the
 * worker does, if that one takes the GVL meanwhile).
 */
int
sampler_tick_answer(void)
{
	uint_fast64_t tick;

	if (atomic_load(&sampler.note_asked) == 0 ||
	    atomic_load(&sampler.holder_tid) != (int)sampler_gettid() ||
	    (tick = atomic_exchange(&sampler.note_asked, 0)) == 0)
		return 0;
	sampler_tick_note(tick);
	atomic_fetch_add_explicit(&sampler.thread_notes, 1, memory_order_relaxed);
	if (atomic_load(&sampler.armed) && !sampler.forked) {
		rb_postponed_job_trigger(sampler.job);
		sampler_tick_poke();
	}
	return 1;
}

/*
 * The job's reads of the note, between these two: the note's tick, if it
 * is TICK (else 0: no note of it, or one being written); then, after the
 * reads, whether the note was not rewritten meanwhile and is of the
 * thread whose VM record is VM_THREAD (TH: the record the note named).
 */
static uint_fast64_t
sampler_tick_note_open(uint_fast64_t tick)
{
	uint_fast64_t before = atomic_load_explicit(&sampler_note.tick, memory_order_acquire);

	return before == tick ? before : 0;
}

static int
sampler_tick_note_held(uint_fast64_t before, uintptr_t th, void *vm_thread)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&sampler_note.tick, memory_order_relaxed) == before &&
	    th == (uintptr_t)vm_thread;
}

/* In the job, as it starts a sample: start fetching the note, which the
 * worker wrote on its CPU, so that its lines cross over side by side
 * while the job reads its clocks, not one after another as it reads them
 * (some 0.2 us of a job of 1 us, at depth 10 on the machines here). */
void
sampler_tick_prefetch(void)
{
	int i;

	__builtin_prefetch(&sampler_note, 0, 3);
	for (i = 0; i < SAMPLER_NOTED_FIRST; i++)
		__builtin_prefetch(&sampler_note.chain[i], 0, 3);
}

/* The words tick TICK noted beside the frame of the thread whose VM
 * record is VM_THREAD (in the job): the monotonic time it read, and its
 * labels word (label set in the high half, capture in the low) and
 * whether those labels were the holder's own. */
struct sampler_note_words {
	int64_t mono;
	uint_fast64_t labels;
	int labels_held;
};

/* Read them into *W: 1, or 0 where the tick noted none for VM_THREAD or
 * the note has been rewritten since. */
static int
sampler_tick_note_words(uint_fast64_t tick, void *vm_thread, struct sampler_note_words *w)
{
	uint_fast64_t before = sampler_tick_note_open(tick);
	uintptr_t th;

	if (before == 0)
		return 0;
	th = atomic_load_explicit(&sampler_note.vm_thread, memory_order_relaxed);
	w->mono = atomic_load_explicit(&sampler_note.mono, memory_order_relaxed);
	w->labels = atomic_load_explicit(&sampler_note.labels, memory_order_relaxed);
	w->labels_held = atomic_load_explicit(&sampler_note.labels_held, memory_order_relaxed);
	return sampler_tick_note_held(before, th, vm_thread);
}

/* The monotonic time of tick TICK, read when it noted the frame of the
 * thread whose VM record is VM_THREAD (in the job): 0 if it noted none. */
int64_t
sampler_tick_mono(uint_fast64_t tick, void *vm_thread)
{
	struct sampler_note_words w;

	return sampler_tick_note_words(tick, vm_thread, &w) ? w.mono : 0;
}

/* The labels word tick TICK noted for TD into *LABELS: 1, or 0 where the
 * tick noted none for TD, its labels were not held, or the note has been
 * rewritten since. */
static int
sampler_tick_note_labels(uint_fast64_t tick, const struct sampler_thread *td,
    uint_fast64_t *labels)
{
	struct sampler_note_words w;

	if (!sampler_tick_note_words(tick, td->vm_thread, &w) || !w.labels_held)
		return 0;
	*labels = w.labels;
	return 1;
}

/*
 * Whether tick TICK noted TD in another capture than TD's now (in the
 * job).  Where the one it was in has ended since, every frame the tick
 * found above the frame that opened it has returned, and a frame at the
 * same place now is a later call's; where one began since, the tick's
 * time is before it, as a capture's first sample may carry (see
 * sampler-capture.c).  Its frames are not put back then: put back on
 * the next request's Rperf::Rack#call (the same iseq at the same depth),
 * the last work of a request went with the labels of the next, set
 * before its endpoint was (t0805 check 8: 1 run in 12 here under load).
 */
static int
sampler_tick_other_capture(uint_fast64_t tick, const struct sampler_thread *td)
{
	uint_fast64_t labels;

	return sampler_tick_note_labels(tick, td, &labels) &&
	    (int)(uint32_t)labels != td->capture;
}

/*
 * The label set to bill the time up to tick TICK under, for TD (in the
 * job): the one TD had at the tick, where the tick noted it and TD is in
 * the same capture still; else TD's now.  Where a label changed between
 * the tick and the job, the stack the tick found went with the labels of
 * the job's moment: a label around 5 us of each turn of a loop left
 * 15-22% of the labelled part's time without it (label_turns.rb; 0-1%
 * now, with the labels read beside the frame, sampler_frames_load_ec).
 * Within one capture only: the label sets of a capture that ends are
 * renamed (sampler_capture_end), and one read before may be of one that
 * has since.
 */
int
sampler_tick_noted_labels(uint_fast64_t tick, const struct sampler_thread *td)
{
	uint_fast64_t labels;

	if (!sampler_tick_note_labels(tick, td, &labels) ||
	    (int)(uint32_t)labels != td->capture)
		return td->label_set;
	return (int)(uint32_t)(labels >> 32);
}

/*
 * Whether tick TICK saw another thread than the one whose VM record is
 * VM_THREAD hold the GVL, or none (in the job).  A tick asks for the
 * sample of the thread it finds running, but the job runs on whichever
 * thread checks for interrupts first: where the holder lets the GVL go
 * before its next safepoint (it was about to block), the next thread to
 * take the GVL runs it, at its wake-up, in Thread::Queue#pop, IO#read,
 * Kernel#sleep.  Billed there, that thread's time since its own last
 * sample, its work, went to the call it woke from: a loop of 0.3 ms of
 * work and a 0.7 ms sleep billed Kernel#sleep 71-99% of its CPU (cpu
 * mode; 6% by the thread's clock), and two threads handing a Queue back
 * and forth, their work 62% of the CPU, read 28-40% work.  So
 * such a job takes no sample: each thread's time waits for a tick that
 * finds it running, and is billed where that tick found it, but for the
 * CPU time spent without the GVL, billed where the thread woke up
 * (sampler_job_elsewhere).  (Where the tick noted nothing it knows of,
 * or frames are not mirrored, the job bills its own thread as before.)
 */
int
sampler_tick_elsewhere(uint_fast64_t tick, void *vm_thread)
{
	uint_fast64_t before;
	uintptr_t th;

	if (!sampler_frames_mirrored() || sampler.mn_main ||
	    atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed))
		return 0;
	if (atomic_load(&sampler_note_none) == tick)
		return 1;
	if ((before = sampler_tick_note_open(tick)) == 0)
		return 0;
	th = atomic_load_explicit(&sampler_note.vm_thread, memory_order_relaxed);
	/* (Held as a note of the thread it names: not rewritten meanwhile.) */
	return sampler_tick_note_held(before, th, (void *)th) && th != (uintptr_t)vm_thread;
}

/* Read frames FROM to TO (exclusive) of the note's chain into N. */
static void
sampler_tick_read_chain(struct sampler_noted *n, int from, int to)
{
	struct sampler_chain *c = &n->chain;
	int i;

	for (i = from; i < to; i++) {
		const struct sampler_note_frame *f = &sampler_note.chain[i];

		c->iseq[i] = atomic_load_explicit(&f->iseq, memory_order_relaxed);
		c->pc[i] = atomic_load_explicit(&f->pc, memory_order_relaxed);
		c->ep[i] = atomic_load_explicit(&f->ep, memory_order_relaxed);
		c->self[i] = atomic_load_explicit(&f->self, memory_order_relaxed);
		c->me[i] = atomic_load_explicit(&f->me, memory_order_relaxed);
		c->me_sure[i] = (int)atomic_load_explicit(&f->me_sure, memory_order_relaxed);
		c->prev[i] = atomic_load_explicit(&f->prev, memory_order_relaxed);
	}
}

/* The frame noted at tick TICK for the thread whose VM record is
 * VM_THREAD into *N (with the first frames of its chain): 1, or 0 (no
 * such note). */
static int
sampler_tick_noted(uint_fast64_t tick, void *vm_thread, struct sampler_noted *n)
{
	uint_fast64_t before = sampler_tick_note_open(tick);
	uintptr_t th;

	if (before == 0)
		return 0;
	th = atomic_load_explicit(&sampler_note.vm_thread, memory_order_relaxed);
	n->cfp = atomic_load_explicit(&sampler_note.cfp, memory_order_relaxed);
	n->gc_gen = atomic_load_explicit(&sampler_note.gc_gen, memory_order_relaxed);
	n->chain.n = atomic_load_explicit(&sampler_note.chain_n, memory_order_relaxed);
	if (n->chain.n < 0 || n->chain.n > SAMPLER_CHAIN)
		n->chain.n = 0;
	n->read = n->chain.n < SAMPLER_NOTED_FIRST ? n->chain.n : SAMPLER_NOTED_FIRST;
	sampler_tick_read_chain(n, 0, n->read);
	if (!sampler_tick_note_held(before, th, vm_thread) || n->chain.n < 1)
		return 0;
	n->tick = before;
	n->vm_thread = vm_thread;
	/* A chain of one is the thread's outermost frame (the script's
	 * <main>, a thread's block), noted in its own code. */
	n->iseq = n->chain.pc[0] != 0 ? n->chain.iseq[0] : 0;
	n->parent = n->chain.n > 1 && n->chain.pc[1] != 0 ? n->chain.iseq[1] : 0;
	n->pc = n->chain.pc[0];
	n->caller_pc = n->chain.n > 1 ? n->chain.pc[1] : 0;
	n->ident[0] = n->chain.ep[0];
	n->ident[1] = n->chain.self[0];
	n->grand[0] = n->chain.n > 2 && n->chain.pc[2] != 0 ? n->chain.iseq[2] : 0;
	n->grand[1] = n->chain.n > 2 ? n->chain.ep[2] : 0;
	n->me = n->chain.me[0];
	n->me_sure = n->chain.me_sure[0];
	return 1;
}

/* The rest of N's chain, read where a job needs it: 1, or 0 (the note
 * was rewritten since N was read). */
static int
sampler_tick_noted_chain(struct sampler_noted *n)
{
	if (n->read == n->chain.n)
		return 1;
	sampler_tick_read_chain(n, n->read, n->chain.n);
	n->read = n->chain.n;
	return sampler_tick_note_held(n->tick, (uintptr_t)n->vm_thread, n->vm_thread);
}

/* The control frame of entry J of TD's captured stack, or NULL (a C
 * frame, or not known). */
static uintptr_t
sampler_tick_cfp(const struct sampler_thread *td, int j)
{
	if (td->own[j] == 0)
		return 0;
	if (td->cfp_base != NULL)
		return (uintptr_t)sampler_frames_nth(td->cfp_base, j);
	return (uintptr_t)td->cfps[j];
}

/* With --lines: entry J of TD's captured stack is the frame noted in N,
 * which ran the line of the noted pc when the timer fired. */
static void
sampler_tick_line(struct sampler_thread *td, int j, const struct sampler_noted *n)
{
	int line;

	if (sampler.cfg.lines &&
	    (line = sampler_frames_line((VALUE)n->iseq, (const VALUE *)n->pc)) > 0)
		td->lines[j] = line;
}

/* Empty caches of frames seen with N slots each, in one block. */
static struct sampler_seen_cache *
sampler_tick_cache_new(unsigned n)
{
	struct sampler_seen_cache *c = xcalloc(1, sizeof *c +
	    n * (sizeof *c->frames + sizeof *c->c + sizeof *c->me));

	c->n = n;
	c->frames = (struct sampler_seen *)(c + 1);
	c->c = (struct sampler_seen_c *)(c->frames + n);
	c->me = (VALUE *)(c->c + n);
	return c;
}

/* TD's caches of frames seen, made empty the first time.  In the job (or
 * a GC's capture), with the GVL. */
static struct sampler_seen_cache *
sampler_tick_cache(struct sampler_thread *td)
{
	if (td->seen == NULL)
		td->seen = sampler_tick_cache_new(SAMPLER_SEEN_MIN);
	return td->seen;
}

/* The hashes of own iseq OWN, call site SITE and method entry ME, whose
 * low bits pick a set of SAMPLER_SEEN_WAYS slots. */
static unsigned
sampler_tick_hash(VALUE own)
{
	return (unsigned)(own >> 4 ^ own >> 10 ^ own >> 19);
}

static unsigned
sampler_tick_hash_c(const VALUE *site)
{
	uintptr_t a = (uintptr_t)site;

	return (unsigned)(a >> 3 ^ a >> 11 ^ a >> 19);
}

static unsigned
sampler_tick_hash_me(VALUE me)
{
	return (unsigned)(me >> 4 ^ me >> 12 ^ me >> 19);
}

/* The first slot of the set of hash H in caches of N slots. */
static unsigned
sampler_tick_set(unsigned h, unsigned n)
{
	return (h & (n / SAMPLER_SEEN_WAYS - 1)) * SAMPLER_SEEN_WAYS;
}

/* The slot of a full set of caches C that a new entry takes: each in
 * turn, so that two entries of one set that a program uses in turn do
 * not keep taking one slot from each other. */
static unsigned
sampler_tick_victim(struct sampler_seen_cache *c)
{
	return c->turn++ & (SAMPLER_SEEN_WAYS - 1);
}

/* In caches C: the slot of own iseq OWN, or else a free one of its set,
 * or else the one of the set a new entry takes. */
static struct sampler_seen *
sampler_tick_find(struct sampler_seen_cache *c, VALUE own)
{
	unsigned h = sampler_tick_hash(own), i;
	struct sampler_seen *set = &c->frames[sampler_tick_set(h, c->n)], *free = NULL;

	for (i = 0; i < SAMPLER_SEEN_WAYS; i++) {
		if (set[i].own == own)
			return &set[i];
		if (set[i].own == 0 && free == NULL)
			free = &set[i];
	}
	return free != NULL ? free : &set[sampler_tick_victim(c)];
}

/* The same for call site SITE. */
static struct sampler_seen_c *
sampler_tick_find_c(struct sampler_seen_cache *c, const VALUE *site)
{
	unsigned h = sampler_tick_hash_c(site), i;
	struct sampler_seen_c *set = &c->c[sampler_tick_set(h, c->n)], *free = NULL;

	for (i = 0; i < SAMPLER_SEEN_WAYS; i++) {
		if (set[i].site == site)
			return &set[i];
		if (set[i].site == NULL && free == NULL)
			free = &set[i];
	}
	return free != NULL ? free : &set[sampler_tick_victim(c)];
}

/* The same for method entry ME. */
static VALUE *
sampler_tick_find_me(struct sampler_seen_cache *c, VALUE me)
{
	unsigned h = sampler_tick_hash_me(me), i;
	VALUE *set = &c->me[sampler_tick_set(h, c->n)], *free = NULL;

	for (i = 0; i < SAMPLER_SEEN_WAYS; i++) {
		if (set[i] == me)
			return &set[i];
		if (set[i] == 0 && free == NULL)
			free = &set[i];
	}
	return free != NULL ? free : &set[sampler_tick_victim(c)];
}

/* The slot of TD's cache of frames seen for own iseq OWN: its entry, or
 * where one for it would go. */
static struct sampler_seen *
sampler_tick_slot(struct sampler_thread *td, VALUE own)
{
	return sampler_tick_find(sampler_tick_cache(td), own);
}

/* The slot of TD's cache of C methods seen for call site SITE. */
static struct sampler_seen_c *
sampler_tick_slot_c(struct sampler_thread *td, const VALUE *site)
{
	return sampler_tick_find_c(sampler_tick_cache(td), site);
}

/* The slot of TD's cache of C methods' entries for entry ME. */
static VALUE *
sampler_tick_slot_me(struct sampler_thread *td, VALUE me)
{
	return sampler_tick_find_me(sampler_tick_cache(td), me);
}

/* A lookup in TD's caches found OTHER, another frame's entry (0: none),
 * in the slot of the one it wanted. */
static void
sampler_tick_collided(struct sampler_thread *td, uintptr_t other)
{
	if (other != 0)
		td->seen->collisions++;
}

/*
 * In the job, as it starts to use them (sampler_tick_seen, before the
 * tick's lookups, with no slot taken): grow TD's caches to
 * SAMPLER_SEEN_MAX slots once enough lookups have found another frame's
 * entry, each entry moved to its slot there (where two meet there, the
 * one moved last stays).
 */
static void
sampler_tick_grow(struct sampler_thread *td)
{
	struct sampler_seen_cache *old = td->seen, *c;
	unsigned i;

	if (old == NULL || old->collisions < SAMPLER_SEEN_GROW || old->n >= SAMPLER_SEEN_MAX)
		return;
	c = sampler_tick_cache_new(SAMPLER_SEEN_MAX);
	for (i = 0; i < old->n; i++) {
		if (old->frames[i].own != 0)
			*sampler_tick_find(c, old->frames[i].own) = old->frames[i];
		if (old->c[i].site != NULL)
			*sampler_tick_find_c(c, old->c[i].site) = old->c[i];
		if (old->me[i] != 0)
			*sampler_tick_find_me(c, old->me[i]) = old->me[i];
	}
	td->seen = c;
	free(old);
}

/* In the job: remember the frame VALUE and line of the innermost Ruby
 * frames of TD's captured stack by their own iseq, for a frame the job
 * finds gone (sampler_tick_cut).  The cache is marked (pinned) with the
 * thread's record, so no iseq it names can be freed and its address
 * taken by another. */
void
sampler_tick_seen(struct sampler_thread *td)
{
	const VALUE *site;
	uintptr_t cfp;
	int j;

	sampler_tick_grow(td);
	for (j = 0; j < td->depth && j < SAMPLER_SEEN_DEPTH; j++) {
		struct sampler_seen *s;

		if (td->own[j] == 0)
			continue;
		s = sampler_tick_slot(td, td->own[j]);
		s->own = td->own[j];
		s->frame = td->stack[j];
		s->line = td->lines[j];
	}
	/* A C method on top, called from a Ruby frame: by its call site. */
	if (td->depth >= 2 && td->own[0] == 0 && td->own[1] != 0 &&
	    !RB_SPECIAL_CONST_P(td->stack[0]) && (cfp = sampler_tick_cfp(td, 1)) != 0 &&
	    (site = sampler_frames_pc((const void *)cfp)) != NULL) {
		struct sampler_seen_c *c = sampler_tick_slot_c(td, site);

		c->site = site;
		c->caller = td->own[1];
		c->frame = td->stack[0];
	}
}

/* With the GVL (the job, or a GC's capture): remember the entries of the
 * C methods among the innermost frames of TD's captured stack. */
void
sampler_tick_seen_me(struct sampler_thread *td)
{
	VALUE *slot;
	int j;

	for (j = 0; j < td->depth && j < SAMPLER_SEEN_DEPTH; j++) {
		if (td->own[j] != 0 || RB_SPECIAL_CONST_P(td->stack[j]) ||
		    *(slot = sampler_tick_slot_me(td, td->stack[j])) == td->stack[j] ||
		    !sampler_frames_is_me(td->stack[j]))
			continue;
		sampler_wb(td->stack[j]);
		*slot = td->stack[j];
	}
}

/* Move every entry of TD's captured stack N up, for N entries to go
 * below them: 1, or 0 (no room). */
static int
sampler_tick_shift(struct sampler_thread *td, int n)
{
	if (n == 0)
		return 1;
	if (td->depth + n > SAMPLER_MAX_DEPTH)
		return 0;
	memmove(td->stack + n, td->stack, td->depth * sizeof *td->stack);
	memmove(td->own + n, td->own, td->depth * sizeof *td->own);
	memmove(td->lines + n, td->lines, td->depth * sizeof *td->lines);
	td->depth += n;
	return 1;
}

/* TD's captured stack was changed: the frames' places are not needed
 * again. */
static void
sampler_tick_unplace(struct sampler_thread *td)
{
	td->cfp_base = NULL;
	memset(td->cfps, 0, sizeof td->cfps[0]);
}

/*
 * In the job, TD's leaf frame called the frame noted at the tick, and
 * that one has returned since: put it back on top, as the frame the time
 * went to, when the job knows what frame VALUE it was (it was seen on
 * top of a stack before).  Noted for its caller, the leaf's iseq must be
 * the leaf's own.  1 if added.
 */
static int
sampler_tick_regrow(struct sampler_thread *td, const struct sampler_noted *n)
{
	struct sampler_seen *s;
	uintptr_t leaf = sampler_tick_cfp(td, 0);

	if (leaf == 0 || td->depth == SAMPLER_MAX_DEPTH ||
	    (uintptr_t)sampler_frames_callee((const void *)leaf) != n->cfp ||
	    (uintptr_t)td->own[0] != n->parent)
		return 0;
	if ((s = sampler_tick_slot(td, (VALUE)n->iseq))->own != (VALUE)n->iseq) {
		sampler_tick_collided(td, s->own);
		return 0;
	}
	/* Rare (a callee seen at the tick, returned at once), so moved. */
	sampler_tick_shift(td, 1);
	td->stack[0] = s->frame;
	td->own[0] = s->own;
	td->lines[0] = s->line;
	sampler_tick_line(td, 0, n);
	sampler_tick_unplace(td);
	return 1;
}

/* The entry of TD's captured stack whose control frame is at CFP, or -1
 * (not known, or not on the stack). */
static int
sampler_tick_index(const struct sampler_thread *td, uintptr_t cfp)
{
	uintptr_t base, size;
	int j;

	if (td->cfp_base == NULL) {
		for (j = 0; j < td->depth; j++) {
			if (td->cfps[j] != NULL && (uintptr_t)td->cfps[j] >= cfp)
				return sampler_tick_cfp(td, j) == cfp ? j : -1;
		}
		return -1;
	}
	base = (uintptr_t)td->cfp_base;
	size = (uintptr_t)sampler_frames_nth(td->cfp_base, 1) - base;
	if (cfp < base || (cfp - base) % size != 0 ||
	    (cfp - base) / size >= (uintptr_t)td->depth)
		return -1;
	return (int)((cfp - base) / size);
}

/* The entry of TD's captured stack whose control frame is at CFP, a C
 * frame's too, or -1 (not known). */
static int
sampler_tick_entry(const struct sampler_thread *td, uintptr_t cfp)
{
	int j;

	if (td->cfp_base == NULL) {
		for (j = 0; j < td->depth; j++) {
			if ((uintptr_t)td->cfps[j] == cfp)
				return j;
		}
		return -1;
	}
	j = sampler_tick_index(td, cfp);
	return j >= 0 && (uintptr_t)sampler_frames_nth(td->cfp_base, j) == cfp ? j : -1;
}

/*
 * Whether entry J of TD's captured stack, a C frame in the slot of C
 * frame I of chain C with its environment and receiver, may be that
 * frame: not where the method entry the worker read with that frame is
 * another than entry J's.  A C method that calls two others on one
 * receiver calls them at the same place (Enumerable#each_slice calls
 * Array#size, then Array#each): taken for the one noted, the later one
 * took the earlier one's time, and the frames the later one had called
 * were put back on the earlier one (ifunc_chain.rb: "Array#size;
 * Enumerable#each_slice;block (2 levels) in <main>" beside the stacks
 * through Array#each, a third to a half of them).  An entry the worker
 * was not sure of is that frame's or a later call's at the same place
 * (the frame written before the frame pointer that shows it): where it
 * is not entry J's, the frame noted has returned either way, and where
 * it is, it may be the later call's, read in the noted one's stead: not
 * taken (an ASan build, whose slower worker reads more such entries, had
 * 0.2-1.4% of ifunc_chain.rb's time put back on Array#size so, 2.6% in a
 * CI run; 0-0.25% now).
 */
static int
sampler_tick_same_c(const struct sampler_thread *td, int j, const struct sampler_chain *c, int i)
{
	return c->me[i] == 0 || ((VALUE)c->me[i] == td->stack[j] && c->me_sure[i]);
}

/*
 * In the job: the tick found the thread in a C frame called from C: a
 * method called by a C method (the #each that Enumerable#find calls) or
 * the C block a method yields to (find's, called by that #each), which
 * the Ruby block it yields to in turn runs above.  The job runs in Ruby
 * code, so often in such a block; where the frame noted is still on the
 * stack, in its slot with its environment and receiver, the time went
 * to it and what it called since is cut off.  1 if cut.
 */
static int
sampler_tick_cut_cc(struct sampler_thread *td, const struct sampler_noted *n)
{
	int j = sampler_tick_entry(td, n->cfp);

	if (j <= 0 || td->own[j] != 0 || !sampler_frames_is((const void *)n->cfp, n->ident) ||
	    !sampler_tick_same_c(td, j, &n->chain, 0))
		return 0;
	td->top = j;
	return 1;
}

/* The method entry ME of a C frame with receiver SELF noted in N (SURE:
 * see sampler_frames_peek), where the job may name it for TD: read with
 * the frame, the worker sure of it, and alive (no GC step since, and it
 * is one; or one of TD's stacks had it lately, and the cache marks it);
 * else 0.  An entry the worker was not sure of may be a later call's
 * (see sampler_frames_peek), and often of a method the receiver has too
 * (Kernel's): where it is not taken, the call site tells.  With no GC
 * step since, the frame's receiver must be a kind of the entry's owner. */
static VALUE
sampler_tick_me_of(struct sampler_thread *td, const struct sampler_noted *n, VALUE me,
    int sure, VALUE self)
{
	VALUE *slot;

	if (me == 0 || !sure)
		return 0;
	slot = sampler_tick_slot_me(td, me);
	if (n->gc_gen == atomic_load(&sampler.gc_gen)) {
		if (!sampler_frames_is_me(me) || !sampler_frames_me_fits(me, self))
			return 0;
	} else if (*slot != me) {
		sampler_tick_collided(td, *slot);
		return 0;
	}
	if (*slot != me) {
		sampler_wb(me);
		*slot = me;
	}
	return me;
}

/* The same for the C frame noted in N itself. */
static VALUE
sampler_tick_me(struct sampler_thread *td, const struct sampler_noted *n)
{
	return sampler_tick_me_of(td, n, (VALUE)n->me, n->me_sure, (VALUE)n->ident[1]);
}

/*
 * The frame of a C method with entry ME (or 0) called by a Ruby frame
 * running iseq CALLER from call site SITE: ME, or else what TD's job has
 * seen that call site call; 0 if neither.  With LEARN, an entry known is
 * remembered for the call site: most call sites call one method, and the
 * entry read with a short method is often not known (see
 * sampler_frames_peek).  Only what the job saw itself, or an entry the
 * worker read with its frame and caller standing still, is learnt: a
 * frame and its caller's pc read a moment apart may be two calls.
 */
static VALUE
sampler_tick_site(struct sampler_thread *td, VALUE me, uintptr_t site, uintptr_t caller,
    int learn)
{
	struct sampler_seen_c *c = sampler_tick_slot_c(td, (const VALUE *)site);

	if (me != 0 && !learn)
		return me;
	if (me != 0) {
		c->site = (const VALUE *)site;
		c->caller = (VALUE)caller;
		c->frame = me;	/* marked: sampler_tick_me_of */
		return me;
	}
	if ((uintptr_t)c->site == site && (uintptr_t)c->caller == caller)
		return c->frame;
	if ((uintptr_t)c->site != site)
		sampler_tick_collided(td, (uintptr_t)c->site);
	return 0;
}

/* Whether ME, a word the worker read for note N without being sure of
 * it, is a method entry now: no GC step since, a slot of the object
 * heap, and one of that kind. */
static int
sampler_tick_heap_me(const struct sampler_noted *n, VALUE me)
{
	return me != 0 && n->gc_gen == atomic_load(&sampler.gc_gen) &&
	    sampler_frames_in_heap(me) && sampler_frames_is_me(me);
}

/*
 * The frame of a C method whose entry ME the worker read but was not
 * sure of (see sampler_frames_peek), where neither a sure entry nor its
 * call site told it, in the job: ME, if no GC step has run since, it is
 * a slot of the object heap (a word read in a frame the thread was
 * writing may be an older one, of an object long freed: a sure entry
 * was read twice alike, this one was not), it is a method entry of a
 * class, not of a module (Kernel's methods, which every receiver has),
 * and SELF, the receiver read with the frame, is a kind of that class;
 * else 0.  An entry read late is the frame's own or that of a later
 * call at the same depth: here, of one to a method the same receiver
 * has.  Short C methods are read so most often: String#match?, a tenth
 * of Psych's load and dump (bench/accuracy/libs.rb yaml), one tick in
 * eight that found the thread in it billed to a caller, or to the job's
 * stack, for want of a name.  Not learnt for the call site.  Not on a
 * libruby that cannot tell heap slots (sampler_frames_in_heap).
 */
static VALUE
sampler_tick_unsure(const struct sampler_noted *n, VALUE me, int sure, VALUE self)
{
	if (sure || !sampler_tick_heap_me(n, me) || !sampler_frames_me_of_class(me) ||
	    !sampler_frames_me_fits(me, self))
		return 0;
	return me;
}

/* The frame of the C method noted in N, called by a Ruby frame (whose
 * iseq, read after the GC steps were counted, is alive if none ran). */
static VALUE
sampler_tick_c_frame(struct sampler_thread *td, const struct sampler_noted *n)
{
	VALUE frame = sampler_tick_site(td, sampler_tick_me(td, n), n->caller_pc, n->parent,
	    n->me_sure && n->gc_gen == atomic_load(&sampler.gc_gen));

	return frame != 0 ? frame :
	    sampler_tick_unsure(n, (VALUE)n->me, n->me_sure, (VALUE)n->ident[1]);
}

/* Put the C method FRAME on TD's captured stack as the callee of entry
 * J, where the time went, and cut the stack there: 1, or 0 (no room). */
static int
sampler_tick_put_c(struct sampler_thread *td, int j, VALUE frame)
{
	if (j == 0) {
		if (!sampler_tick_shift(td, 1))
			return 0;
		j = 1;
	}
	sampler_wb(frame);
	td->top = j - 1;
	td->stack[j - 1] = frame;
	td->own[j - 1] = 0;
	td->lines[j - 1] = 0;
	sampler_tick_unplace(td);
	return 1;
}

/*
 * In the job: the tick found the thread in a C method called by a Ruby
 * frame, and both have returned since (a one-line method whose last call
 * is the C method, called in a loop; a C method that raised, rescued in
 * its caller): the caller's caller is the job's entry K, still the frame
 * the tick saw there (same iseq and environment).  Put the caller back
 * above it, known by its own iseq from the frames the job has seen on
 * top, and the C method above that, known by FRAME (or the caller alone):
 * 1.  0 where either is not known or the stack is full.
 */
static int
sampler_tick_regrow2(struct sampler_thread *td, int k, VALUE frame,
    const struct sampler_noted *n)
{
	struct sampler_seen *s = sampler_tick_slot(td, (VALUE)n->parent);
	int add = frame != 0 ? 2 : 1, shift = k < add ? add - k : 0;

	if (s->own != (VALUE)n->parent) {
		sampler_tick_collided(td, s->own);
		return 0;
	}
	if (!sampler_tick_shift(td, shift))
		return 0;
	k += shift;
	td->stack[k - 1] = s->frame;
	td->own[k - 1] = s->own;
	td->lines[k - 1] = s->line;
	td->top = k - 1;
	if (frame != 0) {
		sampler_wb(frame);
		td->stack[k - 2] = frame;
		td->own[k - 2] = 0;
		td->lines[k - 2] = 0;
		td->top = k - 2;
	}
	sampler_tick_unplace(td);
	return 1;
}

/*
 * In the job: a Ruby frame the tick noted, running ISEQ, is gone, and no
 * job has seen it (S, its slot in TD's cache, holds another or none): a
 * method that returns before every job that comes after a tick in it (a
 * one-line method), deep in the chain a tick noted.  Its method entry,
 * read by the worker where a method's own frame keeps it (ME), names it
 * as rb_profile_frames would, if no GC step has run since, it is a slot
 * of the object heap (see sampler_tick_unsure), a method entry, and its
 * method's body is ISEQ (not a block's frame, which holds no entry, nor
 * another frame's word read late): then it is learnt in S (at PC's line,
 * with --lines), and 1.  Else 0.
 */
static int
sampler_tick_method(struct sampler_thread *td, const struct sampler_noted *n,
    struct sampler_seen *s, VALUE me, VALUE iseq, const VALUE *pc)
{
	if (!sampler_tick_heap_me(n, me) || !sampler_frames_me_runs(me, iseq))
		return 0;
	if (s->own != 0)
		sampler_tick_collided(td, s->own);
	sampler_wb(me);
	s->own = iseq;
	s->frame = me;
	s->line = sampler.cfg.lines ? sampler_frames_line(iseq, pc) : 0;
	return 1;
}

/*
 * In the job: frame I of N's chain, gone, is a C block's (an ifunc: a
 * block a C method made, such as Enumerable#each_slice's for the #each
 * it calls).  rb_profile_frames names such a frame by the method whose
 * frame it was made in where that is a C method's, and leaves it out
 * where it is not.  That frame, found by the environment the block was
 * made in among the chain's callers (put back already, below K, their
 * frames in FRAMES by the chain's index; or still on TD's stack, from
 * K), or 0 (not a C method's, or not found: left out).
 */
static VALUE
sampler_tick_ifunc(const struct sampler_thread *td, const struct sampler_noted *n, int i,
    int k, const VALUE *frames)
{
	const struct sampler_chain *c = &n->chain;
	int x, e;

	/* (A block's frame that holds an entry of its own is named by it.) */
	if (c->prev[i] == 0 || c->me[i] != 0)
		return 0;
	for (x = i + 1; x < c->n; x++) {
		if (c->ep[x] != c->prev[i])
			continue;
		if (c->iseq[x] != 0 || c->pc[x] != 0)
			return 0;
		if (x < k)
			return frames[x];
		e = sampler_tick_entry(td, (uintptr_t)sampler_frames_nth((const void *)n->cfp, x));
		return e >= 0 && td->own[e] == 0 ? td->stack[e] : 0;
	}
	return 0;
}

/*
 * In the job: the frame noted at the tick has returned since, and its
 * callers with it up to one that is still entry J of TD's captured stack
 * (its K-th caller: the same control frame, environment, and iseq or
 * receiver).  A thread on another CPU than the worker's runs on for the
 * microseconds the worker reads, and a short method and its callers are
 * often gone by the job.  Put the K frames back on top of entry J, as
 * the frames the time went to, when each is known: a Ruby frame by its
 * own iseq among the frames seen on top before, a C method by its entry
 * (sampler_tick_me_of) or what its call site was seen to call; a C
 * block (an ifunc) as rb_profile_frames names it (sampler_tick_ifunc),
 * or left out.  Put back without that name, a block under a C iterator
 * of C (Enumerator#with_index's block, called by Array#collect) made a
 * second stack beside the one the jobs took there.  1 if put back; 0
 * where a frame is not known, no caller noted is still there, or the
 * stack is full.
 */
static int
sampler_tick_chain(struct sampler_thread *td, struct sampler_noted *n)
{
	const struct sampler_chain *c = &n->chain;
	VALUE frames[SAMPLER_CHAIN], owns[SAMPLER_CHAIN], by_index[SAMPLER_CHAIN] = { 0 };
	int lines[SAMPLER_CHAIN];
	VALUE frame;
	uintptr_t cfp = 0;
	int i, j = -1, k, m = 0, shift;

	if (!sampler_tick_noted_chain(n))
		return 0;
	/* The innermost caller still there: a slot that holds another frame
	 * now (a rescue clause, where the method that raised was) says that
	 * one has returned too. */
	for (k = 1; k < c->n; k++) {
		cfp = (uintptr_t)sampler_frames_nth((const void *)n->cfp, k);
		if ((j = sampler_tick_entry(td, cfp)) < 0)
			continue;
		if (c->pc[k] != 0) {
			if ((uintptr_t)td->own[j] == c->iseq[k] &&
			    sampler_frames_has_ep((const void *)cfp, c->ep[k]))
				break;
		} else {
			uintptr_t ident[2] = { c->ep[k], c->self[k] };

			if (c->iseq[k] == 0 && td->own[j] == 0 &&
			    sampler_frames_is((const void *)cfp, ident) &&
			    sampler_tick_same_c(td, j, c, k))
				break;
		}
	}
	if (k == c->n)
		return 0;
	/* The frames gone, outermost first, so that a C method's caller is
	 * known (and its iseq alive) before its call site is used. */
	for (i = k - 1; i >= 0; i--) {
		if (c->pc[i] != 0) {
			struct sampler_seen *s = sampler_tick_slot(td, (VALUE)c->iseq[i]);

			if (s->own != (VALUE)c->iseq[i] &&
			    !sampler_tick_method(td, n, s, (VALUE)c->me[i], (VALUE)c->iseq[i],
			    (const VALUE *)c->pc[i])) {
				sampler_tick_collided(td, s->own);
				return 0;
			}
			frames[m] = s->frame;
			owns[m] = s->own;
			lines[m++] = i == 0 && sampler.cfg.lines ?
			    sampler_frames_line((VALUE)n->iseq, (const VALUE *)n->pc) : s->line;
		} else if (c->iseq[i] == 0) {
			VALUE me = sampler_tick_me_of(td, n, (VALUE)c->me[i], c->me_sure[i],
			    (VALUE)c->self[i]);

			if (c->pc[i + 1] != 0)
				me = sampler_tick_site(td, me, c->pc[i + 1], c->iseq[i + 1],
				    c->me_sure[i]);
			if (me == 0)
				me = sampler_tick_unsure(n, (VALUE)c->me[i], c->me_sure[i],
				    (VALUE)c->self[i]);
			if (me == 0)
				return 0;
			frames[m] = by_index[i] = me;
			owns[m] = 0;
			lines[m++] = 0;
		} else if ((frame = sampler_tick_ifunc(td, n, i, k, by_index)) != 0) {
			frames[m] = frame;
			owns[m] = 0;
			lines[m++] = 0;
		}
	}
	if (m == 0)
		return 0;
	shift = j < m ? m - j : 0;
	if (!sampler_tick_shift(td, shift))
		return 0;
	j += shift;
	for (i = 0; i < m; i++) {	/* frames[0] is the outermost */
		if (owns[i] == 0)
			sampler_wb(frames[i]);
		td->stack[j - 1 - i] = frames[i];
		td->own[j - 1 - i] = owns[i];
		td->lines[j - 1 - i] = lines[i] > 0 ? lines[i] : 0;
	}
	td->top = j - m;
	sampler_tick_unplace(td);
	return 1;
}

/*
 * In the job: the tick found the thread in a C method, called by a frame
 * running N->parent from call site N->caller_pc.  A C method's return is
 * a safepoint with its frame still on top, so the job often runs at the
 * return of the next C method the caller calls, after the one noted has
 * returned; and a C method with no safepoint in it (Kernel#hash, one that
 * raises) is never on top at the job, which runs in its caller after it
 * returned: the time went to the method noted, not to the one the job
 * found.  So when the caller is still at that call site with the method
 * on the stack, the stack is cut at its callee there (the C method,
 * still running what it called); when the caller is still on the stack
 * but the method has returned, the stack is cut at the caller and the C
 * method noted put back on top, known by the method entry the worker
 * read with the frame (alive: no GC step since) or else by what the job
 * has seen that call site call (the cache is marked: its VALUEs are
 * alive, and no other iseq can have taken the caller's address); if
 * neither, the caller takes the time.  1 if changed.
 */
static int
sampler_tick_cut_c(struct sampler_thread *td, struct sampler_noted *n)
{
	uintptr_t cfp;
	VALUE frame;
	int j;

	if (n->parent == 0 || n->caller_pc == 0)
		return sampler_tick_cut_cc(td, n) || sampler_tick_chain(td, n);
	j = sampler_tick_index(td, (uintptr_t)sampler_frames_nth((const void *)n->cfp, 1));
	if (j < 0 || (uintptr_t)td->own[j] != n->parent) {
		/* The caller returned too: is its caller still there? */
		j = sampler_tick_index(td,
		    (uintptr_t)sampler_frames_nth((const void *)n->cfp, 2));
		if (j < 0 || n->grand[0] == 0 || (uintptr_t)td->own[j] != n->grand[0] ||
		    (cfp = sampler_tick_cfp(td, j)) == 0 ||
		    !sampler_frames_has_ep((const void *)cfp, n->grand[1]))
			return sampler_tick_chain(td, n);
		return sampler_tick_regrow2(td, j, sampler_tick_c_frame(td, n), n);
	}
	if ((cfp = sampler_tick_cfp(td, j)) == 0)
		return 0;
	if ((uintptr_t)sampler_frames_pc((const void *)cfp) == n->caller_pc && j > 0) {
		/* Still at that call: the C method is the caller's callee
		 * (with what it called since above it: a compile's code, a
		 * block). */
		if (td->own[j - 1] != 0)
			return 0;
		/* Or another C method called by the same instruction since (a
		 * method written in Ruby around a C primitive: Kernel#Integer
		 * raising calls String#inspect for the message, then makes the
		 * exception). */
		if ((frame = sampler_tick_me(td, n)) != 0 && frame != td->stack[j - 1])
			return sampler_tick_put_c(td, j, frame);
		if (!RB_SPECIAL_CONST_P(td->stack[j - 1]))	/* the job's own */
			sampler_tick_site(td, td->stack[j - 1], n->caller_pc, n->parent, 1);
		if (j == 1)
			return 0;
		td->top = j - 1;
		return 1;
	}
	/* Returned (with the caller on top, or moved on). */
	if ((frame = sampler_tick_c_frame(td, n)) == 0) {
		if (j == 0)
			return 0;	/* back in the caller, and it is the leaf */
		td->top = j;
		return 1;
	}
	return sampler_tick_put_c(td, j, frame);
}

/* sampler_tick_cut for a Ruby frame noted. */
static int
sampler_tick_cut_iseq(struct sampler_thread *td, struct sampler_noted *noted, int *seen)
{
	uintptr_t leaf;
	int j;

	leaf = sampler_tick_cfp(td, 0);
	if (leaf == noted->cfp) {
		/* The common case: still in the frame noted. */
		if ((uintptr_t)td->own[0] == noted->iseq) {
			sampler_tick_line(td, 0, noted);
			*seen = 1;
			return 0;
		}
		/* Another frame in its slot: the frame noted has returned or
		 * raised, and its caller pushed the next (a rescue clause, where
		 * Kernel#Integer raised). */
		return sampler_tick_chain(td, noted);
	}
	if (leaf != 0 && leaf > noted->cfp)
		return sampler_tick_regrow(td, noted) || sampler_tick_chain(td, noted);
	j = sampler_tick_index(td, noted->cfp);
	if (j <= 0 || sampler_tick_cfp(td, j) != noted->cfp ||
	    (uintptr_t)td->own[j] != noted->iseq)
		return sampler_tick_chain(td, noted);
	td->top = j;	/* no frame is moved: the record starts there */
	sampler_tick_line(td, j, noted);
	return 1;
}

/*
 * In the job: cut TD's captured stack at the Ruby frame the thread was in
 * when tick TICK fired, when that frame is now a caller of the one the
 * job runs in, still running the same iseq: the frames above it were
 * entered after the timer fired, and the time since the previous sample
 * is billed to the stack the timer found.  Control frames grow down, so
 * callers are at higher addresses (entry j's frame is above entry 0's).
 * The cut only moves TD->top, where sampler_record starts.  When the
 * noted frame was instead called by the leaf and has returned since, it
 * is put back (sampler_tick_regrow); where it has returned with some of
 * its callers, they are put back on the first caller still there
 * (sampler_tick_chain).  With --lines the noted frame gets the line of
 * the pc noted, the line that ran when the timer fired (with YJIT, the
 * last one it saved).  A C frame noted is sampler_tick_cut_c's.  1 if
 * changed; where the noted frame is the leaf, or is gone otherwise, or
 * the control frames could not be paired with TD's stack, the stack
 * stays.  *SEEN: 1 where the stack left is the one the tick found (cut
 * or grown to it, or still in the Ruby frame noted), else 0.
 */
int
sampler_tick_cut(struct sampler_thread *td, uint_fast64_t tick, int *seen)
{
	struct sampler_noted noted;
	int changed;

	*seen = 0;
	if (!sampler_frames_mirrored() || td->depth < 1 ||
	    sampler_tick_other_capture(tick, td) ||
	    !sampler_tick_noted(tick, td->vm_thread, &noted))
		return 0;
	changed = noted.iseq == 0 ? sampler_tick_cut_c(td, &noted) :
	    sampler_tick_cut_iseq(td, &noted, seen);
	*seen |= changed;
	return changed;
}
