/*
 * check_pprof.c: unit tests for the pprof reader and writer (pprof.c):
 * byte-exact round trips, the hand-encoded samples against protobuf-c's
 * own packing, a Go-style profile built here by hand, and
 * hostile input (every truncation, byte flips, bad ids, huge declared
 * lengths, decompression bombs, the fuzzers' regressions) that must be
 * rejected with a message and never crash.
 */
#include <sys/resource.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof.h"
#include "profile.pb-c.h"
#include "testutil.h"

/* Encode P with pprof_write; returns the gzip bytes. */
static uint8_t *
encode(const struct profile *p, size_t *len)
{
	char *buf = NULL, err[256] = "";
	int rc;

	TU_CAPTURE(buf, *len, rc, pprof_write(p, fp, err, sizeof err));
	ck_assert_msg(rc == 0, "pprof_write: %s", err);
	return (uint8_t *)buf;
}

/* Gunzip (or gzip, with ZIP set) LEN bytes of IN with zlib directly. */
static uint8_t *
zconvert(const uint8_t *in, size_t len, size_t *outlen, int zip)
{
	z_stream zs;
	size_t cap = len * 8 + 1024;
	uint8_t *out = xmalloc(cap);
	int rc;

	memset(&zs, 0, sizeof zs);
	if (zip)
		rc = deflateInit2(&zs, 6, Z_DEFLATED, 31, 8,
		    Z_DEFAULT_STRATEGY);
	else
		rc = inflateInit2(&zs, 31);
	ck_assert_int_eq(rc, Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	rc = zip ? deflate(&zs, Z_FINISH) : inflate(&zs, Z_FINISH);
	ck_assert_int_eq(rc, Z_STREAM_END);
	*outlen = zs.total_out;
	if (zip)
		deflateEnd(&zs);
	else
		inflateEnd(&zs);
	return out;
}

/* Parse BUF, expecting failure with a message containing WANT. */
static void
expect_reject(const uint8_t *buf, size_t len, const char *want)
{
	char err[256] = "";
	struct profile *p = pprof_parse(buf, len, err, sizeof err);

	ck_assert_msg(p == NULL, "accepted input expected to fail (%s)", want);
	ck_assert_msg(strstr(err, want) != NULL, "error '%s' lacks '%s'", err,
	    want);
	ck_assert_ptr_null(strchr(err, '\n'));
}

/* Pack a protobuf-c profile message into a new buffer. */
static uint8_t *
pack(const Perftools__Profiles__Profile *m, size_t *len)
{
	uint8_t *buf;

	*len = perftools__profiles__profile__get_packed_size(m);
	buf = xmalloc(*len + 1);
	perftools__profiles__profile__pack(m, buf);
	return buf;
}

/* A Go-style profile, built field by field. */
struct goprof {
	Perftools__Profiles__Profile m;
	Perftools__Profiles__ValueType vt[2], *vtp[2], period_type;
	Perftools__Profiles__Function fn[3], *fnp[3];
	Perftools__Profiles__Line line[4], *linep[4];
	Perftools__Profiles__Location loc[3], *locp[3];
	Perftools__Profiles__Mapping map, *mapp;
	Perftools__Profiles__Label lab, *labp;
	Perftools__Profiles__Sample smp[2], *smpp[2];
	uint64_t ids1[2], ids2[2];
	int64_t vals1[2], vals2[2], comment[1];
	char *strings[14];
};

/* Fill G with a profile like `go tool pprof` reads from a Go program. */
static void
goprof_init(struct goprof *g)
{
	static const char *const s[] = { "", "samples", "count", "cpu",
	    "nanoseconds", "main.main", "/src/main.go", "main.hot",
	    "/src/hot.go", "main.inl", "bytes", "/bin/prog", "go comment",
	    "main.hot.abi0" };
	size_t i;

	memset(g, 0, sizeof *g);
	perftools__profiles__profile__init(&g->m);
	for (i = 0; i < 14; i++)
		g->strings[i] = (char *)s[i];
	g->m.n_string_table = 14;
	g->m.string_table = g->strings;
	for (i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&g->vt[i]);
		g->vt[i].type = i ? 3 : 1;
		g->vt[i].unit = i ? 4 : 2;
		g->vtp[i] = &g->vt[i];
	}
	g->m.n_sample_type = 2;
	g->m.sample_type = g->vtp;
	g->m.default_sample_type = 1;		/* "samples" */
	perftools__profiles__value_type__init(&g->period_type);
	g->period_type.type = 3;
	g->period_type.unit = 4;
	g->m.period_type = &g->period_type;
	g->m.period = 10000000;
	g->m.time_nanos = 1600000000000000000LL;
	g->m.duration_nanos = 1000000000;
	g->comment[0] = 12;
	g->m.n_comment = 1;
	g->m.comment = g->comment;

	for (i = 0; i < 3; i++) {
		perftools__profiles__function__init(&g->fn[i]);
		g->fnp[i] = &g->fn[i];
	}
	g->fn[0].id = 17; g->fn[0].name = 5; g->fn[0].system_name = 5;
	g->fn[0].filename = 6; g->fn[0].start_line = 5;
	g->fn[1].id = 42; g->fn[1].name = 7; g->fn[1].system_name = 13;
	g->fn[1].filename = 8; g->fn[1].start_line = 10;
	g->fn[2].id = 99; g->fn[2].name = 9; g->fn[2].filename = 8;
	g->fn[2].start_line = 20;
	g->m.n_function = 3;
	g->m.function = g->fnp;

	for (i = 0; i < 4; i++) {
		perftools__profiles__line__init(&g->line[i]);
		g->linep[i] = &g->line[i];
	}
	g->line[0].function_id = 99; g->line[0].line = 22;
	g->line[1].function_id = 42; g->line[1].line = 12;
	g->line[2].function_id = 17; g->line[2].line = 7;
	g->line[2].column = 3;
	for (i = 0; i < 3; i++) {
		perftools__profiles__location__init(&g->loc[i]);
		g->loc[i].mapping_id = 1;
		g->locp[i] = &g->loc[i];
	}
	g->loc[0].id = 1000; g->loc[0].address = 0x4010;
	g->loc[0].n_line = 2; g->loc[0].line = &g->linep[0];
	g->loc[1].id = 2000; g->loc[1].address = 0x4100;
	g->loc[1].n_line = 1; g->loc[1].line = &g->linep[2];
	g->loc[2].id = 3000; g->loc[2].address = 0xdead;
	g->m.n_location = 3;
	g->m.location = g->locp;

	perftools__profiles__mapping__init(&g->map);
	g->map.id = 1;
	g->map.memory_start = 0x400000;
	g->map.memory_limit = 0x500000;
	g->map.filename = 11;
	g->map.has_functions = 1;
	g->mapp = &g->map;
	g->m.n_mapping = 1;
	g->m.mapping = &g->mapp;

	perftools__profiles__label__init(&g->lab);
	g->lab.key = 10;
	g->lab.num = 64;
	g->lab.num_unit = 10;
	g->labp = &g->lab;
	for (i = 0; i < 2; i++) {
		perftools__profiles__sample__init(&g->smp[i]);
		g->smpp[i] = &g->smp[i];
	}
	g->ids1[0] = 1000; g->ids1[1] = 2000;
	g->vals1[0] = 5; g->vals1[1] = 50000000;
	g->smp[0].n_location_id = 2; g->smp[0].location_id = g->ids1;
	g->smp[0].n_value = 2; g->smp[0].value = g->vals1;
	g->smp[0].n_label = 1; g->smp[0].label = &g->labp;
	g->ids2[0] = 3000; g->ids2[1] = 2000;
	g->vals2[0] = 1; g->vals2[1] = 10000000;
	g->smp[1].n_location_id = 2; g->smp[1].location_id = g->ids2;
	g->smp[1].n_value = 2; g->smp[1].value = g->vals2;
	g->m.n_sample = 2;
	g->m.sample = g->smpp;
}

