/*
 * sampler-alloc.c: allocation samples (-m alloc, --alloc).  Every
 * allocation counts down to a geometric random distance (alloc.h); at
 * zero, the allocating thread's stack and the object's class are taken,
 * the object goes into the table of live sampled objects and the alloc
 * job is asked for.  Every free looks the object up in that table and,
 * when it is there, takes it out and off its site's in-use counts.  The
 * job, at the next safepoint, folds each new sample into its site
 * (stack, thread, label set, class) and measures the object with
 * rb_obj_memsize_of, by then initialised; an object freed before that is
 * measured when it is freed.
 *
 * Where allocations and frees are seen: with Ruby 3.4, in rperf's own
 * definitions of libruby's allocation and free functions, which libruby's
 * calls reach through its PLT (see SAMPLER_ALLOC_INTERPOSE below);
 * elsewhere, or when that is found not to work, in hooks on the internal
 * NEWOBJ and FREEOBJ events, which cost far more (Ruby dispatches them for
 * every object).  Either way the counting runs in the middle of Ruby's
 * allocation and of the GC's sweep: it never calls Ruby, never raises,
 * never makes a Ruby object, never starts a GC.  It writes into buffers
 * and a table that the job keeps with headroom; only when that runs out
 * (thousands of samples with no safepoint between, as in one long C call)
 * does it grow them, with plain malloc, which Ruby allows there (newobj_of
 * in gc.c disables GC around the NEWOBJ hook so that a hook may malloc).
 *
 * Sampled objects are never marked: marking would keep them alive and
 * "in use" would mean nothing.  A compacting GC moves them, so the GC
 * wrapper's dcompact function rekeys the table with rb_gc_location (it
 * runs after the moves, while the old slots still forward; dead objects
 * not yet swept keep their address until they are freed).  Classes and
 * frames are marked and pinned, as the time samples' frames are (so an
 * anonymous class that allocated a sampled object outlives its use).
 * Ractors: only the main Ractor's allocations are sampled (an
 * allocation of another Ractor that the countdown lands on is passed
 * over, so the main one's are still sampled at the set rate).  Once
 * another Ractor has run, its threads' sweeps may free objects while the
 * main thread samples, so the table is then changed under sampler.lock
 * (the main thread takes it always: its sampling is the rare path; the
 * free path only once sampler.ractors_seen is set, which a thread of
 * another Ractor does before its first Ruby code; sweeps are serialised
 * by Ruby's own VM lock then).  The write barriers of the fold are made
 * outside it: they may wait for the VM lock, which a sweep holds.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>

#include <ruby/version.h>

#include "alloc.h"
#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* Exported by libruby (ObjectSpace.memsize_of is built on it). */
size_t rb_obj_memsize_of(VALUE obj);
size_t rb_gc_obj_slot_size(VALUE obj);

/* The raw-argument hooks as rb_add_event_hook2 takes them. */
#define SAMPLER_ALLOC_HOOK(f) ((rb_event_hook_func_t)(void (*)(void))(f))

/* Interpose libruby's allocation functions (see below): Ruby 3.4 only,
 * whose gc.c is known to allocate through them alone. */
#if RUBY_API_VERSION_MAJOR == 3 && RUBY_API_VERSION_MINOR == 4
#define SAMPLER_ALLOC_INTERPOSE 1
#else
#define SAMPLER_ALLOC_INTERPOSE 0
#endif

/* A live-table entry whose sample is still pending: its site field is
 * the pending index. */
#define SAMPLER_ALLOC_PENDING	1u

/* The headroom the job leaves: samples and frames before a hook would
 * have to grow the buffers. */
#define SAMPLER_ALLOC_PENDING_ROOM	256
#define SAMPLER_ALLOC_FRAMES_ROOM	(16 * (SAMPLER_MAX_DEPTH + 1))
#define SAMPLER_ALLOC_LIVE_ROOM		1024

/* A sampled allocation not folded yet. */
struct sampler_alloc_pending {
	VALUE obj;		/* 0 once freed */
	VALUE klass;		/* its class at allocation, or 0 (hidden) */
	int type;		/* its T_ type */
	int thread_seq;
	int label_set;
	size_t frame_off;
	int depth;
	int64_t size;		/* measured at its FREEOBJ, if freed */
	int64_t slot;		/* its slot's size (see sampler_alloc_unseen_frees) */
};

