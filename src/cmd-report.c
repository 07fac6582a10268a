/*
 * cmd-report.c: "rperf report": read a profile (rperf's or any pprof, or
 * folded stacks), keep the samples the filters select, and print the text
 * report or the call tree, or convert the profile to another format,
 * including an SVG flame graph; on a terminal, browse it (tui.c).  Plain
 * C over the profile model: no Ruby is started.  The options and what
 * they mean live here; the filters, tree and writers they drive live in
 * report.c, text.c and flamegraph.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "formats.h"
#include "numfmt.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "text.h"
#include "tui.h"
#include "timeline.h"
#include "xmalloc.h"

/* The default cut of --tree, in percent of the total. */
#define CMD_REPORT_TREE_MIN_PCT 1.0

enum {
	CMD_REPORT_OPT_FORMAT = 256,
	CMD_REPORT_OPT_TOP,
	CMD_REPORT_OPT_SORT,
	CMD_REPORT_OPT_MIN_PERCENT,
	CMD_REPORT_OPT_TREE,
	CMD_REPORT_OPT_SAMPLE_INDEX,
	CMD_REPORT_OPT_LIST,
	CMD_REPORT_OPT_TIMELINE,
	CMD_REPORT_OPT_STDIO,
	CMD_REPORT_OPT_TUI,
	CMD_REPORT_OPT_FROM,
	CMD_REPORT_OPT_TO,
	CMD_REPORT_OPT_SOURCE_DIR,
};

static const struct cmd_option cmd_report_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write to FILE instead of stdout (format from its extension)", "@file", 'o', 0 },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "%F (default: text)", "@format", CMD_REPORT_OPT_FORMAT, FORMAT_CONVERT },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table of the text report (default 50)", "@number",
	  CMD_REPORT_OPT_TOP, 0 },
	{ "sort", 0, 0, required_argument, "KEY",
	  "flat (default) or cum: which table comes first", "flat cum",
	  CMD_REPORT_OPT_SORT, 0 },
	{ "min-percent", 0, 0, required_argument, "P",
	  "leave out rows and tree nodes under P percent of the total", "@number",
	  CMD_REPORT_OPT_MIN_PERCENT, 0 },
	CMD_SAMPLE_INDEX_OPTION(CMD_REPORT_OPT_SAMPLE_INDEX),
	CMD_FILTER_OPTIONS,
	{ "tree", 0, 0, no_argument, NULL,
	  "print the call tree, root first, instead of the tables", NULL,
	  CMD_REPORT_OPT_TREE, 0 },
	{ "from", 0, 0, required_argument, "SECONDS",
	  "keep only samples taken SECONDS after the start or later (--timeline profiles)",
	  "@number", CMD_REPORT_OPT_FROM, 0 },
	{ "to", 0, 0, required_argument, "SECONDS",
	  "keep only samples taken up to SECONDS after the start (--timeline profiles)",
	  "@number", CMD_REPORT_OPT_TO, 0 },
	{ "timeline", 0, 0, no_argument, NULL,
	  "the SVG is a timeline of the threads, not the flame graph",
	  NULL, CMD_REPORT_OPT_TIMELINE, 0 },
	{ "list", 0, 0, no_argument, NULL,
	  "FILE is a directory: list its profiles (slow requests, jobs), slowest first",
	  NULL, CMD_REPORT_OPT_LIST, 0 },
	{ "stdio", 0, 0, no_argument, NULL,
	  "print the text report even on a terminal", NULL, CMD_REPORT_OPT_STDIO, 0 },
	{ "tui", 0, 0, no_argument, NULL,
	  "browse the report in the terminal (the default when stdout is one)",
	  NULL, CMD_REPORT_OPT_TUI, 0 },
	{ "source-dir", 0, 0, required_argument, "DIR",
	  "the browser's source view looks for files named relatively in DIR first",
	  "@dir", CMD_REPORT_OPT_SOURCE_DIR, 0 },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0, 0 }
};

