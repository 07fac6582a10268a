/*
 * cmd-push.c: "rperf push": send saved profiles, or the spool files that
 * a run could not send, to Pyroscope's ingest API.  Each file is one
 * request, retried with backoff on 5xx and connection errors until
 * --push-timeout runs out.  A spool file is deleted only after a 2xx; any
 * other profile is never deleted.  The request itself, the checks and
 * the spool format live in push-*.c; this file only decides, per file,
 * what app, mode, tags and times it is sent with.  It never prints a
 * secret: the token comes from RPERF_PUSH_TOKEN, never from an option,
 * and neither it nor a header value nor the URL's password is shown.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "error.h"
#include "output.h"
#include "profile.h"
#include "push.h"
#include "util.h"
#include "xmalloc.h"

/* The default of --push-timeout, in seconds. */
#define PUSH_CMD_TIMEOUT_S 10.0

enum {
	CMD_PUSH_OPT_URL = 256,
	CMD_PUSH_OPT_APP_NAME,
	CMD_PUSH_OPT_TAG,
	CMD_PUSH_OPT_HEADER,
	CMD_PUSH_OPT_TENANT,
	CMD_PUSH_OPT_INSECURE,
	CMD_PUSH_OPT_MODE,
	CMD_PUSH_OPT_TIMEOUT,
};

static const struct cmd_option cmd_push_options[] = {
	{ "url", 0, 0, required_argument, "URL",
	  "the Pyroscope server (or Alloy receiver) to send to", "@text", CMD_PUSH_OPT_URL },
	{ "app-name", 0, 0, required_argument, "NAME",
	  "the application name (default: from the file)", "@text", CMD_PUSH_OPT_APP_NAME },
	{ "tag", 0, 0, required_argument, "KEY=VALUE",
	  "add a label to the series (repeatable)", "@text", CMD_PUSH_OPT_TAG },
	{ "push-header", 0, 0, required_argument, "HEADER",
	  "send the HTTP header 'Name: value' too (repeatable)", "@text", CMD_PUSH_OPT_HEADER },
	{ "tenant", 0, 0, required_argument, "ID",
	  "send X-Scope-OrgID: ID", "@text", CMD_PUSH_OPT_TENANT },
	{ "insecure", 0, 0, no_argument, NULL,
	  "do not verify the server's TLS certificate", NULL, CMD_PUSH_OPT_INSECURE },
	{ "mode", 0, 0, required_argument, "MODE",
	  "cpu or wall (default: the profile's own)", "cpu wall", CMD_PUSH_OPT_MODE },
	{ "push-timeout", 0, 0, required_argument, "SECONDS",
	  "keep retrying each file this long (default 10)", "@number", CMD_PUSH_OPT_TIMEOUT },
	{ "quiet", 'q', 0, no_argument, NULL,
	  "print nothing for the files that were sent", NULL, 'q' },
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0 }
};

/* Everything one "rperf push" run needs. */
struct cmd_push {
	struct push_config c;
	const char **tags, **headers;
	const char *app_name, *mode;
	double timeout_s;
	int quiet;
	struct push *p;
	int failed;
};

/* Parse the command line into PC; usage errors exit 2. */
static void
cmd_push_parse(struct cmd_push *pc, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_push_entry;
	struct cmd_getopt g;
	char err[512], *end;
	int c;

	pc->tags = xcalloc((size_t)argc, sizeof *pc->tags);
	pc->headers = xcalloc((size_t)argc, sizeof *pc->headers);
	cmd_getopt_init(&g, e);
	while ((c = cmd_getopt(&g, argc, argv)) != -1) {
		switch (c) {
		case CMD_PUSH_OPT_URL:
			pc->c.url = optarg;
			break;
		case CMD_PUSH_OPT_APP_NAME:
			if (push_check_app_name(optarg, err, sizeof err) != 0)
				cmd_usage_error(e, "%s", err);
			pc->app_name = optarg;
			break;
		case CMD_PUSH_OPT_TAG:
			if (push_check_tag(optarg, err, sizeof err) != 0)
				cmd_usage_error(e, "%s", err);
			pc->tags[pc->c.ntags++] = optarg;
			break;
		case CMD_PUSH_OPT_HEADER:
			if (push_check_header(optarg, err, sizeof err) != 0)
				cmd_usage_error(e, "%s", err);
			pc->headers[pc->c.nheaders++] = optarg;
			break;
		case CMD_PUSH_OPT_TENANT:
			pc->c.tenant = optarg;
			break;
		case CMD_PUSH_OPT_INSECURE:
			pc->c.insecure = 1;
			break;
		case CMD_PUSH_OPT_MODE:
			if (push_check_mode(optarg, err, sizeof err) != 0)
				cmd_usage_error(e, "%s", err);
			pc->mode = optarg;
			break;
		case CMD_PUSH_OPT_TIMEOUT:
			pc->timeout_s = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' ||
			    !(pc->timeout_s > 0 && pc->timeout_s <= 86400))
				cmd_usage_error(e, "invalid --push-timeout '%s' "
				    "(expected seconds, more than 0)", optarg);
			break;
		case 'q':
			pc->quiet = 1;
			break;
		}
	}
	cmd_getopt_release(&g);
	if (pc->c.url == NULL)
		cmd_usage_error(e, "--url is required");
	if (optind >= argc)
		cmd_usage_error(e, "no file to push");
	pc->c.tags = pc->tags;
	pc->c.headers = pc->headers;
	pc->c.token = getenv("RPERF_PUSH_TOKEN");
	if (pc->c.token != NULL && *pc->c.token == '\0')
		pc->c.token = NULL;
}

