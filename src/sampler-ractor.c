/*
 * sampler-ractor.c: sampling the threads of Ractors other than the main
 * one.  Each Ractor has its own lock in place of the GVL, so one thread
 * of every Ractor runs at once, in parallel with the others.
 *
 * Reaching them: Ruby's postponed-job trigger flags the context of the
 * thread that calls it (from a thread with none, the main Ractor's), and
 * the job's bit is one for the whole VM, taken by whichever thread checks
 * its interrupts first.  So at each tick the worker sends a signal to
 * every thread holding a Ractor's lock (it told us so at RESUMED, taking
 * a slot); the handler, on that thread, triggers the job, which flags its
 * own context, alive by definition.  Each slot's `due` says whether its
 * thread is owed a sample.  A job run on a thread that was not due has
 * taken the bit another thread's trigger set: it sends that thread the
 * signal again, so that it asks anew (once per slot and tick).  A sample
 * missed is not time lost: each one bills the thread's clock since its
 * previous one.  The same signal asks the main Ractor's GVL holder to
 * note its frame (sampler_tick_ask); the handler tells the two apart.
 *
 * Billing is as for any thread (sampler-hooks.c), under sampler.lock
 * where the tables are shared.  Ruby fires the GC and thread begin/end
 * events only to hooks of the Ractor they happen in, so a GC another
 * Ractor runs is billed to what that Ractor's thread ran, and such a
 * thread's end is seen by the EXITED thread event instead.
 *
 * Samples of such threads carry `ractor` (the Ractor's number here: the
 * main one is 1, unlabelled, the others 2, 3, ... in the order their
 * threads were first sampled) and `ractor_name` when it has a name.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler-int.h"
#include "xmalloc.h"

#include <ruby/ractor.h>

/* Threads of other Ractors reached by the ticks at once; more wait for
 * a slot (and are billed at their next sample all the same). */
#define SAMPLER_RACTOR_SLOTS	64
/* Ractors numbered; more share the last number. */
#define SAMPLER_RACTORS		256

/* Slots taken: none in a program without Ractors or M:N threads of
 * other Ractors, where the tick and the job look no further. */
static atomic_int sampler_slots_taken;

static struct sampler_ractor_slot {
	atomic_int tid;		/* holding its lock (0: not, or free) */
	atomic_int used;	/* taken by a thread record */
	atomic_int due;		/* a tick asked it for a sample */
	atomic_int forwarded;	/* the job sent it the signal again */
} sampler_slots[SAMPLER_RACTOR_SLOTS];

/* Ractor-local storage: the main Ractor's points at sampler_main_mark,
 * another's at its entry in sampler_ractor_ids (made once per process:
 * keys cannot be deleted). */
static int sampler_key_made;
static rb_ractor_local_key_t sampler_key;
static const struct rb_ractor_local_storage_type sampler_key_type = { NULL, NULL };
static int sampler_main_mark;
static int sampler_ractor_ids[SAMPLER_RACTORS];
static char *sampler_ractor_names[SAMPLER_RACTORS];
static int sampler_next_ractor;

/* Thread SEQ runs in Ractor R. */
static struct sampler_ractor_thread {
	int seq, ractor;
} *sampler_ractor_threads;
static size_t sampler_nractor_threads, sampler_ractor_threads_cap;

/* The signal that reaches the threads, and whether its handler is ours
 * (with the signal timer, the timer's handler passes it on). */
static int sampler_ractor_sig;
static int sampler_ractor_handler_set;
static struct sigaction sampler_ractor_old;

static void
sampler_ractor_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	(void)sig;
	(void)uc;
	if (si != NULL && si->si_code == SI_TKILL && !sampler_tick_answer())
		sampler_ractor_signalled();
	errno = saved;
}

int
sampler_ractor_start(char *err, size_t errlen)
{
	struct sigaction sa;
	int i;

	if (!sampler_key_made) {
		sampler_key = rb_ractor_local_storage_ptr_newkey(&sampler_key_type);
		sampler_key_made = 1;
	}
	rb_ractor_local_storage_ptr_set(sampler_key, &sampler_main_mark);
	atomic_store(&sampler_slots_taken, 0);
	for (i = 0; i < SAMPLER_RACTOR_SLOTS; i++) {
		atomic_store(&sampler_slots[i].tid, 0);
		atomic_store(&sampler_slots[i].used, 0);
		atomic_store(&sampler_slots[i].due, 0);
		atomic_store(&sampler_slots[i].forwarded, 0);
	}
	sampler_next_ractor = 1;
	if (sampler.use_signal) {
		sampler_ractor_sig = sampler.cfg.signal;
		return 0;
	}
	sampler_ractor_sig = sampler_default_signal();
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sampler_ractor_handler;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sampler_ractor_sig, &sa, &sampler_ractor_old) != 0) {
		snprintf(err, errlen, "cannot install a handler for signal %d: %s",
		    sampler_ractor_sig, strerror(errno));
		return -1;
	}
	sampler_ractor_handler_set = 1;
	return 0;
}

