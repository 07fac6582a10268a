/*
 * cmd-stat.c: "rperf stat" and "rperf exec": run a script under the
 * sampler (wall mode unless -m cpu) and, when it ends, print a summary to
 * stderr in the manner of perf stat: where the time went (from the
 * samples), what the VM did (GC.stat) and what the OS saw (getrusage).
 * The script's own output is untouched and its exit status is ours.
 *
 * With -r N the script runs N times, each in a child process of its own
 * (a VM cannot be started twice in one process); each child sends its
 * figures through a pipe and the parent prints their mean and standard
 * deviation.  "exec" is "stat --report".
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "numfmt.h"
#include "json.h"
#include "output.h"
#include "profile.h"
#include "alloc.h"
#include "sampler.h"
#include "script.h"
#include "text.h"
#include "util.h"
#include "vm.h"

enum {
	CMD_STAT_OPT_REPORT = 256,
	CMD_STAT_OPT_TOP,
	CMD_STAT_OPT_JSON,
	CMD_STAT_OPT_ALLOC,
};

static const struct cmd_option cmd_stat_options[] = {
	SCRIPT_SAMPLER_OPTIONS("wall"),
	{ "alloc", 0, 0, no_argument, NULL,
	  "sample allocations too and list the top allocating methods", NULL,
	  CMD_STAT_OPT_ALLOC },
	{ "output", 'o', 0, required_argument, "FILE",
	  "also save the profile to FILE (format from its extension)", "@file", 'o' },
	{ "report", 0, 0, no_argument, NULL,
	  "add the flat and cumulative top tables", NULL, CMD_STAT_OPT_REPORT },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table of --report (default 50)", "@number", CMD_STAT_OPT_TOP },
	{ "json", 0, 0, no_argument, NULL,
	  "print the figures as one JSON object instead", NULL, CMD_STAT_OPT_JSON },
	{ "repeat", 'r', 0, required_argument, "N",
	  "run the script N times and show mean and deviation", "@number", 'r' },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* Where a figure comes from, as its tag in the summary says. */
enum cmd_stat_source { CMD_STAT_OS, CMD_STAT_RPERF, CMD_STAT_RUBY };
static const char *const cmd_stat_source_tag[] = { "[os]", "[rperf]", "[ruby]" };

/* The figures, in the order the summary prints them. */
enum cmd_stat_figure {
	F_USER, F_SYS, F_REAL,
	F_CPU, F_BLOCKED, F_WAIT, F_MARK, F_SWEEP, F_UNBILLED,
	F_GC_RUNS, F_GC_MINOR, F_GC_MAJOR, F_GC_TIME, F_ALLOCATED, F_FREED,
	F_HEAP_PAGES, F_THREADS, F_PROCESSES,
	F_RSS, F_MINFLT, F_MAJFLT, F_NVCSW, F_NIVCSW, F_INBLOCK, F_OUBLOCK,
	F_SAMPLES, F_TRIGGERS, F_OVERHEAD,
	F_COUNT
};

struct cmd_stat_field {
	const char *key;	/* JSON key, unit in the name */
	const char *label;
	const char *unit;	/* "ms", "KB", "%" or "" */
	enum cmd_stat_source source;
	int group;		/* a blank line between groups */
};