/* Read all of PATH ("-" is stdin) into *BUF, at most PROFILE_READ_MAX. */
static int
cmd_push_slurp(const char *path, uint8_t **buf, size_t *len, char *err,
    size_t errlen)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO :
	    open(path, O_RDONLY | O_CLOEXEC);
	int rc, saved;

	*buf = NULL;
	*len = 0;
	if (fd < 0) {
		error_set(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	rc = util_read_fd(fd, PROFILE_READ_MAX, NULL, buf, len);
	saved = errno;
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc != 0 && saved == EFBIG)
		error_set(err, errlen, "'%s' is too large", path);
	else if (rc != 0)
		error_set(err, errlen, "cannot read '%s': %s", path, strerror(saved));
	return rc == 0 ? 0 : -1;
}

/* The app name a file name suggests: "app.pb.gz" -> "app". */
static char *
cmd_push_app_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	char *name, *s;

	name = xstrdup(base ? base + 1 : path);
	s = strchr(name + (name[0] == '.'), '.');
	if (s != NULL)
		*s = '\0';
	for (s = name; *s != '\0'; s++) {
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("._-", *s) != NULL))
			*s = '_';
	}
	if (*name == '\0' || strcmp(path, "-") == 0) {
		free(name);
		name = xstrdup("rperf");
	}
	return name;
}

/* The sample rate of P: its "frequency" comment, else 1 s / its period. */
static int
cmd_push_sample_rate(const struct profile *p)
{
	const char *f = profile_comment_value(p, PROFILE_COMMENT_FREQUENCY);
	long v;

	if (f != NULL && cmd_parse_long(f, 1, 1000000, &v) == 0)
		return (int)v;
	if (p->period > 0 && p->period <= 1000000000 &&
	    strcmp(profile_str(p, p->period_type.unit), "nanoseconds") == 0)
		return (int)(1000000000 / p->period);
	return PUSH_DEFAULT_SAMPLE_RATE;
}

/* Fill IV from a plain profile read from PATH. */
static int
cmd_push_from_profile(struct cmd_push *pc, const char *path,
    const uint8_t *buf, size_t len, struct push_interval *iv, char *err,
    size_t errlen)
{
	struct profile *p = format_parse(buf, len, path, NULL, err, errlen);
	const char *mode;
	struct stat st;
	size_t i;

	if (p == NULL)
		return -1;
	mode = pc->mode ? pc->mode : profile_comment_value(p, PROFILE_COMMENT_MODE);
	if (mode == NULL)
		mode = profile_str(p, p->period_type.type);
	if (push_check_mode(mode, err, errlen) != 0) {
		snprintf(err, errlen, "cannot tell whether '%s' is a cpu or a wall "
		    "profile; give --mode", path);
		profile_free(p);
		return -1;
	}
	iv->mode = xstrdup(mode);
	iv->app_name = pc->app_name ? xstrdup(pc->app_name) :
	    cmd_push_app_from_path(path);
	for (i = 0; i < pc->c.ntags; i++)
		push_interval_set_tag(iv, pc->tags[i]);
	iv->sample_rate = cmd_push_sample_rate(p);
	if (p->time_nanos > 0) {
		iv->from_ns = p->time_nanos;
		iv->until_ns = profile_add_sat(p->time_nanos,
		    p->duration_nanos > 0 ? p->duration_nanos : 0);
	} else {
		/* Folded stacks carry no time: date them by the file. */
		int64_t until = strcmp(path, "-") != 0 && stat(path, &st) == 0 ?
		    (int64_t)st.st_mtime * 1000000000 : (int64_t)time(NULL) * 1000000000;

		iv->until_ns = until;
		iv->from_ns = until - (p->duration_nanos > 0 &&
		    p->duration_nanos < until ? p->duration_nanos : 1000000000);
	}
	iv->data = push_encode(p, &iv->len, err, errlen);
	profile_free(p);
	return iv->data == NULL ? -1 : 0;
}

