/*
 * tui-int.h: what the browser's parts share.  tui-model.c computes the
 * rows of every view from the profile, with no ncurses; tui-views.c draws
 * them; tui.c owns the terminal, the keys and the stack of views.
 *
 * Everything a key needs to move is precomputed when a view opens or the
 * filters change, so a key costs a redraw of one screen: a profile of
 * 100k stacks stays quick to browse.
 */
#ifndef RPERF_TUI_INT_H
#define RPERF_TUI_INT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "numfmt.h"
#include "profile.h"
#include "report.h"
#include "tui.h"

enum tui_kind {
	TUI_FLAT,		/* functions by self or cumulative value */
	TUI_TREE,		/* the call tree, root first */
	TUI_CALLERS,		/* one function and its callers */
	TUI_THREADS,		/* the threads; Enter keeps one */
	TUI_LABELS,		/* VM states and labels; Enter keeps one */
	TUI_SOURCE,		/* a function's lines with their values */
	TUI_TIMELINE,		/* the per-thread summary of a timeline */
	TUI_ALLOCS,		/* a memory profile's allocation sites */
	TUI_HELP,		/* the keys */
};

/* A report_tree shown with nodes that open and close. */
struct tui_outline {
	struct report_tree *t;
	int shared;		/* T is struct tui's call tree, not ours */
	uint8_t *open;		/* per node: its children are shown */
	uint32_t *rows;		/* the nodes shown, in order */
	size_t nrows, cap;
	uint8_t *hit;		/* per tree name: the search matches it */
	unsigned hit_gen;	/* the tui_match.gen HIT was made for */
};

/* A row of a list view: a function, a thread, a label, a source line. */
struct tui_item {
	uint64_t fn;		/* TUI_FLAT: function id */
	char *name;		/* what the row shows (owned) */
	int64_t self, cum;	/* TUI_SOURCE: self and cumulative of a line;
				 * else cum is the row's value */
	int kind;		/* Enter's filter: a report_rule_kind, or -1 */
	char *arg;		/* and its argument (owned) */
	int64_t line;		/* TUI_SOURCE: the line number */
};

struct tui_view {
	enum tui_kind kind;
	size_t sel, top;	/* the selected row, the first row shown */
	char *title;		/* what the view shows, for the header */
	char *subject;		/* TUI_CALLERS, TUI_SOURCE: the function */
	uint64_t fn;		/* TUI_SOURCE: its id, or 0 */
	struct tui_outline o;	/* TUI_TREE, TUI_CALLERS */
	struct tui_item *items;	/* the other views */
	size_t nitems;
	int names_shared;	/* the items' names are the profile's strings,
				 * not theirs to free (TUI_FLAT) */
	int stale;		/* of other filters: filled again when shown
				 * (its tree may be gone meanwhile) */
};

#define TUI_MAX_VIEWS 32

/* The compiled search: a plain word or an extended regex (see
 * tui-search.c). */
struct tui_match {
	int active;		/* a pattern is compiled */
	int plain;		/* no metacharacter: strstr(), no regex */
	int icase;		/* no upper-case letter in it: ignore case */
	regex_t re;		/* when not PLAIN */
	char text[128];
	unsigned gen;		/* counts the patterns compiled */
};

/* What tui_kept_tree() reads of a node of the whole tree. */
struct tui_wnode {
	uint32_t name, parent, depth;
	uint32_t end;		/* the node after its subtree */
};

/* A filter added by a key: what report_filter_add() takes, and the
 * samples kept by it and the rules before it (their index in struct
 * tui's ALL), noted when it is applied: u back to it costs a copy. */
struct tui_rule {
	enum report_rule_kind kind;
	char *arg;
	size_t *kept, nkept;
};

