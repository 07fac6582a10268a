/*
 * alloc.c: the geometric sampling distance, the scaling of a sampled
 * object, and the open-addressing table of live sampled objects (see
 * alloc.h).  Plain C: the sampler's allocation hook calls into it in the
 * middle of Ruby's allocation, so nothing but init, grow and rekey may
 * allocate, and nothing here calls back into anything.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "profile.h"
#include "xmalloc.h"

/* Seed RNG (xorshift needs a nonzero state: mix the seed into one). */
void
alloc_rng_seed(struct alloc_rng *rng, uint64_t seed)
{
	rng->s = profile_mix(seed + 0x9e3779b97f4a7c15ULL);
	if (rng->s == 0)
		rng->s = 0x9e3779b97f4a7c15ULL;
}

/* xorshift64* (Vigna): three shifts and a multiply. */
uint64_t
alloc_rng_next(struct alloc_rng *rng)
{
	uint64_t x = rng->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* A uniform double in (0, 1]: the top 53 bits, plus one, over 2^53. */
double
alloc_rng_unit(struct alloc_rng *rng)
{
	return (double)((alloc_rng_next(rng) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* The distance to the next sampled allocation: 1 + floor(log U / log(1 - p)). */
int64_t
alloc_next_distance(struct alloc_rng *rng, double rate)
{
	double d;

	if (!(rate > 1))
		return 1;
	d = floor(log(alloc_rng_unit(rng)) / log1p(-1.0 / rate));
	if (!(d < 1e15))	/* U that small: astronomically rare */
		d = 1e15;
	return 1 + (int64_t)d;
}

/* One sampled object stands for RATE objects of its size. */
struct alloc_scaled
alloc_scale(double rate, int64_t size)
{
	struct alloc_scaled s;

	if (!(rate > 1))
		rate = 1;
	s.objects = (int64_t)llround(rate);
	s.bytes = (int64_t)llround(rate * (double)size);
	return s;
}

/* An empty table of at least CAP buckets. */
void
alloc_live_init(struct alloc_live *t, size_t cap)
{
	size_t n = 16;
	unsigned shift = 60;

	while (n < cap) {
		n *= 2;
		shift--;
	}
	t->buckets = xcalloc(n, sizeof *t->buckets);
	t->nbuckets = n;
	t->shift = shift;
	t->count = 0;
}

void
alloc_live_release(struct alloc_live *t)
{
	free(t->buckets);
	memset(t, 0, sizeof *t);
}

/* Whether N more fit under 7/8 load (probes stay short enough). */
int
alloc_live_room(const struct alloc_live *t, size_t n)
{
	return t->nbuckets > 0 && (t->count + n) * 8 <= t->nbuckets * 7;
}

/* Past a quarter full: grow at the next chance (a sparse table answers
 * most lookups of objects not in it at their first bucket). */
int
alloc_live_crowded(const struct alloc_live *t)
{
	return t->count * 4 > t->nbuckets;
}

/* Move every entry of T into NEW zeroed buckets, 2^(64 - SHIFT) of them. */
static void
alloc_live_move_all(struct alloc_live *t, struct alloc_live_entry *nb, unsigned shift)
{
	struct alloc_live old = *t;
	size_t i, j;

	t->buckets = nb;
	t->shift = shift;
	t->nbuckets = (size_t)1 << (64 - shift);
	for (i = 0; i < old.nbuckets; i++) {
		if (old.buckets[i].key == 0)
			continue;
		for (j = alloc_live_home(t, old.buckets[i].key); nb[j].key != 0;
		    j = (j + 1) & (t->nbuckets - 1))
			;
		nb[j] = old.buckets[i];
	}
	free(old.buckets);
}

/* Double the buckets. */
void
alloc_live_grow(struct alloc_live *t)
{
	alloc_live_move_all(t, xcalloc(t->nbuckets * 2, sizeof *t->buckets), t->shift - 1);
}

/* The entry of KEY, or NULL. */
struct alloc_live_entry *
alloc_live_find(struct alloc_live *t, uintptr_t key)
{
	size_t i;

	if (t->count == 0)
		return NULL;
	for (i = alloc_live_home(t, key); t->buckets[i].key != 0;
	    i = (i + 1) & (t->nbuckets - 1)) {
		if (t->buckets[i].key == key)
			return &t->buckets[i];
	}
	return NULL;
}

/* Add KEY; NULL when there is no room. */
struct alloc_live_entry *
alloc_live_insert(struct alloc_live *t, uintptr_t key, uint32_t site, uint32_t flags,
    int64_t size)
{
	size_t i;

	if (key == 0 || !alloc_live_room(t, 1))
		return NULL;
	for (i = alloc_live_home(t, key); t->buckets[i].key != 0;
	    i = (i + 1) & (t->nbuckets - 1))
		;
	t->buckets[i].key = key;
	t->buckets[i].site = site;
	t->buckets[i].flags = flags;
	t->buckets[i].size = size;
	t->count++;
	return &t->buckets[i];
}

/*
 * Remove KEY.  Backward shift: each entry after the hole, up to the next
 * empty bucket, moves into the hole unless its home lies cyclically in
 * (hole, its bucket], where it would no longer be found from its home.
 */
int
alloc_live_remove(struct alloc_live *t, uintptr_t key, struct alloc_live_entry *out)
{
	struct alloc_live_entry *e = alloc_live_find(t, key);
	size_t mask = t->nbuckets - 1, hole, j, home;

	if (e == NULL)
		return 0;
	if (out != NULL)
		*out = *e;
	hole = (size_t)(e - t->buckets);
	for (j = (hole + 1) & mask; t->buckets[j].key != 0; j = (j + 1) & mask) {
		home = alloc_live_home(t, t->buckets[j].key);
		/* Moves unless home is in (hole, j] cyclically. */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			t->buckets[hole] = t->buckets[j];
			hole = j;
		}
	}
	memset(&t->buckets[hole], 0, sizeof t->buckets[hole]);
	t->count--;
	return 1;
}

/* Rekey every entry by MOVE; rebuild when any key changed. */
size_t
alloc_live_rekey(struct alloc_live *t, uintptr_t (*move)(uintptr_t, void *), void *arg)
{
	size_t i, moved = 0;

	for (i = 0; i < t->nbuckets; i++) {
		uintptr_t k = t->buckets[i].key, nk;

		if (k == 0)
			continue;
		nk = move(k, arg);
		if (nk != k) {
			t->buckets[i].key = nk;
			moved++;
		}
	}
	if (moved > 0)
		alloc_live_move_all(t, xcalloc(t->nbuckets, sizeof *t->buckets), t->shift);
	return moved;
}
