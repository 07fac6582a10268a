/*
 * sampler-frames.c: each Ruby frame's own instruction sequence, and the
 * name Ruby's own backtrace gives the frame.  rb_profile_frames returns
 * the method entry for every frame of a method, its blocks, rescue and
 * ensure clauses alike, so a block reads like its method; the frame's
 * own iseq, kept in the VM's control frame, is not in the public API.
 *
 * The job reads it from the control frames through a mirror of the few
 * fields that are the same in Ruby 3.3 and 3.4 (the thread record's self
 * and execution context; the context's VM stack, current frame and
 * thread; each frame's pc and iseq), and never trusts the mirror: it
 * reads only the thread record and, past the context's head, memory
 * inside the thread's VM stack, and keeps what it read only if its walk,
 * done by the rules of rb_profile_frames, finds the Ruby frames that
 * rb_profile_frames just returned (see sampler_frames_own).  On any
 * other Ruby, or when anything disagrees, the own iseqs are 0 and frames
 * keep the names of rb_profile_frame_full_label.  The job's part
 * allocates nothing and calls no Ruby method; the naming runs at build
 * time, with the GVL.
 *
 * sampler_frames_peek runs on the worker, in a signal handler, while the
 * thread it reads runs on another CPU: it reads the same words the walk
 * does (the record, the context's head, a few control frames inside the
 * VM stack), with plain loads, while the tick's bracket keeps them
 * allocated (see there), and stores nothing but into its arguments.
 */
#include <stdint.h>
#include <string.h>

#include <ruby/version.h>

#include "sampler-int.h"

/* The layout mirrored is that of Ruby 3.3 and 3.4 (vm_core.h). */
#if RUBY_API_VERSION_MAJOR == 3 && \
    (RUBY_API_VERSION_MINOR == 3 || RUBY_API_VERSION_MINOR == 4)
#define SAMPLER_FRAMES_MIRROR 1
#else
#define SAMPLER_FRAMES_MIRROR 0
#endif

/* rb_control_frame_t (without VM_DEBUG_BP_CHECK). */
struct sampler_frames_cfp {
	const VALUE *pc;
	VALUE *sp;
	VALUE iseq;
	VALUE self;
	const VALUE *ep;
	const void *block_code;
	void *jit_return;
};

/* The head of rb_execution_context_t. */
struct sampler_frames_ec {
	VALUE *vm_stack;
	size_t vm_stack_size;	/* in VALUEs */
	struct sampler_frames_cfp *cfp;
	void *tag;
	uint32_t interrupt_flag;
	uint32_t interrupt_mask;
	void *fiber_ptr;
	void *thread_ptr;
};

/* The head of rb_thread_t. */
struct sampler_frames_th {
	void *lt_node[2];
	VALUE self;
	void *ractor;
	void *vm;
	void *nt;
	struct sampler_frames_ec *ec;
};

/* The head of rb_iseq_t and of its body (rb_iseq_constant_body). */
struct sampler_frames_iseq {
	VALUE flags;
	VALUE wrapper;
	const struct sampler_frames_body {
		int type;
		unsigned int iseq_size;
		const VALUE *iseq_encoded;
	} *body;
};

/* Exported by libruby (iseq.c), not declared in its public headers: the
 * line of the instruction at POS in ISEQ, as backtraces compute it. */
unsigned int rb_iseq_line_no(const void *iseq, size_t pos);

/* imemo_iseq, an iseq's imemo type, and imemo_ment (internal/imemo.h). */
#define SAMPLER_FRAMES_IMEMO_ISEQ	7
#define SAMPLER_FRAMES_IMEMO_MENT	6	/* a method entry */
#define SAMPLER_FRAMES_IMEMO_MASK	0x0f

/* The VM's record of THREAD if this Ruby's layout is the one mirrored
 * and THREAD's record agrees with it, else NULL. */
void *
sampler_frames_vm_thread(VALUE thread)
{
#if SAMPLER_FRAMES_MIRROR
	const rb_data_type_t *type;
	struct sampler_frames_th *th;

	if (!RB_TYPE_P(thread, T_DATA) || !RTYPEDDATA_P(thread))
		return NULL;
	type = RTYPEDDATA_TYPE(thread);
	if (type == NULL || type->wrap_struct_name == NULL ||
	    strcmp(type->wrap_struct_name, "VM/thread") != 0)
		return NULL;
	th = RTYPEDDATA_DATA(thread);
	if (th == NULL || th->self != thread)
		return NULL;
	return th;
#else
	(void)thread;
	return NULL;
#endif
}

/* Ruby's POSTPONED_JOB_INTERRUPT_MASK (vm_core.h, 3.3 and 3.4). */
#define SAMPLER_FRAMES_POSTPONED_JOB_INTERRUPT	0x04

/* The execution context VM_THREAD runs now: on that thread (or with the
 * GVL), or a guess from the worker, which reads it as the thread writes
 * it (sampler_frames_peek).  NULL where the layout is not mirrored. */
SAMPLER_UNSANITIZED void *
sampler_frames_ec(void *vm_thread)
{
#if SAMPLER_FRAMES_MIRROR
	return vm_thread != NULL ?
	    __atomic_load_n(&((struct sampler_frames_th *)vm_thread)->ec, __ATOMIC_RELAXED) :
	    NULL;
#else
	(void)vm_thread;
	return NULL;
#endif
}

/* Set the postponed-job bit of EC's interrupt flag, as Ruby's own
 * trigger does to the context it picks.  Async-signal-safe; EC must be
 * alive (see sampler_tick_poke). */
void
sampler_frames_poke(void *ec)
{
#if SAMPLER_FRAMES_MIRROR
	__atomic_fetch_or(&((struct sampler_frames_ec *)ec)->interrupt_flag,
	    SAMPLER_FRAMES_POSTPONED_JOB_INTERRUPT, __ATOMIC_SEQ_CST);
#else
	(void)ec;
#endif
}

/* Whether this Ruby's control frames are the ones mirrored here. */
int
sampler_frames_mirrored(void)
{
	return SAMPLER_FRAMES_MIRROR;
}

#if SAMPLER_FRAMES_MIRROR
/* How many times the context is loaded for the labels to agree. */
#define SAMPLER_FRAMES_LABEL_TRIES	4

/* Copy LEN bytes (whole words) at SRC into DST, a word at a time, each
 * read whole: memory the thread that owns it may be writing meanwhile. */
