/*
 * tui.c: the browser's terminal and keys (see tui.h): ncurses set up on
 * the terminal, a stack of views (Esc goes back), and one function a key.
 * Every way out -- q, end of input, an error, SIGINT, SIGTERM, SIGHUP --
 * goes through endwin(), so the shell gets its screen back; a signal then
 * ends the process as it would have without the browser.
 *
 * RPERF_TUI_TIMING=FILE appends, for each key, the microseconds from
 * reading it to the screen drawn, and the CPU time spent meanwhile (the
 * same on an idle machine; less when other work shares the cores): how
 * the responsiveness target is measured (bench/report/tui).
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curses.h>

#include "tui-curses.h"

#include "cmd.h"
#include "error.h"
#include "tui-int.h"
#include "xmalloc.h"

/* The signal that asked the browser to end, or 0. */
static volatile sig_atomic_t tui_signal;

static void
tui_on_signal(int sig)
{
	tui_signal = sig;
}

/* A message on the status line until the next key. */
static void
tui_say(struct tui *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void
tui_say(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof t->msg, fmt, ap);
	va_end(ap);
}

static struct tui_view *
tui_top(struct tui *t)
{
	return &t->views[t->nviews - 1];
}

/* Open a view of KIND on top (about SUBJECT, function FN); on failure
 * the status line says why and nothing changes. */
static void
tui_open(struct tui *t, enum tui_kind kind, const char *subject, uint64_t fn)
{
	struct tui_view v;
	char err[256];

	if (tui_top(t)->kind == kind && kind != TUI_CALLERS &&
	    kind != TUI_SOURCE)
		return;
	memset(&v, 0, sizeof v);
	v.kind = kind;
	if (tui_view_fill(t, &v, subject, fn, err, sizeof err) != 0) {
		tui_view_release(&v);
		tui_say(t, "%s", err);
		return;
	}
	if (t->nviews == TUI_MAX_VIEWS) {
		/* The oldest view but the first makes room. */
		tui_view_release(&t->views[1]);
		memmove(&t->views[1], &t->views[2],
		    (TUI_MAX_VIEWS - 2) * sizeof t->views[0]);
		t->nviews--;
	}
	t->views[t->nviews++] = v;
}

/* View V computed again, where it was; when it has nothing to show now
 * (the timeline of a sample type that is not a time), the status line
 * says why. */
static void
tui_refill(struct tui *t, struct tui_view *v)
{
	char err[256];
	size_t sel = v->sel, top = v->top;
	char *subject = v->subject ? xstrdup(v->subject) : NULL;

	if (tui_view_fill(t, v, subject, v->fn, err, sizeof err) != 0)
		tui_say(t, "%s", err);
	free(subject);
	v->sel = sel;
	v->top = top;
}

/* After the filters or the sample type changed: the view shown computed
 * again, the ones under it when they are shown again (a stack of views
 * each costing a table or a tree would make every filter slower). */
static void
tui_rebuild(struct tui *t)
{
	int i;

	for (i = 0; i < t->nviews - 1; i++)
		t->views[i].stale = 1;
	tui_refill(t, tui_top(t));
}

/* Back to the view under the top one. */
static void
tui_pop(struct tui *t)
{
	if (t->nviews < 2)
		return;
	tui_view_release(&t->views[--t->nviews]);
	if (tui_top(t)->stale)
		tui_refill(t, tui_top(t));
}

/* Add the filter KIND ARG (f, i, Enter on a thread or a label). */
static void
tui_filter(struct tui *t, enum report_rule_kind kind, const char *arg)
{
	char err[256];

	if (tui_add_rule(t, kind, arg, err, sizeof err) != 0) {
		tui_say(t, "%s", err);
		return;
	}
	/* Back from the list the filter was picked in. */
	if (t->nviews > 1 && (tui_top(t)->kind == TUI_THREADS ||
	    tui_top(t)->kind == TUI_LABELS))
		tui_view_release(&t->views[--t->nviews]);
	tui_rebuild(t);
	tui_top(t)->sel = 0;
	tui_top(t)->top = 0;
}

/* f and i: keep or drop the samples with the selected function. */
static void
tui_filter_selected(struct tui *t, enum report_rule_kind kind)
{
	uint64_t fn;
	const char *name = tui_selected_name(t, tui_top(t), &fn);
	char *arg;

	if (name == NULL) {
		tui_say(t, "select a function first (in the functions, the tree "
		    "or the callers)");
		return;
	}
	arg = tui_rule_arg(name, &kind);
	tui_filter(t, kind, arg);
	free(arg);
}

