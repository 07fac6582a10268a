/*
 * tui-curses.c: loading libncursesw for the terminal browser.
 *
 * libncursesw (and libtinfo with it) is loaded with dlopen() when the
 * browser starts, not linked: only "rperf report" on a terminal draws,
 * and loading the two libraries at every start cost each "rperf record"
 * about half a millisecond before the script's first line on the
 * machines we measure (page faults and relocations).  Nothing may call
 * through the table before tui_curses_load() succeeded.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "error.h"
#include "tui-curses.h"

struct tui_curses tui_curses;

int
tui_curses_load(char *err, size_t errlen)
{
	static const char *const names[] = { "libncursesw.so.6", "libncursesw.so", NULL };
	static int loaded;
	void *h = NULL;
	size_t i;

	if (loaded)
		return 0;
	for (i = 0; h == NULL && names[i] != NULL; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		error_set(err, errlen, "the terminal browser needs libncursesw: %s; use --stdio",
		    dlerror());
		return -1;
	}
#define TUI_CURSES_SYM(field, name) \
	if ((*(void **)&tui_curses.field = dlsym(h, name)) == NULL) { \
		error_set(err, errlen, "the terminal browser needs libncursesw: " \
		    "no %s in it; use --stdio", name); \
		dlclose(h); \
		return -1; \
	}
	TUI_CURSES_SYM(cbreak, "cbreak");
	TUI_CURSES_SYM(curs_set, "curs_set");
	TUI_CURSES_SYM(delscreen, "delscreen");
	TUI_CURSES_SYM(endwin, "endwin");
	TUI_CURSES_SYM(keypad, "keypad");
	TUI_CURSES_SYM(newterm, "newterm");
	TUI_CURSES_SYM(noecho, "noecho");
	TUI_CURSES_SYM(nonl, "nonl");
	TUI_CURSES_SYM(set_escdelay, "set_escdelay");
	TUI_CURSES_SYM(waddch, "waddch");
	TUI_CURSES_SYM(waddnstr, "waddnstr");
	TUI_CURSES_SYM(wattr_off, "wattr_off");
	TUI_CURSES_SYM(wattr_on, "wattr_on");
	TUI_CURSES_SYM(werase, "werase");
	TUI_CURSES_SYM(wgetch, "wgetch");
	TUI_CURSES_SYM(wmove, "wmove");
	TUI_CURSES_SYM(wrefresh, "wrefresh");
	TUI_CURSES_SYM(stdscr_p, "stdscr");
	TUI_CURSES_SYM(lines_p, "LINES");
	TUI_CURSES_SYM(cols_p, "COLS");
#undef TUI_CURSES_SYM
	loaded = 1;
	return 0;
}
