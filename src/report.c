/*
 * report.c: sample filters and the merged call tree, shared by "rperf
 * report", "rperf diff" and the flame graph (see report.h; values are
 * formatted by numfmt.c, files written by output.c).
 *
 * Filters decide per sample but match regexes once per function, so a
 * profile with 100k stacks costs one regexec per function name, not per
 * frame.  The tree keys nodes by (parent, name) in an open-addressing
 * hash, so building it is linear in the number of frames; walks over it
 * are iterative, as a stack can be thousands of frames deep.  Nothing here
 * prints anything but what it is asked to write.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "frames.h"
#include "report.h"
#include "xmalloc.h"


/* The child index: (parent, name) keys and their node ids; id 0 is an
 * empty slot.  Keys live in the slots so probing never touches nodes. */
struct report_slot {
	uint64_t key;
	uint32_t id;
};
struct report_index {
	struct report_slot *slots;
	size_t cap, n;
};

/* --- filters --- */

void
report_filter_init(struct report_filter *f)
{
	memset(f, 0, sizeof *f);
	f->desc = xstrdup("");
}

void
report_filter_release(struct report_filter *f)
{
	size_t i;

	for (i = 0; i < f->nrules; i++) {
		if (f->rules[i].kind == REPORT_FOCUS ||
		    f->rules[i].kind == REPORT_IGNORE)
			regfree(&f->rules[i].re);
		free(f->rules[i].key);
		free(f->rules[i].value);
	}
	free(f->rules);
	free(f->desc);
	memset(f, 0, sizeof *f);
}

/* Whether S can be shown in a header without quotes. */
static int
report_is_plain(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (strchr(" \t\n'\"\\$`*?[]{}()|&;<>~#!", *s) != NULL)
			return 0;
	}
	return 1;
}

/* Append " --OPT ARG" to F's description, ARG shell-quoted if needed. */
static void
report_filter_note(struct report_filter *f, const char *opt, const char *arg,
    int quote)
{
	size_t len = strlen(f->desc), need = len + strlen(opt) + 8;
	const char *s;
	char *d;

	for (s = arg; *s != '\0'; s++)
		need += *s == '\'' ? 4 : 1;
	f->desc = xrealloc(f->desc, need);
	d = f->desc + len;
	d += sprintf(d, "%s--%s ", len ? " " : "", opt);
	if (!quote && report_is_plain(arg)) {
		strcpy(d, arg);
		return;
	}
	*d++ = '\'';
	for (s = arg; *s != '\0'; s++) {
		if (*s == '\'') {
			memcpy(d, "'\\''", 4);
			d += 4;
		} else
			*d++ = *s;
	}
	*d++ = '\'';
	*d = '\0';
}

/* The length of the string that the extended regex RE matches when it is
 * ^literal$ (every metacharacter escaped, as the browser's f and i write
 * one), else -1: only names of that length need regexec(). */
static long
report_exact_length(const char *re)
{
	const char *meta = "\\.[]()*+?{}|^$";
	size_t n = strlen(re);
	long len = 0;
	const char *s;

	if (n < 2 || re[0] != '^' || re[n - 1] != '$')
		return -1;
	for (s = re + 1; s < re + n - 1; s++, len++) {
		if (*s == '\\') {
			if (s + 1 >= re + n - 1 || strchr(meta, s[1]) == NULL)
				return -1;
			s++;
		} else if (strchr(meta, *s) != NULL)
			return -1;	/* the last $ unescaped is not literal */
	}
	return len;
}

