/*
 * folded.c: the folded stack reader and writer (see folded.h).
 *
 * The writer renders each sample's stack as text, sorts the texts and sums
 * equal neighbours, so equal stacks merge even when they come from
 * different locations of same-named functions and the output order never
 * depends on sample order.  The reader is strict about the weight (the one
 * thing a flame graph cannot do without) and lenient about frames, and
 * never trusts the input to be NUL-terminated.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "folded.h"
#include "xmalloc.h"

/* The reader may hold this many bytes per input byte, plus a floor, up to
 * a cap: like the pprof reader's budget.  Real folded files (stacks merged,
 * as every tool writes them) need one to four; millions of tiny lines
 * such as "a;b 1" need ten or more and are refused.  The floor lets any
 * small file through, even one deep stack of 100k distinct short names
 * (24 bytes per byte). */
#define FOLDED_MEM_RATIO 8
#define FOLDED_MEM_FLOOR ((size_t)64 << 20)
#define FOLDED_MEM_MAX ((size_t)2 << 30)
/* What one more frame of a line costs at the least while it is read: its
 * pointer, length and location id, and its place in the sample pool. */
#define FOLDED_FRAME_COST (2 * sizeof(void *) + 2 * sizeof(uint64_t))

/* One rendered stack and its weight. */
struct folded_line {
	char *text;
	int64_t weight;
};

/* The frame text of a function name: safe to put between semicolons. */
static char *
folded_frame_name(const char *name)
{
	char *s, *c;

	size_t i;

	if (*name == '\0')
		return xstrdup("[unknown]");
	s = xstrdup(name);
	/* A real frame must not read back as a VM-state pseudo-frame. */
	for (i = 0; i < PROFILE_NSTATES; i++) {
		if (strcmp(s, profile_states[i].frame) == 0) {
			s[0] = '(';
			s[strlen(s) - 1] = ')';
		}
	}
	for (c = s; *c != '\0'; c++) {
		if (*c == ';' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '_';
	}
	return s;
}

/* Render the stack of S, root first, with its pseudo-frames. */
static char *
folded_render(const struct profile *p, const struct profile_sample *s,
    char **names)
{
	const uint64_t *locs = profile_sample_locs(p, s);
	struct profile_vm_state st = profile_sample_state(p, s);
	const char *extra[2];
	size_t len = 0, nextra = 0, i, n;
	char *text, *at;
	uint32_t j;

	/* The GVL state's pseudo-frame first, then the GC's. */
	if (st.gvl_state >= 0)
		extra[nextra++] = profile_states[st.gvl_state].frame;
	if (st.gc_state >= 0)
		extra[nextra++] = profile_states[st.gc_state].frame;
	for (j = 0; j < s->nloc; j++) {
		uint64_t fn = profile_location_function_id(p, locs[j]);

		if (fn != 0)
			len += strlen(names[fn - 1]) + 1;
	}
	for (i = 0; i < nextra; i++)
		len += strlen(extra[i]) + 1;
	if (len == 0)
		return xstrdup("[unknown]");

	at = text = xmalloc(len);
	for (j = s->nloc; j-- > 0; ) {
		uint64_t fn = profile_location_function_id(p, locs[j]);

		if (fn == 0)
			continue;
		n = strlen(names[fn - 1]);
		memcpy(at, names[fn - 1], n);
		at += n;
		*at++ = ';';
	}
	for (i = 0; i < nextra; i++) {
		n = strlen(extra[i]);
		memcpy(at, extra[i], n);
		at += n;
		*at++ = ';';
	}
	at[-1] = '\0';
	return text;
}

/* Order lines by stack text. */
static int
folded_cmp_line(const void *a, const void *b)
{
	const struct folded_line *la = a, *lb = b;

	return strcmp(la->text, lb->text);
}

int
folded_write(const struct profile *p, FILE *fp, size_t value_index)
{
	struct folded_line *lines = NULL;
	char **names = NULL;
	size_t nlines = 0, i, j;
	int64_t w;
	int rc = 0, saved = 0;

	if (value_index >= p->nvalue_types)
		goto flush;
	if (p->nfunctions != 0)
		names = xcalloc(p->nfunctions, sizeof *names);
	for (i = 0; i < p->nfunctions; i++)
		names[i] = folded_frame_name(profile_str(p,
		    p->functions[i].name));
	if (p->nsamples != 0)
		lines = xcalloc(p->nsamples, sizeof *lines);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];

		w = profile_sample_values(p, s)[value_index];
		if (w == 0)
			continue;
		lines[nlines].text = folded_render(p, s, names);
		lines[nlines].weight = w;
		nlines++;
	}
	if (nlines != 0)
		qsort(lines, nlines, sizeof *lines, folded_cmp_line);

	for (i = 0; i < nlines; i = j) {
		w = lines[i].weight;
		for (j = i + 1; j < nlines &&
		    strcmp(lines[i].text, lines[j].text) == 0; j++)
			w = profile_add_sat(w, lines[j].weight);
		if (w != 0 && rc == 0 &&
		    fprintf(fp, "%s %lld\n", lines[i].text, (long long)w) < 0) {
			saved = errno;
			rc = -1;
		}
	}
	for (i = 0; i < nlines; i++)
		free(lines[i].text);
	free(lines);
	for (i = 0; i < p->nfunctions; i++)
		free(names[i]);
	free(names);

