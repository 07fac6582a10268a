/*
 * cmd-record.c: "rperf record": run a Ruby script under the sampler and
 * save its profile when it ends.
 *
 * rperf's own options come first; the first word that is not one of them
 * (a script, "-", or one of ruby's options such as -e, -I, -r, --yjit)
 * and everything after it go to the embedded ruby untouched, as does
 * everything after "--".  The exit status is the script's; a profile that
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
#include "text.h"
#include "vm.h"
#include "xmalloc.h"

enum {
	RECORD_OPT_FORMAT = 256,
	RECORD_OPT_SIGNAL,
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
	{ "mode", 'm', 0, required_argument, "MODE",
	  "cpu (thread CPU time, default) or wall (real time)", "cpu wall", 'm' },
	{ "frequency", 'F', 'f', required_argument, "HZ",
	  "samples per second, 1 to 10000 (default 1000)", "@number", 'F' },
	{ "signal", 0, 0, required_argument, "N|false",
	  "timer signal number (default SIGRTMIN+8); false: use a timer thread",
	  "false", RECORD_OPT_SIGNAL },
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
	char **ruby_argv;
	int ruby_argc;
	char *command_line;
	pid_t pid;		/* the process that records (not a fork) */
};

/* Whether ARG starts one of ruby's own command-line options. */
static int
record_is_ruby_option(const char *arg)
{
	static const char *const longs[] = {
		"yjit", "jit", "rjit", "enable", "disable", "dump", "verbose",
		"version", "copyright", "encoding", "external-encoding",
		"internal-encoding", "backtrace-limit", "crash-report", "parser",
		"help", NULL
	};
	size_t i, len;

	if (arg[0] != '-' || arg[1] == '\0')
		return 0;
	if (arg[1] != '-')
		return strchr("0aCcdeEFhiIlnprsSvwWxyKTU", arg[1]) != NULL;
	arg += 2;
	for (i = 0; longs[i] != NULL; i++) {
		len = strlen(longs[i]);
		if (strncmp(arg, longs[i], len) == 0 &&
		    (arg[len] == '\0' || arg[len] == '=' || arg[len] == '-'))
			return 1;
	}
	return 0;
}

/* Parse a --signal value: "false"/"0" for a timer thread, else SIGRTMIN..MAX. */
static int
record_parse_signal(const char *arg, int *sig)
{
	long v;

	if (strcmp(arg, "false") == 0 || strcmp(arg, "0") == 0) {
		*sig = 0;
		return 0;
	}
	if (cmd_parse_long(arg, SIGRTMIN, SIGRTMAX, &v) != 0)
		return -1;
	*sig = (int)v;
	return 0;
}

/* The whole command line, for the profile's comments. */
static char *
record_command_line(int argc, char **argv)
{
	size_t len = strlen("rperf") + 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = xmalloc(len);
	strcpy(s, "rperf");
	for (i = 0; i < argc; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* VM start hook: install the sampler before anything of the script loads. */
static int
record_vm_start(void *arg)
{
	struct record *r = arg;
	char err[256];
	char *c;

	if (sampler_start(&r->cfg, err, sizeof err) != 0) {
		fprintf(stderr, "rperf record: %s\n", err);
		return -1;
	}
	c = xasprintf("rperf: %s", PACKAGE_VERSION);
	sampler_add_comment(c);
	free(c);
	c = xasprintf("ruby: %s", vm_ruby_version());
	sampler_add_comment(c);
	free(c);
	c = xasprintf("command: %s", r->command_line);
	sampler_add_comment(c);
	free(c);
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
	long v;
	int c;

	cmd_getopt_init(&g, e);
	for (;;) {
		const char *a = optind < argc ? argv[optind] : NULL;

		/* A ruby option ends ours, as a script name does. */
		if (a != NULL && strcmp(a, "--") != 0 &&
		    !cmd_is_own_option(e, a) && record_is_ruby_option(a))
			break;
		if ((c = cmd_getopt(&g, argc, argv)) == -1)
			break;
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
		case 'm':
			if (strcmp(optarg, "cpu") == 0)
				r->cfg.mode = SAMPLER_CPU;
			else if (strcmp(optarg, "wall") == 0)
				r->cfg.mode = SAMPLER_WALL;
			else
				cmd_usage_error(e, "unknown mode '%s' (expected cpu or wall)", optarg);
			break;
		case 'F':
			if (cmd_parse_long(optarg, 1, SAMPLER_MAX_FREQUENCY, &v) != 0)
				cmd_usage_error(e, "invalid frequency '%s' (expected 1 to %d)",
				    optarg, SAMPLER_MAX_FREQUENCY);
			r->cfg.frequency = (int)v;
			break;
		case RECORD_OPT_SIGNAL:
			if (record_parse_signal(optarg, &r->cfg.signal) != 0)
				cmd_usage_error(e, "invalid signal '%s' (expected %d to %d, or false)",
				    optarg, SIGRTMIN, SIGRTMAX);
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
	int i, status;

	memset(&r, 0, sizeof r);
	r.cfg.mode = SAMPLER_CPU;
	r.cfg.frequency = SAMPLER_DEFAULT_FREQUENCY;
	r.cfg.signal = sampler_default_signal();
	r.cfg.aggregate = 1;
	r.output = "rperf.data";
	record_parse_options(&r, argc, argv);

	/* "rperf record ruby app.rb", as with the rperf gem. */
	if (optind < argc) {
		const char *w = argv[optind];
		const char *base = strrchr(w, '/');

		if (strcmp(base ? base + 1 : w, "ruby") == 0)
			optind++;
	}
	if (optind >= argc)
		cmd_usage_error(e, "no script given (nor -e CODE)");
	if (r.format == PROFILE_FORMAT_NONE)
		r.format = profile_format_from_path(r.output);
	if (r.format == PROFILE_FORMAT_NONE)
		r.format = PROFILE_FORMAT_PPROF;
	if (strcmp(r.output, "-") == 0 && isatty(STDOUT_FILENO) &&
	    r.format == PROFILE_FORMAT_PPROF)
		cmd_usage_error(e, "refusing to write a binary pprof profile to a terminal");

	r.command_line = record_command_line(argc, argv);
	r.ruby_argc = argc - optind + 1;
	r.ruby_argv = xcalloc((size_t)r.ruby_argc + 1, sizeof *r.ruby_argv);
	r.ruby_argv[0] = "ruby";
	for (i = optind; i < argc; i++)
		r.ruby_argv[i - optind + 1] = argv[i];
	r.pid = getpid();

	hooks.start = record_vm_start;
	hooks.finish = record_vm_finish;
	hooks.arg = &r;
	status = vm_run(r.ruby_argc, r.ruby_argv, &hooks);
	free(r.ruby_argv);
	free(r.command_line);
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