SAMPLER_UNSANITIZED static void
sampler_frames_load(void *dst, const void *src, size_t len)
{
	const uintptr_t *from = src;
	uintptr_t *to = dst;
	size_t i;

	for (i = 0; i < len / sizeof *from; i++)
		to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

/* Load context EC from ECP, and the holder's labels right before and
 * right after it into LABELS: the innermost frame and the labels of one
 * moment where the two agree (the thread sets a label before it enters
 * the block, and restores it after it has left).  Read a peek apart, a
 * label around a block of a few microseconds was often read with the
 * frames of the block as the thread left it.  Where they differ (a label
 * changed during the load, which crosses CPUs: a microsecond or more on
 * a busy host), the load is made again, between the later read and a
 * new one, a few times. */
SAMPLER_UNSANITIZED static void
sampler_frames_load_ec(struct sampler_frames_ec *ec, const void *ecp, uint_fast64_t labels[2])
{
	int tries = 0;

	labels[1] = atomic_load(&sampler.holder_labels);
	do {
		labels[0] = labels[1];
		sampler_frames_load(ec, ecp, sizeof *ec);
		labels[1] = atomic_load(&sampler.holder_labels);
	} while (labels[0] != labels[1] && ++tries < SAMPLER_FRAMES_LABEL_TRIES);
}
#endif

#if SAMPLER_FRAMES_MIRROR
static int sampler_frames_is_iseq(VALUE frame);

/* Whether V (an object) is an imemo of kind TYPE. */
static int
sampler_frames_imemo_p(VALUE v, int type)
{
	return RB_BUILTIN_TYPE(v) == RUBY_T_IMEMO &&
	    (int)((RBASIC(v)->flags >> RUBY_FL_USHIFT) & SAMPLER_FRAMES_IMEMO_MASK) == type;
}

/* Whether control frames A and B, read a moment apart, are one C frame:
 * no pc, the same iseq word, environment and receiver. */
SAMPLER_UNSANITIZED static int
sampler_frames_same_c(const struct sampler_frames_cfp *a, const struct sampler_frames_cfp *b)
{
	return a->pc == NULL && b->pc == NULL && a->iseq == b->iseq && a->ep == b->ep &&
	    a->self == b->self;
}
#endif

/* The control frame J frames up from BASE (callers are up). */
const void *
sampler_frames_nth(const void *base, int j)
{
#if SAMPLER_FRAMES_MIRROR
	return (const struct sampler_frames_cfp *)base + j;
#else
	(void)j;
	return base;
#endif
}

/* The control frame that frame CFP calls (the next one down). */
const void *
sampler_frames_callee(const void *cfp)
{
#if SAMPLER_FRAMES_MIRROR
	return (const struct sampler_frames_cfp *)cfp - 1;
#else
	return NULL;
#endif
}

/* The index of the method entry in a frame's environment data, below
 * its environment pointer (VM_ENV_DATA_INDEX_ME_CREF), and of the word
 * that holds a block's outer environment (VM_ENV_DATA_INDEX_SPECVAL,
 * tagged in its two low bits), right below the flags at the pointer,
 * where VM_ENV_FLAG_LOCAL says the frame is not a block's (that word is
 * then the block it was given). */
#define SAMPLER_FRAMES_ENV_ME		(-2)
#define SAMPLER_FRAMES_ENV_SPECVAL	(-1)
#define SAMPLER_FRAMES_ENV_LOCAL	0x0002
#define SAMPLER_FRAMES_ENV_TAGS		0x03

#if SAMPLER_FRAMES_MIRROR
/* Whether context EC (the live one, with the GVL, or a copy the worker
 * read) is the thread's whose VM record is TH, its frame pointer inside
 * its VM stack: 1, with the VM's dummy frame at the bottom of the stack,
 * which rb_profile_frames leaves out and so do we, into *DUMMY; or 0. */
SAMPLER_UNSANITIZED static int
sampler_frames_bounds(const struct sampler_frames_ec *ec, const void *th,
    const struct sampler_frames_cfp **dummy)
{
	const VALUE *lo = ec->vm_stack, *hi;
	const struct sampler_frames_cfp *cfp = ec->cfp;

	if (ec->thread_ptr != th || lo == NULL || ec->vm_stack_size == 0 ||
	    ec->vm_stack_size > (SIZE_MAX >> 4))
		return 0;
	hi = lo + ec->vm_stack_size;
	if ((const VALUE *)cfp < lo || (const VALUE *)cfp >= hi ||
	    ((uintptr_t)hi - (uintptr_t)cfp) % sizeof *cfp != 0)
		return 0;
	*dummy = (const struct sampler_frames_cfp *)hi - 1;
	return 1;
}

/* The context the thread whose VM record is TH runs now (*EC), and its
 * control frames from the innermost (*CFP) up to *END, the VM's dummy
 * frame: 1, or 0 where the context and frames do not hold together.
 * With the GVL: the thread is this one, or waits for it. */
static int
sampler_frames_current(const struct sampler_frames_th *th,
    const struct sampler_frames_ec **ecp, const struct sampler_frames_cfp **cfpp,
    const struct sampler_frames_cfp **endp)
{
	const struct sampler_frames_ec *ec;

	if (th == NULL || (ec = th->ec) == NULL || !sampler_frames_bounds(ec, th, endp))
		return 0;
	*ecp = ec;
	*cfpp = ec->cfp;
	return 1;
}
#endif

/*
 * See sampler-int.h.  Two prints alike are the same stack as far as
 * rb_profile_frames and sampler_frames_own can tell it: the same frames,
 * each running the same code (iseq; a C frame has none, and its pc is
 * null where a Ruby frame's is not), as the same method (the method
 * entry or cref beside its environment, which tells a C frame's method
 * and a Ruby frame's owner), in the same context; with PCS (--lines),
 * each at the same place as well.  Read on the thread itself, with the
 * GVL: its frames stand still.
 */
int
sampler_frames_print(void *vm_thread, int pcs, struct sampler_frames_print *p)
{
#if SAMPLER_FRAMES_MIRROR
	const struct sampler_frames_ec *ec;
	const struct sampler_frames_cfp *cfp, *end;
	uint64_t a = 1, b = 2, c = 3;

	if (!sampler_frames_current(vm_thread, &ec, &cfp, &end))
		return 0;
	p->ec = ec;
	p->cfp = cfp;
	p->n = (int)(end - cfp);
	for (; cfp < end; cfp++) {
		/* (As rb_vm_frame_method_entry reads it: every live frame
		 * has its environment data.) */
		VALUE me = cfp->ep != NULL ? cfp->ep[SAMPLER_FRAMES_ENV_ME] : 0;

		/* Three polynomial hashes, one of each word, whose chains
		 * run side by side (a walk of 100 frames took 0.4 us with
		 * one chain through all three). */
		a = a * 0xff51afd7ed558ccdu +
		    (pcs || cfp->pc == NULL ? (uint64_t)(uintptr_t)cfp->pc : 1);
		b = b * 0xc4ceb9fe1a85ec53u + (uint64_t)cfp->iseq;
		c = c * 0x9e3779b97f4a7c15u + (uint64_t)me;
	}
	a ^= (b ^ (b >> 31)) * 0xbf58476d1ce4e5b9u;
	a ^= (c ^ (c >> 29)) * 0x94d049bb133111ebu;
	p->hash = a ^ (a >> 32);
	return 1;
#else
	(void)vm_thread;
	(void)pcs;
	(void)p;
	return 0;
#endif
}

/* Control frames read around the last innermost one with the frame
 * pointer (see sampler_frames_peek): deeper calls are below it. */
#define SAMPLER_FRAMES_BELOW	8
#define SAMPLER_FRAMES_ABOVE	(SAMPLER_CHAIN + 4)

/* Values read around the last innermost frame's environment, where a C
 * frame's method entry likely is (after the frame pointer and a fence:
 * see sampler_frames_peek). */
#define SAMPLER_FRAMES_VALUES		32
#define SAMPLER_FRAMES_VALUES_BELOW	24

/* No load after this starts before the ones ahead of it are done (on
 * x86, whose loads are only seen in order; elsewhere the fence the
 * compiler gives for an acquire, not measured there). */
#if SAMPLER_FRAMES_MIRROR
SAMPLER_UNSANITIZED static void
sampler_frames_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_lfence();
#else
	atomic_thread_fence(memory_order_acquire);
#endif
}
#endif

