/*
 * profile.c: the in-memory profile model (see profile.h).
 *
 * Owns the string table, the function and location tables and the sample
 * pools, and the three open-addressing hash indexes that keep strings,
 * functions and locations unique, so that interning stays O(1) however
 * large the profile grows.  The indexes store only ids and hash the table
 * entries they point at, so a table and its index never disagree.  No I/O
 * and no format knowledge here: readers and writers live in their own files.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "xmalloc.h"

/* How many of the last samples a new one may share its locations with. */
#define PROFILE_SHARE_BACK 4

/* An open-addressing (linear probing) set of ids; slot value 0 is empty. */
struct profile_hash {
	uint32_t *slots;
	size_t cap;		/* a power of two, or 0 before first use */
	size_t n;
};

/* Hashes table entry ID of P. */
typedef uint64_t (*profile_hash_of_fn)(const struct profile *, uint32_t);
/* Whether table entry ID of P equals KEY. */
typedef int (*profile_hash_eq_fn)(const struct profile *, uint32_t,
    const void *);

/* The key of a string lookup: bytes that need not end in NUL. */
struct profile_string_key {
	const char *s;
	size_t len;
};

/* The key of a function lookup: strings already interned. */
struct profile_function_key {
	str_id name, system_name, filename;
	int64_t start_line;
};

const struct profile_state profile_states[PROFILE_NSTATES] = {
	[PROFILE_STATE_GVL_BLOCKED] = { PROFILE_LABEL_GVL, "blocked",
	    "[GVL blocked]", "GVL blocked (%GVL=blocked)" },
	[PROFILE_STATE_GVL_WAIT] = { PROFILE_LABEL_GVL, "wait",
	    "[GVL wait]", "GVL wait (%GVL=wait)" },
	[PROFILE_STATE_GC_MARK] = { PROFILE_LABEL_GC, "mark",
	    "[GC marking]", "GC marking (%GC=mark)" },
	[PROFILE_STATE_GC_SWEEP] = { PROFILE_LABEL_GC, "sweep",
	    "[GC sweeping]", "GC sweeping (%GC=sweep)" },
};

/* Finalise a 64-bit value into a well-mixed hash (splitmix64). */
uint64_t
profile_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* FNV-1a over LEN bytes of S. */
static uint64_t
profile_hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Hash of a function key. */
static uint64_t
profile_hash_function_key(const struct profile_function_key *k)
{
	uint64_t h;

	h = profile_mix(k->name);
	h = profile_mix(h ^ k->system_name);
	h = profile_mix(h ^ k->filename);
	return profile_mix(h ^ (uint64_t)k->start_line);
}

/* Hash of a location (function, line). */
static uint64_t
profile_hash_location_key(uint64_t function, int64_t line)
{
	return profile_mix(profile_mix(function) ^ (uint64_t)line);
}

/* Hash of string ID. */
static uint64_t
profile_hash_string_id(const struct profile *p, uint32_t id)
{
	const char *s = p->strings[id];

	return profile_hash_bytes(s, strlen(s));
}

/* Hash of function ID. */
static uint64_t
profile_hash_function_id(const struct profile *p, uint32_t id)
{
	const struct profile_function *f = &p->functions[id - 1];
	struct profile_function_key k;

	k.name = f->name;
	k.system_name = f->system_name;
	k.filename = f->filename;
	k.start_line = f->start_line;
	return profile_hash_function_key(&k);
}

/* Hash of location ID. */
static uint64_t
profile_hash_location_id(const struct profile *p, uint32_t id)
{
	const struct profile_location *l = &p->locations[id - 1];

	return profile_hash_location_key(l->function, l->line);
}

/* Find the slot holding an entry equal to KEY, or the empty slot for it. */
static uint32_t *
profile_hash_slot(struct profile_hash *t, const struct profile *p,
    uint64_t h, profile_hash_eq_fn eq, const void *key)
{
	size_t mask = t->cap - 1, i = h & mask;

	for (;;) {
		uint32_t id = t->slots[i];

		if (id == 0 || eq(p, id, key))
			return &t->slots[i];
		i = (i + 1) & mask;
	}
}

