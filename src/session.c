/*
 * session.c: the meeting place of a profiled run's processes (see
 * session.h).  Files in the directory: "PID.ID.running", made by the
 * parent when it forks PID by the fork of id ID; "PID.ID.pb.gz", the
 * child's profile, written through a temporary file and renamed into
 * place before the child removes its ".running".  The id tells apart two
 * children that had the same pid.  Names are only ever made from pids
 * and ids; nothing else is read from the directory, and never through a
 * symlink.
 *
 * No descriptor of it is kept open between uses: one would take a number
 * the program's next open gets under plain ruby, show in its own checks
 * of open descriptors (Ruby's test runner reports it as leaked by a test
 * that forks), and could be closed by it (a daemon closing every
 * descriptor).  Each use opens the directory by its absolute path and
 * goes on only if what it opened is still the directory made for the
 * run: the same device, inode and birth time (where the file system
 * keeps one: an inode number freed by a removal is soon given again),
 * owned by the same user, mode 0700.
 * Another user can neither remove nor rename it while it exists (it is
 * made in a sticky /tmp or in TMPDIR), and one recreated under the same
 * name once it is gone is not it.  Everything is then done relative to
 * that descriptor, which is closed after.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
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

/* What identifies the directory open as FD into *ID; 0 or -1. */
static int
session_id_of(int fd, struct session_id *id)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
	    STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO | STATX_NLINK | STATX_BTIME,
	    &sx) != 0)
		return -1;
	memset(id, 0, sizeof *id);
	id->dev_major = sx.stx_dev_major;
	id->dev_minor = sx.stx_dev_minor;
	id->ino = sx.stx_ino;
	id->uid = sx.stx_uid;
	id->mode = sx.stx_mode;
	id->linked = sx.stx_nlink > 0;
	if (sx.stx_mask & STATX_BTIME) {
		id->btime_sec = sx.stx_btime.tv_sec;
		id->btime_nsec = sx.stx_btime.tv_nsec;
	}
	return 0;
}

/* TMPDIR as it was when the run started, and made absolute there when
 * it was relative (NULL if unset, or absolute already). */
static char *session_tmpdir_start, *session_tmpdir_abs;

/* See session.h. */
void
session_note_tmpdir(void)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0' || *tmp == '/' || session_tmpdir_start != NULL)
		return;
	session_tmpdir_start = xstrdup(tmp);
	session_tmpdir_abs = realpath(tmp, NULL);	/* NULL if it names nothing */
}

/* No directory yet. */
void
session_init(struct session *s)
{
	s->dir = NULL;
	memset(&s->id, 0, sizeof s->id);
	s->failed = 0;
	s->forks = 0;
	s->self = 0;
}

/* Make the directory unless it is there already. */
int
session_create(struct session *s, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	struct session_id id;
	char *templ, *abs;
	int fd;

	if (s->dir != NULL)
		return 0;
	if (s->failed)
		return -1;
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	/* A relative TMPDIR the script has not changed is where it was when
	 * the run started, whatever directory the script is in by now. */
	else if (session_tmpdir_start != NULL && session_tmpdir_abs != NULL &&
	    strcmp(tmp, session_tmpdir_start) == 0)
		tmp = session_tmpdir_abs;
	templ = xasprintf("%s/rperf-session.XXXXXX", tmp);
	if (mkdtemp(templ) == NULL) {
		error_set(err, errlen, "cannot make a session directory in '%s': %s",
		    tmp, strerror(errno));
		goto fail;
	}
	/* Absolute, so that a script's chdir does not lose it (TMPDIR may
	 * be relative). */
	if ((abs = realpath(templ, NULL)) == NULL) {
		error_set(err, errlen, "cannot find the session directory '%s': %s",
		    templ, strerror(errno));
		rmdir(templ);
		goto fail;
	}
	free(templ);
	templ = abs;
	/* mkdtemp made it 0700 and it is empty: what we open now is it. */
	fd = open(templ, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 || fchmod(fd, 0700) != 0 || session_id_of(fd, &id) != 0) {
		error_set(err, errlen, "cannot open the session directory '%s': %s",
		    templ, strerror(errno));
		if (fd != -1)
			close(fd);
		rmdir(templ);
		goto fail;
	}
	close(fd);
	s->dir = templ;
	s->id = id;
	return 0;

fail:
	free(templ);
	s->failed = 1;
	return -1;
}

/* Whether the directory is there to be used. */
int
session_active(const struct session *s)
{
	return s->dir != NULL;
}