/* Where sampler_frames_peek found the thread last (the worker's alone):
 * its record, its context, the VM stack and the innermost frame, and the
 * GC steps begun before.  On a cache line of its own (the alignment of
 * its first field pads it to one): the worker writes it at every tick,
 * and what the linker put beside it (the addresses of libruby's
 * allocation functions, which rperf's wrappers read at every allocation)
 * was taken from the profiled thread's CPU as often. */
static struct {
	_Alignas(64) const void *vm_thread;
	const void *ec;
	const VALUE *lo, *hi;
	const struct sampler_frames_cfp *cfp;
	const VALUE *ep;
	uint_fast64_t gc_gen;
} sampler_frames_last;

/*
 * The innermost control frame of the thread whose VM record is VM_THREAD
 * (its current context) into *CFP, and it and its callers, up to
 * SAMPLER_CHAIN frames, into CHAIN: each one's iseq word, pc,
 * environment pointer and receiver, and for a C frame its method entry
 * (or 0) with whether it is sure (the frame's slot and its caller's pc
 * read the same again after it, and, read late, the frame not returned
 * from after): 1, or 0 (nothing read that looks right).
 * *CTX: the context to read (one the thread ran lately and that is still
 * allocated), or NULL; on return, the context read.  GC_GEN: the GC
 * steps begun so far; PCS: the innermost frame's pc is wanted for its
 * line (--lines).
 *
 * The context is read first and the thread's record after, only to check
 * that the thread still runs it (else it is read again, from the
 * record).  The record says which context runs, and a thread that
 * switches fibers writes it at every switch; read first, from the
 * thread's CPU, it made the frame pointer read after it show the caller
 * of a short callee where the thread was in the callee: a loop raising
 * in Kernel#Integer with a switch to another fiber every 20 turns (as a
 * CSV parse reading its rows from an Enumerator does) had a C method on
 * top in 4% of the ticks, where a signal sent to the thread at the same
 * ticks found it in 15%, and String#inspect got 2-5% of the loop
 * (stackprof 14%).  From the context given: 11-15%.  That context is
 * the one the thread switched to last (sampler_tick_switched); where it
 * is not the one running, the read starts again from the record, and
 * what it finds is where the thread was some time after the tick.
 *
 * In the handler of the tick's signal on the thread itself, stopped
 * where it was (the default), or, with --peek, on the worker, without
 * the GVL, while the thread runs on another CPU (what follows on the
 * order of the reads is about this case): only inside
 * sampler_tick_note's bracket, which keeps the thread from letting the
 * GVL go (or ending) and a GC from starting, so that its
 * record, its context and the VM stack it runs on stay allocated (a
 * fiber's context and a thread's VM stack are freed only in a GC; a
 * finished fiber's stack goes back to the fiber pool, still mapped).
 * Plain loads, a word at a time: what they read is a guess the job
 * checks.  (Read through the kernel, as once, a read took 1-2 us, the
 * thread had moved on by its end in most reads, and short frames were
 * lost.)  Where the thread is in the same context, on the same VM stack,
 * as last time, the frames around the last innermost one are read with
 * the frame pointer, not after it (a load that needs the pointer's value
 * waits for it), and the frame the pointer shows is taken from that
 * window when the window holds it; then, right after, the values around
 * its environment, where a C frame's method entry is.  An entry is taken
 * as sure only if the frame's slot and its caller's pc read the same
 * again after it (the innermost frame's along with the values), and one
 * read later still (outside the values) only if the frame had not
 * returned by then: the next call at the same depth writes its own entry
 * there, as does the caller once it returns.  (A loop of Array#sum and
 * Kernel#is_a?, its entries taken as they came, gave is_a? a third of
 * sum's time on a slow CPU, 5-9% on Ruby 3.3 here, where a signal sees
 * 1%.  Held to the second test too, the values' entries were unsure so
 * often that String#inspect and Exception#initialize, which one
 * instruction under Kernel#Integer calls in turn, read 4-11% and 5-11%
 * of a raising loop, where stackprof gives 15% and 6%.)
 *
 * The order matters.  A load from another CPU takes the cache line from
 * the thread's, and its next store to that line waits for it: the
 * thread stalls there, and what this CPU reads after (the loads of one
 * CPU are seen in order) is where it stalled, not where it was.  The
 * frame pointer, stored at each call and return, is read first: a C
 * method on top stores nothing in the frames until it returns, and it is
 * seen as the thread's frame as often as a signal on the thread sees it
 * (read after the window, a loop spending 85% of its time in Array#sum
 * was found there 20-45% of the time).  But then a Ruby frame's pc
 * (stored at each instruction) is read where the thread stalls at its
 * next call or return: a loop of arithmetic and two calls read 80% on
 * the two calls' lines, where a signal reads 25%.  So for --lines the
 * window is read first (the thread then stalls at its next instruction),
 * and the C methods that return within the read go to their callers.
 *
 * The values come after a fence (sampler_frames_fence), for a CPU issues
 * the loads whose addresses it knows before the ones ahead of them are
 * done: a loop's locals and operands are among the values, written at
 * nearly every instruction of its Ruby code and left alone by a C method
 * it calls, and issued with the pointer's load they stalled the loop in
 * its Ruby code as the pointer was read.  The String#hash of
 * tests/fixtures/short_c.rb, a third of its loop, read 2-9% so in the
 * ASan build and 8-30% in the plain one, where stackprof gives it 31-37%
 * (and billing at the next safepoint alone, right there, 35-38%); after
 * the fence 26-30% and 16-31%.  The window is not fenced off: read a
 * round trip after the pointer, it often shows a later frame in the
 * pointer's slot (a rescue clause where Kernel#Integer raised: the
 * accuracy bench's raise loop gave Integer 45-51% of its time, where
 * stackprof gives 57-59%).  What no order helps: a store shows on other
 * CPUs only once the stores before it have, so a C method of a few
 * nanoseconds shows there for less than its time (Kernel#is_a? in
 * self_time_c.rb's short loop reads 1-5%, where a signal sees 10%).
 * Async-signal-safe.
 */
