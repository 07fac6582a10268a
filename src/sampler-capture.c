/*
 * sampler-capture.c: what servers and job workers need from the sampler.
 *
 * Captures: the time samples one thread takes between capture_begin and
 * capture_end (one request, one job).  Each sample carries the id of its
 * thread's innermost open capture; the worker, folding it, adds its stack
 * entry and weight to that capture's items (merged by entry, so memory
 * grows with the request's distinct stacks, not its length).  At the end
 * the capture's samples can be given labels known only then (a request's
 * status), in the run's profile too: folded ones move their weight to
 * the entry with the new label set, those still in the active buffer get
 * it before they are folded.  A slow request's samples become a profile
 * of their own; an outer capture inherits an inner one's samples.  The
 * end is cheap when nothing is written: no round trip to the worker,
 * only the samples taken since the capture began are looked at.
 *
 * A capture holds what its thread's samples billed while it was open.  A
 * sample bills the thread's time since its previous one, so a capture's
 * first sample may carry up to a sample period from before it began (and
 * its last leave as much to the next sample): a capture is exact to about
 * a sample at each end.  A capture's end that writes a profile bills the
 * thread's time up to its return there and then (sampler_bill_now): the
 * building and writing go to the capture around it, and the thread's next
 * capture starts clean of them (left to the next sample, they often fell
 * in that capture on a loaded machine).  A thread that ends before its
 * next sample bills that last part to the first stack a tick found it
 * in, under that sample's capture and labels (sampler_bill_end): such a
 * part of a capture's time reaches the run's samples with the labels
 * given at its end, but not its own profile, written by then.  (A tick
 * reaching the GVL holder late, which once moved tens of ms from one
 * capture to the next, is sampler-tick.c's.)
 *
 * Windows: with windows on, every stack entry's weight and count is
 * copied once a minute (by the control job, after folding the buffers;
 * a ring of SAMPLER_WINDOW_SLOTS), so that a profile of about the last N
 * minutes is the difference between now and the copy closest to N
 * minutes ago.  With --no-aggregate the samples'
 * own times say which are in the window.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* The most captures open at once (threads serving requests, nested). */
#define SAMPLER_CAPTURES_MAX	4096

/* Windows: a copy of the tables this often by default (seconds;
 * RPERF_WINDOW_STEP says otherwise, from 1 to 3600). */
#define SAMPLER_WINDOW_STEP	60

/* The capture with id ID (table_mutex held), or NULL. */
static struct sampler_capture *
sampler_capture_find(int id)
{
	static size_t hint;
	size_t i;

	if (hint < sampler.ncaptures && sampler.captures[hint]->id == id)
		return sampler.captures[hint];
	for (i = 0; i < sampler.ncaptures; i++) {
		if (sampler.captures[i]->id == id) {
			hint = i;
			return sampler.captures[i];
		}
	}
	return NULL;
}

