/*
 * sampler-build.c: the profile built from the sampler's tables, with the
 * GVL held: frame VALUEs resolved to functions and locations (once per
 * frame), each stack entry (or, with --no-aggregate, each raw sample)
 * made a sample with its thread, VM state and script labels, and the
 * run's comments.  It runs only once the buffers are folded (see
 * sampler_collect) and must never be called without the GVL.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* The most strings sampler_build_fixed remembers. */
#define SAMPLER_BUILD_FIXED	32

struct sampler_build_labels {
	struct profile *p;
	struct profile_label *labels;
	size_t n, cap;
	/* Strings interned before, by address (see sampler_build_fixed). */
	struct {
		const char *s;
		str_id id;
	} fixed[SAMPLER_BUILD_FIXED];
	size_t nfixed;
};

/*
 * The id of S in C's profile, for a string that never moves or changes
 * (a literal, a VM state's name; not a thread's name, which a rename
 * frees): found by its address after the first time, where hashing it
 * again for every sample of a timeline cost more than the rest of the
 * label (the ids are those profile_intern gives).
 */
static str_id
sampler_build_fixed(struct sampler_build_labels *c, const char *s)
{
	size_t i;
	str_id id;

	for (i = 0; i < c->nfixed; i++) {
		if (c->fixed[i].s == s)
			return c->fixed[i].id;
	}
	id = profile_intern(c->p, s);
	if (c->nfixed < SAMPLER_BUILD_FIXED) {
		c->fixed[c->nfixed].s = s;
		c->fixed[c->nfixed++].id = id;
	}
	return id;
}

/* A new, empty label with key KEY (an id) at the end of C's list. */
static struct profile_label *
sampler_build_new_label(struct sampler_build_labels *c, str_id key)
{
	struct profile_label *l;

	xgrow((void **)&c->labels, &c->cap, c->n + 1, sizeof *c->labels);
	l = &c->labels[c->n++];
	memset(l, 0, sizeof *l);
	l->key = key;
	return l;
}

/* Append a string label (the sampler_label_add_fn of label_fn, whose
 * strings may live only as long as the call). */
static void
sampler_build_label(void *arg, const char *key, const char *value)
{
	struct sampler_build_labels *c = arg;

	sampler_build_new_label(c, profile_intern(c->p, key))->str = profile_intern(c->p, value);
}

/* Append a string label, KEY fixed (see sampler_build_fixed), and VALUE
 * too when VALUE_FIXED. */
static void
sampler_build_fixed_label(struct sampler_build_labels *c, const char *key, const char *value,
    int value_fixed)
{
	sampler_build_new_label(c, sampler_build_fixed(c, key))->str = value_fixed ?
	    sampler_build_fixed(c, value) : profile_intern(c->p, value);
}

/* Append a numeric label, KEY and UNIT fixed. */
static void
sampler_build_num_label(struct sampler_build_labels *c, const char *key, int64_t num,
    const char *unit)
{
	struct profile_label *l = sampler_build_new_label(c, sampler_build_fixed(c, key));

	l->num = num;
	if (unit != NULL)
		l->num_unit = sampler_build_fixed(c, unit);
}

/* A Ruby string (or nil) as a new C string. */
char *
sampler_build_cstr(VALUE s)
{
	if (!RB_TYPE_P(s, T_STRING))
		return xstrdup("");
	return xstrndup(RSTRING_PTR(s), RSTRING_LEN(s));
}

/* What a frame id resolves to: its location and function (ids in the
 * profile; 0 until resolved, and for a clause until it is named alone)
 * and whether it is a rescue or ensure clause. */
struct sampler_build_frame {
	uint64_t location;
	uint64_t function;
	int clause;
	int wrapper;	/* sampler_frames_wrapper */
	int seen;
};