static const struct cmd_stat_field cmd_stat_fields[F_COUNT] = {
	[F_USER] = { "user_ms", "user", "ms", CMD_STAT_OS, 0 },
	[F_SYS] = { "sys_ms", "sys", "ms", CMD_STAT_OS, 0 },
	[F_REAL] = { "real_ms", "real", "ms", CMD_STAT_OS, 0 },
	[F_CPU] = { "cpu_execution_ms", "CPU execution", "ms", CMD_STAT_RPERF, 1 },
	[F_BLOCKED] = { "gvl_blocked_ms", "GVL blocked (I/O, sleep)", "ms", CMD_STAT_RPERF, 1 },
	[F_WAIT] = { "gvl_wait_ms", "GVL wait (contention)", "ms", CMD_STAT_RPERF, 1 },
	[F_MARK] = { "gc_marking_ms", "GC marking", "ms", CMD_STAT_RPERF, 1 },
	[F_SWEEP] = { "gc_sweeping_ms", "GC sweeping", "ms", CMD_STAT_RPERF, 1 },
	[F_UNBILLED] = { "unbilled_cpu_ms", "CPU not billed to a sample", "ms", CMD_STAT_RPERF, 1 },
	[F_GC_RUNS] = { "gc_runs", "GC runs", "", CMD_STAT_RUBY, 2 },
	[F_GC_MINOR] = { "gc_minor_runs", "GC runs, minor", "", CMD_STAT_RUBY, 2 },
	[F_GC_MAJOR] = { "gc_major_runs", "GC runs, major", "", CMD_STAT_RUBY, 2 },
	[F_GC_TIME] = { "gc_time_ms", "GC time", "ms", CMD_STAT_RUBY, 2 },
	[F_ALLOCATED] = { "allocated_objects", "allocated objects", "", CMD_STAT_RUBY, 2 },
	[F_FREED] = { "freed_objects", "freed objects", "", CMD_STAT_RUBY, 2 },
	[F_HEAP_PAGES] = { "heap_pages", "heap pages", "", CMD_STAT_RUBY, 2 },
	[F_THREADS] = { "threads", "threads", "", CMD_STAT_RPERF, 2 },
	[F_PROCESSES] = { "processes", "processes profiled", "", CMD_STAT_RPERF, 2 },
	[F_RSS] = { "peak_rss_kb", "peak RSS", "KB", CMD_STAT_OS, 3 },
	[F_MINFLT] = { "page_faults_minor", "page faults, minor", "", CMD_STAT_OS, 3 },
	[F_MAJFLT] = { "page_faults_major", "page faults, major", "", CMD_STAT_OS, 3 },
	[F_NVCSW] = { "context_switches_voluntary", "context switches, voluntary", "", CMD_STAT_OS, 3 },
	[F_NIVCSW] = { "context_switches_involuntary", "context switches, involuntary", "",
	    CMD_STAT_OS, 3 },
	[F_INBLOCK] = { "block_input_ops", "block input operations", "", CMD_STAT_OS, 3 },
	[F_OUBLOCK] = { "block_output_ops", "block output operations", "", CMD_STAT_OS, 3 },
	[F_SAMPLES] = { "samples", "samples", "", CMD_STAT_RPERF, 4 },
	[F_TRIGGERS] = { "timer_triggers", "timer triggers", "", CMD_STAT_RPERF, 4 },
	[F_OVERHEAD] = { "profiler_overhead_pct", "profiler overhead (of real)", "%", CMD_STAT_RPERF, 4 },
};

/* One run's figures; what a child sends its parent. */
struct cmd_stat_run {
	double v[F_COUNT];
	int valid;
};

/* Everything one "rperf stat" needs, in one place. */
struct cmd_stat {
	struct script_run run;	/* the script, the sampler's settings */
	const char *output;	/* as given, for messages */
	char *output_path;	/* absolute: the script may chdir */
	int report;
	size_t top;
	int json;
	long repeat;
	long pids[64];		/* forked children merged */
	size_t npids;
	int64_t start_ns;	/* CLOCK_MONOTONIC when the run began */
	int figures_fd;		/* a child of -r: where its figures go */
	int save;		/* save the profile (-o, on the last run) */
	struct cmd_stat_run figs;	/* this process's figures */
	int ran;		/* the finish hook saw the script run */
};

/* The VM state a sample was taken in: F_CPU .. F_SWEEP. */
static enum cmd_stat_figure
cmd_stat_sample_state(const struct profile *p, const struct profile_sample *s)
{
	struct profile_vm_state st = profile_sample_state(p, s);

	/* Any GVL label counts as off the GVL, any GC label as GC. */
	if (st.gvl != NULL)
		return st.gvl_state == PROFILE_STATE_GVL_WAIT ? F_WAIT :
		    F_BLOCKED;
	if (st.gc != NULL)
		return st.gc_state == PROFILE_STATE_GC_SWEEP ? F_SWEEP :
		    F_MARK;
	return F_CPU;
}

