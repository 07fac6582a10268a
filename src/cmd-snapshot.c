/*
 * cmd-snapshot.c: "rperf snapshot PID...": ask processes running under
 * "rperf record" to write the profile so far next to their output
 * (OUTPUT.PID.N) and keep running.  The request is a real-time signal
 * (CMD_CONTROL_SIGNAL_TEXT, SIGRTMIN+9, unless --control-signal says otherwise, on both sides), not
 * USR1/USR2, which servers such as Puma and Unicorn use for themselves.
 *
 * The signal's default action terminates, so a process is signalled only
 * when everything says it will take it as a request: it is not process 1,
 * it is wholly ours (real, effective and saved uid), its executable can be
 * read and is rperf, and it catches that very signal (SigCgt).  Anything
 * that cannot be checked is a refusal, never a guess.  The signal goes
 * through a pidfd opened before the checks, so a pid reused meanwhile is
 * never signalled.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"

enum {
	CMD_SNAPSHOT_OPT_CONTROL_SIGNAL = 256,
};

static const struct cmd_option cmd_snapshot_options[] = {
	{ "control-signal", 0, 0, required_argument, "N",
	  "the signal record was told to listen to (default " CMD_CONTROL_SIGNAL_TEXT ")",
	  "@number", CMD_SNAPSHOT_OPT_CONTROL_SIGNAL },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* What /proc/PID/status says about a process. */
struct cmd_snapshot_status {
	unsigned long uid[3];	/* real, effective, saved */
	unsigned long long sigcgt;	/* caught signals, bit N-1 for N */
};

/* Read /proc/PID/status into ST; 0, or -1 with errno set. */
static int
cmd_snapshot_read_status(long pid, struct cmd_snapshot_status *st)
{
	char path[64], line[256];
	int have_uid = 0, have_cgt = 0;
	FILE *fp;

	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, fp) != NULL) {
		if (sscanf(line, "Uid: %lu %lu %lu", &st->uid[0], &st->uid[1],
		    &st->uid[2]) == 3)
			have_uid = 1;
		else if (sscanf(line, "SigCgt: %llx", &st->sigcgt) == 1)
			have_cgt = 1;
	}
	fclose(fp);
	if (!have_uid || !have_cgt) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* Whether process PID may be sent SIG; if not, why, in WHY. */
static int
cmd_snapshot_may_signal(long pid, int sig, char *why, size_t len)
{
	char link[64], target[PATH_MAX];
	struct cmd_snapshot_status st;
	const char *base;
	uid_t me = getuid();
	ssize_t n;
	int i;

	if (pid == 1) {
		error_set(why, len, "refusing to signal process 1 (init)");
		return 0;
	}
	if (cmd_snapshot_read_status(pid, &st) != 0) {
		if (errno == ENOENT)
			error_set(why, len, "no process %ld", pid);
		else
			error_set(why, len, "cannot read '/proc/%ld/status': %s", pid,
			    strerror(errno));
		return 0;
	}
	for (i = 0; i < 3; i++) {
		if (st.uid[i] != (unsigned long)me) {
			error_set(why, len, "process %ld belongs to another user (uid %lu)",
			    pid, st.uid[i]);
			return 0;
		}
	}
	snprintf(link, sizeof link, "/proc/%ld/exe", pid);
	n = readlink(link, target, sizeof target - 1);
	if (n < 0) {
		error_set(why, len, "cannot tell whether process %ld runs rperf: "
		    "cannot read '%s': %s", pid, link, strerror(errno));
		return 0;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strstr(base, "rperf") == NULL) {
		error_set(why, len, "process %ld is not running under rperf", pid);
		return 0;
	}
	if (sig < 1 || sig > 64 || !(st.sigcgt & (1ULL << (sig - 1)))) {
		error_set(why, len, "process %ld does not listen to signal %d (started "
		    "with --control-signal false or another signal?)", pid, sig);
		return 0;
	}
	return 1;
}

/* Open a pidfd for PID: -1 with errno set (ENOSYS where there is none). */
static int
cmd_snapshot_pidfd_open(long pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Send SIG through PIDFD, or to PID by number where pidfds are missing. */
static int
cmd_snapshot_send(int pidfd, long pid, int sig)
{
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#endif
	return kill((pid_t)pid, sig);
}

/* "rperf snapshot [--control-signal N] PID...". */
static int
cmd_snapshot_exec(int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_snapshot_entry;
	struct cmd_getopt g;
	int c, sig = SIGRTMIN + CMD_CONTROL_SIGNAL_OFFSET, rc = RPERF_EXIT_OK, i, pidfd;
	char why[PATH_MAX + 128];
	long v;

	cmd_getopt_init(&g, e);
	while ((c = cmd_getopt(&g, argc, argv)) != -1) {
		if (c == CMD_SNAPSHOT_OPT_CONTROL_SIGNAL) {
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
		/* Pin the process first: if it dies and its pid is reused
		 * while we look at /proc, the signal fails with ESRCH. */
		pidfd = cmd_snapshot_pidfd_open(v);
		if (pidfd == -1 && errno == ESRCH) {
			error_print("no process %ld", v);
			rc = RPERF_EXIT_FAILURE;
		} else if (!cmd_snapshot_may_signal(v, sig, why, sizeof why)) {
			error_print("%s", why);
			rc = RPERF_EXIT_FAILURE;
		} else if (cmd_snapshot_send(pidfd, v, sig) != 0) {
			if (errno == ESRCH)
				error_print("no process %ld", v);
			else
				error_print("cannot signal process %ld: %s", v, strerror(errno));
			rc = RPERF_EXIT_FAILURE;
		}
		if (pidfd >= 0)
			close(pidfd);
	}
	return rc;
}

const struct cmd_entry cmd_snapshot_entry = {
	.name = "snapshot",
	.usage = "[options] PID...",
	.summary = "ask a process under rperf record to save its profile so far",
	.options = cmd_snapshot_options,
	.operands = "@pid",
	.exec = cmd_snapshot_exec,
};
