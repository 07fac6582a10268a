/*
 * cmd-report.c: "rperf report": read a profile (rperf's or any pprof, or
 * folded stacks), keep the samples the filters select, and print the text
 * report or the call tree, or convert the profile to another format,
 * including an SVG flame graph.  Plain C over the profile model: no Ruby
 * is started.  The options and what they mean live here; the filters,
 * tree and writers they drive live in report.c, text.c and flamegraph.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "flamegraph.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "secret.h"
#include "text.h"
#include "xmalloc.h"

/* The default cut of --tree, in percent of the total. */
#define REPORT_TREE_MIN_PCT 1.0

enum {
	REPORT_OPT_FORMAT = 256,
	REPORT_OPT_TOP,
	REPORT_OPT_SORT,
	REPORT_OPT_MIN_PERCENT,
	REPORT_OPT_FOCUS,
	REPORT_OPT_IGNORE,
	REPORT_OPT_TAGFOCUS,
	REPORT_OPT_TAGIGNORE,
	REPORT_OPT_THREAD,
	REPORT_OPT_TREE,
};

static const struct cmd_option report_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write to FILE instead of stdout (format from its extension)", "@file", 'o' },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "text (default), folded, pprof or svg", "text folded pprof svg", REPORT_OPT_FORMAT },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table of the text report (default 50)", "@number", REPORT_OPT_TOP },
	{ "sort", 0, 0, required_argument, "KEY",
	  "flat (default) or cum: which table comes first", "flat cum", REPORT_OPT_SORT },
	{ "min-percent", 0, 0, required_argument, "P",
	  "leave out rows and tree nodes under P percent of the total", "@number",
	  REPORT_OPT_MIN_PERCENT },
	{ "focus", 0, 0, required_argument, "REGEX",
	  "keep only samples with a function matching REGEX", "@text", REPORT_OPT_FOCUS },
	{ "ignore", 0, 0, required_argument, "REGEX",
	  "drop samples with a function matching REGEX", "@text", REPORT_OPT_IGNORE },
	{ "tagfocus", 0, 0, required_argument, "KEY=VALUE",
	  "keep only samples with label KEY=VALUE", "@text", REPORT_OPT_TAGFOCUS },
	{ "tagignore", 0, 0, required_argument, "KEY=VALUE",
	  "drop samples with label KEY=VALUE", "@text", REPORT_OPT_TAGIGNORE },
	{ "thread", 0, 0, required_argument, "THREAD",
	  "keep only samples of the thread with this number or name", "@text",
	  REPORT_OPT_THREAD },
	{ "tree", 0, 0, no_argument, NULL,
	  "print the call tree, root first, instead of the tables", NULL, REPORT_OPT_TREE },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* What one "rperf report" run writes. */
enum report_output {
	REPORT_OUT_NONE,
	REPORT_OUT_TEXT,
	REPORT_OUT_FOLDED,
	REPORT_OUT_PPROF,
	REPORT_OUT_SVG,
};

/* Everything one "rperf report" run needs. */
struct report {
	const char *input, *output;
	enum report_output out;
	struct text_opts topts;
	struct report_filter filter;
	double min_pct;
	int has_min_pct;
	int tree;
	struct profile *p;
	int64_t total_read;	/* the total before the filters */
};

/* The output kind named NAME, or REPORT_OUT_NONE. */
static enum report_output
report_output_from_name(const char *name)
{
	if (strcmp(name, "svg") == 0)
		return REPORT_OUT_SVG;
	switch (profile_format_from_name(name)) {
	case PROFILE_FORMAT_TEXT:
		return REPORT_OUT_TEXT;
	case PROFILE_FORMAT_FOLDED:
		return REPORT_OUT_FOLDED;
	case PROFILE_FORMAT_PPROF:
		return REPORT_OUT_PPROF;
	default:
		return REPORT_OUT_NONE;
	}
}