void
sampler_ractor_stop(void)
{
	size_t i;

	if (sampler_ractor_handler_set) {
		sampler_ractor_quiesce(sampler_ractor_sig);
		sigaction(sampler_ractor_sig, &sampler_ractor_old, NULL);
		sampler_ractor_handler_set = 0;
	}
	for (i = 0; i < SAMPLER_RACTORS; i++) {
		free(sampler_ractor_names[i]);
		sampler_ractor_names[i] = NULL;
	}
	free(sampler_ractor_threads);
	sampler_ractor_threads = NULL;
	sampler_nractor_threads = sampler_ractor_threads_cap = 0;
}

int
sampler_ractor_main(void)
{
	/* A plain lookup: the main Ractor's is a cached field, another's a
	 * hash table read; neither locks nor allocates. */
	return !sampler_key_made || rb_ractor_local_storage_ptr(sampler_key) == &sampler_main_mark;
}

/* Ractor#name of the current Ractor, as a new C string, or NULL. */
static char *
sampler_ractor_current_name(void)
{
	VALUE ractor, name;

	ractor = rb_funcall(rb_const_get(rb_cObject, rb_intern("Ractor")),
	    rb_intern("current"), 0);
	name = rb_funcall(ractor, rb_intern("name"), 0);
	if (!RB_TYPE_P(name, T_STRING))
		return NULL;
	return xstrndup(RSTRING_PTR(name), RSTRING_LEN(name) < 200 ? RSTRING_LEN(name) : 200);
}

void
sampler_ractor_identify(struct sampler_thread *td)
{
	int *id = rb_ractor_local_storage_ptr(sampler_key);
	char *name = NULL;
	int made = 0;

	if (id == &sampler_main_mark) {
		td->ractor = 0;
		return;
	}
	if (id == NULL) {
		/* The first of this Ractor's threads sampled (only its own
		 * threads set its storage, one at a time). */
		pthread_mutex_lock(&sampler.lock);
		if (sampler_next_ractor < SAMPLER_RACTORS)
			sampler_next_ractor++;
		id = &sampler_ractor_ids[sampler_next_ractor - 1];
		*id = sampler_next_ractor;
		made = sampler_ractor_names[*id - 1] == NULL;
		pthread_mutex_unlock(&sampler.lock);
		if (made)
			name = sampler_ractor_current_name();
		rb_ractor_local_storage_ptr_set(sampler_key, id);
	}
	td->ractor = *id;
	pthread_mutex_lock(&sampler.lock);
	if (name != NULL && sampler_ractor_names[*id - 1] == NULL) {
		sampler_ractor_names[*id - 1] = name;
		name = NULL;
	}
	sampler_ractor_note_thread(td->key, td->ractor);
	pthread_mutex_unlock(&sampler.lock);
	free(name);
	sampler_thread_save_name(td);
}

void
sampler_ractor_adopt(struct sampler_thread *td)
{
	int *id = rb_ractor_local_storage_ptr(sampler_key);

	if (id == NULL || id == &sampler_main_mark)
		return;
	td->ractor = *id;
	pthread_mutex_lock(&sampler.lock);
	sampler_ractor_note_thread(td->key, td->ractor);
	pthread_mutex_unlock(&sampler.lock);
}

void
sampler_ractor_note_thread(int seq, int r)
{
	xgrow((void **)&sampler_ractor_threads, &sampler_ractor_threads_cap,
	    sampler_nractor_threads + 1, sizeof *sampler_ractor_threads);
	sampler_ractor_threads[sampler_nractor_threads].seq = seq;
	sampler_ractor_threads[sampler_nractor_threads].ractor = r;
	sampler_nractor_threads++;
}

int
sampler_ractor_of(int seq, const char **name)
{
	size_t i;
	int r = 0;

	*name = NULL;
	if (sampler_nractor_threads == 0)
		return 0;	/* the common case, without the lock */
	pthread_mutex_lock(&sampler.lock);
	for (i = 0; i < sampler_nractor_threads; i++) {
		if (sampler_ractor_threads[i].seq == seq) {
			r = sampler_ractor_threads[i].ractor;
			*name = sampler_ractor_names[r - 1];
			break;
		}
	}
	pthread_mutex_unlock(&sampler.lock);
	return r;
}