flush:
	if (fflush(fp) != 0 && rc == 0) {
		saved = errno;
		rc = -1;
	}
	if (ferror(fp) && rc == 0) {
		saved = EIO;
		rc = -1;
	}
	if (rc != 0)
		errno = saved ? saved : EIO;
	return rc;
}

/* Parse the weight token S (LEN bytes) of line LINENO into *OUT. */
static int
folded_parse_weight(const char *s, size_t len, size_t lineno, int64_t *out,
    char *err, size_t errlen)
{
	int64_t w = 0;
	size_t i;
	int shown = len > 32 ? 32 : (int)len;

	if (len > 0 && s[0] == '-') {
		error_set(err, errlen, "line %zu: negative weight '%.*s'",
		    lineno, shown, s);
		return -1;
	}
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			error_set(err, errlen, "line %zu: weight '%.*s' is "
			    "not an integer", lineno, shown, s);
			return -1;
		}
		if (w > (INT64_MAX - (s[i] - '0')) / 10) {
			error_set(err, errlen, "line %zu: weight '%.*s' is "
			    "too large", lineno, shown, s);
			return -1;
		}
		w = w * 10 + (s[i] - '0');
	}
	*out = w;
	return 0;
}

/* Whether C is a blank that may separate the weight. */
static int
folded_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Turn trailing pseudo-frames of FRAMES (root first) into labels. */
static size_t
folded_take_states(struct profile *p, const char **frames, size_t *lens,
    size_t nframes, struct profile_label *labels, size_t *nlabels)
{
	size_t i, k, flen;
	int taken[2] = { 0, 0 };

	while (nframes > 0) {
		for (i = 0; i < PROFILE_NSTATES; i++) {
			flen = strlen(profile_states[i].frame);
			if (lens[nframes - 1] == flen &&
			    memcmp(frames[nframes - 1], profile_states[i].frame,
			    flen) == 0)
				break;
		}
		if (i == PROFILE_NSTATES)
			break;
		k = strcmp(profile_states[i].key, PROFILE_LABEL_GVL) == 0 ?
		    0 : 1;
		if (taken[k])
			break;
		taken[k] = 1;
		memset(&labels[*nlabels], 0, sizeof labels[*nlabels]);
		labels[*nlabels].key = profile_intern(p, profile_states[i].key);
		labels[*nlabels].str = profile_intern(p,
		    profile_states[i].value);
		(*nlabels)++;
		nframes--;
	}
	return nframes;
}