/* TV in milliseconds. */
static double
cmd_stat_tv_ms(const struct timeval *tv)
{
	return tv->tv_sec * 1e3 + tv->tv_usec / 1e3;
}

/* Fill the run's figures from the profile, the VM and the OS. */
static void
cmd_stat_collect(struct cmd_stat *st, const struct profile *p, const struct sampler_stats *ss,
    int64_t build_ns)
{
	double *v = st->figs.v;
	struct vm_gc_counters gc;
	struct rusage ru;
	const struct util_inherited *in;
	const char *c;
	size_t i;

	memset(&st->figs, 0, sizeof st->figs);
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];

		v[cmd_stat_sample_state(p, s)] +=
		    profile_sample_values(p, s)[profile_value_index(p, (size_t)-1)] / 1e6;
	}
	vm_gc_counters(&gc);
	v[F_GC_RUNS] = (double)gc.count;
	v[F_GC_MINOR] = (double)gc.minor;
	v[F_GC_MAJOR] = (double)gc.major;
	v[F_GC_TIME] = (double)gc.time_ms;
	v[F_ALLOCATED] = (double)gc.allocated;
	v[F_FREED] = (double)gc.freed;
	v[F_HEAP_PAGES] = (double)gc.heap_pages;
	/* cpu mode: the process's CPU time no sample bills (sampler-build.c) */
	if ((c = profile_comment_value(p, PROFILE_COMMENT_UNATTRIBUTED)) != NULL)
		v[F_UNBILLED] = strtod(c, NULL) / 1e6;
	v[F_THREADS] = (double)ss->threads;
	v[F_PROCESSES] = 1 + (double)st->npids;
	v[F_SAMPLES] = (double)ss->samples;
	v[F_TRIGGERS] = (double)ss->triggers;

	getrusage(RUSAGE_SELF, &ru);
	v[F_USER] = cmd_stat_tv_ms(&ru.ru_utime);
	v[F_SYS] = cmd_stat_tv_ms(&ru.ru_stime);
	v[F_REAL] = (util_mono_ns() - st->start_ns) / 1e6;
	v[F_RSS] = (double)ru.ru_maxrss;
	v[F_MINFLT] = (double)ru.ru_minflt;
	v[F_MAJFLT] = (double)ru.ru_majflt;
	v[F_NVCSW] = (double)ru.ru_nvcsw;
	v[F_NIVCSW] = (double)ru.ru_nivcsw;
	v[F_INBLOCK] = (double)ru.ru_inblock;
	v[F_OUBLOCK] = (double)ru.ru_oublock;
	if ((in = util_inherited()) != NULL) {
		/* Not this program's: what ran in the process before the exec
		 * (the peak RSS cannot be told apart). */
		v[F_USER] -= cmd_stat_tv_ms(&in->ru.ru_utime);
		v[F_SYS] -= cmd_stat_tv_ms(&in->ru.ru_stime);
		v[F_MINFLT] -= (double)in->ru.ru_minflt;
		v[F_MAJFLT] -= (double)in->ru.ru_majflt;
		v[F_NVCSW] -= (double)in->ru.ru_nvcsw;
		v[F_NIVCSW] -= (double)in->ru.ru_nivcsw;
		v[F_INBLOCK] -= (double)in->ru.ru_inblock;
		v[F_OUBLOCK] -= (double)in->ru.ru_oublock;
	}
	/* What the profiler itself cost: the job on the profiled threads,
	 * its own thread, and building the profile at the end. */
	if (v[F_REAL] > 0)
		v[F_OVERHEAD] = (ss->job_ns + ss->worker_cpu_ns + build_ns) / 1e6 /
		    v[F_REAL] * 100;
	st->figs.valid = 1;
}

