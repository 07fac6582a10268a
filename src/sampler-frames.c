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
 * thread it reads runs, or ends: it reads the same words the walk does
 * (the record, the context's head, one control frame inside the VM
 * stack), all of them through the kernel (process_vm_readv), so that
 * memory freed under it cannot fault, and stores nothing but into its
 * arguments.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

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

/* The execution context VM_THREAD runs now; only on that thread (or
 * with the GVL).  NULL where the layout is not mirrored. */
void *
sampler_frames_ec(void *vm_thread)
{
#if SAMPLER_FRAMES_MIRROR
	return vm_thread != NULL ? ((struct sampler_frames_th *)vm_thread)->ec : NULL;
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
/* Copy LEN bytes at ADDR in this process into BUF through the kernel,
 * which fails on memory that is not mapped instead of faulting: 0, 1
 * (not readable), or -1 (the kernel will not read for us). */
static int
sampler_frames_copy(void *buf, const void *addr, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(sampler.pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == EPERM || errno == ENOSYS))
		return -1;
	return 1;
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
static int
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

/* Read N spans of this process's memory through the kernel in one call,
 * in order, within a moment of each other: as sampler_frames_copy. */
static int
sampler_frames_copyv(const struct iovec *local, const struct iovec *remote, int n)
{
	size_t len = 0;
	ssize_t got;
	int i;

	for (i = 0; i < n; i++)
		len += local[i].iov_len;
	got = process_vm_readv(sampler.pid, local, (unsigned long)n, remote,
	    (unsigned long)n, 0);
	if (got == (ssize_t)len)
		return 0;
	if (got < 0 && (errno == EPERM || errno == ENOSYS))
		return -1;
	return 1;
}

/* Control frames read around the last innermost one (see
 * sampler_frames_peek): deeper calls are below it. */
#define SAMPLER_FRAMES_WINDOW		32
#define SAMPLER_FRAMES_WINDOW_ABOVE	8

/* What sampler_frames_peek read last (only the worker calls it). */
static struct {
	void *vm_thread;
	const void *ec;
	const VALUE *lo, *hi;		/* the VM stack */
	uintptr_t cfp;
	const VALUE *sp;		/* that frame's stack pointer */
} sampler_frames_last;

/* Values read around the last frame's stack pointer with the control
 * frames (see sampler_frames_peek), most of them below it. */
#define SAMPLER_FRAMES_VALUES		128
#define SAMPLER_FRAMES_VALUES_BELOW	96

/* Whether the C frame F, read at AT in the window starting at W0, was
 * still there with its caller at the same pc (if CALLER) when the window
 * was read again into WIN2 (of NWIN frames). */
static int
sampler_frames_still(const struct sampler_frames_cfp *win2, const struct sampler_frames_cfp *w0,
    int nwin, const struct sampler_frames_cfp *at, const struct sampler_frames_cfp *f,
    int caller)
{
	if (at < w0 || at >= w0 + nwin || !sampler_frames_same_c(&win2[at - w0], f))
		return 0;
	return !caller || (at + 1 < w0 + nwin && win2[at + 1 - w0].pc == f[1].pc);
}

/* The index of the method entry in a frame's environment data, below
 * its environment pointer (VM_ENV_DATA_INDEX_ME_CREF). */
#define SAMPLER_FRAMES_ENV_ME	(-2)

/*
 * The method entry of the C frame F, read at AT, when the values read
 * with it did not hold it: the word its environment keeps it in, read
 * with the frame again after it; 0 where the frame is not a C frame, or
 * has changed meanwhile.  While the frame is the one read before, the
 * word is its method entry (written before the frame is), alive while
 * the frame runs.  Async-signal-safe.
 */
static VALUE
sampler_frames_peek_me(const struct sampler_frames_cfp *at,
    const struct sampler_frames_cfp *f)
{
	struct sampler_frames_cfp again;
	VALUE me = 0;
	const VALUE *slot = f->ep + SAMPLER_FRAMES_ENV_ME;

	if (f->pc != NULL || f->ep == NULL || slot < sampler_frames_last.lo ||
	    slot >= sampler_frames_last.hi)
		return 0;
	{
		struct iovec local[2] = { { &me, sizeof me }, { &again, sizeof again } };
		struct iovec remote[2] = { { (void *)slot, sizeof me },
			{ (void *)at, sizeof again } };

		if (sampler_frames_copyv(local, remote, 2) != 0)
			return 0;
	}
	if (!sampler_frames_same_c(&again, f) || RB_SPECIAL_CONST_P(me))
		return 0;
	return me;
}

/*
 * The innermost control frame of the thread whose VM record is VM_THREAD
 * (current context) into *CFP, and it and its callers, up to
 * SAMPLER_CHAIN frames, into CHAIN: each one's iseq word, pc,
 * environment pointer and receiver, and for a C frame its method entry
 * (or 0) with whether it was read with the frame standing still: 1, 0
 * (nothing read that looks right), or -1 (the kernel will not let us
 * read).  From another thread, without the GVL, while the thread runs or
 * ends: every word goes through the kernel, and what it gives is a guess
 * the job checks.
 *
 * The frame must be the one the context's frame pointer showed: read a
 * moment later, its slot may hold a later call at the same depth (a C
 * method after the one running at the tick returned).  So the context's
 * head and a window of control frames around the last innermost one are
 * read in one call, head first: a slot keeps its frame after it returns
 * until another call takes it, so what the window holds at the frame
 * pointer is the frame it pointed to.  Outside the window the frames are
 * read after it, as a second best.  A C method is often over within a
 * few microseconds, the time of a second read: so the same call reads
 * the values around the last frame's stack pointer too, where the method
 * entry below a C frame's environment pointer usually is (written
 * before the frame, so there when the frame pointer shows it).
 * Async-signal-safe.
 */
int
sampler_frames_peek(void *vm_thread, const void **cfp, struct sampler_chain *chain)
{
#if SAMPLER_FRAMES_MIRROR
	struct sampler_frames_cfp win[SAMPLER_FRAMES_WINDOW], win2[SAMPLER_FRAMES_WINDOW];
	struct sampler_frames_cfp f[SAMPLER_CHAIN];
	VALUE vals[SAMPLER_FRAMES_VALUES];
	const VALUE *v0 = NULL, *slot;
	struct sampler_frames_th th;
	struct sampler_frames_ec ec;
	const struct sampler_frames_cfp *w0 = NULL, *at;
	int i, r, nf, nwin = 0, nvals = 0;

	if (sampler_frames_last.vm_thread == vm_thread && sampler_frames_last.ec != NULL) {
		/* The window: below and a little above the last frame. */
		w0 = (const struct sampler_frames_cfp *)sampler_frames_last.cfp -
		    (SAMPLER_FRAMES_WINDOW - SAMPLER_FRAMES_WINDOW_ABOVE);
		if ((const VALUE *)w0 < sampler_frames_last.lo)
			w0 = (const struct sampler_frames_cfp *)sampler_frames_last.lo;
		nwin = (int)((const struct sampler_frames_cfp *)sampler_frames_last.hi - w0) - 1;
		if (nwin > SAMPLER_FRAMES_WINDOW)
			nwin = SAMPLER_FRAMES_WINDOW;
		if (nwin < 2)
			nwin = 0;
		/* And the values around the last frame's stack pointer, where
		 * a C frame's method entry likely is. */
		if (sampler_frames_last.sp != NULL) {
			v0 = sampler_frames_last.sp - SAMPLER_FRAMES_VALUES_BELOW;
			if (v0 < sampler_frames_last.lo)
				v0 = sampler_frames_last.lo;
			nvals = SAMPLER_FRAMES_VALUES;
			if (v0 + nvals > (const VALUE *)w0)
				nvals = (int)((const VALUE *)w0 - v0);
			if (nvals < 0)
				nvals = 0;
		}
	}
	if (nwin > 0) {
		/* The thread's context (a fiber switch changes it), its head,
		 * the window, the values, the window again (see below). */
		struct iovec local[5] = {
			{ &th.ec, sizeof th.ec }, { &ec, sizeof ec },
			{ win, nwin * sizeof win[0] }, { vals, nvals * sizeof vals[0] },
			{ win2, nwin * sizeof win2[0] } };
		struct iovec remote[5] = {
			{ &((struct sampler_frames_th *)vm_thread)->ec, sizeof th.ec },
			{ (void *)sampler_frames_last.ec, sizeof ec },
			{ (void *)w0, nwin * sizeof win[0] },
			{ (void *)v0, nvals * sizeof vals[0] },
			{ (void *)w0, nwin * sizeof win2[0] } };

		r = sampler_frames_copyv(local, remote, nvals > 0 ? 5 : 3);
		if (r < 0)
			return -1;
		if (r > 0 || th.ec != sampler_frames_last.ec)
			nwin = nvals = 0;	/* another context, or gone: read afresh */
	}
	if (nwin == 0) {
		sampler_frames_last.vm_thread = NULL;
		if ((r = sampler_frames_copy(&th, vm_thread, sizeof th)) != 0)
			return -r;
		if (th.ec == NULL)
			return 0;
		if ((r = sampler_frames_copy(&ec, th.ec, sizeof ec)) != 0)
			return -r;
	}
	if (ec.thread_ptr != vm_thread || ec.vm_stack == NULL || ec.vm_stack_size == 0 ||
	    ec.vm_stack_size > (SIZE_MAX >> 4))
		return 0;
	sampler_frames_last.lo = ec.vm_stack;
	sampler_frames_last.hi = ec.vm_stack + ec.vm_stack_size;
	/* The last frame is the VM's dummy: never a frame of ours. */
	if ((const VALUE *)ec.cfp < sampler_frames_last.lo ||
	    (const VALUE *)(ec.cfp + 2) > sampler_frames_last.hi ||
	    ((uintptr_t)sampler_frames_last.hi - (uintptr_t)ec.cfp) % sizeof f[0] != 0)
		return 0;
	at = ec.cfp;
	/* The frame and its callers, up to SAMPLER_CHAIN of them (at least
	 * the frame and its caller, the dummy's callee at the last). */
	nf = (int)(((const struct sampler_frames_cfp *)sampler_frames_last.hi - at));
	if (nf > SAMPLER_CHAIN)
		nf = SAMPLER_CHAIN;
	memset(f, 0, sizeof f);
	if (nwin > 0 && at >= w0 && at + nf <= w0 + nwin) {
		memcpy(f, &win[at - w0], nf * sizeof f[0]);
	} else if ((r = sampler_frames_copy(f, at, nf * sizeof f[0])) != 0) {
		return -r;
	}
	sampler_frames_last.vm_thread = vm_thread;
	sampler_frames_last.ec = th.ec;
	sampler_frames_last.cfp = (uintptr_t)at;
	sampler_frames_last.sp = f[0].sp;
	*cfp = at;
	/* A C frame's method entry: read with the frame, or else (the
	 * innermost one) after.  The values are the frame's for sure if its
	 * slot held it still when the window was read again after them (the
	 * next C call from the same caller takes the same slot and
	 * environment, but not as a rule the same receiver), and its
	 * caller's pc had not moved (the caller's pc is read after the
	 * frame, and a return and the next call may come between).  If the
	 * slot has a later frame by then (a thread running on another CPU
	 * has often moved on a few calls in the microsecond of the read),
	 * the entry read may be the frame's or, if that call had begun by
	 * then, the later one's: the job tells them apart by the receiver
	 * (sampler_frames_me_fits). */
	chain->n = nf;
	for (i = 0; i < nf; i++) {
		slot = f[i].ep + SAMPLER_FRAMES_ENV_ME;
		chain->iseq[i] = (uintptr_t)f[i].iseq;
		chain->pc[i] = (uintptr_t)f[i].pc;
		chain->ep[i] = (uintptr_t)f[i].ep;
		chain->self[i] = (uintptr_t)f[i].self;
		chain->me[i] = 0;
		chain->me_sure[i] = 1;
		if (f[i].pc == NULL && f[i].ep != NULL && nvals > 0 && slot >= v0 &&
		    slot < v0 + nvals && at >= w0 && at + i < w0 + nwin) {
			chain->me[i] = RB_SPECIAL_CONST_P(vals[slot - v0]) ? 0 : vals[slot - v0];
			chain->me_sure[i] = sampler_frames_still(win2, w0, nwin, at + i, f + i,
			    i + 1 < nf);
		} else if (i == 0) {
			chain->me[i] = sampler_frames_peek_me(at, &f[0]);
		}
	}
	return 1;
#else
	(void)vm_thread;
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
	struct sampler_frames_th *th = vm_thread;
	const struct sampler_frames_ec *ec;
	const struct sampler_frames_cfp *cfp, *end;
	const struct sampler_frames_cfp *gapf[SAMPLER_FRAMES_GAP];
	const VALUE *lo, *hi;
	int j = 0, gap = 0;

	*base = NULL;
	if (th == NULL || depth <= 0)
		goto fail;
	ec = th->ec;
	if (ec == NULL || ec->thread_ptr != (void *)th)
		goto fail;
	lo = ec->vm_stack;
	cfp = ec->cfp;
	if (lo == NULL || ec->vm_stack_size == 0 || ec->vm_stack_size > (SIZE_MAX >> 4))
		goto fail;
	hi = lo + ec->vm_stack_size;
	if ((const VALUE *)cfp < lo || (const VALUE *)cfp >= hi ||
	    ((uintptr_t)hi - (uintptr_t)cfp) % sizeof *cfp != 0)
		goto fail;
	/* The frame at the very end is the VM's dummy: rb_profile_frames
	 * stops before it, and so do we. */
	end = (const struct sampler_frames_cfp *)hi - 1;
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
	VALUE full = rb_profile_frame_full_label(frame);
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
	return rb_sprintf("%.*s%"PRIsVALUE, (int)prefix, RSTRING_PTR(label), full);
}