/* Everything one "rperf report" run needs. */
struct cmd_report {
	const char *input, *output;
	const struct format *format;
	struct text_opts topts;
	struct report_filter filter;
	double min_pct;
	int has_min_pct;
	int tree;
	int list;		/* --list: INPUT is a directory */
	int timeline;		/* --timeline: the SVG is the timeline */
	int stdio, tui;		/* --stdio, --tui as given */
	int browse;		/* open the browser instead of printing */
	int64_t from_ns, to_ns;	/* --from, --to (-1: none) */
	const char *sample_index;	/* --sample-index, or NULL */
	const char *source_dir;		/* --source-dir, or NULL */
	struct profile *p;
	int64_t total_read;	/* the total before the filters */
};

/* Keep P's samples of the window [FROM_NS, TO_NS] (TO_NS < 0: to the
 * end): its duration becomes the window's, its samples are recounted as
 * a filter's are, and the figures of the whole run that the window
 * cannot split (timer triggers, the process's CPU and what no sample
 * billed) go. */
static void
report_cut_window(struct profile *p, int64_t from_ns, int64_t to_ns)
{
	int64_t end = p->duration_nanos;

	timeline_cut(p, from_ns, to_ns);
	if (to_ns >= 0 && to_ns < end)
		end = to_ns;
	if (p->duration_nanos > 0)
		p->duration_nanos = end > from_ns ? end - from_ns : 0;
	report_fix_comments(p);
	profile_drop_meta(p, PROFILE_COMMENT_PROCESS_CPU);
	profile_drop_meta(p, PROFILE_COMMENT_UNATTRIBUTED);
}

/* Print the "Filters:" line when filters are in force. */
static void
cmd_report_print_filters(const struct cmd_report *r, FILE *fp)
{
	if (!report_filter_active(&r->filter))
		return;
	struct numfmt_unit u;
	size_t vi = profile_value_index(r->p, r->topts.value_index);
	int64_t kept = profile_total(r->p, vi);
	char a[48], b[48], pct[32];

	numfmt_unit_init(&u, r->p, vi);
	fprintf(fp, "%-10s%s (kept %s of %s%s%s, %s)\n", "Filters:",
	    report_filter_describe(&r->filter),
	    numfmt_value(a, sizeof a, &u, kept),
	    numfmt_value(b, sizeof b, &u, r->total_read),
	    *u.suffix ? " " : "", u.suffix,
	    numfmt_pct(pct, sizeof pct, (double)kept, (double)r->total_read));
}

/* Write the text report (output_write_fn). */
static int
cmd_report_write_text(FILE *fp, void *arg)
{
	struct cmd_report *r = arg;
	struct format_opts fo = { .text = &r->topts };

	cmd_report_print_filters(r, fp);
	if (r->p->nsamples == 0 && report_filter_active(&r->filter)) {
		fprintf(fp, "no samples match the filters\n");
		return fflush(fp);
	}
	return format_text.write(r->p, fp, &fo);
}

/* Write the call tree (output_write_fn). */
static int
cmd_report_write_tree(FILE *fp, void *arg)
{
	struct cmd_report *r = arg;
	struct report_tree *t = report_tree_new();
	struct numfmt_unit u;
	size_t vi = profile_value_index(r->p, r->topts.value_index);
	int rc;

	numfmt_unit_init(&u, r->p, vi);
	report_tree_add(t, r->p, vi, 0, 1.0);
	report_tree_sort(t, 1);
	cmd_report_print_filters(r, fp);
	rc = report_tree_write(t, fp, &u, r->has_min_pct ? r->min_pct :
	    CMD_REPORT_TREE_MIN_PCT);
	report_tree_free(t);
	return rc;
}