struct tui {
	struct profile *p;
	const struct tui_opts *o;
	size_t vi;
	struct numfmt_unit u;
	/* The samples as the command line's filters left them: each change
	 * of the keys' filters starts again from these. */
	struct profile_sample *all;
	size_t nall;
	struct tui_rule *rules;
	size_t nrules, rcap;
	char *desc;		/* every filter in force, "" for none */
	int64_t total;		/* after every filter */
	int64_t total_read;	/* before them, of the sample type shown */
	struct report_tree *tree;	/* the call tree, sorted by value;
					 * made when a view needs it */
	int tree_stale;		/* the filters changed since TREE was made */
	struct report_tree *whole;	/* the tree without the keys' filters,
					 * kept: u back to it costs nothing */
	/* Functions by name: BYNAME lists the ids in name order, CANON[id]
	 * is the first id of the same name. */
	uint32_t *byname, *canon;
	/* Per sample of ALL, once: its distinct functions FNS[FOFF[i]..
	 * FOFF[i+1]), the function of its leaf (LEAF_FN, 0 for none), and
	 * its last node in WHOLE (LEAF, 0 when it has none or is left out;
	 * SELFISH: that node gets its self value).  A filter then costs a
	 * pass over these, not over the stacks, and the tree of the samples
	 * kept is WHOLE's values added up again, not a tree built anew. */
	uint32_t *fns, *leaf_fn, *leaf;
	size_t *foff;
	uint8_t *selfish;
	size_t *kept;		/* the samples kept: their index in ALL */
	/* What tui_kept_tree() reads (tui-kept.c): WHOLE's nodes' name,
	 * parent, depth and end in 16 bytes, not 48; the samples of ALL by
	 * their last node (BYLEAF) with their values (LEAFVAL) in that
	 * order, and LO[i] the number of them that end before node i;
	 * KGEN[i] is KGEN_NOW when sample i is kept. */
	struct tui_wnode *wnodes;
	uint32_t *lo, *byleaf, *kgen, kgen_now;
	int64_t *leafval;
	/* Kept between filters so that a filter reuses memory the kernel
	 * has already handed over (1.8M nodes on the bench fixture: fresh
	 * pages cost more than the work): running sums of the values kept,
	 * per depth the last node made (MAXDEPTH is WHOLE's deepest), per
	 * node a flag, and the nodes of the last tree dropped. */
	int64_t *ksum, *kselfsum;
	uint32_t *kpath, *klast, maxdepth;
	uint8_t *kunsorted;
	struct report_node *spare;
	size_t spare_cap;
	struct profile *spare_names;	/* WHOLE's names, interned again */
	int sort_cum;
	struct tui_view views[TUI_MAX_VIEWS];
	int nviews;		/* views[nviews - 1] is on screen */
	char msg[256];		/* a message for the status line */
	char note[160];		/* beside the position until the next key:
				 * the search wrapped, found nothing */
	char search[128];	/* what / looks for */
	char search_err[160];	/* why SEARCH does not compile, or "" */
	struct tui_match match;	/* SEARCH compiled */
	int searching;		/* the / prompt is open */
	int utf8;		/* the locale's charset is UTF-8 */
};

/* --- tui-model.c --- */

void tui_model_init(struct tui *t, struct profile *p, const struct tui_opts *o);
void tui_model_release(struct tui *t);
/* Apply the command line's rules and T's to the samples again and build
 * the call tree; 0, or -1 with a message (a rule that does not compile,
 * a tree too large) and nothing changed. */
int tui_refilter(struct tui *t, char *err, size_t errlen);
/* Add a rule and apply it; as tui_refilter(). */
int tui_add_rule(struct tui *t, enum report_rule_kind kind, const char *arg,
    char *err, size_t errlen);
/* Drop the last rule; 0, or -1 when there is none. */
int tui_undo_rule(struct tui *t);

/* Append a row to V (CAP its room); its NAME and ARG are taken over. */
struct tui_item *tui_push(struct tui_view *v, size_t *cap, char *name,
    int64_t value);
/* Rows by value, largest first, then name (for qsort). */
int tui_cmp_value(const void *a, const void *b);

/* Fill V's rows for its kind; SUBJECT names the function of TUI_CALLERS
 * and TUI_SOURCE (FN the function id of TUI_SOURCE, or 0 to find one by
 * name).  0, or -1 with a message in ERR (and V empty). */
int tui_view_fill(struct tui *t, struct tui_view *v, const char *subject,
    uint64_t fn, char *err, size_t errlen);
void tui_view_release(struct tui_view *v);
/* Sort the flat view's rows again by T->sort_cum. */
void tui_flat_sort(struct tui *t, struct tui_view *v);
/* The number of rows V shows. */
size_t tui_view_rows(const struct tui_view *v);

/* Open or close the outline node at row ROW (OPEN: 1 open, 0 close, -1
 * toggle); the rows shown are recomputed. */
void tui_outline_set(struct tui_outline *o, size_t row, int open);
/* The rows shown of O, after a node opened or closed. */
void tui_outline_rows(struct tui_outline *o);