/* v: the next of the profile's sample types, every view computed again
 * for it. */
static void
tui_next_value(struct tui *t)
{
	const struct profile *p = t->p;
	char err[256];

	if (p->nvalue_types < 2) {
		tui_say(t, "the profile has one sample type: %s",
		    p->nvalue_types ? profile_str(p, p->value_types[0].type) :
		    "none");
		return;
	}
	if (tui_set_value(t, (t->vi + 1) % p->nvalue_types, err,
	    sizeof err) != 0) {
		tui_say(t, "%s", err);
		return;
	}
	*t->msg = '\0';
	tui_rebuild(t);
	snprintf(err, sizeof err, "%s", t->msg);
	if (*err != '\0')
		tui_say(t, "%s", err);	/* it names the type */
	else
		tui_say(t, "sample type %s (%zu of %zu; v the next)",
		    profile_str(p, p->value_types[t->vi].type), t->vi + 1,
		    p->nvalue_types);
}

/* Move the selection by DELTA rows, clamped. */
static void
tui_move(struct tui *t, long delta)
{
	struct tui_view *v = tui_top(t);
	long rows = (long)tui_view_rows(v), sel = (long)v->sel + delta;

	if (sel >= rows)
		sel = rows - 1;
	if (sel < 0)
		sel = 0;
	v->sel = (size_t)sel;
}

/* Enter, Right and Left. */
static void
tui_enter(struct tui *t, int ch)
{
	struct tui_view *v = tui_top(t);
	int outline = v->kind == TUI_TREE || v->kind == TUI_CALLERS;
	uint64_t fn;
	const char *name = tui_selected_name(t, v, &fn);

	if (outline && v->sel < v->o.nrows) {
		const struct report_node *n = &v->o.t->nodes[v->o.rows[v->sel]];
		size_t r;

		if (ch != KEY_LEFT || v->o.open[v->o.rows[v->sel]]) {
			tui_outline_set(&v->o, v->sel, ch == KEY_RIGHT ? 1 :
			    ch == KEY_LEFT ? 0 : -1);
			return;
		}
		/* Left on a closed node: up to its parent. */
		for (r = v->sel; r-- > 0;) {
			if (v->o.rows[r] == n->parent) {
				v->sel = r;
				break;
			}
		}
		return;
	}
	if (ch == KEY_LEFT) {
		tui_pop(t);
		return;
	}
	if (v->kind == TUI_FLAT && name != NULL)
		tui_open(t, TUI_CALLERS, name, 0);
	else if ((v->kind == TUI_THREADS || v->kind == TUI_LABELS) &&
	    v->sel < v->nitems && v->items[v->sel].arg != NULL &&
	    ch != KEY_RIGHT)
		tui_filter(t, (enum report_rule_kind)v->items[v->sel].kind,
		    v->items[v->sel].arg);
	else if (v->kind == TUI_HELP)
		tui_pop(t);
}

/* Handle key CH; 1 to leave the browser. */
static int
tui_key(struct tui *t, int ch)
{
	struct tui_view *v = tui_top(t);
	long page = tui_page_rows(t);
	uint64_t fn;
	const char *name;

	switch (ch) {
	case 'q':
		return 1;
	case KEY_UP: case 'k': tui_move(t, -1); break;
	case KEY_DOWN: case 'j': tui_move(t, 1); break;
	case KEY_PPAGE: case 'b': tui_move(t, -page); break;
	case KEY_NPAGE: case ' ': tui_move(t, page); break;
	case KEY_HOME: case 'g': tui_move(t, -(long)tui_view_rows(v)); break;
	case KEY_END: case 'G': tui_move(t, (long)tui_view_rows(v)); break;
	case '\n': case '\r': case KEY_ENTER: case KEY_RIGHT: case KEY_LEFT:
		tui_enter(t, ch);
		break;
	case 27: case KEY_BACKSPACE: case 127: case 8:
		tui_pop(t);
		break;
	case 'c': case 'a':
		name = tui_selected_name(t, v, &fn);
		if (name == NULL)
			tui_say(t, "select a function first");
		else
			tui_open(t, ch == 'c' ? TUI_CALLERS : TUI_SOURCE, name, fn);
		break;
	case '1': case 'F': tui_open(t, TUI_FLAT, NULL, 0); break;
	case '2': case 'T': tui_open(t, TUI_TREE, NULL, 0); break;
	case '3': case 't': tui_open(t, TUI_THREADS, NULL, 0); break;
	case '4': case 'l': tui_open(t, TUI_LABELS, NULL, 0); break;
	case '5': case 'w': tui_open(t, TUI_TIMELINE, NULL, 0); break;
	case '6': case 'm': tui_open(t, TUI_ALLOCS, NULL, 0); break;
	case 'v': tui_next_value(t); break;
	case '?': tui_open(t, TUI_HELP, NULL, 0); break;
	case 's': {
		int i;

		t->sort_cum = !t->sort_cum;
		for (i = 0; i < t->nviews; i++) {
			if (t->views[i].kind == TUI_FLAT)
				tui_flat_sort(t, &t->views[i]);
		}
		if (v->kind == TUI_FLAT)
			v->sel = v->top = 0;
		tui_say(t, "functions sorted by %s value",
		    t->sort_cum ? "cumulative" : "self");
		break;
	}
	case 'f': tui_filter_selected(t, REPORT_FOCUS); break;
	case 'i': tui_filter_selected(t, REPORT_IGNORE); break;
	case 'u':
		if (tui_undo_rule(t) != 0)
			tui_say(t, "no filter to undo");
		else
			tui_rebuild(t);
		break;
	case '/':
		t->searching = 1;
		*t->search = '\0';
		*t->search_err = '\0';
		tui_match_release(&t->match);
		break;
	case 'n': tui_search_again(t, 1); break;
	case 'N': tui_search_again(t, -1); break;
	case KEY_RESIZE:
		break;
	default:
		tui_say(t, "unknown key: ? shows the keys");
		break;
	}
	return 0;
}