/* The counts of one allocation site (raw samples and bytes, scaled at
 * build). */
struct sampler_alloc_site {
	int64_t alloc_n, alloc_bytes;
	int64_t inuse_n, inuse_bytes;
	int64_t sent_n, sent_bytes;	/* allocations handed out as intervals */
};

/* A class that sampled objects had: the site key's "state" is its index. */
struct sampler_alloc_class {
	VALUE klass;
	int type;		/* for hidden objects (klass 0) */
};

static struct {
	int on;
	double rate;
	struct alloc_rng rng;
	int64_t countdown;
	rb_postponed_job_handle_t job;
	VALUE wrapper;
	int hooks;
	int interposed;		/* counted by the interposed functions */

	struct sampler_alloc_pending *pending;
	size_t npending, pending_cap;
	VALUE *frames, *owns;
	int *lines;
	size_t nframes, frames_cap;

	struct alloc_live live;
	struct agg_stacks stacks;		/* the sites' keys */
	struct sampler_alloc_site *sites;	/* by stack entry */
	size_t sites_cap;
	struct sampler_alloc_class *classes;
	size_t nclasses, classes_cap;

	uint64_t samples, grown_in_hook, moved;
} sa;

/* Make sure the pending buffers hold NSAMPLES more samples and NFRAMES
 * more frames. */
static void
sampler_alloc_reserve(size_t nsamples, size_t nframes)
{
	if (sa.npending + nsamples > sa.pending_cap)
		xgrow((void **)&sa.pending, &sa.pending_cap, sa.npending + nsamples,
		    sizeof *sa.pending);
	if (sa.nframes + nframes > sa.frames_cap) {
		size_t cap = sa.frames_cap;

		xgrow((void **)&sa.frames, &cap, sa.nframes + nframes, sizeof *sa.frames);
		sa.owns = xrealloc(sa.owns, cap * sizeof *sa.owns);
		sa.lines = xrealloc(sa.lines, cap * sizeof *sa.lines);
		sa.frames_cap = cap;
	}
}

/* The size of OBJ, freed now (in the sweep): rb_obj_memsize_of where it
 * reads nothing but the object itself, else its slot. */
static int64_t
sampler_alloc_size_at_free(VALUE obj)
{
	switch (RB_BUILTIN_TYPE(obj)) {
	case T_OBJECT:
	case T_STRING:
	case T_ARRAY:
	case T_HASH:
	case T_FLOAT:
	case T_BIGNUM:
	case T_STRUCT:
	case T_RATIONAL:
	case T_COMPLEX:
		return (int64_t)rb_obj_memsize_of(obj);
	default:
		return (int64_t)rb_gc_obj_slot_size(obj);
	}
}

/* OBJ, a sampled object, is freed: out of the table and off its site's
 * in-use counts (measured now, with MEASURE, if its sample is still
 * pending). */
static void
sampler_alloc_drop(VALUE obj, int measure)
{
	struct alloc_live_entry e;

	if (!alloc_live_remove(&sa.live, (uintptr_t)obj, &e))
		return;
	if (e.flags & SAMPLER_ALLOC_PENDING) {
		sa.pending[e.site].obj = 0;
		sa.pending[e.site].size = measure ? sampler_alloc_size_at_free(obj) : 0;
	} else {
		sa.sites[e.site].inuse_n--;
		sa.sites[e.site].inuse_bytes -= e.size;
	}
}

/* OBJ is freed (still whole). */
static void
sampler_alloc_forget(VALUE obj)
{
	sampler_alloc_drop(obj, 1);
}

/* OBJ is freed: a sampled one leaves the table (see the header). */
static inline void
sampler_alloc_free_path(VALUE obj)
{
	if (!atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed)) {
		if (alloc_live_may_have(&sa.live, (uintptr_t)obj))
			sampler_alloc_forget(obj);
		return;
	}
	pthread_mutex_lock(&sampler.lock);
	if (alloc_live_may_have(&sa.live, (uintptr_t)obj))
		sampler_alloc_forget(obj);
	pthread_mutex_unlock(&sampler.lock);
}

/* FREEOBJ (raw-argument hook, in the sweep): a sampled object is gone?
 * One probe of the table per freed object. */