/* Make room for one more id, rehashing every entry when growing. */
static void
profile_hash_reserve(struct profile_hash *t, const struct profile *p,
    profile_hash_of_fn hash_of)
{
	uint32_t *old = t->slots;
	size_t oldcap = t->cap, i, j, mask;

	if (t->cap != 0 && (t->n + 1) * 4 <= t->cap * 3)
		return;
	t->cap = oldcap ? oldcap * 2 : 64;
	t->slots = xcalloc(t->cap, sizeof *t->slots);
	mask = t->cap - 1;
	for (i = 0; i < oldcap; i++) {
		if (old[i] == 0)
			continue;
		j = hash_of(p, old[i]) & mask;
		while (t->slots[j] != 0)
			j = (j + 1) & mask;
		t->slots[j] = old[i];
	}
	free(old);
}

/* Free an index. */
static void
profile_hash_free(void *v)
{
	struct profile_hash *t = v;

	if (t != NULL) {
		free(t->slots);
		free(t);
	}
}

/* Whether a table of N entries may grow by one, ids being 32-bit; when
 * not, P remembers MESSAGE (no real profile comes near it). */
static int
profile_check_count(struct profile *p, size_t n, const char *message)
{
	if (n < UINT32_MAX)
		return 0;
	if (p->error == NULL)
		p->error = message;
	return -1;
}

/* Whether string ID equals the LEN bytes at KEY->s. */
static int
profile_eq_string(const struct profile *p, uint32_t id, const void *key)
{
	const struct profile_string_key *k = key;
	const char *s = p->strings[id];

	return strncmp(s, k->s, k->len) == 0 && s[k->len] == '\0';
}

/* Whether function ID has the fields of KEY. */
static int
profile_eq_function(const struct profile *p, uint32_t id, const void *key)
{
	const struct profile_function_key *k = key;
	const struct profile_function *f = &p->functions[id - 1];

	return f->name == k->name && f->system_name == k->system_name &&
	    f->filename == k->filename && f->start_line == k->start_line;
}

/* Whether location ID is KEY. */
static int
profile_eq_location(const struct profile *p, uint32_t id, const void *key)
{
	const struct profile_location *k = key;
	const struct profile_location *l = &p->locations[id - 1];

	return l->function == k->function && l->line == k->line;
}

/*
 * The strings of a profile are kept in blocks, not one allocation each:
 * a profile interns thousands of names, files and label values, and its
 * strings are freed all at once.  In a forked child each small malloc
 * took a chunk off the parent's free lists, writing a page of the
 * parent's heap that was then copied.  The first block is small (a
 * child's profile has a few hundred strings); each next one doubles, up
 * to PROFILE_STRING_BLOCK_MAX; a longer string gets a block of its own.
 */
#define PROFILE_STRING_BLOCK_FIRST	4000
#define PROFILE_STRING_BLOCK_MAX	(256 * 1024)

struct profile_string_block {
	struct profile_string_block *next;
	size_t used, cap;
	char data[];
};

/* A new block of CAP bytes for P's strings (not linked yet). */
static struct profile_string_block *
profile_string_block_new(struct profile *p, size_t cap)
{
	struct profile_string_block *b = xmalloc(sizeof *b + cap);

	b->next = NULL;
	b->used = 0;
	b->cap = cap;
	p->string_bytes += sizeof *b + cap;
	return b;
}

/* A copy of S (LEN bytes, with no NUL) kept in P's blocks.  Strings go
 * into the first block; one too long for the next block gets a block of
 * its own, behind the first, which keeps its room. */
static char *
profile_string_keep(struct profile *p, const char *s, size_t len)
{
	struct profile_string_block *head = p->string_blocks, *b = head;
	size_t cap;
	char *copy;

	if (b == NULL || b->cap - b->used < len + 1) {
		cap = head == NULL ? PROFILE_STRING_BLOCK_FIRST : head->cap * 2;
		if (cap > PROFILE_STRING_BLOCK_MAX)
			cap = PROFILE_STRING_BLOCK_MAX;
		if (len + 1 > cap && head != NULL) {
			b = profile_string_block_new(p, len + 1);
			b->next = head->next;
			head->next = b;
		} else {
			b = profile_string_block_new(p, len + 1 > cap ? len + 1 : cap);
			b->next = head;
			p->string_blocks = b;
		}
	}
	copy = b->data + b->used;
	memcpy(copy, s, len);
	copy[len] = '\0';
	b->used += len + 1;
	return copy;
}