int
report_filter_add(struct report_filter *f, enum report_rule_kind kind,
    const char *arg, char *err, size_t errlen)
{
	static const char *const opts[] = { "focus", "ignore", "tagfocus",
	    "tagignore", "thread" };
	struct report_rule r;
	const char *eq;
	char msg[256];
	int rc;
	void *v;

	memset(&r, 0, sizeof r);
	r.kind = kind;
	r.exact = -1;
	switch (kind) {
	case REPORT_FOCUS:
	case REPORT_IGNORE:
		r.exact = report_exact_length(arg);
		rc = regcomp(&r.re, arg, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			regerror(rc, &r.re, msg, sizeof msg);
			error_set(err, errlen, "invalid regex '%s': %s",
			    arg, msg);
			return -1;
		}
		break;
	case REPORT_TAGFOCUS:
	case REPORT_TAGIGNORE:
		eq = strchr(arg, '=');
		if (eq == NULL || eq == arg || eq[1] == '\0') {
			error_set(err, errlen, "invalid label '%s' "
			    "(expected KEY=VALUE)", arg);
			return -1;
		}
		r.key = xstrndup(arg, (size_t)(eq - arg));
		r.value = xstrdup(eq + 1);
		break;
	case REPORT_THREAD:
		if (*arg == '\0') {
			error_set(err, errlen, "invalid thread '' "
			    "(expected a number or a name)");
			return -1;
		}
		r.value = xstrdup(arg);
		break;
	}
	v = f->rules;
	xgrow(&v, &f->cap, f->nrules + 1, sizeof *f->rules);
	f->rules = v;
	f->rules[f->nrules++] = r;
	report_filter_note(f, opts[kind], arg, kind == REPORT_FOCUS ||
	    kind == REPORT_IGNORE);
	return 0;
}

int
report_filter_active(const struct report_filter *f)
{
	return f->nrules != 0;
}

const char *
report_filter_describe(const struct report_filter *f)
{
	return f->desc ? f->desc : "";
}

/* A label value to compare with: interned string and decimal number. */
struct report_want {
	str_id key, str;
	int has_num;
	int64_t num;
};

/* Resolve KEY=VALUE against P's string table into W. */
static void
report_want_init(struct report_want *w, struct profile *p, const char *key,
    const char *value)
{
	char buf[32];
	long long n;
	char *end;

	w->key = profile_intern(p, key);
	w->str = profile_intern(p, value);
	errno = 0;
	n = strtoll(value, &end, 10);
	snprintf(buf, sizeof buf, "%lld", n);
	/* Numbers compare by their decimal text: "007" is not 7. */
	w->has_num = errno == 0 && *end == '\0' && strcmp(buf, value) == 0;
	w->num = n;
}

/* Whether sample S of P has a label matching W. */
static int
report_has_label(const struct profile *p, const struct profile_sample *s,
    const struct report_want *w)
{
	const struct profile_label *l = profile_sample_labels(p, s);
	uint32_t i;

	for (i = 0; i < s->nlabel; i++) {
		if (l[i].key != w->key)
			continue;
		if (l[i].str != 0 ? l[i].str == w->str :
		    w->has_num && l[i].num == w->num)
			return 1;
	}
	return 0;
}

/* Whether function FN's name matches rule R (0 none, cached in MEMO). */
static int
report_fn_matches(const struct profile *p, const struct report_rule *r,
    uint8_t *memo, uint64_t fn)
{
	if (memo[fn - 1] == 0) {
		const char *name = profile_str(p, p->functions[fn - 1].name);

		if (r->exact >= 0 && strlen(name) != (size_t)r->exact)
			memo[fn - 1] = 1;
		else
			memo[fn - 1] = regexec(&r->re, name, 0, NULL, 0) == 0 ?
			    2 : 1;
	}
	return memo[fn - 1] == 2;
}

void
report_rule_functions(const struct report_filter *f, size_t i,
    const struct profile *p, uint8_t *match)
{
	uint8_t *memo = xcalloc(p->nfunctions + 1, 1);
	uint64_t fn;

	match[0] = 0;
	for (fn = 1; fn <= p->nfunctions; fn++)
		match[fn] = (uint8_t)report_fn_matches(p, &f->rules[i], memo,
		    fn);
	free(memo);
}

/* Whether some frame of S matches rule R. */
static int
report_stack_matches(const struct profile *p, const struct profile_sample *s,
    const struct report_rule *r, uint8_t *memo)
{
	const uint64_t *locs = profile_sample_locs(p, s);
	uint32_t j;

	for (j = 0; j < s->nloc; j++) {
		uint64_t fn = profile_location_function_id(p, locs[j]);

		if (fn != 0 && report_fn_matches(p, r, memo, fn))
			return 1;
	}
	return 0;
}

