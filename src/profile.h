/*
 * profile.h: the in-memory profile that the sampler fills, every writer
 * reads and every reader produces.
 *
 * The model follows pprof's shape, so that any pprof file can be held in
 * it and every format round-trips through it: an interned string table,
 * functions (name, system name, file, start line), locations (a function
 * and a line), and samples (a stack of location ids, leaf first, one value
 * per sample type, and labels).  Everything is plain C: no Ruby here, so it
 * is unit-tested without a VM.  Allocation failure aborts (xmalloc.h).
 */
#ifndef RPERF_PROFILE_H
#define RPERF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The VM states rperf labels samples with, in the order every report
 * shows them: the label (key and value), the pseudo-frame that stands for
 * it in folded stacks and trees, and the title of the text report.
 */
struct profile_state {
	const char *key, *value, *frame, *title;
};
#define PROFILE_NSTATES 4
extern const struct profile_state profile_states[PROFILE_NSTATES];
/* Indexes of profile_states. */
enum {
	PROFILE_STATE_GVL_BLOCKED,
	PROFILE_STATE_GVL_WAIT,
	PROFILE_STATE_GC_MARK,
	PROFILE_STATE_GC_SWEEP,
};
/* The keys of the two VM-state labels. */
#define PROFILE_LABEL_GVL "%GVL"
#define PROFILE_LABEL_GC "%GC"

/* The VM state of one sample, decoded from its labels. */
struct profile_vm_state {
	const char *gvl, *gc;	/* the %GVL and %GC values, or NULL */
	int gvl_state, gc_state;	/* their profile_states index, or -1
					 * when absent or not a known state */
};

/* Ids are 1-based indexes into their table; 0 means "none". */
typedef uint32_t str_id;	/* index into strings; 0 is "" */

struct profile_function {
	str_id name;		/* e.g. "Foo::Bar#baz" */
	str_id system_name;
	str_id filename;
	int64_t start_line;
};

struct profile_location {
	uint64_t function;	/* function id */
	int64_t line;		/* 0 when lines are not recorded */
};

struct profile_label {
	str_id key;
	str_id str;		/* 0 for a numeric label */
	int64_t num;
	str_id num_unit;
};

struct profile_sample {
	size_t loc_off;		/* into profile.loc_pool, leaf first */
	uint32_t nloc;
	size_t label_off;	/* into profile.label_pool */
	uint32_t nlabel;
	size_t value_off;	/* into profile.value_pool, nvalue_types long */
};

struct profile_value_type {
	str_id type;		/* "samples", "cpu", "wall" */
	str_id unit;		/* "count", "nanoseconds" */
};

struct profile {
	/* string table, strings[0] == "" */
	char **strings;
	size_t nstrings, strings_cap;
	void *string_index;	/* private: hash of strings -> id */
	void *string_blocks;	/* private: where the strings are kept */
	size_t string_bytes;	/* private: the blocks' size in all */

	struct profile_function *functions;	/* functions[id - 1] */
	size_t nfunctions, functions_cap;
	void *function_index;	/* private */

	struct profile_location *locations;	/* locations[id - 1] */
	size_t nlocations, locations_cap;
	void *location_index;	/* private */

	struct profile_value_type *value_types;
	size_t nvalue_types;
	size_t default_value;	/* index of the value reports show */

	struct profile_sample *samples;
	size_t nsamples, samples_cap;
	uint64_t *loc_pool;
	size_t nloc_pool, loc_pool_cap;
	struct profile_label *label_pool;
	size_t nlabel_pool, label_pool_cap;
	int64_t *value_pool;
	size_t nvalue_pool, value_pool_cap;

	struct profile_value_type period_type;
	int64_t period;
	int64_t time_nanos;	/* start, Unix epoch ns */
	int64_t duration_nanos;

	str_id *comments;	/* free-form "key: value" lines */
	size_t ncomments, comments_cap;

	const char *error;	/* why P is incomplete, or NULL (static text) */
};

