/*
 * rperf.c: main.  Global options (--help, --version), "rperf help CMD", and
 * dispatch to the command named exactly by the first operand.  Whatever a
 * command prints to stdout is flushed and checked here, so a full disk or a
 * closed pipe is an error rather than a silently short report.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "cmd.h"
#include "error.h"
#include "secret.h"
#include "util.h"
#include "vm.h"
#include "xmalloc.h"

/* rperf's own copy of argv, reachable until exit (for leak checkers). */
static char **rperf_args;
/* "rperf NAME", the prefix of the running command's messages. */
static char rperf_prefix[64];

/* A deep copy of ARGV (ARGC strings and a NULL). */
static char **
rperf_copy_args(int argc, char **argv)
{
	char **v = xcalloc((size_t)argc + 1, sizeof *v);
	int i;

	for (i = 0; i < argc; i++)
		v[i] = xstrdup(argv[i]);
	return v;
}

/* The one-paragraph overview printed by "rperf --help". */
static void
rperf_print_help(FILE *fp)
{
	size_t i;

	fprintf(fp,
	    "usage: rperf [--version] [--help] COMMAND [ARGS]\n"
	    "\n"
	    "rperf is a sampling profiler for Ruby: it runs a script in its own\n"
	    "embedded Ruby VM and records where the time goes.\n"
	    "\n"
	    "commands:\n");
	for (i = 0; cmd_table[i] != NULL; i++)
		fprintf(fp, "  %-10s %s\n", cmd_table[i]->name, cmd_table[i]->summary);
	fprintf(fp, "  %-10s %s\n", "help", "show the manual page of a command");
	fprintf(fp,
	    "\n"
	    "See 'rperf COMMAND --help' or 'rperf help COMMAND' for a command's\n"
	    "options.\n");
}

/* The first lines of --version: rperf, the Ruby it embeds, build features. */
static void
rperf_print_version(FILE *fp)
{
	fprintf(fp, "rperf %s\n", PACKAGE_VERSION);
	fprintf(fp, "%s\n", vm_ruby_description());
	fprintf(fp, "features: %s\n", vm_features());
}

/* "rperf help [CMD]": the man page when man can show it, else --help. */
static int
rperf_help(int argc, char **argv)
{
	const struct cmd_entry *e;
	char page[64];

	if (argc < 2) {
		rperf_print_help(stdout);
		return RPERF_EXIT_OK;
	}
	if (strcmp(argv[1], "rperf") == 0) {
		snprintf(page, sizeof page, "rperf");
		e = NULL;
	} else {
		e = cmd_find(argv[1]);
		if (e == NULL) {
			error_print("no such command '%s'", argv[1]);
			fprintf(stderr, "Try 'rperf --help' for the list of commands.\n");
			return RPERF_EXIT_USAGE;
		}
		snprintf(page, sizeof page, "rperf-%s", e->name);
	}
	if (isatty(STDOUT_FILENO) && getenv("RPERF_NO_MAN") == NULL) {
		fflush(stdout);
		execlp("man", "man", page, (char *)NULL);
		/* No man: fall through to the built-in text. */
	}
	if (e == NULL)
		rperf_print_help(stdout);
	else
		cmd_print_help(e, stdout);
	return RPERF_EXIT_OK;
}

/* Flush stdout and turn a failure into an error message and status 1. */
static int
rperf_finish_stdout(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			error_print("cannot write standard output: %s", strerror(errno));
		return status == 0 ? RPERF_EXIT_FAILURE : status;
	}
	return status;
}

#ifdef __SANITIZE_ADDRESS__
/* As ruby's own ASan builds do: Ruby gives each thread its own signal
 * stack, and ASan's would be unmapped twice at a thread's end. */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "use_sigaltstack=0";
}
#endif

int
main(int argc, char **argv)
{
	const struct cmd_entry *e;
	const char *name;

	util_mark_origin();	/* the start of "(ruby boot)" in wall mode */
	/* Every local user can read the process's argv in /proc/PID/cmdline:
	 * rperf works on a copy, and the original loses its secrets.  The
	 * embedded ruby lays its argv out over the original (see vm.c). */
	rperf_args = rperf_copy_args(argc, argv);
	secret_scrub_argv(argc, argv);
	vm_save_process_args(argc, argv);
	argv = rperf_args;
	if (argc < 2) {
		rperf_print_help(stderr);
		return RPERF_EXIT_USAGE;
	}
	name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		rperf_print_help(stdout);
		return rperf_finish_stdout(RPERF_EXIT_OK);
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		rperf_print_version(stdout);
		return rperf_finish_stdout(RPERF_EXIT_OK);
	}
	if (strcmp(name, "--list-cmds") == 0) {
		size_t i;

		for (i = 0; cmd_table[i] != NULL; i++)
			printf("%s\n", cmd_table[i]->name);
		printf("help\n");
		return rperf_finish_stdout(RPERF_EXIT_OK);
	}
	if (strcmp(name, "--completion-helper") == 0) {
		if (argc != 3 || (e = cmd_find(argv[2])) == NULL) {
			error_print("--completion-helper takes a command name");
			return RPERF_EXIT_USAGE;
		}
		cmd_print_completion(e, stdout);
		return rperf_finish_stdout(RPERF_EXIT_OK);
	}
	if (strcmp(name, "help") == 0)
		return rperf_finish_stdout(rperf_help(argc - 1, argv + 1));
	if (name[0] == '-') {
		error_print("unknown option '%s'", name);
		fprintf(stderr, "Try 'rperf --help' for more information.\n");
		return RPERF_EXIT_USAGE;
	}
	e = cmd_find(name);
	if (e == NULL) {
		error_print("'%s' is not an rperf command", name);
		fprintf(stderr, "Try 'rperf --help' for the list of commands.\n");
		return RPERF_EXIT_USAGE;
	}
	snprintf(rperf_prefix, sizeof rperf_prefix, "rperf %s", e->name);
	error_set_prefix(rperf_prefix);
	return rperf_finish_stdout(e->exec(argc - 1, argv + 1));
}
