/*
 * output.c: atomic profile writes and capped profile reads (see
 * output.h); what a format is and how its content is recognised is the
 * table's business, in formats.c.
 *
 * A profile write must never leave a half-written file where a good one
 * was, nor a stray temporary file: regular files are written beside the
 * target with mkstemp, checked at every step (write, flush, close) and
 * put in its place only when all of that succeeded.  Nothing is fsynced:
 * the rename is what makes the file whole-or-untouched for every reader,
 * and making it survive a power cut as well would cost each run a disk
 * flush (milliseconds on a slow disk, at the end of every profiled run)
 * for a file that a rerun makes again.  The uploader's spool files,
 * which must outlive the run, are synced by push-spool.c.  Reads trust
 * neither the file size nor the content: both are capped and the parsers
 * validate everything.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "output.h"
#include "util.h"
#include "xmalloc.h"

/* What profile_write_file hands to output_write_file. */
struct output_profile_arg {
	const struct profile *p;
	const struct format *fmt;
	const struct format_opts *o;
};

/* output_write_fn for a profile in a format. */
static int
output_profile_fn(FILE *fp, void *arg)
{
	const struct output_profile_arg *a = arg;

	return a->fmt->write(a->p, fp, a->o);
}

/* Write straight into FD, an existing special file (device, FIFO). */
static int
output_write_direct(int fd, output_write_fn fn, void *arg)
{
	FILE *fp = fdopen(fd, "w");
	int saved;

	if (fp == NULL) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	errno = 0;
	if (fn(fp, arg) != 0) {
		saved = errno;
		fclose(fp);
		errno = saved;
		return -1;
	}
	return fclose(fp);
}

/* A fresh temporary name for NAME: NAME.tmpXXXXXX (to be freed).  Only
 * uniqueness matters here; O_EXCL makes the creation safe. */
static char *
output_tmp_name(const char *name)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned long long counter;
	struct timespec ts;
	unsigned long long x;
	char suffix[7];
	int i;

	clock_gettime(CLOCK_REALTIME, &ts);
	x = ((unsigned long long)ts.tv_nsec << 20) ^ (unsigned long long)ts.tv_sec ^
	    ((unsigned long long)getpid() << 40) ^ (++counter * 0x9e3779b97f4a7c15ULL);
	for (i = 0; i < 6; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		suffix[i] = chars[x % (sizeof chars - 1)];
	}
	suffix[6] = '\0';
	return xasprintf("%s.tmp%s", name, suffix);
}

/* Rename TMP to NAME in DIRFD, failing with EEXIST when NAME exists. */
static int
output_rename_noreplace(int dirfd, const char *tmp, const char *name)
{
	if (renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: link() never replaces. */
	if (linkat(dirfd, tmp, dirfd, name, 0) != 0)
		return -1;
	unlinkat(dirfd, tmp, 0);
	return 0;
}

/*
 * Put TMP in place of the existing file NAME in DIRFD.  The two names
 * are swapped, then the old file (now under TMP) is removed: NAME points
 * at one whole file or the other at every moment, as with a rename over
 * it, but without the disk write ext4 starts when a rename replaces a
 * file (its guard for programs that do not fsync; some 0.4 ms at the end
 * of every run that rewrites rperf.data on the machines here, and
 * durability is not what this write promises, see above).  Where the
 * swap is not there (a file system without it, or NAME gone meanwhile),
 * a plain rename.  Where what was swapped out cannot be removed (a
 * directory put at NAME meanwhile, which a rename would not replace),
 * it is swapped back and the write fails as the rename would have.
 */
static int
output_rename_over(int dirfd, const char *tmp, const char *name)
{
	int saved;

	if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) != 0)
		return renameat(dirfd, tmp, dirfd, name);
	if (unlinkat(dirfd, tmp, 0) == 0)
		return 0;
	saved = errno;
	renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE);
	errno = saved;
	return -1;
}

/*
 * Write into a new temporary file beside NAME in DIRFD (O_EXCL, so never
 * through a link), then rename it into place.  OLD is the regular file
 * being replaced, whose mode and (when we may) owner the new one keeps;
 * NULL for a new file, which gets 0666 less the umask.
 */