/* The function name of V's selected row (NULL when none), with the
 * filter kinds that f and i use for it: a VM state pseudo-frame is a
 * label, not a function. */
const char *tui_selected_name(const struct tui *t, const struct tui_view *v,
    uint64_t *fn);
/* The --focus/--ignore argument that matches exactly NAME (regex
 * metacharacters escaped), or for a VM state its KEY=VALUE with *KIND
 * changed to the tag rule; owned by the caller. */
char *tui_rule_arg(const char *name, enum report_rule_kind *kind);

/* --- tui-tree.c --- */

/* Functions by name (BYNAME, CANON) and each sample's functions (FNS,
 * FOFF, LEAF_FN), once. */
void tui_index_names(struct tui *t);
void tui_index_frames(struct tui *t);
/* V's outline: the call tree (SUBJECT NULL) or SUBJECT's callers. */
int tui_fill_outline(struct tui *t, struct tui_view *v, const char *subject,
    char *err, size_t errlen);

/* --- tui-kept.c --- */

/* Free WHOLE, the tree of the samples kept and what was made with them. */
void tui_trees_release(struct tui *t);
/* Show sample type VI: the trees and tables computed again for it (as
 * tui_refilter()). */
int tui_set_value(struct tui *t, size_t vi, char *err, size_t errlen);
/* The call tree of all the samples (WHOLE, with LEAF), sorted by value,
 * in preorder; NULL when it is too large. */
struct report_tree *tui_build_tree(struct tui *t);
/* The call tree of the samples kept, from WHOLE; NULL when there is no
 * WHOLE. */
struct report_tree *tui_kept_tree(struct tui *t);
/* The call tree of the samples kept (T->tree), made now when the filters
 * changed since; NULL when it is too large. */
struct report_tree *tui_tree(struct tui *t);

/* --- tui-search.c --- */

/* Compile PATTERN into M (smart case); 0, or -1 with a message and M
 * inactive. */
int tui_match_set(struct tui_match *m, const char *pattern, char *err,
    size_t errlen);
void tui_match_release(struct tui_match *m);
/* Whether S matches M (never when M is inactive). */
int tui_match_test(const struct tui_match *m, const char *s);
/* The row of the first node after row FROM in direction DIR (1 down, -1
 * up; FROM itself first when SAME, else last) whose name matches M,
 * opening its ancestors; -1 when none.  *WRAPPED says whether it was
 * found past the end of the tree (or its start, going up). */
long tui_outline_find(struct tui_outline *o, size_t from,
    const struct tui_match *m, int dir, int same, int *wrapped);
/* The same over a list view's rows. */
long tui_items_find(const struct tui_view *v, size_t from,
    const struct tui_match *m, int dir, int same, int *wrapped);
/* Select the match of T's search from row FROM on (see tui_outline_find);
 * a note says when it wrapped or found nothing. */
void tui_search(struct tui *t, size_t from, int dir, int same);
/* n (DIR 1) and N (-1). */
void tui_search_again(struct tui *t, int dir);
/* A key typed at the / prompt; START is the row the search began on. */
void tui_search_key(struct tui *t, int ch, size_t start);

/* --- tui-lists.c --- */

/* The threads, by value: Enter keeps the one selected (--thread). */
void tui_fill_threads(struct tui *t, struct tui_view *v);
/* The VM states, then every other label KEY=VALUE, each key's values
 * by value: Enter keeps the samples with the label (--tagfocus). */
void tui_fill_labels(struct tui *t, struct tui_view *v);

/* --- tui-panels.c --- */

/* V's rows (TUI_TIMELINE, TUI_ALLOCS): the lines of the text report's
 * table; 0, or -1 with a message when the profile has none. */
int tui_fill_panel(struct tui *t, struct tui_view *v, char *err,
    size_t errlen);

/* --- tui-source.c --- */

/* V's rows: the lines of function FN (or, FN 0, of one called SUBJECT
 * that has line numbers) with each line's self and cumulative value, the
 * file's text beside them when it can be read. */
int tui_fill_source(struct tui *t, struct tui_view *v, const char *subject,
    uint64_t fn, char *err, size_t errlen);

/* --- tui-views.c --- */

/* Draw the whole screen: header, filters, the view, the status line. */
void tui_draw(struct tui *t);
/* The rows of the screen a view gets: what the title, the filters (one
 * line or more), the column heads and the status line leave. */
int tui_page_rows(const struct tui *t);

#endif