/* Make frame ID's function and location in P, named NAME. */
static void
sampler_build_place(struct profile *p, struct sampler_build_frame *c, uint32_t id,
    VALUE name)
{
	VALUE f = sampler.frames.keys[id], v;
	const struct sampler_resolved *r;
	char *cname, *file;
	int64_t first = 0;

	if (SAMPLER_FRAME_IS_RESOLVED(f) && (r = sampler_resolved_get(f)) != NULL) {
		/* Named when sampled (sampler-resolved.c). */
		cname = xstrdup(r->name);
		file = xstrdup(r->file);
		first = r->first;
	} else if (SAMPLER_FRAME_PSEUDO(f)) {
		/* The pseudo-frames: no file, a name no Ruby frame can have. */
		cname = xstrdup(f == SAMPLER_FRAME_BOOT ? "(ruby boot)" :
		    f == SAMPLER_FRAME_THREAD_START ? "(thread start)" :
		    f == SAMPLER_FRAME_THREAD_END ? "(thread end)" :
		    f == SAMPLER_FRAME_UNSAMPLED ? "(unsampled thread)" : "(no Ruby frame)");
		file = xstrdup("");
	} else {
		VALUE where = sampler_frames_where(f, sampler.frames.owns[id]);

		cname = sampler_build_cstr(name);
		file = sampler_build_cstr(rb_profile_frame_path(where));
		v = rb_profile_frame_first_lineno(where);
		if (FIXNUM_P(v))
			first = FIX2LONG(v);
	}
	c->function = profile_function(p, cname, cname, file, first);
	c->location = profile_location(p, c->function, sampler.frames.lines[id]);
	free(cname);
	free(file);
}

/* Frame ID's entry in CACHE, resolving the frame the first time (a
 * clause, which is named after another frame, is only classified). */
static struct sampler_build_frame *
sampler_build_frame(struct profile *p, struct sampler_build_frame *cache, uint32_t id)
{
	struct sampler_build_frame *c = &cache[id];
	VALUE name;

	if (c->seen)
		return c;
	c->seen = 1;
	if (SAMPLER_FRAME_IS_RESOLVED(sampler.frames.keys[id])) {
		const struct sampler_resolved *r = sampler_resolved_get(sampler.frames.keys[id]);

		c->clause = r != NULL && r->clause;
		if (!c->clause)
			sampler_build_place(p, c, id, Qnil);
		return c;
	}
	if (SAMPLER_FRAME_PSEUDO(sampler.frames.keys[id])) {
		sampler_build_place(p, c, id, Qnil);
		return c;
	}
	name = sampler_frames_name(sampler.frames.keys[id], sampler.frames.owns[id],
	    &c->clause);
	c->wrapper = sampler_frames_wrapper(sampler.frames.keys[id]);
	if (!c->clause)
		sampler_build_place(p, c, id, name);
	return c;
}

/*
 * The DEPTH frame ids IDS (leaf first) as locations in LOCS; their count.
 * A rescue or ensure clause is named, as Ruby 3.4's backtrace names it,
 * like the frame it runs in, at its own line, and that frame (with any
 * clauses between) is left out: "Foo#run", not "rescue in Foo#run" above
 * "Foo#run".  A method of rperf's that wraps one of Process's is named
 * like it, and left out where it calls it: "Kernel#fork;Process._fork",
 * not "Process._fork" twice.
 */
static uint32_t
sampler_build_locations(struct profile *p, struct sampler_build_frame *cache,
    const uint32_t *ids, uint32_t depth, uint64_t *locs)
{
	struct sampler_build_frame *c;
	const struct sampler_build_frame *up;
	uint64_t callee = 0;	/* the function of the last location */
	uint32_t d, k, n = 0;
	int clause;

	for (d = 0; d < depth; d++) {
		c = sampler_build_frame(p, cache, ids[d]);
		if (c->wrapper && n > 0 && c->function == callee)
			continue;
		if (!c->clause) {
			callee = c->function;
			locs[n++] = c->location;
			continue;
		}
		for (k = d + 1; k < depth; k++) {
			up = sampler_build_frame(p, cache, ids[k]);
			if (!up->clause)
				break;
		}
		if (k < depth) {
			callee = up->function;
			locs[n++] = profile_location(p, up->function,
			    sampler.frames.lines[ids[d]]);
			d = k;
			continue;
		}
		/* No frame to run in (cannot be): the clause by itself. */
		if (c->location == 0)
			sampler_build_place(p, c, ids[d],
			    SAMPLER_FRAME_PSEUDO(sampler.frames.keys[ids[d]]) ? Qnil :
			    sampler_frames_name(sampler.frames.keys[ids[d]],
			    sampler.frames.owns[ids[d]], &clause));
		callee = c->function;
		locs[n++] = c->location;
	}
	return n;
}