static int
output_write_atomic(int dirfd, const char *name, const struct stat *old, int flags,
    output_write_fn fn, void *arg)
{
	char *tmp = NULL;
	FILE *fp = NULL;
	mode_t mask;
	int fd = -1, saved, tries;

	for (tries = 0; fd == -1 && tries < 100; tries++) {
		free(tmp);
		tmp = output_tmp_name(name);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
		if (fd == -1 && errno != EEXIST)
			break;
	}
	if (fd == -1) {
		saved = errno;
		free(tmp);
		errno = saved;
		return -1;
	}
	if (old != NULL) {
		/* Root can give the file back to its owner; anyone can keep
		 * its group if they are in it.  The mode is kept even when
		 * the owner cannot be (a 0600 file stays private). */
		if (fchown(fd, old->st_uid, old->st_gid) != 0 &&
		    fchown(fd, (uid_t)-1, old->st_gid) != 0)
			errno = 0;
		if (fchmod(fd, old->st_mode & 0777) != 0)
			goto fail;
	} else {
		mask = umask(0);
		umask(mask);
		if (fchmod(fd, 0666 & ~mask) != 0)
			goto fail;
	}
	fp = fdopen(fd, "w");
	if (fp == NULL)
		goto fail;
	fd = -1;
	errno = 0;
	if (fn(fp, arg) != 0)
		goto fail;
	if (fflush(fp) != 0 || ferror(fp))
		goto fail;
	if (fclose(fp) != 0) {
		fp = NULL;
		goto fail;
	}
	fp = NULL;
	if ((flags & OUTPUT_NOREPLACE) ? output_rename_noreplace(dirfd, tmp, name) != 0 :
	    old != NULL ? output_rename_over(dirfd, tmp, name) != 0 :
	    renameat(dirfd, tmp, dirfd, name) != 0)
		goto fail;
	free(tmp);
	return 0;

fail:
	saved = errno ? errno : EIO;
	if (fp != NULL)
		fclose(fp);
	if (fd != -1)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	free(tmp);
	errno = saved;
	return -1;
}