/* Send IV, retrying until the timeout; 0 when a 2xx took it. */
static int
cmd_push_send(struct cmd_push *pc, const char *path,
    const struct push_interval *iv)
{
	char err[512];
	struct timespec ts;
	double base = 0, delay, left;
	unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	enum push_result r;
	int64_t start, now;

	start = util_mono_ns();
	push_set_deadline(pc->p, pc->timeout_s);
	for (;;) {
		r = push_send(pc->p, iv, err, sizeof err);
		if (r != PUSH_RETRY)
			break;
		delay = push_backoff(&base, &seed);
		now = util_mono_ns();
		left = pc->timeout_s - (double)(now - start) / 1e9;
		if (left <= delay)
			break;
		ts.tv_sec = (time_t)delay;
		ts.tv_nsec = (long)((delay - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	if (r == PUSH_SENT)
		return 0;
	error_print("push of '%s' to '%s' failed: %s", path, push_display_url(pc->p), err);
	return -1;
}

/* Push one file: a spool file or a plain profile. */
static void
cmd_push_file(struct cmd_push *pc, const char *path)
{
	struct push_interval iv;
	uint8_t *buf;
	size_t len, i;
	char err[1024];
	int spool = 0, rc;

	memset(&iv, 0, sizeof iv);
	rc = cmd_push_slurp(path, &buf, &len, err, sizeof err);
	if (rc == 0 && push_is_spool(buf, len)) {
		spool = strcmp(path, "-") != 0;
		rc = push_spool_parse(buf, len, path, &iv, err, sizeof err);
		if (rc == 0 && pc->app_name != NULL) {
			free(iv.app_name);
			iv.app_name = xstrdup(pc->app_name);
		}
		if (rc == 0 && pc->mode != NULL) {
			free(iv.mode);
			iv.mode = xstrdup(pc->mode);
		}
		for (i = 0; rc == 0 && i < pc->c.ntags; i++)
			push_interval_set_tag(&iv, pc->tags[i]);
	} else if (rc == 0) {
		rc = cmd_push_from_profile(pc, path, buf, len, &iv, err, sizeof err);
	}
	free(buf);
	if (rc != 0) {
		error_print("%s", err);
		pc->failed = 1;
		return;
	}
	if (cmd_push_send(pc, path, &iv) != 0) {
		pc->failed = 1;
	} else {
		if (spool && unlink(path) != 0) {
			error_print("sent '%s' but cannot delete it: %s", path,
			    strerror(errno));
			pc->failed = 1;
		}
		if (!pc->quiet)
			printf("sent '%s' to '%s'%s\n", path, push_display_url(pc->p),
			    spool ? " and deleted it" : "");
	}
	push_interval_release(&iv);
}

/* Compare two strings through pointers, for qsort. */
static int
cmd_push_strcmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Push each "*.spool" file of the directory DIR, in name order. */
static void
cmd_push_dir(struct cmd_push *pc, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	if (d == NULL) {
		error_print("cannot read '%s': %s", dir, strerror(errno));
		pc->failed = 1;
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (!push_spool_name(de->d_name))
			continue;
		xgrow((void **)&names, &cap, n + 1, sizeof *names);
		names[n++] = xasprintf("%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof *names, cmd_push_strcmp);
	for (i = 0; i < n; i++) {
		cmd_push_file(pc, names[i]);
		free(names[i]);
	}
	free(names);
}

/* "rperf push [options] FILE...". */
static int
cmd_push_exec(int argc, char **argv)
{
	struct cmd_push pc;
	struct stat st;
	char err[512];
	int i;

	memset(&pc, 0, sizeof pc);
	pc.timeout_s = PUSH_CMD_TIMEOUT_S;
	cmd_push_parse(&pc, argc, argv);
	pc.p = push_open(&pc.c, err, sizeof err);
	if (pc.p == NULL) {
		free(pc.tags);
		free(pc.headers);
		cmd_usage_error(&cmd_push_entry, "%s", err);
	}
	for (i = optind; i < argc; i++) {
		if (strcmp(argv[i], "-") != 0 && stat(argv[i], &st) == 0 &&
		    S_ISDIR(st.st_mode))
			cmd_push_dir(&pc, argv[i]);
		else
			cmd_push_file(&pc, argv[i]);
	}
	push_close(pc.p);
	free(pc.tags);
	free(pc.headers);
	if (fflush(stdout) != 0)
		pc.failed = 1;
	return pc.failed ? RPERF_EXIT_FAILURE : RPERF_EXIT_OK;
}

const struct cmd_entry cmd_push_entry = {
	.name = "push",
	.usage = "[options] FILE ...",
	.summary = "send saved or spooled profiles to Grafana Pyroscope",
	.options = cmd_push_options,
	.operands = "@pprof",
	.exec = cmd_push_exec,
};
