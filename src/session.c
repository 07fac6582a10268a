/*
 * session.c: the meeting place of a profiled run's processes (see
 * session.h).  Files in the directory: "PID.running", made by the parent
 * when it forks PID; "PID.pb.gz", the child's profile, written atomically
 * before the child removes its ".running".  Names are only ever made from
 * pids; nothing else is read from the directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "output.h"
#include "profile.h"
#include "session.h"
#include "xmalloc.h"

/* Make the directory.  0, or -1 with a message in ERR. */
int
session_create(struct session *s, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	char *templ;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	templ = xasprintf("%s/rperf-session.XXXXXX", tmp);
	if (mkdtemp(templ) == NULL) {
		error_set(err, errlen, "cannot make a session directory in '%s': %s",
		    tmp, strerror(errno));
		free(templ);
		s->dir = NULL;
		return -1;
	}
	chmod(templ, 0700);
	s->dir = templ;
	return 0;
}

/* The path of DIR/PID.EXT (to be freed). */
static char *
session_path(const struct session *s, long pid, const char *ext)
{
	return xasprintf("%s/%ld.%s", s->dir, pid, ext);
}

/* Note that PID was forked and will write a profile. */
void
session_child_started(const struct session *s, pid_t pid)
{
	char *path;
	int fd;

	if (s->dir == NULL)
		return;
	path = session_path(s, (long)pid, "running");
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	free(path);
}

/* In the child PID: save its profile for the root. */
int
session_child_write(const struct session *s, pid_t pid, const struct profile *p,
    char *err, size_t errlen)
{
	char *path, *running;
	int rc;

	if (s->dir == NULL)
		return 0;
	path = session_path(s, (long)pid, "pb.gz");
	rc = profile_write_file(p, path, PROFILE_FORMAT_PPROF, NULL, err, errlen);
	free(path);
	running = session_path(s, (long)pid, "running");
	unlink(running);
	free(running);
	return rc;
}

/* Whether any child was noted. */
int
session_has_children(const struct session *s)
{
	struct dirent *d;
	DIR *dir;
	int found = 0;

	if (s->dir == NULL || (dir = opendir(s->dir)) == NULL)
		return 0;
	while (!found && (d = readdir(dir)) != NULL)
		found = d->d_name[0] >= '0' && d->d_name[0] <= '9';
	closedir(dir);
	return found;
}

/* The pid a file name of the directory stands for, with its extension. */
static long
session_name_pid(const char *name, const char **ext)
{
	char *end;
	long pid = strtol(name, &end, 10);

	if (end == name || *end != '.' || pid <= 0)
		return -1;
	*ext = end + 1;
	return pid;
}

/* Children still running: a ".running" whose process is alive. */
static int
session_running(const struct session *s)
{
	struct dirent *d;
	const char *ext;
	DIR *dir;
	int n = 0;
	long pid;

	if ((dir = opendir(s->dir)) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		pid = session_name_pid(d->d_name, &ext);
		if (pid > 0 && strcmp(ext, "running") == 0 &&
		    (kill((pid_t)pid, 0) == 0 || errno == EPERM))
			n++;
	}
	closedir(dir);
	return n;
}

/* Compare longs, for qsort. */
static int
session_cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Merge the children's profiles into OUT. */
size_t
session_collect(const struct session *s, struct profile *out, double timeout_s,
    long *pids, size_t maxpids)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	long *found = NULL, *missing = NULL;
	size_t nfound = 0, nmissing = 0, capf = 0, capm = 0, i, merged = 0;
	int waited = 0;
	struct dirent *d;
	const char *ext;
	char err[512], *c;
	DIR *dir;
	long pid;

	if (s->dir == NULL)
		return 0;
	while (session_running(s) > 0 && waited < (int)(timeout_s * 50)) {
		nanosleep(&nap, NULL);
		waited++;
	}
	if ((dir = opendir(s->dir)) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		pid = session_name_pid(d->d_name, &ext);
		if (pid <= 0)
			continue;
		if (strcmp(ext, "pb.gz") == 0) {
			xgrow((void **)&found, &capf, nfound + 1, sizeof *found);
			found[nfound++] = pid;
		} else if (strcmp(ext, "running") == 0) {
			xgrow((void **)&missing, &capm, nmissing + 1, sizeof *missing);
			missing[nmissing++] = pid;
		}
	}
	closedir(dir);
	qsort(found, nfound, sizeof *found, session_cmp_long);
	qsort(missing, nmissing, sizeof *missing, session_cmp_long);
	for (i = 0; i < nfound; i++) {
		char *path = session_path(s, found[i], "pb.gz");
		struct profile *p = profile_read(path, err, sizeof err);

		free(path);
		if (p == NULL || profile_merge(out, p, "pid", found[i]) != 0) {
			fprintf(stderr, "rperf: the profile of process %ld is unusable: %s\n",
			    found[i], p == NULL ? err : "different sample types");
			xgrow((void **)&missing, &capm, nmissing + 1, sizeof *missing);
			missing[nmissing++] = found[i];
		} else {
			if (merged < maxpids)
				pids[merged] = found[i];
			merged++;
			c = xasprintf("process: %ld", found[i]);
			profile_add_comment(out, c);
			free(c);
		}
		profile_free(p);
	}
	for (i = 0; i < nmissing; i++) {
		c = xasprintf("missing process: %ld (still running or killed before "
		    "it could save its profile)", missing[i]);
		profile_add_comment(out, c);
		free(c);
		fprintf(stderr, "rperf: no profile from process %ld (still running "
		    "or killed)\n", missing[i]);
	}
	free(found);
	free(missing);
	return merged;
}

/* Remove the directory and what is in it; free S. */
void
session_remove(struct session *s)
{
	struct dirent *d;
	DIR *dir;

	if (s->dir == NULL)
		return;
	if ((dir = opendir(s->dir)) != NULL) {
		while ((d = readdir(dir)) != NULL) {
			char *path;

			if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
				continue;
			path = xasprintf("%s/%s", s->dir, d->d_name);
			unlink(path);
			free(path);
		}
		closedir(dir);
	}
	rmdir(s->dir);
	free(s->dir);
	s->dir = NULL;
}