/* The name of frame K of sample I of P. */
static const char *
frame_name(const struct profile *p, size_t i, size_t k)
{
	const uint64_t *locs = profile_sample_locs(p, &p->samples[i]);

	return profile_str(p, profile_location_function(p, locs[k])->name);
}

/* The line of frame K of sample I of P. */
static int64_t
frame_line(const struct profile *p, size_t i, size_t k)
{
	const uint64_t *locs = profile_sample_locs(p, &p->samples[i]);

	return p->locations[locs[k] - 1].line;
}

START_TEST(test_round_trip)
{
	struct profile *p = tu_sample_profile(), *q;
	uint8_t *a, *b;
	size_t alen, blen;
	char err[256] = "", why[256];

	a = encode(p, &alen);
	ck_assert(pprof_is_gzip(a, alen));
	q = pprof_parse(a, alen, err, sizeof err);
	ck_assert_msg(q != NULL, "parse: %s", err);
	ck_assert_msg(tu_profiles_equal(p, q, why, sizeof why), "%s", why);
	b = encode(q, &blen);
	ck_assert_uint_eq(alen, blen);
	ck_assert(memcmp(a, b, alen) == 0);
	free(a);
	free(b);
	profile_free(p);
	profile_free(q);
}
END_TEST

/* The deflate stream is sized to a profile that fits the writer's 32 KiB
 * gathering buffer, and full-sized past it: profiles whose encoding ends
 * short of, at and past that size (every sample count around it), and a
 * few times it, gunzip with zlib itself and read back whole. */