/* Whether F keeps sample S (WANTS and MEMOS are per rule). */
static int
report_keep(const struct profile *p, const struct profile_sample *s,
    const struct report_filter *f, const struct report_want *wants,
    uint8_t **memos)
{
	size_t i, k;
	int any_thread = 0, thread_ok = 0;

	for (i = 0; i < f->nrules; i++) {
		const struct report_rule *r = &f->rules[i];
		int hit;

		switch (r->kind) {
		case REPORT_FOCUS:
			if (!report_stack_matches(p, s, r, memos[i]))
				return 0;
			break;
		case REPORT_IGNORE:
			if (report_stack_matches(p, s, r, memos[i]))
				return 0;
			break;
		case REPORT_TAGIGNORE:
			if (report_has_label(p, s, &wants[2 * i]))
				return 0;
			break;
		case REPORT_TAGFOCUS:
			/* The first rule of each key decides for all of
			 * that key's rules. */
			for (k = 0; k < i; k++) {
				if (f->rules[k].kind == REPORT_TAGFOCUS &&
				    strcmp(f->rules[k].key, r->key) == 0)
					break;
			}
			if (k < i)
				break;
			hit = 0;
			for (k = i; k < f->nrules && !hit; k++) {
				if (f->rules[k].kind == REPORT_TAGFOCUS &&
				    strcmp(f->rules[k].key, r->key) == 0)
					hit = report_has_label(p, s,
					    &wants[2 * k]);
			}
			if (!hit)
				return 0;
			break;
		case REPORT_THREAD:
			any_thread = 1;
			if (!thread_ok)
				thread_ok = report_has_label(p, s,
				    &wants[2 * i]) ||
				    report_has_label(p, s, &wants[2 * i + 1]);
			break;
		}
	}
	return !any_thread || thread_ok;
}

/* After samples were dropped: recount the "samples" comment from the
 * samples value, and drop the "triggers" one, which cannot be recounted. */
void
report_fix_comments(struct profile *p)
{
	size_t i, k, n = 0, vi = p->nvalue_types;
	char *c;

	for (k = 0; k < p->nvalue_types; k++) {
		if (strcmp(profile_str(p, p->value_types[k].type),
		    "samples") == 0)
			vi = k;
	}
	for (i = 0; i < p->ncomments; i++) {
		const char *s = profile_str(p, p->comments[i]);
		int samples = profile_comment_match(s,
		    PROFILE_COMMENT_SAMPLES) != NULL;

		if (profile_comment_match(s, PROFILE_COMMENT_TRIGGERS) ||
		    (samples && vi == p->nvalue_types))
			continue;
		if (samples) {
			c = xasprintf("%s: %" PRId64, PROFILE_COMMENT_SAMPLES,
			    profile_total(p, vi));
			p->comments[i] = profile_intern(p, c);
			free(c);
		}
		p->comments[n++] = p->comments[i];
	}
	p->ncomments = n;
}

size_t
report_filter_apply(struct profile *p, const struct report_filter *f)
{
	struct report_want *wants;
	uint8_t **memos;
	size_t i, kept = 0;

	if (f->nrules == 0)
		return p->nsamples;
	wants = xcalloc(2 * f->nrules, sizeof *wants);
	memos = xcalloc(f->nrules, sizeof *memos);
	for (i = 0; i < f->nrules; i++) {
		const struct report_rule *r = &f->rules[i];

		switch (r->kind) {
		case REPORT_FOCUS:
		case REPORT_IGNORE:
			memos[i] = xcalloc(p->nfunctions + 1, 1);
			break;
		case REPORT_TAGFOCUS:
		case REPORT_TAGIGNORE:
			report_want_init(&wants[2 * i], p, r->key, r->value);
			break;
		case REPORT_THREAD:
			report_want_init(&wants[2 * i], p, "thread",
			    r->value);
			report_want_init(&wants[2 * i + 1], p, "thread_name",
			    r->value);
			break;
		}
	}
	for (i = 0; i < p->nsamples; i++) {
		if (report_keep(p, &p->samples[i], f, wants, memos))
			p->samples[kept++] = p->samples[i];
	}
	if (kept != p->nsamples) {
		p->nsamples = kept;
		report_fix_comments(p);
	}
	for (i = 0; i < f->nrules; i++)
		free(memos[i]);
	free(memos);
	free(wants);
	return kept;
}

/* --- the call tree --- */

/* Double the index's slots and rehash its entries. */
static void
report_index_grow(struct report_index *ix)
{
	size_t cap = ix->cap ? ix->cap * 2 : 1024, i, j;
	struct report_slot *slots = xcalloc(cap, sizeof *slots);

	for (i = 0; i < ix->cap; i++) {
		if (ix->slots[i].id == 0)
			continue;
		j = profile_mix(ix->slots[i].key) & (cap - 1);
		while (slots[j].id != 0)
			j = (j + 1) & (cap - 1);
		slots[j] = ix->slots[i];
	}
	free(ix->slots);
	ix->slots = slots;
	ix->cap = cap;
}

