/*
 * sampler-threads.c: the sampler's record of each Ruby thread (kept in
 * the thread's specific storage, listed for stop and marking), the names
 * of threads that ended, the GC marking of every frame VALUE (and own
 * iseq) the sampler holds, and what a fork does to all this.  Frames are held as raw
 * VALUEs, so they must stay marked (and pinned) until the profile is
 * built; the mark function runs inside the GC and must never allocate.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler-int.h"
#include "xmalloc.h"

static int sampler_atfork_set;
static int sampler_key_made;
/* Made once per process (keys cannot be deleted), kept across starts. */
static rb_internal_thread_specific_key_t sampler_key;
static rb_internal_thread_specific_key_t sampler_born_key;

/*
 * What a thread's slot holds once THREAD_END has billed and dropped its
 * record.  Ruby code may still run on the thread after that event: a
 * fiber scheduler's unblock hook, run as the thread wakes a fiber that
 * joined it, takes a lock and writes to a pipe, so the thread leaves and
 * takes the GVL again.  A record made for it then was never dropped (no
 * second THREAD_END), and outlived the Thread object it names: the
 * profile's end read the frames of whatever object took its slot
 * (TypeError, SIGSEGV, a lost profile; Ruby's test/fiber).  Such a
 * thread gets no record: its last moments are billed at its exit
 * (sampler_bill_exit), as the teardown after THREAD_END is.
 */
static char sampler_thread_ended_mark;
#define SAMPLER_THREAD_ENDED	((void *)&sampler_thread_ended_mark)

/* The record of THREAD, or NULL. */
struct sampler_thread *
sampler_thread_get(VALUE thread)
{
	void *p = rb_internal_thread_specific_get(thread, sampler.key);

	return p == SAMPLER_THREAD_ENDED ? NULL : p;
}

/* Whether THREAD's record was dropped at its THREAD_END. */
int
sampler_thread_ended(VALUE thread)
{
	return rb_internal_thread_specific_get(thread, sampler.key) == SAMPLER_THREAD_ENDED;
}

/* THREAD_END, on the thread: drop its record (TD) for good. */
void
sampler_thread_end(struct sampler_thread *td)
{
	VALUE thread = td->thread;

	sampler_thread_free(td);
	rb_internal_thread_specific_set(thread, sampler.key, SAMPLER_THREAD_ENDED);
}

/* Make the record of the current thread (with the GVL, on that thread). */
struct sampler_thread *
sampler_thread_create(VALUE thread)
{
	struct sampler_thread *td = xcalloc(1, sizeof *td);
	int born;

	td->thread = thread;
	td->vm_thread = sampler_frames_vm_thread(thread);
	if (pthread_getcpuclockid(pthread_self(), &td->cpu_clock) != 0)
		td->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
	td->ractor = sampler_ractor_main() ? 0 : -1;
	td->slot = -1;
	td->mn = sampler.cfg.mode == SAMPLER_CPU && (td->ractor != 0 || sampler.mn_main);
	if (td->mn)
		sampler_thread_mn_run(td, 1);
	td->prev = sampler_clock_self(td);
	born = !td->mn && sampler.cfg.mode == SAMPLER_CPU &&
	    rb_internal_thread_specific_get(thread, sampler.born_key) != NULL;
	pthread_mutex_lock(&sampler.lock);
	td->seq = ++sampler.next_seq;
	/*
	 * Past the first SAMPLER_THREAD_KEYS threads, a thread of the main
	 * Ractor takes the number a thread gave back at its end, if one
	 * did.  Each number is a key of the sample tables: a server
	 * that starts a thread per request or connection (WEBrick) made
	 * three entries a request, never let go, and the tables, the
	 * profile and the time spent in them grew with the requests served
	 * (100,000 threads: 81 MB of RSS against 14 under ruby).  Past the
	 * first thousand, such threads add none, and have no names
	 * (sampler_thread_save_name).
	 */
	if (td->ractor == 0 && sampler.nfree_keys > 0 &&
	    td->seq > SAMPLER_THREAD_KEYS)
		td->key = sampler.free_keys[--sampler.nfree_keys];
	else
		td->key = td->seq;
	td->next = sampler.threads;
	if (td->next != NULL)
		td->next->pprev = &td->next;
	td->pprev = &sampler.threads;
	sampler.threads = td;
	sampler.nthreads++;
	pthread_mutex_unlock(&sampler.lock);
	rb_internal_thread_specific_set(thread, sampler.key, td);
	if (born) {
		rb_internal_thread_specific_set(thread, sampler.born_key, NULL);
		sampler_bill_birth(td);
	}
	return td;
}