static void
sampler_alloc_freeobj(VALUE data, const rb_trace_arg_t *arg)
{
	VALUE obj;

	if (sa.live.count == 0 || sampler.forked)
		return;
	obj = rb_tracearg_object((rb_trace_arg_t *)arg);
	sampler_alloc_free_path(obj);
}

/* The countdown reached zero at OBJ, just allocated (its class and
 * type set, its body not yet filled in): take a sample. */
static void sampler_alloc_sample_locked(VALUE obj);

static void
sampler_alloc_sample(VALUE obj)
{
	if (!sa.on) {
		sa.countdown = INT64_MAX;	/* not sampling: the slow path never */
		return;
	}
	/* A hit on another Ractor's allocation is dropped with a new
	 * distance drawn: each of the main one's is still sampled with the
	 * same chance, so its scaled totals stay unbiased.  (The countdown
	 * and the generator are then shared without a lock: a lost
	 * decrement is harmless.) */
	if (atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed) &&
	    !sampler_ractor_main()) {
		sa.countdown = alloc_next_distance(&sa.rng, sa.rate);
		return;
	}
	sa.countdown = alloc_next_distance(&sa.rng, sa.rate);
	/* rperf's own objects (a frame's name being made) are not the
	 * program's; sampled, they would also add samples for the naming to
	 * name, without end at --alloc-rate 1. */
	if (!atomic_load(&sampler.armed) || atomic_load(&sampler.building) ||
	    sampler.forked || sampler.quiet_allocs || RB_SPECIAL_CONST_P(obj))
		return;
	pthread_mutex_lock(&sampler.lock);
	sampler_alloc_sample_locked(obj);
	pthread_mutex_unlock(&sampler.lock);
	rb_postponed_job_trigger(sa.job);
}

/* The body of sampler_alloc_sample, under sampler.lock. */
static void
sampler_alloc_sample_locked(VALUE obj)
{
	struct sampler_alloc_pending *p;
	struct sampler_thread *td;
	/* Where the frames are: the self-time sampler's, not needed here. */
	const void *cfp_base, *cfps[SAMPLER_MAX_DEPTH];
	VALUE root = Qundef;
	int depth;

	if (sa.npending == sa.pending_cap ||
	    sa.nframes + SAMPLER_MAX_DEPTH + 1 > sa.frames_cap) {
		sampler_alloc_reserve(sa.pending_cap, SAMPLER_MAX_DEPTH + 1);
		sa.grown_in_hook++;
	}
	if (!alloc_live_room(&sa.live, 1)) {
		alloc_live_grow(&sa.live);
		sa.grown_in_hook++;
	}
	td = sampler_thread_get(rb_thread_current());
	depth = rb_profile_frames(0, SAMPLER_MAX_DEPTH, sa.frames + sa.nframes,
	    sa.lines + sa.nframes);
	if (depth < 0)
		depth = 0;
	sampler_frames_own(td != NULL ? td->vm_thread : NULL, sa.frames + sa.nframes, depth,
	    SAMPLER_MAX_DEPTH, sa.owns + sa.nframes, &cfp_base, cfps);
	if (!sampler.cfg.lines)
		memset(sa.lines + sa.nframes, 0, depth * sizeof *sa.lines);
	/* The pseudo-frames, as the time samples get them. */
	if (sampler.booting)
		root = SAMPLER_FRAME_BOOT;
	else if (depth == 0)
		root = SAMPLER_FRAME_NONE;
	if (root != Qundef) {
		if (depth == SAMPLER_MAX_DEPTH)
			depth--;
		sa.frames[sa.nframes + depth] = root;
		sa.owns[sa.nframes + depth] = 0;
		sa.lines[sa.nframes + depth] = 0;
		depth++;
	}
	p = &sa.pending[sa.npending];
	p->obj = obj;
	p->klass = RBASIC(obj)->klass;
	p->type = RB_BUILTIN_TYPE(obj);
	p->thread_seq = td != NULL ? td->key : 0;
	p->label_set = td != NULL ? td->label_set : 0;
	p->frame_off = sa.nframes;
	p->depth = depth;
	p->size = 0;
	p->slot = (int64_t)rb_gc_obj_slot_size(obj);
	/* Cannot be there (its free took it out), but if it were, it leaves
	 * as a freed object would, unmeasured: this slot is the new object's. */
	sampler_alloc_drop(obj, 0);
	alloc_live_insert(&sa.live, (uintptr_t)obj, (uint32_t)sa.npending,
	    SAMPLER_ALLOC_PENDING, 0);
	sa.npending++;
	sa.nframes += depth;
	sa.samples++;
}