START_TEST(test_round_trip_sizes)
{
	static const char *const types[] = { "samples" };
	static const char *const units[] = { "count" };
	size_t n, i, len, below = 0, above = 0;

	for (n = 1; n < 3000; n += n >= 500 && n < 800 ? 1 : 37) {
		struct profile *p = profile_new(), *q;
		char name[64], err[256] = "", why[256];
		uint64_t loc;
		int64_t v;
		uint8_t *gz, *raw;
		size_t rawlen;

		profile_set_value_types(p, 1, types, units);
		for (i = 0; i < n; i++) {
			snprintf(name, sizeof name, "Klass%zu#method_%zu", i % 13, i);
			loc = profile_location(p, profile_function(p, name, name,
			    "lib/app.rb", (int64_t)i), (int64_t)i);
			v = (int64_t)i + 1;
			profile_add_sample(p, &loc, 1, &v, NULL, 0);
		}
		gz = encode(p, &len);
		raw = zconvert(gz, len, &rawlen, 0);
		if (rawlen <= 32768)
			below++;
		else
			above++;
		q = pprof_parse(gz, len, err, sizeof err);
		ck_assert_msg(q != NULL, "%zu samples (%zu bytes): %s", n, rawlen, err);
		ck_assert_msg(tu_profiles_equal(p, q, why, sizeof why), "%zu: %s", n, why);
		profile_free(q);
		profile_free(p);
		free(raw);
		free(gz);
	}
	ck_assert_uint_gt(below, 50);
	ck_assert_uint_gt(above, 50);
}
END_TEST

/* The samples are encoded by hand (pprof-samples.c): the bytes must be
 * protobuf-c's own for the same message.  protobuf-c reads them, and
 * packing what it read gives them back unchanged; samples that cross the
 * encoder's blocks, one larger than a block, empty stacks, negative and
 * zero fields, labels of every shape. */
START_TEST(test_samples_as_protobuf_c)
{
	static const char *const types[] = { "samples", "cpu", "delta" };
	static const char *const units[] = { "count", "nanoseconds", "count" };
	static const char *const frames[] = { "<main>", "Object#work", "Foo::Bar#baz", NULL };
	struct profile *p = profile_new();
	Perftools__Profiles__Profile *m;
	uint64_t *big = xcalloc(20000, sizeof *big);
	uint8_t *gz, *raw, *again;
	size_t gzlen, rawlen, len, i, k;
	int64_t v[3];

	profile_set_value_types(p, 3, types, units);
	for (i = 0; i < 3000; i++) {
		struct profile_label l[6];	/* up to six below */
		size_t n = 0;

		l[n++] = tu_label(p, "thread", NULL, (int64_t)(i % 7));
		if (i % 3 == 0)
			l[n++] = tu_label(p, "timestamp", NULL, (int64_t)i * 1000003);
		if (i % 5 == 0)
			l[n++] = tu_label(p, "delta", NULL, -(int64_t)i - 1);
		if (i % 11 == 0) {
			l[n] = tu_label(p, "bytes", NULL, (int64_t)i << 40);
			l[n++].num_unit = profile_intern(p, "bytes");
		}
		if (i % 13 == 0)
			l[n++] = tu_label(p, "%GVL", "wait", 0);
		if (i % 17 == 0)
			memset(&l[n++], 0, sizeof l[0]);	/* all zero */
		tu_add(p, frames + (i % 3), 1, (int64_t)i * 1000, l, n);
	}
	/* tu_add sets two values; a third, negative or zero, by hand */
	for (i = 0; i < p->nsamples; i++)
		p->value_pool[p->samples[i].value_off + 2] = i % 4 == 0 ? 0 : -(int64_t)i;
	v[0] = 1;
	v[1] = INT64_MAX;
	v[2] = INT64_MIN;
	profile_add_sample(p, NULL, 0, v, NULL, 0);
	for (k = 0; k < 20000; k++)
		big[k] = 1 + k % p->nlocations;
	profile_add_sample(p, big, 20000, v, NULL, 0);

	gz = encode(p, &gzlen);
	raw = zconvert(gz, gzlen, &rawlen, 0);
	m = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->n_sample, p->nsamples);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const struct profile_label *l = profile_sample_labels(p, s);

		ck_assert_uint_eq(m->sample[i]->n_location_id, s->nloc);
		ck_assert_uint_eq(m->sample[i]->n_value, 3);
		ck_assert_uint_eq(m->sample[i]->n_label, s->nlabel);
		for (k = 0; k < s->nloc; k++)
			ck_assert_uint_eq(m->sample[i]->location_id[k],
			    profile_sample_locs(p, s)[k]);
		for (k = 0; k < 3; k++)
			ck_assert_int_eq(m->sample[i]->value[k], profile_sample_values(p, s)[k]);
		for (k = 0; k < s->nlabel; k++) {
			ck_assert_int_eq(m->sample[i]->label[k]->key, l[k].key);
			ck_assert_int_eq(m->sample[i]->label[k]->str, l[k].str);
			ck_assert_int_eq(m->sample[i]->label[k]->num, l[k].num);
			ck_assert_int_eq(m->sample[i]->label[k]->num_unit, l[k].num_unit);
		}
	}
	again = pack(m, &len);
	ck_assert_uint_eq(len, rawlen);
	ck_assert(memcmp(again, raw, len) == 0);
	perftools__profiles__profile__free_unpacked(m, NULL);
	free(again);
	free(raw);
	free(gz);
	free(big);
	profile_free(p);
}
END_TEST

