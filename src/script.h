/*
 * script.h: what the commands that run a Ruby script (record, stat, exec)
 * share: where rperf's options end and ruby's begin, the argv handed to
 * the embedded ruby, and the sampler options they have in common.
 */
#ifndef RPERF_SCRIPT_H
#define RPERF_SCRIPT_H

#include "cmd.h"
#include "sampler.h"

/* Option ids of the shared sampler options (the short ones are 'm', 'F'). */
#define SCRIPT_OPT_SIGNAL 512

/* The options table entries of -m, -F/-f and --signal. */
#define SCRIPT_SAMPLER_OPTIONS(default_mode) \
	{ "mode", 'm', 0, required_argument, "MODE", \
	  "cpu (thread CPU time) or wall (real time); default " default_mode, \
	  "cpu wall", 'm' }, \
	{ "frequency", 'F', 'f', required_argument, "HZ", \
	  "samples per second, 1 to 10000 (default 1000)", "@number", 'F' }, \
	{ "signal", 0, 0, required_argument, "N|false", \
	  "timer signal number (default SIGRTMIN+8); false: use a timer thread", \
	  "false", SCRIPT_OPT_SIGNAL }

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

#endif