SAMPLER_UNSANITIZED int
sampler_frames_peek(void *vm_thread, const void **ctx, uint_fast64_t gc_gen, int pcs,
    const void **cfp, struct sampler_chain *chain, uint_fast64_t labels[2])
{
#if SAMPLER_FRAMES_MIRROR
	/* (Zeroed for the compiler, which cannot tell that the loads fill
	 * them.) */
	struct sampler_frames_cfp win[SAMPLER_FRAMES_BELOW + SAMPLER_FRAMES_ABOVE] = { { 0 } };
	struct sampler_frames_cfp f[SAMPLER_CHAIN] = { { 0 } }, again = { 0 }, again0 = { 0 };
	struct sampler_frames_ec ec = { 0 };
	const struct sampler_frames_cfp *at, *end, *dummy, *w0 = NULL;
	const VALUE *slot;
	VALUE vals[SAMPLER_FRAMES_VALUES] = { 0 };
	const VALUE *v0 = NULL, *pc1 = NULL, *next_pc;
	void *ecp;
	int i, nf, nwin = 0, nvals = 0, late, inwin, inval;

	ecp = *ctx != NULL ? (void *)*ctx : sampler_frames_ec(vm_thread);
	if (ecp == NULL)
		return 0;
	if (!pcs)
		sampler_frames_load_ec(&ec, ecp, labels);
	/* The same context on the same VM stack as last time: read after
	 * the frame pointer, the context's head says so (the current
	 * context's stack is alive); read before it, only no GC step since
	 * does (nothing was freed). */
	if (sampler_frames_last.vm_thread == vm_thread && sampler_frames_last.ec == ecp &&
	    (pcs ? sampler_frames_last.gc_gen == gc_gen :
	    ec.vm_stack == sampler_frames_last.lo &&
	    ec.vm_stack + ec.vm_stack_size == sampler_frames_last.hi)) {
		const struct sampler_frames_cfp *hi =
		    (const struct sampler_frames_cfp *)sampler_frames_last.hi;
		/* (Whole frames from the last one: the values are below.) */
		size_t below = ((uintptr_t)sampler_frames_last.cfp -
		    (uintptr_t)sampler_frames_last.lo) / sizeof win[0];

		w0 = sampler_frames_last.cfp -
		    (below < SAMPLER_FRAMES_BELOW ? below : SAMPLER_FRAMES_BELOW);
		nwin = (int)(hi - w0);
		if (nwin > (int)(sampler_frames_last.cfp + SAMPLER_FRAMES_ABOVE - w0))
			nwin = (int)(sampler_frames_last.cfp + SAMPLER_FRAMES_ABOVE - w0);
		if (sampler_frames_last.ep != NULL) {
			v0 = sampler_frames_last.ep - SAMPLER_FRAMES_VALUES_BELOW;
			if (v0 < sampler_frames_last.lo)
				v0 = sampler_frames_last.lo;
			nvals = SAMPLER_FRAMES_VALUES;
			if (v0 + nvals > sampler_frames_last.hi)
				nvals = (int)(sampler_frames_last.hi - v0);
		}
		sampler_frames_load(win, w0, nwin * sizeof win[0]);
	}
	if (pcs)
		sampler_frames_load_ec(&ec, ecp, labels);
	if (nvals > 0) {
		sampler_frames_fence();
		sampler_frames_load(vals, v0, nvals * sizeof vals[0]);
	}
	/* Read from the context the holder noted: is it the one the thread
	 * runs now?  Asked after the reads above are done, not before. */
	if (*ctx != NULL) {
		sampler_frames_fence();
		if (sampler_frames_ec(vm_thread) != ecp) {
			*ctx = NULL;
			return sampler_frames_peek(vm_thread, ctx, gc_gen, pcs, cfp, chain, labels);
		}
	}
	sampler_frames_last.vm_thread = NULL;
	/* The VM's dummy frame is never a frame of ours. */
	if (!sampler_frames_bounds(&ec, vm_thread, &dummy) || ec.cfp == dummy)
		return 0;
	at = ec.cfp;
	end = dummy + 1;
	nf = (int)(end - at) - 1;
	if (nf > SAMPLER_CHAIN)
		nf = SAMPLER_CHAIN;
	inwin = nwin > 0 && at >= w0 && at + nf <= w0 + nwin;
	/* A C frame on top read again, with its caller's pc, along with the
	 * values: whether an entry among them is that frame's (below). */
	if (inwin && win[at - w0].pc == NULL) {
		sampler_frames_load(&again0, at, sizeof again0);
		pc1 = __atomic_load_n(&at[1].pc, __ATOMIC_RELAXED);
	}
	if (inwin)
		memcpy(f, &win[at - w0], nf * sizeof f[0]);
	else
		sampler_frames_load(f, at, nf * sizeof f[0]);
	sampler_frames_last.vm_thread = vm_thread;
	sampler_frames_last.ec = ecp;
	sampler_frames_last.lo = ec.vm_stack;
	sampler_frames_last.hi = (const VALUE *)end;
	sampler_frames_last.cfp = at;
	sampler_frames_last.ep = f[0].ep >= ec.vm_stack && f[0].ep < (const VALUE *)end ?
	    f[0].ep : NULL;
	sampler_frames_last.gc_gen = gc_gen;
	*cfp = at;
	*ctx = ecp;
	chain->n = nf;
	late = 0;
	for (i = 0; i < nf; i++) {
		chain->iseq[i] = (uintptr_t)f[i].iseq;
		chain->pc[i] = (uintptr_t)f[i].pc;
		chain->ep[i] = (uintptr_t)f[i].ep;
		chain->self[i] = (uintptr_t)f[i].self;
		chain->me[i] = 0;
		chain->me_sure[i] = 1;
		chain->prev[i] = 0;
		/* (The slot's address is made only for an ep inside the
		 * stack: what was read may be any word, a null one too.) */
		if ((uintptr_t)f[i].ep % sizeof(VALUE) != 0 ||
		    (uintptr_t)f[i].ep < (uintptr_t)(ec.vm_stack - SAMPLER_FRAMES_ENV_ME) ||
		    (uintptr_t)f[i].ep > (uintptr_t)end)
			continue;
		slot = f[i].ep + SAMPLER_FRAMES_ENV_ME;
		/* A Ruby frame's: a method's own frame has its method entry
		 * there, by which the job can name it when it is gone and no
		 * job has seen it (sampler_tick_method); never sure. */
		if (f[i].pc != NULL) {
			inval = inwin && slot >= v0 && slot < v0 + nvals;
			chain->me[i] = inval ? vals[slot - v0] : __atomic_load_n(slot, __ATOMIC_RELAXED);
			chain->me_sure[i] = 0;
			if (RB_SPECIAL_CONST_P(chain->me[i]))
				chain->me[i] = 0;
			continue;
		}
		/* A C block's (an ifunc): the environment it was made in, by
		 * whose frame the job names it (sampler_tick_ifunc). */
		if (f[i].iseq != 0 && f[i].ep < (const VALUE *)end) {
			const VALUE *w = f[i].ep + SAMPLER_FRAMES_ENV_SPECVAL;
			VALUE env[2];	/* the outer environment, the flags */

			if (inwin && w >= v0 && w + 2 <= v0 + nvals)
				memcpy(env, &vals[w - v0], sizeof env);
			else
				sampler_frames_load(env, w, sizeof env);
			if (!(env[1] & SAMPLER_FRAMES_ENV_LOCAL))
				chain->prev[i] = (uintptr_t)(env[0] & ~(VALUE)SAMPLER_FRAMES_ENV_TAGS);
		}
		/* Read a round trip after the frame pointer, or else now (late);
		 * then, still that frame, called from the same place?  (The
		 * innermost one read again along with the values.) */
		inval = inwin && slot >= v0 && slot < v0 + nvals;
		if (inval) {
			chain->me[i] = vals[slot - v0];
		} else {
			chain->me[i] = __atomic_load_n(slot, __ATOMIC_RELAXED);
			late |= 1 << i;
		}
		if (inval && i == 0) {
			again = again0;
			next_pc = pc1;
		} else {
			sampler_frames_load(&again, at + i, sizeof again);
			next_pc = __atomic_load_n(&at[i + 1].pc, __ATOMIC_RELAXED);
		}
		chain->me_sure[i] = sampler_frames_same_c(&again, &f[i]) &&
		    (i + 1 == nf || next_pc == f[i + 1].pc);
		if (RB_SPECIAL_CONST_P(chain->me[i]))
			chain->me[i] = 0;
	}
	/* An entry read late: the frame not returned from since. */
	if (late != 0) {
		const struct sampler_frames_cfp *now =
		    __atomic_load_n(&((struct sampler_frames_ec *)ecp)->cfp, __ATOMIC_RELAXED);

		for (i = 0; i < nf; i++) {
			if ((late & (1 << i)) && now > at + i)
				chain->me_sure[i] = 0;
		}
	}
	return 1;
#else
	(void)vm_thread;
	(void)ctx;
	(void)gc_gen;
	(void)pcs;
	(void)cfp;
	(void)chain;
	return 0;
#endif
}