/* The name saved for thread number KEY, or NULL. */
static const char *
sampler_build_thread_name(int key)
{
	size_t i = sampler_thread_name_index(key);

	return i < sampler.nnames ? sampler.names[i].name : NULL;
}

/* Add one sample of stack entry E (its frame ids IDS) with VALUES (one
 * per sample type), labelled with its class KLASS when not NULL. */
static void
sampler_build_emit(struct profile *p, struct sampler_build_frame *cache,
    struct sampler_build_labels *lc, const struct agg_stack *e, const uint32_t *ids,
    const int64_t *values, const char *klass, int64_t time_ns, int with_time)
{
	uint64_t locs[SAMPLER_MAX_DEPTH];
	const char *tname, *rname;
	uint32_t n;
	int ractor;

	n = sampler_build_locations(p, cache, ids, e->depth, locs);
	lc->n = 0;
	sampler_build_num_label(lc, "thread", e->thread, NULL);
	if ((tname = sampler_build_thread_name(e->thread)) != NULL)
		sampler_build_fixed_label(lc, "thread_name", tname, 0);
	if ((ractor = sampler_ractor_of(e->thread, &rname)) > 0) {
		sampler_build_num_label(lc, "ractor", ractor, NULL);
		if (rname != NULL)
			sampler_build_label(lc, "ractor_name", rname);
	}
	if (klass != NULL)
		sampler_build_label(lc, "class", klass);
	else if (e->state != AGG_STATE_NORMAL)
		sampler_build_fixed_label(lc, profile_states[e->state - 1].key,
		    profile_states[e->state - 1].value, 1);
	if (e->label_set != 0 && sampler.cfg.label_fn != NULL)
		sampler.cfg.label_fn(e->label_set, sampler_build_label, lc, sampler.cfg.label_arg);
	if (with_time)
		sampler_build_num_label(lc, "timestamp", time_ns, "nanoseconds");
	profile_add_sample(p, locs, n, values, lc->labels, lc->n);
}

/* The T_ type names of hidden objects' pseudo-classes. */
static const char *
sampler_build_type_name(int type)
{
	switch (type) {
	case T_OBJECT: return "Object";
	case T_CLASS: return "Class";
	case T_MODULE: return "Module";
	case T_STRING: return "String";
	case T_ARRAY: return "Array";
	case T_HASH: return "Hash";
	case T_DATA: return "Data";
	case T_IMEMO: return "imemo";
	case T_ICLASS: return "iclass";
	default: return "object";
	}
}

/* The class label of an allocation sample: the class's name, or for an
 * object Ruby hides (no class: internal tables, iseqs' memos),
 * "(hidden TYPE)". */
static char *
sampler_build_class_name(VALUE klass, int type)
{
	VALUE name;

	if (klass == 0)
		return xasprintf("(hidden %s)", sampler_build_type_name(type));
	name = rb_class_name(klass);
	return sampler_build_cstr(name);
}

/* The allocation sites as samples, their values from FIRST on (the
 * time values before them 0). */
static void
sampler_build_alloc(struct profile *p, struct sampler_build_frame *cache,
    struct sampler_build_labels *lc, size_t first, int delta)
{
	int64_t values[6] = { 0 };
	const struct agg_stack *e;
	const uint32_t *ids;
	size_t i, nsites = sampler_alloc_nsites();
	VALUE klass;
	int type;
	char *name;

	for (i = 0; i < nsites; i++) {
		e = sampler_alloc_site(i, delta, &ids, values + first, &klass, &type);
		if (values[first] == 0 && values[first + 2] == 0)
			continue;
		name = sampler_build_class_name(klass, type);
		sampler_build_emit(p, cache, lc, e, ids, values, name, 0, 0);
		free(name);
	}
}

