/*
 * pprof.c: the pprof reader and writer (see pprof.h).
 *
 * Writing maps the model one to one onto the protobuf messages (string ids
 * are string table indexes, function and location ids are kept) and packs
 * them through a deflate stream straight into the FILE, so no second copy of
 * the encoded profile is held.  One mapping marked as fully symbolized is
 * written so that pprof never tries to symbolize addresses we do not have.
 *
 * Reading must survive any input: a file from another tool, a truncated
 * download, or bytes crafted to hurt.  Decompression is capped; a scan of
 * the top-level fields, which allocates nothing, refuses degenerate entries
 * and input whose decoding would overrun the budget before protobuf-c
 * allocates any of it; protobuf-c then decodes under that budget (a
 * multiple of the input, capped), and every string
 * index and id is checked before the model is touched, so the rest of rperf
 * can trust a parsed profile as much as one it recorded itself.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "error.h"
#include "pprof.h"
#include "pprof-samples.h"
#include "profile.pb-c.h"
#include "xmalloc.h"

/* protobuf-c may allocate this many bytes per input byte, plus a floor,
 * up to a cap.  Real profiles need 6 to 11 (rperf's and Go's, small and
 * large); a message of a few bytes costs protobuf-c a struct of 50 to 100
 * bytes, so a stream of tiny entries needs 25 or more and is refused. */
#define PPROF_UNPACK_RATIO 24
#define PPROF_UNPACK_FLOOR ((size_t)1 << 20)
#define PPROF_UNPACK_MAX ((size_t)2 << 30)
/* What protobuf-c keeps per field while it scans a message (its private
 * ScannedMember: a tag, a field pointer, a length and a data pointer). */
#define PPROF_SCANNED_MEMBER (4 * sizeof(void *))
/* Frames (after inline expansion) allowed per input byte, plus a floor:
 * far above any real profile, far below what a few repeated inlined
 * locations could make a small input declare. */
#define PPROF_FRAMES_RATIO 16
#define PPROF_FRAMES_FLOOR ((size_t)1 << 20)

/* A deflate stream that protobuf-c appends to, writing into a FILE.
 * protobuf-c appends field by field, a few bytes at a time; they are
 * gathered in `in` so that deflate runs on whole blocks. */
struct pprof_out {
	ProtobufCBuffer base;
	z_stream zs;
	FILE *fp;
	int failed;		/* 0, or an errno-like code */
	const char *zerr;	/* zlib's message when it failed */
	int started;		/* deflateInit2 was called */
	size_t nin;
	/* The buffers last: the fields above are all that is zeroed. */
	unsigned char in[32768];
	unsigned char buf[65536];
};

/* A protobuf-c allocator that refuses to go over a budget. */
struct pprof_budget {
	size_t used, limit;
	int refused;
};

/* An id -> value hash (open addressing); key 0 marks an empty slot. */
struct pprof_map {
	uint64_t *keys;
	size_t *values;
	size_t cap, n;
};

/* A pprof location expanded into model location ids (innermost first). */
struct pprof_frames {
	size_t off, n;
};

/* State of one parse. */
struct pprof_reader {
	const Perftools__Profiles__Profile *m;
	struct profile *p;
	str_id *strmap;		/* string table index -> model id */
	struct pprof_map functions;	/* pprof function id -> model id */
	struct pprof_map locations;	/* pprof location id -> frames index */
	struct pprof_frames *frames;
	uint64_t *frame_pool;
	size_t nframe_pool, frame_pool_cap;
	size_t max_frames;	/* frames allowed in all samples together */
	char *err;
	size_t errlen;
};

/* Write the deflate output buffer to the file. */
static void
pprof_out_flush(struct pprof_out *o)
{
	size_t n = sizeof o->buf - o->zs.avail_out;

	if (n != 0 && o->failed == 0 && fwrite(o->buf, 1, n, o->fp) != n)
		o->failed = errno ? errno : EIO;
	o->zs.next_out = o->buf;
	o->zs.avail_out = sizeof o->buf;
}