struct profile *
profile_new(void)
{
	struct profile *p = xcalloc(1, sizeof *p);

	p->strings_cap = 64;
	p->strings = xcalloc(p->strings_cap, sizeof *p->strings);
	p->strings[0] = profile_string_keep(p, "", 0);
	p->nstrings = 1;
	p->string_index = xcalloc(1, sizeof(struct profile_hash));
	p->function_index = xcalloc(1, sizeof(struct profile_hash));
	p->location_index = xcalloc(1, sizeof(struct profile_hash));
	return p;
}

void
profile_free(struct profile *p)
{
	if (p == NULL)
		return;
	while (p->string_blocks != NULL) {
		struct profile_string_block *b = p->string_blocks;

		p->string_blocks = b->next;
		free(b);
	}
	free(p->strings);
	profile_hash_free(p->string_index);
	free(p->functions);
	profile_hash_free(p->function_index);
	free(p->locations);
	profile_hash_free(p->location_index);
	free(p->value_types);
	free(p->samples);
	free(p->loc_pool);
	free(p->label_pool);
	free(p->value_pool);
	free(p->comments);
	free(p);
}

str_id
profile_intern_len(struct profile *p, const char *s, size_t len)
{
	struct profile_hash *t = p->string_index;
	struct profile_string_key k;
	uint32_t *slot;
	void *v;

	if (s == NULL || len == 0)
		return 0;
	if (memchr(s, '\0', len) != NULL)
		len = strlen(s);
	k.s = s;
	k.len = len;
	profile_hash_reserve(t, p, profile_hash_string_id);
	slot = profile_hash_slot(t, p, profile_hash_bytes(s, len),
	    profile_eq_string, &k);
	if (*slot != 0)
		return *slot;

	if (profile_check_count(p, p->nstrings, "too many strings") != 0)
		return 0;
	v = p->strings;
	xgrow(&v, &p->strings_cap, p->nstrings + 1, sizeof *p->strings);
	p->strings = v;
	p->strings[p->nstrings] = profile_string_keep(p, s, len);
	*slot = (uint32_t)p->nstrings;
	t->n++;
	return (str_id)p->nstrings++;
}

str_id
profile_intern(struct profile *p, const char *s)
{
	if (s == NULL)
		return 0;
	return profile_intern_len(p, s, strlen(s));
}

/* Why P is incomplete, or NULL. */
const char *
profile_error(const struct profile *p)
{
	return p->error;
}

const char *
profile_str(const struct profile *p, str_id id)
{
	if (id >= p->nstrings)
		return "";
	return p->strings[id];
}

uint64_t
profile_function_ids(struct profile *p, str_id name, str_id system_name,
    str_id filename, int64_t start_line)
{
	struct profile_hash *t = p->function_index;
	struct profile_function_key k;
	struct profile_function *f;
	uint32_t *slot;
	void *v;

	k.name = name;
	k.system_name = system_name;
	k.filename = filename;
	k.start_line = start_line;
	profile_hash_reserve(t, p, profile_hash_function_id);
	slot = profile_hash_slot(t, p, profile_hash_function_key(&k),
	    profile_eq_function, &k);
	if (*slot != 0)
		return *slot;

	if (profile_check_count(p, p->nfunctions + 1,
	    "too many functions") != 0)
		return 0;
	v = p->functions;
	xgrow(&v, &p->functions_cap, p->nfunctions + 1, sizeof *p->functions);
	p->functions = v;
	f = &p->functions[p->nfunctions++];
	f->name = name;
	f->system_name = system_name;
	f->filename = filename;
	f->start_line = start_line;
	*slot = (uint32_t)p->nfunctions;
	t->n++;
	return p->nfunctions;
}

uint64_t
profile_function(struct profile *p, const char *name,
    const char *system_name, const char *filename, int64_t start_line)
{
	str_id n = profile_intern(p, name);
	str_id sn = profile_intern(p, system_name);
	str_id fn = profile_intern(p, filename);

	return profile_function_ids(p, n, sn, fn, start_line);
}