/* NEWOBJ (raw-argument hook), where the allocation functions are not
 * interposed: count down; at zero, take a sample. */
static void
sampler_alloc_newobj(VALUE data, const rb_trace_arg_t *arg)
{
	if (--sa.countdown > 0)
		return;
	sampler_alloc_sample(rb_tracearg_object((rb_trace_arg_t *)arg));
}

#if SAMPLER_ALLOC_INTERPOSE
/*
 * Ruby's NEWOBJ and FREEOBJ events are dispatched for every object,
 * whatever the hook does with them: on an allocation-heavy program that
 * dispatch alone (the VM lock, GC disabled and enabled, the hook list)
 * costs more than half the run.  So where Ruby 3.4's layout is known,
 * rperf defines the functions libruby allocates and frees objects with
 * itself, exported from the executable, so that libruby's calls through
 * its PLT reach them; each calls libruby's own (found with RTLD_NEXT)
 * and counts down, or takes the freed object out of the table: a call
 * and a decrement per object.  Every object is made by newobj_of in
 * gc.c, which only these exported functions call (rb_data_object_zalloc
 * calls rb_data_object_wrap through the PLT too), and freed in the sweep
 * through rb_gc_obj_free.  sampler_alloc_start checks that an allocation
 * does reach rperf, and uses the events if it does not (a libruby built
 * with -fno-semantic-interposition, for one).
 */
#undef rb_data_object_wrap
VALUE rb_wb_protected_newobj_of(void *ec, VALUE klass, VALUE flags, size_t size);
VALUE rb_wb_unprotected_newobj_of(VALUE klass, VALUE flags, size_t size);
bool rb_gc_obj_free(void *objspace, VALUE obj);

static struct {
	VALUE (*wb_protected)(void *, VALUE, VALUE, size_t);
	VALUE (*wb_unprotected)(VALUE, VALUE, size_t);
	VALUE (*data_wrap)(VALUE, void *, RUBY_DATA_FUNC, RUBY_DATA_FUNC);
	VALUE (*typed_wrap)(VALUE, void *, const rb_data_type_t *);
	VALUE (*typed_zalloc)(VALUE, size_t, const rb_data_type_t *);
	bool (*obj_free)(void *, VALUE);
} sampler_alloc_real;

/* Find libruby's own functions, before anything allocates. */
__attribute__((constructor)) static void
sampler_alloc_resolve(void)
{
	struct { const char *name; void **fn; } t[] = {
		{ "rb_wb_protected_newobj_of", (void **)&sampler_alloc_real.wb_protected },
		{ "rb_wb_unprotected_newobj_of", (void **)&sampler_alloc_real.wb_unprotected },
		{ "rb_data_object_wrap", (void **)&sampler_alloc_real.data_wrap },
		{ "rb_data_typed_object_wrap", (void **)&sampler_alloc_real.typed_wrap },
		{ "rb_data_typed_object_zalloc", (void **)&sampler_alloc_real.typed_zalloc },
		{ "rb_gc_obj_free", (void **)&sampler_alloc_real.obj_free },
	};
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		*t[i].fn = dlsym(RTLD_NEXT, t[i].name);
		if (*t[i].fn == NULL) {
			/* Cannot be with Ruby 3.4's libruby: nothing to call. */
			fprintf(stderr, "rperf: libruby has no %s\n", t[i].name);
			abort();
		}
	}
}

/* After each allocation: count down (the checks of the fast path), unless
 * the events count instead (RPERF_ALLOC_HOOKS). */
#define SAMPLER_ALLOC_COUNT(obj) do { \
	if (sa.interposed && --sa.countdown <= 0) \
		sampler_alloc_sample(obj); \
} while (0)

/*
 * Each function below is on the path of every object a program makes or
 * frees, -m cpu without --alloc included: there it only passes the call
 * on, tested first so that it compiles to a test and a jump (the checks
 * after the call, and the registers saved for them, cost binary_trees
 * some 1% of its instructions).
 */