/* Emit raw sample R (--no-aggregate). */
static void
sampler_build_raw(struct profile *p, struct sampler_build_frame *cache,
    struct sampler_build_labels *lc, const struct sampler_raw *r, int64_t *values)
{
	const struct agg_stack *e = &sampler.stacks.entries[r->stack];

	values[0] = 1;
	values[1] = r->weight;
	sampler_build_emit(p, cache, lc, e, sampler.stacks.ids + e->ids_off, values, NULL,
	    r->time_ns, 1);
}

/* Emit entry I with WEIGHT and COUNT, when it has samples. */
static void
sampler_build_entry(struct profile *p, struct sampler_build_frame *cache,
    struct sampler_build_labels *lc, size_t i, int64_t weight, int64_t count,
    int64_t *values)
{
	const struct agg_stack *e = &sampler.stacks.entries[i];

	values[0] = count;
	values[1] = weight;
	if (count > 0 && weight >= 0)
		sampler_build_emit(p, cache, lc, e, sampler.stacks.ids + e->ids_off, values,
		    NULL, 0, 0);
}

/* A full timeline: what each entry got beyond its raw samples (those
 * taken once the timeline was full), without a time. */
static void
sampler_build_rest(struct profile *p, struct sampler_build_frame *cache,
    struct sampler_build_labels *lc, int64_t *values)
{
	int64_t *kept = xcalloc(2 * sampler.stacks.count + 1, sizeof *kept);
	size_t i;

	for (i = 0; i < sampler.nraw; i++) {
		kept[2 * sampler.raw[i].stack] += sampler.raw[i].weight;
		kept[2 * sampler.raw[i].stack + 1]++;
	}
	for (i = 0; i < sampler.stacks.count; i++)
		sampler_build_entry(p, cache, lc, i,
		    sampler.stacks.entries[i].weight - kept[2 * i],
		    sampler.stacks.entries[i].count - kept[2 * i + 1], values);
	free(kept);
}

/*
 * Build a profile from the tables (everything aggregated already): the
 * whole run, what came since the last interval (which then counts as
 * handed out), a window or a capture (see struct sampler_build_src).
 */
static void sampler_build_unattributed(struct profile *p);