START_TEST(test_round_trip_raw_and_empty)
{
	struct profile *p = tu_sample_profile(), *q, *e = profile_new();
	uint8_t *a, *raw;
	size_t alen, rawlen;
	char err[256] = "", why[256];

	a = encode(p, &alen);
	raw = zconvert(a, alen, &rawlen, 0);
	q = pprof_parse(raw, rawlen, err, sizeof err);
	ck_assert_msg(q != NULL, "parse raw: %s", err);
	ck_assert_msg(tu_profiles_equal(p, q, why, sizeof why), "%s", why);
	profile_free(q);
	free(a);
	free(raw);

	a = encode(e, &alen);
	q = pprof_parse(a, alen, err, sizeof err);
	ck_assert_msg(q != NULL, "parse empty: %s", err);
	ck_assert_uint_eq(q->nsamples, 0);
	profile_free(q);
	free(a);
	q = pprof_parse((const uint8_t *)"", 0, err, sizeof err);
	ck_assert_ptr_nonnull(q);
	profile_free(q);
	profile_free(p);
	profile_free(e);
}
END_TEST

START_TEST(test_go_profile)
{
	struct goprof g;
	struct profile *p;
	uint8_t *raw, *gz;
	size_t rawlen, gzlen;
	char err[256] = "";
	int pass;

	goprof_init(&g);
	raw = pack(&g.m, &rawlen);
	gz = zconvert(raw, rawlen, &gzlen, 1);
	for (pass = 0; pass < 2; pass++) {
		p = pass ? pprof_parse(gz, gzlen, err, sizeof err) :
		    pprof_parse(raw, rawlen, err, sizeof err);
		ck_assert_msg(p != NULL, "parse: %s", err);
		ck_assert_uint_eq(p->nvalue_types, 2);
		ck_assert_str_eq(profile_str(p, p->value_types[1].type), "cpu");
		ck_assert_uint_eq(p->default_value, 0);
		ck_assert_int_eq(p->period, 10000000);
		ck_assert_str_eq(profile_str(p, p->comments[0]), "go comment");
		ck_assert_uint_eq(p->nsamples, 2);
		/* The inlined location expands into two frames, inner first. */
		ck_assert_uint_eq(p->samples[0].nloc, 3);
		ck_assert_str_eq(frame_name(p, 0, 0), "main.inl");
		ck_assert_int_eq(frame_line(p, 0, 0), 22);
		ck_assert_str_eq(frame_name(p, 0, 1), "main.hot");
		ck_assert_int_eq(frame_line(p, 0, 1), 12);
		ck_assert_str_eq(frame_name(p, 0, 2), "main.main");
		ck_assert_uint_eq(p->samples[1].nloc, 2);
		ck_assert_str_eq(frame_name(p, 1, 0), "0xdead");
		ck_assert_str_eq(frame_name(p, 1, 1), "main.main");
		ck_assert_int_eq(profile_sample_values(p, &p->samples[0])[1],
		    50000000);
		ck_assert_int_eq(profile_sample_label(p, &p->samples[0],
		    "bytes")->num, 64);
		ck_assert_int_eq(profile_total(p, 0), 6);
		profile_free(p);
	}
	free(raw);
	free(gz);
}
END_TEST

