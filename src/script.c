/*
 * script.c: the parts of record, stat and exec that run a script (see
 * script.h).  rperf's own options come first; the first word that is not
 * one of them (a script, "-", or one of ruby's options such as -e, -I,
 * --yjit) and everything after it belong to ruby, as does everything
 * after "--".
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "output.h"
#include "profile.h"
#include "rperf-module.h"
#include "rperf-server.h"
#include "script.h"
#include "secret.h"
#include "vm.h"
#include "xmalloc.h"

/* Whether ARG starts one of ruby's own command-line options. */
int
script_is_ruby_option(const char *arg)
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

/* cmd_getopt that also stops at the first ruby option. */
int
script_getopt(struct cmd_getopt *g, int argc, char **argv)
{
	const char *a = optind < argc ? argv[optind] : NULL;

	if (a != NULL && strcmp(a, "--") != 0 &&
	    !cmd_is_own_option(g->entry, a) && script_is_ruby_option(a))
		return -1;
	return cmd_getopt(g, argc, argv);
}

/* The defaults of the shared sampler options. */
void
script_sampler_defaults(struct sampler_config *cfg, enum sampler_mode mode)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->mode = mode;
	cfg->frequency = SAMPLER_DEFAULT_FREQUENCY;
	/* No timer signal: the worker ticks itself.  As the worker notes
	 * where the GVL holder is either way, the signal only woke it, and
	 * cost more than its own wake-up does (bench/overhead, one CPU,
	 * process CPU against ruby: fib 1.066 with a signal, 1.039 without;
	 * the thread/IO mix 1.039 and 1.029; a WEBrick server 80 and 44 us
	 * a request more than ruby's ~650 us). */
	cfg->signal = 0;
	cfg->aggregate = 1;
}

/* Handle option C if it is a shared sampler option; 1 if it was. */
int
script_sampler_option(const struct cmd_entry *e, int c, const char *arg,
    struct sampler_config *cfg)
{
	long v;

	switch (c) {
	case 'm':
		if (strcmp(arg, "cpu") == 0)
			cfg->mode = SAMPLER_CPU;
		else if (strcmp(arg, "wall") == 0)
			cfg->mode = SAMPLER_WALL;
		else
			cmd_usage_error(e, "unknown mode '%s' (expected cpu or wall)", arg);
		return 1;
	case 'F':
		if (cmd_parse_long(arg, 1, SAMPLER_MAX_FREQUENCY, &v) != 0)
			cmd_usage_error(e, "invalid frequency '%s' (expected 1 to %d)",
			    arg, SAMPLER_MAX_FREQUENCY);
		cfg->frequency = (int)v;
		return 1;
	case SCRIPT_OPT_SIGNAL:
		if (strcmp(arg, "false") == 0 || strcmp(arg, "0") == 0)
			cfg->signal = 0;
		else if (cmd_parse_long(arg, SIGRTMIN, SIGRTMAX, &v) == 0)
			cfg->signal = (int)v;
		else
			cmd_usage_error(e, "invalid signal '%s' (expected %d to %d, or false)",
			    arg, SIGRTMIN, SIGRTMAX);
		return 1;
	case SCRIPT_OPT_PEEK:
		cfg->peek = 1;
		return 1;
	}
	return 0;
}

/* Build ruby's argv and the command line from optind on. */
void
script_argv_init(struct script_argv *s, const struct cmd_entry *e, int argc, char **argv)
{
	int i;

	/* "rperf record ruby app.rb", as with the rperf gem. */
	if (optind < argc) {
		const char *w = argv[optind];
		const char *base = strrchr(w, '/');

		if (strcmp(base ? base + 1 : w, "ruby") == 0)
			optind++;
	}
	if (optind >= argc)
		cmd_usage_error(e, "no script given (nor -e CODE)");
	s->argc = argc - optind + 1;
	s->argv = xcalloc((size_t)s->argc + 1, sizeof *s->argv);
	s->argv[0] = "ruby";
	for (i = optind; i < argc; i++)
		s->argv[i - optind + 1] = argv[i];
	/* It goes into every profile, spool file and pushed interval. */
	s->command_line = secret_command_line("rperf", argc, argv);
}

/* Free what script_argv_init made. */
void
script_argv_release(struct script_argv *s)
{
	free(s->argv);
	free(s->command_line);
	s->argv = NULL;
	s->command_line = NULL;
}

/* Comments every profile of a script run carries. */
void
script_add_comments(const struct script_argv *s)
{
	sampler_add_comment(PROFILE_COMMENT_RPERF, PACKAGE_VERSION);
	sampler_add_comment(PROFILE_COMMENT_RUBY, vm_ruby_version());
	sampler_add_comment(PROFILE_COMMENT_COMMAND, s->command_line);
}

/* PATH made absolute against the current directory, "-" (standard
 * output) left as it is (to be freed). */
char *
script_absolute_path(const char *path)
{
	return strcmp(path, "-") == 0 ? xstrdup(path) : output_absolute_path(path);
}