int
output_write_at(int dirfd, const char *name, int flags, output_write_fn fn, void *arg,
    const char *display, char *err, size_t errlen)
{
	struct stat st;
	int rc;

	if (!(flags & OUTPUT_NOREPLACE) &&
	    fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
		rc = output_write_atomic(dirfd, name, &st, flags, fn, arg);
	else
		rc = output_write_atomic(dirfd, name, NULL, flags, fn, arg);
	if (rc != 0)
		error_set(err, errlen, "cannot write '%s': %s", display,
		    strerror(errno ? errno : EIO));
	return rc;
}

/* Open the directory holding PATH and point *BASE at its last component;
 * the directory fd, or -1 with errno set. */
static int
output_open_parent(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd, saved;

	if (slash == NULL) {
		*base = path;
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	*base = slash + 1;
	if (**base == '\0') {
		errno = EISDIR;
		return -1;
	}
	dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	saved = errno;
	free(dir);
	errno = saved;
	return fd;
}

/*
 * Whether a symlink LINK in directory DIR may be followed: the rule of
 * Linux's fs.protected_symlinks, applied whatever that sysctl says, so
 * that another user's link planted in a shared sticky directory such as
 * /tmp cannot send our output onto a file of theirs choosing.
 */
static int
output_may_follow(const struct stat *dir, const struct stat *link)
{
	if (!(dir->st_mode & S_ISVTX) || !(dir->st_mode & S_IWOTH))
		return 1;
	return link->st_uid == geteuid() || link->st_uid == dir->st_uid;
}

/* The path a symlink NAME in DIRFD, beside PATH, points at (to be
 * freed), or NULL with errno set. */
static char *
output_link_target(int dirfd, const char *name, const char *path)
{
	char buf[PATH_MAX];
	const char *slash;
	ssize_t n = readlinkat(dirfd, name, buf, sizeof buf - 1);

	if (n < 0)
		return NULL;
	if (n == sizeof buf - 1) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	buf[n] = '\0';
	if (buf[0] == '/' || (slash = strrchr(path, '/')) == NULL)
		return xstrdup(buf);
	return xasprintf("%.*s/%s", (int)(slash - path), path, buf);
}

char *
output_absolute_path(const char *path)
{
	char *cwd, *abs;

	if (path[0] == '/' || (cwd = getcwd(NULL, 0)) == NULL)
		return xstrdup(path);
	abs = xasprintf("%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", path);
	free(cwd);
	return abs;
}

int
output_write_file(const char *path, output_write_fn fn, void *arg, char *err,
    size_t errlen)
{
	return output_write_file_as(path, path, fn, arg, err, errlen);
}

int
output_write_file_as(const char *path, const char *display, output_write_fn fn, void *arg,
    char *err, size_t errlen)
{
	struct stat st, dst;
	const char *base;
	char *cur = NULL, *next;
	int rc = -1, dirfd = -1, fd, hops;

	if (strcmp(path, "-") == 0) {
		errno = 0;
		rc = fn(stdout, arg);
		if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
			rc = -1;
		if (rc != 0) {
			error_set(err, errlen, "cannot write to standard "
			    "output: %s", strerror(errno ? errno : EIO));
			clearerr(stdout);
		}
		return rc;
	}

	/*
	 * Follow symlinks at the last component one at a time (the user
	 * named the link), each only if output_may_follow allows it; the
	 * file finally replaced is named relative to its directory's fd, so
	 * no later swap of a path component can redirect the write.
	 */
	cur = xstrdup(path);
	for (hops = 0; hops < 40; hops++) {
		if ((dirfd = output_open_parent(cur, &base)) == -1)
			goto fail;
		if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				goto fail;
			rc = output_write_atomic(dirfd, base, NULL, 0, fn, arg);
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			if (fstat(dirfd, &dst) != 0)
				goto fail;
			if (!output_may_follow(&dst, &st)) {
				error_set(err, errlen, "cannot write '%s': not following "
				    "a symbolic link another user owns in a shared directory",
				    display);
				goto out_quiet;
			}
			/* A device or FIFO behind it (/dev/stdout): the kernel
			 * follows the rest, as a shell redirection would. */
			if (fstatat(dirfd, base, &dst, 0) == 0 && !S_ISREG(dst.st_mode) &&
			    !S_ISDIR(dst.st_mode)) {
				fd = openat(dirfd, base, O_WRONLY | O_NOCTTY | O_CLOEXEC);
				rc = fd == -1 ? -1 : output_write_direct(fd, fn, arg);
				goto out;
			}
			if ((next = output_link_target(dirfd, base, cur)) == NULL)
				goto fail;
			free(cur);
			cur = next;
			close(dirfd);
			dirfd = -1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			goto fail;
		}
		if (!S_ISREG(st.st_mode)) {
			fd = openat(dirfd, base, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
			rc = fd == -1 ? -1 : output_write_direct(fd, fn, arg);
			goto out;
		}
		rc = output_write_atomic(dirfd, base, &st, 0, fn, arg);
		goto out;
	}
	errno = ELOOP;
fail:
	rc = -1;
out:
	if (rc != 0)
		error_set(err, errlen, "cannot write '%s': %s", display,
		    strerror(errno ? errno : EIO));
out_quiet:
	if (dirfd != -1)
		close(dirfd);
	free(cur);
	return rc;
}

int
profile_write_file(const struct profile *p, const char *path,
    const struct format *fmt, const struct format_opts *o, char *err,
    size_t errlen)
{
	return profile_write_file_as(p, path, path, fmt, o, err, errlen);
}

int
profile_write_file_as(const struct profile *p, const char *path, const char *display,
    const struct format *fmt, const struct format_opts *o, char *err,
    size_t errlen)
{
	struct output_profile_arg a = { p, fmt, o };

	if (fmt == NULL) {
		error_set(err, errlen, "no format to write '%s' in", display);
		return -1;
	}
	return output_write_file_as(path, display, output_profile_fn, &a, err, errlen);
}

int
profile_write_new(const struct profile *p, const char *path, const char *display,
    const struct format *fmt, char *err, size_t errlen)
{
	struct output_profile_arg a = { p, fmt, NULL };
	const char *base;
	int dirfd, rc;

	if ((dirfd = output_open_parent(path, &base)) == -1) {
		error_set(err, errlen, "cannot write '%s': %s", display, strerror(errno));
		return -1;
	}
	rc = output_write_at(dirfd, base, OUTPUT_NOREPLACE, output_profile_fn, &a, display,
	    err, errlen);
	close(dirfd);
	return rc;
}

int
profile_write_at(const struct profile *p, int dirfd, const char *name,
    const struct format *fmt, const char *display, char *err, size_t errlen)
{
	struct output_profile_arg a = { p, fmt, NULL };

	return output_write_at(dirfd, name, 0, output_profile_fn, &a, display, err, errlen);
}

/* Read and parse FD, naming it NAME in errors; closes FD unless it is
 * standard input. */
static struct profile *
output_read_fd(int fd, const char *name, const struct format **fmt, char *err,
    size_t errlen)
{
	struct profile *p;
	char names[128];
	uint8_t *buf;
	size_t len;
	int rc;

	if ((rc = util_read_fd(fd, PROFILE_READ_MAX, format_first_byte_ok, &buf,
	    &len)) != 0) {
		if (rc == -2)
			error_set(err, errlen, "'%s' is not a %s profile", name,
			    format_names(FORMAT_READ, NULL, names, sizeof names));
		else if (errno == EFBIG)
			error_set(err, errlen, "'%s' is too large (more "
			    "than %zu MiB)", name, PROFILE_READ_MAX >> 20);
		else
			error_set(err, errlen, "cannot read '%s': %s",
			    name, strerror(errno));
		if (fd != STDIN_FILENO)
			close(fd);
		return NULL;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	p = format_parse(buf, len, name, fmt, err, errlen);
	free(buf);
	return p;
}

struct profile *
profile_read_format(const char *path, const struct format **fmt, char *err,
    size_t errlen)
{
	int fd, stdin_ = strcmp(path, "-") == 0;

	if (fmt != NULL)
		*fmt = NULL;
	fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		error_set(err, errlen, "cannot read '%s': %s", path,
		    strerror(errno));
		return NULL;
	}
	return output_read_fd(fd, path, fmt, err, errlen);
}

struct profile *
profile_read_at(int dirfd, const char *name, const char *display, char *err,
    size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd == -1) {
		error_set(err, errlen, "cannot read '%s': %s", display, strerror(errno));
		return NULL;
	}
	return output_read_fd(fd, display, NULL, err, errlen);
}

struct profile *
profile_read(const char *path, char *err, size_t errlen)
{
	return profile_read_format(path, NULL, err, errlen);
}
