/*
 * pprof-samples.c: the samples of a pprof profile encoded by hand (see
 * pprof-samples.h).
 *
 * Each sample is sized once (its labels once each), then written into a
 * block of many samples that goes to OUT whole, so the deflate stream
 * behind OUT sees few large appends.  The wire format, from profile.proto:
 * Sample { packed uint64 location_id = 1; packed int64 value = 2;
 * Label label = 3 } and Label { int64 key = 1, str = 2, num = 3,
 * num_unit = 4 }, zeros left out.
 */
#include <stdlib.h>
#include <string.h>

#include "pprof-samples.h"
#include "xmalloc.h"

/* Tags: field number << 3 | wire type (0 varint, 2 length-delimited). */
#define TAG_PROFILE_SAMPLE 0x12
#define TAG_SAMPLE_LOCATION 0x0a
#define TAG_SAMPLE_VALUE 0x12
#define TAG_SAMPLE_LABEL 0x1a
#define TAG_LABEL_KEY 0x08
#define TAG_LABEL_STR 0x10
#define TAG_LABEL_NUM 0x18
#define TAG_LABEL_NUM_UNIT 0x20

/* The block gathered before it goes to OUT. */
#define PPROF_SAMPLES_BLOCK 16384

static size_t
pp_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *
pp_varint(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* A label's body: its non-zero fields.  int64 fields go on the wire as
 * their two's complement (ten bytes when negative), as protobuf-c does. */
static size_t
pp_label_len(const struct profile_label *l)
{
	size_t n = 0;

	if (l->key != 0)
		n += 1 + pp_varint_len(l->key);
	if (l->str != 0)
		n += 1 + pp_varint_len(l->str);
	if (l->num != 0)
		n += 1 + pp_varint_len((uint64_t)l->num);
	if (l->num_unit != 0)
		n += 1 + pp_varint_len(l->num_unit);
	return n;
}

static uint8_t *
pp_label(uint8_t *o, const struct profile_label *l, size_t len)
{
	*o++ = TAG_SAMPLE_LABEL;
	o = pp_varint(o, len);
	if (l->key != 0) {
		*o++ = TAG_LABEL_KEY;
		o = pp_varint(o, l->key);
	}
	if (l->str != 0) {
		*o++ = TAG_LABEL_STR;
		o = pp_varint(o, l->str);
	}
	if (l->num != 0) {
		*o++ = TAG_LABEL_NUM;
		o = pp_varint(o, (uint64_t)l->num);
	}
	if (l->num_unit != 0) {
		*o++ = TAG_LABEL_NUM_UNIT;
		o = pp_varint(o, l->num_unit);
	}
	return o;
}

/* The sizes of sample S: its locations' and values' packed bytes and its
 * body's; the bytes it takes as Profile field 2. */
struct pp_sizes {
	size_t locs, values, body;
};

static size_t
pp_sample_len(const struct profile *p, const struct profile_sample *s,
    struct pp_sizes *z)
{
	const uint64_t *locs = profile_sample_locs(p, s);
	const int64_t *values = profile_sample_values(p, s);
	const struct profile_label *labels = profile_sample_labels(p, s);
	size_t i, n;

	z->locs = z->values = z->body = 0;
	for (i = 0; i < s->nloc; i++)
		z->locs += pp_varint_len(locs[i]);
	for (i = 0; i < p->nvalue_types; i++)
		z->values += pp_varint_len((uint64_t)values[i]);
	if (s->nloc != 0)
		z->body += 1 + pp_varint_len(z->locs) + z->locs;
	if (p->nvalue_types != 0)
		z->body += 1 + pp_varint_len(z->values) + z->values;
	for (i = 0; i < s->nlabel; i++) {
		n = pp_label_len(&labels[i]);
		z->body += 1 + pp_varint_len(n) + n;
	}
	return 1 + pp_varint_len(z->body) + z->body;
}

static uint8_t *
pp_sample(uint8_t *o, const struct profile *p, const struct profile_sample *s,
    const struct pp_sizes *z)
{
	const uint64_t *locs = profile_sample_locs(p, s);
	const int64_t *values = profile_sample_values(p, s);
	const struct profile_label *labels = profile_sample_labels(p, s);
	size_t i;

	*o++ = TAG_PROFILE_SAMPLE;
	o = pp_varint(o, z->body);
	if (s->nloc != 0) {
		*o++ = TAG_SAMPLE_LOCATION;
		o = pp_varint(o, z->locs);
		for (i = 0; i < s->nloc; i++)
			o = pp_varint(o, locs[i]);
	}
	if (p->nvalue_types != 0) {
		*o++ = TAG_SAMPLE_VALUE;
		o = pp_varint(o, z->values);
		for (i = 0; i < p->nvalue_types; i++)
			o = pp_varint(o, (uint64_t)values[i]);
	}
	for (i = 0; i < s->nlabel; i++)
		o = pp_label(o, &labels[i], pp_label_len(&labels[i]));
	return o;
}

void
pprof_samples_pack(const struct profile *p, ProtobufCBuffer *out)
{
	uint8_t block[PPROF_SAMPLES_BLOCK];
	size_t i, n = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct pp_sizes z;
		size_t len = pp_sample_len(p, s, &z);

		if (len > sizeof block - n && n != 0) {
			out->append(out, n, block);
			n = 0;
		}
		if (len <= sizeof block) {
			n = (size_t)(pp_sample(block + n, p, s, &z) - block);
		} else {
			/* a sample too large for the block: on its own */
			uint8_t *big = xmalloc(len);

			pp_sample(big, p, s, &z);
			out->append(out, len, big);
			free(big);
		}
	}
	if (n != 0)
		out->append(out, n, block);
}
