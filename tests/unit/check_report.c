/*
 * check_report.c: unit tests for report.c: each filter kind and how they
 * combine, label matching by decimal text, which function names a rule
 * matches (literal ^name$ rules too), bad arguments, the description
 * of the filters, and the merged call tree and its text, each sample's
 * last node in it, and the inverted tree of one function's callers.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "testutil.h"

/* The total of value 1 (ns) of the sample profile after filter rules. */
static int64_t
filtered_total(const char *const *args, const enum report_rule_kind *kinds,
    size_t n)
{
	struct profile *p = tu_sample_profile();
	struct report_filter f;
	char err[256];
	int64_t total;
	size_t i;

	report_filter_init(&f);
	for (i = 0; i < n; i++)
		ck_assert_int_eq(report_filter_add(&f, kinds[i], args[i], err,
		    sizeof err), 0);
	report_filter_apply(p, &f);
	total = profile_total(p, 1);
	report_filter_release(&f);
	profile_free(p);
	return total;
}

START_TEST(test_filters)
{
	/* The sample profile: 12 ms in all; baz 7.5 ms (3+2 main, 2 worker
	 * of which 1.5 in GC), work alone 1, sleep 4 (GVL blocked). */
	const char *a1[] = { "baz$" };
	const enum report_rule_kind k1[] = { REPORT_FOCUS };
	const char *a2[] = { "baz$" };
	const enum report_rule_kind k2[] = { REPORT_IGNORE };
	const char *a3[] = { "%GVL=blocked" };
	const enum report_rule_kind k3[] = { REPORT_TAGFOCUS };
	const char *a4[] = { "%GVL=blocked", "%GC=mark" };
	const enum report_rule_kind k4[] = { REPORT_TAGIGNORE,
	    REPORT_TAGIGNORE };
	const char *a5[] = { "2" };
	const enum report_rule_kind k5[] = { REPORT_THREAD };
	const char *a6[] = { "worker", "main" };
	const enum report_rule_kind k6[] = { REPORT_THREAD, REPORT_THREAD };
	const char *a7[] = { "thread=2" };
	const enum report_rule_kind k7[] = { REPORT_TAGFOCUS };
	const char *a8[] = { "thread=02" };
	const char *a9[] = { "work", "baz", "thread=1" };
	const enum report_rule_kind k9[] = { REPORT_FOCUS, REPORT_IGNORE,
	    REPORT_TAGFOCUS };
	const char *a10[] = { "%GVL=blocked", "%GC=mark" };
	const enum report_rule_kind k10[] = { REPORT_TAGFOCUS,
	    REPORT_TAGFOCUS };
	const char *a11[] = { "%GVL=blocked", "%GVL=wait" };

	ck_assert_int_eq(filtered_total(a1, k1, 1), 7000000);
	ck_assert_int_eq(filtered_total(a2, k2, 1), 5000000);
	ck_assert_int_eq(filtered_total(a3, k3, 1), 4000000);
	ck_assert_int_eq(filtered_total(a4, k4, 2), 6500000);
	ck_assert_int_eq(filtered_total(a5, k5, 1), 2000000);
	ck_assert_int_eq(filtered_total(a6, k6, 2), 12000000);
	ck_assert_int_eq(filtered_total(a7, k7, 1), 2000000);
	/* Numbers compare by their decimal text. */
	ck_assert_int_eq(filtered_total(a8, k7, 1), 0);
	ck_assert_int_eq(filtered_total(a9, k9, 3), 1000000);
	/* Different keys must all hold; the same key is any of them. */
	ck_assert_int_eq(filtered_total(a10, k10, 2), 0);
	ck_assert_int_eq(filtered_total(a11, k10, 2), 4000000);
}
END_TEST

/* Which function names of the sample profile rule ARG matches, as
 * "name,name" in the order of its functions. */
