/*
 * script.h: what the commands that run a Ruby script (record, stat, exec)
 * share: where rperf's options end and ruby's begin, the argv handed to
 * the embedded ruby, and the sampler options they have in common.
 */
#ifndef RPERF_SCRIPT_H
#define RPERF_SCRIPT_H

#include <sys/types.h>

#include "cmd.h"
#include "sampler.h"
#include "session.h"

struct profile;

/* Option ids of the shared sampler options (the short ones are 'm', 'F'). */
#define SCRIPT_OPT_SIGNAL 512
#define SCRIPT_OPT_PEEK 513

/* The options table entries of -m, -F/-f, --signal and --peek. */
#define SCRIPT_SAMPLER_OPTIONS(default_mode) \
	SCRIPT_SAMPLER_OPTIONS_MODES("cpu (thread CPU time) or wall (real time); " \
	    "default " default_mode, "cpu wall")
/* The same with -m's help and words of a command with more modes. */
#define SCRIPT_SAMPLER_OPTIONS_MODES(mode_help, mode_words) \
	{ "mode", 'm', 0, required_argument, "MODE", mode_help, mode_words, 'm' }, \
	{ "frequency", 'F', 'f', required_argument, "HZ", \
	  "samples per second, 1 to 10000 (default 1000)", "@number", 'F' }, \
	{ "signal", 0, 0, required_argument, "N|false", \
	  "timer signal number, or false for a timer thread (the default)", \
	  "false", SCRIPT_OPT_SIGNAL }, \
	{ "peek", 0, 0, no_argument, NULL, \
	  "find where the running thread is without signalling it (cheaper, " \
	  "less exact for short frames)", NULL, SCRIPT_OPT_PEEK }

struct script_argv {
	int argc;		/* for ruby: argv[0] is "ruby" */
	char **argv;
	char *command_line;	/* "rperf CMD ...", for the profile */
};

/* Whether ARG starts one of ruby's own command-line options. */
int script_is_ruby_option(const char *arg);

/* cmd_getopt that also stops at the first ruby option. */
int script_getopt(struct cmd_getopt *g, int argc, char **argv);

/* Handle option C if it is a shared sampler option; 1 if it was. */
int script_sampler_option(const struct cmd_entry *e, int c, const char *arg,
    struct sampler_config *cfg);

/* The defaults of the shared sampler options. */
void script_sampler_defaults(struct sampler_config *cfg, enum sampler_mode mode);

/* From optind on: skip a leading "ruby" word, demand a script (usage
 * error otherwise) and build ruby's argv and the command line. */
void script_argv_init(struct script_argv *s, const struct cmd_entry *e,
    int argc, char **argv);
void script_argv_release(struct script_argv *s);

/* Comments every profile of a script run carries: versions, command. */
void script_add_comments(const struct script_argv *s);

/* PATH made absolute against the current directory, before the script
 * can chdir (to be freed); "-" and absolute paths are copied as they are. */
char *script_absolute_path(const char *path);

/* Parse a number of seconds (decimals allowed) in [0, MAX]; -1 if not. */
int script_parse_seconds(const char *arg, double max, double *out);

/*
 * The processes of a run: forked children are profiled afresh (unless
 * inherit is 0) and write their profiles to a session directory, which
 * the root merges at the end; exec saves the profile so far first.
 */
struct script_procs {
	int inherit;
	double child_timeout;	/* seconds the root waits for children */
	pid_t root;		/* the process the run started in */
	int in_child;		/* this process is a profiled child */
	struct session session;
	/* Save the profile so far (before exec replaces the process, or
	 * Process.daemon ends it), WHY naming the call. */
	void (*save_now)(void *arg, const char *why);
	/* In the daemon that goes on with the run (see script_procs_daemon
	 * in script.c): what the command has that did not survive the fork. */
	void (*on_daemon)(void *arg);
	void *arg;
	/* The root's profile up to Process.daemon, for the daemon to merge
	 * at the end under the pid it had (pre_daemon_pid). */
	struct profile *pre_daemon;
	long pre_daemon_pid;
	long daemon_from;	/* the process that called Process.daemon */
};

/* With the sampler running: note the root.  The session directory is
 * made at the first fork (a run that never forks makes none); if it
 * cannot be, one warning says so and the children are not profiled. */
void script_procs_start(struct script_procs *sp);
/* Right before the script runs (vm_hooks.ready): the fork/exec hooks. */
void script_procs_ready(struct script_procs *sp);

/* At the end of a profiled child: send its profile P to the root.  1 if
 * this process is such a child (the caller saves nothing), else 0. */
int script_procs_child_done(struct script_procs *sp, const struct profile *p);

/* In the root: merge the children into *P (replacing it when there were
 * any); their number, pids in PIDS (up to MAX). */
size_t script_procs_merge(struct script_procs *sp, struct profile **p, double timeout_s,
    long *pids, size_t max);

/* In the root: remove the session. */
void script_procs_release(struct script_procs *sp);

/* One profiled run of a script, as record and stat make it. */
struct script_run {
	struct sampler_config cfg;
	struct script_procs procs;
	struct script_argv script;
	/* The command's own end of the run (see vm_hooks.finish): stop
	 * the sampler, save or print; ARG is its state. */
	int (*finish)(void *arg, int ran);
	void *arg;
};

/*
 * Run R's script in the VM, as ruby would: before its first line the
 * sampler starts with R->cfg (its labels taken from the Rperf module),
 * the module is defined, the session of R->procs starts and every
 * profile gets the comments of R->script; right before it runs, the
 * fork and exec hooks; after its end, R->finish.  Returns the exit
 * status the script's process should have.
 */
int script_run(struct script_run *r);

/* In R->finish: stop the sampler and return the profile the command is
 * to save, or NULL when there is none to save here (the script never
 * ran, or this is a profiled child, whose profile went to the root),
 * the session then released. */
struct profile *script_run_stop(struct script_run *r, struct sampler_stats *stats,
    int ran);

#endif