/* Whether ME, a method entry sampler_frames_peek read and no GC step
 * has run since (with the GVL), is one: an object of that kind. */
int
sampler_frames_is_me(VALUE me)
{
#if SAMPLER_FRAMES_MIRROR
	return !RB_SPECIAL_CONST_P(me) && sampler_frames_imemo_p(me, SAMPLER_FRAMES_IMEMO_MENT);
#else
	(void)me;
	return 0;
#endif
}

/* The owner of method entry ME (rb_method_entry_t: flags, defined
 * class, definition, called id, owner). */
#define SAMPLER_FRAMES_ME_OWNER	4

int
sampler_frames_me_fits(VALUE me, VALUE self)
{
#if SAMPLER_FRAMES_MIRROR
	VALUE owner = ((const VALUE *)me)[SAMPLER_FRAMES_ME_OWNER];

	/* rb_obj_is_kind_of raises for anything but a class or module, and
	 * reads the class of SELF: a hidden object or an internal one has
	 * none to read. */
	if (RB_SPECIAL_CONST_P(owner) || (RB_BUILTIN_TYPE(owner) != RUBY_T_CLASS &&
	    RB_BUILTIN_TYPE(owner) != RUBY_T_MODULE))
		return 0;
	if (!RB_SPECIAL_CONST_P(self) && (RBASIC_CLASS(self) == 0 ||
	    RB_BUILTIN_TYPE(self) == RUBY_T_IMEMO || RB_BUILTIN_TYPE(self) == RUBY_T_NONE))
		return 0;
	return RTEST(rb_obj_is_kind_of(self, owner));
#else
	(void)me;
	(void)self;
	return 0;
#endif
}

/* Ruby's own test of whether a word is a slot of its object heap
 * (exported by libruby 3.4, not declared in its headers; weak, so that
 * a libruby without it leaves it null). */
extern int rb_gc_pointer_to_heap_p(VALUE obj) __attribute__((weak));

int
sampler_frames_in_heap(VALUE v)
{
	return rb_gc_pointer_to_heap_p != NULL && !RB_SPECIAL_CONST_P(v) &&
	    rb_gc_pointer_to_heap_p(v);
}

int
sampler_frames_me_of_class(VALUE me)
{
#if SAMPLER_FRAMES_MIRROR
	VALUE owner = ((const VALUE *)me)[SAMPLER_FRAMES_ME_OWNER];

	return !RB_SPECIAL_CONST_P(owner) && RB_BUILTIN_TYPE(owner) == RUBY_T_CLASS;
#else
	(void)me;
	return 0;
#endif
}