#define SAMPLER_ALLOC_PASS(call) do { \
	if (__builtin_expect(!sa.interposed, 1)) \
		return call; \
} while (0)

VALUE
rb_wb_protected_newobj_of(void *ec, VALUE klass, VALUE flags, size_t size)
{
	VALUE obj;

	SAMPLER_ALLOC_PASS(sampler_alloc_real.wb_protected(ec, klass, flags, size));
	obj = sampler_alloc_real.wb_protected(ec, klass, flags, size);
	SAMPLER_ALLOC_COUNT(obj);
	return obj;
}

VALUE
rb_wb_unprotected_newobj_of(VALUE klass, VALUE flags, size_t size)
{
	VALUE obj;

	SAMPLER_ALLOC_PASS(sampler_alloc_real.wb_unprotected(klass, flags, size));
	obj = sampler_alloc_real.wb_unprotected(klass, flags, size);
	SAMPLER_ALLOC_COUNT(obj);
	return obj;
}

VALUE
rb_data_object_wrap(VALUE klass, void *datap, RUBY_DATA_FUNC dmark, RUBY_DATA_FUNC dfree)
{
	VALUE obj;

	SAMPLER_ALLOC_PASS(sampler_alloc_real.data_wrap(klass, datap, dmark, dfree));
	obj = sampler_alloc_real.data_wrap(klass, datap, dmark, dfree);
	SAMPLER_ALLOC_COUNT(obj);
	return obj;
}

VALUE
rb_data_typed_object_wrap(VALUE klass, void *datap, const rb_data_type_t *type)
{
	VALUE obj;

	SAMPLER_ALLOC_PASS(sampler_alloc_real.typed_wrap(klass, datap, type));
	obj = sampler_alloc_real.typed_wrap(klass, datap, type);
	SAMPLER_ALLOC_COUNT(obj);
	return obj;
}

VALUE
rb_data_typed_object_zalloc(VALUE klass, size_t size, const rb_data_type_t *type)
{
	VALUE obj;

	SAMPLER_ALLOC_PASS(sampler_alloc_real.typed_zalloc(klass, size, type));
	obj = sampler_alloc_real.typed_zalloc(klass, size, type);
	SAMPLER_ALLOC_COUNT(obj);
	return obj;
}

/* A sampled object being freed leaves the table; then the free (off the
 * fast path, so that both paths are a jump). */
static __attribute__((noinline)) bool
sampler_alloc_freeing(void *objspace, VALUE obj)
{
	if (!sampler.forked && sa.live.count != 0)
		sampler_alloc_free_path(obj);
	return sampler_alloc_real.obj_free(objspace, obj);
}

/* The sweep frees OBJ (still whole). */
bool
rb_gc_obj_free(void *objspace, VALUE obj)
{
	SAMPLER_ALLOC_PASS(sampler_alloc_real.obj_free(objspace, obj));
	return sampler_alloc_freeing(objspace, obj);
}

/* Whether an allocation reaches rperf's functions: it counts down from
 * a count that cannot reach zero (sampling is still off). */
static int
sampler_alloc_interposed(void)
{
	VALUE probe;
	int reached;

	sa.countdown = INT64_MAX;
	sa.interposed = 1;
	probe = rb_ary_new();
	RB_GC_GUARD(probe);
	reached = sa.countdown != INT64_MAX;
	sa.interposed = 0;
	return reached;
}
#else
static int
sampler_alloc_interposed(void)
{
	return 0;
}
#endif

/* The index of class KLASS (TYPE for a hidden object), added when new. */
static int
sampler_alloc_class(VALUE klass, int type)
{
	size_t i;

	if (klass == 0 || type == T_IMEMO || type == T_ICLASS || type == T_NODE)
		klass = 0;
	for (i = 0; i < sa.nclasses; i++) {
		if (sa.classes[i].klass == klass && (klass != 0 || sa.classes[i].type == type))
			return (int)i;
	}
	xgrow((void **)&sa.classes, &sa.classes_cap, sa.nclasses + 1, sizeof *sa.classes);
	sa.classes[sa.nclasses].klass = klass;
	sa.classes[sa.nclasses].type = type;
	return (int)sa.nclasses++;
}