/* Whether R's profile can be drawn as a timeline; if not, say why. */
static int
cmd_report_check_timeline(const struct cmd_report *r)
{
	size_t vi = profile_value_index(r->p, r->topts.value_index);
	const char *name = strcmp(r->input, "-") == 0 ? "standard input" : r->input;

	if (!timeline_has_times(r->p)) {
		error_print("'%s' has no timestamps to draw a timeline from: record "
		    "it with --timeline", name);
		return -1;
	}
	if (strcmp(profile_str(r->p, r->p->value_types[vi].unit), "nanoseconds") != 0) {
		error_print("'%s': --timeline draws time, and %s is not a time "
		    "(choose one with --sample-index)", name,
		    profile_str(r->p, r->p->value_types[vi].type));
		return -1;
	}
	return 0;
}

/*
 * Whether to browse: as perf does, when stdout is a terminal and nothing
 * chose an output (-o, --format, --tree, --timeline, --list) or --stdio.  A terminal
 * that cannot draw (TERM unset or dumb) gets the text, and so does one
 * whose keys cannot be read: stdin not a terminal, or the profile itself
 * (FILE "-"), where the browser would see the end of its input at once.
 * --tui insists, and is a usage error where the browser cannot be.
 */
static void
cmd_report_pick_browser(struct cmd_report *r)
{
	const struct cmd_entry *e = &cmd_report_entry;
	const char *term = getenv("TERM");
	int chosen = strcmp(r->output, "-") != 0 || r->tree || r->list ||
	    r->timeline || (r->format != NULL && r->format != &format_text);

	/* --source-dir serves the browser's source view only: with an
	 * output that rules the browser out it would be silently void. */
	if (r->source_dir != NULL && (chosen || r->stdio))
		cmd_usage_error(e, "--source-dir is for the browser; it does not "
		    "apply with -o, --format, --tree, --timeline, --list or --stdio");
	if (r->tui) {
		if (chosen)
			cmd_usage_error(e, "--tui cannot be combined with -o, "
			    "--format, --tree, --timeline or --list");
		if (!isatty(STDOUT_FILENO))
			cmd_usage_error(e, "--tui needs a terminal on standard output");
		r->browse = 1;
		return;
	}
	r->browse = !r->stdio && !chosen && isatty(STDOUT_FILENO) &&
	    isatty(STDIN_FILENO) && (r->input == NULL ||
	    strcmp(r->input, "-") != 0) &&
	    term != NULL && *term != '\0' && strcmp(term, "dumb") != 0;
}

