/*
 * cmd-diff.c: "rperf diff": compare two profiles (any mix of pprof and
 * folded) function by function, or draw a differential flame graph in
 * the target's shape.  Both profiles go through the same filters as
 * "rperf report" before they are compared.  Plain C over the profile
 * model: no Ruby is started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "diff.h"
#include "flamegraph.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "xmalloc.h"

enum {
	DIFF_OPT_FORMAT = 256,
	DIFF_OPT_TOP,
	DIFF_OPT_NORMALIZE,
	DIFF_OPT_FOCUS,
	DIFF_OPT_IGNORE,
	DIFF_OPT_TAGFOCUS,
	DIFF_OPT_TAGIGNORE,
	DIFF_OPT_THREAD,
};

static const struct cmd_option diff_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write to FILE instead of stdout (.svg: a flame graph)", "@file", 'o' },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "text (default) or svg", "text svg", DIFF_OPT_FORMAT },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table (default 30)", "@number", DIFF_OPT_TOP },
	{ "normalize", 0, 0, no_argument, NULL,
	  "scale BASE to TARGET's total before comparing", NULL, DIFF_OPT_NORMALIZE },
	{ "focus", 0, 0, required_argument, "REGEX",
	  "keep only samples with a function matching REGEX", "@text", DIFF_OPT_FOCUS },
	{ "ignore", 0, 0, required_argument, "REGEX",
	  "drop samples with a function matching REGEX", "@text", DIFF_OPT_IGNORE },
	{ "tagfocus", 0, 0, required_argument, "KEY=VALUE",
	  "keep only samples with label KEY=VALUE", "@text", DIFF_OPT_TAGFOCUS },
	{ "tagignore", 0, 0, required_argument, "KEY=VALUE",
	  "drop samples with label KEY=VALUE", "@text", DIFF_OPT_TAGIGNORE },
	{ "thread", 0, 0, required_argument, "THREAD",
	  "keep only samples of the thread with this number or name", "@text",
	  DIFF_OPT_THREAD },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* Everything one "rperf diff" run needs. */
struct diff_cmd {
	const char *output;
	int svg;
	int normalize;
	size_t top;
	struct report_filter filter;
	const char *base_path, *target_path;
	struct profile *base, *target;
	struct diff d;
};

/* Write the text report of the comparison (report_write_fn). */
static int
diff_cmd_write_text(FILE *fp, void *arg)
{
	struct diff_cmd *c = arg;
	struct diff_opts o;

	memset(&o, 0, sizeof o);
	o.top = c->top;
	o.base_name = c->base_path;
	o.target_name = c->target_path;
	o.filters = report_filter_describe(&c->filter);
	return diff_write(&c->d, fp, &o);
}

/* Write the differential flame graph (report_write_fn). */
static int
diff_cmd_write_svg(FILE *fp, void *arg)
{
	struct diff_cmd *c = arg;
	struct flamegraph_opts fo;
	char *title;
	int rc;

	flamegraph_opts_init(&fo);
	title = xasprintf("Differential Flame Graph: %s -> %s", c->base_path,
	    c->target_path);
	fo.title = title;
	fo.base = c->base;
	fo.base_scale = c->d.scale;
	if (report_filter_active(&c->filter))
		fo.subtitle = report_filter_describe(&c->filter);
	rc = flamegraph_write(c->target, fp, &fo);
	free(title);
	return rc;
}

/* Parse the command line into C; usage errors exit 2. */
static void
diff_cmd_parse(struct diff_cmd *c, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_diff_entry;
	static const enum report_rule_kind kinds[] = { REPORT_FOCUS,
	    REPORT_IGNORE, REPORT_TAGFOCUS, REPORT_TAGIGNORE, REPORT_THREAD };
	struct cmd_getopt g;
	char err[512];
	int opt, fmt_set = 0;
	size_t len;
	long v;

	cmd_getopt_init(&g, e);
	while ((opt = cmd_getopt(&g, argc, argv)) != -1) {
		switch (opt) {
		case 'o':
			c->output = optarg;
			break;
		case DIFF_OPT_FORMAT:
			if (strcmp(optarg, "text") == 0)
				c->svg = 0;
			else if (strcmp(optarg, "svg") == 0)
				c->svg = 1;
			else
				cmd_usage_error(e, "unknown format '%s' (expected text or svg)", optarg);
			fmt_set = 1;
			break;
		case DIFF_OPT_TOP:
			if (cmd_parse_long(optarg, 1, 1000000, &v) != 0)
				cmd_usage_error(e, "invalid --top '%s' (expected a number from 1)", optarg);
			c->top = (size_t)v;
			break;
		case DIFF_OPT_NORMALIZE:
			c->normalize = 1;
			break;
		case DIFF_OPT_FOCUS:
		case DIFF_OPT_IGNORE:
		case DIFF_OPT_TAGFOCUS:
		case DIFF_OPT_TAGIGNORE:
		case DIFF_OPT_THREAD:
			if (report_filter_add(&c->filter,
			    kinds[opt - DIFF_OPT_FOCUS], optarg, err,
			    sizeof err) != 0)
				cmd_usage_error(e, "%s", err);
			break;
		}
	}
	cmd_getopt_release(&g);
	if (argc - optind < 2)
		cmd_usage_error(e, "need two profiles: BASE and TARGET");
	if (argc - optind > 2)
		cmd_usage_error(e, "too many arguments: '%s'", argv[optind + 2]);
	c->base_path = argv[optind];
	c->target_path = argv[optind + 1];
	len = strlen(c->output);
	if (!fmt_set && len > 4 && strcmp(c->output + len - 4, ".svg") == 0)
		c->svg = 1;
}

/* Read and filter the profile at PATH; NULL after printing an error. */
static struct profile *
diff_cmd_read(const struct diff_cmd *c, const char *path)
{
	struct profile *p;
	char err[512];

	p = profile_read(path, err, sizeof err);
	if (p == NULL) {
		fprintf(stderr, "rperf diff: %s\n", err);
		return NULL;
	}
	report_filter_apply(p, &c->filter);
	return p;
}

/* "rperf diff [options] BASE TARGET". */
static int
diff_cmd_exec(int argc, char **argv)
{
	struct diff_cmd c;
	char err[512];
	int rc = RPERF_EXIT_FAILURE;

	memset(&c, 0, sizeof c);
	c.output = "-";
	report_filter_init(&c.filter);
	diff_cmd_parse(&c, argc, argv);

	c.base = diff_cmd_read(&c, c.base_path);
	if (c.base == NULL)
		goto out;
	c.target = diff_cmd_read(&c, c.target_path);
	if (c.target == NULL)
		goto out;
	if (diff_compute(&c.d, c.base, (size_t)-1, c.target, (size_t)-1,
	    c.normalize, err, sizeof err) != 0) {
		fprintf(stderr, "rperf diff: %s\n", err);
		goto out_diff;
	}
	if (report_write_file(c.output, c.svg ? diff_cmd_write_svg :
	    diff_cmd_write_text, &c, err, sizeof err) != 0) {
		fprintf(stderr, "rperf diff: %s\n", err);
		goto out_diff;
	}
	rc = RPERF_EXIT_OK;
out_diff:
	diff_release(&c.d);
out:
	profile_free(c.base);
	profile_free(c.target);
	report_filter_release(&c.filter);
	return rc;
}

const struct cmd_entry cmd_diff_entry = {
	.name = "diff",
	.usage = "[options] BASE TARGET",
	.summary = "compare two profiles function by function",
	.options = diff_options,
	.operands = "@pprof",
	.exec = diff_cmd_exec,
};