/* The definition of a method entry (rb_method_entry_t: flags, defined
 * class, definition), and in it the first word of its body, past the
 * bit fields of its type and flags: an ISEQ method's iseq. */
#define SAMPLER_FRAMES_ME_DEF		2
#define SAMPLER_FRAMES_DEF_BODY		1

int
sampler_frames_me_runs(VALUE me, VALUE iseq)
{
#if SAMPLER_FRAMES_MIRROR
	const VALUE *def = (const VALUE *)((const VALUE *)me)[SAMPLER_FRAMES_ME_DEF];

	return def != NULL && def[SAMPLER_FRAMES_DEF_BODY] == iseq;
#else
	(void)me;
	(void)iseq;
	return 0;
#endif
}

/* Whether control frame CFP of the current thread (with the GVL) has
 * environment pointer EP. */
int
sampler_frames_has_ep(const void *cfp, uintptr_t ep)
{
#if SAMPLER_FRAMES_MIRROR
	return (uintptr_t)((const struct sampler_frames_cfp *)cfp)->ep == ep;
#else
	(void)cfp;
	(void)ep;
	return 0;
#endif
}

/* Whether control frame CFP of the current thread (with the GVL) is the
 * frame whose identity sampler_frames_peek gave as IDENT: the same
 * environment and receiver. */
int
sampler_frames_is(const void *cfp, const uintptr_t ident[2])
{
#if SAMPLER_FRAMES_MIRROR
	const struct sampler_frames_cfp *f = cfp;

	return (uintptr_t)f->ep == ident[0] && (uintptr_t)f->self == ident[1];
#else
	(void)cfp;
	(void)ident;
	return 0;
#endif
}

/* The pc of control frame CFP of the current thread (with the GVL). */
const VALUE *
sampler_frames_pc(const void *cfp)
{
#if SAMPLER_FRAMES_MIRROR
	return ((const struct sampler_frames_cfp *)cfp)->pc;
#else
	(void)cfp;
	return NULL;
#endif
}

/* The line of ISEQ (the own iseq of a frame on the current stack, so
 * alive) that pc PC is in, as rb_profile_frames would give it for a frame
 * at PC; 0 where PC is not in ISEQ's code.  With the GVL. */
int
sampler_frames_line(VALUE iseq, const VALUE *pc)
{
#if SAMPLER_FRAMES_MIRROR
	const struct sampler_frames_body *body;
	ptrdiff_t n;

	if (!sampler_frames_is_iseq(iseq) || pc == NULL ||
	    (body = ((const struct sampler_frames_iseq *)iseq)->body) == NULL ||
	    body->iseq_encoded == NULL)
		return 0;
	n = pc - body->iseq_encoded;
	if (n < 0 || n > (ptrdiff_t)body->iseq_size)
		return 0;
	/* The pc is the next instruction's once one has begun. */
	return (int)rb_iseq_line_no((const void *)iseq, n > 0 ? (size_t)n - 1 : 0);
#else
	(void)iseq;
	(void)pc;
	return 0;
#endif
}

#if SAMPLER_FRAMES_MIRROR
/* Whether FRAME, an entry of rb_profile_frames, is a Ruby frame's (a
 * method entry of a Ruby method, or an iseq), not a C method's. */
static int
sampler_frames_ruby(VALUE frame)
{
	return !NIL_P(rb_profile_frame_first_lineno(frame));
}

/* Whether FRAME, an entry of rb_profile_frames, is an iseq. */
static int
sampler_frames_is_iseq(VALUE frame)
{
	return sampler_frames_imemo_p(frame, SAMPLER_FRAMES_IMEMO_ISEQ);
}
#endif

static int sampler_frames_prefixed(VALUE str, const char *prefix);

/*
 * Whether FRAME, an entry of rb_profile_frames (or a pseudo-frame), is
 * an iseq of code compiled at run time from a string: Ruby gives such
 * code no real path (that is why __dir__ is nil in an eval).  Ruby's own
 * code written in Ruby ("<internal:array>": Array#each, Integer#times,
 * Kernel#loop) has none either, but lives as long as the VM and is on
 * the stack of most samples: not it.  A method entry is not, even for a
 * method an eval defined: the method keeps its code alive anyway.  Reads
 * only; may run in a GC hook.
 */
int
sampler_frames_transient(VALUE frame)
{
	if (RB_SPECIAL_CONST_P(frame) || RB_BUILTIN_TYPE(frame) != RUBY_T_IMEMO ||
	    ((RBASIC(frame)->flags >> RUBY_FL_USHIFT) & SAMPLER_FRAMES_IMEMO_MASK) !=
	    SAMPLER_FRAMES_IMEMO_ISEQ || !NIL_P(rb_profile_frame_absolute_path(frame)))
		return 0;
	return !sampler_frames_prefixed(rb_profile_frame_path(frame), "<internal:");
}

/* The types of iseq (vm_core.h, enum rb_iseq_type, 3.3 and 3.4) of a
 * file's top, of a block, of a class or module body and of an eval's
 * top. */
#define SAMPLER_FRAMES_ISEQ_TOP		0
#define SAMPLER_FRAMES_ISEQ_BLOCK	2
#define SAMPLER_FRAMES_ISEQ_CLASS	3
#define SAMPLER_FRAMES_ISEQ_EVAL	6

#if SAMPLER_FRAMES_MIRROR
/* Whether BASE, the base label of a block's iseq, says the block is in
 * a required file's top or a class or module body. */
static int
sampler_frames_once_base(VALUE base)
{
	static const char *const prefixes[] = { "<top (required)>", "<class:", "<module:",
	    "singleton class", NULL };
	int i;

	if (!RB_TYPE_P(base, T_STRING))
		return 0;
	for (i = 0; prefixes[i] != NULL; i++) {
		if (sampler_frames_prefixed(base, prefixes[i]))
			return 1;
	}
	return 0;
}
#endif

/*
 * Whether ISEQ (an own iseq, or any frame) is the top of a file required
 * or loaded, a class or module body, a block in one of those, or the top
 * of an eval: code that runs once, and with everything it refers to (the
 * bodies and blocks in it) is garbage after.  A block in it counts, for
 * a block keeps its parents alive (a define_method block in a class body
 * lives on, but is only named early, as such code is).  Not the script's
 * own top.  Reads the iseq's type (and a block's base label): cheap
 * enough for every new frame, and safe in a GC's marking.
 */