uint64_t
profile_location(struct profile *p, uint64_t function, int64_t line)
{
	struct profile_hash *t = p->location_index;
	struct profile_location k, *l;
	uint32_t *slot;
	void *v;

	k.function = function;
	k.line = line;
	profile_hash_reserve(t, p, profile_hash_location_id);
	slot = profile_hash_slot(t, p, profile_hash_location_key(function,
	    line), profile_eq_location, &k);
	if (*slot != 0)
		return *slot;

	if (profile_check_count(p, p->nlocations + 1,
	    "too many locations") != 0)
		return 0;
	v = p->locations;
	xgrow(&v, &p->locations_cap, p->nlocations + 1, sizeof *p->locations);
	p->locations = v;
	l = &p->locations[p->nlocations++];
	*l = k;
	*slot = (uint32_t)p->nlocations;
	t->n++;
	return p->nlocations;
}

void
profile_set_value_types(struct profile *p, size_t n,
    const char *const *types, const char *const *units)
{
	size_t i;

	if (p->nsamples != 0) {
		fprintf(stderr, "rperf: value types set after samples\n");
		abort();
	}
	free(p->value_types);
	p->value_types = n ? xcalloc(n, sizeof *p->value_types) : NULL;
	for (i = 0; i < n; i++) {
		p->value_types[i].type = profile_intern(p, types[i]);
		p->value_types[i].unit = profile_intern(p, units[i]);
	}
	p->nvalue_types = n;
	p->default_value = n ? n - 1 : 0;
}

/*
 * Whether the NLOCS locations LOCS are those of one of the last few
 * samples added (then *OFF is where they are in the pool): a timeline
 * adds a sample for each tick, most of them at the stack of the
 * thread's tick before, and a deep stack's list was most of the
 * profile's memory.  The pool is never written but at its end, so
 * samples may share a list.
 */
static int
profile_shared_locs(const struct profile *p, const uint64_t *locs, size_t nlocs,
    size_t *off)
{
	size_t i, n = p->nsamples - 1;	/* the new sample is counted already */

	for (i = 0; i < PROFILE_SHARE_BACK && i < n; i++) {
		const struct profile_sample *o = &p->samples[n - 1 - i];

		if (o->nloc == nlocs &&
		    memcmp(p->loc_pool + o->loc_off, locs, nlocs * sizeof *locs) == 0) {
			*off = o->loc_off;
			return 1;
		}
	}
	return 0;
}

int
profile_add_sample(struct profile *p, const uint64_t *locs, size_t nlocs,
    const int64_t *values, const struct profile_label *labels, size_t nlabels)
{
	struct profile_sample *s;
	void *v;

	if (nlocs > UINT32_MAX || nlabels > UINT32_MAX) {
		if (p->error == NULL)
			p->error = "sample too large";
		return -1;
	}
	v = p->samples;
	xgrow(&v, &p->samples_cap, p->nsamples + 1, sizeof *p->samples);
	p->samples = v;
	s = &p->samples[p->nsamples++];

	s->loc_off = p->nloc_pool;
	s->nloc = (uint32_t)nlocs;
	if (nlocs != 0 && profile_shared_locs(p, locs, nlocs, &s->loc_off)) {
		/* The same list as a recent sample's: shared (see above). */
	} else if (nlocs != 0) {
		v = p->loc_pool;
		xgrow(&v, &p->loc_pool_cap, p->nloc_pool + nlocs,
		    sizeof *p->loc_pool);
		p->loc_pool = v;
		memcpy(p->loc_pool + p->nloc_pool, locs, nlocs * sizeof *locs);
		p->nloc_pool += nlocs;
	}

	s->label_off = p->nlabel_pool;
	s->nlabel = (uint32_t)nlabels;
	if (nlabels != 0) {
		v = p->label_pool;
		xgrow(&v, &p->label_pool_cap, p->nlabel_pool + nlabels,
		    sizeof *p->label_pool);
		p->label_pool = v;
		memcpy(p->label_pool + p->nlabel_pool, labels,
		    nlabels * sizeof *labels);
		p->nlabel_pool += nlabels;
	}

	s->value_off = p->nvalue_pool;
	if (p->nvalue_types != 0) {
		v = p->value_pool;
		xgrow(&v, &p->value_pool_cap, p->nvalue_pool + p->nvalue_types,
		    sizeof *p->value_pool);
		p->value_pool = v;
		memcpy(p->value_pool + p->nvalue_pool, values,
		    p->nvalue_types * sizeof *values);
		p->nvalue_pool += p->nvalue_types;
	}
	return 0;
}

