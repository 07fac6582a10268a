/*
 * tui-source.c: the browser's annotated source (see tui-int.h): the
 * lines of one function with the time each took, itself and with what it
 * called, beside the text of the file when it can be read.  Line numbers
 * come from a profile recorded with --lines; without them there is
 * nothing to annotate, and the view says so.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "tui-int.h"
#include "xmalloc.h"

/* Source files longer than this are shown only up to it. */
#define TUI_SOURCE_MAX_LINES 200000

/* One frame of the function on one sample's stack. */
struct tui_hit {
	int64_t line;
	size_t sample;
	int64_t self, w;
};

static int
tui_cmp_hit(const void *a, const void *b)
{
	const struct tui_hit *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/* LINE as it can be drawn: tabs to spaces, control bytes to '?', no
 * newline. */
static char *
tui_source_text(const char *line)
{
	size_t n = 0, cap = strlen(line) * 8 + 1;
	char *out = xmalloc(cap);

	for (; *line != '\0' && *line != '\n'; line++) {
		if (*line == '\t') {
			do
				out[n++] = ' ';
			while (n % 8 != 0);
		} else if ((unsigned char)*line < 0x20 || *line == 0x7f)
			out[n++] = '?';
		else
			out[n++] = *line;
	}
	out[n] = '\0';
	return out;
}

/* FILE, named as the profile names it, opened for reading; *PATH is the
 * name it was opened by (owned by the caller), or NULL.  A relative name
 * is relative to where the program ran, which need not be here: it is
 * looked for in --source-dir first, then here, then beside the profile
 * (a profile kept with the program it profiled). */
static FILE *
tui_source_open(const struct tui *t, const char *file, char **path)
{
	const char *input = t->o->input, *slash;
	char *cand[3];
	size_t i, n = 0;
	FILE *fp = NULL;

	*path = NULL;
	if (*file == '/')
		cand[n++] = xstrdup(file);
	else {
		if (t->o->source_dir != NULL && *t->o->source_dir != '\0')
			cand[n++] = xasprintf("%s/%s", t->o->source_dir, file);
		cand[n++] = xstrdup(file);
		slash = input ? strrchr(input, '/') : NULL;
		if (slash != NULL)
			cand[n++] = xasprintf("%.*s/%s", (int)(slash - input),
			    input, file);
	}
	for (i = 0; i < n; i++) {
		if (fp == NULL && (fp = fopen(cand[i], "r")) != NULL)
			*path = cand[i];
		else
			free(cand[i]);
	}
	return fp;
}

/* Mark in MINE the functions to annotate: FN's name and file, or the
 * first function called SUBJECT with a file.  Returns the file name. */
static const char *
tui_source_pick(const struct profile *p, const char *subject, uint64_t fn,
    uint8_t *mine)
{
	const struct profile_function *f;
	size_t i;

	/* By name: the first such function with a file, else the first. */
	for (i = 0; fn == 0 && subject != NULL && i < p->nfunctions; i++) {
		f = &p->functions[i];
		if (strcmp(profile_str(p, f->name), subject) == 0 &&
		    *profile_str(p, f->filename) != '\0')
			fn = i + 1;
	}
	for (i = 0; fn == 0 && subject != NULL && i < p->nfunctions; i++) {
		if (strcmp(profile_str(p, p->functions[i].name), subject) == 0)
			fn = i + 1;
	}
	if (fn == 0 || fn > p->nfunctions)
		return NULL;
	f = &p->functions[fn - 1];
	/* One method may be several functions (another start line). */
	for (i = 0; i < p->nfunctions; i++) {
		mine[i + 1] = p->functions[i].name == f->name &&
		    p->functions[i].filename == f->filename;
	}
	return profile_str(p, f->filename);
}

int
tui_fill_source(struct tui *t, struct tui_view *v, const char *subject,
    uint64_t fn, char *err, size_t errlen)
{
	const struct profile *p = t->p;
	uint8_t *mine = xcalloc(p->nfunctions + 1, 1);
	struct tui_hit *hits = NULL;
	size_t nhits = 0, hcap = 0, icap = 0, i, h, best = 0;
	const char *file = tui_source_pick(p, subject, fn, mine);
	char *buf = NULL, *path = NULL;
	size_t bufcap = 0;
	int64_t line = 0;
	FILE *fp = NULL;
	uint32_t j;

	v->title = xasprintf("Source of %s (%s)", subject,
	    file && *file ? file : "no file");
	for (i = 0; file != NULL && i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		int64_t w = profile_sample_values(p, s)[t->vi];

		for (j = 0; j < s->nloc; j++) {
			uint64_t f = profile_location_function_id(p, locs[j]);
			void *vp = hits;

			if (f == 0 || !mine[f] || p->locations[locs[j] - 1].line <= 0)
				continue;
			xgrow(&vp, &hcap, nhits + 1, sizeof *hits);
			hits = vp;
			hits[nhits].line = p->locations[locs[j] - 1].line;
			hits[nhits].sample = i;
			hits[nhits].self = j == 0 ? w : 0;
			hits[nhits++].w = w;
		}
	}
	free(mine);
	if (nhits == 0) {
		error_set(err, errlen, "no line numbers for %s (record with --lines)",
		    subject);
		return -1;
	}
	qsort(hits, nhits, sizeof *hits, tui_cmp_hit);
	if (*file != '\0')
		fp = tui_source_open(t, file, &path);
	if (fp == NULL) {
		free(v->title);
		v->title = xasprintf("Source of %s (%s: not readable)", subject,
		    *file ? file : "no file");
		if (*file != '\0' && *file != '/')
			snprintf(t->note, sizeof t->note, "%s is neither here "
			    "nor beside the profile: --source-dir DIR", file);
	} else if (strcmp(path, file) != 0) {
		/* Say which file is shown when it is not the one named. */
		free(v->title);
		v->title = xasprintf("Source of %s (%s)", subject, path);
	}
	free(path);
	/* The file's lines, then any line the profile names past its end;
	 * without the file, only the lines the profile names. */
	for (h = 0;;) {
		struct tui_item *it;
		char *text = NULL;
		int64_t self = 0, cum = 0;
		size_t first = h;
		void *vp = v->items;

		if (fp != NULL && line < TUI_SOURCE_MAX_LINES &&
		    getline(&buf, &bufcap, fp) >= 0) {
			line++;
			text = tui_source_text(buf);
		} else if (h < nhits) {
			line = hits[h].line;
			text = xstrdup(fp ? "(past the end of the file)" : "");
		} else
			break;
		for (; h < nhits && hits[h].line < line; h++)
			;
		for (first = h; h < nhits && hits[h].line == line; h++) {
			self = profile_add_sat(self, hits[h].self);
			/* A line on a stack twice (recursion) counts once. */
			if (h == first || hits[h].sample != hits[h - 1].sample)
				cum = profile_add_sat(cum, hits[h].w);
		}
		xgrow(&vp, &icap, v->nitems + 1, sizeof *v->items);
		v->items = vp;
		it = &v->items[v->nitems];
		memset(it, 0, sizeof *it);
		it->name = text;
		it->line = line;
		it->self = self;
		it->cum = cum;
		it->kind = -1;
		if (self > v->items[best].self ||
		    (v->items[best].self == 0 && cum > v->items[best].cum))
			best = v->nitems;
		v->nitems++;
	}
	if (fp != NULL)
		fclose(fp);
	free(buf);
	free(hits);
	v->sel = best;
	return 0;
}