static char *
rule_names(enum report_rule_kind kind, const char *arg)
{
	struct profile *p = tu_sample_profile();
	struct report_filter f;
	uint8_t *match = calloc(p->nfunctions + 1, 1);
	char err[256], *out = calloc(1, 1024);
	size_t fn;

	report_filter_init(&f);
	ck_assert_int_eq(report_filter_add(&f, kind, arg, err, sizeof err), 0);
	report_rule_functions(&f, 0, p, match);
	ck_assert_int_eq(match[0], 0);
	for (fn = 1; fn <= p->nfunctions; fn++) {
		if (!match[fn])
			continue;
		if (*out != '\0')
			strcat(out, ",");
		strcat(out, profile_str(p, p->functions[fn - 1].name));
	}
	report_filter_release(&f);
	free(match);
	profile_free(p);
	return out;
}

START_TEST(test_rule_functions)
{
	/* Each case: the rule, the names it matches.  ^literal$ rules (as
	 * the browser's f and i write them) look at names of one length
	 * only, and mean what the regex means. */
	static const char *const cases[][2] = {
		{ "^Foo::Bar#baz$", "Foo::Bar#baz" },
		{ "^Foo::Bar#ba$", "" },
		{ "^Object#work$", "Object#work" },
		{ "^Object.work$", "Object#work" },
		{ "^Object\\.work$", "" },
		{ "^<main>$", "<main>" },
		/* Not literal: an alternative, an escaped last $. */
		{ "^<main>$|^Kernel#sleep$", "<main>,Kernel#sleep" },
		{ "^Kernel#sleep\\$", "" },
		{ "work", "Object#work" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = rule_names(REPORT_FOCUS, cases[i][0]);

		ck_assert_msg(strcmp(got, cases[i][1]) == 0, "%s: got '%s'",
		    cases[i][0], got);
		free(got);
	}
}
END_TEST

START_TEST(test_filter_errors_and_description)
{
	struct report_filter f;
	char err[256];

	report_filter_init(&f);
	ck_assert(!report_filter_active(&f));
	ck_assert_str_eq(report_filter_describe(&f), "");
	ck_assert_int_eq(report_filter_add(&f, REPORT_FOCUS, "(", err,
	    sizeof err), -1);
	ck_assert(strncmp(err, "invalid regex '(': ", 19) == 0);
	ck_assert_int_eq(report_filter_add(&f, REPORT_TAGFOCUS, "x", err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "invalid label 'x' (expected KEY=VALUE)");
	ck_assert_int_eq(report_filter_add(&f, REPORT_TAGIGNORE, "=v", err,
	    sizeof err), -1);
	ck_assert_int_eq(report_filter_add(&f, REPORT_TAGIGNORE, "k=", err,
	    sizeof err), -1);
	ck_assert(!report_filter_active(&f));
	ck_assert_int_eq(report_filter_add(&f, REPORT_FOCUS, "fib", err,
	    sizeof err), 0);
	ck_assert_int_eq(report_filter_add(&f, REPORT_IGNORE, "it's", err,
	    sizeof err), 0);
	ck_assert_int_eq(report_filter_add(&f, REPORT_TAGIGNORE,
	    "%GVL=blocked", err, sizeof err), 0);
	ck_assert_int_eq(report_filter_add(&f, REPORT_THREAD, "my worker",
	    err, sizeof err), 0);
	ck_assert(report_filter_active(&f));
	ck_assert_str_eq(report_filter_describe(&f), "--focus 'fib' "
	    "--ignore 'it'\\''s' --tagignore %GVL=blocked "
	    "--thread 'my worker'");
	report_filter_release(&f);
}
END_TEST

START_TEST(test_filter_keeps_comments_true)
{
	struct profile *p = tu_sample_profile();
	struct report_filter f;
	char err[64];

	report_filter_init(&f);
	report_filter_add(&f, REPORT_THREAD, "worker", err, sizeof err);
	ck_assert_uint_eq(report_filter_apply(p, &f), 2);
	ck_assert_str_eq(profile_comment_value(p, "samples"), "2");
	ck_assert_ptr_null(profile_comment_value(p, "triggers"));
	ck_assert_str_eq(profile_comment_value(p, "mode"), "cpu");
	report_filter_release(&f);
	profile_free(p);
}
END_TEST

/* The text of the call tree of P cut at MIN_PCT. */
static char *
tree_text(const struct profile *p, double min_pct)
{
	struct report_tree *t = report_tree_new();
	struct numfmt_unit u;
	char *buf = NULL;
	size_t len;
	int rc;

	numfmt_unit_init(&u, p, 1);
	report_tree_add(t, p, 1, 0, 1.0);
	report_tree_sort(t, 1);
	TU_CAPTURE(buf, len, rc, report_tree_write(t, fp, &u, min_pct));
	ck_assert_int_eq(rc, 0);
	report_tree_free(t);
	return buf;
}

START_TEST(test_tree)
{
	static const char body[] =
	    "  Time ms       %  Function\n"
	    "    12.00  100.0%  <main>\n"
	    "     8.00   66.7%    Object#work\n"
	    "     5.00   41.7%      Foo::Bar#baz\n"
	    "     2.00   16.7%      Object#work\n"
	    "     2.00   16.7%        Foo::Bar#baz\n"
	    "     1.50   12.5%          [GC marking]\n"
	    "     4.00   33.3%    Kernel#sleep\n"
	    "     4.00   33.3%      [GVL blocked]\n";
	struct profile *p = tu_sample_profile();
	char *out = tree_text(p, 1.0);

	ck_assert(strncmp(out, "Call tree (cumulative; nodes under 1% hidden):\n",
	    47) == 0);
	ck_assert_str_eq(strchr(out, '\n') + 1, body);
	free(out);
	out = tree_text(p, 20.0);
	ck_assert_ptr_null(strstr(out, "GC marking"));
	ck_assert_ptr_nonnull(strstr(out, "Foo::Bar#baz"));
	free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_tree_full)
{
	/* A tree that ran out of 32-bit node ids is refused, not printed
	 * short, and nothing exits. */
	struct profile *p = tu_sample_profile();
	struct report_tree *t = report_tree_new();
	struct numfmt_unit u;
	char *buf = NULL;
	size_t len = 0;
	int rc;

	numfmt_unit_init(&u, p, 1);
	ck_assert_int_eq(report_tree_add(t, p, 1, 0, 1.0), 0);
	t->full = 1;
	errno = 0;
	TU_CAPTURE(buf, len, rc, report_tree_write(t, fp, &u, 1.0));
	ck_assert_int_eq(rc, -1);
	ck_assert_int_eq(errno, EFBIG);
	ck_assert_uint_eq(len, 0);
	free(buf);
	report_tree_free(t);
	profile_free(p);
}
END_TEST

START_TEST(test_tree_deep)
{
	/* A 10,000-deep stack once printed 100 MB (indentation growing with
	 * depth on every line); now lines stop indenting at
	 * REPORT_TREE_MAX_INDENT levels and stop at REPORT_TREE_MAX_DEPTH. */
	static const char *const types[] = { "samples", "cpu" };
	static const char *const units[] = { "count", "nanoseconds" };
	size_t depth = 10000, i, lines = 0, len;
	struct profile *p = profile_new();
	uint64_t *locs = xcalloc(depth, sizeof *locs);
	int64_t values[2] = { 1, 1000000 };
	char name[32], want[256], *out, *c;

	profile_set_value_types(p, 2, types, units);
	for (i = 0; i < depth; i++) {
		snprintf(name, sizeof name, "f%zu", i);
		locs[depth - 1 - i] = profile_location(p,
		    profile_function(p, name, name, "x.rb", 1), 1);
	}
	profile_add_sample(p, locs, depth, values, NULL, 0);
	out = tree_text(p, 0.0);
	len = strlen(out);
	for (c = out; *c != '\0'; c++)
		lines += *c == '\n';
	ck_assert_msg(len < 200000, "%zu bytes of tree", len);
	/* Title, heading, REPORT_TREE_MAX_DEPTH nodes, the note. */
	ck_assert_uint_eq(lines, REPORT_TREE_MAX_DEPTH + 3);
	snprintf(want, sizeof want, "%%  %*sf%d\n", 2 * REPORT_TREE_MAX_INDENT -
	    2, "", REPORT_TREE_MAX_INDENT - 1);
	ck_assert_ptr_nonnull(strstr(out, want));
	snprintf(want, sizeof want, "%*s(depth %d) f%d\n",
	    2 * REPORT_TREE_MAX_INDENT, "", REPORT_TREE_MAX_INDENT + 1,
	    REPORT_TREE_MAX_INDENT);
	ck_assert_ptr_nonnull(strstr(out, want));
	ck_assert_ptr_nonnull(strstr(out, "(calls deeper than 1024 levels "
	    "not shown)\n"));
	ck_assert_ptr_null(strstr(out, "f1024\n"));
	free(out);
	free(locs);
	profile_free(p);
}
END_TEST

START_TEST(test_tree_shape)
{
	struct profile *p = tu_sample_profile();
	struct report_tree *t = report_tree_new();
	const struct report_node *n;
	size_t i, gc = 0;

	report_tree_add(t, p, 1, 0, 1.0);
	report_tree_add(t, p, 1, 1, 0.5);
	ck_assert_int_eq(t->nodes[0].value, 12000000);
	ck_assert_int_eq(t->nodes[0].base, 6000000);
	for (i = 1; i < t->nnodes; i++) {
		n = &t->nodes[i];
		ck_assert_int_eq(n->depth, t->nodes[n->parent].depth + 1);
		ck_assert_int_eq(n->base * 2, n->value);
		if (report_tree_kind(n->name) == REPORT_KIND_GC_MARK) {
			gc++;
			ck_assert_str_eq(report_tree_name(t, n),
			    "[GC marking]");
			ck_assert_int_eq(n->self, 1500000);
		}
	}
	ck_assert_uint_eq(gc, 1);
	report_tree_free(t);
	profile_free(p);
}
END_TEST

/* The callers tree of NAME in the sample profile, as the tree report
 * prints it, without its heading. */
static char *
callers_text(const char *name)
{
	struct profile *p = tu_sample_profile();
	struct report_tree *t = report_tree_new();
	struct numfmt_unit u;
	char *buf = NULL, *body;
	size_t len;
	int rc;

	numfmt_unit_init(&u, p, 1);
	ck_assert_int_eq(report_tree_add_callers(t, p, 1, name), 0);
	report_tree_sort(t, 1);
	TU_CAPTURE(buf, len, rc, report_tree_write(t, fp, &u, 0.0));
	ck_assert_int_eq(rc, 0);
	body = strdup(strchr(buf, '\n') + 1);
	free(buf);
	report_tree_free(t);
	profile_free(p);
	return body;
}

START_TEST(test_tree_callers)
{
	/* Percentages are of what has the function: its callers only. */
	static const char baz[] =
	    "  Time ms       %  Function\n"
	    "     7.00  100.0%  Foo::Bar#baz\n"
	    "     7.00  100.0%    Object#work\n"
	    "     5.00   71.4%      <main>\n"
	    "     2.00   28.6%      Object#work\n"
	    "     2.00   28.6%        <main>\n";
	/* A VM state: the frames it happened in, leaf first. */
	static const char gc[] =
	    "  Time ms       %  Function\n"
	    "     1.50  100.0%  [GC marking]\n"
	    "     1.50  100.0%    Foo::Bar#baz\n"
	    "     1.50  100.0%      Object#work\n"
	    "     1.50  100.0%        Object#work\n"
	    "     1.50  100.0%          <main>\n";
	struct profile *p = tu_sample_profile();
	struct report_tree *t = report_tree_new();
	char *out;

	out = callers_text("Foo::Bar#baz");
	ck_assert_str_eq(out, baz);
	free(out);
	out = callers_text("[GC marking]");
	ck_assert_str_eq(out, gc);
	free(out);
	/* Recursion: the leafmost frame starts the path, the rest are
	 * callers; the self time is where the function was the leaf. */
	ck_assert_int_eq(report_tree_add_callers(t, p, 1, "Object#work"), 0);
	ck_assert_int_eq(t->nodes[0].value, 8000000);
	ck_assert_str_eq(report_tree_name(t, &t->nodes[1]), "Object#work");
	ck_assert_int_eq(t->nodes[1].value, 8000000);
	ck_assert_int_eq(t->nodes[1].self, 1000000);
	report_tree_free(t);
	/* No such function: an empty tree. */
	t = report_tree_new();
	ck_assert_int_eq(report_tree_add_callers(t, p, 1, "nothing"), 0);
	ck_assert_uint_eq(t->nnodes, 1);
	ck_assert_int_eq(t->nodes[0].value, 0);
	report_tree_free(t);
	profile_free(p);
}
END_TEST

START_TEST(test_tree_leaves)
{
	struct profile *p = tu_sample_profile();
	struct report_tree *t = report_tree_new(), *u = report_tree_new();
	uint32_t *leaf = calloc(p->nsamples + 1, sizeof *leaf), n;
	int64_t *sum;
	size_t i;

	/* A sample worth nothing has no last node. */
	p->value_pool[p->samples[1].value_off + 1] = 0;
	ck_assert_int_eq(report_tree_add_leaves(t, p, 1, leaf), 0);
	ck_assert_int_eq(report_tree_add(u, p, 1, 0, 1.0), 0);
	/* The same tree as report_tree_add() builds. */
	ck_assert_uint_eq(t->nnodes, u->nnodes);
	for (i = 0; i < t->nnodes; i++) {
		ck_assert_int_eq(t->nodes[i].value, u->nodes[i].value);
		ck_assert_int_eq(t->nodes[i].self, u->nodes[i].self);
	}
	ck_assert_uint_eq(leaf[1], 0);
	/* Sample 0 is <main>;Object#work;Foo::Bar#baz, and its path ends
	 * there; sample 3 (Kernel#sleep, blocked) at the state above it. */
	ck_assert_str_eq(report_tree_name(t, &t->nodes[leaf[0]]), "Foo::Bar#baz");
	n = t->nodes[leaf[0]].parent;
	ck_assert_str_eq(report_tree_name(t, &t->nodes[n]), "Object#work");
	n = t->nodes[n].parent;
	ck_assert_str_eq(report_tree_name(t, &t->nodes[n]), "<main>");
	ck_assert_uint_eq(t->nodes[n].parent, 0);
	ck_assert_str_eq(report_tree_name(t, &t->nodes[leaf[3]]), "[GVL blocked]");
	/* Each sample's value at its last node, added up from the last
	 * node to the first (a parent's id is smaller), is every node's. */
	sum = calloc(t->nnodes, sizeof *sum);
	for (i = 0; i < p->nsamples; i++) {
		if (leaf[i] != 0)
			sum[leaf[i]] += profile_sample_values(p, &p->samples[i])[1];
	}
	for (i = t->nnodes; i-- > 1;) {
		ck_assert_uint_lt(t->nodes[i].parent, i);
		sum[t->nodes[i].parent] += sum[i];
	}
	for (i = 0; i < t->nnodes; i++)
		ck_assert_int_eq(sum[i], t->nodes[i].value);
	free(sum);
	free(leaf);
	report_tree_free(t);
	report_tree_free(u);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_filters);
	tcase_add_test(tc, test_rule_functions);
	tcase_add_test(tc, test_filter_errors_and_description);
	tcase_add_test(tc, test_filter_keeps_comments_true);
	tcase_add_test(tc, test_tree);
	tcase_add_test(tc, test_tree_full);
	tcase_add_test(tc, test_tree_deep);
	tcase_add_test(tc, test_tree_shape);
	tcase_add_test(tc, test_tree_callers);
	tcase_add_test(tc, test_tree_leaves);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(report_suite());
}