struct profile *
folded_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	static const char *const type[] = { "weight" };
	static const char *const unit[] = { "nanoseconds" };
	struct profile *p = profile_new();
	struct profile_label labels[2];
	const char **frames = NULL, *line, *end, *eol, *stop, *f, *c;
	size_t *lens = NULL, frames_cap = 0, lens_cap = 0, nframes, nlabels;
	size_t lineno = 0, i, n, used, names = 0, limit;
	uint64_t *locs = NULL;
	size_t locs_cap = 0;
	int64_t w;
	void *v;

	limit = len < (FOLDED_MEM_MAX - FOLDED_MEM_FLOOR) / FOLDED_MEM_RATIO ?
	    FOLDED_MEM_FLOOR + len * FOLDED_MEM_RATIO : FOLDED_MEM_MAX;

	profile_set_value_types(p, 1, type, unit);
	for (line = buf, end = buf + len; line < end; line = eol + 1) {
		lineno++;
		eol = memchr(line, '\n', (size_t)(end - line));
		if (eol == NULL)
			eol = end;
		/* Blanks after the weight and a CR are dropped; the stack is
		 * everything before the one blank that precedes the weight,
		 * kept exactly (as flamegraph.pl does), so that names with
		 * edge spaces survive a round trip. */
		stop = eol;
		while (stop > line && folded_is_blank(stop[-1]))
			stop--;
		if (stop == line)
			continue;

		for (f = stop; f > line && !folded_is_blank(f[-1]); f--)
			;
		if (folded_parse_weight(f, (size_t)(stop - f), lineno, &w,
		    err, errlen) != 0)
			goto fail;
		if (f == line || f - 1 == line) {
			error_set(err, errlen, "line %zu: no stack before "
			    "the weight", lineno);
			goto fail;
		}
		f--;

		/* Refuse a line before storing any of it when its frames
		 * would overrun the budget; names are counted as they come,
		 * and the model twice, as its arrays grow by doubling. */
		for (n = 1, c = line; (c = memchr(c, ';',
		    (size_t)(f - c))) != NULL; c++)
			n++;
		used = 2 * profile_footprint(p) + names + (frames_cap +
		    lens_cap + locs_cap) * sizeof(uint64_t);
		if (used > limit || n > (limit - used) / FOLDED_FRAME_COST) {
			error_set(err, errlen, "line %zu: profile needs too "
			    "much memory to read", lineno);
			goto fail;
		}

		nframes = 0;
		for (;;) {
			const char *semi = memchr(line, ';',
			    (size_t)(f - line));
			const char *fend = semi ? semi : f;

			v = frames;
			xgrow(&v, &frames_cap, nframes + 1, sizeof *frames);
			frames = v;
			v = lens;
			xgrow(&v, &lens_cap, nframes + 1, sizeof *lens);
			lens = v;
			frames[nframes] = line;
			lens[nframes] = (size_t)(fend - line);
			nframes++;
			if (semi == NULL)
				break;
			line = semi + 1;
		}

		nlabels = 0;
		nframes = folded_take_states(p, frames, lens, nframes, labels,
		    &nlabels);
		v = locs;
		xgrow(&v, &locs_cap, nframes + 1, sizeof *locs);
		locs = v;
		for (i = 0; i < nframes; i++) {
			size_t nstrings = p->nstrings;
			str_id name = profile_intern_len(p, frames[i],
			    lens[i]);

			if (p->nstrings != nstrings)
				names += lens[i];
			uint64_t fn = profile_function_ids(p, name, name, 0, 0);

			locs[nframes - 1 - i] = profile_location(p, fn, 0);
		}
		if (profile_add_sample(p, locs, nframes, &w, labels,
		    nlabels) != 0 || profile_error(p) != NULL) {
			error_set(err, errlen, "line %zu: %s", lineno,
			    profile_error(p));
			goto fail;
		}
	}
	free(frames);
	free(lens);
	free(locs);
	return p;

fail:
	free(frames);
	free(lens);
	free(locs);
	profile_free(p);
	return NULL;
}