/* The mean and standard deviation of figure F over RUNS. */
static void
cmd_stat_mean(const struct cmd_stat_run *runs, size_t n, int f, double *mean, double *sd)
{
	double sum = 0, sq = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (runs[i].valid) {
			sum += runs[i].v[f];
			k++;
		}
	}
	*mean = k ? sum / k : 0;
	for (i = 0; i < n; i++) {
		if (runs[i].valid)
			sq += (runs[i].v[f] - *mean) * (runs[i].v[f] - *mean);
	}
	*sd = k > 1 ? sqrt(sq / (k - 1)) : 0;
}

/* The perf-stat-like summary of RUNS to FP. */
static void
cmd_stat_print_text(const struct cmd_stat *st, const struct cmd_stat_run *runs, size_t n, FILE *fp)
{
	double mean[F_COUNT], sd[F_COUNT], profiled;
	char num[64], *cmd = st->run.script.command_line;
	size_t k = 0, i;
	int f, group = -1;

	for (i = 0; i < n; i++)
		k += runs[i].valid;
	for (f = 0; f < F_COUNT; f++)
		cmd_stat_mean(runs, n, f, &mean[f], &sd[f]);
	profiled = mean[F_CPU] + mean[F_BLOCKED] + mean[F_WAIT] + mean[F_MARK] + mean[F_SWEEP];
	fprintf(fp, "\n Performance counter stats for '%s'", cmd);
	if (k > 1)
		fprintf(fp, " (%zu runs)", k);
	fprintf(fp, " (%s mode, %d Hz):\n", st->run.cfg.mode == SAMPLER_WALL ? "wall" : "cpu",
	    st->run.cfg.frequency);
	for (f = 0; f < F_COUNT; f++) {
		const struct cmd_stat_field *d = &cmd_stat_fields[f];
		char pct[32] = "", dev[32] = "";
		int dec = strcmp(d->unit, "ms") == 0 || strcmp(d->unit, "%") == 0 ? 2 : 0;

		if (f == F_UNBILLED && st->run.cfg.mode == SAMPLER_WALL)
			continue;	/* wall time is billed: no CPU figure to compare */
		if (d->group != group) {
			fputc('\n', fp);
			group = d->group;
		}
		if (f >= F_CPU && f <= F_SWEEP && profiled > 0)
			numfmt_pct(pct, sizeof pct, mean[f], profiled);
		if (k > 1 && mean[f] != 0)
			snprintf(dev, sizeof dev, "( +-%6.2f%% )", sd[f] * 100 / fabs(mean[f]));
		fprintf(fp, "%18s %-3s %-31s %6s  ", numfmt_double(num, sizeof num, mean[f], dec),
		    d->unit, d->label, pct);
		if (dev[0] != '\0')
			fprintf(fp, "%-7s %s\n", cmd_stat_source_tag[d->source], dev);
		else
			fprintf(fp, "%s\n", cmd_stat_source_tag[d->source]);
	}
	if (st->npids > 0) {
		fprintf(fp, "\n processes: %ld (root)", (long)getpid());
		for (i = 0; i < st->npids && i < sizeof st->pids / sizeof st->pids[0]; i++)
			fprintf(fp, ", %ld", st->pids[i]);
		fputc('\n', fp);
	}
	if (k < n)
		fprintf(fp, "\n %zu of %zu runs gave no figures\n", n - k, n);
	fputc('\n', fp);
}

/* The figures as one JSON object to FP. */
static void
cmd_stat_print_json(const struct cmd_stat *st, const struct cmd_stat_run *runs, size_t n,
    int status, FILE *fp)
{
	double mean, sd;
	size_t k = 0, i;
	int f;

	for (i = 0; i < n; i++)
		k += runs[i].valid;
	fprintf(fp, "{\"command\":");
	json_write_string(fp, st->run.script.command_line, 0);
	fprintf(fp, ",\"mode\":\"%s\",\"frequency_hz\":%d,\"runs\":%zu,\"exit_status\":%d",
	    st->run.cfg.mode == SAMPLER_WALL ? "wall" : "cpu", st->run.cfg.frequency, k, status);
	for (f = 0; f < F_COUNT; f++) {
		if (f == F_UNBILLED && st->run.cfg.mode == SAMPLER_WALL)
			continue;
		cmd_stat_mean(runs, n, f, &mean, &sd);
		fprintf(fp, ",\"%s\":%.6g", cmd_stat_fields[f].key, mean);
		if (n > 1)
			fprintf(fp, ",\"%s_stddev\":%.6g", cmd_stat_fields[f].key, sd);
	}
	fprintf(fp, "}\n");
}

