/*
 * tui-search.c: the browser's search (see tui-int.h): / reads a pattern,
 * moving the selection as it is typed; n and N go to the next and the
 * previous match, round the end of the view, saying so when they wrap.
 *
 * A pattern is a POSIX extended regex, compiled once when it changes,
 * never per row.  A pattern with no metacharacter is a plain word and is
 * looked for with strstr() instead: the same answer, and the common case,
 * at a fraction of regexec()'s cost.  Case is "smart", as in less and
 * vim: ignored unless the pattern has an upper-case letter.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <curses.h>

#include "tui-curses.h"

#include "error.h"
#include "tui-int.h"
#include "xmalloc.h"

void
tui_match_release(struct tui_match *m)
{
	if (m->active && !m->plain)
		regfree(&m->re);
	m->active = 0;
}

int
tui_match_set(struct tui_match *m, const char *pattern, char *err,
    size_t errlen)
{
	const char *s;
	int rc;

	tui_match_release(m);
	m->icase = 1;
	for (s = pattern; *s != '\0'; s++) {
		if (isupper((unsigned char)*s))
			m->icase = 0;
	}
	m->plain = strpbrk(pattern, ".[]()*+?{}|^$\\") == NULL;
	snprintf(m->text, sizeof m->text, "%s", pattern);
	if (!m->plain) {
		rc = regcomp(&m->re, pattern, REG_EXTENDED | REG_NOSUB |
		    (m->icase ? REG_ICASE : 0));
		if (rc != 0) {
			char msg[128];

			regerror(rc, &m->re, msg, sizeof msg);
			error_set(err, errlen, "bad regex '%s': %s", pattern, msg);
			return -1;
		}
	}
	m->active = 1;
	m->gen++;
	return 0;
}

int
tui_match_test(const struct tui_match *m, const char *s)
{
	if (!m->active)
		return 0;
	if (m->plain)
		return (m->icase ? strcasestr(s, m->text) : strstr(s, m->text)) !=
		    NULL;
	return regexec(&m->re, s, 0, NULL, 0) == 0;
}

/* Step K rows from POS in direction DIR round N rows; set *WRAPPED when
 * that passes the end (or the start, going up). */
static size_t
tui_step(size_t pos, size_t k, int dir, size_t n, int *wrapped)
{
	size_t r = dir > 0 ? (pos + k) % n : (pos + n - k % n) % n;

	if (k > 0 && (dir > 0 ? r <= pos : r >= pos))
		*wrapped = 1;
	return r;
}

long
tui_items_find(const struct tui_view *v, size_t from,
    const struct tui_match *m, int dir, int same, int *wrapped)
{
	size_t k, i;

	*wrapped = 0;
	if (v->nitems == 0)
		return -1;
	if (from >= v->nitems)
		from = 0;
	for (k = same ? 0 : 1; k <= v->nitems; k++) {
		int w = 0;

		i = tui_step(from, k, dir, v->nitems, &w);
		if (tui_match_test(m, v->items[i].name)) {
			*wrapped = w;
			return (long)i;
		}
	}
	return -1;
}

/* The node after C in preorder, round from the last to the first. */
static uint32_t
tui_pre_next(const struct report_node *n, uint32_t c, int *wrapped)
{
	if (n[c].child != 0)
		return n[c].child;
	while (c != 0 && n[c].next == 0)
		c = n[c].parent;
	if (c != 0)
		return n[c].next;
	*wrapped = 1;
	return n[0].child;
}

/* The last node before START in preorder (or, WRAPPED set, the last of
 * all) whose name HIT marks; 0 when none.  Nodes know only their next
 * sibling, so one walk from the first node: a few milliseconds for the
 * 1.8M nodes of the bench fixture, where stepping back one node at a
 * time costs a scan of its siblings each (seconds for N under <main>). */
static uint32_t
tui_pre_find_back(const struct report_node *n, const uint8_t *hit,
    uint32_t start, int *wrapped)
{
	uint32_t c = n[0].child, before = 0, last = 0;
	int seen = 0, w = 0;

	while (c != 0) {
		if (c == start)
			seen = 1;
		else if (hit[n[c].name]) {
			last = c;
			if (!seen)
				before = c;
		}
		c = tui_pre_next(n, c, &w);
		if (w)
			break;
	}
	if (before != 0)
		return before;
	if (last == 0 && hit[n[start].name])
		last = start;	/* the only match: round to itself */
	*wrapped = last != 0;
	return last;
}