struct profile *
sampler_build_of(const struct sampler_build_src *src)
{
	int delta = src->delta;
	const char *mode = sampler.cfg.mode == SAMPLER_WALL ? "wall" : "cpu";
	/* Time first (unless -m alloc), then the memory types as Go names
	 * them, so that every pprof tool knows them. */
	const char *tv[6] = { "samples", mode, "alloc_objects", "alloc_space",
	    "inuse_objects", "inuse_space" };
	const char *tu[6] = { "count", "nanoseconds", "count", "bytes", "count", "bytes" };
	int with_alloc = sampler_alloc_rate() > 0 && !src->time_only,
	    with_time = !sampler.cfg.alloc_only;
	size_t first = with_time ? 0 : 2, ntypes = (with_time ? 2 : 0) + (with_alloc ? 4 : 0);
	struct sampler_build_labels lc;
	struct profile *p = profile_new();
	struct sampler_build_frame *cache;
	int64_t values[6] = { 0 };
	size_t i;

	if (!with_time)
		mode = "alloc";
	profile_set_value_types(p, ntypes, tv + first, tu + first);
	if (with_time) {
		/* The time stays what reports show first. */
		p->default_value = 1;
		p->period_type.type = profile_intern(p, mode);
		p->period_type.unit = profile_intern(p, "nanoseconds");
		p->period = sampler_period_ns();
	} else {
		/* -m alloc: alloc_space (the whole run's allocations, what
		 * the GC paid for; in use at the end is one --sample-index
		 * away); the period is the mean allocations a sample. */
		p->default_value = 1;
		p->period_type.type = profile_intern(p, "objects");
		p->period_type.unit = profile_intern(p, "count");
		p->period = (int64_t)sampler_alloc_rate();
	}
	p->time_nanos = sampler.start_real_ns;
	p->duration_nanos = util_mono_ns() - sampler.start_mono;
	if (delta) {
		int64_t now = sampler_real_ns();

		p->time_nanos = sampler.sent_real_ns;
		p->duration_nanos = now - sampler.sent_real_ns;
		sampler.sent_real_ns = now;
	}
	if (src->time_nanos != 0) {
		p->time_nanos = src->time_nanos;
		p->duration_nanos = src->duration_nanos;
	}

	memset(&lc, 0, sizeof lc);
	lc.p = p;
	cache = xcalloc(sampler.frames.count + 1, sizeof *cache);
	if (!with_time) {
		/* -m alloc: no time samples */
	} else if (src->capture && (sampler.cfg.aggregate || sampler.raw_capped)) {
		for (i = 0; i < src->nitems; i++)
			sampler_build_entry(p, cache, &lc, src->items[i].stack,
			    src->items[i].weight, src->items[i].count, values);
	} else if (src->capture) {
		for (i = 0; i < src->nraws; i++)
			sampler_build_raw(p, cache, &lc, &sampler.raw[src->raws[i]], values);
	} else if (src->base != NULL) {
		for (i = 0; i < sampler.stacks.count; i++) {
			const struct agg_stack *e = &sampler.stacks.entries[i];

			if (i < src->nbase)
				sampler_build_entry(p, cache, &lc, i,
				    e->weight - src->base[2 * i], e->count - src->base[2 * i + 1],
				    values);
			else
				sampler_build_entry(p, cache, &lc, i, e->weight, e->count, values);
		}
	} else if (sampler.cfg.aggregate || (delta && sampler.raw_capped)) {
		/* (A full timeline's intervals: merged, without their time.) */
		if (!sampler.cfg.aggregate)
			sampler.raw_sent = sampler.nraw;
		for (i = 0; i < sampler.stacks.count; i++) {
			struct agg_stack *e = &sampler.stacks.entries[i];
			int64_t count = e->count, weight = e->weight;

			if (delta) {
				count -= e->sent_count;
				weight -= e->sent_weight;
				e->sent_count = e->count;
				e->sent_weight = e->weight;
			}
			values[0] = count;
			values[1] = weight;
			if (count > 0 && with_time)
				sampler_build_emit(p, cache, &lc, e,
				    sampler.stacks.ids + e->ids_off, values, NULL, 0, 0);
		}
	} else {
		for (i = delta ? sampler.raw_sent : 0; i < sampler.nraw; i++) {
			if (src->since_ns == 0 || sampler.raw[i].time_ns >= src->since_ns)
				sampler_build_raw(p, cache, &lc, &sampler.raw[i], values);
		}
		if (delta) {
			sampler.raw_sent = sampler.nraw;
			for (i = 0; i < sampler.stacks.count; i++) {
				sampler.stacks.entries[i].sent_count = sampler.stacks.entries[i].count;
				sampler.stacks.entries[i].sent_weight = sampler.stacks.entries[i].weight;
			}
		} else if (sampler.raw_capped && src->since_ns == 0) {
			sampler_build_rest(p, cache, &lc, values);
		}
	}
	/* Allocation sites: an interval's allocations and what is in use
	 * at its end. */
	if (with_alloc)
		sampler_build_alloc(p, cache, &lc, with_time ? 2 : 0, delta);
	free(cache);
	free(lc.labels);

	for (i = 0; i < sampler.ncomments; i++)
		profile_add_comment(p, sampler.comments[i]);
	if (!sampler.cfg.aggregate && !src->capture && !delta)
		sampler_marks_emit(p);
	profile_add_meta(p, PROFILE_COMMENT_MODE, "%s", mode);
	if (with_time)
		profile_add_meta(p, PROFILE_COMMENT_FREQUENCY, "%d", sampler.cfg.frequency);
	if (with_time && !sampler.cfg.aggregate && sampler.raw_capped > 0)
		profile_add_meta(p, PROFILE_COMMENT_TIMELINE_FULL,
		    "%zu samples kept with their time, up to %.3f s; %llu later ones merged",
		    sampler.nraw, (double)sampler.raw_capped_at / 1e9,
		    (unsigned long long)sampler.raw_capped);
	if (with_alloc) {
		uint64_t n, grown, moved;

		sampler_alloc_counts(&n, &grown, &moved);
		profile_add_meta(p, PROFILE_COMMENT_ALLOC_RATE, "%.0f", sampler_alloc_rate());
		profile_add_meta(p, PROFILE_COMMENT_ALLOC_SAMPLES, "%llu", (unsigned long long)n);
		if (moved > 0)
			profile_add_meta(p, PROFILE_COMMENT_ALLOC_MOVED, "%llu",
			    (unsigned long long)moved);
	}
	if (with_time && src->capture) {
		/* A capture: its own samples (the run's triggers are not). */
		int64_t n = 0;

		for (i = 0; i < p->nsamples; i++)
			n += profile_sample_values(p, &p->samples[i])[0];
		profile_add_meta(p, PROFILE_COMMENT_SAMPLES, "%lld", (long long)n);
	} else if (with_time) {
		profile_add_meta(p, PROFILE_COMMENT_SAMPLES, "%llu",
		    (unsigned long long)sampler.samples);
		profile_add_meta(p, PROFILE_COMMENT_TRIGGERS, "%llu",
		    (unsigned long long)atomic_load(&sampler.triggers));
	} else {
		/* -m alloc: the samples are the allocations sampled. */
		uint64_t n, grown, moved;

		sampler_alloc_counts(&n, &grown, &moved);
		profile_add_meta(p, PROFILE_COMMENT_SAMPLES, "%llu", (unsigned long long)n);
	}
	profile_add_meta(p, PROFILE_COMMENT_THREADS, "%llu",
	    (unsigned long long)sampler.nthreads);
	if (with_time && sampler.cfg.mode == SAMPLER_CPU && !src->capture && !delta &&
	    src->base == NULL && src->since_ns == 0)
		sampler_build_unattributed(p);
	return p;
}