/* VM finish hook: stop, gather the figures, save and print them. */
static int
cmd_stat_vm_finish(void *arg, int ran)
{
	struct cmd_stat *st = arg;
	const struct format *fmt = format_by_path(st->output, FORMAT_RECORD);
	struct sampler_stats ss;
	struct profile *p;
	int64_t t0 = util_mono_ns();
	char err[512];
	int rc = 0;

	if ((p = script_run_stop(&st->run, &ss, ran)) == NULL)
		return 0;
	st->npids = script_procs_merge(&st->run.procs, &p, st->run.procs.child_timeout, st->pids,
	    sizeof st->pids / sizeof st->pids[0]);
	script_procs_release(&st->run.procs);
	cmd_stat_collect(st, p, &ss, util_mono_ns() - t0);
	st->ran = 1;
	if (st->save && profile_write_file_as(p, st->output_path, st->output,
	    fmt != NULL ? fmt : &format_pprof, NULL, err, sizeof err) != 0) {
		rc = error_print("%s", err);
	}
	if (st->figures_fd >= 0) {
		util_write_all(st->figures_fd, &st->figs, sizeof st->figs);
	} else {
		fflush(stdout);
		if (st->json)
			cmd_stat_print_json(st, &st->figs, 1, 0, stderr);
		else
			cmd_stat_print_text(st, &st->figs, 1, stderr);
	}
	if (st->run.cfg.alloc_rate > 0 && !st->report && !st->json && st->figures_fd < 0) {
		/* The top allocating methods, from the allocation samples. */
		text_write_alloc_sites(p, stderr, st->top ? st->top : 10);
		fputc('\n', stderr);
	}
	if (st->report && st->figures_fd < 0) {
		struct text_opts topts;

		text_opts_init(&topts);
		topts.top = st->top;
		text_write(p, stderr, &topts);
	}
	profile_free(p);
	return rc;
}

/* Run the script once in this process. */
static int
cmd_stat_run_vm(struct cmd_stat *st)
{
	st->start_ns = util_mono_ns();
	st->run.finish = cmd_stat_vm_finish;
	st->run.arg = st;
	return script_run(&st->run);
}

/* -r N: each run in a child; the mean and deviation at the end. */
static int
cmd_stat_repeat(struct cmd_stat *st)
{
	struct cmd_stat_run *runs = calloc((size_t)st->repeat, sizeof *runs);
	int status = 0, i, fds[2], ws;
	pid_t pid;

	if (runs == NULL) {
		error_print("out of memory");
		return RPERF_EXIT_FAILURE;
	}
	for (i = 0; i < st->repeat; i++) {
		size_t got = 0;
		ssize_t r;

		fflush(stdout);
		fflush(stderr);
		if (pipe(fds) != 0 || (pid = fork()) < 0) {
			error_print("cannot start run %d: %s", i + 1, strerror(errno));
			status = RPERF_EXIT_FAILURE;
			break;
		}
		if (pid == 0) {
			free(runs);	/* the parent's; the child sends its own */
			close(fds[0]);
			st->figures_fd = fds[1];
			st->save = st->output != NULL && i == st->repeat - 1;
			exit(cmd_stat_run_vm(st));
		}
		close(fds[1]);
		while (got < sizeof runs[i] &&
		    ((r = read(fds[0], (char *)&runs[i] + got, sizeof runs[i] - got)) > 0 ||
		    (r < 0 && errno == EINTR)))
			got += r > 0 ? (size_t)r : 0;
		close(fds[0]);
		if (got != sizeof runs[i])
			memset(&runs[i], 0, sizeof runs[i]);
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(ws)) {
			/* Interrupted: report what we have, then die alike. */
			status = 128 + WTERMSIG(ws);
			i++;
			st->repeat = i;
			break;
		}
		status = WEXITSTATUS(ws);
	}
	if (st->json)
		cmd_stat_print_json(st, runs, (size_t)st->repeat, status, stderr);
	else
		cmd_stat_print_text(st, runs, (size_t)st->repeat, stderr);
	free(runs);
	return status;
}