START_TEST(test_bad_ids)
{
	struct goprof g;
	uint8_t *raw;
	size_t len;
	int64_t v3[3] = { 1, 2, 3 };
	uint64_t bad = 4242;

#define REJECT(mutate, undo, want) do {					\
	goprof_init(&g);						\
	mutate;								\
	raw = pack(&g.m, &len);						\
	expect_reject(raw, len, want);					\
	free(raw);							\
} while (0)
	REJECT(g.fn[1].name = 14, , "function name string index 14 out of "
	    "range (14 strings)");
	REJECT(g.fn[1].filename = -1, , "out of range");
	REJECT(g.fn[2].id = 17, , "function id 17 is not unique");
	REJECT(g.fn[2].id = 0, , "function with id 0");
	REJECT(g.loc[2].id = 1000, , "location id 1000 is not unique");
	REJECT(g.line[1].function_id = 43, , "location 1000 refers to "
	    "unknown function 43");
	REJECT(g.smp[1].location_id = &bad, , "sample 1 refers to unknown "
	    "location 4242");
	REJECT((g.smp[0].n_value = 3, g.smp[0].value = v3), ,
	    "sample 0 has 3 values for 2 sample types");
	REJECT(g.smp[1].n_value = 1, , "sample 1 has 1 values");
	REJECT(g.lab.key = 99, , "label key string index 99");
	REJECT(g.lab.num_unit = 14, , "label unit");
	REJECT(g.vt[0].unit = 200, , "sample unit");
	REJECT(g.m.default_sample_type = 77, , "default sample type");
	REJECT(g.period_type.type = 14, , "period type");
	REJECT(g.comment[0] = 14, , "comment string index");
	REJECT(g.m.drop_frames = 15, , "drop frames");
	REJECT(g.strings[0] = (char *)"x", , "first string is not empty");
#undef REJECT

	/* A function id of 0 in a line means "no function": allowed. */
	goprof_init(&g);
	g.line[1].function_id = 0;
	raw = pack(&g.m, &len);
	{
		char err[256];
		struct profile *p = pprof_parse(raw, len, err, sizeof err);

		ck_assert_msg(p != NULL, "%s", err);
		ck_assert_str_eq(frame_name(p, 0, 1), "");
		profile_free(p);
	}
	free(raw);
}
END_TEST