/*
 * A descriptor of the directory made for the run, to be closed; -1 if
 * there is none, or if its path no longer names it (removed when the run
 * ended, and perhaps made again by someone else).
 */
static int
session_open(const struct session *s)
{
	struct session_id id;
	int fd;

	if (s->dir == NULL)
		return -1;
	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return -1;
	/* Every field as when it was made, its mode (0700) too. */
	if (session_id_of(fd, &id) != 0 || !id.linked || memcmp(&id, &s->id, sizeof id) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The name PID.ID.EXT of the child PID of fork ID, PID.EXT for id 0 (to
 * be freed). */
static char *
session_name(long pid, uint64_t id, const char *ext)
{
	if (id == 0)
		return xasprintf("%ld.%s", pid, ext);
	return xasprintf("%ld.%" PRIu64 ".%s", pid, id, ext);
}

/* Right before this process forks: the id of that fork. */
uint64_t
session_fork_id(struct session *s)
{
	return (uint64_t)(uint32_t)getpid() << 32 | ++s->forks;
}

/* In the child made by the fork of id ID. */
void
session_in_child(struct session *s, uint64_t id)
{
	s->self = id;
	s->forks = 0;
}

/* Note that PID was forked and will write a profile.  The parent runs
 * this after fork() returns, and a short-lived child may have written its
 * profile (and found no ".running" to remove) by then: a ".running" made
 * after that would stand for a child that never reports.  The child
 * renames its profile into place before it unlinks ".running", so looking
 * for the profile after making ".running" sees it in every order. */
void
session_child_started(const struct session *s, pid_t pid, uint64_t id)
{
	char *name, *done;
	struct stat st;
	int dfd, fd;

	if ((dfd = session_open(s)) == -1)
		return;
	name = session_name((long)pid, id, "running");
	done = session_name((long)pid, id, "pb.gz");
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	if (fstatat(dfd, done, &st, AT_SYMLINK_NOFOLLOW) == 0)
		unlinkat(dfd, name, 0);
	close(dfd);
	free(done);
	free(name);
}

/* In the child PID: save its profile for the root. */
int
session_child_write(const struct session *s, pid_t pid, const struct profile *p,
    char *err, size_t errlen)
{
	char *name, *shown;
	int dfd, rc;

	if (s->dir == NULL)
		return 0;
	/* The root stopped waiting and removed it (--child-timeout); its
	 * name may have been taken since. */
	if ((dfd = session_open(s)) == -1) {
		error_set(err, errlen, "profile not saved: the session directory '%s' "
		    "was removed when the run ended (see --child-timeout)", s->dir);
		return -1;
	}
	name = session_name((long)pid, s->self, "pb.gz");
	shown = xasprintf("%s/%s", s->dir, name);
	rc = profile_write_at(p, dfd, name, &format_pprof, shown, err, errlen);
	free(shown);
	free(name);
	name = session_name((long)pid, s->self, "running");
	unlinkat(dfd, name, 0);
	free(name);
	close(dfd);
	return rc;
}

/* A new stream over the directory, from its start; NULL if none. */
static DIR *
session_opendir(const struct session *s)
{
	DIR *dir;
	int fd;

	if ((fd = session_open(s)) == -1)
		return NULL;
	if ((dir = fdopendir(fd)) == NULL)
		close(fd);
	return dir;
}

/* Whether any child was noted. */
int
session_has_children(const struct session *s)
{
	struct dirent *d;
	DIR *dir;
	int found = 0;

	if ((dir = session_opendir(s)) == NULL)
		return 0;
	while (!found && (d = readdir(dir)) != NULL)
		found = d->d_name[0] >= '0' && d->d_name[0] <= '9';
	closedir(dir);
	return found;
}

/* The pid a file name of the directory stands for, with its extension
 * (after the token, when there is one). */
static long
session_name_pid(const char *name, const char **ext)
{
	const char *id;
	char *end;
	long pid = strtol(name, &end, 10);

	if (end == name || *end != '.' || pid <= 0)
		return -1;
	*ext = end + 1;
	id = *ext + strspn(*ext, "0123456789");
	if (id > *ext && *id == '.')
		*ext = id + 1;
	return pid;
}

/* Whether process PID is alive: not gone, and not a zombie either (a
 * child that crashed stays one until the script waits for it, and must
 * not hold the root for the whole --child-timeout). */
static int
session_alive(long pid)
{
	char path[64], buf[512], *paren;
	FILE *fp;
	size_t n;

	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return 0;
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 1;
	n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* "PID (COMM) STATE ...", where COMM may hold anything. */
	paren = strrchr(buf, ')');
	return paren == NULL || paren[1] != ' ' || (paren[2] != 'Z' && paren[2] != 'X');
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

	if ((dir = session_opendir(s)) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		pid = session_name_pid(d->d_name, &ext);
		if (pid > 0 && strcmp(ext, "running") == 0 && session_alive(pid))
			n++;
	}
	closedir(dir);
	return n;
}

/* A child's file found in the directory. */
struct session_file {
	long pid;
	char *name;
};

/* Order files by pid, then name, for qsort. */
static int
session_cmp_file(const void *a, const void *b)
{
	const struct session_file *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return strcmp(x->name, y->name);
}

/* Append file NAME of PID to *LIST. */
static void
session_file_add(struct session_file **list, size_t *n, size_t *cap, long pid,
    const char *name)
{
	xgrow((void **)list, cap, *n + 1, sizeof **list);
	(*list)[*n].pid = pid;
	(*list)[*n].name = xstrdup(name);
	(*n)++;
}

/* Free LIST of N files. */
static void
session_files_free(struct session_file *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i].name);
	free(list);
}

