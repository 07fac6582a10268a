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
#include "alloc.h"
#include "cmd.h"
#include "error.h"
#include "output.h"
#include "profile.h"
#include "push.h"
#include "sampler.h"
#include "script.h"
#include "vm.h"
#include "xmalloc.h"

enum {
	CMD_RECORD_OPT_FORMAT = 256,
	CMD_RECORD_OPT_LINES,
	CMD_RECORD_OPT_NO_AGGREGATE,
	CMD_RECORD_OPT_TIMELINE,
	CMD_RECORD_OPT_TIMELINE_MAX,
	CMD_RECORD_OPT_DEFER,
	CMD_RECORD_OPT_NO_INHERIT,
	CMD_RECORD_OPT_CHILD_TIMEOUT,
	CMD_RECORD_OPT_CONTROL_SIGNAL,
	CMD_RECORD_OPT_DURATION,
	CMD_RECORD_OPT_DELAY,
	CMD_RECORD_OPT_PUSH,
	CMD_RECORD_OPT_APP_NAME,
	CMD_RECORD_OPT_TAG,
	CMD_RECORD_OPT_PUSH_INTERVAL,
	CMD_RECORD_OPT_PUSH_TIMEOUT,
	CMD_RECORD_OPT_SPOOL,
	CMD_RECORD_OPT_SPOOL_MAX,
	CMD_RECORD_OPT_PUSH_HEADER,
	CMD_RECORD_OPT_TENANT,
	CMD_RECORD_OPT_INSECURE,
	CMD_RECORD_OPT_ALLOC,
	CMD_RECORD_OPT_ALLOC_RATE,
};