/* Parse a number of seconds (decimals allowed) in [0, MAX]; -1 if not. */
int
script_parse_seconds(const char *arg, double max, double *out)
{
	char *end;
	double v;

	if (arg == NULL || *arg == '\0')
		return -1;
	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Fork hook, before the fork: the session directory is made when the
 * root first forks, so a run that never forks makes none, and one that
 * cannot be made costs the children their profiles, not the run. */
static uint64_t
script_procs_before_fork(void *arg)
{
	struct script_procs *sp = arg;
	char err[512];

	if (sp->inherit && getpid() == sp->root && !session_active(&sp->session) &&
	    !sp->session.failed && session_create(&sp->session, err, sizeof err) != 0)
		error_print("%s; forked processes are not profiled", err);
	return session_fork_id(&sp->session);
}

#if defined(__SANITIZE_ADDRESS__)
/*
 * Built with AddressSanitizer only: a forked child ends by _exit, after
 * everything of Ruby's and rperf's has run, skipping LeakSanitizer's
 * check at exit.  That check locks every part of the sanitizer's
 * allocator, and the allocator this toolchain's libsanitizer has does not
 * guard itself across fork: a lock some other thread of the parent held
 * at the fork (a Ruby thread's native teardown, which goes on after
 * Thread#join returns) stays held in the child for ever.  A CI run hung
 * so in t0213, the child waiting in __lsan::LockAllocator after it had
 * saved its profile.  The parent's check covers the same code.
 */
static void
script_child_exit(int status, void *arg)
{
	(void)arg;
	fflush(NULL);
	_exit(status);
}
#endif

/* In a forked child (or a daemon): end as script_child_exit says, in the
 * AddressSanitizer build; nothing otherwise. */
static void
script_end_as_child(void)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)on_exit(script_child_exit, NULL);
#endif
}

/* Fork hook, in the new child: sample it afresh, or not at all. */
static void
script_procs_child(void *arg, uint64_t fork_id)
{
	struct script_procs *sp = arg;
	char err[256];

	script_end_as_child();
	session_in_child(&sp->session, fork_id);
	if (!sp->inherit || !session_active(&sp->session))
		return;
	if (sampler_restart_in_child(err, sizeof err) != 0) {
		error_print("not profiling child %ld: %s", (long)getpid(), err);
		return;
	}
	sp->in_child = 1;
}

/* Fork hook, in the parent: the root must wait for this child. */
static void
script_procs_parent(long pid, void *arg, uint64_t fork_id)
{
	struct script_procs *sp = arg;
	char name[64];

	snprintf(name, sizeof name, "[fork] child %ld", pid);
	sampler_mark_event(name);
	if (sp->inherit)
		session_child_started(&sp->session, (pid_t)pid, fork_id);
}

/* Exec hook: save the profile so far. */
static void
script_procs_exec(void *arg)
{
	struct script_procs *sp = arg;

	sampler_mark_event("[exec]");
	if (sp->save_now != NULL && sampler_running()) {
		/* The time since each thread's last sample is this
		 * process's last: billed now, or lost with it (up to a
		 * period). */
		sampler_bill_all_now();
		sp->save_now(sp->arg, "exec");
	}
}

/*
 * Before Process.daemon: the run goes on only in the daemon, a child Ruby
 * forks without Process._fork, while the parent ends inside the call, in
 * C.  From the root (with children profiled), the daemon takes the run
 * over: the profile so far is built now, and the daemon samples afresh
 * and merges it at its end, under this pid, as the root merges a child.
 * From a profiled child, with --no-inherit, or from a daemon that took a
 * run over already (Process.daemon twice), the profile so far is saved
 * now, as before an exec, and the daemon is not profiled.
 */
static void
script_procs_before_daemon(void *arg)
{
	struct script_procs *sp = arg;

	sp->daemon_from = (long)getpid();
	if (!sampler_running())
		return;
	sampler_mark_event("[daemon]");
	/* The parent ends inside the call, and the daemon's clock starts
	 * afresh: the time since each thread's last sample is billed now,
	 * as at an exec. */
	sampler_bill_all_now();
	if (sp->inherit && getpid() == sp->root && sp->pre_daemon == NULL) {
		sp->pre_daemon = sampler_snapshot(0, NULL);
		sp->pre_daemon_pid = (long)getpid();
		if (sp->pre_daemon != NULL)
			return;
	}
	if (sp->save_now != NULL)
		sp->save_now(sp->arg, "Process.daemon (the daemon it starts is not profiled)");
}

/* After Process.daemon: in the daemon, take the run over (see
 * script_procs_before_daemon); where it FAILED, forget what was built. */
static void
script_procs_daemon(void *arg, int failed)
{
	struct script_procs *sp = arg;
	char err[256];

	if (failed || (long)getpid() == sp->daemon_from) {
		profile_free(sp->pre_daemon);	/* the run goes on here */
		sp->pre_daemon = NULL;
		return;
	}
	/* In the daemon, which ends as a forked child does, profiled or
	 * not. */
	script_end_as_child();
	if (sp->pre_daemon == NULL)
		return;
	if (sampler_restart_in_child(err, sizeof err) != 0) {
		/* Standard error may be /dev/null by now. */
		error_print("not profiling the daemon %ld: %s", (long)getpid(), err);
		profile_free(sp->pre_daemon);
		sp->pre_daemon = NULL;
		return;
	}
	sp->root = getpid();
	if (sp->on_daemon != NULL)
		sp->on_daemon(sp->arg);
}