void
sampler_ractor_holding(struct sampler_thread *td, int on)
{
	int i;

	if (td->ractor == 0)
		return;
	if (td->slot < 0) {
		if (!on)
			return;
		for (i = 0; i < SAMPLER_RACTOR_SLOTS; i++) {
			int zero = 0;

			if (atomic_compare_exchange_strong(&sampler_slots[i].used, &zero, 1)) {
				atomic_fetch_add(&sampler_slots_taken, 1);
				td->slot = i;
				break;
			}
		}
		if (td->slot < 0)
			return;
	}
	if (on)
		td->tid = sampler_gettid();
	atomic_store(&sampler_slots[td->slot].tid, on ? (int)td->tid : 0);
}

void
sampler_ractor_release(struct sampler_thread *td)
{
	if (td->slot < 0)
		return;
	atomic_store(&sampler_slots[td->slot].tid, 0);
	atomic_store(&sampler_slots[td->slot].due, 0);
	atomic_store(&sampler_slots[td->slot].used, 0);
	atomic_fetch_sub(&sampler_slots_taken, 1);
	td->slot = -1;
}

/* Signals being sent now (see sampler_ractor_quiesce). */
static atomic_int sampler_sending;

void
sampler_ractor_atfork_child(void)
{
	atomic_store(&sampler_sending, 0);
}

int
sampler_ractor_kill(int tid)
{
	int r = -1;

	atomic_fetch_add(&sampler_sending, 1);
	if (atomic_load(&sampler.armed) && !atomic_load(&sampler.signals_held))
		r = (int)syscall(SYS_tgkill, (int)sampler.pid, tid, sampler_ractor_sig);
	atomic_fetch_sub(&sampler_sending, 1);
	return r == 0 ? 0 : -1;
}

/* Held, no signal is sent once those being sent are out (the count is
 * raised before the flag is read); one more system call then takes any
 * that reached this thread, on its return. */
void
sampler_hold_signals(int on)
{
	atomic_store(&sampler.signals_held, on);
	if (!on)
		return;
	while (atomic_load(&sampler_sending) != 0)
		sched_yield();
	sched_yield();
}

/*
 * Before the signal's old action comes back (maybe the default, which
 * ends the process): disarmed, no signal is sent any more once those
 * being sent are out; then ignoring the signal for a moment discards any
 * still pending on a thread.
 */
void
sampler_ractor_quiesce(int sig)
{
	struct sigaction ign;

	while (atomic_load(&sampler_sending) != 0)
		sched_yield();
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(sig, &ign, NULL);
}

void
sampler_ractor_tick(void)
{
	int i, tid;

	if (atomic_load_explicit(&sampler_slots_taken, memory_order_relaxed) == 0)
		return;
	for (i = 0; i < SAMPLER_RACTOR_SLOTS; i++) {
		if (!atomic_load_explicit(&sampler_slots[i].used, memory_order_relaxed) ||
		    (tid = atomic_load(&sampler_slots[i].tid)) == 0)
			continue;
		atomic_store(&sampler_slots[i].due, 1);
		atomic_store(&sampler_slots[i].forwarded, 0);
		sampler_ractor_kill(tid);
	}
}

void
sampler_ractor_signalled(void)
{
	if (atomic_load(&sampler.armed) && !sampler.forked)
		rb_postponed_job_trigger(sampler.job);
}

int
sampler_ractor_due(struct sampler_thread *td)
{
	if (td->slot < 0)
		return 1;	/* no slot: sampled when the job comes by */
	return atomic_exchange(&sampler_slots[td->slot].due, 0) != 0;
}

void
sampler_ractor_forward(struct sampler_thread *td)
{
	int i, tid, zero;

	if (atomic_load_explicit(&sampler_slots_taken, memory_order_relaxed) == 0)
		return;
	for (i = 0; i < SAMPLER_RACTOR_SLOTS; i++) {
		if (i == td->slot || !atomic_load_explicit(&sampler_slots[i].due,
		    memory_order_relaxed))
			continue;
		zero = 0;
		if ((tid = atomic_load(&sampler_slots[i].tid)) != 0 &&
		    atomic_compare_exchange_strong(&sampler_slots[i].forwarded, &zero, 1))
			sampler_ractor_kill(tid);
	}
}