static int
sampler_capture_item_cmp(const void *a, const void *b)
{
	const struct sampler_capture_item *x = a, *y = b;

	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Merge C's items with the same entry; room for more afterwards. */
static void
sampler_capture_compact(struct sampler_capture *c)
{
	size_t i, n = 0;

	qsort(c->items, c->nitems, sizeof *c->items, sampler_capture_item_cmp);
	for (i = 0; i < c->nitems; i++) {
		if (n > 0 && c->items[n - 1].stack == c->items[i].stack) {
			c->items[n - 1].weight += c->items[i].weight;
			c->items[n - 1].count += c->items[i].count;
		} else {
			c->items[n++] = c->items[i];
		}
	}
	c->nitems = n;
	c->merged = n;
}

/* Add WEIGHT and COUNT of entry STACK (and raw sample RAW, or SIZE_MAX)
 * to C's items (table_mutex held). */
static void
sampler_capture_add(struct sampler_capture *c, uint32_t stack, int64_t weight,
    int64_t count, size_t raw)
{
	if (c->nitems > 0 && c->items[c->nitems - 1].stack == stack) {
		c->items[c->nitems - 1].weight += weight;
		c->items[c->nitems - 1].count += count;
	} else {
		if (c->nitems == c->items_cap && c->nitems >= 64 && c->nitems > 2 * c->merged)
			sampler_capture_compact(c);
		if (c->nitems == c->items_cap)
			xgrow((void **)&c->items, &c->items_cap, c->nitems + 1, sizeof *c->items);
		c->items[c->nitems].stack = stack;
		c->items[c->nitems].weight = weight;
		c->items[c->nitems].count = count;
		c->nitems++;
	}
	if (raw != SIZE_MAX) {
		xgrow((void **)&c->raws, &c->raws_cap, c->nraws + 1, sizeof *c->raws);
		c->raws[c->nraws++] = raw;
	}
}

/* A folded sample of capture ID, standing for COUNT samples: its entry
 * STACK, raw index RAW or SIZE_MAX (the worker, table_mutex held). */
void
sampler_capture_fold(int id, uint32_t stack, int64_t weight, int64_t count, size_t raw)
{
	struct sampler_capture *c = sampler_capture_find(id);

	if (c != NULL)
		sampler_capture_add(c, stack, weight, count, raw);
}

static void
sampler_capture_free(struct sampler_capture *c)
{
	free(c->items);
	free(c->raws);
	free(c);
}

/* Take capture C out of the table (table_mutex held). */
static void
sampler_capture_unlink(struct sampler_capture *c)
{
	size_t i;

	for (i = 0; i < sampler.ncaptures; i++) {
		if (sampler.captures[i] == c) {
			sampler.captures[i] = sampler.captures[--sampler.ncaptures];
			break;
		}
	}
}

/* Unlink capture C and free it (table_mutex held). */
static void
sampler_capture_remove(struct sampler_capture *c)
{
	sampler_capture_unlink(c);
	sampler_capture_free(c);
}

/* Open a capture on the current thread; its id, or 0 (not sampling
 * time, or too many open). */
int
sampler_capture_begin(void)
{
	struct sampler_thread *td;
	struct sampler_capture *c;
	int active;

	if (!sampler_running() || sampler.cfg.alloc_only)
		return 0;
	if ((td = sampler_thread_current()) == NULL)
		return 0;
	pthread_mutex_lock(&sampler.table_mutex);
	if (sampler.ncaptures >= SAMPLER_CAPTURES_MAX) {
		pthread_mutex_unlock(&sampler.table_mutex);
		return 0;
	}
	c = xcalloc(1, sizeof *c);
	if (++sampler.next_capture <= 0)
		sampler.next_capture = 1;
	c->id = sampler.next_capture;
	c->parent = td->capture;
	c->thread_seq = td->seq;
	active = atomic_load(&sampler.active);
	c->begin_swaps = sampler.swaps;
	c->begin_index = sampler.buffers[active].nsamples;
	c->begin_mono = util_mono_ns();
	c->begin_real = sampler_real_ns();
	xgrow((void **)&sampler.captures, &sampler.captures_cap, sampler.ncaptures + 1,
	    sizeof *sampler.captures);
	sampler.captures[sampler.ncaptures++] = c;
	pthread_mutex_unlock(&sampler.table_mutex);
	td->capture = c->id;
	sampler_tick_labels(td);
	return c->id;
}

/* The label sets to give, old -> new. */
struct sampler_relabel {
	int *from, *to;
	size_t n, cap;
};

/* Whether label set ID is in M yet; its new id in *TO. */
static int
sampler_relabel_find(const struct sampler_relabel *m, int id, int *to)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		if (m->from[i] == id) {
			*to = m->to[i];
			return 1;
		}
	}
	return 0;
}

static void
sampler_relabel_note(struct sampler_relabel *m, int id)
{
	int to;

	if (sampler_relabel_find(m, id, &to))
		return;
	if (m->n == m->cap) {
		size_t cap = m->cap;

		xgrow((void **)&m->from, &cap, m->n + 1, sizeof *m->from);
		m->to = xrealloc(m->to, cap * sizeof *m->to);
		m->cap = cap;
	}
	m->from[m->n] = id;
	m->to[m->n] = id;
	m->n++;
}

/* The first sample of the active buffer that capture C may own. */
static size_t
sampler_capture_scan_start(const struct sampler_capture *c)
{
	return c->begin_swaps == sampler.swaps ? c->begin_index : 0;
}

