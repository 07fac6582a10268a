/*
 * cmd-record.c: "rperf record": run a Ruby script under the sampler and
 * save its profile when it ends.
 *
 * Options end as script.c describes; the script and its arguments go to
 * the embedded ruby untouched.  The exit status is the script's; a profile that
 * cannot be saved turns a successful run into status 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cmd.h"
#include "output.h"
#include "profile.h"
#include "sampler.h"
#include "script.h"
#include "text.h"
#include "vm.h"
#include "xmalloc.h"

enum {
	RECORD_OPT_FORMAT = 256,
	RECORD_OPT_LINES,
	RECORD_OPT_NO_AGGREGATE,
	RECORD_OPT_DEFER,
};

static const struct cmd_option record_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write the profile to FILE ('-' for stdout; default rperf.data)", "@file", 'o' },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "pprof, folded or text (default: from FILE's extension, else pprof)",
	  "pprof folded text", RECORD_OPT_FORMAT },
	{ "print", 'p', 0, no_argument, NULL,
	  "print the text report to stdout instead of saving a file", NULL, 'p' },
	SCRIPT_SAMPLER_OPTIONS("cpu"),
	{ "lines", 0, 0, no_argument, NULL,
	  "record the line number of each frame", NULL, RECORD_OPT_LINES },
	{ "no-aggregate", 0, 0, no_argument, NULL,
	  "keep every sample with its timestamp instead of merging stacks",
	  NULL, RECORD_OPT_NO_AGGREGATE },
	{ "defer", 0, 0, no_argument, NULL,
	  "sample only inside Rperf.profile blocks", NULL, RECORD_OPT_DEFER },
	{ "quiet", 'q', 0, no_argument, NULL,
	  "do not print where the profile went", NULL, 'q' },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* Everything one "rperf record" run needs, in one place. */
struct record {
	struct sampler_config cfg;
	const char *output;
	enum profile_format format;
	int print;
	int quiet;
	struct script_argv script;
	pid_t pid;		/* the process that records (not a fork) */
};

/* VM start hook: install the sampler before anything of the script loads. */
static int
record_vm_start(void *arg)
{
	struct record *r = arg;
	char err[256];

	if (sampler_start(&r->cfg, err, sizeof err) != 0) {
		fprintf(stderr, "rperf record: %s\n", err);
		return -1;
	}
	script_add_comments(&r->script);
	return 0;
}

/* VM finish hook: stop sampling and save the profile. */
static int
record_vm_finish(void *arg, int ran)
{
	struct record *r = arg;
	struct sampler_stats stats;
	struct profile *p;
	struct text_opts topts;
	char err[512];
	int rc = 0;

	/* In a forked child this only drops the parent's state: NULL. */
	p = sampler_stop(&stats);
	if (p == NULL || !ran || getpid() != r->pid) {
		profile_free(p);
		return 0;
	}
	text_opts_init(&topts);
	if (r->print) {
		if (profile_write_file(p, "-", PROFILE_FORMAT_TEXT, &topts, err, sizeof err) != 0) {
			fprintf(stderr, "rperf record: %s\n", err);
			rc = -1;
		}
	} else if (profile_write_file(p, r->output, r->format, &topts, err, sizeof err) != 0) {
		fprintf(stderr, "rperf record: %s\n", err);
		rc = -1;
	} else if (!r->quiet && strcmp(r->output, "-") != 0) {
		fprintf(stderr, "rperf: wrote '%s' (%s, %llu samples, %.3f s)\n",
		    r->output, profile_format_name(r->format),
		    (unsigned long long)stats.samples, stats.duration_ns / 1e9);
	}
	profile_free(p);
	return rc;
}

/* Parse rperf's own options; leave optind at the first word for ruby. */
static void
record_parse_options(struct record *r, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_record_entry;
	struct cmd_getopt g;
	int c;

	cmd_getopt_init(&g, e);
	while ((c = script_getopt(&g, argc, argv)) != -1) {
		if (script_sampler_option(e, c, optarg, &r->cfg))
			continue;
		switch (c) {
		case 'o':
			r->output = optarg;
			break;
		case RECORD_OPT_FORMAT:
			r->format = profile_format_from_name(optarg);
			if (r->format == PROFILE_FORMAT_NONE)
				cmd_usage_error(e, "unknown format '%s' (expected pprof, folded or text)", optarg);
			break;
		case 'p':
			r->print = 1;
			break;
		case RECORD_OPT_LINES:
			r->cfg.lines = 1;
			break;
		case RECORD_OPT_NO_AGGREGATE:
			r->cfg.aggregate = 0;
			break;
		case RECORD_OPT_DEFER:
			r->cfg.defer = 1;
			break;
		case 'q':
			r->quiet = 1;
			break;
		}
	}
	cmd_getopt_release(&g);
}

/* "rperf record": run the script, save the profile, pass the status on. */
static int
record_exec(int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_record_entry;
	struct record r;
	struct vm_hooks hooks;
	int status;

	memset(&r, 0, sizeof r);
	script_sampler_defaults(&r.cfg, SAMPLER_CPU);
	r.output = "rperf.data";
	record_parse_options(&r, argc, argv);
	script_argv_init(&r.script, e, argc, argv);
	if (r.format == PROFILE_FORMAT_NONE)
		r.format = profile_format_from_path(r.output);
	if (r.format == PROFILE_FORMAT_NONE)
		r.format = PROFILE_FORMAT_PPROF;
	if (strcmp(r.output, "-") == 0 && isatty(STDOUT_FILENO) &&
	    r.format == PROFILE_FORMAT_PPROF)
		cmd_usage_error(e, "refusing to write a binary pprof profile to a terminal");
	r.pid = getpid();

	hooks.start = record_vm_start;
	hooks.finish = record_vm_finish;
	hooks.arg = &r;
	status = vm_run(r.script.argc, r.script.argv, &hooks);
	script_argv_release(&r.script);
	return status;
}

const struct cmd_entry cmd_record_entry = {
	.name = "record",
	.usage = "[options] [--] [ruby options] SCRIPT [ARGS...]",
	.summary = "run a Ruby script and record its profile",
	.options = record_options,
	.operands = "@rb",
	.exec = record_exec,
};
