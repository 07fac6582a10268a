/*
 * report.h: what "rperf report" and "rperf diff" share: sample filters
 * (--focus, --ignore, --tagfocus, --tagignore, --thread), the merged call
 * tree that the tree report and the flame graphs are drawn from.  Values
 * print through numfmt.h and files are written by output.c.
 *
 * Plain C over the profile model; no Ruby.  Filters drop samples from a
 * profile in place and never touch its tables, so every writer still sees
 * a consistent profile.
 */
#ifndef RPERF_REPORT_H
#define RPERF_REPORT_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "numfmt.h"
#include "profile.h"

/* --- filters --- */

enum report_rule_kind {
	REPORT_FOCUS,		/* keep samples with a frame matching a regex */
	REPORT_IGNORE,		/* drop samples with a frame matching it */
	REPORT_TAGFOCUS,	/* keep samples with label KEY=VALUE */
	REPORT_TAGIGNORE,	/* drop samples with label KEY=VALUE */
	REPORT_THREAD,		/* keep samples of thread N or NAME */
};

struct report_rule {
	enum report_rule_kind kind;
	regex_t re;		/* REPORT_FOCUS, REPORT_IGNORE */
	long exact;		/* RE is ^literal$: the literal's length in
				 * bytes (no other length can match); -1 */
	char *key, *value;	/* tags; for REPORT_THREAD only value */
};

/*
 * Every --focus must match some frame, no --ignore may match any;
 * --tagfocus rules with the same key are alternatives (any of them) and
 * different keys must all hold; no --tagignore may hold; with --thread
 * the sample must belong to one of the threads named.
 */
struct report_filter {
	struct report_rule *rules;
	size_t nrules, cap;
	char *desc;		/* "--focus 'fib' --tagignore %GVL=blocked" */
};

void report_filter_init(struct report_filter *f);
void report_filter_release(struct report_filter *f);

/*
 * Add a rule of KIND from an option's argument: a POSIX extended regex,
 * KEY=VALUE, or a thread number or name.  Returns 0, or -1 with e.g.
 * "invalid regex '(': parentheses not balanced" in ERR.
 */
int report_filter_add(struct report_filter *f, enum report_rule_kind kind,
    const char *arg, char *err, size_t errlen);

/* Whether F has any rule. */
int report_filter_active(const struct report_filter *f);

/* The rules as options, for a report's header; "" without rules. */
const char *report_filter_describe(const struct report_filter *f);

/* Rule I of F (a --focus or --ignore) on every function name of P:
 * MATCH[fn] is 1 when function FN's name matches, else 0 (MATCH[0] 0);
 * MATCH has room for P's functions and one. */
void report_rule_functions(const struct report_filter *f, size_t i,
    const struct profile *p, uint8_t *match);

/* Drop the samples of P that F rejects; returns how many are kept. */
size_t report_filter_apply(struct profile *p, const struct report_filter *f);
/* After samples of P were dropped: the "samples" comment recounted from
 * the samples value, the "triggers" one, which cannot be, dropped. */
void report_fix_comments(struct profile *p);

/* --- the call tree --- */

/* Frame kinds: a function, or a VM-state pseudo-frame on top of a leaf. */
enum report_kind {
	REPORT_KIND_FRAME,
	REPORT_KIND_GVL_BLOCKED,
	REPORT_KIND_GVL_WAIT,
	REPORT_KIND_GC_MARK,
	REPORT_KIND_GC_SWEEP,
};
#define REPORT_NKINDS 5

/* A node: one frame on one path from the root. */
struct report_node {
	uint32_t name;		/* a string id of report_tree.names */
	uint32_t parent;	/* 0 for the root's children, and the root */
	uint32_t child;		/* first child; 0 for none */
	uint32_t next;		/* next sibling; 0 for none */
	uint32_t depth;		/* the root is 0, its children 1 */
	int64_t value;		/* cumulative: this frame and all above it */
	int64_t self;		/* samples whose stack ends here */
	int64_t base;		/* cumulative value of a second profile */
};

/*
 * Stacks merged by frame name, root first; nodes[0] is the root ("all"),
 * which holds the total.  Names are interned in their own string table,
 * so trees of two profiles share names; string ids 1 to 4 are the
 * pseudo-frames "[GVL blocked]", "[GVL wait]", "[GC marking]" and
 * "[GC sweeping]" (a function really called so is shown in parentheses).
 */
struct report_tree {
	struct report_node *nodes;
	size_t nnodes, cap;
	struct profile *names;	/* only its string table is used */
	void *index;		/* private: (parent, name) -> node */
	int full;		/* a node could not be added (32-bit ids):
				 * the tree is incomplete */
};

struct report_tree *report_tree_new(void);
void report_tree_free(struct report_tree *t);

/* The kind of name id NAME. */
enum report_kind report_tree_kind(uint32_t name);
/* The text of a node's name. */
const char *report_tree_name(const struct report_tree *t,
    const struct report_node *n);

/*
 * Add the samples of P (value VI; samples worth 0 or less are left out)
 * to T.  Into node.value when BASE is 0; into node.base, times SCALE and
 * only along paths T already has, when BASE is 1.  Returns 0, or -1 with
 * errno EFBIG when T cannot hold more nodes (T->full: it is incomplete,
 * and report_tree_write() refuses it the same way).
 */
int report_tree_add(struct report_tree *t, const struct profile *p,
    size_t vi, int base, double scale);

/*
 * report_tree_add() of P's value VI (BASE 0), and into LEAF[i] (P's
 * nsamples long) the node where sample i's path ends: 0 for a sample
 * left out.  A node's parent has a smaller id than the node, so values
 * per leaf add up to the whole tree's in one pass from the last node
 * back (what the browser does to show the tree of some samples without
 * building it again).
 */
int report_tree_add_leaves(struct report_tree *t, const struct profile *p,
    size_t vi, uint32_t *leaf);

/*
 * The inverted tree of NAME (a tree name, as report_tree_name() gives it,
 * pseudo-frames included): for each sample of P with a frame so named,
 * the path from its leafmost such frame out to the root, so node 1 is
 * NAME with its callers below it.  Into node.value, and node.self where
 * NAME was the leaf.  Returns as report_tree_add().
 */
int report_tree_add_callers(struct report_tree *t, const struct profile *p,
    size_t vi, const char *name);

/* Order every node's children by name (BY_VALUE 0) or by value, largest
 * first, then name (BY_VALUE 1). */
void report_tree_sort(struct report_tree *t, int by_value);

/* The tree report indents at most this many levels (deeper lines say
 * their depth), and prints no node deeper than REPORT_TREE_MAX_DEPTH, so
 * its size grows with the number of nodes, never with depth squared. */
#define REPORT_TREE_MAX_INDENT 64
#define REPORT_TREE_MAX_DEPTH 1024

/*
 * Print T as an indented tree, root first: time, percent of the total,
 * name; subtrees worth less than MIN_PCT percent of the total are left
 * out, and so are nodes deeper than REPORT_TREE_MAX_DEPTH (a line says
 * where).  Returns 0, or -1 with errno set on a write error or, before
 * writing anything, with EFBIG when T is incomplete (T->full).
 */
int report_tree_write(const struct report_tree *t, FILE *fp,
    const struct numfmt_unit *u, double min_pct);

#endif