START_TEST(test_huge_lengths)
{
	/* string_table entry declaring ~64 GiB, then 3 bytes. */
	static const uint8_t s1[] = { 0x32, 0xff, 0xff, 0xff, 0xff, 0x0f,
	    'a', 'b', 'c' };
	/* sample whose packed location_id declares 2^35 bytes. */
	static const uint8_t s2[] = { 0x12, 0x07, 0x0a, 0x80, 0x80, 0x80,
	    0x80, 0x80, 0x01 };
	/* a length varint that never ends. */
	static const uint8_t s3[] = { 0x32, 0xff, 0xff, 0xff, 0xff, 0xff,
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	/* sample_type with a length beyond the input. */
	static const uint8_t s4[] = { 0x0a, 0x7f, 0x08, 0x01 };
	/* a group wire type, which no pprof field uses. */
	static const uint8_t s5[] = { 0x0b, 0x0c };
#ifndef TU_ASAN
	struct rlimit rl = { (rlim_t)1 << 30, (rlim_t)1 << 30 };

	/* Any attempt to allocate what the lengths declare now fails. */
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
#endif
	expect_reject(s1, sizeof s1, "not a valid profile protobuf");
	expect_reject(s2, sizeof s2, "not a valid profile protobuf");
	expect_reject(s3, sizeof s3, "not a valid profile protobuf");
	expect_reject(s4, sizeof s4, "not a valid profile protobuf");
	expect_reject(s5, sizeof s5, "not a valid profile protobuf");
}
END_TEST

START_TEST(test_many_empty_messages)
{
	/* 1 MiB of empty samples: decodes under the budget or is refused,
	 * but never needs more than the budget. */
	size_t n = 1 << 20, i;
	uint8_t *buf = xmalloc(n);
	struct profile *p;
	char err[256] = "";

	for (i = 0; i < n; i += 2) {
		buf[i] = 0x12;
		buf[i + 1] = 0x00;
	}
	p = pprof_parse(buf, n, err, sizeof err);
	if (p != NULL)
		ck_assert_uint_eq(p->nsamples, n / 2);
	else
		ck_assert_str_eq(err, "profile needs too much memory to "
		    "decode");
	profile_free(p);
	free(buf);
}
END_TEST

/* Gzip N copies of the LEN bytes of UNIT, after the LEN0 bytes of HEAD. */
static uint8_t *
gzip_repeat(const uint8_t *head, size_t len0, const uint8_t *unit,
    size_t len, size_t n, size_t *outlen)
{
	size_t chunk_units = 65536, cap = 4 << 20, i, k;
	uint8_t *chunk = xmalloc(chunk_units * len), *out = xmalloc(cap);
	z_stream zs;

	for (i = 0; i < chunk_units; i++)
		memcpy(chunk + i * len, unit, len);
	memset(&zs, 0, sizeof zs);
	ck_assert_int_eq(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	zs.next_in = (Bytef *)(uintptr_t)head;
	zs.avail_in = (uInt)len0;
	ck_assert_int_eq(deflate(&zs, Z_NO_FLUSH), Z_OK);
	for (i = 0; i < n; i += k) {
		k = n - i < chunk_units ? n - i : chunk_units;
		zs.next_in = chunk;
		zs.avail_in = (uInt)(k * len);
		ck_assert_int_eq(deflate(&zs, Z_NO_FLUSH), Z_OK);
	}
	ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	free(chunk);
	return out;
}

/* Parse BUF, expecting a refusal with WANT within a few CPU seconds. */
static void
expect_quick_reject(const uint8_t *buf, size_t len, const char *want)
{
	double t0 = tu_cpu_seconds(), dt;

	expect_reject(buf, len, want);
	dt = tu_cpu_seconds() - t0;
	ck_assert_msg(dt < 3.0 * TU_CPU_SCALE, "refused after %.1f CPU seconds",
	    dt);
}

START_TEST(test_mapping_bomb)
{
	/* Under a MiB of gzip holding 64M empty mappings (128 MiB) once
	 * took 4 GB and 9 s to refuse; an empty mapping has the reserved
	 * id 0. */
	static const uint8_t empty[] = { 0x1a, 0x00 };
	/* 32M mappings of id 1, four bytes each: legal framing, but each
	 * costs protobuf-c over a hundred bytes. */
	static const uint8_t tiny[] = { 0x1a, 0x02, 0x08, 0x01 };
	size_t len, len2;
	uint8_t *gz = gzip_repeat(NULL, 0, empty, sizeof empty, 64 << 20,
	    &len);
	uint8_t *gz2 = gzip_repeat(NULL, 0, tiny, sizeof tiny, 32 << 20,
	    &len2);

	ck_assert_uint_lt(len, 1 << 20);
	/* The decompressed 128 MiB, and little more. */
	tu_limit_memory(256);
	expect_quick_reject(gz, len, "mapping with id 0");
	expect_quick_reject(gz2, len2, "profile needs too much memory to "
	    "decode");
	free(gz);
	free(gz2);
}
END_TEST

START_TEST(test_tiny_entry_bomb)
{
	/* 1M empty mappings, locations, functions; empty samples where
	 * there is a sample type; raw, so nothing is decompressed. */
	static const uint8_t keys[] = { 0x1a, 0x22, 0x2a, 0x12 };
	static const char *const want[] = { "mapping with id 0",
	    "location with id 0", "function with id 0",
	    "sample 0 has 0 values for 1 sample types" };
	size_t n = 1 << 20, i, k;
	uint8_t *buf = xmalloc(2 * n + 4);

	tu_limit_memory(64);
	for (k = 0; k < 4; k++) {
		memcpy(buf, "\x0a\x02\x08\x00", 4);	/* a sample type */
		for (i = 0; i < n; i++) {
			buf[4 + 2 * i] = keys[k];
			buf[4 + 2 * i + 1] = 0;
		}
		expect_quick_reject(buf, 2 * n + 4, want[k]);
	}
	free(buf);
}
END_TEST

START_TEST(test_large_profile_loads)
{
	/* 200k distinct samples of 30 frames: a big but real profile must
	 * still load under the budget. */
	static const char *const types[] = { "samples", "cpu" };
	static const char *const units[] = { "count", "nanoseconds" };
	struct profile *p = profile_new(), *q;
	uint64_t locs[30], fns[1000];
	int64_t values[2];
	char name[64], err[256] = "";
	size_t i, k, len;
	uint8_t *gz;
	unsigned seed = 1;

	profile_set_value_types(p, 2, types, units);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof name, "Mod%zu::Klass%zu#method_%zu",
		    i % 17, i % 101, i);
		fns[i] = profile_function(p, name, name, "lib/app.rb",
		    (int64_t)i);
	}
	for (i = 0; i < 200000; i++) {
		for (k = 0; k < 30; k++) {
			seed = seed * 1103515245 + 12345;
			locs[k] = profile_location(p, fns[(seed >> 8) % 1000],
			    (int64_t)(seed % 50));
		}
		values[0] = (int64_t)(i % 7) + 1;
		values[1] = values[0] * 1000000;
		profile_add_sample(p, locs, 30, values, NULL, 0);
	}
	gz = encode(p, &len);
	tu_limit_memory(1024);
	q = pprof_parse(gz, len, err, sizeof err);
	ck_assert_msg(q != NULL, "%s", err);
	ck_assert_uint_eq(q->nsamples, 200000);
	profile_free(q);
	profile_free(p);
	free(gz);
}
END_TEST

