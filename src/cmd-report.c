/*
 * cmd-report.c: "rperf report": read a profile (rperf's or any pprof, or
 * folded stacks) and print the text report, or convert it to another
 * format.  Plain C over the profile model: no Ruby is started.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "output.h"
#include "profile.h"
#include "text.h"

enum {
	REPORT_OPT_FORMAT = 256,
	REPORT_OPT_TOP,
	REPORT_OPT_SORT,
};

static const struct cmd_option report_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write to FILE instead of stdout (format from its extension)", "@file", 'o' },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "text (default), folded or pprof", "text folded pprof", REPORT_OPT_FORMAT },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table of the text report (default 50)", "@number", REPORT_OPT_TOP },
	{ "sort", 0, 0, required_argument, "KEY",
	  "flat (default) or cum: which table comes first", "flat cum", REPORT_OPT_SORT },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* "rperf report [options] [FILE]". */
static int
report_exec(int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_report_entry;
	enum profile_format fmt = PROFILE_FORMAT_NONE;
	const char *output = "-", *input = "rperf.data";
	struct text_opts topts;
	struct cmd_getopt g;
	struct profile *p;
	char err[512];
	long v;
	int c, rc;

	text_opts_init(&topts);
	cmd_getopt_init(&g, e);
	while ((c = cmd_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case REPORT_OPT_FORMAT:
			fmt = profile_format_from_name(optarg);
			if (fmt == PROFILE_FORMAT_NONE)
				cmd_usage_error(e, "unknown format '%s' (expected text, folded or pprof)", optarg);
			break;
		case REPORT_OPT_TOP:
			if (cmd_parse_long(optarg, 1, 1000000, &v) != 0)
				cmd_usage_error(e, "invalid --top '%s' (expected a number from 1)", optarg);
			topts.top = (size_t)v;
			break;
		case REPORT_OPT_SORT:
			if (strcmp(optarg, "flat") == 0)
				topts.sort_cum = 0;
			else if (strcmp(optarg, "cum") == 0)
				topts.sort_cum = 1;
			else
				cmd_usage_error(e, "unknown sort key '%s' (expected flat or cum)", optarg);
			break;
		}
	}
	cmd_getopt_release(&g);
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc)
		cmd_usage_error(e, "too many arguments: '%s'", argv[optind]);
	if (fmt == PROFILE_FORMAT_NONE && strcmp(output, "-") != 0)
		fmt = profile_format_from_path(output);
	if (fmt == PROFILE_FORMAT_NONE)
		fmt = PROFILE_FORMAT_TEXT;

	if (fmt == PROFILE_FORMAT_PPROF && strcmp(output, "-") == 0 && isatty(STDOUT_FILENO))
		cmd_usage_error(e, "refusing to write a binary pprof profile to a terminal");

	p = profile_read(input, err, sizeof err);
	if (p == NULL) {
		fprintf(stderr, "rperf report: %s\n", err);
		return RPERF_EXIT_FAILURE;
	}
	rc = profile_write_file(p, output, fmt, &topts, err, sizeof err);
	profile_free(p);
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
