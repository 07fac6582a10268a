/*
 * sampler-marks.c: user spans on the timeline (Rperf.mark): a name, the
 * thread, its start and end on the samples' clock.  Kept only with
 * --timeline (a profile without times has nowhere to show them), at most
 * SAMPLER_MARKS_MAX of them; they go into the profile as comments
 * "mark: 0 THREAD START END NAME" (see timeline.h).  The process's own
 * events (fork, exec, snapshot) are marks of no length too.  With the
 * GVL.
 */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "sampler-int.h"
#include "util.h"
#include "xmalloc.h"

/* The most marks kept, and the longest name. */
#define SAMPLER_MARKS_MAX	100000
#define SAMPLER_MARK_NAME_MAX	200

/* NAME (LEN bytes) as a mark's name: at most SAMPLER_MARK_NAME_MAX bytes,
 * one line, no NUL (it goes into a comment). */
static char *
sampler_mark_name(const char *name, size_t len)
{
	char *s;
	size_t i;

	if (len > SAMPLER_MARK_NAME_MAX)
		len = SAMPLER_MARK_NAME_MAX;
	s = xmalloc(len + 1);
	for (i = 0; i < len; i++)
		s[i] = name[i] == '\n' || name[i] == '\r' || name[i] == '\0' ? ' ' : name[i];
	s[len] = '\0';
	return s;
}

/* Open a mark called NAME on the current thread; its id (> 0), or 0
 * when marks are not kept (no --timeline, not running, too many). */
int
sampler_mark_begin(const char *name, size_t len)
{
	struct sampler_thread *td;
	struct sampler_mark *m;

	if (!sampler_running() || sampler.cfg.aggregate)
		return 0;
	if (sampler.nmarks >= SAMPLER_MARKS_MAX) {
		sampler.marks_dropped++;
		return 0;
	}
	if ((td = sampler_thread_current()) == NULL)
		return 0;
	xgrow((void **)&sampler.marks, &sampler.marks_cap, sampler.nmarks + 1,
	    sizeof *sampler.marks);
	m = &sampler.marks[sampler.nmarks++];
	m->name = sampler_mark_name(name, len);
	m->thread_seq = td->key;
	m->start = util_mono_ns() - sampler.start_mono;
	m->end = -1;
	return (int)sampler.nmarks;
}

/* Close mark ID (from sampler_mark_begin; 0 is ignored), renamed NAME
 * (LEN bytes) when NAME is not NULL: a request's route is known only once
 * the app has routed it. */
void
sampler_mark_end(int id, const char *name, size_t len)
{
	struct sampler_mark *m;

	if (id <= 0 || (size_t)id > sampler.nmarks || sampler.marks[id - 1].end != -1)
		return;
	m = &sampler.marks[id - 1];
	m->end = util_mono_ns() - sampler.start_mono;
	if (name != NULL) {
		free(m->name);
		m->name = sampler_mark_name(name, len);
	}
}

/* A process event at this moment (a fork, an exec, a snapshot): a mark
 * of no length on the current thread, named NAME, which by convention
 * starts with the event in brackets ("[fork] child 4242"). */
void
sampler_mark_event(const char *name)
{
	int id = sampler_mark_begin(name, strlen(name));

	if (id > 0)
		sampler.marks[id - 1].end = sampler.marks[id - 1].start;
}

/* The marks as comments of P (open ones end now). */
void
sampler_marks_emit(struct profile *p)
{
	int64_t now = util_mono_ns() - sampler.start_mono;
	size_t i;

	for (i = 0; i < sampler.nmarks; i++) {
		const struct sampler_mark *m = &sampler.marks[i];

		if (m->end == -2)	/* closed before a snapshot's clear */
			continue;
		profile_add_meta(p, "mark", "0 %d %lld %lld %s", m->thread_seq,
		    (long long)(m->start > 0 ? m->start : 0),
		    (long long)(m->end >= 0 ? m->end : now), m->name);
	}
	if (sampler.marks_dropped > 0)
		profile_add_meta(p, "marks dropped", "%llu (at most %d are kept)",
		    (unsigned long long)sampler.marks_dropped, SAMPLER_MARKS_MAX);
}

/* Free the marks. */
void
sampler_marks_release(void)
{
	size_t i;

	for (i = 0; i < sampler.nmarks; i++)
		free(sampler.marks[i].name);
	free(sampler.marks);
	sampler.marks = NULL;
	sampler.nmarks = sampler.marks_cap = 0;
	sampler.marks_dropped = 0;
}