long
tui_outline_find(struct tui_outline *o, size_t from,
    const struct tui_match *m, int dir, int same, int *wrapped)
{
	const struct report_tree *t = o->t;
	const struct report_node *n = t->nodes;
	uint32_t c, start, a;
	size_t i, steps;
	long row = -1;
	int found = 0;

	*wrapped = 0;
	if (n[0].child == 0)
		return -1;
	/* One test per name, not per node; kept while the pattern and
	 * the tree stay the same, so n after n costs only the walk. */
	if (o->hit == NULL || o->hit_gen != m->gen) {
		free(o->hit);
		o->hit = xcalloc(t->names->nstrings + 1, 1);
		for (i = 0; i < t->names->nstrings; i++)
			o->hit[i] = (uint8_t)tui_match_test(m,
			    t->names->strings[i]);
		o->hit_gen = m->gen;
	}
	start = from < o->nrows ? o->rows[from] : n[0].child;
	c = start;
	if (same && o->hit[n[c].name])
		found = 1;
	else if (dir < 0)
		found = (c = tui_pre_find_back(n, o->hit, start, wrapped)) != 0;
	for (steps = 0; dir > 0 && !found && steps < t->nnodes; steps++) {
		c = tui_pre_next(n, c, wrapped);
		if (o->hit[n[c].name])
			found = 1;
		else if (c == start)
			break;
	}
	if (!found)
		return -1;
	for (a = n[c].parent; a != 0; a = n[a].parent)
		o->open[a] = 1;
	tui_outline_rows(o);
	for (i = 0; i < o->nrows; i++) {
		if (o->rows[i] == c) {
			row = (long)i;
			break;
		}
	}
	return row;
}

/* Move the selection to the next (DIR 1) or previous (-1) row matching
 * the search, from FROM (itself too when SAME); the status line says
 * when the search wrapped or found nothing. */
void
tui_search(struct tui *t, size_t from, int dir, int same)
{
	struct tui_view *v = &t->views[t->nviews - 1];
	int wrapped = 0;
	long r;

	if (!t->match.active || tui_view_rows(v) == 0 || v->kind == TUI_HELP)
		return;
	if (v->kind == TUI_TREE || v->kind == TUI_CALLERS)
		r = tui_outline_find(&v->o, from, &t->match, dir, same, &wrapped);
	else
		r = tui_items_find(v, from, &t->match, dir, same, &wrapped);
	if (r < 0) {
		snprintf(t->note, sizeof t->note, "not found: %s", t->match.text);
		return;
	}
	v->sel = (size_t)r;
	if (wrapped)
		snprintf(t->note, sizeof t->note, dir > 0 ?
		    "search wrapped to the top" : "search wrapped to the bottom");
}

/* n and N: the next or previous match of the last search. */
void
tui_search_again(struct tui *t, int dir)
{
	if (*t->search == '\0')
		snprintf(t->msg, sizeof t->msg, "nothing to search for: / first");
	else if (!t->match.active)
		snprintf(t->msg, sizeof t->msg, "%s", t->search_err);
	else
		tui_search(t, t->views[t->nviews - 1].sel, dir, 0);
}

void
tui_search_key(struct tui *t, int ch, size_t start)
{
	size_t len = strlen(t->search);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		t->searching = 0;
		/* The prompt goes: what it said goes to the status line. */
		if (*t->search != '\0' && !t->match.active)
			snprintf(t->msg, sizeof t->msg, "%s", t->search_err);
		else
			tui_search(t, t->views[t->nviews - 1].sel, 1, 1);
		return;
	}
	if (ch == 27) {
		t->searching = 0;
		*t->search = '\0';
		tui_match_release(&t->match);
		t->views[t->nviews - 1].sel = start;
		return;
	}
	if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len > 0)
			t->search[len - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x100 && ch != 0x7f &&
	    len + 1 < sizeof t->search) {
		t->search[len] = (char)ch;
		t->search[len + 1] = '\0';
	} else
		return;
	t->views[t->nviews - 1].sel = start;
	*t->search_err = '\0';
	if (*t->search == '\0') {
		tui_match_release(&t->match);
		return;
	}
	/* A pattern half typed ("(a") may not compile yet: the prompt says
	 * why, and the selection waits where the search began. */
	if (tui_match_set(&t->match, t->search, t->search_err,
	    sizeof t->search_err) == 0)
		tui_search(t, start, 1, 1);
}