/*
 * Whether a sampled object may have been freed without this file seeing
 * it: with the FREEOBJ hook (Ruby 3.3, or no interposition), once another
 * Ractor has run.  Ruby fires FREEOBJ only to the hooks of the Ractor
 * whose thread sweeps, and the hook is the main Ractor's: an object
 * another Ractor's sweep frees stays in the table, and its slot may hold
 * some other Ractor's object, half made, by the job.  (A CI run aborted
 * so: rb_obj_memsize_of on a T_DATA slot with no type yet.)  The job then
 * bills each new sample its slot's size, noted when it was sampled, and
 * reads nothing of the object.
 */
static int
sampler_alloc_unseen_frees(void)
{
	return !sa.interposed && atomic_load_explicit(&sampler.ractors_seen, memory_order_relaxed);
}

/* Fold every pending sample into its site; measure the live ones.
 * With the GVL, outside the hooks. */
static void
sampler_alloc_fold(void)
{
	uint32_t ids[SAMPLER_MAX_DEPTH];
	size_t i;
	int d, unseen = sampler_alloc_unseen_frees();

	/* Into the time sampler's frame table, which its (write-barrier
	 * protected) wrapper marks: through sampler_wb first, before the
	 * lock (only this thread adds pending samples).  A frame of code
	 * compiled from a string is named now instead (sampler-resolved.c),
	 * so that the table does not keep that code alive; naming allocates,
	 * so a sample may be added, and the arrays moved, meanwhile: each
	 * is read again by index after. */
	for (i = 0; i < sa.npending; i++) {
		for (d = 0; d < sa.pending[i].depth; d++) {
			size_t at = sa.pending[i].frame_off + d;
			VALUE id = sampler_resolve_frame(sa.frames[at], sa.owns[at]);

			if (id != 0) {
				sa.frames[at] = id;
				sa.owns[at] = 0;
			} else {
				sampler_wb(sa.frames[at]);
				sampler_wb(sa.owns[at]);
			}
		}
	}
	pthread_mutex_lock(&sampler.lock);
	for (i = 0; i < sa.npending; i++) {
		struct sampler_alloc_pending *p = &sa.pending[i];
		struct sampler_alloc_site *s;
		struct alloc_live_entry *e;
		uint32_t k;

		pthread_mutex_lock(&sampler.table_mutex);
		for (d = 0; d < p->depth; d++)
			ids[d] = agg_frames_intern(&sampler.frames, sa.frames[p->frame_off + d],
			    sa.owns[p->frame_off + d], sa.lines[p->frame_off + d]);
		pthread_mutex_unlock(&sampler.table_mutex);
		k = agg_stacks_intern(&sa.stacks, ids, (uint32_t)p->depth, p->thread_seq,
		    p->label_set, sampler_alloc_class(p->klass, p->type));
		if (sa.stacks.count > sa.sites_cap) {
			size_t old = sa.sites_cap;

			xgrow((void **)&sa.sites, &sa.sites_cap, sa.stacks.count, sizeof *sa.sites);
			memset(sa.sites + old, 0, (sa.sites_cap - old) * sizeof *sa.sites);
		}
		s = &sa.sites[k];
		s->alloc_n++;
		e = p->obj != 0 ? alloc_live_find(&sa.live, (uintptr_t)p->obj) : NULL;
		if (e != NULL && (e->flags & SAMPLER_ALLOC_PENDING) && e->site == i) {
			e->size = unseen ? p->slot : (int64_t)rb_obj_memsize_of(p->obj);
			e->site = k;
			e->flags = 0;
			s->alloc_bytes += e->size;
			s->inuse_n++;
			s->inuse_bytes += e->size;
		} else {
			s->alloc_bytes += p->size;
		}
	}
	sa.npending = 0;
	sa.nframes = 0;
	/* Headroom for the hooks until the next job. */
	sampler_alloc_reserve(SAMPLER_ALLOC_PENDING_ROOM, SAMPLER_ALLOC_FRAMES_ROOM);
	while (alloc_live_crowded(&sa.live) || !alloc_live_room(&sa.live, SAMPLER_ALLOC_LIVE_ROOM))
		alloc_live_grow(&sa.live);
	pthread_mutex_unlock(&sampler.lock);
}

