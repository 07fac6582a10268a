/*
 * tui-views.c: how the browser draws (see tui-int.h): a title line, the
 * filters in force, the view's column heads and rows, and a status line.
 * Numbers get the width of the largest they can be, so a narrow terminal
 * shortens names, never figures; a name too long loses its beginning
 * ("..Klass#method"), where Ruby names are least telling.  Names are bytes:
 * in a UTF-8 locale they are drawn as UTF-8, measured in columns, and
 * elsewhere every byte outside ASCII is drawn as '?'.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <curses.h>

#include "tui-curses.h"

#include "tui-int.h"
#include "xmalloc.h"

/* Rows the title and column-head lines take (the filters take one or
 * more between them), and the status. */
#define TUI_TOP_LINES 2
#define TUI_BOTTOM_LINES 1

/* One drawable character of a name: where it starts, its bytes and its
 * columns (a byte that is not one is drawn as '?'). */
struct tui_glyph {
	const char *s;
	int len, cols;
};

/* Split S into glyphs (N of them, owned by the caller). */
static struct tui_glyph *
tui_glyphs(const struct tui *t, const char *s, size_t *n)
{
	size_t len = strlen(s), k = 0;
	struct tui_glyph *g = xcalloc(len + 1, sizeof *g);
	mbstate_t st;

	memset(&st, 0, sizeof st);
	while (*s != '\0') {
		unsigned char c = (unsigned char)*s;
		wchar_t wc;
		size_t r;
		int w;

		g[k].s = s;
		g[k].len = 1;
		g[k].cols = 1;
		if (c >= 0x80 && t->utf8) {
			r = mbrtowc(&wc, s, len, &st);
			if (r != (size_t)-1 && r != (size_t)-2 && r > 0 &&
			    (w = wcwidth(wc)) >= 0) {
				g[k].len = (int)r;
				g[k].cols = w;
			} else {
				memset(&st, 0, sizeof st);
				g[k].s = NULL;	/* drawn as '?' */
			}
		} else if (c >= 0x80 || c < 0x20 || c == 0x7f)
			g[k].s = NULL;
		s += g[k].len;
		len -= (size_t)g[k].len;
		k++;
	}
	*n = k;
	return g;
}

/* Draw S in at most WIDTH columns, padded with blanks; too long, it
 * loses its beginning (TAIL) or its end. */
static void
tui_put(const struct tui *t, const char *s, int width, int tail)
{
	size_t n, i, from = 0, to;
	struct tui_glyph *g = tui_glyphs(t, s, &n);
	int cols = 0, used = 0;

	for (i = 0; i < n; i++)
		cols += g[i].cols;
	to = n;
	if (cols > width && width > 2) {
		/* Keep what fits beside "..". */
		if (tail) {
			addstr("..");
			used = 2;
			for (from = n; from > 0 && used + g[from - 1].cols <= width; from--)
				used += g[from - 1].cols;
			used = 2;
		} else {
			for (to = 0, cols = 0; to < n && cols + g[to].cols <= width - 2; to++)
				cols += g[to].cols;
		}
	} else if (cols > width)
		to = 0;
	for (i = from; i < to; i++) {
		if (g[i].s == NULL)
			addch('?');
		else
			addnstr(g[i].s, g[i].len);
		used += g[i].cols;
	}
	if (!tail && to < n && width > 2) {
		addstr("..");
		used += 2;
	}
	for (; used < width; used++)
		addch(' ');
	free(g);
}

/* Where the lines of S start (byte offsets AT[0..n), n returned) when it
 * is wrapped to WIDTH columns after its last blank that fits (or
 * anywhere in a longer word), in at most MAX lines: the last one holds
 * the rest, and tui_put() cuts it. */
static int
tui_wrap(const struct tui *t, const char *s, int width, int max, size_t *at)
{
	size_t n, i, k, start = 0, blank = 0, off = 0, *o;
	struct tui_glyph *g = tui_glyphs(t, s, &n);
	int lines = 1, cols = 0;

	o = xcalloc(n + 1, sizeof *o);
	for (i = 0; i < n; i++) {
		o[i] = off;
		off += (size_t)g[i].len;
	}
	at[0] = 0;
	for (i = 0; i < n; i++) {
		if (cols + g[i].cols > width && lines < max && i > start) {
			start = blank > start ? blank : i;
			at[lines++] = o[start];
			for (cols = 0, k = start; k < i; k++)
				cols += g[k].cols;
		}
		if (g[i].s != NULL && *g[i].s == ' ')
			blank = i + 1;
		cols += g[i].cols;
	}
	free(o);
	free(g);
	return lines;
}