/* Note the root; the session waits for the first fork. */
void
script_procs_start(struct script_procs *sp)
{
	sp->root = getpid();
	sp->in_child = 0;
	sp->pre_daemon = NULL;
	session_init(&sp->session);
	session_note_tmpdir();
}

/* Right before the script runs: the fork/exec hooks. */
void
script_procs_ready(struct script_procs *sp)
{
	const struct rperf_module_hooks h = {
		.before_fork = script_procs_before_fork,
		.child = script_procs_child,
		.parent = script_procs_parent,
		.before_exec = script_procs_exec,
		.before_daemon = script_procs_before_daemon,
		.daemon = script_procs_daemon,
		.arg = sp,
	};

	rperf_module_set_hooks(&h);
}

/* At the end of a profiled child: send its profile to the root. */
int
script_procs_child_done(struct script_procs *sp, const struct profile *p)
{
	char err[512];

	if (getpid() == sp->root)
		return 0;
	/* A child that outlived the root's wait finds the session removed:
	 * it writes nothing anywhere, and says so. */
	if (sp->in_child && p != NULL &&
	    session_child_write(&sp->session, getpid(), p, err, sizeof err) != 0)
		error_print("child %ld: %s", (long)getpid(), err);
	return 1;
}

/* In the root: merge the children into *P. */
size_t
script_procs_merge(struct script_procs *sp, struct profile **p, double timeout_s,
    long *pids, size_t max)
{
	struct profile *out;
	size_t n = 0;

	if (*p == NULL || (!session_has_children(&sp->session) && sp->pre_daemon == NULL))
		return 0;
	out = profile_new_like(*p);
	if (sp->pre_daemon != NULL && sp->pre_daemon->time_nanos > 0 &&
	    sp->pre_daemon->time_nanos < out->time_nanos) {
		/* A daemon's run began in the process it left. */
		int64_t end = out->time_nanos + out->duration_nanos;

		out->time_nanos = sp->pre_daemon->time_nanos;
		out->duration_nanos = end - out->time_nanos;
	}
	profile_merge(out, *p, "pid", (int64_t)getpid());
	if (sp->pre_daemon != NULL) {
		profile_merge(out, sp->pre_daemon, "pid", (int64_t)sp->pre_daemon_pid);
		profile_free(sp->pre_daemon);
		sp->pre_daemon = NULL;
		if (max > 0)
			pids[n] = sp->pre_daemon_pid;
		n++;
	}
	if (session_has_children(&sp->session))
		n += session_collect(&sp->session, out, timeout_s, max > n ? pids + n : NULL,
		    max > n ? max - n : 0);
	profile_free(*p);
	*p = out;
	return n;
}

/* In the root: remove the session. */
void
script_procs_release(struct script_procs *sp)
{
	if (getpid() == sp->root)
		session_remove(&sp->session);
}

/* The sampler's label callback: the labels the Rperf module keeps. */
static void
script_each_label(int id, sampler_label_add_fn *add, void *add_arg, void *arg)
{
	rperf_module_each_label(id, add, add_arg);
}

/* The VM start hook of a script run: sampler, the Rperf module,
 * session, comments. */
static int
script_vm_start(void *arg)
{
	struct script_run *r = arg;
	struct sampler_config c = r->cfg;
	char err[512];

	c.label_fn = script_each_label;
	c.label_arg = NULL;
	if (sampler_start(&c, err, sizeof err) != 0) {
		error_print("%s", err);
		return -1;
	}
	rperf_module_define();
	script_procs_start(&r->procs);
	script_add_comments(&r->script);
	return 0;
}

/* The VM ready hook of a script run: the script is about to run. */
static void
script_vm_ready(void *arg)
{
	struct script_run *r = arg;

	script_procs_ready(&r->procs);
	rperf_server_ready();
	/* Last: rperf's own methods just defined count as boot too. */
	sampler_boot_done();
}

/* The VM finish hook of a script run: the command's own. */
static int
script_vm_finish(void *arg, int ran)
{
	struct script_run *r = arg;

	return r->finish(r->arg, ran);
}

/* Run R's script under the VM with the sampler's hooks. */
int
script_run(struct script_run *r)
{
	const struct vm_hooks hooks = {
		.start = script_vm_start,
		.ready = script_vm_ready,
		.finish = script_vm_finish,
		.arg = r,
	};

	return vm_run(r->script.argc, r->script.argv, &hooks);
}

/* Stop sampling; the profile to save, or NULL. */
struct profile *
script_run_stop(struct script_run *r, struct sampler_stats *stats, int ran)
{
	struct profile *p = sampler_stop(stats);

	if (script_procs_child_done(&r->procs, p) || p == NULL || !ran) {
		profile_free(p);
		script_procs_release(&r->procs);
		return NULL;
	}
	return p;
}