static const struct cmd_option cmd_record_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write the profile to FILE ('-' for stdout; default rperf.data)", "@file", 'o' },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "%F (default: from FILE's extension, else pprof)",
	  "@format", CMD_RECORD_OPT_FORMAT, FORMAT_RECORD },
	{ "print", 'p', 0, no_argument, NULL,
	  "print the text report to stdout instead of saving a file", NULL, 'p' },
	SCRIPT_SAMPLER_OPTIONS_MODES("cpu (thread CPU time), wall (real time) or alloc "
	    "(allocations only); default cpu", "cpu wall alloc"),
	{ "alloc", 0, 0, no_argument, NULL,
	  "sample allocations too: memory sample types next to the time", NULL,
	  CMD_RECORD_OPT_ALLOC },
	{ "alloc-rate", 0, 0, required_argument, "N",
	  "mean allocations between two allocation samples (default "
	  CMD_STR(ALLOC_DEFAULT_RATE) ")", "@number", CMD_RECORD_OPT_ALLOC_RATE },
	{ "lines", 0, 0, no_argument, NULL,
	  "record the line number of each frame", NULL, CMD_RECORD_OPT_LINES },
	{ "timeline", 0, 0, no_argument, NULL,
	  "keep every sample with its thread and time (and Rperf.mark spans) "
	  "for rperf report --timeline", NULL, CMD_RECORD_OPT_TIMELINE },
	{ "timeline-max", 0, 0, required_argument, "N",
	  "samples kept with their time at most (default "
	  CMD_STR(SAMPLER_DEFAULT_RAW_MAX) "); later ones are merged",
	  "@number", CMD_RECORD_OPT_TIMELINE_MAX },
	{ "no-aggregate", 0, 0, no_argument, NULL,
	  "the same as --timeline", NULL, CMD_RECORD_OPT_NO_AGGREGATE },
	{ "defer", 0, 0, no_argument, NULL,
	  "sample only inside Rperf.profile blocks", NULL, CMD_RECORD_OPT_DEFER },
	{ "no-inherit", 0, 0, no_argument, NULL,
	  "do not profile forked children", NULL, CMD_RECORD_OPT_NO_INHERIT },
	{ "child-timeout", 0, 0, required_argument, "SECONDS",
	  "how long to wait for children still running at exit (default "
	  CMD_STR(CMD_CHILD_TIMEOUT) ")",
	  "@number", CMD_RECORD_OPT_CHILD_TIMEOUT },
	{ "control-signal", 0, 0, required_argument, "N|false",
	  "signal of 'rperf snapshot' (default " CMD_CONTROL_SIGNAL_TEXT "); false: none",
	  "false", CMD_RECORD_OPT_CONTROL_SIGNAL },
	{ "duration", 0, 0, required_argument, "SECONDS",
	  "stop sampling after SECONDS; the script runs on", "@number", CMD_RECORD_OPT_DURATION },
	{ "delay", 0, 0, required_argument, "SECONDS",
	  "start sampling SECONDS after the start", "@number", CMD_RECORD_OPT_DELAY },
	{ "push", 0, 0, required_argument, "URL",
	  "stream the profile to Pyroscope at URL, an interval at a time", "@text",
	  CMD_RECORD_OPT_PUSH },
	{ "app-name", 0, 0, required_argument, "NAME",
	  "application name for --push (default: the script's name)", "@text",
	  CMD_RECORD_OPT_APP_NAME },
	{ "tag", 0, 0, required_argument, "KEY=VALUE",
	  "a tag of the pushed profiles (repeatable)", "@text", CMD_RECORD_OPT_TAG },
	{ "push-interval", 0, 0, required_argument, "SECONDS",
	  "length of a pushed interval (default 10)", "@number", CMD_RECORD_OPT_PUSH_INTERVAL },
	{ "push-timeout", 0, 0, required_argument, "SECONDS",
	  "how long to wait for unsent intervals at exit (default 5)", "@number",
	  CMD_RECORD_OPT_PUSH_TIMEOUT },
	{ "spool", 0, 0, required_argument, "DIR",
	  "where intervals that could not be sent go (default under XDG_STATE_HOME)",
	  "@dir", CMD_RECORD_OPT_SPOOL },
	{ "spool-max", 0, 0, required_argument, "SIZE",
	  "most the spool directory may hold, with k, M or G (default 100M)",
	  "@number", CMD_RECORD_OPT_SPOOL_MAX },
	{ "push-header", 0, 0, required_argument, "HEADER",
	  "an extra 'Name: value' HTTP header for --push (repeatable)", "@text",
	  CMD_RECORD_OPT_PUSH_HEADER },
	{ "tenant", 0, 0, required_argument, "ID",
	  "tenant for --push (sets X-Scope-OrgID)", "@text", CMD_RECORD_OPT_TENANT },
	{ "insecure", 0, 0, no_argument, NULL,
	  "do not verify the TLS certificate of --push", NULL, CMD_RECORD_OPT_INSECURE },
	{ "quiet", 'q', 0, no_argument, NULL,
	  "do not print where the profile went", NULL, 'q' },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* Everything one "rperf record" run needs, in one place. */
struct cmd_record {
	struct script_run run;	/* the script, the sampler's settings */
	const char *output;	/* as given, for messages */
	char *output_path;	/* absolute: the script may chdir */
	char *snapshot_base;	/* absolute OUTPUT of OUTPUT.PID.N */
	const struct format *format;
	int print;
	int quiet;
	unsigned snapshots;	/* written on request so far */
	int alloc;		/* --alloc or -m alloc */
	int alloc_rate;		/* --alloc-rate, 0: not given */
	/* --push */
	struct push_config push_cfg;
	const char **tags, **headers;
	size_t tags_cap, headers_cap;
	double push_interval;
	struct push *push;
	int timeline_max;	/* --timeline-max was given */
};