/* Parse the command line into R; usage errors exit 2. */
static void
cmd_report_parse(struct cmd_report *r, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_report_entry;
	struct cmd_getopt g;
	char *end;
	int c;

	cmd_getopt_init(&g, e);
	while ((c = cmd_getopt(&g, argc, argv)) != -1) {
		if (cmd_filter_option(e, c, optarg, &r->filter))
			continue;
		switch (c) {
		case 'o':
			r->output = optarg;
			break;
		case CMD_REPORT_OPT_FORMAT:
			r->format = cmd_parse_format(e, optarg, FORMAT_CONVERT);
			break;
		case CMD_REPORT_OPT_TOP:
			r->topts.top = cmd_parse_top(e, optarg);
			break;
		case CMD_REPORT_OPT_SORT:
			if (strcmp(optarg, "flat") == 0)
				r->topts.sort_cum = 0;
			else if (strcmp(optarg, "cum") == 0)
				r->topts.sort_cum = 1;
			else
				cmd_usage_error(e, "unknown sort key '%s' (expected flat or cum)", optarg);
			break;
		case CMD_REPORT_OPT_MIN_PERCENT:
			r->min_pct = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' ||
			    !(r->min_pct >= 0 && r->min_pct <= 100))
				cmd_usage_error(e, "invalid --min-percent '%s' (expected a number from 0 to 100)", optarg);
			r->has_min_pct = 1;
			break;
		case CMD_REPORT_OPT_TREE:
			r->tree = 1;
			break;
		case CMD_REPORT_OPT_LIST:
			r->list = 1;
			break;
		case CMD_REPORT_OPT_FROM:
		case CMD_REPORT_OPT_TO: {
			double secs = strtod(optarg, &end);

			if (*optarg == '\0' || *end != '\0' || !(secs >= 0 && secs < 1e9))
				cmd_usage_error(e, "invalid --%s '%s' (expected seconds from the start, 0 or more)",
				    c == CMD_REPORT_OPT_FROM ? "from" : "to", optarg);
			if (c == CMD_REPORT_OPT_FROM)
				r->from_ns = (int64_t)(secs * 1e9);
			else
				r->to_ns = (int64_t)(secs * 1e9);
			break;
		}
		case CMD_REPORT_OPT_TIMELINE:
			r->timeline = 1;
			break;
		case CMD_REPORT_OPT_SAMPLE_INDEX:
			r->sample_index = optarg;
			break;
		case CMD_REPORT_OPT_STDIO:
			r->stdio = 1;
			break;
		case CMD_REPORT_OPT_TUI:
			r->tui = 1;
			break;
		case CMD_REPORT_OPT_SOURCE_DIR:
			r->source_dir = optarg;
			break;
		}
	}
	cmd_getopt_release(&g);
	if (optind < argc)
		r->input = argv[optind++];
	if (r->list && r->input == NULL)
		cmd_usage_error(e, "--list needs a directory");
	if (optind < argc)
		cmd_usage_error(e, "too many arguments: '%s'", argv[optind]);
	if (r->stdio && r->tui)
		cmd_usage_error(e, "--stdio and --tui cannot be combined");
	cmd_report_pick_browser(r);
	if (r->from_ns >= 0 && r->to_ns >= 0 && r->to_ns < r->from_ns)
		cmd_usage_error(e, "--to comes before --from");
	if (r->list) {
		if (r->format != NULL && r->format != &format_text)
			cmd_usage_error(e, "--list writes text, not %s", r->format->name);
		if (r->tree)
			cmd_usage_error(e, "--list and --tree cannot be combined");
		return;
	}
	if (r->format == NULL && strcmp(r->output, "-") != 0)
		r->format = format_by_path(r->output, FORMAT_CONVERT);
	if (r->format == NULL)
		r->format = r->timeline ? &format_svg : &format_text;
	if (r->timeline && r->format != &format_svg)
		cmd_usage_error(e, "--timeline draws an SVG, not %s%s", r->format->name,
		    r->format == &format_speedscope ? " (a speedscope file of a "
		    "profile with timestamps is a timeline already)" : "");
	if (r->tree && !(r->format->flags & FORMAT_TREE))
		cmd_usage_error(e, "--tree writes text, not %s", r->format->name);
	if ((r->format->flags & FORMAT_BINARY) && strcmp(r->output, "-") == 0 &&
	    isatty(STDOUT_FILENO))
		cmd_usage_error(e, "refusing to write a binary %s profile to a terminal",
		    r->format->name);
}