/* The output kind PATH's extension names, or REPORT_OUT_NONE. */
static enum report_output
report_output_from_path(const char *path)
{
	size_t len = strlen(path);

	if (len > 4 && strcmp(path + len - 4, ".svg") == 0 &&
	    path[len - 5] != '/')
		return REPORT_OUT_SVG;
	switch (profile_format_from_path(path)) {
	case PROFILE_FORMAT_TEXT:
		return REPORT_OUT_TEXT;
	case PROFILE_FORMAT_FOLDED:
		return REPORT_OUT_FOLDED;
	case PROFILE_FORMAT_PPROF:
		return REPORT_OUT_PPROF;
	default:
		return REPORT_OUT_NONE;
	}
}

/* Print the "Filters:" line when filters are in force. */
static void
report_print_filters(const struct report *r, FILE *fp)
{
	if (!report_filter_active(&r->filter))
		return;
	struct report_unit u;
	size_t vi = report_value_index(r->p, r->topts.value_index);
	int64_t kept = profile_total(r->p, vi);
	char a[48], b[48], pct[32];

	report_unit_init(&u, r->p, vi);
	fprintf(fp, "%-10s%s (kept %s of %s%s%s, %s)\n", "Filters:",
	    report_filter_describe(&r->filter),
	    report_fmt_value(a, sizeof a, &u, kept),
	    report_fmt_value(b, sizeof b, &u, r->total_read),
	    *u.suffix ? " " : "", u.suffix,
	    report_fmt_pct(pct, sizeof pct, kept, r->total_read));
}

/* Write the text report (report_write_fn). */
static int
report_write_text(FILE *fp, void *arg)
{
	struct report *r = arg;

	report_print_filters(r, fp);
	if (r->p->nsamples == 0 && report_filter_active(&r->filter)) {
		fprintf(fp, "no samples match the filters\n");
		return fflush(fp);
	}
	return text_write(r->p, fp, &r->topts);
}

/* Write the call tree (report_write_fn). */
static int
report_write_tree(FILE *fp, void *arg)
{
	struct report *r = arg;
	struct report_tree *t = report_tree_new();
	struct report_unit u;
	size_t vi = report_value_index(r->p, r->topts.value_index);
	int rc;

	report_unit_init(&u, r->p, vi);
	report_tree_add(t, r->p, vi, 0, 1.0);
	report_tree_sort(t, 1);
	report_print_filters(r, fp);
	rc = report_tree_write(t, fp, &u, r->has_min_pct ? r->min_pct :
	    REPORT_TREE_MIN_PCT);
	report_tree_free(t);
	return rc;
}

/* Write the SVG flame graph (report_write_fn). */
static int
report_write_svg(FILE *fp, void *arg)
{
	struct report *r = arg;
	struct flamegraph_opts fo;
	const char *command = profile_comment_value(r->p, "command");
	char *title, *clean = command ? secret_scrub_command(command) : NULL;
	int rc;

	flamegraph_opts_init(&fo);
	title = xasprintf("Flame Graph: %s", clean ? clean :
	    strcmp(r->input, "-") == 0 ? "standard input" : r->input);
	free(clean);
	fo.title = title;
	fo.value_index = r->topts.value_index;
	if (report_filter_active(&r->filter))
		fo.subtitle = report_filter_describe(&r->filter);
	rc = flamegraph_write(r->p, fp, &fo);
	free(title);
	return rc;
}

