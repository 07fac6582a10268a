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
#include "error.h"
#include "flamegraph.h"
#include "formats.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "xmalloc.h"

enum {
	CMD_DIFF_OPT_FORMAT = 256,
	CMD_DIFF_OPT_TOP,
	CMD_DIFF_OPT_NORMALIZE,
	CMD_DIFF_OPT_SAMPLE_INDEX,
};

static const struct cmd_option cmd_diff_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write to FILE instead of stdout (.svg: a flame graph)", "@file", 'o', 0 },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "%F (default: text)", "@format", CMD_DIFF_OPT_FORMAT, FORMAT_DIFF },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table (default 30)", "@number", CMD_DIFF_OPT_TOP, 0 },
	{ "normalize", 0, 0, no_argument, NULL,
	  "scale BASE to TARGET's total before comparing", NULL, CMD_DIFF_OPT_NORMALIZE, 0 },
	CMD_SAMPLE_INDEX_OPTION(CMD_DIFF_OPT_SAMPLE_INDEX),
	CMD_FILTER_OPTIONS,
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0, 0 }
};

/* Everything one "rperf diff" run needs. */
struct cmd_diff {
	const char *output;
	const struct format *format;	/* text or svg */
	int normalize;
	size_t top;
	const char *sample_index;	/* --sample-index, or NULL */
	size_t bvi, tvi;		/* its index in base and target */
	struct report_filter filter;
	const char *base_path, *target_path;
	struct profile *base, *target;
	struct diff d;
};

/* Write the text report of the comparison (output_write_fn). */
static int
cmd_diff_write_text(FILE *fp, void *arg)
{
	struct cmd_diff *c = arg;
	struct diff_opts o;

	memset(&o, 0, sizeof o);
	o.top = c->top;
	o.base_name = c->base_path;
	o.target_name = c->target_path;
	o.filters = report_filter_describe(&c->filter);
	return diff_write(&c->d, fp, &o);
}

/* Write the differential flame graph (output_write_fn). */
static int
cmd_diff_write_svg(FILE *fp, void *arg)
{
	struct cmd_diff *c = arg;
	struct flamegraph_opts fo;
	char *title;
	int rc;

	flamegraph_opts_init(&fo);
	title = xasprintf("Differential Flame Graph: %s -> %s", c->base_path,
	    c->target_path);
	fo.title = title;
	fo.base = c->base;
	fo.value_index = c->tvi;
	fo.base_value_index = c->bvi;
	fo.base_scale = c->d.scale;
	if (report_filter_active(&c->filter))
		fo.subtitle = report_filter_describe(&c->filter);
	rc = flamegraph_write(c->target, fp, &fo);
	free(title);
	return rc;
}

/* Parse the command line into C; usage errors exit 2. */
static void
cmd_diff_parse(struct cmd_diff *c, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_diff_entry;
	struct cmd_getopt g;
	int opt;

	cmd_getopt_init(&g, e);
	while ((opt = cmd_getopt(&g, argc, argv)) != -1) {
		if (cmd_filter_option(e, opt, optarg, &c->filter))
			continue;
		switch (opt) {
		case 'o':
			c->output = optarg;
			break;
		case CMD_DIFF_OPT_FORMAT:
			c->format = cmd_parse_format(e, optarg, FORMAT_DIFF);
			break;
		case CMD_DIFF_OPT_TOP:
			c->top = cmd_parse_top(e, optarg);
			break;
		case CMD_DIFF_OPT_NORMALIZE:
			c->normalize = 1;
			break;
		case CMD_DIFF_OPT_SAMPLE_INDEX:
			c->sample_index = optarg;
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
	if (c->format == NULL)
		c->format = format_by_path(c->output, FORMAT_DIFF);
	if (c->format == NULL)
		c->format = &format_text;
}

/* Read and filter the profile at PATH; NULL after printing an error. */
static struct profile *
cmd_diff_read(const struct cmd_diff *c, const char *path)
{
	struct profile *p;
	char err[512];

	p = profile_read(path, err, sizeof err);
	if (p == NULL) {
		error_print("%s", err);
		return NULL;
	}
	report_filter_apply(p, &c->filter);
	return p;
}

/* "rperf diff [options] BASE TARGET". */
static int
cmd_diff_exec(int argc, char **argv)
{
	struct cmd_diff c;
	char err[512];
	int rc = RPERF_EXIT_FAILURE;

	memset(&c, 0, sizeof c);
	c.output = "-";
	report_filter_init(&c.filter);
	cmd_diff_parse(&c, argc, argv);

	c.base = cmd_diff_read(&c, c.base_path);
	if (c.base == NULL)
		goto out;
	c.target = cmd_diff_read(&c, c.target_path);
	if (c.target == NULL)
		goto out;
	c.bvi = c.tvi = (size_t)-1;
	if (c.sample_index != NULL) {
		c.bvi = cmd_sample_index(&cmd_diff_entry, c.base, c.sample_index, c.base_path);
		c.tvi = cmd_sample_index(&cmd_diff_entry, c.target, c.sample_index,
		    c.target_path);
	}
	if (diff_compute(&c.d, c.base, c.bvi, c.target, c.tvi,
	    c.normalize, err, sizeof err) != 0) {
		error_print("%s", err);
		goto out_diff;
	}
	if (output_write_file(c.output, c.format == &format_svg ? cmd_diff_write_svg :
	    cmd_diff_write_text, &c, err, sizeof err) != 0) {
		error_print("%s", err);
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
	.options = cmd_diff_options,
	.operands = "@pprof",
	.exec = cmd_diff_exec,
};