/* A new empty profile; never NULL. */
struct profile *profile_new(void);
void profile_free(struct profile *p);

/*
 * Why P is incomplete, or NULL: "too many strings" (or functions,
 * locations: ids are 32-bit) or "sample too large".  Adding to a full
 * table returns id 0 ("" or "none") and adding an oversized sample adds
 * nothing; the first such failure is kept here, so that whoever builds a
 * profile can check once, at the end, and report it.  Nothing here exits.
 */
const char *profile_error(const struct profile *p);

/* Intern a string (copied); returns its id.  NULL interns as "". */
str_id profile_intern(struct profile *p, const char *s);
/* The string behind an id; "" for 0 or an id out of range. */
const char *profile_str(const struct profile *p, str_id id);

/* The id of the function with these fields, added when new. */
uint64_t profile_function(struct profile *p, const char *name,
    const char *system_name, const char *filename, int64_t start_line);
/* The id of the location (function, line), added when new. */
uint64_t profile_location(struct profile *p, uint64_t function, int64_t line);

/* Set the sample types ("samples"/"count", "cpu"/"nanoseconds", ...).
 * Must be called before the first sample; default_value becomes the last. */
void profile_set_value_types(struct profile *p, size_t n,
    const char *const *types, const char *const *units);

/* Append a sample.  locs is leaf first; values has nvalue_types entries.
 * Samples are not merged here: writers aggregate as their format needs.
 * Returns 0, or -1 (nothing added, profile_error() set) when it has more
 * than UINT32_MAX locations or labels. */
int profile_add_sample(struct profile *p, const uint64_t *locs, size_t nlocs,
    const int64_t *values, const struct profile_label *labels, size_t nlabels);

/*
 * The keys of the "key: value" comments rperf writes into a profile and
 * reads back (pprof keeps them as comments, so they survive conversion).
 * Writers build "KEY: VALUE" from these; readers look them up by them.
 */
#define PROFILE_COMMENT_RPERF "rperf"		/* rperf's version */
#define PROFILE_COMMENT_RUBY "ruby"		/* Ruby's version */
#define PROFILE_COMMENT_COMMAND "command"	/* the command line */
#define PROFILE_COMMENT_MODE "mode"		/* "cpu" or "wall" */
#define PROFILE_COMMENT_FREQUENCY "frequency"	/* in Hz */
#define PROFILE_COMMENT_SAMPLES "samples"	/* samples taken */
#define PROFILE_COMMENT_TRIGGERS "triggers"	/* timer triggers */
#define PROFILE_COMMENT_THREADS "threads"	/* threads seen */
/* cpu mode: the process's CPU time while sampling (ns), and how much of
 * it no sample bills, rperf's own thread aside */
#define PROFILE_COMMENT_PROCESS_CPU "process cpu"
#define PROFILE_COMMENT_UNATTRIBUTED "unattributed"
#define PROFILE_COMMENT_PROCESS "process"	/* a pid merged in */
#define PROFILE_COMMENT_MISSING_PROCESS "missing process"
#define PROFILE_COMMENT_FILTERS "filters"	/* report's filters */
#define PROFILE_COMMENT_ALLOC_RATE "alloc rate"	/* mean allocations a sample */
#define PROFILE_COMMENT_ALLOC_SAMPLES "alloc samples"	/* allocations sampled */
/* rperf report --from/--to: the time window kept. */
#define PROFILE_COMMENT_WINDOW "window"
/* --timeline-max reached: what was kept with its time. */
#define PROFILE_COMMENT_TIMELINE_FULL "timeline full"
/* A capture's own (Rperf.capture_end's meta): "capture KEY: VALUE". */
#define PROFILE_COMMENT_CAPTURE "capture "
#define PROFILE_COMMENT_ALLOC_MOVED "alloc moved"	/* followed through GC compaction */