/*
 * Start the deflate stream for a profile of TOTAL bytes (0: not known,
 * more than `in` holds).  The fastest level, as Go's own profile writer
 * uses: a profile is written at the end of the run the user is waiting
 * for.  A profile that fits in `in` gets a window no larger than it
 * needs and at most 2^12 hash heads (memLevel 5): zlib's full window and
 * hash are some 256 KiB, the heads cleared and the rest mostly first
 * touched here, and a page fault is dear on a virtual machine (13 us
 * here).  A one-line script's 9 KiB profile made 23 faults with the
 * hash sized to the window (memLevel 7), 12-14 now, for 8 us more of
 * deflate's own time; it also came out smaller (4,135 bytes against
 * 4,233).  The output is gzip either way.
 */
static void
pprof_out_start(struct pprof_out *o, size_t total)
{
	int wbits = MAX_WBITS, mem = 8;

	if (total != 0) {
		for (wbits = 9; wbits < MAX_WBITS && ((size_t)1 << wbits) < total; wbits++)
			;
		mem = wbits - 7 < 5 ? wbits - 7 : 5;
	}
	o->started = 1;
	if (deflateInit2(&o->zs, Z_BEST_SPEED, Z_DEFLATED, 16 + wbits, mem,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		o->failed = ENOMEM;
		o->zerr = o->zs.msg != NULL ? o->zs.msg : "zlib could not start";
	}
	o->zs.next_out = o->buf;
	o->zs.avail_out = sizeof o->buf;
}

/* Feed LEN bytes (or, with FLUSH == Z_FINISH, the end) through deflate. */
static void
pprof_out_deflate(struct pprof_out *o, const uint8_t *data, size_t len,
    int flush)
{
	int rc;

	if (!o->started)
		pprof_out_start(o, flush == Z_FINISH ? len + 1 : 0);
	if (o->failed != 0)
		return;
	o->zs.next_in = (Bytef *)(uintptr_t)data;
	o->zs.avail_in = (uInt)len;
	for (;;) {
		rc = deflate(&o->zs, flush);
		if (rc == Z_STREAM_ERROR) {
			o->failed = EINVAL;
			o->zerr = o->zs.msg ? o->zs.msg : "deflate failed";
			return;
		}
		if (o->zs.avail_out == 0) {
			pprof_out_flush(o);
			continue;
		}
		if (flush == Z_FINISH ? rc == Z_STREAM_END :
		    o->zs.avail_in == 0)
			break;
	}
	if (flush == Z_FINISH)
		pprof_out_flush(o);
}

/* Compress what was gathered in O->in; with FLUSH == Z_FINISH, and the
 * end of the stream. */
static void
pprof_out_drain(struct pprof_out *o, int flush)
{
	if ((o->nin != 0 || flush == Z_FINISH) && o->failed == 0)
		pprof_out_deflate(o, o->in, o->nin, flush);
	o->nin = 0;
}

/* protobuf-c's append callback: gather DATA, compress it a block at a
 * time (a large append goes to deflate directly). */
static void
pprof_out_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct pprof_out *o = (struct pprof_out *)b;
	const size_t chunk = (size_t)1 << 30;

	if (len <= sizeof o->in - o->nin) {
		memcpy(o->in + o->nin, data, len);
		o->nin += len;
		return;
	}
	pprof_out_drain(o, Z_NO_FLUSH);
	if (len <= sizeof o->in) {
		memcpy(o->in, data, len);
		o->nin = len;
		return;
	}
	while (len != 0 && o->failed == 0) {
		size_t n = len < chunk ? len : chunk;

		pprof_out_deflate(o, data, n, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

int
pprof_write(const struct profile *p, FILE *fp, char *err, size_t errlen)
{
	Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType *vt = NULL, **vtp = NULL, period_type;
	Perftools__Profiles__Mapping mapping, *mappingp = &mapping;
	Perftools__Profiles__Function *fn = NULL, **fnp = NULL;
	Perftools__Profiles__Location *loc = NULL, **locp = NULL;
	Perftools__Profiles__Line *line = NULL, **linep = NULL;
	Perftools__Profiles__Profile head = PERFTOOLS__PROFILES__PROFILE__INIT;
	int64_t *comments = NULL;
	struct pprof_out *o;
	size_t i;
	int rc = -1;

	m.n_sample_type = p->nvalue_types;
	if (p->nvalue_types != 0) {
		vt = xcalloc(p->nvalue_types, sizeof *vt);
		vtp = xcalloc(p->nvalue_types, sizeof *vtp);
	}
	for (i = 0; i < p->nvalue_types; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		vt[i].type = p->value_types[i].type;
		vt[i].unit = p->value_types[i].unit;
		vtp[i] = &vt[i];
	}
	m.sample_type = vtp;
	if (p->nvalue_types != 0 && p->default_value < p->nvalue_types)
		m.default_sample_type = p->value_types[p->default_value].type;

	perftools__profiles__mapping__init(&mapping);
	mapping.id = 1;
	mapping.has_functions = 1;
	mapping.has_filenames = 1;
	mapping.has_line_numbers = 1;
	m.n_mapping = 1;
	m.mapping = &mappingp;

	m.n_function = p->nfunctions;
	if (p->nfunctions != 0) {
		fn = xcalloc(p->nfunctions, sizeof *fn);
		fnp = xcalloc(p->nfunctions, sizeof *fnp);
	}
	for (i = 0; i < p->nfunctions; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = i + 1;
		fn[i].name = p->functions[i].name;
		fn[i].system_name = p->functions[i].system_name;
		fn[i].filename = p->functions[i].filename;
		fn[i].start_line = p->functions[i].start_line;
		fnp[i] = &fn[i];
	}
	m.function = fnp;

	m.n_location = p->nlocations;
	if (p->nlocations != 0) {
		loc = xcalloc(p->nlocations, sizeof *loc);
		locp = xcalloc(p->nlocations, sizeof *locp);
		line = xcalloc(p->nlocations, sizeof *line);
		linep = xcalloc(p->nlocations, sizeof *linep);
	}
	for (i = 0; i < p->nlocations; i++) {
		perftools__profiles__line__init(&line[i]);
		line[i].function_id = p->locations[i].function;
		line[i].line = p->locations[i].line;
		linep[i] = &line[i];
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = i + 1;
		loc[i].mapping_id = 1;
		loc[i].n_line = 1;
		loc[i].line = &linep[i];
		locp[i] = &loc[i];
	}
	m.location = locp;

	/* The samples (field 2) are encoded by hand (pprof-samples.h): the
	 * message goes out as field 1, the samples, then fields 3 on. */
	head.n_sample_type = m.n_sample_type;
	head.sample_type = m.sample_type;
	m.n_sample_type = 0;
	m.sample_type = NULL;

	m.n_string_table = p->nstrings;
	m.string_table = p->strings;
	m.time_nanos = p->time_nanos;
	m.duration_nanos = p->duration_nanos;
	perftools__profiles__value_type__init(&period_type);
	period_type.type = p->period_type.type;
	period_type.unit = p->period_type.unit;
	m.period_type = &period_type;
	m.period = p->period;
	m.n_comment = p->ncomments;
	if (p->ncomments != 0)
		comments = xcalloc(p->ncomments, sizeof *comments);
	for (i = 0; i < p->ncomments; i++)
		comments[i] = p->comments[i];
	m.comment = comments;

	/* Not zeroed: its two buffers are some 24 pages that only what is
	 * written to them touches (a small profile's few), and each page
	 * first touched is a page fault. */
	o = xmalloc(sizeof *o);
	memset(o, 0, offsetof(struct pprof_out, in));
	o->base.append = pprof_out_append;
	o->fp = fp;
	perftools__profiles__profile__pack_to_buffer(&head, &o->base);
	pprof_samples_pack(p, &o->base);
	perftools__profiles__profile__pack_to_buffer(&m, &o->base);
	pprof_out_drain(o, Z_FINISH);
	if (o->started)
		deflateEnd(&o->zs);
	if (o->failed == 0 && fflush(fp) != 0)
		o->failed = errno ? errno : EIO;
	if (o->failed == 0 && ferror(fp))
		o->failed = EIO;
	if (o->zerr != NULL)
		error_set(err, errlen, "cannot compress: %s", o->zerr);
	else if (o->failed != 0)
		error_set(err, errlen, "%s", strerror(o->failed));
	else
		rc = 0;
	if (o->failed != 0)
		errno = o->failed;
	free(o);
	free(vt);
	free(vtp);
	free(fn);
	free(fnp);
	free(loc);
	free(locp);
	free(line);
	free(linep);
	free(comments);
	return rc;
}

int
pprof_is_gzip(const uint8_t *buf, size_t len)
{
	return len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
}

/* Inflate gzip data (one or more members) into a new buffer, capped. */
static uint8_t *
pprof_gunzip(const uint8_t *in, size_t inlen, size_t *outlen, char *err,
    size_t errlen)
{
	z_stream zs;
	uint8_t *out = NULL;
	size_t cap = 0, used = 0;
	int rc;

	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		error_set(err, errlen, "cannot start decompression");
		return NULL;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	for (;;) {
		size_t chunk_in = inlen - (size_t)(zs.next_in - in);

		if (chunk_in > UINT32_MAX)
			chunk_in = UINT32_MAX;
		zs.avail_in = (uInt)chunk_in;
		if (used == cap) {
			if (cap >= PPROF_MAX_DECOMPRESSED) {
				error_set(err, errlen, "profile is larger "
				    "than %zu MiB when decompressed",
				    PPROF_MAX_DECOMPRESSED >> 20);
				goto fail;
			}
			if (cap == 0)
				cap = inlen < PPROF_MAX_DECOMPRESSED / 4 ?
				    inlen * 4 + 4096 : PPROF_MAX_DECOMPRESSED;
			else
				cap *= 2;
			if (cap > PPROF_MAX_DECOMPRESSED)
				cap = PPROF_MAX_DECOMPRESSED;
			out = xrealloc(out, cap);
		}
		zs.next_out = out + used;
		zs.avail_out = (uInt)(cap - used > UINT32_MAX ? UINT32_MAX :
		    cap - used);
		rc = inflate(&zs, Z_NO_FLUSH);
		used = (size_t)(zs.next_out - out);
		if (rc == Z_STREAM_END) {
			size_t left = inlen - (size_t)(zs.next_in - in);

			if (left == 0)
				break;
			if (!pprof_is_gzip(zs.next_in, left)) {
				error_set(err, errlen,
				    "trailing garbage after gzip data");
				goto fail;
			}
			inflateReset(&zs);
			continue;
		}
		if (rc == Z_BUF_ERROR && zs.avail_out != 0) {
			error_set(err, errlen, "gzip data is truncated");
			goto fail;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			error_set(err, errlen, "gzip data is corrupt: %s",
			    zs.msg ? zs.msg : "inflate failed");
			goto fail;
		}
	}
	inflateEnd(&zs);
	*outlen = used;
	return out;

fail:
	inflateEnd(&zs);
	free(out);
	return NULL;
}

/* Read the varint at *AT (before END) into *V and step past it; -1 if it
 * is cut off or longer than ten bytes. */
static int
pprof_varint(const uint8_t **at, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *at;
	unsigned shift = 0;

	*v = 0;
	while (p < end && shift < 70) {
		*v |= (uint64_t)(*p & 0x7f) << shift;
		if ((*p++ & 0x80) == 0) {
			*at = p;
			return 0;
		}
		shift += 7;
	}
	return -1;
}

/*
 * Walk the top-level fields of the LEN bytes of BUF (without allocating)
 * and add up what protobuf-c will allocate for them at the least: a scan
 * record per field, a pointer and a struct per message, the bytes of each
 * string and unknown field, eight bytes per comment.  Refuses, before any
 * of that is allocated, input that is not protobuf, an empty mapping,
 * location or function (its id would be 0, which pprof reserves), an
 * empty sample where there are sample types, and input needing more than
 * LIMIT bytes.  What nested messages need is left to the budget.
 */
static int
pprof_prescan(const uint8_t *buf, size_t len, size_t limit, char *err,
    size_t errlen)
{
	static const struct {
		const char *name;
		size_t size;
	} msgs[] = {
		[1] = { "sample type", sizeof(Perftools__Profiles__ValueType) },
		[2] = { "sample", sizeof(Perftools__Profiles__Sample) },
		[3] = { "mapping", sizeof(Perftools__Profiles__Mapping) },
		[4] = { "location", sizeof(Perftools__Profiles__Location) },
		[5] = { "function", sizeof(Perftools__Profiles__Function) },
	};
	const uint8_t *at = buf, *end = buf + len, *data;
	size_t need = sizeof(Perftools__Profiles__Profile), ntypes = 0;
	size_t nsamples = 0, empty_sample = SIZE_MAX, n;
	uint64_t key, field, size;

	while (at < end) {
		if (pprof_varint(&at, end, &key) != 0 || key >> 3 == 0 ||
		    key >> 3 > 0x1fffffff)
			goto invalid;
		field = key >> 3;
		size = 0;
		switch (key & 7) {
		case 0:
			if (pprof_varint(&at, end, &size) != 0)
				goto invalid;
			size = 0;
			data = at;
			break;
		case 1:
		case 5:
			size = (key & 7) == 1 ? 8 : 4;
			if (size > (size_t)(end - at))
				goto invalid;
			data = at;
			break;
		case 2:
			if (pprof_varint(&at, end, &size) != 0 ||
			    size > (size_t)(end - at))
				goto invalid;
			data = at;
			break;
		default:
			goto invalid;
		}
		at += size;
		n = PPROF_SCANNED_MEMBER;
		if (field >= 1 && field <= 5 && (key & 7) == 2) {
			n += sizeof(void *) + msgs[field].size;
			if (size == 0 && field >= 3) {
				error_set(err, errlen, "%s with id 0",
				    msgs[field].name);
				return -1;
			}
			if (field == 1)
				ntypes++;
			if (field == 2 && size == 0 &&
			    empty_sample == SIZE_MAX)
				empty_sample = nsamples;
			if (empty_sample != SIZE_MAX && ntypes != 0)
				break;	/* refused below, before more work */
			if (field == 2)
				nsamples++;
		} else if (field == 6) {
			n += sizeof(char *) + (size_t)size + 1;
		} else if (field == 13 && (key & 7) == 2) {
			/* Packed: one comment per varint ending in it. */
			for (; data < at; data++)
				n += (*data & 0x80) ? 0 : sizeof(int64_t);
		} else if (field == 13) {
			n += sizeof(int64_t);
		} else if (field > 15) {
			n += sizeof(ProtobufCMessageUnknownField) +
			    (size_t)size;
		}
		if (n > limit - need) {
			error_set(err, errlen, "profile needs too much "
			    "memory to decode");
			return -1;
		}
		need += n;
	}
	if (empty_sample != SIZE_MAX && ntypes != 0) {
		error_set(err, errlen, "sample %zu has 0 values for %zu "
		    "sample types", empty_sample, ntypes);
		return -1;
	}
	return 0;
invalid:
	error_set(err, errlen, "not a valid profile protobuf");
	return -1;
}

/* Allocate for protobuf-c unless that would overrun the budget. */
static void *
pprof_budget_alloc(void *data, size_t size)
{
	struct pprof_budget *b = data;

	if (size > b->limit - b->used) {
		b->refused = 1;
		return NULL;
	}
	b->used += size;
	return malloc(size ? size : 1);
}

/* Free for protobuf-c (the budget is never given back). */
static void
pprof_budget_free(void *data, void *ptr)
{
	free(ptr);
}

/* Insert KEY (non-zero) -> VALUE into M; returns -1 if KEY is present. */
static int
pprof_map_put(struct pprof_map *m, uint64_t key, size_t value)
{
	size_t i, mask;

	if ((m->n + 1) * 2 > m->cap) {
		struct pprof_map old = *m;

		m->cap = old.cap ? old.cap * 2 : 64;
		m->keys = xcalloc(m->cap, sizeof *m->keys);
		m->values = xcalloc(m->cap, sizeof *m->values);
		m->n = 0;
		for (i = 0; i < old.cap; i++) {
			if (old.keys[i] != 0)
				pprof_map_put(m, old.keys[i], old.values[i]);
		}
		free(old.keys);
		free(old.values);
	}
	mask = m->cap - 1;
	i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
	while (m->keys[i] != 0) {
		if (m->keys[i] == key)
			return -1;
		i = (i + 1) & mask;
	}
	m->keys[i] = key;
	m->values[i] = value;
	m->n++;
	return 0;
}

/* Look KEY up in M: 0 with *VALUE set, or -1 when absent. */
static int
pprof_map_get(const struct pprof_map *m, uint64_t key, size_t *value)
{
	size_t i, mask;

	if (m->cap == 0 || key == 0)
		return -1;
	mask = m->cap - 1;
	i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 17) & mask;
	while (m->keys[i] != 0) {
		if (m->keys[i] == key) {
			*value = m->values[i];
			return 0;
		}
		i = (i + 1) & mask;
	}
	return -1;
}

/* Free a map's tables. */
static void
pprof_map_free(struct pprof_map *m)
{
	free(m->keys);
	free(m->values);
}

/* Map string table index IDX (of field WHAT) to a model id in *OUT. */
static int
pprof_str(struct pprof_reader *r, int64_t idx, const char *what, str_id *out)
{
	size_t n = r->m->n_string_table;

	if (idx == 0) {
		*out = 0;
		return 0;
	}
	if (idx < 0 || (uint64_t)idx >= n) {
		error_set(r->err, r->errlen, "%s string index %" PRId64
		    " out of range (%zu strings)", what, idx, n);
		return -1;
	}
	*out = r->strmap[idx];
	return 0;
}

/* Intern the string table. */
static int
pprof_read_strings(struct pprof_reader *r)
{
	size_t i, n = r->m->n_string_table;

	if (n == 0)
		return 0;
	if (r->m->string_table[0][0] != '\0') {
		error_set(r->err, r->errlen, "first string is not empty");
		return -1;
	}
	r->strmap = xcalloc(n, sizeof *r->strmap);
	for (i = 1; i < n; i++)
		r->strmap[i] = profile_intern(r->p, r->m->string_table[i]);
	return 0;
}

/* Read sample types, period, times, comments and the default type. */
static int
pprof_read_header(struct pprof_reader *r)
{
	const Perftools__Profiles__Profile *m = r->m;
	struct profile *p = r->p;
	str_id id, def;
	size_t i;

	p->nvalue_types = m->n_sample_type;
	if (m->n_sample_type != 0)
		p->value_types = xcalloc(m->n_sample_type,
		    sizeof *p->value_types);
	for (i = 0; i < m->n_sample_type; i++) {
		if (pprof_str(r, m->sample_type[i]->type, "sample type",
		    &p->value_types[i].type) != 0 ||
		    pprof_str(r, m->sample_type[i]->unit, "sample unit",
		    &p->value_types[i].unit) != 0)
			return -1;
	}
	p->default_value = m->n_sample_type ? m->n_sample_type - 1 : 0;
	if (pprof_str(r, m->default_sample_type, "default sample type",
	    &def) != 0)
		return -1;
	for (i = 0; def != 0 && i < m->n_sample_type; i++) {
		if (p->value_types[i].type == def) {
			p->default_value = i;
			break;
		}
	}

	if (m->period_type != NULL &&
	    (pprof_str(r, m->period_type->type, "period type",
	    &p->period_type.type) != 0 ||
	    pprof_str(r, m->period_type->unit, "period unit",
	    &p->period_type.unit) != 0))
		return -1;
	p->period = m->period;
	p->time_nanos = m->time_nanos;
	p->duration_nanos = m->duration_nanos;

	for (i = 0; i < m->n_comment; i++) {
		if (pprof_str(r, m->comment[i], "comment", &id) != 0)
			return -1;
		profile_add_comment(p, profile_str(p, id));
	}
	if (pprof_str(r, m->drop_frames, "drop frames", &id) != 0 ||
	    pprof_str(r, m->keep_frames, "keep frames", &id) != 0 ||
	    pprof_str(r, m->doc_url, "doc url", &id) != 0)
		return -1;
	return 0;
}

/* Read the function table into r->functions. */
static int
pprof_read_functions(struct pprof_reader *r)
{
	const Perftools__Profiles__Profile *m = r->m;
	str_id name, system_name, filename;
	size_t i;

	for (i = 0; i < m->n_function; i++) {
		const Perftools__Profiles__Function *f = m->function[i];
		uint64_t id;

		if (f->id == 0) {
			error_set(r->err, r->errlen, "function with id 0");
			return -1;
		}
		if (pprof_str(r, f->name, "function name", &name) != 0 ||
		    pprof_str(r, f->system_name, "function system name",
		    &system_name) != 0 ||
		    pprof_str(r, f->filename, "function file name",
		    &filename) != 0)
			return -1;
		id = profile_function_ids(r->p, name, system_name, filename,
		    f->start_line);
		if (pprof_map_put(&r->functions, f->id, id) != 0) {
			error_set(r->err, r->errlen,
			    "function id %" PRIu64 " is not unique", f->id);
			return -1;
		}
	}
	return 0;
}

/* Append model location ID to the frame pool. */
static void
pprof_push_frame(struct pprof_reader *r, uint64_t id)
{
	void *v = r->frame_pool;

	xgrow(&v, &r->frame_pool_cap, r->nframe_pool + 1,
	    sizeof *r->frame_pool);
	r->frame_pool = v;
	r->frame_pool[r->nframe_pool++] = id;
}

/* Read the location table, expanding inlined lines into frames. */
static int
pprof_read_locations(struct pprof_reader *r)
{
	const Perftools__Profiles__Profile *m = r->m;
	struct profile *p = r->p;
	size_t i, j, fid;
	uint64_t id;
	char addr[32];

	if (m->n_location != 0)
		r->frames = xcalloc(m->n_location, sizeof *r->frames);
	for (i = 0; i < m->n_location; i++) {
		const Perftools__Profiles__Location *l = m->location[i];

		if (l->id == 0) {
			error_set(r->err, r->errlen, "location with id 0");
			return -1;
		}
		if (pprof_map_put(&r->locations, l->id, i) != 0) {
			error_set(r->err, r->errlen,
			    "location id %" PRIu64 " is not unique", l->id);
			return -1;
		}
		r->frames[i].off = r->nframe_pool;
		for (j = 0; j < l->n_line; j++) {
			const Perftools__Profiles__Line *ln = l->line[j];

			if (ln->function_id == 0)
				fid = profile_function_ids(p, 0, 0, 0, 0);
			else if (pprof_map_get(&r->functions, ln->function_id,
			    &fid) != 0) {
				error_set(r->err, r->errlen, "location %"
				    PRIu64 " refers to unknown function %"
				    PRIu64, l->id, ln->function_id);
				return -1;
			}
			pprof_push_frame(r, profile_location(p, fid,
			    ln->line));
		}
		if (l->n_line == 0) {
			/* Unsymbolized: the address is all there is. */
			snprintf(addr, sizeof addr, "0x%" PRIx64, l->address);
			id = profile_intern(p, l->address ? addr : NULL);
			fid = profile_function_ids(p, id, id, 0, 0);
			pprof_push_frame(r, profile_location(p, fid, 0));
		}
		r->frames[i].n = r->nframe_pool - r->frames[i].off;
	}
	return 0;
}

/* Read the samples, checking every location id, value and label. */
static int
pprof_read_samples(struct pprof_reader *r)
{
	const Perftools__Profiles__Profile *m = r->m;
	struct profile_label *labels = NULL;
	size_t labels_cap = 0, total = 0, i, j, k, idx;
	uint64_t *stack = NULL;
	size_t stack_cap = 0, nstack;
	void *v;
	int rc = -1;

	for (i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];

		if (s->n_value != m->n_sample_type) {
			error_set(r->err, r->errlen, "sample %zu has %zu "
			    "values for %zu sample types", i, s->n_value,
			    m->n_sample_type);
			goto out;
		}
		nstack = 0;
		for (j = 0; j < s->n_location_id; j++) {
			const struct pprof_frames *f;

			if (pprof_map_get(&r->locations, s->location_id[j],
			    &idx) != 0) {
				error_set(r->err, r->errlen, "sample %zu "
				    "refers to unknown location %" PRIu64, i,
				    s->location_id[j]);
				goto out;
			}
			f = &r->frames[idx];
			if (f->n > r->max_frames - total) {
				error_set(r->err, r->errlen, "profile has "
				    "more than %zu frames", r->max_frames);
				goto out;
			}
			total += f->n;
			v = stack;
			xgrow(&v, &stack_cap, nstack + f->n, sizeof *stack);
			stack = v;
			for (k = 0; k < f->n; k++)
				stack[nstack++] = r->frame_pool[f->off + k];
		}
		v = labels;
		xgrow(&v, &labels_cap, s->n_label + 1, sizeof *labels);
		labels = v;
		for (j = 0; j < s->n_label; j++) {
			const Perftools__Profiles__Label *l = s->label[j];

			if (pprof_str(r, l->key, "label key",
			    &labels[j].key) != 0 ||
			    pprof_str(r, l->str, "label value",
			    &labels[j].str) != 0 ||
			    pprof_str(r, l->num_unit, "label unit",
			    &labels[j].num_unit) != 0)
				goto out;
			labels[j].num = l->num;
		}
		profile_add_sample(r->p, stack, nstack, s->value, labels,
		    s->n_label);
	}
	rc = 0;
out:
	free(stack);
	free(labels);
	return rc;
}

struct profile *
pprof_parse(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
	struct pprof_budget budget;
	ProtobufCAllocator alloc;
	struct pprof_reader r;
	uint8_t *raw = NULL;
	size_t rawlen = len;
	struct profile *p = NULL;

	memset(&r, 0, sizeof r);
	r.err = err;
	r.errlen = errlen;
	if (pprof_is_gzip(buf, len)) {
		raw = pprof_gunzip(buf, len, &rawlen, err, errlen);
		if (raw == NULL)
			return NULL;
		buf = raw;
	} else if (len > PPROF_MAX_DECOMPRESSED) {
		error_set(err, errlen, "profile is larger than %zu MiB",
		    PPROF_MAX_DECOMPRESSED >> 20);
		return NULL;
	}

	budget.used = 0;
	budget.refused = 0;
	budget.limit = rawlen < (PPROF_UNPACK_MAX - PPROF_UNPACK_FLOOR) /
	    PPROF_UNPACK_RATIO ? PPROF_UNPACK_FLOOR +
	    rawlen * PPROF_UNPACK_RATIO : PPROF_UNPACK_MAX;
	if (pprof_prescan(buf, rawlen, budget.limit, err, errlen) != 0) {
		free(raw);
		return NULL;
	}
	alloc.alloc = pprof_budget_alloc;
	alloc.free = pprof_budget_free;
	alloc.allocator_data = &budget;
	r.m = perftools__profiles__profile__unpack(&alloc, rawlen, buf);
	free(raw);
	if (r.m == NULL) {
		if (budget.refused)
			error_set(err, errlen, "profile needs too much "
			    "memory to decode");
		else
			error_set(err, errlen, "not a valid profile "
			    "protobuf");
		return NULL;
	}

	r.max_frames = PPROF_FRAMES_FLOOR + rawlen * PPROF_FRAMES_RATIO;
	if (r.max_frames > PPROF_MAX_FRAMES)
		r.max_frames = PPROF_MAX_FRAMES;
	r.p = profile_new();
	if (pprof_read_strings(&r) != 0 ||
	    pprof_read_header(&r) != 0 ||
	    pprof_read_functions(&r) != 0 ||
	    pprof_read_locations(&r) != 0 ||
	    pprof_read_samples(&r) != 0)
		profile_free(r.p);
	else
		p = r.p;

	perftools__profiles__profile__free_unpacked(
	    (Perftools__Profiles__Profile *)r.m, &alloc);
	free(r.strmap);
	pprof_map_free(&r.functions);
	pprof_map_free(&r.locations);
	free(r.frames);
	free(r.frame_pool);
	return p;
}