/* The alloc job (with the GVL, at a safepoint).  Ruby runs a job on the
 * first thread of any Ractor to check its interrupts: on another
 * Ractor's, it leaves the samples for the main one's next job (the
 * time sampler's calls sampler_alloc_pending too). */
static void
sampler_alloc_job(void *arg)
{
	if (!sa.on || sampler.forked || atomic_load(&sampler.building) ||
	    !sampler_ractor_main())
		return;
	sampler_alloc_fold();
}

void
sampler_alloc_pending(void)
{
	if (sa.on && sa.npending > 0 && !sampler.forked && !atomic_load(&sampler.building))
		sampler_alloc_fold();
}

/* Mark (and pin) the classes and the pending frames; never the objects. */
static void
sampler_alloc_mark(void *ptr)
{
	size_t i;

	if (!sa.on)
		return;
	for (i = 0; i < sa.nclasses; i++) {
		if (sa.classes[i].klass != 0)
			rb_gc_mark(sa.classes[i].klass);
	}
	for (i = 0; i < sa.npending; i++) {
		if (sa.pending[i].klass != 0 && sa.pending[i].type != T_IMEMO &&
		    sa.pending[i].type != T_ICLASS && sa.pending[i].type != T_NODE)
			rb_gc_mark(sa.pending[i].klass);
	}
	if (sa.nframes > 0) {
		rb_gc_mark_locations(sa.frames, sa.frames + sa.nframes);
		rb_gc_mark_locations(sa.owns, sa.owns + sa.nframes);
	}
}

/* Where the compacting GC moved the object at K. */
static uintptr_t
sampler_alloc_location(uintptr_t k, void *arg)
{
	return (uintptr_t)rb_gc_location((VALUE)k);
}

/* After a compaction: follow the sampled objects that moved. */
static void
sampler_alloc_compact(void *ptr)
{
	size_t i;

	if (!sa.on)
		return;
	sa.moved += alloc_live_rekey(&sa.live, sampler_alloc_location, NULL);
	for (i = 0; i < sa.npending; i++) {
		if (sa.pending[i].obj != 0)
			sa.pending[i].obj = rb_gc_location(sa.pending[i].obj);
	}
}

static const rb_data_type_t sampler_alloc_type = {
	.wrap_struct_name = "rperf_alloc",
	.function = { .dmark = sampler_alloc_mark, .dcompact = sampler_alloc_compact },
	.flags = RUBY_TYPED_FREE_IMMEDIATELY,
};