START_TEST(test_inline_bomb)
{
	/* One location with many lines referenced many times: the frame cap
	 * must stop the expansion long before memory runs out. */
	Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
	Perftools__Profiles__Function *fnp = &fn;
	Perftools__Profiles__Line line = PERFTOOLS__PROFILES__LINE__INIT;
	Perftools__Profiles__Location loc =
	    PERFTOOLS__PROFILES__LOCATION__INIT;
	Perftools__Profiles__Location *locp = &loc;
	Perftools__Profiles__Sample smp = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample **smpp;
	Perftools__Profiles__Line **lines;
	size_t nlines = 1 << 12, nids = 1 << 12, nsmp = 8, i, len;
	uint64_t *ids;
	uint8_t *raw;

	fn.id = 1;
	line.function_id = 1;
	lines = xcalloc(nlines, sizeof *lines);
	for (i = 0; i < nlines; i++)
		lines[i] = &line;
	loc.id = 1;
	loc.n_line = nlines;
	loc.line = lines;
	ids = xcalloc(nids, sizeof *ids);
	for (i = 0; i < nids; i++)
		ids[i] = 1;
	smp.n_location_id = nids;
	smp.location_id = ids;
	smpp = xcalloc(nsmp, sizeof *smpp);
	for (i = 0; i < nsmp; i++)
		smpp[i] = &smp;
	m.n_function = 1;
	m.function = &fnp;
	m.n_location = 1;
	m.location = &locp;
	m.n_sample = nsmp;
	m.sample = smpp;
	raw = pack(&m, &len);
	/* 2^27 frames declared by ~50 KiB of input. */
	expect_reject(raw, len, "more than");
	free(raw);
	free(smpp);
	free(ids);
	free(lines);
}
END_TEST

START_TEST(test_truncations)
{
	struct profile *p = tu_sample_profile(), *q;
	uint8_t *gz, *raw;
	size_t gzlen, rawlen, i;
	char err[256];

	gz = encode(p, &gzlen);
	raw = zconvert(gz, gzlen, &rawlen, 0);
	for (i = 0; i < gzlen; i++) {
		err[0] = '\0';
		q = pprof_parse(gz, i, err, sizeof err);
		ck_assert_msg(q == NULL || i == 0, "gzip cut at %zu accepted", i);
		if (i >= 2)
			ck_assert_msg(err[0] != '\0', "no message at %zu", i);
		profile_free(q);
	}
	for (i = 0; i < rawlen; i++) {
		err[0] = '\0';
		q = pprof_parse(raw, i, err, sizeof err);
		/* A cut on a field boundary is a valid, smaller profile. */
		if (q == NULL)
			ck_assert_msg(err[0] != '\0', "no message at %zu", i);
		profile_free(q);
	}
	free(gz);
	free(raw);
	profile_free(p);
}
END_TEST

