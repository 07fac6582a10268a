/*
 * tui-curses.h: the ncurses functions and variables the terminal browser
 * uses, through a table that tui_curses_load() fills from libncursesw,
 * loaded with dlopen() when the browser starts (see tui-curses.c).
 * Include it after <curses.h>: curses.h's own macros (addstr, move,
 * getch...) expand to the names remapped here.
 */
#ifndef RPERF_TUI_CURSES_H
#define RPERF_TUI_CURSES_H

#include <stddef.h>

#include <curses.h>

struct tui_curses {
	int (*cbreak)(void);
	int (*curs_set)(int);
	void (*delscreen)(SCREEN *);
	int (*endwin)(void);
	int (*keypad)(WINDOW *, bool);
	SCREEN *(*newterm)(const char *, FILE *, FILE *);
	int (*noecho)(void);
	int (*nonl)(void);
	int (*set_escdelay)(int);
	int (*waddch)(WINDOW *, const chtype);
	int (*waddnstr)(WINDOW *, const char *, int);
	int (*wattr_off)(WINDOW *, attr_t, void *);
	int (*wattr_on)(WINDOW *, attr_t, void *);
	int (*werase)(WINDOW *);
	int (*wgetch)(WINDOW *);
	int (*wmove)(WINDOW *, int, int);
	int (*wrefresh)(WINDOW *);
	WINDOW **stdscr_p;
	int *lines_p, *cols_p;
};

extern struct tui_curses tui_curses;

/* Load libncursesw once: 0, or -1 with a message in ERR. */
int tui_curses_load(char *err, size_t errlen);

#undef stdscr
#undef LINES
#undef COLS
#define stdscr			(*tui_curses.stdscr_p)
#define LINES			(*tui_curses.lines_p)
#define COLS			(*tui_curses.cols_p)
#define cbreak()		(tui_curses.cbreak())
#define curs_set(v)		(tui_curses.curs_set(v))
#define delscreen(s)		(tui_curses.delscreen(s))
#define endwin()		(tui_curses.endwin())
#define keypad(w, b)		(tui_curses.keypad((w), (b)))
#define newterm(t, o, i)	(tui_curses.newterm((t), (o), (i)))
#define noecho()		(tui_curses.noecho())
#define nonl()			(tui_curses.nonl())
#define set_escdelay(d)		(tui_curses.set_escdelay(d))
#define waddch(w, c)		(tui_curses.waddch((w), (c)))
#define waddnstr(w, s, n)	(tui_curses.waddnstr((w), (s), (n)))
#define wattr_off(w, a, o)	(tui_curses.wattr_off((w), (a), (o)))
#define wattr_on(w, a, o)	(tui_curses.wattr_on((w), (a), (o)))
#define werase(w)		(tui_curses.werase(w))
#define wgetch(w)		(tui_curses.wgetch(w))
#define wmove(w, y, x)		(tui_curses.wmove((w), (y), (x)))
#define wrefresh(w)		(tui_curses.wrefresh(w))

#endif
