/*
 * sampler-resolved.c: frames of code that runs once (compiled at run
 * time, a file's top, a class body), named early so that the profile does
 * not keep that code alive.
 *
 * A frame is a VALUE (an iseq or a method entry), marked for as long as
 * a buffer or the frame table holds it, and named only when a profile
 * is built.  For a method's code that costs nothing: the code lives as
 * long as the program.  Code compiled from a string (eval,
 * instance_eval, ERB#result, RubyVM::InstructionSequence.compile) is
 * garbage once it has run, but a sampled frame of it stayed alive to the
 * end with everything it refers to, and each new compile was a new frame
 * and new stacks: a program that renders an ERB template per request
 * grew by about 1.5 MB a second at 1000 Hz, and its GC marked all of it.
 *
 * The top of a file required and its class and module bodies run once
 * too: a program that loads thousands of files had a frame of each that
 * its boot's samples saw kept to the end.
 *
 * So such a frame (an iseq with no real path, which is what Ruby gives
 * code that did not come from a file; or a method's frame whose own iseq
 * is one, a block of an eval run in the method; or a file's top or a
 * class body: sampler_frames_once) is named by the job, with
 * the GVL, soon after it is sampled: its name, file, first line and
 * whether it is a rescue or ensure clause are interned here as C strings,
 * and the sample's frame becomes SAMPLER_FRAME_RESOLVED(k), a word no
 * frame VALUE can be, which sampler-build.c names from this table.  The
 * same code compiled again gets the same k, so the frame and stack
 * tables stop growing too.
 *
 * Captures flag the samples that hold such frames and mark which frames
 * (sampler_capture_wb counts them), so the job looks only at those, and
 * hands a full buffer to the worker once it has.  Naming calls the Ruby
 * API and may allocate, so it runs without the sampler's lock: the frames
 * to name are copied out first, and the samples changed after, only if
 * the buffer is still the one scanned.  A small cache maps the frames
 * named lately (marked while cached, so the same VALUE is the same
 * object) to their k.  A sample that misses all this (its buffer went to
 * the worker first, or the cache lost its frame) keeps its VALUEs and is
 * named at the build as before: only memory is at stake, never a name.
 */
#include <stdlib.h>
#include <string.h>

#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* The most frames named here; past it, frames are kept as before. */
#define SAMPLER_RESOLVED_MAX	(1 << 20)

/* The most frames one job names. */
#define SAMPLER_RESOLVE_BATCH	64

/* A frame and its own iseq, with what it was named (a resolved frame),
 * and how it was used since the last GC (SAMPLER_RESOLVE_*). */
struct sampler_resolve_entry {
	VALUE frame, own, id;
	int used;
};

#define SAMPLER_RESOLVE_IDLE	0	/* not looked up since */
#define SAMPLER_RESOLVE_USED	1	/* looked up or added since */
#define SAMPLER_RESOLVE_LIVE	2	/* on a thread's last stack at this GC */

static struct {
	struct sampler_resolved *entries;
	size_t count, cap;
	uint32_t *buckets;	/* entry index + 1; 0 is empty */
	size_t nbuckets;
	struct sampler_resolve_entry cache[SAMPLER_RESOLVE_CACHE];
} sampler_resolved;