void
profile_add_comment(struct profile *p, const char *comment)
{
	str_id id = profile_intern(p, comment);
	void *v = p->comments;

	xgrow(&v, &p->comments_cap, p->ncomments + 1, sizeof *p->comments);
	p->comments = v;
	p->comments[p->ncomments++] = id;
}

/* Append "KEY: VALUE". */
void
profile_add_meta(struct profile *p, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *value, *line;

	va_start(ap, fmt);
	if (vasprintf(&value, fmt, ap) < 0)
		value = NULL;
	va_end(ap);
	line = xasprintf("%s: %s", key, value != NULL ? value : "");
	free(value);
	profile_add_comment(p, line);
	free(line);
}

/* The value of COMMENT when its key is KEY, or NULL. */
const char *
profile_comment_match(const char *comment, const char *key)
{
	size_t keylen = strlen(key);
	const char *c = comment;

	if (strncmp(c, key, keylen) != 0 || c[keylen] != ':')
		return NULL;
	c += keylen + 1;
	while (*c == ' ' || *c == '\t')
		c++;
	return c;
}

const char *
profile_comment_value(const struct profile *p, const char *key)
{
	const char *v;
	size_t i;

	for (i = 0; i < p->ncomments; i++) {
		v = profile_comment_match(profile_str(p, p->comments[i]), key);
		if (v != NULL)
			return v;
	}
	return NULL;
}

void
profile_drop_meta(struct profile *p, const char *key)
{
	size_t i, n = 0;

	for (i = 0; i < p->ncomments; i++) {
		if (profile_comment_match(profile_str(p, p->comments[i]), key) == NULL)
			p->comments[n++] = p->comments[i];
	}
	p->ncomments = n;
}

const uint64_t *
profile_sample_locs(const struct profile *p, const struct profile_sample *s)
{
	/* An empty pool is NULL, and NULL + 0 is undefined. */
	return p->loc_pool ? p->loc_pool + s->loc_off : NULL;
}

const int64_t *
profile_sample_values(const struct profile *p, const struct profile_sample *s)
{
	/* An empty pool is NULL, and NULL + 0 is undefined. */
	return p->value_pool ? p->value_pool + s->value_off : NULL;
}

const struct profile_label *
profile_sample_labels(const struct profile *p, const struct profile_sample *s)
{
	/* An empty pool is NULL, and NULL + 0 is undefined. */
	return p->label_pool ? p->label_pool + s->label_off : NULL;
}

const char *
profile_sample_label_str(const struct profile *p,
    const struct profile_sample *s, const char *key)
{
	const struct profile_label *l = profile_sample_labels(p, s);
	uint32_t i;

	for (i = 0; i < s->nlabel; i++) {
		if (l[i].str != 0 && strcmp(profile_str(p, l[i].key), key) == 0)
			return profile_str(p, l[i].str);
	}
	return NULL;
}

/* The profile_states index of label KEY=VALUE, or -1. */
static int
profile_state_index(const char *key, const char *value)
{
	int i;

	if (value == NULL)
		return -1;
	for (i = 0; i < PROFILE_NSTATES; i++) {
		if (strcmp(profile_states[i].key, key) == 0 &&
		    strcmp(profile_states[i].value, value) == 0)
			return i;
	}
	return -1;
}

/* The %GVL and %GC labels of S and the states they name. */
struct profile_vm_state
profile_sample_state(const struct profile *p, const struct profile_sample *s)
{
	const struct profile_label *l = profile_sample_labels(p, s);
	struct profile_vm_state st = { NULL, NULL, -1, -1 };
	uint32_t i;

	for (i = 0; i < s->nlabel; i++) {
		const char *key;

		if (l[i].str == 0)
			continue;
		key = profile_str(p, l[i].key);
		if (key[0] != '%')
			continue;
		if (st.gvl == NULL && strcmp(key, PROFILE_LABEL_GVL) == 0)
			st.gvl = profile_str(p, l[i].str);
		else if (st.gc == NULL && strcmp(key, PROFILE_LABEL_GC) == 0)
			st.gc = profile_str(p, l[i].str);
	}
	st.gvl_state = profile_state_index(PROFILE_LABEL_GVL, st.gvl);
	st.gc_state = profile_state_index(PROFILE_LABEL_GC, st.gc);
	return st;
}

const struct profile_label *
profile_sample_label(const struct profile *p, const struct profile_sample *s,
    const char *key)
{
	const struct profile_label *l = profile_sample_labels(p, s);
	uint32_t i;

	for (i = 0; i < s->nlabel; i++) {
		if (strcmp(profile_str(p, l[i].key), key) == 0)
			return &l[i];
	}
	return NULL;
}