int
sampler_frames_iseq_once(VALUE iseq)
{
#if SAMPLER_FRAMES_MIRROR
	if (!RB_SPECIAL_CONST_P(iseq) && sampler_frames_is_iseq(iseq)) {
		const struct sampler_frames_body *body =
		    ((const struct sampler_frames_iseq *)iseq)->body;

		if (body == NULL)
			return 0;
		if (body->type == SAMPLER_FRAMES_ISEQ_BLOCK)
			return sampler_frames_once_base(rb_profile_frame_base_label(iseq));
		return body->type == SAMPLER_FRAMES_ISEQ_TOP ||
		    body->type == SAMPLER_FRAMES_ISEQ_CLASS ||
		    body->type == SAMPLER_FRAMES_ISEQ_EVAL;
	}
#else
	(void)iseq;
#endif
	return 0;
}

/*
 * Whether FRAME, an entry of rb_profile_frames (or a pseudo-frame), is
 * code that runs once and is garbage after: code compiled from a string
 * (sampler_frames_transient), or a file's top or a class body
 * (sampler_frames_iseq_once).  A program that loads thousands of files
 * had a frame of each kept alive by the samples of its boot.  Reads
 * only; may run in a GC hook.
 */
int
sampler_frames_once(VALUE frame)
{
	return sampler_frames_iseq_once(frame) || sampler_frames_transient(frame);
}

/*
 * What locates FRAME, whose own iseq is OWN (0: not known), for its file
 * and first line: the frame, except for a block of code a string
 * compiled in a method (an eval, an ERB template rendered there), named
 * after the method but whose code is in the eval's file, as Ruby's
 * backtrace says.
 */
VALUE
sampler_frames_where(VALUE frame, VALUE own)
{
	return sampler_frames_transient(own) ? own : frame;
}

#if SAMPLER_FRAMES_MIRROR
/* The C frames between two Ruby frames whose places are kept. */
#define SAMPLER_FRAMES_GAP	8

/* The C entries of FRAMES from entry J up to the next Ruby one, given
 * GAP C frames between the Ruby frames around them, the first of them
 * in GAPF: their OWN 0 and their control frames into CFPS, paired in
 * order when there are as many entries as frames (else not known:
 * NULL).  The entry after them, or -1 (more C entries than frames). */
static int
sampler_frames_own_c(const VALUE *frames, int depth, int j,
    const struct sampler_frames_cfp *const *gapf, int gap, VALUE *own, const void **cfps)
{
	int k, n = 0;

	while (j + n < depth && !sampler_frames_ruby(frames[j + n]))
		n++;
	if (n > gap)
		return -1;
	for (k = 0; k < n; k++) {
		cfps[j + k] = n == gap && gap <= SAMPLER_FRAMES_GAP ? gapf[k] : NULL;
		own[j + k] = 0;
	}
	return j + n;
}
#endif

/*
 * Fill OWN[0..DEPTH) with the own iseq of each of the DEPTH frames that
 * rb_profile_frames put in FRAMES (LIMIT asked for) for the thread whose
 * VM record is VM_THREAD: a Ruby frame's iseq, 0 for a C frame.  1 if the
 * control frames agree with FRAMES; else 0, with OWN all 0.  Where each
 * frame gave one entry, *BASE is the innermost control frame (entry j's
 * is j frames up); else *BASE is NULL and CFPS gets each frame's control
 * frame (NULL for a C frame not told apart from others): for
 * sampler_tick_cut.
 *
 * rb_profile_frames gives every Ruby frame with a pc, and those C frames
 * whose method is a C method; so the Ruby frames (pc set) of the walk
 * must be, in order, the Ruby entries of FRAMES, with no more C entries
 * between two of them than there are C frames (pc unset) between; and
 * where an entry is an iseq, it must be the frame's.  When there are as
 * many frames as entries, each frame gave one, in order, so the entries
 * need not be told apart.  Only control frames, inside the VM stack, are
 * read.
 */
int
sampler_frames_own(void *vm_thread, const VALUE *frames, int depth, int limit,
    VALUE *own, const void **base, const void **cfps)
{
#if SAMPLER_FRAMES_MIRROR
	const struct sampler_frames_ec *ec;
	const struct sampler_frames_cfp *cfp, *end;
	const struct sampler_frames_cfp *gapf[SAMPLER_FRAMES_GAP];
	int j = 0, gap = 0;

	*base = NULL;
	if (depth <= 0 || !sampler_frames_current(vm_thread, &ec, &cfp, &end))
		goto fail;
	if (end - cfp == depth) {
		/* Every frame was given (the common case: no C block, no
		 * dummy frame), so frame j is entry j. */
		*base = cfp;
		for (; j < depth; j++, cfp++) {
			if (cfp->pc == NULL) {
				own[j] = 0;
				continue;
			}
			if (cfp->iseq == 0 ||
			    (sampler_frames_is_iseq(frames[j]) && frames[j] != cfp->iseq)) {
				*base = NULL;
				goto fail;
			}
			own[j] = cfp->iseq;
		}
		return 1;
	}
	for (; cfp < end; cfp++) {
		if (cfp->pc == NULL) {
			if (gap < SAMPLER_FRAMES_GAP)
				gapf[gap] = cfp;
			gap++;
			continue;
		}
		if ((j = sampler_frames_own_c(frames, depth, j, gapf, gap, own, cfps)) < 0)
			goto fail;
		if (j == depth) {
			if (depth == limit)
				break;	/* rb_profile_frames stopped here too */
			goto fail;	/* a Ruby frame it did not give */
		}
		if (cfp->iseq == 0 ||
		    (sampler_frames_is_iseq(frames[j]) && frames[j] != cfp->iseq))
			goto fail;
		cfps[j] = cfp;
		own[j++] = cfp->iseq;
		gap = 0;
	}
	if ((j = sampler_frames_own_c(frames, depth, j, gapf, gap, own, cfps)) != depth)
		goto fail;
	return 1;
fail:
#else
	(void)vm_thread;
	(void)limit;
#endif
	(void)cfps;
	if (depth > 0)
		memset(own, 0, depth * sizeof *own);	/* own[j] 0: cfps[j] unread */
	return 0;
}

/* Whether STR begins with the C string PREFIX. */
static int
sampler_frames_prefixed(VALUE str, const char *prefix)
{
	size_t n = strlen(prefix);

	return RB_TYPE_P(str, T_STRING) && (size_t)RSTRING_LEN(str) >= n &&
	    memcmp(RSTRING_PTR(str), prefix, n) == 0;
}