/* The FNV-1a hash of the LEN bytes at P, on from H. */
static uint32_t
sampler_resolved_hash_bytes(uint32_t h, const void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= c[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t
sampler_resolved_hash(const char *name, const char *file, int64_t first, int clause)
{
	uint32_t h = 2166136261u;

	h = sampler_resolved_hash_bytes(h, name, strlen(name) + 1);
	h = sampler_resolved_hash_bytes(h, file, strlen(file) + 1);
	h = sampler_resolved_hash_bytes(h, &first, sizeof first);
	return sampler_resolved_hash_bytes(h, &clause, sizeof clause);
}

/* Put entry index I in the buckets. */
static void
sampler_resolved_place(size_t i)
{
	size_t mask = sampler_resolved.nbuckets - 1;
	size_t b = sampler_resolved.entries[i].hash & mask;

	while (sampler_resolved.buckets[b] != 0)
		b = (b + 1) & mask;
	sampler_resolved.buckets[b] = (uint32_t)i + 1;
}

/* The index of the entry named so, added when new; -1 when the table is
 * full. */
static long
sampler_resolved_intern(const char *name, const char *file, int64_t first, int clause)
{
	uint32_t h = sampler_resolved_hash(name, file, first, clause);
	size_t mask, b, i;
	struct sampler_resolved *e;

	if (sampler_resolved.nbuckets > 0) {
		mask = sampler_resolved.nbuckets - 1;
		for (b = h & mask; sampler_resolved.buckets[b] != 0; b = (b + 1) & mask) {
			e = &sampler_resolved.entries[sampler_resolved.buckets[b] - 1];
			if (e->hash == h && e->first == first && e->clause == clause &&
			    strcmp(e->name, name) == 0 && strcmp(e->file, file) == 0)
				return (long)(sampler_resolved.buckets[b] - 1);
		}
	}
	if (sampler_resolved.count >= SAMPLER_RESOLVED_MAX)
		return -1;
	if (2 * (sampler_resolved.count + 1) > sampler_resolved.nbuckets) {
		size_t n = sampler_resolved.nbuckets ? 2 * sampler_resolved.nbuckets : 256;

		free(sampler_resolved.buckets);
		sampler_resolved.buckets = xcalloc(n, sizeof *sampler_resolved.buckets);
		sampler_resolved.nbuckets = n;
		for (i = 0; i < sampler_resolved.count; i++)
			sampler_resolved_place(i);
	}
	xgrow((void **)&sampler_resolved.entries, &sampler_resolved.cap,
	    sampler_resolved.count + 1, sizeof *sampler_resolved.entries);
	i = sampler_resolved.count++;
	e = &sampler_resolved.entries[i];
	e->name = xstrdup(name);
	e->file = xstrdup(file);
	e->first = first;
	e->clause = clause;
	e->hash = h;
	sampler_resolved_place(i);
	return (long)i;
}

/* What resolved frame F is named (F is one: SAMPLER_FRAME_IS_RESOLVED). */
const struct sampler_resolved *
sampler_resolved_get(VALUE f)
{
	long k = FIX2LONG(f) - SAMPLER_FRAME_RESOLVED_BASE;

	if (k < 0 || (size_t)k >= sampler_resolved.count)
		return NULL;
	return &sampler_resolved.entries[k];
}

/* The cache slot of (FRAME, OWN): a frame of a method holds a different
 * own iseq for each eval run in it, a few words apart. */
static struct sampler_resolve_entry *
sampler_resolve_slot(VALUE frame, VALUE own)
{
	uint64_t h = ((uint64_t)frame ^ ((uint64_t)own * 0xff51afd7ed558ccdu)) *
	    0x9e3779b97f4a7c15u;

	return &sampler_resolved.cache[(h >> 32) % SAMPLER_RESOLVE_CACHE];
}

/* The resolved frame cached for (FRAME, OWN), or 0. */
static VALUE
sampler_resolve_cached(VALUE frame, VALUE own)
{
	struct sampler_resolve_entry *c = sampler_resolve_slot(frame, own);

	if (c->frame != frame || c->own != own)
		return 0;
	c->used = SAMPLER_RESOLVE_USED;
	return c->id;
}

/* Name FRAME (own iseq OWN) and cache it (with the GVL; may allocate);
 * the resolved frame, or 0 (the table is full). */
static VALUE
sampler_resolve_one(VALUE frame, VALUE own)
{
	struct sampler_resolve_entry *c;
	char *name, *file;
	int64_t first = 0;
	int clause = 0;
	long k;
	VALUE v, where;

	if ((v = sampler_resolve_cached(frame, own)) != 0)
		return v;
	where = sampler_frames_where(frame, own);
	sampler.quiet_allocs++;		/* the name's strings are ours */
	name = sampler_build_cstr(sampler_frames_name(frame, own, &clause));
	file = sampler_build_cstr(rb_profile_frame_path(where));
	sampler.quiet_allocs--;
	v = rb_profile_frame_first_lineno(where);
	if (FIXNUM_P(v))
		first = FIX2LONG(v);
	k = sampler_resolved_intern(name, file, first, clause);
	free(name);
	free(file);
	if (k < 0)
		return 0;
	/* Marked from here on (sampler_resolved_mark): the wrapper must be
	 * remembered if they are young (sampler_wb). */
	sampler_wb(frame);
	sampler_wb(own);
	c = sampler_resolve_slot(frame, own);
	c->frame = frame;
	c->own = own;
	c->id = SAMPLER_FRAME_RESOLVED(k);
	c->used = SAMPLER_RESOLVE_USED;
	return c->id;
}

/* Whether frame F (own iseq OWN) of a sample is to be named here. */
static int
sampler_resolve_wanted(VALUE f, VALUE own)
{
	return !SAMPLER_FRAME_PSEUDO(f) &&
	    (sampler_frames_once(f) || sampler_frames_once(own));
}

/*
 * FRAME (own iseq OWN) of an allocation sample, named here when it is of
 * code that runs once (sampler_frames_once): its resolved frame, or 0
 * (not such a frame, or the table is full).  With the GVL, not holding the sampler's lock:
 * naming allocates, and an allocation may be sampled meanwhile.
 */
VALUE
sampler_resolve_frame(VALUE frame, VALUE own)
{
	VALUE id;

	if (!sampler_resolve_wanted(frame, own))
		return 0;
	if ((id = sampler_resolve_cached(frame, own)) != 0)
		return id;
	return sampler_resolve_one(frame, own);
}

/* The resolved frame of (F, OWN): cached, or among the N of TODO; or 0. */
static VALUE
sampler_resolve_find(VALUE todo[][3], size_t n, VALUE f, VALUE own)
{
	VALUE id = sampler_resolve_cached(f, own);
	size_t i;

	for (i = 0; id == 0 && i < n; i++) {
		if (todo[i][0] == f && todo[i][1] == own)
			id = todo[i][2];
	}
	return id;
}

/*
 * Put the names found in the frames sample S of B marks; 1 if a marked
 * frame is left (not found: in a batch that was FULL, the next job's).
 */
static int
sampler_resolve_sample(struct sampler_buffer *b, const struct sampler_sample *s,
    VALUE todo[][3], size_t ntodo, int full)
{
	int d, left = 0;

	for (d = 0; d < s->depth; d++) {
		size_t at = s->frame_off + d;
		VALUE id;

		if (!b->marks[at] || SAMPLER_FRAME_PSEUDO(b->frames[at]))
			continue;
		if ((id = sampler_resolve_find(todo, ntodo, b->frames[at], b->owns[at])) != 0) {
			b->frames[at] = id;
			b->owns[at] = 0;
		} else if (full) {
			left = 1;
		}
	}
	return left;
}

/*
 * The job (main Ractor, with the GVL, not holding the sampler's lock):
 * name the run-time compiled frames of the samples that have them in the
 * active buffer (a glance, when none has), and put their names in place.  A frame named lately is
 * in the cache: the samples with only such frames are done at once.  The
 * others' frames are named (at most SAMPLER_RESOLVE_BATCH of them a job;
 * the samples left with some are the next job's) without the lock, and
 * put in place after.
 */
void
sampler_resolve_pending(void)
{
	VALUE todo[SAMPLER_RESOLVE_BATCH][3];
	struct sampler_buffer *b;
	size_t i, from, upto, next, ntodo = 0;
	uint64_t gen;
	int active, d, full = 0;

	if (atomic_load_explicit(&sampler.buffers[atomic_load(&sampler.active)].pending,
	    memory_order_relaxed) == 0)
		return;
	pthread_mutex_lock(&sampler.lock);
	active = atomic_load(&sampler.active);
	b = &sampler.buffers[active];
	from = b->scanned <= b->nsamples ? b->scanned : 0;
	upto = next = b->nsamples;
	gen = sampler.swaps;
	for (i = from; i < upto; i++) {
		struct sampler_sample *s = &b->samples[i];

		if (!s->transient)
			continue;
		if (!sampler_resolve_sample(b, s, todo, 0, 1)) {
			s->transient = 0;
			atomic_fetch_sub(&b->pending, 1);
			continue;
		}
		if (next == upto)
			next = i;
		for (d = 0; d < s->depth && !full; d++) {
			size_t at = s->frame_off + d;
			VALUE f = b->frames[at], own = b->owns[at];

			if (!b->marks[at] || SAMPLER_FRAME_PSEUDO(f) ||
			    sampler_resolve_find(todo, ntodo, f, own) != 0)
				continue;
			if (!sampler_resolve_wanted(f, own)) {
				b->marks[at] = 0;
				continue;
			}
			if (ntodo == SAMPLER_RESOLVE_BATCH) {
				full = 1;
				break;
			}
			todo[ntodo][0] = f;
			todo[ntodo][1] = own;
			todo[ntodo][2] = 0;
			ntodo++;
		}
	}
	b->scanned = next;
	if (next == upto) {
		sampler_swap_locked();
		pthread_mutex_unlock(&sampler.lock);
		return;
	}
	pthread_mutex_unlock(&sampler.lock);

	/* They stay marked meanwhile: the buffer holds them, or the frame
	 * table once the worker has folded it. */
	for (i = 0; i < ntodo; i++)
		todo[i][2] = sampler_resolve_one(todo[i][0], todo[i][1]);

	pthread_mutex_lock(&sampler.lock);
	if (atomic_load(&sampler.active) == active && sampler.swaps == gen &&
	    b->nsamples >= upto) {
		size_t again = upto;

		for (i = next; i < upto; i++) {
			struct sampler_sample *s = &b->samples[i];

			if (!s->transient)
				continue;
			if (sampler_resolve_sample(b, s, todo, ntodo, full)) {
				if (again == upto)
					again = i;
				continue;
			}
			s->transient = 0;
			atomic_fetch_sub(&b->pending, 1);
		}
		b->scanned = again;
		sampler_swap_locked();
	}
	pthread_mutex_unlock(&sampler.lock);
}

/*
 * The cache keeps what it holds alive, and most code it names is garbage
 * soon, so the GC's mark function (sampler_mark, with the GVL) decides
 * what it lets go of, not the job: the cache lets go even when no sample
 * names anything again, after a boot that loaded a program's files or a
 * burst of evals.  First FRAME (own iseq OWN), on a thread's last stack,
 * is noted as in use.
 */
void
sampler_resolved_keep(VALUE frame, VALUE own)
{
	struct sampler_resolve_entry *c = sampler_resolve_slot(frame, own);

	if (c->frame == frame && c->own == own && frame != 0)
		c->used = SAMPLER_RESOLVE_LIVE;
}

/*
 * In a GC's marking, after sampler_resolved_keep: let go of the cached
 * frames of code that ran once and is not on a stack now (a file's top
 * once it is loaded, an eval's code once it has run), and of every frame
 * not looked up since the last GC; mark the rest.  Ruby frees such code
 * at the GC that finds it gone, as it would without rperf: kept to a
 * later GC, the boot's files grew the heap by four pages and cost a
 * major GC's worth of page faults at 1000 Hz.  A method of eval'd code
 * that is called on and on (a delegator from class_eval) stays cached.
 */
void
sampler_resolved_mark(void)
{
	size_t i;

	for (i = 0; i < SAMPLER_RESOLVE_CACHE; i++) {
		struct sampler_resolve_entry *c = &sampler_resolved.cache[i];

		if (c->frame == 0)
			continue;
		if (c->used == SAMPLER_RESOLVE_IDLE ||
		    (c->used == SAMPLER_RESOLVE_USED &&
		    (sampler_frames_iseq_once(c->frame) || sampler_frames_iseq_once(c->own)))) {
			memset(c, 0, sizeof *c);
			continue;
		}
		c->used = SAMPLER_RESOLVE_IDLE;
		rb_gc_mark_locations(&c->frame, &c->frame + 1);
		rb_gc_mark_locations(&c->own, &c->own + 1);
	}
}

/* Free the table and empty the cache. */
void
sampler_resolved_release(int drop)
{
	size_t i;

	if (drop) {
		memset(&sampler_resolved, 0, sizeof sampler_resolved);
		return;
	}
	for (i = 0; i < sampler_resolved.count; i++) {
		free(sampler_resolved.entries[i].name);
		free(sampler_resolved.entries[i].file);
	}
	free(sampler_resolved.entries);
	free(sampler_resolved.buckets);
	memset(&sampler_resolved, 0, sizeof sampler_resolved);
}