/* VM finish hook: stop sampling and save the profile. */
static int
cmd_record_vm_finish(void *arg, int ran)
{
	struct cmd_record *r = arg;
	struct sampler_stats stats;
	struct profile *p;
	char err[512];
	int rc = 0;

	if ((p = script_run_stop(&r->run, &stats, ran)) == NULL)
		return 0;
	if (r->push != NULL) {
		/* The last interval went out with sampler_stop. */
		if (push_finish(r->push) != 0)
			rc = -1;
		r->push = NULL;
	}
	script_procs_merge(&r->run.procs, &p, r->run.procs.child_timeout, NULL, 0);
	script_procs_release(&r->run.procs);
	if (r->print) {
		if (profile_write_file(p, "-", &format_text, NULL, err, sizeof err) != 0) {
			error_print("%s", err);
			rc = -1;
		}
	} else if (profile_write_file_as(p, r->output_path, r->output, r->format, NULL, err,
	    sizeof err) != 0) {
		error_print("%s", err);
		rc = -1;
	} else if (!r->quiet && strcmp(r->output, "-") != 0) {
		error_note("wrote '%s' (%s, %llu samples, %.3f s)",
		    r->output, r->format->name,
		    (unsigned long long)stats.samples, stats.duration_ns / 1e9);
	}
	profile_free(p);
	return rc;
}

/* Each interval of the sampler goes to the uploader (it copies it). */
static void
cmd_record_push_interval(const struct profile *p, void *arg)
{
	struct cmd_record *r = arg;

	if (r->push != NULL && getpid() == r->run.procs.root)
		push_enqueue(r->push, p, p->time_nanos, p->time_nanos + p->duration_nanos);
}

/* The application name --push uses when none is given: the script's
 * file name without its extension, or "ruby" for -e. */
static char *
cmd_record_app_name(const struct script_argv *s)
{
	static const char takes_arg[] = "ICrEex";
	const char *script = NULL, *base, *dot;
	int i;

	for (i = 1; i < s->argc; i++) {
		const char *a = s->argv[i];

		if (strcmp(a, "--") == 0) {
			script = i + 1 < s->argc ? s->argv[i + 1] : NULL;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			script = a;
			break;
		}
		if (a[1] == 'e')
			break;
		if (a[1] != '-' && a[2] == '\0' && strchr(takes_arg, a[1]) != NULL)
			i++;	/* "-I DIR": the next word is the option's */
	}
	if (script == NULL || strcmp(script, "-") == 0)
		return xstrdup("ruby");
	base = strrchr(script, '/');
	base = base ? base + 1 : script;
	dot = strrchr(base, '.');
	return dot != NULL && dot != base ? xstrndup(base, (size_t)(dot - base)) : xstrdup(base);
}

/* Where snapshots go: next to the output, as OUTPUT.PID.N. */
static char *
cmd_record_snapshot_path(struct cmd_record *r)
{
	return xasprintf("%s.%ld.%u", r->snapshot_base, (long)getpid(), ++r->snapshots);
}

/* A snapshot asked for by "rperf snapshot PID": write it, go on.  Its name
 * is ours to choose, so it must be new: nothing there is written through. */
static void
cmd_record_snapshot(const struct profile *p, void *arg)
{
	struct cmd_record *r = arg;
	char *path = cmd_record_snapshot_path(r), *shown, err[512];
	const struct format *fmt = r->print ? &format_pprof : r->format;

	shown = xasprintf("%s.%ld.%u", r->print || strcmp(r->output, "-") == 0 ?
	    "rperf.data" : r->output, (long)getpid(), r->snapshots);
	if (profile_write_new(p, path, shown, fmt, err, sizeof err) != 0)
		error_print("snapshot: %s", err);
	else if (!r->quiet)
		error_note("wrote snapshot '%s'", shown);
	free(shown);
	free(path);
}

/* In the daemon that took the run over: the uploader's thread stayed in
 * the parent, so --push sends nothing more (its spool keeps what it had
 * not sent). */
static void
cmd_record_on_daemon(void *arg)
{
	struct cmd_record *r = arg;

	r->push = NULL;
}