/* The child NAME of node PARENT; made when missing and CREATE, else 0. */
static uint32_t
report_tree_child(struct report_tree *t, uint32_t parent, uint32_t name,
    int create)
{
	struct report_index *ix = t->index;
	uint64_t key = ((uint64_t)parent << 32) | name;
	struct report_node *n;
	size_t j;
	void *v;

	if (!create && ix->cap == 0)
		return 0;
	if ((ix->n + 1) * 4 > ix->cap * 3)
		report_index_grow(ix);
	j = profile_mix(key) & (ix->cap - 1);
	while (ix->slots[j].id != 0) {
		if (ix->slots[j].key == key)
			return ix->slots[j].id;
		j = (j + 1) & (ix->cap - 1);
	}
	if (!create)
		return 0;
	if (t->nnodes >= UINT32_MAX) {
		t->full = 1;
		return 0;
	}
	v = t->nodes;
	xgrow(&v, &t->cap, t->nnodes + 1, sizeof *t->nodes);
	t->nodes = v;
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof *n);
	n->name = name;
	n->parent = parent;
	n->depth = t->nodes[parent].depth + 1;
	n->next = t->nodes[parent].child;
	t->nodes[parent].child = (uint32_t)t->nnodes;
	ix->slots[j].key = key;
	ix->slots[j].id = (uint32_t)t->nnodes;
	ix->n++;
	return (uint32_t)t->nnodes++;
}

struct report_tree *
report_tree_new(void)
{
	struct report_tree *t = xcalloc(1, sizeof *t);
	size_t i;

	t->names = profile_new();
	/* The states take ids 1 to 4, as report_tree_kind() expects. */
	for (i = 0; i < PROFILE_NSTATES; i++)
		profile_intern(t->names, profile_states[i].frame);
	t->index = xcalloc(1, sizeof(struct report_index));
	t->cap = 1024;
	t->nodes = xcalloc(t->cap, sizeof *t->nodes);
	t->nnodes = 1;
	t->nodes[0].name = profile_intern(t->names, "all");
	return t;
}

void
report_tree_free(struct report_tree *t)
{
	struct report_index *ix;

	if (t == NULL)
		return;
	ix = t->index;
	free(ix->slots);
	free(ix);
	free(t->nodes);
	profile_free(t->names);
	free(t);
}

enum report_kind
report_tree_kind(uint32_t name)
{
	if (name >= 1 && name <= PROFILE_NSTATES)
		return (enum report_kind)name;
	return REPORT_KIND_FRAME;
}

const char *
report_tree_name(const struct report_tree *t, const struct report_node *n)
{
	return profile_str(t->names, n->name);
}

/* The tree name id of every function of P (index: function id - 1). */
static uint32_t *
report_tree_names(struct report_tree *t, const struct profile *p)
{
	uint32_t *ids = xcalloc(p->nfunctions + 1, sizeof *ids);
	char buf[FRAMES_NAME_MAX];
	size_t i;

	/* A real frame must not pass for a VM state (frames.h). */
	for (i = 0; i < p->nfunctions; i++)
		ids[i] = profile_intern(t->names, frames_name(profile_str(p,
		    p->functions[i].name), buf));
	return ids;
}

/* The pseudo-frame name ids of sample S (up to 2) into OUT; the count. */
static size_t
report_state_frames(const struct profile *p, const struct profile_sample *s,
    uint32_t out[2])
{
	struct profile_vm_state st = profile_sample_state(p, s);
	size_t n = 0;

	/* Tree names 1 to 4 are the states in profile_states order. */
	if (st.gvl_state >= 0)
		out[n++] = (uint32_t)st.gvl_state + 1;
	if (st.gc_state >= 0)
		out[n++] = (uint32_t)st.gc_state + 1;
	return n;
}

/* report_tree_add(), noting in LEAF (when not NULL) each sample's last
 * node. */