START_TEST(test_byte_flips)
{
	static const uint8_t masks[] = { 0xff, 0x01, 0x80, 0x7f };
	struct profile *p = tu_sample_profile(), *q;
	uint8_t *gz, *raw, *buf;
	size_t gzlen, rawlen, i, m;
	char err[256];
	int pass;

	gz = encode(p, &gzlen);
	raw = zconvert(gz, gzlen, &rawlen, 0);
	for (pass = 0; pass < 2; pass++) {
		const uint8_t *src = pass ? gz : raw;
		size_t len = pass ? gzlen : rawlen;

		buf = xmalloc(len);
		for (i = 0; i < len; i++) {
			for (m = 0; m < sizeof masks; m++) {
				memcpy(buf, src, len);
				buf[i] ^= masks[m];
				err[0] = '\0';
				q = pprof_parse(buf, len, err, sizeof err);
				if (q == NULL)
					ck_assert(err[0] != '\0');
				profile_free(q);
			}
		}
		free(buf);
	}
	free(gz);
	free(raw);
	profile_free(p);
}
END_TEST

START_TEST(test_gzip_errors)
{
	static const uint8_t junk[] = { 0x1f, 0x8b, 0x08, 0x00, 'x', 'y' };
	struct profile *p = tu_sample_profile();
	uint8_t *gz, *buf;
	size_t gzlen;

	gz = encode(p, &gzlen);
	buf = xmalloc(gzlen + 4);
	memcpy(buf, gz, gzlen);
	memcpy(buf + gzlen, "junk", 4);
	expect_reject(buf, gzlen + 4, "trailing garbage after gzip data");
	expect_reject(gz, gzlen - 9, "gzip data is truncated");
	expect_reject(junk, sizeof junk, "gzip data is");
	free(buf);
	free(gz);
	profile_free(p);
}
END_TEST

START_TEST(test_gzip_bomb)
{
	/* 600 MiB of zeros compress to well under a MiB. */
	size_t chunk = 1 << 20, n = 600, cap = 4 << 20, i;
	uint8_t *zeros = xcalloc(1, chunk), *out = xmalloc(cap);
	z_stream zs;

	memset(&zs, 0, sizeof zs);
	ck_assert_int_eq(deflateInit2(&zs, 1, Z_DEFLATED, 31, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	for (i = 0; i < n; i++) {
		zs.next_in = zeros;
		zs.avail_in = (uInt)chunk;
		ck_assert_int_eq(deflate(&zs, i + 1 == n ? Z_FINISH :
		    Z_NO_FLUSH), i + 1 == n ? Z_STREAM_END : Z_OK);
	}
	expect_reject(out, zs.total_out, "larger than 512 MiB");
	deflateEnd(&zs);
	free(zeros);
	free(out);
}
END_TEST

/* Parse one stored input: a clean error or a profile, never a crash. */
static void
replay(const char *path, const uint8_t *buf, size_t len)
{
	char err[256] = "";
	struct profile *p = pprof_parse(buf, len, err, sizeof err);

	if (p == NULL)
		ck_assert_msg(err[0] != '\0' && strchr(err, '\n') == NULL,
		    "%s: bad message", path);
	profile_free(p);
}

START_TEST(test_fuzz_regressions)
{
	tu_each_file("fuzz/regressions", replay);
	tu_each_file("fuzz/corpus/pprof", replay);
}
END_TEST

START_TEST(test_write_error)
{
	struct profile *p = tu_sample_profile();
	FILE *fp = fopen("/dev/full", "w");
	char err[256] = "";

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(pprof_write(p, fp, err, sizeof err), -1);
	ck_assert_str_eq(err, "No space left on device");
	fclose(fp);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
pprof_suite(void)
{
	Suite *s = suite_create("pprof");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_round_trip_sizes);
	tcase_add_test(tc, test_round_trip_raw_and_empty);
	tcase_add_test(tc, test_samples_as_protobuf_c);
	tcase_add_test(tc, test_go_profile);
	tcase_add_test(tc, test_bad_ids);
	tcase_add_test(tc, test_huge_lengths);
	tcase_add_test(tc, test_many_empty_messages);
	tcase_add_test(tc, test_mapping_bomb);
	tcase_add_test(tc, test_tiny_entry_bomb);
	tcase_add_test(tc, test_large_profile_loads);
	tcase_add_test(tc, test_inline_bomb);
	tcase_add_test(tc, test_truncations);
	tcase_add_test(tc, test_byte_flips);
	tcase_add_test(tc, test_gzip_errors);
	tcase_add_test(tc, test_gzip_bomb);
	tcase_add_test(tc, test_fuzz_regressions);
	tcase_add_test(tc, test_write_error);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(pprof_suite());
}