/* Start sampling allocations, one in RATE on average (with the GVL). */
int
sampler_alloc_start(char *err, size_t errlen)
{
	struct timespec ts;

	memset(&sa, 0, sizeof sa);
	if (sampler.cfg.alloc_rate <= 0)
		return 0;
	sa.rate = sampler.cfg.alloc_rate;
	/* Before the countdown is drawn: this allocation must not count. */
	sa.interposed = getenv("RPERF_ALLOC_HOOKS") == NULL && sampler_alloc_interposed();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	alloc_rng_seed(&sa.rng, (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
	    ((uint64_t)getpid() << 16));
	sa.job = rb_postponed_job_preregister(0, sampler_alloc_job, NULL);
	if (sa.job == POSTPONED_JOB_HANDLE_INVALID) {
		snprintf(err, errlen, "cannot register the allocation job: Ruby's job table is full");
		return -1;
	}
	sampler_alloc_reserve(SAMPLER_ALLOC_PENDING_ROOM, SAMPLER_ALLOC_FRAMES_ROOM);
	alloc_live_init(&sa.live, 4 * SAMPLER_ALLOC_LIVE_ROOM);
	sa.wrapper = TypedData_Wrap_Struct(0, &sampler_alloc_type, &sa);
	rb_gc_register_address(&sa.wrapper);
	/* Drawn last: the allocations above ran the countdown while off. */
	sa.countdown = alloc_next_distance(&sa.rng, sa.rate);
	sa.on = 1;
	if (sa.interposed)
		return 0;
	rb_add_event_hook2(SAMPLER_ALLOC_HOOK(sampler_alloc_newobj),
	    RUBY_INTERNAL_EVENT_NEWOBJ, Qnil, RUBY_EVENT_HOOK_FLAG_RAW_ARG);
	rb_add_event_hook2(SAMPLER_ALLOC_HOOK(sampler_alloc_freeobj),
	    RUBY_INTERNAL_EVENT_FREEOBJ, Qnil, RUBY_EVENT_HOOK_FLAG_RAW_ARG);
	sa.hooks = 1;
	return 0;
}

/* Remove the hooks: nothing is sampled or freed from here on. */
void
sampler_alloc_hooks_remove(void)
{
	sa.interposed = 0;	/* the interposed functions let frees pass */
	if (!sa.hooks)
		return;
	rb_remove_event_hook(SAMPLER_ALLOC_HOOK(sampler_alloc_newobj));
	rb_remove_event_hook(SAMPLER_ALLOC_HOOK(sampler_alloc_freeobj));
	sa.hooks = 0;
}

/* A full GC before a profile (the hooks still in, sampling off): the
 * in-use values are then what was reachable, as a heap profile's are
 * as of the last GC. */
void
sampler_alloc_settle(void)
{
	if (!sa.on || sampler.forked)
		return;
	rb_gc();
	/* Measured now, while frees are still seen: a pending object freed
	 * after the hooks are gone would be measured in a reused slot. */
	sampler_alloc_fold();
}

/* Fold what is pending, for a profile (with the GVL). */
void
sampler_alloc_collect(void)
{
	if (sa.on && !sampler.forked)
		sampler_alloc_fold();
}

/* Free everything (the hooks removed first); with DROP, a forked child's
 * copy of its parent's tables, forget the tables instead (see
 * sampler_teardown). */
void
sampler_alloc_release(int drop)
{
	sampler_alloc_hooks_remove();
	if (sa.wrapper != 0 && sa.wrapper != Qfalse) {
		DATA_PTR(sa.wrapper) = NULL;
		rb_gc_unregister_address(&sa.wrapper);
	}
	if (drop) {
		memset(&sa, 0, sizeof sa);
		return;
	}
	free(sa.pending);
	free(sa.frames);
	free(sa.owns);
	free(sa.lines);
	free(sa.sites);
	free(sa.classes);
	alloc_live_release(&sa.live);
	agg_stacks_release(&sa.stacks);
	memset(&sa, 0, sizeof sa);
}

/* Whether allocations are sampled, and at which rate. */
double
sampler_alloc_rate(void)
{
	return sa.on ? sa.rate : 0;
}

/* The number of sites. */
size_t
sampler_alloc_nsites(void)
{
	return sa.on ? sa.stacks.count : 0;
}

/* Site I: its key (frame ids into sampler.frames), its four values
 * scaled (alloc_objects, alloc_space, inuse_objects, inuse_space), and
 * its class (0 and the T_ type for a hidden object).  With DELTA, the
 * allocations are those since the last interval, which then count as
 * handed out (what is in use is always now's). */
const struct agg_stack *
sampler_alloc_site(size_t i, int delta, const uint32_t **ids, int64_t values[4],
    VALUE *klass, int *type)
{
	const struct agg_stack *e = &sa.stacks.entries[i];
	struct sampler_alloc_site *s = &sa.sites[i];
	int64_t n = s->alloc_n, bytes = s->alloc_bytes;
	struct alloc_scaled a, u = alloc_scale(sa.rate, s->inuse_bytes);

	if (delta) {
		n -= s->sent_n;
		bytes -= s->sent_bytes;
		s->sent_n = s->alloc_n;
		s->sent_bytes = s->alloc_bytes;
	}
	a = alloc_scale(sa.rate, bytes);
	*ids = sa.stacks.ids + e->ids_off;
	values[0] = n * alloc_scale(sa.rate, 0).objects;
	values[1] = a.bytes;
	values[2] = s->inuse_n * alloc_scale(sa.rate, 0).objects;
	values[3] = u.bytes;
	*klass = sa.classes[e->state].klass;
	*type = sa.classes[e->state].type;
	return e;
}

int
sampler_alloc_on(void)
{
	return sampler_running() && sa.on;
}

/* The counters of the comments: samples, buffers grown in a hook, moves. */
void
sampler_alloc_counts(uint64_t *samples, uint64_t *grown, uint64_t *moved)
{
	*samples = sa.samples;
	*grown = sa.grown_in_hook;
	*moved = sa.moved;
}