/* Microseconds of clock CLOCK. */
static long long
tui_usec(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int
tui_run(struct profile *p, const struct tui_opts *o, char *err, size_t errlen)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old[3];
	const char *timing = getenv("RPERF_TUI_TIMING");
	FILE *tf = timing && *timing ? fopen(timing, "a") : NULL;
	struct tui t;
	SCREEN *scr;
	size_t i, start = 0;
	int ch, quit = 0, sig;

	if (tui_curses_load(err, errlen) != 0) {
		if (tf)
			fclose(tf);
		return -1;
	}
	/* The locale's charset decides how names draw; numbers stay C's. */
	setlocale(LC_ALL, "");
	setlocale(LC_NUMERIC, "C");

	/* Ours, not ncurses' handlers: they leave the loop, which restores
	 * the terminal; no SA_RESTART, so a blocked read returns. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = tui_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);

	scr = newterm(NULL, stdout, stdin);
	if (scr == NULL) {
		for (i = 0; i < 3; i++)
			sigaction(sigs[i], &old[i], NULL);
		if (tf)
			fclose(tf);
		error_set(err, errlen, "cannot draw on this terminal (TERM=%s); use --stdio",
		    getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	/* A large profile takes a moment to index: say so meanwhile. */
	mvaddstr(0, 0, "rperf report: reading the profile...");
	refresh();

	tui_model_init(&t, p, o);
	t.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	tui_refilter(&t, t.msg, sizeof t.msg);	/* the tree, once */
	t.nviews = 1;
	t.views[0].kind = TUI_FLAT;
	tui_view_fill(&t, &t.views[0], NULL, 0, t.msg, sizeof t.msg);
	tui_draw(&t);
	while (!quit && !tui_signal) {
		long long t0, c0;

		errno = 0;
		ch = getch();
		t0 = tui_usec(CLOCK_MONOTONIC);
		c0 = tui_usec(CLOCK_PROCESS_CPUTIME_ID);
		if (ch == ERR) {
			if (tui_signal || errno == EINTR)
				continue;
			break;	/* the end of input */
		}
		*t.msg = '\0';
		*t.note = '\0';
		if (t.searching)
			tui_search_key(&t, ch, start);
		else {
			start = tui_top(&t)->sel;
			quit = tui_key(&t, ch);
		}
		curs_set(t.searching ? 1 : 0);
		if (!quit)
			tui_draw(&t);
		if (tf != NULL) {
			fprintf(tf, "%d %lld %lld\n", ch,
			    tui_usec(CLOCK_MONOTONIC) - t0,
			    tui_usec(CLOCK_PROCESS_CPUTIME_ID) - c0);
			fflush(tf);	/* a line a key, for whoever watches */
		}
	}
	endwin();
	delscreen(scr);
	for (i = 0; i < (size_t)t.nviews; i++)
		tui_view_release(&t.views[i]);
	tui_model_release(&t);
	if (tf != NULL)
		fclose(tf);
	sig = tui_signal;
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (sig != 0)
		raise(sig);
	return RPERF_EXIT_OK;
}