/* The filters line's text (owned by the caller). */
static char *
tui_filters_text(const struct tui *t)
{
	char a[96], b[96], pct[32];

	if (*t->desc == '\0')
		return xstrdup("Filters: none");
	numfmt_value(a, sizeof a, &t->u, t->total);
	numfmt_value(b, sizeof b, &t->u, t->total_read);
	numfmt_pct(pct, sizeof pct, (double)t->total, (double)t->total_read);
	return xasprintf("Filters: %s (kept %s of %s%s%s, %s)", t->desc, a, b,
	    *t->u.suffix ? " " : "", t->u.suffix, pct);
}

/* The most lines the filters may take: a quarter of the screen. */
static int
tui_filters_max(void)
{
	return LINES / 4 > 1 ? LINES / 4 : 1;
}

/* The screen lines the filters take: every one of them is shown, wrapped
 * on a narrow terminal. */
static int
tui_filters_lines(const struct tui *t)
{
	char *text = tui_filters_text(t);
	size_t *at = xcalloc((size_t)tui_filters_max() + 1, sizeof *at);
	int n = tui_wrap(t, text, COLS, tui_filters_max(), at);

	free(at);
	free(text);
	return n;
}

int
tui_page_rows(const struct tui *t)
{
	int rows = LINES - TUI_TOP_LINES - tui_filters_lines(t) -
	    TUI_BOTTOM_LINES;

	return rows > 1 ? rows : 1;
}

/* printw() cut at the right edge: a row never wraps onto the next. */
static void
tui_print(const char *fmt, ...)
{
	char buf[512];
	int room = COLS - getcurx(stdscr);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (room > 0)
		addnstr(buf, room);
}

/* A value in the view's unit, and as a percent of the total. */
static void
tui_value(const struct tui *t, char *buf, size_t len, int64_t v, int width)
{
	char num[48], pct[32];

	numfmt_value(num, sizeof num, &t->u, v);
	numfmt_pct(pct, sizeof pct, (double)v, (double)t->total);
	snprintf(buf, len, "%*s %6s ", width, num, pct);
}

/* The width of the value columns: the largest value that can show. */
static int
tui_value_width(const struct tui *t)
{
	char num[48];
	int64_t most = t->total_read > t->total ? t->total_read : t->total;
	int w = (int)strlen(numfmt_value(num, sizeof num, &t->u, most));
	/* and the widest head, "*Self bytes" */
	int head = 6 + (int)strlen(t->u.suffix);

	if (w < head)
		w = head;
	return w < 8 ? 8 : w;
}

/* The head of a value column: "Self ms", "Cum count". */
static void
tui_head(const struct tui *t, char *buf, size_t len, const char *what, int w)
{
	char h[48];

	snprintf(h, sizeof h, "%s%s%s", what, *t->u.suffix ? " " : "",
	    t->u.suffix);
	snprintf(buf, len, "%*s %6s ", w, h, "%");
}