/* The function id of LOCATION, or 0 when either id is invalid. */
uint64_t
profile_location_function_id(const struct profile *p, uint64_t location)
{
	const struct profile_location *l;

	if (location == 0 || location > p->nlocations)
		return 0;
	l = &p->locations[location - 1];
	if (l->function == 0 || l->function > p->nfunctions)
		return 0;
	return l->function;
}

const struct profile_function *
profile_location_function(const struct profile *p, uint64_t location)
{
	uint64_t fn = profile_location_function_id(p, location);

	return fn == 0 ? NULL : &p->functions[fn - 1];
}

/* VI when it is one of P's values, else P's default. */
size_t
profile_value_index(const struct profile *p, size_t vi)
{
	return vi < p->nvalue_types ? vi : p->default_value;
}

/* The index of sample type NAME, or of value number NAME. */
int
profile_value_by_name(const struct profile *p, const char *name, size_t *vi)
{
	size_t i;
	char *end;
	unsigned long n;

	for (i = 0; i < p->nvalue_types; i++) {
		if (strcmp(profile_str(p, p->value_types[i].type), name) == 0) {
			*vi = i;
			return 0;
		}
	}
	if (*name >= '0' && *name <= '9') {
		n = strtoul(name, &end, 10);
		if (*end == '\0' && n < p->nvalue_types) {
			*vi = (size_t)n;
			return 0;
		}
	}
	return -1;
}

int64_t
profile_total(const struct profile *p, size_t value_index)
{
	int64_t total = 0;
	size_t i;

	if (value_index >= p->nvalue_types)
		return 0;
	for (i = 0; i < p->nsamples; i++) {
		const int64_t *v = profile_sample_values(p, &p->samples[i]);

		total = profile_add_sat(total, v[value_index]);
	}
	return total;
}

/*
 * Append every sample of SRC to DST, with its functions, locations and
 * strings carried over, plus the numeric label KEY=VALUE when KEY is not
 * NULL.  Value types are matched by position; SRC must have as many as
 * DST (else -1 and nothing is added).
 */
int
profile_merge(struct profile *dst, const struct profile *src, const char *key, int64_t value)
{
	uint64_t *locmap, *locs = NULL;
	struct profile_label *labels = NULL;
	size_t i, j, nlocs_cap = 0, nlabels_cap = 0;
	/* A process merged in: its sample times (--timeline) and marks move
	 * onto DST's clock, its marks get its KEY (pid). */
	int64_t shift = key != NULL && src->time_nanos > 0 && dst->time_nanos > 0 ?
	    src->time_nanos - dst->time_nanos : 0;

	if (src->nvalue_types != dst->nvalue_types)
		return -1;
	for (i = 0; key != NULL && i < src->ncomments; i++) {
		const char *c = profile_str(src, src->comments[i]);
		long long thread, start, end;
		int off = 0;

		if (strncmp(c, "mark: 0 ", 8) != 0 ||
		    sscanf(c + 8, "%lld %lld %lld %n", &thread, &start, &end, &off) != 3 ||
		    off == 0)
			continue;
		start += shift;
		end += shift;
		profile_add_meta(dst, "mark", "%lld %lld %lld %lld %s", (long long)value, thread,
		    start > 0 ? start : 0, end > 0 ? end : 0, c + 8 + off);
	}
	locmap = xcalloc(src->nlocations + 1, sizeof *locmap);
	for (i = 0; i < src->nlocations; i++) {
		const struct profile_location *l = &src->locations[i];
		const struct profile_function *f = &src->functions[l->function - 1];
		uint64_t fn;

		fn = profile_function(dst, profile_str(src, f->name),
		    profile_str(src, f->system_name), profile_str(src, f->filename),
		    f->start_line);
		locmap[i + 1] = profile_location(dst, fn, l->line);
	}
	for (i = 0; i < src->nsamples; i++) {
		const struct profile_sample *s = &src->samples[i];
		const uint64_t *sl = profile_sample_locs(src, s);
		const struct profile_label *lb = profile_sample_labels(src, s);
		size_t n = 0;

		xgrow((void **)&locs, &nlocs_cap, s->nloc + 1, sizeof *locs);
		for (j = 0; j < s->nloc; j++)
			locs[j] = locmap[sl[j]];
		xgrow((void **)&labels, &nlabels_cap, s->nlabel + 1, sizeof *labels);
		for (j = 0; j < s->nlabel; j++) {
			if (key != NULL && strcmp(profile_str(src, lb[j].key), key) == 0)
				continue;	/* ours replaces it */
			labels[n].key = profile_intern(dst, profile_str(src, lb[j].key));
			labels[n].str = lb[j].str ? profile_intern(dst, profile_str(src, lb[j].str)) : 0;
			labels[n].num = lb[j].num;
			if (shift != 0 && lb[j].str == 0 &&
			    strcmp(profile_str(src, lb[j].key), "timestamp") == 0)
				labels[n].num = profile_add_sat(lb[j].num, shift) > 0 ?
				    profile_add_sat(lb[j].num, shift) : 0;
			labels[n].num_unit = lb[j].num_unit ?
			    profile_intern(dst, profile_str(src, lb[j].num_unit)) : 0;
			n++;
		}
		if (key != NULL) {
			memset(&labels[n], 0, sizeof labels[n]);
			labels[n].key = profile_intern(dst, key);
			labels[n].num = value;
			n++;
		}
		profile_add_sample(dst, locs, s->nloc, profile_sample_values(src, s), labels, n);
	}
	free(locs);
	free(labels);
	free(locmap);
	return dst->error == NULL ? 0 : -1;
}