/* Append a comment line (copied). */
void profile_add_comment(struct profile *p, const char *comment);
/* Append the comment "KEY: VALUE", VALUE formatted from FMT. */
void profile_add_meta(struct profile *p, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The value of the first comment "key: value" with this key, or NULL. */
const char *profile_comment_value(const struct profile *p, const char *key);
/* Remove every "KEY: value" comment of P. */
void profile_drop_meta(struct profile *p, const char *key);
/* The value of COMMENT when it is "KEY: value" (blanks after the colon
 * skipped), else NULL. */
const char *profile_comment_match(const char *comment, const char *key);

/* Accessors for a sample. */
const uint64_t *profile_sample_locs(const struct profile *p,
    const struct profile_sample *s);
const int64_t *profile_sample_values(const struct profile *p,
    const struct profile_sample *s);
const struct profile_label *profile_sample_labels(const struct profile *p,
    const struct profile_sample *s);
/* The VM state of sample S: the first string %GVL and %GC labels and
 * which of profile_states they are. */
struct profile_vm_state profile_sample_state(const struct profile *p,
    const struct profile_sample *s);
/* Whether label KEY is one of rperf's own (thread, thread_name,
 * timestamp, the VM states) rather than one that groups samples. */
int profile_label_is_builtin(const char *key);
/* The string value of label KEY on sample S, or NULL. */
const char *profile_sample_label_str(const struct profile *p,
    const struct profile_sample *s, const char *key);

/*
 * Append every sample of SRC to DST, carrying its functions, locations
 * and strings over, and with the numeric label KEY=VALUE (replacing any
 * KEY it had) when KEY is not NULL.  Value types are matched by position;
 * -1 when SRC has not as many as DST, or when DST could not take all of
 * SRC (profile_error()).  With KEY (a process merged in), SRC's sample
 * times ("timestamp") move onto DST's clock and its marks ("mark: 0 ...")
 * come along with VALUE in place of the 0.
 */
int profile_merge(struct profile *dst, const struct profile *src, const char *key,
    int64_t value);
/* A new profile with P's value types, period, times and comments (not
 * its marks, which come with its samples), and no samples: the base to
 * merge profiles into. */
struct profile *profile_new_like(const struct profile *p);

/* The index of the value to report: VI when it is one of P's values,
 * else P's default. */
size_t profile_value_index(const struct profile *p, size_t vi);

/* The index of P's sample type NAME ("alloc_space"), or of the value
 * numbered NAME ("0" is the first), as pprof's -sample_index takes it,
 * in *VI; 0, or -1 when P has no such type. */
int profile_value_by_name(const struct profile *p, const char *name, size_t *vi);

/* Sum of value VALUE_INDEX over all samples (saturating). */
int64_t profile_total(const struct profile *p, size_t value_index);

/* Additions for the readers and writers (data side). */

/* Intern LEN bytes of S (need not end in NUL; stops at an embedded NUL). */
str_id profile_intern_len(struct profile *p, const char *s, size_t len);
/* profile_function() with the strings already interned. */
uint64_t profile_function_ids(struct profile *p, str_id name,
    str_id system_name, str_id filename, int64_t start_line);
/* The first label KEY (string or numeric) on sample S, or NULL. */
const struct profile_label *profile_sample_label(const struct profile *p,
    const struct profile_sample *s, const char *key);
/* The function id of location LOCATION, or 0 when either id is invalid:
 * how writers walk a stack that a reader may have filled with junk. */
uint64_t profile_location_function_id(const struct profile *p,
    uint64_t location);
/* The function of location LOCATION, or NULL when either id is invalid. */
const struct profile_function *profile_location_function(
    const struct profile *p, uint64_t location);
/* X finalised into a well-mixed 64-bit hash (splitmix64's finaliser):
 * what every open-addressing index of the data side hashes keys with. */
uint64_t profile_mix(uint64_t x);
/* A + B, clamped to the int64_t range instead of overflowing.  Inline:
 * the report's and the browser's sums call it once a frame. */
static inline int64_t
profile_add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}
/* Roughly the bytes P holds on the heap (arrays by capacity, indexes, a
 * minimum per string): what readers weigh against a memory budget. */
size_t profile_footprint(const struct profile *p);

#endif