/*
 * cpu mode: the process's CPU time while armed, and how much of it no
 * sample bills: not the worker's (rperf's own thread, reported apart),
 * so a Ruby thread the sampler never reached, a Ractor's GC it could not
 * see, or a thread Ruby keeps for itself.  Both as comments the text
 * report and `rperf stat` print.
 */
static void
sampler_build_unattributed(struct profile *p)
{
	int64_t proc = sampler.proc_cpu_ns, now, worker = (int64_t)sampler.worker_cpu_ns;
	int64_t billed = profile_total(p, 1), rest;
	clockid_t cid;

	if (atomic_load(&sampler.armed) &&
	    sampler_read_clock(CLOCK_PROCESS_CPUTIME_ID, &now) == 0)
		proc += now - sampler.proc_cpu_at;
	if (sampler.worker_made && pthread_getcpuclockid(sampler.worker, &cid) == 0)
		sampler_read_clock(cid, &worker);
	rest = proc - billed - worker;
	profile_add_meta(p, PROFILE_COMMENT_PROCESS_CPU, "%lld", (long long)proc);
	profile_add_meta(p, PROFILE_COMMENT_UNATTRIBUTED, "%lld",
	    (long long)(rest > 0 ? rest : 0));
}

/* The whole run, or with DELTA what came since the last interval. */
struct profile *
sampler_build(int delta)
{
	struct sampler_build_src src = { 0 };

	src.delta = delta;
	return sampler_build_of(&src);
}

/* Fill STATS from the counters. */
void
sampler_fill_stats(struct sampler_stats *stats)
{
	if (stats == NULL)
		return;
	stats->triggers = atomic_load(&sampler.triggers);
	stats->samples = sampler.samples;
	stats->timer_samples = sampler.timer_samples;
	stats->job_ns = sampler.job_ns;
	stats->threads = sampler.nthreads;
	stats->duration_ns = util_mono_ns() - sampler.start_mono;
	stats->worker_cpu_ns = sampler.worker_cpu_ns;
	stats->thread_notes = atomic_load(&sampler.thread_notes);
}