/* A new profile with P's value types, period, times and comments (but
 * the marks, which go with the samples), and no samples: the base to
 * merge profiles into. */
struct profile *
profile_new_like(const struct profile *p)
{
	struct profile *q = profile_new();
	const char **types = xcalloc(p->nvalue_types + 1, sizeof *types);
	const char **units = xcalloc(p->nvalue_types + 1, sizeof *units);
	size_t i;

	for (i = 0; i < p->nvalue_types; i++) {
		types[i] = profile_str(p, p->value_types[i].type);
		units[i] = profile_str(p, p->value_types[i].unit);
	}
	profile_set_value_types(q, p->nvalue_types, types, units);
	free(types);
	free(units);
	q->default_value = p->default_value;
	q->period_type.type = profile_intern(q, profile_str(p, p->period_type.type));
	q->period_type.unit = profile_intern(q, profile_str(p, p->period_type.unit));
	q->period = p->period;
	q->time_nanos = p->time_nanos;
	q->duration_nanos = p->duration_nanos;
	/* Not the marks: they come with the samples, by profile_merge. */
	for (i = 0; i < p->ncomments; i++) {
		if (strncmp(profile_str(p, p->comments[i]), "mark: ", 6) != 0)
			profile_add_comment(q, profile_str(p, p->comments[i]));
	}
	return q;
}

/* The bytes of an index's slot array. */
static size_t
profile_hash_footprint(const void *v)
{
	const struct profile_hash *t = v;

	return t == NULL ? 0 : t->cap * sizeof *t->slots;
}

size_t
profile_footprint(const struct profile *p)
{
	return sizeof *p + p->strings_cap * sizeof *p->strings + p->string_bytes +
	    profile_hash_footprint(p->string_index) +
	    p->functions_cap * sizeof *p->functions +
	    profile_hash_footprint(p->function_index) +
	    p->locations_cap * sizeof *p->locations +
	    profile_hash_footprint(p->location_index) +
	    p->samples_cap * sizeof *p->samples +
	    p->loc_pool_cap * sizeof *p->loc_pool +
	    p->label_pool_cap * sizeof *p->label_pool +
	    p->value_pool_cap * sizeof *p->value_pool +
	    p->comments_cap * sizeof *p->comments;
}

/* Whether label KEY is one rperf itself puts on samples for the thread
 * or the VM state tables ("thread", "thread_name", "timestamp", %GVL,
 * %GC), not one that groups samples (Rperf.label, pid, class). */
int
profile_label_is_builtin(const char *key)
{
	size_t i;

	if (strcmp(key, "thread") == 0 || strcmp(key, "thread_name") == 0 ||
	    strcmp(key, "timestamp") == 0)
		return 1;
	for (i = 0; i < PROFILE_NSTATES; i++) {
		if (strcmp(profile_states[i].key, key) == 0)
			return 1;
	}
	return 0;
}
