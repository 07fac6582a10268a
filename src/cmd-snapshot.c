/*
 * cmd-snapshot.c: "rperf snapshot PID...": ask processes running under
 * "rperf record" to write the profile so far next to their output
 * (OUTPUT.PID.N) and keep running.  The request is a real-time signal
 * (SIGRTMIN+9 unless --control-signal says otherwise, on both sides), not
 * USR1/USR2, which servers such as Puma and Unicorn use for themselves.
 * Only a process whose executable is rperf is signalled.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

enum {
	SNAPSHOT_OPT_CONTROL_SIGNAL = 256,
};

static const struct cmd_option snapshot_options[] = {
	{ "control-signal", 0, 0, required_argument, "N",
	  "the signal record was told to listen to (default SIGRTMIN+9)",
	  "@number", SNAPSHOT_OPT_CONTROL_SIGNAL },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* Whether process PID runs the rperf executable (by /proc/PID/exe). */
static int
snapshot_is_rperf(long pid)
{
	char link[64], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	n = readlink(link, target, sizeof target - 1);
	if (n < 0)
		return errno == EACCES ? 1 : 0;	/* not ours to check: let kill decide */
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	return strstr(base, "rperf") != NULL;
}

/* "rperf snapshot [--control-signal N] PID...". */
static int
snapshot_exec(int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_snapshot_entry;
	struct cmd_getopt g;
	int c, sig = SIGRTMIN + 9, rc = RPERF_EXIT_OK, i;
	long v;

	cmd_getopt_init(&g, e);
	while ((c = cmd_getopt(&g, argc, argv)) != -1) {
		if (c == SNAPSHOT_OPT_CONTROL_SIGNAL) {
			if (cmd_parse_long(optarg, SIGRTMIN, SIGRTMAX, &v) != 0)
				cmd_usage_error(e, "invalid control signal '%s' (expected %d to %d)",
				    optarg, SIGRTMIN, SIGRTMAX);
			sig = (int)v;
		}
	}
	cmd_getopt_release(&g);
	if (optind >= argc)
		cmd_usage_error(e, "no process given");
	for (i = optind; i < argc; i++) {
		if (cmd_parse_long(argv[i], 1, INT_MAX, &v) != 0)
			cmd_usage_error(e, "'%s' is not a process id", argv[i]);
	}
	for (i = optind; i < argc; i++) {
		cmd_parse_long(argv[i], 1, INT_MAX, &v);
		if (kill((pid_t)v, 0) != 0 && errno == ESRCH) {
			fprintf(stderr, "rperf snapshot: no process %ld\n", v);
			rc = RPERF_EXIT_FAILURE;
		} else if (!snapshot_is_rperf(v)) {
			fprintf(stderr, "rperf snapshot: process %ld is not running under rperf\n", v);
			rc = RPERF_EXIT_FAILURE;
		} else if (kill((pid_t)v, sig) != 0) {
			fprintf(stderr, "rperf snapshot: cannot signal process %ld: %s\n", v,
			    strerror(errno));
			rc = RPERF_EXIT_FAILURE;
		}
	}
	return rc;
}

const struct cmd_entry cmd_snapshot_entry = {
	.name = "snapshot",
	.usage = "[options] PID...",
	.summary = "ask a process under rperf record to save its profile so far",
	.options = snapshot_options,
	.operands = "@pid",
	.exec = snapshot_exec,
};