/* Before exec replaces the process, or Process.daemon ends it (WHY):
 * save what there is. */
static void
cmd_record_save_now(void *arg, const char *why)
{
	struct cmd_record *r = arg;
	struct profile *p = sampler_snapshot(0, NULL);
	char err[512];

	if (p == NULL)
		return;
	if (script_procs_child_done(&r->run.procs, p)) {
		profile_free(p);
		return;
	}
	script_procs_merge(&r->run.procs, &p, 0, NULL, 0);
	script_procs_release(&r->run.procs);
	if (profile_write_file_as(p, r->print ? "-" : r->output_path, r->output,
	    r->print ? &format_text : r->format, NULL, err, sizeof err) != 0)
		error_print("%s", err);
	else if (!r->quiet && !r->print && strcmp(r->output, "-") != 0)
		error_note("wrote '%s' before %s", r->output, why);
	fflush(stdout);
	profile_free(p);
}

/* Parse rperf's own options; leave optind at the first word for ruby. */
static void
cmd_record_parse_options(struct cmd_record *r, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_record_entry;
	struct cmd_getopt g;
	double secs;
	long v;
	int c;

	cmd_getopt_init(&g, e);
	while ((c = script_getopt(&g, argc, argv)) != -1) {
		if (c == 'm') {
			/* record's modes: script's two and alloc */
			r->run.cfg.alloc_only = strcmp(optarg, "alloc") == 0;
			if (r->run.cfg.alloc_only)
				r->alloc = 1;
			else if (strcmp(optarg, "cpu") != 0 && strcmp(optarg, "wall") != 0)
				cmd_usage_error(e, "unknown mode '%s' (expected cpu, wall or alloc)",
				    optarg);
			else
				script_sampler_option(e, c, optarg, &r->run.cfg);
			continue;
		}
		if (script_sampler_option(e, c, optarg, &r->run.cfg))
			continue;
		switch (c) {
		case CMD_RECORD_OPT_ALLOC:
			r->alloc = 1;
			break;
		case CMD_RECORD_OPT_ALLOC_RATE:
			if (cmd_parse_long(optarg, 1, ALLOC_MAX_RATE, &v) != 0)
				cmd_usage_error(e, "invalid --alloc-rate '%s' (expected 1 to %d)",
				    optarg, ALLOC_MAX_RATE);
			r->alloc_rate = (int)v;
			break;
		case CMD_RECORD_OPT_PUSH:
			r->push_cfg.url = optarg;
			break;
		case CMD_RECORD_OPT_APP_NAME:
			r->push_cfg.app_name = optarg;
			break;
		case CMD_RECORD_OPT_TAG:
			xgrow((void **)&r->tags, &r->tags_cap, r->push_cfg.ntags + 1, sizeof *r->tags);
			r->tags[r->push_cfg.ntags++] = optarg;
			break;
		case CMD_RECORD_OPT_PUSH_HEADER:
			xgrow((void **)&r->headers, &r->headers_cap, r->push_cfg.nheaders + 1,
			    sizeof *r->headers);
			r->headers[r->push_cfg.nheaders++] = optarg;
			break;
		case CMD_RECORD_OPT_PUSH_INTERVAL:
			if (script_parse_seconds(optarg, 86400, &secs) != 0 || secs < 0.1)
				cmd_usage_error(e, "invalid --push-interval '%s' (expected seconds, at least 0.1)", optarg);
			r->push_interval = secs;
			break;
		case CMD_RECORD_OPT_PUSH_TIMEOUT:
			if (script_parse_seconds(optarg, 3600, &secs) != 0)
				cmd_usage_error(e, "invalid --push-timeout '%s' (expected seconds)", optarg);
			r->push_cfg.timeout_s = secs > 0 ? secs : 0.001;
			break;
		case CMD_RECORD_OPT_SPOOL:
			r->push_cfg.spool_dir = optarg;
			break;
		case CMD_RECORD_OPT_SPOOL_MAX:
			if (push_parse_size(optarg, &r->push_cfg.spool_max) != 0)
				cmd_usage_error(e, "invalid --spool-max '%s' (expected a size "
				    "such as 500k, 100M or 2G)", optarg);
			break;
		case CMD_RECORD_OPT_TENANT:
			r->push_cfg.tenant = optarg;
			break;
		case CMD_RECORD_OPT_INSECURE:
			r->push_cfg.insecure = 1;
			break;
		case CMD_RECORD_OPT_NO_INHERIT:
			r->run.procs.inherit = 0;
			break;
		case CMD_RECORD_OPT_CHILD_TIMEOUT:
			if (script_parse_seconds(optarg, 3600, &secs) != 0)
				cmd_usage_error(e, "invalid --child-timeout '%s' (expected seconds)", optarg);
			r->run.procs.child_timeout = secs;
			break;
		case CMD_RECORD_OPT_CONTROL_SIGNAL:
			if (strcmp(optarg, "false") == 0 || strcmp(optarg, "0") == 0)
				r->run.cfg.control_signal = 0;
			else if (cmd_parse_long(optarg, SIGRTMIN, SIGRTMAX, &v) == 0)
				r->run.cfg.control_signal = (int)v;
			else
				cmd_usage_error(e, "invalid control signal '%s' (expected %d to %d, or false)",
				    optarg, SIGRTMIN, SIGRTMAX);
			break;
		case CMD_RECORD_OPT_DURATION:
		case CMD_RECORD_OPT_DELAY:
			if (script_parse_seconds(optarg, 1e7, &secs) != 0 ||
			    (c == CMD_RECORD_OPT_DURATION && secs <= 0))
				cmd_usage_error(e, "invalid --%s '%s' (expected seconds)",
				    c == CMD_RECORD_OPT_DELAY ? "delay" : "duration", optarg);
			if (c == CMD_RECORD_OPT_DELAY)
				r->run.cfg.delay_ns = (int64_t)(secs * 1e9);
			else
				r->run.cfg.duration_ns = (int64_t)(secs * 1e9);
			break;
		case 'o':
			r->output = optarg;
			break;
		case CMD_RECORD_OPT_FORMAT:
			r->format = cmd_parse_format(e, optarg, FORMAT_RECORD);
			break;
		case 'p':
			r->print = 1;
			break;
		case CMD_RECORD_OPT_LINES:
			r->run.cfg.lines = 1;
			break;
		case CMD_RECORD_OPT_NO_AGGREGATE:
		case CMD_RECORD_OPT_TIMELINE:
			r->run.cfg.aggregate = 0;
			break;
		case CMD_RECORD_OPT_TIMELINE_MAX: {
			long n;

			if (cmd_parse_long(optarg, 1, 1000000000L, &n) != 0)
				cmd_usage_error(&cmd_record_entry,
				    "invalid --timeline-max '%s' (expected 1 to 1000000000)", optarg);
			r->run.cfg.raw_max = (size_t)n;
			r->timeline_max = 1;
			break;
		}
		case CMD_RECORD_OPT_DEFER:
			r->run.cfg.defer = 1;
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
cmd_record_exec(int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_record_entry;
	struct cmd_record r;
	int status;

	memset(&r, 0, sizeof r);
	script_sampler_defaults(&r.run.cfg, SAMPLER_CPU);
	r.output = "rperf.data";
	r.run.procs.inherit = 1;
	r.run.procs.child_timeout = CMD_CHILD_TIMEOUT;
	r.run.procs.save_now = cmd_record_save_now;
	r.run.procs.on_daemon = cmd_record_on_daemon;
	r.run.procs.arg = &r;
	r.run.cfg.control_signal = SIGRTMIN + CMD_CONTROL_SIGNAL_OFFSET;
	r.run.cfg.snapshot_fn = cmd_record_snapshot;
	r.run.cfg.snapshot_arg = &r;
	r.push_interval = 10;
	cmd_record_parse_options(&r, argc, argv);
	if (r.timeline_max && r.run.cfg.aggregate)
		cmd_usage_error(e, "--timeline-max goes with --timeline");
	if (r.alloc_rate > 0 && !r.alloc)
		cmd_usage_error(e, "--alloc-rate goes with --alloc or -m alloc");
	if (r.alloc)
		r.run.cfg.alloc_rate = r.alloc_rate > 0 ? r.alloc_rate : ALLOC_DEFAULT_RATE;
	if (r.run.cfg.defer && (r.run.cfg.delay_ns > 0 || r.run.cfg.duration_ns > 0))
		cmd_usage_error(e, "--defer cannot be combined with --delay or --duration");
	if (r.push_cfg.url == NULL && (r.push_cfg.app_name || r.push_cfg.ntags ||
	    r.push_cfg.nheaders || r.push_cfg.tenant || r.push_cfg.insecure ||
	    r.push_cfg.spool_dir || r.push_cfg.spool_max))
		cmd_usage_error(e, "--app-name, --tag, --push-header, --tenant, --spool, "
		    "--spool-max and --insecure go with --push URL");
	script_argv_init(&r.run.script, e, argc, argv);
	if (r.format == NULL)
		r.format = format_by_path(r.output, FORMAT_RECORD);
	if (r.format == NULL)
		r.format = &format_pprof;
	r.output_path = script_absolute_path(r.output);
	r.snapshot_base = script_absolute_path(r.print || strcmp(r.output, "-") == 0 ?
	    "rperf.data" : r.output);
	if (strcmp(r.output, "-") == 0 && isatty(STDOUT_FILENO) &&
	    (r.format->flags & FORMAT_BINARY))
		cmd_usage_error(e, "refusing to write a binary %s profile to a terminal",
		    r.format->name);
	if (r.push_cfg.url != NULL) {
		char err[512], *app = NULL;

		if (r.push_cfg.app_name == NULL)
			r.push_cfg.app_name = app = cmd_record_app_name(&r.run.script);
		r.push_cfg.mode = r.run.cfg.alloc_only ? "alloc" :
		    r.run.cfg.mode == SAMPLER_WALL ? "wall" : "cpu";
		r.push_cfg.tags = r.tags;
		r.push_cfg.headers = r.headers;
		r.push_cfg.token = getenv("RPERF_PUSH_TOKEN");
		if (r.push_cfg.token != NULL && *r.push_cfg.token == '\0')
			r.push_cfg.token = NULL;	/* as rperf push takes it */
		r.push_cfg.sample_rate = r.run.cfg.frequency;
		r.push_cfg.quiet = r.quiet;
		r.push = push_start(&r.push_cfg, err, sizeof err);
		free(app);
		r.push_cfg.app_name = NULL;
		if (r.push == NULL)
			cmd_usage_error(e, "%s", err);
		r.run.cfg.interval_ns = (int64_t)(r.push_interval * 1e9);
		r.run.cfg.interval_fn = cmd_record_push_interval;
		r.run.cfg.interval_arg = &r;
	}
	r.run.finish = cmd_record_vm_finish;
	r.run.arg = &r;
	status = script_run(&r.run);
	if (r.push != NULL && getpid() == r.run.procs.root)
		push_finish(r.push);	/* the VM never got to run the script */
	script_argv_release(&r.run.script);
	free(r.output_path);
	free(r.snapshot_base);
	free(r.tags);
	free(r.headers);
	return status;
}

const struct cmd_entry cmd_record_entry = {
	.name = "record",
	.usage = "[options] [--] [ruby options] SCRIPT [ARGS...]",
	.summary = "run a Ruby script and record its profile",
	.options = cmd_record_options,
	.operands = "@rb",
	.exec = cmd_record_exec,
};