static int
report_tree_add_to(struct report_tree *t, const struct profile *p, size_t vi,
    int base, double scale, uint32_t *leaf)
{
	uint32_t *ids;
	size_t i;

	if (vi >= p->nvalue_types)
		return 0;
	ids = report_tree_names(t, p);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		int64_t w = profile_sample_values(p, s)[vi], f;
		struct frames_walk fw;
		uint32_t node = 0;

		if (leaf != NULL)
			leaf[i] = 0;
		if (w <= 0)
			continue;
		if (base && scale != 1.0)
			w = (int64_t)((double)w * scale + 0.5);
		if (base)
			t->nodes[0].base = profile_add_sat(t->nodes[0].base,
			    w);
		else
			t->nodes[0].value = profile_add_sat(
			    t->nodes[0].value, w);
		/* Root first, the VM states on top (frames.h). */
		frames_walk_begin(&fw, p, s);
		while ((f = frames_walk_next(&fw)) != 0) {
			uint32_t name;
			struct report_node *n;

			if (f > 0) {
				uint64_t fn = profile_location_function_id(p,
				    (uint64_t)f);

				if (fn == 0)
					continue;
				name = ids[fn - 1];
			} else {
				/* Tree names 1 to 4 are the states. */
				name = (uint32_t)-f;
			}
			node = report_tree_child(t, node, name, !base);
			if (node == 0 && t->full) {
				free(ids);
				errno = EFBIG;
				return -1;
			}
			if (node == 0)
				break;
			n = &t->nodes[node];
			if (base)
				n->base = profile_add_sat(n->base, w);
			else
				n->value = profile_add_sat(n->value, w);
			if (!base && frames_walk_done(&fw))
				n->self = profile_add_sat(n->self, w);
		}
		if (leaf != NULL)
			leaf[i] = node;
	}
	free(ids);
	return 0;
}

int
report_tree_add(struct report_tree *t, const struct profile *p, size_t vi,
    int base, double scale)
{
	return report_tree_add_to(t, p, vi, base, scale, NULL);
}

int
report_tree_add_leaves(struct report_tree *t, const struct profile *p,
    size_t vi, uint32_t *leaf)
{
	return report_tree_add_to(t, p, vi, 0, 1.0, leaf);
}

int
report_tree_add_callers(struct report_tree *t, const struct profile *p,
    size_t vi, const char *name)
{
	uint32_t *ids, states[2], want, node, j;
	size_t i, k, nstates;

	if (vi >= p->nvalue_types)
		return 0;
	ids = report_tree_names(t, p);
	want = profile_intern(t->names, name);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		int64_t w = profile_sample_values(p, s)[vi];
		int in_state = 0;

		if (w <= 0)
			continue;
		/* A VM state sits above the leaf: its callers start there. */
		nstates = report_state_frames(p, s, states);
		for (k = 0; k < nstates; k++)
			in_state |= states[k] == want;
		for (j = 0; !in_state && j < s->nloc; j++) {
			uint64_t fn = profile_location_function_id(p, locs[j]);

			if (fn != 0 && ids[fn - 1] == want)
				break;
		}
		if (!in_state && j == s->nloc)
			continue;
		t->nodes[0].value = profile_add_sat(t->nodes[0].value, w);
		node = report_tree_child(t, 0, want, 1);
		if (node == 0)
			goto full;
		t->nodes[node].value = profile_add_sat(t->nodes[node].value, w);
		if (in_state || j == 0)
			t->nodes[node].self = profile_add_sat(t->nodes[node].self, w);
		for (j = in_state ? 0 : j + 1; j < s->nloc; j++) {
			uint64_t fn = profile_location_function_id(p, locs[j]);

			if (fn == 0)
				continue;
			node = report_tree_child(t, node, ids[fn - 1], 1);
			if (node == 0)
				goto full;
			t->nodes[node].value = profile_add_sat(
			    t->nodes[node].value, w);
		}
	}
	free(ids);
	return 0;
full:
	free(ids);
	errno = EFBIG;
	return -1;
}

/* The tree being sorted, for the comparators (qsort has no argument). */
static const struct report_tree *report_sorting;

/* Order node ids by name. */
static int
report_cmp_name(const void *a, const void *b)
{
	const struct report_node *x = &report_sorting->nodes[*(const uint32_t *)a];
	const struct report_node *y = &report_sorting->nodes[*(const uint32_t *)b];

	if (x->name == y->name)
		return 0;
	return strcmp(profile_str(report_sorting->names, x->name),
	    profile_str(report_sorting->names, y->name));
}