/* Merge the children's profiles into OUT. */
size_t
session_collect(const struct session *s, struct profile *out, double timeout_s,
    long *pids, size_t maxpids)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	struct session_file *found = NULL, *missing = NULL;
	size_t nfound = 0, nmissing = 0, capf = 0, capm = 0, i, merged = 0;
	int waited = 0;
	struct dirent *d;
	const char *ext;
	char err[512];
	DIR *dir;
	long pid;

	if (s->dir == NULL)
		return 0;
	while (session_running(s) > 0 && waited < (int)(timeout_s * 50)) {
		nanosleep(&nap, NULL);
		waited++;
	}
	if ((dir = session_opendir(s)) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL) {
		pid = session_name_pid(d->d_name, &ext);
		if (pid <= 0)
			continue;
		if (strcmp(ext, "pb.gz") == 0)
			session_file_add(&found, &nfound, &capf, pid, d->d_name);
		else if (strcmp(ext, "running") == 0)
			session_file_add(&missing, &nmissing, &capm, pid, d->d_name);
	}
	if (nfound > 1)
		qsort(found, nfound, sizeof *found, session_cmp_file);
	if (nmissing > 1)
		qsort(missing, nmissing, sizeof *missing, session_cmp_file);
	for (i = 0; i < nfound; i++) {
		char *shown = xasprintf("%s/%s", s->dir, found[i].name);
		struct profile *p = profile_read_at(dirfd(dir), found[i].name, shown, err,
		    sizeof err);

		free(shown);
		if (p == NULL || profile_merge(out, p, "pid", found[i].pid) != 0) {
			error_print("the profile of process %ld is unusable: %s",
			    found[i].pid, p == NULL ? err : "different sample types");
			session_file_add(&missing, &nmissing, &capm, found[i].pid,
			    found[i].name);
		} else {
			if (merged < maxpids)
				pids[merged] = found[i].pid;
			merged++;
			profile_add_meta(out, PROFILE_COMMENT_PROCESS, "%ld", found[i].pid);
		}
		profile_free(p);
	}
	for (i = 0; i < nmissing; i++) {
		profile_add_meta(out, PROFILE_COMMENT_MISSING_PROCESS, "%ld (still "
		    "running or killed before it could save its profile)", missing[i].pid);
		error_print("no profile from process %ld (still running or killed)",
		    missing[i].pid);
	}
	closedir(dir);
	session_files_free(found, nfound);
	session_files_free(missing, nmissing);
	return merged;
}

/* Unlink everything in the directory: profiles, ".running" files, and
 * the temporary file of a child that crashed while writing. */
static void
session_empty(const struct session *s)
{
	struct dirent *d;
	DIR *dir;

	if ((dir = session_opendir(s)) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			unlinkat(dirfd(dir), d->d_name, 0);
	}
	closedir(dir);
}

/* Remove the directory and what is in it; close and free S. */
void
session_remove(struct session *s)
{
	int fd, tries;

	if (s->dir == NULL)
		return;
	/* A late child may add a file between the emptying and the rmdir;
	 * the path is removed only while it still names our directory. */
	for (tries = 0; tries < 3; tries++) {
		session_empty(s);
		if ((fd = session_open(s)) == -1)
			break;
		close(fd);
		if (rmdir(s->dir) == 0 || errno != ENOTEMPTY)
			break;
	}
	free(s->dir);
	session_init(s);
}
