/*
 * speedscope.c: the speedscope writer (see speedscope.h), following the
 * file format speedscope documents in its file-format-schema.json.
 *
 * Frames are numbered once for the whole file: the four VM-state
 * pseudo-frames first, then one frame a location that a sample uses (in
 * the order samples first use them), then one a distinct user mark name.
 * Every string goes through the JSON escaper with JSON_XML_SAFE, which
 * also turns bytes that are not UTF-8 into U+FFFD, so the file is valid
 * JSON whatever the program's names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "frames.h"
#include "json.h"
#include "speedscope-int.h"
#include "speedscope.h"
#include "timeline.h"
#include "xmalloc.h"

/* Whether S of P counts for value VI. */
static int
speedscope_counts(const struct speedscope *w, const struct profile_sample *s)
{
	return profile_sample_values(w->p, s)[w->vi] > 0;
}

/* Locations LX and LY of P by what speedscope tells frames apart by:
 * name, file, line. */
static int
speedscope_loc_key(const struct profile *p, uint64_t lx, uint64_t ly)
{
	const struct profile_location *x = &p->locations[lx - 1], *y = &p->locations[ly - 1];
	str_id nx = 0, ny = 0, fx = 0, fy = 0;

	if (x->function != 0 && x->function <= p->nfunctions) {
		nx = p->functions[x->function - 1].name;
		fx = p->functions[x->function - 1].filename;
	}
	if (y->function != 0 && y->function <= p->nfunctions) {
		ny = p->functions[y->function - 1].name;
		fy = p->functions[y->function - 1].filename;
	}
	if (nx != ny)
		return nx < ny ? -1 : 1;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* For qsort: the positions of first use, by key, then position. */
static const struct profile *speedscope_sort_p;
static const uint64_t *speedscope_sort_locs;

static int
speedscope_loc_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = speedscope_loc_key(speedscope_sort_p, speedscope_sort_locs[x],
	    speedscope_sort_locs[y]);

	return c != 0 ? c : x < y ? -1 : x > y;
}

/* Number the frames of the locations the counted samples use, in the
 * order of first use; locations that speedscope would not tell apart (a
 * function's several entries, as without --lines) share one. */
static void
speedscope_number(struct speedscope *w)
{
	const struct profile *p = w->p;
	uint64_t *used = xcalloc(p->nlocations + 1, sizeof *used);
	size_t i, n = 0, *order, *canon;
	uint32_t j;

	w->loc_frame = xcalloc(p->nlocations + 1, sizeof *w->loc_frame);
	w->frame_loc = xcalloc(p->nlocations + 1, sizeof *w->frame_loc);
	w->nframes = PROFILE_NSTATES;
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);

		if (!speedscope_counts(w, s))
			continue;
		if (s->nloc + (size_t)2 > w->cap) {
			w->cap = s->nloc + (size_t)2;
			w->stack = xrealloc(w->stack, w->cap * sizeof *w->stack);
		}
		for (j = 0; j < s->nloc; j++) {
			uint64_t l = locs[j];

			if (l == 0 || l > p->nlocations || w->loc_frame[l] != 0)
				continue;
			used[n++] = l;
			w->loc_frame[l] = 1;	/* seen */
		}
	}
	order = xcalloc(n + 1, sizeof *order);
	canon = xcalloc(n + 1, sizeof *canon);
	for (i = 0; i < n; i++)
		order[i] = i;
	speedscope_sort_p = p;
	speedscope_sort_locs = used;
	qsort(order, n, sizeof *order, speedscope_loc_cmp);
	/* The first use of each key stands for the others. */
	for (i = 0; i < n; i++) {
		if (i > 0 && speedscope_loc_key(p, used[order[i - 1]], used[order[i]]) == 0)
			canon[order[i]] = canon[order[i - 1]];
		else
			canon[order[i]] = order[i];
	}
	for (i = 0; i < n; i++) {
		if (canon[i] == i) {
			w->frame_loc[w->nframes - PROFILE_NSTATES] = used[i];
			w->loc_frame[used[i]] = (uint32_t)w->nframes++ + 1;
		} else {
			w->loc_frame[used[i]] = w->loc_frame[used[canon[i]]];
		}
	}
	free(order);
	free(canon);
	free(used);
	w->open = xcalloc(w->cap + 1, sizeof *w->open);
}

/* Write one frame: a function's name as the flame graph shows it
 * (frames.h), its file and line when known. */