/* Parse the command line into R; usage errors exit 2. */
static void
report_parse(struct report *r, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_report_entry;
	static const enum report_rule_kind kinds[] = { REPORT_FOCUS,
	    REPORT_IGNORE, REPORT_TAGFOCUS, REPORT_TAGIGNORE, REPORT_THREAD };
	struct cmd_getopt g;
	char err[512], *end;
	long v;
	int c;

	cmd_getopt_init(&g, e);
	while ((c = cmd_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			r->output = optarg;
			break;
		case REPORT_OPT_FORMAT:
			r->out = report_output_from_name(optarg);
			if (r->out == REPORT_OUT_NONE)
				cmd_usage_error(e, "unknown format '%s' (expected text, folded, pprof or svg)", optarg);
			break;
		case REPORT_OPT_TOP:
			if (cmd_parse_long(optarg, 1, 1000000, &v) != 0)
				cmd_usage_error(e, "invalid --top '%s' (expected a number from 1)", optarg);
			r->topts.top = (size_t)v;
			break;
		case REPORT_OPT_SORT:
			if (strcmp(optarg, "flat") == 0)
				r->topts.sort_cum = 0;
			else if (strcmp(optarg, "cum") == 0)
				r->topts.sort_cum = 1;
			else
				cmd_usage_error(e, "unknown sort key '%s' (expected flat or cum)", optarg);
			break;
		case REPORT_OPT_MIN_PERCENT:
			r->min_pct = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' ||
			    !(r->min_pct >= 0 && r->min_pct <= 100))
				cmd_usage_error(e, "invalid --min-percent '%s' (expected a number from 0 to 100)", optarg);
			r->has_min_pct = 1;
			break;
		case REPORT_OPT_FOCUS:
		case REPORT_OPT_IGNORE:
		case REPORT_OPT_TAGFOCUS:
		case REPORT_OPT_TAGIGNORE:
		case REPORT_OPT_THREAD:
			if (report_filter_add(&r->filter,
			    kinds[c - REPORT_OPT_FOCUS], optarg, err,
			    sizeof err) != 0)
				cmd_usage_error(e, "%s", err);
			break;
		case REPORT_OPT_TREE:
			r->tree = 1;
			break;
		}
	}
	cmd_getopt_release(&g);
	if (optind < argc)
		r->input = argv[optind++];
	if (optind < argc)
		cmd_usage_error(e, "too many arguments: '%s'", argv[optind]);
	if (r->out == REPORT_OUT_NONE && strcmp(r->output, "-") != 0)
		r->out = report_output_from_path(r->output);
	if (r->out == REPORT_OUT_NONE)
		r->out = REPORT_OUT_TEXT;
	if (r->tree && r->out != REPORT_OUT_TEXT)
		cmd_usage_error(e, "--tree writes text, not %s",
		    r->out == REPORT_OUT_SVG ? "svg" :
		    r->out == REPORT_OUT_FOLDED ? "folded" : "pprof");
	if (r->out == REPORT_OUT_PPROF && strcmp(r->output, "-") == 0 &&
	    isatty(STDOUT_FILENO))
		cmd_usage_error(e, "refusing to write a binary pprof profile to a terminal");
}

/* "rperf report [options] [FILE]". */
static int
report_exec(int argc, char **argv)
{
	struct report r;
	char err[512];
	char *note;
	int rc;

	memset(&r, 0, sizeof r);
	r.input = "rperf.data";
	r.output = "-";
	text_opts_init(&r.topts);
	report_filter_init(&r.filter);
	report_parse(&r, argc, argv);
	if (r.has_min_pct)
		r.topts.min_pct = r.min_pct;

	r.p = profile_read(r.input, err, sizeof err);
	if (r.p == NULL) {
		fprintf(stderr, "rperf report: %s\n", err);
		report_filter_release(&r.filter);
		return RPERF_EXIT_FAILURE;
	}
	r.total_read = profile_total(r.p, report_value_index(r.p,
	    r.topts.value_index));
	report_filter_apply(r.p, &r.filter);

	switch (r.out) {
	case REPORT_OUT_FOLDED:
	case REPORT_OUT_PPROF:
		/* A converted profile says how it was cut down. */
		if (report_filter_active(&r.filter)) {
			note = xasprintf("filters: %s",
			    report_filter_describe(&r.filter));
			profile_add_comment(r.p, note);
			free(note);
		}
		rc = profile_write_file(r.p, r.output,
		    r.out == REPORT_OUT_PPROF ? PROFILE_FORMAT_PPROF :
		    PROFILE_FORMAT_FOLDED, &r.topts, err, sizeof err);
		break;
	case REPORT_OUT_SVG:
		rc = report_write_file(r.output, report_write_svg, &r, err,
		    sizeof err);
		break;
	default:
		rc = report_write_file(r.output, r.tree ? report_write_tree :
		    report_write_text, &r, err, sizeof err);
		break;
	}
	profile_free(r.p);
	report_filter_release(&r.filter);
	if (rc != 0) {
		fprintf(stderr, "rperf report: %s\n", err);
		return RPERF_EXIT_FAILURE;
	}
	return RPERF_EXIT_OK;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.usage = "[options] [FILE]",
	.summary = "read a profile and print its report, or convert it",
	.options = report_options,
	.operands = "@pprof",
	.exec = report_exec,
};