/* Whether the Ruby strings A and B hold the same bytes. */
static int
sampler_frames_same(VALUE a, VALUE b)
{
	return RB_TYPE_P(a, T_STRING) && RB_TYPE_P(b, T_STRING) &&
	    RSTRING_LEN(a) == RSTRING_LEN(b) &&
	    memcmp(RSTRING_PTR(a), RSTRING_PTR(b), RSTRING_LEN(a)) == 0;
}

/* A new string of the LEN bytes at A, then the bytes of SEP (NULL: none)
 * and of the string B. */
static VALUE
sampler_frames_cat(const char *a, long len, const char *sep, VALUE b)
{
	long seplen = sep != NULL ? (long)strlen(sep) : 0;
	VALUE s = rb_str_buf_new(len + seplen + RSTRING_LEN(b));

	rb_str_cat(s, a, len);
	if (seplen > 0)
		rb_str_cat(s, sep, seplen);
	rb_str_cat(s, RSTRING_PTR(b), RSTRING_LEN(b));
	return s;
}

/* The module whose methods rperf prepends to Process's own
 * (rperf_module_set_hooks): each wraps the method of its name. */
#define SAMPLER_FRAMES_WRAPPER		"Rperf::ForkHook"
#define SAMPLER_FRAMES_WRAPPED		"Process"

/* Whether PATH, a frame's class path, is that module's. */
static int
sampler_frames_wrapper_path(VALUE path)
{
	return RB_TYPE_P(path, T_STRING) &&
	    (size_t)RSTRING_LEN(path) == strlen(SAMPLER_FRAMES_WRAPPER) &&
	    sampler_frames_prefixed(path, SAMPLER_FRAMES_WRAPPER);
}

/* Whether FRAME is a method of rperf's that wraps Process's method of
 * the same name (Process._fork, Process.daemon).  With the GVL. */
int
sampler_frames_wrapper(VALUE frame)
{
	return !SAMPLER_FRAME_PSEUDO(frame) &&
	    sampler_frames_wrapper_path(rb_profile_frame_classpath(frame));
}

/* METHOD (a string, or nil) as FRAME's class names it ("Foo#run",
 * "Foo.make"), or METHOD alone where FRAME has no class.  A method of
 * rperf's that wraps one of Process's is named like it: a script's
 * stacks read as Ruby's backtrace of the same call would, with no frame
 * of the profiler's ("Kernel#fork;Process._fork"). */
static VALUE
sampler_frames_qualified(VALUE frame, VALUE method)
{
	VALUE path;

	if (!RB_TYPE_P(method, T_STRING))
		return method;
	path = rb_profile_frame_classpath(frame);
	if (sampler_frames_wrapper_path(path))
		return sampler_frames_cat(SAMPLER_FRAMES_WRAPPED,
		    (long)strlen(SAMPLER_FRAMES_WRAPPED), ".", method);
	if (!RB_TYPE_P(path, T_STRING))
		return method;
	return sampler_frames_cat(RSTRING_PTR(path), RSTRING_LEN(path),
	    rb_profile_frame_singleton_method_p(frame) == Qtrue ? "." : "#", method);
}

/*
 * rb_profile_frame_full_label(FRAME), the same name in the same steps
 * (Ruby 3.3's and 3.4's), its strings joined by rb_str_cat: Ruby's
 * rb_sprintf, which it joins them with, took some 18,000 instructions a
 * call naming a one-line script's frames (0.84 M of the 1.84 M its
 * stop, build and write took; 0.07 M of 1.08 M with this), and the
 * naming of a short psych run went 0.37 M -> 0.17 M.
 */
static VALUE
sampler_frames_full_label(VALUE frame)
{
	VALUE label = rb_profile_frame_label(frame), base, full;
	long prefix;

	/* No iseq: a C method's name, qualified (or nil). */
	if (NIL_P(label))
		return sampler_frames_qualified(frame, rb_profile_frame_method_name(frame));
	base = rb_profile_frame_base_label(frame);
	full = sampler_frames_qualified(frame, rb_profile_frame_method_name(frame));
	if (NIL_P(full) || base == full || !RB_TYPE_P(label, T_STRING) ||
	    !RB_TYPE_P(base, T_STRING) || !RB_TYPE_P(full, T_STRING))
		return label;
	prefix = RSTRING_LEN(label) - RSTRING_LEN(base);
	if (prefix < 0)
		return label;
	return sampler_frames_cat(RSTRING_PTR(label), prefix, NULL, full);
}

/*
 * The name of frame FRAME (a method entry or an iseq, as rb_profile_frames
 * gave it) whose own iseq is OWN (0: not known), as Ruby 3.4's
 * Thread::Backtrace::Location#label names it: "block in Foo#run",
 * "block (2 levels) in Foo#run", "<class:Foo>", "Foo.bar".  *CLAUSE is
 * set when OWN is a rescue or ensure clause, which Ruby 3.4 names like
 * the frame it runs in (and then leaves that frame out).  With the GVL.
 */
VALUE
sampler_frames_name(VALUE frame, VALUE own, int *clause)
{
	VALUE full = sampler_frames_full_label(frame);
	VALUE label, base, method;
	long prefix;

	*clause = 0;
	if (own == 0)
		return full;
	label = rb_profile_frame_label(own);
	base = rb_profile_frame_base_label(own);
	if (!RB_TYPE_P(label, T_STRING) || !RB_TYPE_P(base, T_STRING))
		return full;
	*clause = sampler_frames_prefixed(label, "rescue in ") ||
	    sampler_frames_prefixed(label, "ensure in ");
	if (own == frame)
		return full;
	/* A block or clause of the method FRAME: its label is a prefix and
	 * the method's own label ("block in " and "run"), in the method's
	 * file, or in code a string compiled in the method (an eval, an ERB
	 * template rendered there); anything else is not what we think it
	 * is. */
	method = rb_profile_frame_label(frame);
	prefix = RSTRING_LEN(label) - RSTRING_LEN(base);
	if (!sampler_frames_same(base, method) || prefix < 0 ||
	    memcmp(RSTRING_PTR(label) + prefix, RSTRING_PTR(base), RSTRING_LEN(base)) != 0 ||
	    (!sampler_frames_same(rb_profile_frame_path(own), rb_profile_frame_path(frame)) &&
	    !sampler_frames_transient(own))) {
		*clause = 0;
		return full;
	}
	if (prefix == 0 || !RB_TYPE_P(full, T_STRING))
		return full;
	return sampler_frames_cat(RSTRING_PTR(label), prefix, NULL, full);
}