static void
speedscope_frame(struct speedscope *w, uint64_t loc)
{
	const struct profile *p = w->p;
	const struct profile_location *l = &p->locations[loc - 1];
	const struct profile_function *f = l->function != 0 &&
	    l->function <= p->nfunctions ? &p->functions[l->function - 1] : NULL;
	char buf[FRAMES_NAME_MAX];
	const char *name = frames_name(f != NULL ? profile_str(p, f->name) : "", buf);

	fputs("{\"name\":", w->fp);
	json_write_string(w->fp, name, JSON_XML_SAFE);
	if (f != NULL && f->filename != 0) {
		fputs(",\"file\":", w->fp);
		json_write_string(w->fp, profile_str(p, f->filename), JSON_XML_SAFE);
	}
	if (l->line > 0)
		fprintf(w->fp, ",\"line\":%" PRId64, l->line);
	fputc('}', w->fp);
}

/* Write the shared frames. */
static void
speedscope_frames(struct speedscope *w)
{
	size_t i;

	fputs("\"shared\":{\"frames\":[", w->fp);
	for (i = 0; i < PROFILE_NSTATES; i++) {
		fputs(i > 0 ? ",\n{\"name\":" : "\n{\"name\":", w->fp);
		json_write_string(w->fp, profile_states[i].frame, JSON_XML_SAFE);
		fputc('}', w->fp);
	}
	for (i = PROFILE_NSTATES; i < w->nframes; i++) {
		fputs(",\n", w->fp);
		speedscope_frame(w, w->frame_loc[i - PROFILE_NSTATES]);
	}
	for (i = 0; i < w->nmarks; i++) {
		fputs(",\n{\"name\":", w->fp);
		json_write_string(w->fp, w->marks[i], JSON_XML_SAFE);
		fputc('}', w->fp);
	}
	fputs("]}", w->fp);
}

size_t
speedscope_stack(struct speedscope *w, const struct profile_sample *s)
{
	struct frames_walk fw;
	size_t n = 0;
	int64_t f;

	/* The states' frames are the first four, in profile_states order. */
	frames_walk_begin(&fw, w->p, s);
	while ((f = frames_walk_next(&fw)) != 0) {
		if (f < 0)
			w->stack[n++] = (uint32_t)(-f - 1);
		else if (w->loc_frame[f] != 0)
			w->stack[n++] = w->loc_frame[f] - 1;
	}
	return n;
}

void
speedscope_begin(struct speedscope *w, const char *type, const char *prefix,
    int64_t pid, int64_t thread, const char *thname, const char *unit,
    int64_t end)
{
	char *name;

	if (pid != 0)
		name = xasprintf("%spid %" PRId64 " thread %" PRId64 "%s%s%s", prefix,
		    pid, thread, thname ? " (" : "", thname ? thname : "",
		    thname ? ")" : "");
	else
		name = xasprintf("%sthread %" PRId64 "%s%s%s", prefix, thread,
		    thname ? " (" : "", thname ? thname : "", thname ? ")" : "");
	fprintf(w->fp, "%s{\"type\":\"%s\",\"name\":", w->nprofiles++ == 0 ? "\n" :
	    ",\n", type);
	json_write_string(w->fp, name, JSON_XML_SAFE);
	fprintf(w->fp, ",\"unit\":\"%s\",\"startValue\":%" PRId64 ",\"endValue\":%"
	    PRId64 ",\n\"%s\":[", unit, w->start, end, strcmp(type, "evented") == 0 ?
	    "events" : "samples");
	free(name);
	w->nevents = 0;
	w->nopen = 0;
}

/* A sample's thread, for the sampled profiles' order. */
struct speedscope_key {
	int64_t pid, thread;
	size_t sample;
};