/* Move entry *STACK's share (WEIGHT, COUNT, what is not handed out yet)
 * to the entry with label set TO; *STACK becomes that entry (table_mutex
 * held). */
static void
sampler_relabel_entry(uint32_t *stack, int64_t weight, int64_t count, int to)
{
	uint32_t ids[SAMPLER_MAX_DEPTH + 1], k;
	struct agg_stack *e = &sampler.stacks.entries[*stack], *f;
	uint32_t depth = e->depth;
	int thread = e->thread, state = e->state;

	if (e->label_set == to)
		return;
	if (depth > SAMPLER_MAX_DEPTH + 1)
		depth = SAMPLER_MAX_DEPTH + 1;
	/* Interning may move the ids it is given: copy them first. */
	memcpy(ids, sampler.stacks.ids + e->ids_off, depth * sizeof *ids);
	k = agg_stacks_intern(&sampler.stacks, ids, depth, thread, to, state);
	e = &sampler.stacks.entries[*stack];
	f = &sampler.stacks.entries[k];
	if (weight > e->weight - e->sent_weight)
		weight = e->weight - e->sent_weight;
	if (count > e->count - e->sent_count)
		count = e->count - e->sent_count;
	if (weight < 0)
		weight = 0;
	if (count < 0)
		count = 0;
	e->weight -= weight;
	e->count -= count;
	f->weight += weight;
	f->count += count;
	*stack = k;
}

/*
 * Close capture ID of the current thread.  RELABEL (may be NULL) gives
 * the new label set for each label set its samples have (with the GVL;
 * it may run Ruby).  With OUT, the capture's samples as a profile in
 * *OUT.  0, or -1: no such capture on this thread.
 */
int
sampler_capture_end(int id, int (*relabel)(int label_set, void *arg), void *arg,
    struct profile **out)
{
	struct sampler_thread *td = sampler_thread_current();
	struct sampler_relabel m = { 0 };
	struct sampler_capture *c, *parent;
	struct sampler_buffer *b;
	uint64_t swaps;
	size_t i;

	if (out != NULL)
		*out = NULL;
	if (!sampler_running() || td == NULL)
		return -1;
	pthread_mutex_lock(&sampler.table_mutex);
	c = sampler_capture_find(id);
	pthread_mutex_unlock(&sampler.table_mutex);
	if (c == NULL || c->thread_seq != td->seq)
		return -1;
	td->capture = c->parent;
	sampler_tick_labels(td);
	c->end_mono = util_mono_ns();

	if (out != NULL) {
		/* Everything it took, folded. */
		atomic_store(&sampler.building, 1);
		sampler_wait_worker();
		pthread_mutex_lock(&sampler.worker_mutex);
		sampler_drain();
		pthread_mutex_unlock(&sampler.worker_mutex);
	}

	/*
	 * Its label sets, then their new ids (Ruby may run, and sample).  A
	 * buffer handed to the worker since the capture began is folded
	 * first: the samples in it are in neither place looked at below, and
	 * a capture all of whose samples were there kept its old labels (a
	 * request's whole time lost its endpoint).  A thread of another
	 * Ractor may hand one over while they are looked at: then again.
	 */
	if (relabel != NULL) {
		do {
			swaps = sampler.swaps;
			if (c->begin_swaps != swaps)
				sampler_wait_worker();
			pthread_mutex_lock(&sampler.table_mutex);
			for (i = 0; i < c->nitems; i++)
				sampler_relabel_note(&m,
				    sampler.stacks.entries[c->items[i].stack].label_set);
			pthread_mutex_unlock(&sampler.table_mutex);
			b = &sampler.buffers[atomic_load(&sampler.active)];
			for (i = sampler_capture_scan_start(c); i < b->nsamples; i++) {
				if (b->samples[i].capture == id)
					sampler_relabel_note(&m, b->samples[i].label_set);
			}
		} while (sampler.swaps != swaps);
		if (td->stack_capture == id)
			sampler_relabel_note(&m, td->stack_label_set);
		if (td->first != NULL && td->first->capture == id)
			sampler_relabel_note(&m, td->first->label_set);
		for (i = 0; i < m.n; i++)
			m.to[i] = relabel(m.from[i], arg);
	}
	/* A buffer handed over since the capture began (RELABEL's Ruby may
	 * have filled one too) may hold some. */
	if (c->begin_swaps != sampler.swaps)
		sampler_wait_worker();