/* Parse the options of stat/exec; leave optind at the script. */
static void
cmd_stat_parse_options(struct cmd_stat *st, const struct cmd_entry *e, int argc, char **argv)
{
	struct cmd_getopt g;
	long v;
	int c;

	cmd_getopt_init(&g, e);
	while ((c = script_getopt(&g, argc, argv)) != -1) {
		if (script_sampler_option(e, c, optarg, &st->run.cfg))
			continue;
		switch (c) {
		case 'o':
			st->output = optarg;
			break;
		case CMD_STAT_OPT_REPORT:
			st->report = 1;
			break;
		case CMD_STAT_OPT_TOP:
			st->top = cmd_parse_top(e, optarg);
			break;
		case CMD_STAT_OPT_JSON:
			st->json = 1;
			break;
		case CMD_STAT_OPT_ALLOC:
			st->run.cfg.alloc_rate = ALLOC_DEFAULT_RATE;
			break;
		case 'r':
			if (cmd_parse_long(optarg, 1, 10000, &v) != 0)
				cmd_usage_error(e, "invalid --repeat '%s' (expected 1 to 10000)", optarg);
			st->repeat = v;
			break;
		}
	}
	cmd_getopt_release(&g);
}

/* "rperf stat" and "rperf exec". */
static int
cmd_stat_exec_common(const struct cmd_entry *e, int report, int argc, char **argv)
{
	struct cmd_stat st;
	int status;

	memset(&st, 0, sizeof st);
	script_sampler_defaults(&st.run.cfg, SAMPLER_WALL);
	st.report = report;
	st.repeat = 1;
	st.figures_fd = -1;
	st.run.procs.inherit = 1;
	st.run.procs.child_timeout = CMD_CHILD_TIMEOUT;
	cmd_stat_parse_options(&st, e, argc, argv);
	script_argv_init(&st.run.script, e, argc, argv);
	if (st.output != NULL && strcmp(st.output, "-") == 0)
		cmd_usage_error(e, "the profile cannot go to stdout: it belongs to the script");
	if (st.output != NULL)
		st.output_path = script_absolute_path(st.output);
	if (st.repeat > 1) {
		status = cmd_stat_repeat(&st);
	} else {
		st.save = st.output != NULL;
		status = cmd_stat_run_vm(&st);
	}
	script_argv_release(&st.run.script);
	free(st.output_path);
	return status;
}

/* "rperf stat". */
static int
cmd_stat_exec(int argc, char **argv)
{
	return cmd_stat_exec_common(&cmd_stat_entry, 0, argc, argv);
}

/* "rperf exec": "rperf stat --report". */
static int
cmd_stat_exec_report(int argc, char **argv)
{
	return cmd_stat_exec_common(&cmd_exec_entry, 1, argc, argv);
}

const struct cmd_entry cmd_stat_entry = {
	.name = "stat",
	.usage = "[options] [--] [ruby options] SCRIPT [ARGS...]",
	.summary = "run a Ruby script and print where its time went",
	.options = cmd_stat_options,
	.operands = "@rb",
	.exec = cmd_stat_exec,
};

const struct cmd_entry cmd_exec_entry = {
	.name = "exec",
	.usage = "[options] [--] [ruby options] SCRIPT [ARGS...]",
	.summary = "stat --report: the summary and the top tables",
	.options = cmd_stat_options,
	.operands = "@rb",
	.exec = cmd_stat_exec_report,
};