/* Order node ids by value, largest first, then name. */
static int
report_cmp_value(const void *a, const void *b)
{
	const struct report_node *x = &report_sorting->nodes[*(const uint32_t *)a];
	const struct report_node *y = &report_sorting->nodes[*(const uint32_t *)b];

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return report_cmp_name(a, b);
}

void
report_tree_sort(struct report_tree *t, int by_value)
{
	uint32_t *kids = NULL, c;
	size_t cap = 0, n, i, k;
	void *v;

	report_sorting = t;
	for (i = 0; i < t->nnodes; i++) {
		n = 0;
		for (c = t->nodes[i].child; c != 0; c = t->nodes[c].next) {
			v = kids;
			xgrow(&v, &cap, n + 1, sizeof *kids);
			kids = v;
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort(kids, n, sizeof *kids, by_value ? report_cmp_value :
		    report_cmp_name);
		t->nodes[i].child = kids[0];
		for (k = 0; k + 1 < n; k++)
			t->nodes[kids[k]].next = kids[k + 1];
		t->nodes[kids[n - 1]].next = 0;
	}
	report_sorting = NULL;
	free(kids);
}

/* Whether node N has a child worth CUT or more (and more than 0). */
static int
report_tree_any_child(const struct report_tree *t,
    const struct report_node *n, int64_t cut)
{
	uint32_t c;

	for (c = n->child; c != 0; c = t->nodes[c].next) {
		if (t->nodes[c].value >= cut && t->nodes[c].value > 0)
			return 1;
	}
	return 0;
}

int
report_tree_write(const struct report_tree *t, FILE *fp,
    const struct numfmt_unit *u, double min_pct)
{
	int64_t total = t->nodes[0].value, cut;
	double x;
	char val[48], pct[32], head[32];
	size_t vw;
	uint32_t c;

	if (t->full) {
		errno = EFBIG;
		return -1;
	}
	if (total <= 0) {
		fprintf(fp, "profile is empty: no samples\n");
		return fflush(fp) == 0 && !ferror(fp) ? 0 : -1;
	}
	/* The smallest value not under MIN_PCT percent: a ceiling. */
	x = (double)total * min_pct / 100.0;
	cut = (int64_t)x;
	if ((double)cut < x)
		cut++;
	numfmt_value(val, sizeof val, u, total);
	snprintf(head, sizeof head, "%s%s%s", u->ms ? "Time" : "Value",
	    *u->suffix ? " " : "", u->suffix);
	vw = strlen(val) > strlen(head) ? strlen(val) : strlen(head);
	fprintf(fp, "Call tree (cumulative; nodes under %g%% hidden):\n",
	    min_pct);
	fprintf(fp, "  %*s  %6s  %s\n", (int)vw, head, "%", "Function");
	/* Preorder without recursion: down to the first child worth
	 * showing, else along to the next sibling, else back up. */
	c = t->nodes[0].child;
	while (c != 0) {
		const struct report_node *n = &t->nodes[c];

		if (n->value >= cut && n->value > 0) {
			numfmt_value(val, sizeof val, u, n->value);
			numfmt_pct(pct, sizeof pct, (double)n->value, (double)total);
			if (n->depth <= REPORT_TREE_MAX_INDENT)
				fprintf(fp, "  %*s  %6s  %*s%s\n", (int)vw, val,
				    pct, (int)(2 * (n->depth - 1)), "",
				    report_tree_name(t, n));
			else
				fprintf(fp, "  %*s  %6s  %*s(depth %" PRIu32
				    ") %s\n", (int)vw, val, pct,
				    2 * REPORT_TREE_MAX_INDENT, "", n->depth,
				    report_tree_name(t, n));
			if (n->child != 0 &&
			    n->depth >= REPORT_TREE_MAX_DEPTH) {
				if (report_tree_any_child(t, n, cut))
					fprintf(fp, "  %*s  %6s  %*s(calls "
					    "deeper than %d levels not "
					    "shown)\n", (int)vw, "", "",
					    2 * REPORT_TREE_MAX_INDENT, "",
					    REPORT_TREE_MAX_DEPTH);
			} else if (n->child != 0) {
				c = n->child;
				continue;
			}
		}
		while (c != 0 && t->nodes[c].next == 0)
			c = t->nodes[c].parent;
		if (c != 0)
			c = t->nodes[c].next;
	}
	if (fflush(fp) != 0 || ferror(fp)) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}