	pthread_mutex_lock(&sampler.table_mutex);
	parent = c->parent != 0 ? sampler_capture_find(c->parent) : NULL;
	for (i = 0; i < c->nitems; i++) {
		struct sampler_capture_item *it = &c->items[i];
		int to;

		if (sampler_relabel_find(&m, sampler.stacks.entries[it->stack].label_set, &to))
			sampler_relabel_entry(&it->stack, it->weight, it->count, to);
		if (parent != NULL)
			sampler_capture_add(parent, it->stack, it->weight, it->count, SIZE_MAX);
	}
	for (i = 0; i < c->nraws; i++) {
		struct sampler_raw *r = &sampler.raw[c->raws[i]];
		uint32_t stack = r->stack;
		int to;

		/* (The entry's weight moved with the items above.) */
		if (sampler_relabel_find(&m, sampler.stacks.entries[stack].label_set, &to))
			sampler_relabel_entry(&stack, 0, 0, to);
		r->stack = stack;
		if (parent != NULL) {
			xgrow((void **)&parent->raws, &parent->raws_cap, parent->nraws + 1,
			    sizeof *parent->raws);
			parent->raws[parent->nraws++] = c->raws[i];
		}
	}
	b = &sampler.buffers[atomic_load(&sampler.active)];
	for (i = sampler_capture_scan_start(c); i < b->nsamples; i++) {
		struct sampler_sample *s = &b->samples[i];
		int to;

		if (s->capture != id)
			continue;
		if (sampler_relabel_find(&m, s->label_set, &to))
			s->label_set = to;
		s->capture = c->parent;
	}
	/* The thread's last stack and its first stack may yet be billed,
	 * under their captures and labels (sampler_bill_last,
	 * sampler_bill_end): as the capture's samples are. */
	if (td->stack_capture == id) {
		int to;

		if (sampler_relabel_find(&m, td->stack_label_set, &to))
			td->stack_label_set = to;
		td->stack_capture = c->parent;
	}
	if (td->first != NULL && td->first->capture == id) {
		int to;

		if (sampler_relabel_find(&m, td->first->label_set, &to))
			td->first->label_set = to;
		td->first->capture = c->parent;
	}
	sampler_capture_unlink(c);
	pthread_mutex_unlock(&sampler.table_mutex);

	if (out != NULL) {
		struct sampler_build_src src = { 0 };

		src.capture = 1;
		src.items = c->items;
		src.nitems = c->nitems;
		src.raws = c->raws;
		src.nraws = c->nraws;
		src.time_nanos = c->begin_real;
		src.duration_nanos = c->end_mono - c->begin_mono;
		src.time_only = 1;
		*out = sampler_build_of(&src);
		atomic_store(&sampler.building, 0);
	}
	sampler_capture_free(c);
	free(m.from);
	free(m.to);
	return 0;
}

/* The table lost the weights (a snapshot cleared it): every capture's
 * folded samples are gone from it (table_mutex held). */
void
sampler_captures_cleared(void)
{
	size_t i;

	for (i = 0; i < sampler.ncaptures; i++) {
		sampler.captures[i]->nitems = 0;
		sampler.captures[i]->merged = 0;
		sampler.captures[i]->nraws = 0;
	}
	for (i = 0; i < SAMPLER_WINDOW_SLOTS; i++)
		sampler.window[i].n = 0;
	sampler.nwindow = 0;
}

/* Thread SEQ is gone: so are its open captures (table_mutex held). */
void
sampler_captures_thread_gone(int seq)
{
	size_t i = 0;

	while (i < sampler.ncaptures) {
		if (sampler.captures[i]->thread_seq == seq)
			sampler_capture_remove(sampler.captures[i]);
		else
			i++;
	}
}

