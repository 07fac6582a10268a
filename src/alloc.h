/*
 * alloc.h: the arithmetic of allocation sampling and the table of live
 * sampled objects, in plain C so they are unit-tested without Ruby.
 *
 * Sampling: each allocation is sampled with probability 1/R, R the mean
 * rate (--alloc-rate).  Rather than a coin per allocation, the distance
 * to the next sampled allocation is drawn from the geometric distribution
 * of mean R (the gaps of that Bernoulli process), so the hook only counts
 * down, and no periodic allocation pattern can alias with the sampling.
 * Each sampled object then stands for R objects and R times its bytes
 * (alloc_scale): the Horvitz-Thompson estimate, unbiased because the
 * chance of being sampled, 1/R, is the same for every object whatever
 * its size.  (Go samples by bytes, so a large object is likelier to be
 * sampled, and scales by 1/(1 - exp(-s/R)) instead.)
 *
 * The live table maps an object's address to its site and size, by open
 * addressing with linear probing and backward-shift deletion (no
 * tombstones, so a table that churns stays short).  Nothing here allocates
 * but alloc_live_init, alloc_live_grow and alloc_live_rehash: the VM's
 * allocation hook inserts without allocating while there is headroom
 * (alloc_live_room), and the table is grown outside it.
 */
#ifndef RPERF_ALLOC_H
#define RPERF_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* The default and the limits of --alloc-rate. */
#define ALLOC_DEFAULT_RATE	1024
#define ALLOC_MAX_RATE		1000000000

/* xorshift64*: cheap, no state but one word, good enough for gaps. */
struct alloc_rng {
	uint64_t s;
};

/* Seed RNG from SEED (any value, 0 included). */
void alloc_rng_seed(struct alloc_rng *rng, uint64_t seed);
/* The next 64 random bits. */
uint64_t alloc_rng_next(struct alloc_rng *rng);
/* A uniform double in (0, 1]: never 0, so its log is finite. */
double alloc_rng_unit(struct alloc_rng *rng);

/*
 * The number of allocations up to and including the next sampled one:
 * geometric on 1, 2, ... with mean RATE (P(D > k) = (1 - 1/RATE)^k),
 * drawn by inverting its distribution.  RATE <= 1: always 1.
 */
int64_t alloc_next_distance(struct alloc_rng *rng, double rate);

/* What one sampled object of SIZE bytes stands for at RATE (see above). */
struct alloc_scaled {
	int64_t objects;
	int64_t bytes;
};
struct alloc_scaled alloc_scale(double rate, int64_t size);

/* One live sampled object. */
struct alloc_live_entry {
	uintptr_t key;		/* its address; 0: an empty bucket */
	uint32_t site;		/* who allocated it (the caller's index) */
	uint32_t flags;		/* the caller's */
	int64_t size;		/* its bytes, once measured (the caller's) */
};

struct alloc_live {
	struct alloc_live_entry *buckets;
	size_t nbuckets;	/* a power of two, 2^(64 - shift) */
	unsigned shift;
	size_t count;
};

/* The home bucket of KEY: Fibonacci hashing (the product's top bits),
 * two instructions, as the free hook asks for every object freed. */
static inline size_t
alloc_live_home(const struct alloc_live *t, uintptr_t key)
{
	return (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> t->shift);
}

/* Whether KEY may be in T: 0 when its home bucket is empty (then it is
 * not; the table is kept at most a quarter full, so that is the common
 * answer for an object that was not sampled). */
static inline int
alloc_live_may_have(const struct alloc_live *t, uintptr_t key)
{
	return t->count != 0 && t->buckets[alloc_live_home(t, key)].key != 0;
}

/* An empty table of at least CAP buckets (rounded up to a power of two). */
void alloc_live_init(struct alloc_live *t, size_t cap);
void alloc_live_release(struct alloc_live *t);
/* Whether N more entries fit under the highest load (7/8). */
int alloc_live_room(const struct alloc_live *t, size_t n);
/* Whether the table is past its comfortable load (1/4): grow it soon. */
int alloc_live_crowded(const struct alloc_live *t);
/* Double the buckets (allocates). */
void alloc_live_grow(struct alloc_live *t);
/* The entry of KEY, or NULL. */
struct alloc_live_entry *alloc_live_find(struct alloc_live *t, uintptr_t key);
/* Add KEY (not 0, not present) with SITE, FLAGS and SIZE; the entry, or
 * NULL when there is no room (see alloc_live_room): never allocates. */
struct alloc_live_entry *alloc_live_insert(struct alloc_live *t, uintptr_t key,
    uint32_t site, uint32_t flags, int64_t size);
/* Remove KEY, copying its entry to *OUT (may be NULL); 1 if it was there. */
int alloc_live_remove(struct alloc_live *t, uintptr_t key, struct alloc_live_entry *out);
/*
 * Give every entry the key MOVE(key, arg) (objects moved by a compacting
 * GC); the table is rebuilt (allocates) when any key changed.  The
 * number of keys that changed.
 */
size_t alloc_live_rekey(struct alloc_live *t, uintptr_t (*move)(uintptr_t, void *),
    void *arg);

#endif