static int
speedscope_key_cmp(const void *a, const void *b)
{
	const struct speedscope_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/* A numeric label of S, or 0. */
static int64_t
speedscope_num(const struct profile *p, const struct profile_sample *s,
    const char *key)
{
	const struct profile_label *l = profile_sample_label(p, s, key);

	return l != NULL && l->str == 0 ? l->num : 0;
}

/* speedscope's name of the unit of value VI. */
static const char *
speedscope_unit(const struct profile *p, size_t vi)
{
	const char *u = profile_str(p, p->value_types[vi].unit);

	if (strcmp(u, "nanoseconds") == 0 || strcmp(u, "bytes") == 0)
		return u;
	return "none";
}

/* Without timestamps: a sampled profile a thread, its samples in the
 * profile's order, each stack with its weight. */
static void
speedscope_sampled(struct speedscope *w)
{
	const struct profile *p = w->p;
	struct speedscope_key *keys = xcalloc(p->nsamples + 1, sizeof *keys);
	size_t i, j, k, n = 0;

	for (i = 0; i < p->nsamples; i++) {
		if (!speedscope_counts(w, &p->samples[i]))
			continue;
		keys[n].pid = speedscope_num(p, &p->samples[i], "pid");
		keys[n].thread = speedscope_num(p, &p->samples[i], "thread");
		keys[n++].sample = i;
	}
	qsort(keys, n, sizeof *keys, speedscope_key_cmp);
	for (i = 0; i < n; i = j) {
		const char *thname = NULL;
		int64_t total = 0;

		for (j = i; j < n && keys[j].pid == keys[i].pid &&
		    keys[j].thread == keys[i].thread; j++) {
			total += profile_sample_values(p, &p->samples[keys[j].sample])[w->vi];
			if (thname == NULL)
				thname = profile_sample_label_str(p,
				    &p->samples[keys[j].sample], "thread_name");
		}
		speedscope_begin(w, "sampled", "", keys[i].pid, keys[i].thread, thname,
		    speedscope_unit(p, w->vi), total);
		for (k = i; k < j; k++) {
			size_t m, depth = speedscope_stack(w, &p->samples[keys[k].sample]);

			fputs(k == i ? "[" : (k - i) % 8 == 0 ? ",\n[" : ",[", w->fp);
			for (m = 0; m < depth; m++)
				fprintf(w->fp, "%s%" PRIu32, m ? "," : "", w->stack[m]);
			fputc(']', w->fp);
		}
		fputs("],\n\"weights\":[", w->fp);
		for (k = i; k < j; k++) {
			fprintf(w->fp, "%s%" PRId64, k == i ? "" : (k - i) % 16 == 0 ?
			    ",\n" : ",", profile_sample_values(p,
			    &p->samples[keys[k].sample])[w->vi]);
		}
		fputs("]}", w->fp);
	}
	free(keys);
}

int
speedscope_write(const struct profile *p, FILE *fp, size_t vi, const char *name)
{
	struct speedscope w;
	struct timeline tl;
	const char *full;
	int timed;

	memset(&w, 0, sizeof w);
	w.p = p;
	w.fp = fp;
	w.vi = vi;
	w.cap = 64;
	w.stack = xcalloc(w.cap, sizeof *w.stack);
	/* A timeline only where the value is a time: its weights are the
	 * spans' lengths. */
	timed = vi < p->nvalue_types && strcmp(profile_str(p,
	    p->value_types[vi].unit), "nanoseconds") == 0 &&
	    timeline_build(p, vi, &tl) == 0;
	if (vi < p->nvalue_types)
		speedscope_number(&w);
	else
		w.open = xcalloc(w.cap + 1, sizeof *w.open);
	if (timed)
		speedscope_mark_names(&w, &tl);

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	    "\"exporter\":\"rperf " PACKAGE_VERSION "\",\"name\":", fp);
	/* A full timeline says so where speedscope shows the name: the
	 * threads' ends there are not the run's. */
	if ((full = profile_comment_value(p, PROFILE_COMMENT_TIMELINE_FULL)) != NULL) {
		char *s = xasprintf("%s (timeline full, --timeline-max: %s)",
		    name != NULL ? name : "rperf", full);

		json_write_string(fp, s, JSON_XML_SAFE);
		free(s);
	} else {
		json_write_string(fp, name != NULL ? name : "rperf", JSON_XML_SAFE);
	}
	fputs(",\"activeProfileIndex\":0,\n", fp);
	speedscope_frames(&w);
	fputs(",\n\"profiles\":[", fp);
	if (timed)
		speedscope_evented(&w, &tl);
	else if (vi < p->nvalue_types)
		speedscope_sampled(&w);
	/* speedscope refuses a file without profiles: no samples (all
	 * filtered out, say) is one empty profile. */
	if (w.nprofiles == 0) {
		fputs("\n{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"none\","
		    "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}", fp);
	}
	fputs("]}\n", fp);

	if (timed)
		timeline_release(&tl);
	free(w.loc_frame);
	free(w.frame_loc);
	free(w.marks);
	free(w.stack);
	free(w.open);
	if (fflush(fp) != 0 || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