/* Free every capture and window copy. */
void
sampler_captures_release(void)
{
	size_t i;

	while (sampler.ncaptures > 0)
		sampler_capture_remove(sampler.captures[0]);
	free(sampler.captures);
	sampler.captures = NULL;
	sampler.captures_cap = 0;
	for (i = 0; i < SAMPLER_WINDOW_SLOTS; i++) {
		free(sampler.window[i].values);
		memset(&sampler.window[i], 0, sizeof sampler.window[i]);
	}
	sampler.nwindow = 0;
	atomic_store(&sampler.window_on, 0);
}

/* Keep window copies from now on (with the GVL). */
void
sampler_window_enable(void)
{
	const char *env = getenv("RPERF_WINDOW_STEP");
	long step = SAMPLER_WINDOW_STEP;
	char *end;

	if (!sampler_running() || atomic_load(&sampler.window_on))
		return;
	if (env != NULL && *env != '\0') {
		step = strtol(env, &end, 10);
		if (*end != '\0' || step < 1 || step > 3600)
			step = SAMPLER_WINDOW_STEP;
	}
	sampler.window_step = step * 1000000000LL;
	atomic_store(&sampler.window_on, 1);
	sampler_worker_kick();
}

/* The next window copy is due then (read by the worker). */
int64_t
sampler_window_due(void)
{
	if (!atomic_load(&sampler.window_on) || !sampler.cfg.aggregate)
		return INT64_MAX;
	return sampler.window_last + sampler.window_step;
}

/* Copy every entry's weight and count into the oldest slot (the control
 * job, every sample folded). */
void
sampler_window_copy(int64_t now)
{
	struct sampler_window_slot *w;
	size_t i;

	pthread_mutex_lock(&sampler.table_mutex);
	w = &sampler.window[sampler.window_next];
	sampler.window_next = (sampler.window_next + 1) % SAMPLER_WINDOW_SLOTS;
	if (sampler.nwindow < SAMPLER_WINDOW_SLOTS)
		sampler.nwindow++;
	if (w->cap < 2 * sampler.stacks.count)
		xgrow((void **)&w->values, &w->cap, 2 * sampler.stacks.count,
		    sizeof *w->values);
	for (i = 0; i < sampler.stacks.count; i++) {
		w->values[2 * i] = sampler.stacks.entries[i].weight;
		w->values[2 * i + 1] = sampler.stacks.entries[i].count;
	}
	w->n = sampler.stacks.count;
	w->mono = now;
	w->real = sampler_real_ns();
	pthread_mutex_unlock(&sampler.table_mutex);
}

/*
 * The profile of about the last LAST_NS (0: the whole run): from the
 * window copy closest to that long ago, or the whole run when there is
 * none as old.  With the GVL.  NULL when not running.
 */
struct profile *
sampler_window(int64_t last_ns)
{
	struct sampler_build_src src = { 0 };
	const struct sampler_window_slot *best = NULL;
	struct profile *p;
	int64_t now, want;
	size_t i;

	if (!sampler_running())
		return NULL;
	sampler_alloc_settle();
	sampler_collect();
	now = util_mono_ns();
	want = now - last_ns;
	src.time_only = last_ns > 0;
	if (last_ns > 0 && !sampler.cfg.aggregate) {
		src.since_ns = want - sampler.start_mono;
		src.time_nanos = sampler_real_ns() - last_ns;
		src.duration_nanos = last_ns;
	} else if (last_ns > 0) {
		for (i = 0; i < sampler.nwindow; i++) {
			const struct sampler_window_slot *w = &sampler.window[i];
			int64_t d = w->mono > want ? w->mono - want : want - w->mono;

			if (w->mono < sampler.start_mono)
				continue;
			if (best == NULL || d < (best->mono > want ? best->mono - want :
			    want - best->mono))
				best = w;
		}
		/* Nothing near enough: the whole run (it is shorter). */
		if (best != NULL && want < sampler.start_mono &&
		    sampler.start_mono - want < (best->mono > want ? best->mono - want :
		    want - best->mono))
			best = NULL;
		if (best != NULL) {
			src.base = best->values;
			src.nbase = best->n;
			src.time_nanos = best->real;
			src.duration_nanos = now - best->mono;
		} else {
			src.time_only = 0;
		}
	}
	p = sampler_build_of(&src);
	atomic_store(&sampler.building, 0);
	return p;
}