/* Draw row ROW of view V at screen line Y. */
static void
tui_draw_row(struct tui *t, struct tui_view *v, size_t row, int y, int vw)
{
	char a[96], b[96];
	int rest;

	move(y, 0);
	if (row == v->sel)
		attron(A_REVERSE);
	if (v->kind == TUI_TREE || v->kind == TUI_CALLERS) {
		const struct report_node *n = &v->o.t->nodes[v->o.rows[row]];
		int depth = (int)n->depth - 1, ind;

		tui_value(t, a, sizeof a, n->value, vw);
		numfmt_value(b, sizeof b, &t->u, n->self);
		tui_print("%s%*s  ", a, vw, b);
		rest = COLS - (int)strlen(a) - vw - 2;
		/* Indent at most half the name's room; deeper rows say
		 * their depth instead. */
		ind = 2 * depth;
		if (ind > rest / 2) {
			snprintf(a, sizeof a, "(%d) ", depth);
			ind = rest / 2 - (int)strlen(a);
			tui_print("%*s%s", ind > 0 ? ind : 0, "", a);
			ind = (ind > 0 ? ind : 0) + (int)strlen(a);
		} else
			tui_print("%*s", ind, "");
		addstr(n->child == 0 ? "  " : v->o.open[v->o.rows[row]] ? "- " : "+ ");
		tui_put(t, report_tree_name(v->o.t, n), rest - ind - 2, 1);
	} else if (v->kind == TUI_SOURCE) {
		const struct tui_item *it = &v->items[row];

		numfmt_value(a, sizeof a, &t->u, it->self);
		numfmt_value(b, sizeof b, &t->u, it->cum);
		tui_print("%*s %*s %6" PRId64 "  ", vw, it->self ? a : "",
		    vw, it->cum ? b : "", it->line);
		tui_put(t, it->name, COLS - 2 * vw - 10, 0);
	} else if (v->kind == TUI_TIMELINE || v->kind == TUI_ALLOCS) {
		tui_put(t, v->items[row].name, COLS, 0);
	} else if (v->kind == TUI_FLAT) {
		const struct tui_item *it = &v->items[row];

		tui_value(t, a, sizeof a, it->self, vw);
		tui_value(t, b, sizeof b, it->cum, vw);
		tui_print("%s%s ", a, b);
		tui_put(t, it->name, COLS - (int)(strlen(a) + strlen(b)) - 1, 1);
	} else {
		const struct tui_item *it = &v->items[row];

		tui_value(t, a, sizeof a, it->cum, vw);
		tui_print("%s ", a);
		tui_put(t, it->name, COLS - (int)strlen(a) - 1, 1);
	}
	attroff(A_REVERSE);
}

static const char *const tui_keys[] = {
	"Up Down j k      move; PgUp PgDn (Space b) a page; Home End (g G)",
	"Enter            open or close a tree node; in the functions: its callers;",
	"                 in threads and labels: keep only its samples",
	"Right Left       open / close a tree node (Left on a closed one: its parent)",
	"c                callers of the selected function (the inverted tree)",
	"T or 2           the call tree;  F or 1: the functions table",
	"s                sort the functions by self or by cumulative value",
	"a                annotated source lines of the function (needs --lines)",
	"t or 3           threads: Enter keeps the one selected (as --thread)",
	"l or 4           VM states and labels: Enter keeps one (as --tagfocus)",
	"w or 5           threads over time: busy, GVL wait, blocked, GC (--timeline)",
	"m or 6           allocation sites (-m alloc);  v: the next sample type",
	"/                search names as you type (a regex; case ignored unless",
	"                 it has a capital); Enter keeps it; n N the next, previous",
	"f                focus: keep samples with the function (as --focus)",
	"i                ignore: drop samples with the function (as --ignore)",
	"u                undo the last filter;  ? these keys",
	"Esc Backspace    back to the previous view",
	"q                quit",
};

/* The help view: every key. */
static void
tui_draw_help(int top, int page)
{
	size_t i, n = sizeof tui_keys / sizeof tui_keys[0];

	for (i = 0; i < n && (int)i < page; i++)
		mvaddnstr(top + (int)i, 1, tui_keys[i], COLS - 2);
}