/* "rperf report [options] [FILE]". */
static int
cmd_report_exec(int argc, char **argv)
{
	struct cmd_report r;
	struct format_opts fo;
	int64_t *totals = NULL;	/* per sample type, before the filters */
	char err[512];
	size_t i;
	int rc;

	memset(&r, 0, sizeof r);
	r.output = "-";
	r.from_ns = r.to_ns = -1;
	text_opts_init(&r.topts);
	report_filter_init(&r.filter);
	cmd_report_parse(&r, argc, argv);
	if (r.has_min_pct)
		r.topts.min_pct = r.min_pct;
	if (r.list) {
		struct cmd_list_opts lo = { r.input, r.output, &r.filter, r.sample_index,
		    r.topts.top };

		rc = cmd_report_list(&lo);
		report_filter_release(&r.filter);
		return rc;
	}
	if (r.input == NULL)
		r.input = "rperf.data";

	r.p = profile_read(r.input, err, sizeof err);
	if (r.p == NULL) {
		error_print("%s", err);
		report_filter_release(&r.filter);
		return RPERF_EXIT_FAILURE;
	}
	if (r.from_ns >= 0 || r.to_ns >= 0) {
		if (!timeline_has_times(r.p)) {
			error_print("'%s' has no sample times for --from/--to "
			    "(record it with --timeline)", r.input);
			profile_free(r.p);
			report_filter_release(&r.filter);
			return RPERF_EXIT_FAILURE;
		}
		report_cut_window(r.p, r.from_ns > 0 ? r.from_ns : 0, r.to_ns);
		if (r.to_ns >= 0)
			profile_add_meta(r.p, PROFILE_COMMENT_WINDOW, "%.3f s to %.3f s",
			    (double)(r.from_ns > 0 ? r.from_ns : 0) / 1e9, (double)r.to_ns / 1e9);
		else
			profile_add_meta(r.p, PROFILE_COMMENT_WINDOW, "%.3f s to the end",
			    (double)r.from_ns / 1e9);
	}
	if (r.sample_index != NULL)
		r.topts.value_index = cmd_sample_index(&cmd_report_entry, r.p,
		    r.sample_index, r.input);
	if (r.timeline && cmd_report_check_timeline(&r) != 0) {
		profile_free(r.p);
		report_filter_release(&r.filter);
		return RPERF_EXIT_FAILURE;
	}
	r.total_read = profile_total(r.p, profile_value_index(r.p,
	    r.topts.value_index));
	if (r.browse) {
		/* The browser's v shows the other sample types. */
		totals = xcalloc(r.p->nvalue_types + 1, sizeof *totals);
		for (i = 0; i < r.p->nvalue_types; i++)
			totals[i] = profile_total(r.p, i);
	}
	report_filter_apply(r.p, &r.filter);

	if (r.browse) {
		struct tui_opts to = { r.input, r.topts.value_index,
		    report_filter_describe(&r.filter), r.total_read,
		    totals, r.topts.sort_cum, r.source_dir };

		rc = tui_run(r.p, &to, err, sizeof err);
		free(totals);
		if (rc >= 0 || r.tui) {
			if (rc < 0)
				error_print("%s", err);
			profile_free(r.p);
			report_filter_release(&r.filter);
			return rc < 0 ? RPERF_EXIT_FAILURE : rc;
		}
		/* A terminal the browser cannot draw on gets the text. */
	}
	if (r.format == &format_text) {
		rc = output_write_file(r.output, r.tree ? cmd_report_write_tree :
		    cmd_report_write_text, &r, err, sizeof err);
	} else {
		/* A converted profile says how it was cut down. */
		if ((r.format->flags & FORMAT_PROFILE) &&
		    report_filter_active(&r.filter)) {
			profile_add_meta(r.p, PROFILE_COMMENT_FILTERS, "%s",
			    report_filter_describe(&r.filter));
		}
		memset(&fo, 0, sizeof fo);
		fo.text = &r.topts;
		fo.source = r.input;
		fo.timeline = r.timeline;
		if (report_filter_active(&r.filter))
			fo.subtitle = report_filter_describe(&r.filter);
		rc = profile_write_file(r.p, r.output, r.format, &fo, err, sizeof err);
	}
	profile_free(r.p);
	report_filter_release(&r.filter);
	if (rc != 0) {
		error_print("%s", err);
		return RPERF_EXIT_FAILURE;
	}
	return RPERF_EXIT_OK;
}

const struct cmd_entry cmd_report_entry = {
	.name = "report",
	.usage = "[options] [FILE]",
	.summary = "read a profile and print its report, or convert it",
	.options = cmd_report_options,
	.operands = "@pprof",
	.exec = cmd_report_exec,
};
