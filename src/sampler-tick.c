/*
 * sampler-tick.c: where the thread holding the GVL was when the timer
 * fired.  The job runs at the next safepoint, which in Ruby code is very
 * often the `leave` of a small method the thread has just called; billed
 * there, a caller's own work would go to its callees.  So on each tick
 * the worker notes the GVL holder's innermost control frame (address and
 * iseq word), and the job bills the stack cut at that frame when the
 * frame is still there, among the callers of the frame the job finds
 * (sampler_tick_cut).
 *
 * The worker reads the holder's frame itself, in the timer signal's
 * handler or its own tick, never by signalling the holder: a signal
 * costs the profiled thread a kernel round trip per sample, and
 * interrupts its system calls.  The holder may end, and its VM stack be
 * freed, while the worker reads, so every read goes through the kernel
 * (sampler_frames_peek: process_vm_readv), which fails on memory no
 * longer mapped instead of faulting; what it reads from memory reused
 * since is only a guess, which the job checks against the frames it
 * walks itself, with the GVL, before it cuts anything.  The worker holds
 * no lock, calls no Ruby API and allocates nothing here.
 *
 * The holder is tracked by the GVL hook (RESUMED, SUSPENDED) and the job,
 * as its VM record; the note is a sequence of atomics published by its
 * tick number, written by the worker alone.
 */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "sampler-int.h"

/* The last tick's note: the holder's VM record, its innermost control
 * frame and that frame's iseq word; TICK is written last (0 while the
 * others change). */
static struct {
	atomic_uint_fast64_t tick;
	atomic_uintptr_t vm_thread;
	atomic_uintptr_t cfp;
	atomic_uintptr_t iseq;
} sampler_note;

/* Whether ticks are noted in this run: the control frames are mirrored
 * for this Ruby, and the kernel lets the worker read them. */
void
sampler_tick_init(void)
{
	sampler.pid = getpid();
	atomic_store(&sampler.gvl_holder, (uintptr_t)0);
	atomic_store(&sampler_note.tick, 0);
	atomic_store(&sampler.noting, sampler_frames_mirrored());
}

/* The thread whose VM record is VM_THREAD took the GVL (ON), or let it
 * go (only if it is the one noted as holding it). */
void
sampler_tick_holder(void *vm_thread, int on)
{
	uintptr_t mine = (uintptr_t)vm_thread;

	if (vm_thread == NULL)
		return;
	if (on)
		atomic_store(&sampler.gvl_holder, mine);
	else
		atomic_compare_exchange_strong(&sampler.gvl_holder, &mine, (uintptr_t)0);
}

/* On the worker, at tick TICK (before the job is triggered): note the
 * GVL holder's innermost frame.  Async-signal-safe. */
void
sampler_tick_note(uint_fast64_t tick)
{
	uintptr_t holder;
	const void *cfp;
	VALUE iseq;
	int r;

	if (!atomic_load_explicit(&sampler.noting, memory_order_relaxed) ||
	    (holder = atomic_load(&sampler.gvl_holder)) == 0)
		return;
	atomic_store_explicit(&sampler_note.tick, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	r = sampler_frames_peek((void *)holder, &cfp, &iseq);
	if (r < 0) {
		atomic_store(&sampler.noting, 0);	/* the kernel will not read for us */
		return;
	}
	if (r == 0)
		return;
	atomic_store_explicit(&sampler_note.vm_thread, holder, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.cfp, (uintptr_t)cfp, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.iseq, (uintptr_t)iseq, memory_order_relaxed);
	atomic_store_explicit(&sampler_note.tick, tick, memory_order_release);
}

/* The frame noted at tick TICK for the thread whose VM record is
 * VM_THREAD into *CFP and *ISEQ: 1, or 0 (no such note). */
static int
sampler_tick_noted(uint_fast64_t tick, void *vm_thread, uintptr_t *cfp, uintptr_t *iseq)
{
	uint_fast64_t before = atomic_load_explicit(&sampler_note.tick, memory_order_acquire);
	uintptr_t th;

	if (before == 0 || before != tick)
		return 0;
	th = atomic_load_explicit(&sampler_note.vm_thread, memory_order_relaxed);
	*cfp = atomic_load_explicit(&sampler_note.cfp, memory_order_relaxed);
	*iseq = atomic_load_explicit(&sampler_note.iseq, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&sampler_note.tick, memory_order_relaxed) == before &&
	    th == (uintptr_t)vm_thread;
}

/*
 * In the job: cut TD's captured stack at the Ruby frame the thread was in
 * when tick TICK fired, when that frame is now a caller of the one the
 * job runs in, still running the same iseq: the frames above it were
 * entered after the timer fired, and the time since the previous sample
 * is billed to the stack the timer found.  Control frames grow down, so
 * callers are at higher addresses (TD->cfps is in that order).  1 if
 * cut; where the noted frame is the leaf, is gone, or is a C frame, or
 * the control frames could not be paired with TD's stack, it stays.
 */
int
sampler_tick_cut(struct sampler_thread *td, uint_fast64_t tick)
{
	uintptr_t cfp, iseq;
	int j, n;

	if (!atomic_load_explicit(&sampler.noting, memory_order_relaxed) || td->depth < 2 ||
	    !sampler_tick_noted(tick, td->vm_thread, &cfp, &iseq) || iseq == 0)
		return 0;
	for (j = 0; j < td->depth; j++) {
		if (td->cfps[j] != NULL && (uintptr_t)td->cfps[j] >= cfp)
			break;
	}
	if (j == 0 || j == td->depth || (uintptr_t)td->cfps[j] != cfp ||
	    (uintptr_t)td->own[j] != iseq)
		return 0;
	n = td->depth - j;
	memmove(td->stack, td->stack + j, n * sizeof *td->stack);
	memmove(td->own, td->own + j, n * sizeof *td->own);
	memmove(td->lines, td->lines + j, n * sizeof *td->lines);
	memmove(td->cfps, td->cfps + j, n * sizeof *td->cfps);
	td->depth = n;
	return 1;
}