void
tui_draw(struct tui *t)
{
	struct tui_view *v = &t->views[t->nviews - 1];
	size_t rows = tui_view_rows(v), r, page = (size_t)tui_page_rows(t);
	int vw = tui_value_width(t), nf, top, i;
	char a[96], b[96], line[1024], *filters, *piece;
	size_t *at;
	const char *window;	/* --from/--to's cut, if any */

	erase();
	/* Scroll so that the selection shows. */
	if (v->sel >= rows && rows > 0)
		v->sel = rows - 1;
	if (v->sel < v->top)
		v->top = v->sel;
	if (v->sel >= v->top + page)
		v->top = v->sel - page + 1;

	numfmt_value(a, sizeof a, &t->u, t->total);
	window = profile_comment_value(t->p, PROFILE_COMMENT_WINDOW);
	snprintf(line, sizeof line, " %s%s%s%s  Total %s%s%s (%s)  %s",
	    t->o->input, window ? " (" : "", window ? window : "",
	    window ? ")" : "", a, *t->u.suffix ? " " : "", t->u.suffix,
	    profile_str(t->p, t->p->value_types[t->vi].type), v->title);
	attron(A_REVERSE);
	move(0, 0);
	tui_put(t, line, COLS, 0);
	attroff(A_REVERSE);

	filters = tui_filters_text(t);
	at = xcalloc((size_t)tui_filters_max() + 1, sizeof *at);
	nf = tui_wrap(t, filters, COLS, tui_filters_max(), at);
	at[nf] = strlen(filters);
	for (i = 0; i < nf; i++) {
		piece = xstrndup(filters + at[i], at[i + 1] - at[i]);
		move(1 + i, 0);
		tui_put(t, piece, COLS, 0);
		free(piece);
	}
	free(at);
	free(filters);
	top = TUI_TOP_LINES + nf;

	attron(A_BOLD);
	move(top - 1, 0);
	switch (v->kind) {
	case TUI_FLAT:
		tui_head(t, a, sizeof a, t->sort_cum ? "Self" : "*Self", vw);
		tui_head(t, b, sizeof b, t->sort_cum ? "*Cum" : "Cum", vw);
		tui_print("%s%s Function", a, b);
		break;
	case TUI_TREE:
	case TUI_CALLERS:
		tui_head(t, a, sizeof a, "Cum", vw);
		tui_head(t, b, sizeof b, "Self", vw);
		b[vw] = '\0';	/* no percent column for self */
		tui_print("%s%s  %s", a, b, v->kind == TUI_TREE ?
		    "Function (callees below)" : "Function (callers below)");
		break;
	case TUI_SOURCE:
		tui_head(t, a, sizeof a, "Self", vw);
		tui_head(t, b, sizeof b, "Cum", vw);
		a[vw] = b[vw] = '\0';	/* no percent columns */
		tui_print("%s %s %6s  Source", a, b, "Line");
		break;
	case TUI_HELP:
		tui_print("Keys");
		break;
	case TUI_TIMELINE:
	case TUI_ALLOCS:
		tui_print("%s", v->kind == TUI_TIMELINE ? "Per thread, then "
		    "the longest waits for the GVL" : "The leaf functions that "
		    "allocated, by bytes, in every memory sample type");
		break;
	default:
		tui_head(t, a, sizeof a, "Total", vw);
		tui_print("%s %s", a, v->kind == TUI_THREADS ? "Thread" : "State or label");
		break;
	}
	attroff(A_BOLD);

	if (v->kind == TUI_HELP)
		tui_draw_help(top, (int)page);
	for (r = v->top; r < rows && r < v->top + page; r++)
		tui_draw_row(t, v, r, top + (int)(r - v->top), vw);
	if (rows == 0 && (v->kind == TUI_TIMELINE || v->kind == TUI_ALLOCS))
		mvaddstr(top, 1, "nothing to show for this sample "
		    "type or these filters");
	else if (rows == 0 && v->kind != TUI_HELP)
		mvaddstr(top, 1, *t->desc ? "no samples match the filters" :
		    "profile is empty: no samples");

	move(LINES - 1, 0);
	if (t->searching)
		snprintf(line, sizeof line, "/%s%s%s", t->search,
		    *t->search_err ? "    " : "", t->search_err);
	else if (*t->msg != '\0')
		snprintf(line, sizeof line, "%s", t->msg);
	else {
		uint64_t fn = 0;
		const char *where = "";

		if (v->kind == TUI_FLAT && v->sel < rows) {
			fn = v->items[v->sel].fn;
			where = profile_str(t->p, t->p->functions[fn - 1].filename);
		}
		snprintf(line, sizeof line, v->kind == TUI_HELP ?
		    "Esc back  q quit" : "%zu/%zu%s%s%s%s  ? keys  q quit",
		    rows ? v->sel + 1 : 0, rows, *t->note ? "  " : "", t->note,
		    *where ? "  " : "", where);
	}
	attron(A_REVERSE);
	tui_put(t, line, COLS, 0);
	attroff(A_REVERSE);
	if (t->searching)
		move(LINES - 1, 1 + (int)strlen(t->search));
	refresh();
}
