/*
 * sampler-signal.c: where the thread holding the GVL was when the timer
 * fired.  The job runs at the next safepoint, which in Ruby code is very
 * often the `leave` of a small method the thread has just called; billed
 * there, a caller's own work would go to its callees.  So on each tick
 * the worker (in the timer signal's handler) sends the same signal to
 * the thread it believes holds the GVL, and the handler, on that thread,
 * notes its innermost control frame (address and iseq word) in the
 * thread's own note before it triggers the job.  The job then bills the
 * stack cut at the noted frame when that frame is still there, among the
 * callers of the frame it finds (sampler_job).
 *
 * The note is thread-local and only its own thread writes it (in the
 * handler) and reads it (in the job), so no lock: the handler writes the
 * fields, then the tick number; the job reads the tick number around the
 * fields.  The handler reads the thread's VM record only on that thread
 * (sampler_frames_top), so the record and the VM stack it reads cannot
 * be freed under it; it calls no Ruby API but rb_postponed_job_trigger
 * and allocates nothing.  The GVL holder is tracked by the GVL hook
 * (RESUMED, SUSPENDED, EXITED) and the job, as a kernel thread id: a
 * thread off the GVL is never signalled, and with no holder known the
 * worker triggers the job itself, as without notes.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler-int.h"

/* This thread's note, and who it is. */
struct sampler_note {
	void *vm_thread;	/* this thread's VM record; NULL: note nothing */
	int tid;		/* kernel thread id, 0 until asked */
	int worker;		/* this is the sampler's worker thread */
	const void *cfp;
	VALUE iseq;
	uint_fast64_t tick;	/* the tick noted, written last */
};

static _Thread_local struct sampler_note sampler_note;

/* This thread's kernel id (cached; async-signal-safe). */
static int
sampler_signal_tid(void)
{
	if (sampler_note.tid == 0)
		sampler_note.tid = (int)syscall(SYS_gettid);
	return sampler_note.tid;
}

/* Whether ticks are noted in this run: a timer signal, and not Ruby's
 * M:N threads, under which a native thread runs many Ruby threads and
 * its note could name a thread that is gone. */
void
sampler_signal_init(void)
{
	const char *mn = getenv("RUBY_MN_THREADS");

	sampler.pid = getpid();
	atomic_store(&sampler.gvl_tid, 0);
	sampler.noting = sampler.use_signal && (mn == NULL || strcmp(mn, "0") == 0 ||
	    *mn == '\0');
}

/* The current thread is the worker (it takes the timer's signal). */
void
sampler_signal_worker(void)
{
	sampler_note.worker = 1;
}

/* The current thread, whose VM record is VM_THREAD (NULL: not known),
 * is sampled: note it on ticks from now on. */
void
sampler_signal_attach(void *vm_thread)
{
	sampler_note.tick = 0;
	atomic_signal_fence(memory_order_seq_cst);
	sampler_note.vm_thread = vm_thread;
	sampler_signal_tid();
}

/* The current thread ends: note nothing more, and never signal it. */
void
sampler_signal_detach(void)
{
	sampler_note.vm_thread = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	sampler_signal_holder(0);
}

/* The current thread took the GVL (ON) or let it go. */
void
sampler_signal_holder(int on)
{
	int tid = sampler_signal_tid();

	if (on)
		atomic_store(&sampler.gvl_tid, tid);
	else
		atomic_compare_exchange_strong(&sampler.gvl_tid, &tid, 0);
}

/* In a forked child: the one thread left has another id, and no other
 * thread is there to signal. */
void
sampler_signal_forked(void)
{
	sampler_note.tid = 0;
	sampler_note.tick = 0;
	atomic_store(&sampler.gvl_tid, 0);
}

/*
 * The timer signal's handler.  On the worker: count the tick and pass
 * the signal on to the GVL holder, or trigger the job here when there is
 * none to pass it to.  On a Ruby thread (passed on): note the innermost
 * frame, then trigger the job.  Nothing else; errno is kept.
 */
void
sampler_signal_handler(int sig)
{
	int saved = errno;

	if (sampler_note.worker) {
		int tid;

		atomic_fetch_add(&sampler.triggers, 1);
		tid = atomic_load(&sampler.gvl_tid);
		if (!sampler.noting || tid == 0 ||
		    syscall(SYS_tgkill, sampler.pid, tid, sig) != 0)
			rb_postponed_job_trigger(sampler.job);
	} else {
		const void *cfp;
		VALUE iseq;

		if (sampler_note.vm_thread != NULL &&
		    sampler_frames_top(sampler_note.vm_thread, &cfp, &iseq)) {
			sampler_note.tick = 0;
			atomic_signal_fence(memory_order_seq_cst);
			sampler_note.cfp = cfp;
			sampler_note.iseq = iseq;
			atomic_signal_fence(memory_order_seq_cst);
			sampler_note.tick = atomic_load(&sampler.triggers);
		}
		rb_postponed_job_trigger(sampler.job);
	}
	errno = saved;
}

/* The frame noted on this thread at tick TICK into *CFP and *ISEQ: 1, or
 * 0 (no note of that tick).  In the job, on the thread noted. */
static int
sampler_signal_noted(uint_fast64_t tick, const void **cfp, VALUE *iseq)
{
	uint_fast64_t before = sampler_note.tick;

	atomic_signal_fence(memory_order_seq_cst);
	*cfp = sampler_note.cfp;
	*iseq = sampler_note.iseq;
	atomic_signal_fence(memory_order_seq_cst);
	return before != 0 && before == tick && sampler_note.tick == before;
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
sampler_signal_cut(struct sampler_thread *td, uint_fast64_t tick)
{
	const void *cfp;
	VALUE iseq;
	int j, n;

	if (!sampler.noting || td->depth < 2 || !sampler_signal_noted(tick, &cfp, &iseq) ||
	    iseq == 0)
		return 0;
	for (j = 0; j < td->depth; j++) {
		if (td->cfps[j] != NULL && (uintptr_t)td->cfps[j] >= (uintptr_t)cfp)
			break;
	}
	if (j == 0 || j == td->depth || td->cfps[j] != cfp || td->own[j] != iseq)
		return 0;
	n = td->depth - j;
	memmove(td->stack, td->stack + j, n * sizeof *td->stack);
	memmove(td->own, td->own + j, n * sizeof *td->own);
	memmove(td->lines, td->lines + j, n * sizeof *td->lines);
	memmove(td->cfps, td->cfps + j, n * sizeof *td->cfps);
	td->depth = n;
	return 1;
}