/* The current thread's record, made if needed; NULL on a thread past
 * its THREAD_END. */
struct sampler_thread *
sampler_thread_current(void)
{
	VALUE thread = rb_thread_current();
	struct sampler_thread *td = sampler_thread_get(thread);

	if (td != NULL)
		return td;
	return sampler_thread_ended(thread) ? NULL : sampler_thread_create(thread);
}

/*
 * An M:N thread's CPU clock: the time of each run on whatever native
 * thread ran it, read on that thread at the start (ON) and end of the
 * run (the GVL hook's RESUMED and SUSPENDED, on the thread itself).  What
 * such a thread spends off its Ractor's lock (a C call without the GVL)
 * is not its run: it shows as the CPU time not billed (`Unbilled`).
 */
void
sampler_thread_mn_run(struct sampler_thread *td, int on)
{
	int64_t now;

	if (sampler_read_clock(CLOCK_THREAD_CPUTIME_ID, &now) != 0)
		return;
	atomic_fetch_add_explicit(&td->mn_seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	if (on) {
		if (pthread_getcpuclockid(pthread_self(), &td->cpu_clock) != 0)
			td->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
		td->mn_base = now;
		td->mn_running = 1;
	} else if (td->mn_running) {
		td->mn_acc += now - td->mn_base;
		td->mn_running = 0;
	}
	atomic_fetch_add_explicit(&td->mn_seq, 1, memory_order_release);
}

/* Thread#name of thread ARG (called under rb_protect). */
static VALUE
sampler_thread_name_body(VALUE arg)
{
	return rb_funcall((VALUE)arg, rb_intern("name"), 0);
}

/*
 * Open the fast reading of TD's CPU clock (cpu mode, on TD's own thread,
 * from the job).  Not when the record is made: the perf event costs a
 * thread some 80 us to open and close on a virtual machine (the unmap of
 * its page interrupts every CPU that runs the process), and a reading by
 * system call about 1 us there.  So a thread reads by system call until
 * it has paid about what the opening costs (SAMPLER_FAST_CLOCK_READS
 * readings: samples and GC steps), then opens it.  A thread-per-request
 * server's threads, which take a sample or two each, never do (opened at
 * their second sample, it cost them more than it saved); a long-lived
 * thread pays the opening once.  The worker probes the kernel (a short
 * sleep) at its start, so the script does not wait for it.
 */
void
sampler_thread_open_clock(struct sampler_thread *td)
{
	int64_t now = 0;

	if (td->clock_open || sampler.cfg.mode != SAMPLER_CPU || td->mn)
		return;	/* (an M:N thread's clock is not one native thread's) */
	cpuclock_open_lazy(&td->clock);
	if (sampler_read_clock(td->cpu_clock, &now) != 0) {
		cpuclock_close(&td->clock);
		return;
	}
	td->clock_offset = now - cpuclock_read(&td->clock);
	td->clock_open = 1;
}

/* The index in sampler.names of the name saved for thread number KEY,
 * or sampler.nnames when there is none. */
size_t
sampler_thread_name_index(int key)
{
	size_t i;

	for (i = 0; i < sampler.nnames && sampler.names[i].key != key; i++)
		;
	return i;
}

/*
 * Remember TD's thread name (Thread#name) for the profile, under its
 * number; 1 if it did.  Only for the first SAMPLER_THREAD_KEYS threads:
 * a later one may have a number another had before it, which the name
 * would label too, and gives its number back however it is named (a
 * server that names each request's thread would add one a request).
 */
int
sampler_thread_save_name(struct sampler_thread *td)
{
	VALUE name;
	size_t i;
	int state = 0;

	if (td->seq > SAMPLER_THREAD_KEYS)
		return 0;
	name = rb_protect(sampler_thread_name_body, td->thread, &state);
	if (state != 0) {
		rb_set_errinfo(Qnil);
		return 0;
	}
	if (!RB_TYPE_P(name, T_STRING))
		return 0;
	pthread_mutex_lock(&sampler.lock);
	if ((i = sampler_thread_name_index(td->key)) == sampler.nnames) {
		xgrow((void **)&sampler.names, &sampler.names_cap, sampler.nnames + 1,
		    sizeof *sampler.names);
		sampler.names[i].key = td->key;
		sampler.names[i].name = NULL;
		sampler.nnames++;
	}
	free(sampler.names[i].name);
	sampler.names[i].name = xstrndup(RSTRING_PTR(name), RSTRING_LEN(name));
	pthread_mutex_unlock(&sampler.lock);
	return 1;
}

/*
 * THREAD_END of TD, a thread with no name saved: its number goes to a
 * thread made later (sampler_thread_create), without the name a build
 * may have saved while it had one (only one of the first
 * SAMPLER_THREAD_KEYS threads has its own number and can have one).  A
 * named thread keeps its number, so that its name labels no other
 * thread's samples; a thread of another Ractor keeps it too (the Ractor
 * is known by it).
 */
void
sampler_thread_give_key(struct sampler_thread *td)
{
	size_t i;

	if (td->ractor != 0)
		return;
	pthread_mutex_lock(&sampler.lock);
	if (td->seq <= SAMPLER_THREAD_KEYS &&
	    (i = sampler_thread_name_index(td->key)) < sampler.nnames) {
		free(sampler.names[i].name);
		sampler.names[i] = sampler.names[--sampler.nnames];
	}
	xgrow((void **)&sampler.free_keys, &sampler.free_keys_cap,
	    sampler.nfree_keys + 1, sizeof *sampler.free_keys);
	sampler.free_keys[sampler.nfree_keys++] = td->key;
	pthread_mutex_unlock(&sampler.lock);
}

/* Unlink and free TD (with the GVL, or its Ractor's lock on TD's own
 * thread).  The record of a thread of another Ractor stays in its
 * thread's storage when freed from elsewhere (at the end of a run): the
 * thread may be gone, its object with it. */
void
sampler_thread_free(struct sampler_thread *td)
{
	if (td->ractor == 0 || rb_thread_current() == td->thread)
		rb_internal_thread_specific_set(td->thread, sampler.key, NULL);
	sampler_ractor_release(td);
	/* (Captures are added and removed with the GVL, which this holds:
	 * no lock to see there are none, the common case.) */
	if (sampler.ncaptures > 0) {
		pthread_mutex_lock(&sampler.table_mutex);
		sampler_captures_thread_gone(td->seq);
		pthread_mutex_unlock(&sampler.table_mutex);
	}
	pthread_mutex_lock(&sampler.lock);
	*td->pprev = td->next;
	if (td->next != NULL)
		td->next->pprev = td->pprev;
	pthread_mutex_unlock(&sampler.lock);
	if (td->clock_open)
		cpuclock_close(&td->clock);
	free(td->seen);
	free(td->first);
	free(td);
}

/* Save the names of live threads. */
void
sampler_save_live_names(void)
{
	struct sampler_thread *td;

	/* A thread of another Ractor named itself when first sampled. */
	for (td = sampler.threads; td != NULL; td = td->next) {
		if (td->ractor == 0)
			sampler_thread_save_name(td);
	}
}

/* Reset every thread's baseline to now (the timer is being armed). */
void
sampler_reset_baselines(void)
{
	struct sampler_thread *td;
	VALUE current = rb_thread_current();

	for (td = sampler.threads; td != NULL; td = td->next) {
		td->prev = td->thread == current ? sampler_clock_self(td) : sampler_clock(td);
		td->suspended = 0;
		td->suspended_cpu = td->off_cpu = td->carry = 0;
		td->carry_blocked = td->carry_wait = 0;
	}
}

/* Whether OWN is the own iseq of a frame of TD's last stack. */
static int
sampler_on_stack(const struct sampler_thread *td, VALUE own)
{
	int j;

	for (j = 0; j < td->depth; j++) {
		if (td->own[j] == own)
			return 1;
	}
	return 0;
}

/*
 * Whether TD's cache entry for code of own iseq OWN (0: none) is let go
 * at this GC: code that runs once (a file's top, a class body, an eval)
 * and is not on TD's last stack has returned, and the entry alone would
 * keep it, with every body and block in it.  So has code compiled from a
 * string (an ERB template's, rendered anew at each request): the caches
 * of 1024 slots kept the renders of a few seconds' churn alive
 * (tests/integration/t0216-sampler-eval.sh).
 */
static int
sampler_seen_gone(const struct sampler_thread *td, VALUE own)
{
	return own != 0 && sampler_frames_once(own) && !sampler_on_stack(td, own);
}

/* Mark what TD's caches of frames seen hold, after letting go of the
 * entries sampler_seen_gone says are gone. */
static void
sampler_seen_mark(const struct sampler_thread *td, struct sampler_seen_cache *c)
{
	unsigned i;

	for (i = 0; i < c->n; i++) {
		struct sampler_seen *f = &c->frames[i];
		struct sampler_seen_c *sc = &c->c[i];

		if (sampler_seen_gone(td, f->own))
			memset(f, 0, sizeof *f);
		if (sc->site != NULL && sampler_seen_gone(td, sc->caller))
			memset(sc, 0, sizeof *sc);
		if (f->own != 0) {
			rb_gc_mark_locations(&f->own, &f->own + 1);
			rb_gc_mark_locations(&f->frame, &f->frame + 1);
		}
		if (sc->site != NULL) {
			rb_gc_mark_locations(&sc->caller, &sc->caller + 1);
			rb_gc_mark_locations(&sc->frame, &sc->frame + 1);
		}
	}
	rb_gc_mark_locations(c->me, c->me + c->n);
}

/*
 * Mark every frame VALUE we hold (pinning them: we keep raw VALUEs).
 * The cache of frames named early (sampler-resolved.c) and the threads'
 * caches of frames seen (sampler_tick_seen) keep an entry until another
 * takes its slot: at every GC they let go of the code that runs once and
 * has returned, as Ruby would free it (the seen caches held the top of
 * whichever file a boot's last samples saw, with every class body and
 * block in it; kept to a later GC, such code grew the boot's heap).
 */
static void
sampler_mark(void *ptr)
{
	struct sampler_thread *td;
	int i, j;

	if (!sampler.started || sampler.forked)
		return;
	pthread_mutex_lock(&sampler.lock);
	pthread_mutex_lock(&sampler.table_mutex);
	for (i = 0; i < 2; i++) {
		struct sampler_buffer *b = &sampler.buffers[i];

		if (b->nframes > 0) {
			rb_gc_mark_locations(b->frames, b->frames + b->nframes);
			rb_gc_mark_locations(b->owns, b->owns + b->nframes);
		}
	}
	if (sampler.frames.count > 0) {
		rb_gc_mark_locations((const VALUE *)sampler.frames.keys,
		    (const VALUE *)sampler.frames.keys + sampler.frames.count);
		rb_gc_mark_locations((const VALUE *)sampler.frames.owns,
		    (const VALUE *)sampler.frames.owns + sampler.frames.count);
	}
	pthread_mutex_unlock(&sampler.table_mutex);
	for (td = sampler.threads; td != NULL; td = td->next) {
		for (j = 0; j < td->depth; j++)
			sampler_resolved_keep(td->stack[j], td->own[j]);
	}
	sampler_resolved_mark();
	for (td = sampler.threads; td != NULL; td = td->next) {
		const struct sampler_first *f = td->first;

		if (td->depth > 0) {
			rb_gc_mark_locations(td->stack, td->stack + td->depth);
			rb_gc_mark_locations(td->own, td->own + td->depth);
		}
		if (f != NULL) {
			rb_gc_mark_locations(f->frames, f->frames + f->depth);
			rb_gc_mark_locations(f->owns, f->owns + f->depth);
		}
		if (td->seen != NULL)
			sampler_seen_mark(td, td->seen);
	}
	pthread_mutex_unlock(&sampler.lock);
	/* Kept alive so that no other object takes a compile site's address. */
	if (sampler.ncompile_sites > 0)
		rb_gc_mark_locations(sampler.compile_sites,
		    sampler.compile_sites + sampler.ncompile_sites);
}

/* The GC wrapper's type: it only marks, and every VALUE it marks went
 * through sampler_wb first. */
static const rb_data_type_t sampler_wrapper_type = {
	.wrap_struct_name = "rperf_sampler",
	.function = { .dmark = sampler_mark },
	.flags = RUBY_TYPED_FREE_IMMEDIATELY | RUBY_TYPED_WB_PROTECTED,
};

/* Make the locks (afresh in a forked child, where a thread that is gone
 * may hold them); the worker's waits are on CLOCK_MONOTONIC. */
void
sampler_locks_init(void)
{
	pthread_condattr_t ca;
	pthread_mutexattr_t ma;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&sampler.lock, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_mutex_init(&sampler.worker_mutex, NULL);
	pthread_mutex_init(&sampler.table_mutex, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sampler.worker_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/* Before a fork: wait until the worker is out of the tables, where it
 * allocates, so that no allocator lock is held across the fork by a
 * thread the child will not have (glibc's malloc guards itself; the
 * sanitizers' allocators of older compilers do not). */
static void
sampler_atfork_prepare(void)
{
	if (sampler.started && !sampler.forked)
		pthread_mutex_lock(&sampler.table_mutex);
}

/* After a fork, in the parent: let the worker go on. */
static void
sampler_atfork_parent(void)
{
	if (sampler.started && !sampler.forked)
		pthread_mutex_unlock(&sampler.table_mutex);
}

/* The calling thread's kernel id, once read (0 before). */
static __thread pid_t sampler_tid;

pid_t
sampler_gettid(void)
{
	if (sampler_tid == 0)
		sampler_tid = (pid_t)syscall(SYS_gettid);
	return sampler_tid;
}

/* In a forked child the timer and worker are gone and the locks may be
 * held by a thread that no longer exists: make them usable, sample nothing. */
static void
sampler_atfork_child(void)
{
	/* The child's one thread is the forking one, whose id the child
	 * inherited with its memory: read it again. */
	sampler_tid = 0;
	atomic_store(&sampler.holder_tid, 0);
	atomic_store(&sampler.note_asked, 0);
	atomic_store(&sampler.signals_held, 0);
	sampler_worker_reap(1);	/* a worker told to end is not in the child */
	if (!sampler.started)
		return;
	sampler.forked = 1;
	atomic_store(&sampler.armed, 0);
	/* A tick or signal the worker was in at the fork never ends here:
	 * its counts would keep the child's GC hook (sampler_tick_unpoke)
	 * and teardown waiting for ever (a forked child of t0105 once spun
	 * in the GC hook for 900 s). */
	atomic_store(&sampler.poking, 0);
	atomic_store(&sampler.in_tick, 0);
	sampler_ractor_atfork_child();
	sampler_locks_init();
	sampler.worker_made = 0;
	sampler.timer_made = 0;
}

/* The thread key and the fork handlers (made once per process), and the
 * GC wrapper that marks our frames. */
void
sampler_threads_init(void)
{
	if (!sampler_key_made) {
		sampler_key = rb_internal_thread_specific_key_create();
		sampler_born_key = rb_internal_thread_specific_key_create();
		sampler_key_made = 1;
	}
	sampler.key = sampler_key;
	sampler.born_key = sampler_born_key;
	if (!sampler_atfork_set) {
		pthread_atfork(sampler_atfork_prepare, sampler_atfork_parent,
		    sampler_atfork_child);
		sampler_atfork_set = 1;
	}
	sampler.wrapper = TypedData_Wrap_Struct(0, &sampler_wrapper_type, &sampler);
	rb_gc_register_address(&sampler.wrapper);
}

/* Free every thread record and saved name; drop the GC wrapper. */
void
sampler_threads_release(void)
{
	size_t i;

	while (sampler.threads != NULL)
		sampler_thread_free(sampler.threads);
	for (i = 0; i < sampler.nnames; i++)
		free(sampler.names[i].name);
	free(sampler.names);
	sampler.names = NULL;
	sampler.nnames = sampler.names_cap = 0;
	free(sampler.free_keys);
	sampler.free_keys = NULL;
	sampler.nfree_keys = sampler.free_keys_cap = 0;
	if (sampler.wrapper != Qfalse) {
		DATA_PTR(sampler.wrapper) = NULL;
		rb_gc_unregister_address(&sampler.wrapper);
		sampler.wrapper = Qfalse;
	}
}
