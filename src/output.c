/*
 * output.c: formats by name and extension, atomic profile writes and
 * capped, content-sniffing profile reads (see output.h).
 *
 * A profile write must never leave a half-written file where a good one
 * was, nor a stray temporary file: regular files are written beside the
 * target with mkstemp, checked at every step (write, flush, fsync, close)
 * and renamed over it only when all of that succeeded.  Reads trust
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
#include <unistd.h>

#include "error.h"
#include "folded.h"
#include "output.h"
#include "pprof.h"
#include "xmalloc.h"

/* Names and extensions of the formats. */
static const struct {
	enum profile_format fmt;
	const char *name;
} output_names[] = {
	{ PROFILE_FORMAT_PPROF, "pprof" },
	{ PROFILE_FORMAT_FOLDED, "folded" },
	{ PROFILE_FORMAT_TEXT, "text" },
};
static const struct {
	const char *ext;
	enum profile_format fmt;
} output_exts[] = {
	{ ".pb.gz", PROFILE_FORMAT_PPROF },
	{ ".pprof", PROFILE_FORMAT_PPROF },
	{ ".pb", PROFILE_FORMAT_PPROF },
	{ ".data", PROFILE_FORMAT_PPROF },
	{ ".folded", PROFILE_FORMAT_FOLDED },
	{ ".collapsed", PROFILE_FORMAT_FOLDED },
	{ ".txt", PROFILE_FORMAT_TEXT },
};
#define OUTPUT_NITEMS(a) (sizeof (a) / sizeof (a)[0])

enum profile_format
profile_format_from_name(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < OUTPUT_NITEMS(output_names); i++) {
		if (strcmp(name, output_names[i].name) == 0)
			return output_names[i].fmt;
	}
	return PROFILE_FORMAT_NONE;
}

enum profile_format
profile_format_from_path(const char *path)
{
	size_t i, len, elen;

	if (path == NULL)
		return PROFILE_FORMAT_NONE;
	len = strlen(path);
	for (i = 0; i < OUTPUT_NITEMS(output_exts); i++) {
		elen = strlen(output_exts[i].ext);
		if (len > elen &&
		    strcmp(path + len - elen, output_exts[i].ext) == 0 &&
		    path[len - elen - 1] != '/')
			return output_exts[i].fmt;
	}
	return PROFILE_FORMAT_NONE;
}

const char *
profile_format_name(enum profile_format fmt)
{
	size_t i;

	for (i = 0; i < OUTPUT_NITEMS(output_names); i++) {
		if (output_names[i].fmt == fmt)
			return output_names[i].name;
	}
	return "none";
}

/* Write P as FMT to FP; -1 with errno set on failure. */
static int
output_write_stream(const struct profile *p, FILE *fp,
    enum profile_format fmt, const struct text_opts *topts)
{
	char perr[256];
	size_t vi = p->default_value;

	if (topts != NULL && topts->value_index < p->nvalue_types)
		vi = topts->value_index;
	switch (fmt) {
	case PROFILE_FORMAT_PPROF:
		if (pprof_write(p, fp, perr, sizeof perr) != 0) {
			if (errno == 0)
				errno = EIO;
			return -1;
		}
		return 0;
	case PROFILE_FORMAT_FOLDED:
		return folded_write(p, fp, vi);
	case PROFILE_FORMAT_TEXT:
		return text_write(p, fp, topts);
	default:
		errno = EINVAL;
		return -1;
	}
}

/* What profile_write_file hands to output_write_file. */
struct output_profile_arg {
	const struct profile *p;
	enum profile_format fmt;
	const struct text_opts *topts;
};

/* output_write_fn for a profile in a format. */
static int
output_profile_fn(FILE *fp, void *arg)
{
	const struct output_profile_arg *a = arg;

	return output_write_stream(a->p, fp, a->fmt, a->topts);
}

/* Write straight into an existing special file (device, FIFO). */
static int
output_write_direct(const char *path, output_write_fn fn, void *arg)
{
	FILE *fp = fopen(path, "w");
	int saved;

	if (fp == NULL)
		return -1;
	errno = 0;
	if (fn(fp, arg) != 0) {
		saved = errno;
		fclose(fp);
		errno = saved;
		return -1;
	}
	return fclose(fp);
}

/* Sync the directory holding PATH so a rename survives a crash. */
static void
output_sync_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int fd;

	if (slash == NULL)
		strcpy(dir, ".");
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd != -1) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/* Write into a temporary file beside TARGET, then rename it into place. */
static int
output_write_atomic(const char *target, output_write_fn fn, void *arg)
{
	char *tmp = xasprintf("%s.tmpXXXXXX", target);
	FILE *fp = NULL;
	mode_t mask;
	int fd, saved;

	fd = mkstemp(tmp);
	if (fd == -1)
		goto fail;
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0)
		goto fail;
	fp = fdopen(fd, "w");
	if (fp == NULL)
		goto fail;
	fd = -1;
	errno = 0;
	if (fn(fp, arg) != 0)
		goto fail;
	if (fflush(fp) != 0 || ferror(fp) || fsync(fileno(fp)) != 0)
		goto fail;
	if (fclose(fp) != 0) {
		fp = NULL;
		goto fail;
	}
	fp = NULL;
	if (rename(tmp, target) != 0)
		goto fail;
	output_sync_dir(target);
	free(tmp);
	return 0;

fail:
	saved = errno ? errno : EIO;
	if (fp != NULL)
		fclose(fp);
	if (fd != -1)
		close(fd);
	unlink(tmp);		/* harmless when mkstemp failed: no such file */
	free(tmp);
	errno = saved;
	return -1;
}

int
output_write_file(const char *path, output_write_fn fn, void *arg, char *err,
    size_t errlen)
{
	struct stat st;
	char *real = NULL;
	const char *target = path;
	int rc;

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

	/* Replace what a symlink points at, not the link itself. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) &&
	    (real = realpath(path, NULL)) != NULL)
		target = real;
	if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		rc = -1;
	} else if (stat(target, &st) == 0 && !S_ISREG(st.st_mode))
		rc = output_write_direct(target, fn, arg);
	else
		rc = output_write_atomic(target, fn, arg);
	if (rc != 0)
		error_set(err, errlen, "cannot write '%s': %s", path,
		    strerror(errno ? errno : EIO));
	free(real);
	return rc;
}

int
profile_write_file(const struct profile *p, const char *path,
    enum profile_format fmt, const struct text_opts *topts, char *err,
    size_t errlen)
{
	struct output_profile_arg a = { p, fmt, topts };

	if (fmt == PROFILE_FORMAT_NONE) {
		error_set(err, errlen, "no format to write '%s' in", path);
		return -1;
	}
	return output_write_file(path, output_profile_fn, &a, err, errlen);
}

/*
 * Whether a file starting with byte C can be a profile at all: gzip
 * (0x1f), the first byte of a protobuf key (a field number from 1, any
 * wire type protobuf still uses: 0, 1, 2 or 5; fields the Profile message
 * does not know are allowed, as protobuf allows them), or text.  Lets a
 * device or a large foreign file be refused at its first byte rather than
 * read whole.
 */
static int
output_plausible(uint8_t c)
{
	unsigned wire = c & 7;

	if (c == 0x1f)
		return 1;
	if (c >= 8 && (wire == 0 || wire == 1 || wire == 2 || wire == 5))
		return 1;
	return c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
}

/* Read all of FD (at most PROFILE_READ_MAX bytes) into *BUF; -2 when
 * its first byte already shows it is no profile.  The first read is
 * small, so that a large file that is no profile is refused before any
 * more of it is read or room made for it. */
static int
output_slurp(int fd, uint8_t **buf, size_t *len)
{
	struct stat st;
	size_t cap = 4096, used = 0, size = 0;
	uint8_t *b;
	ssize_t n;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > PROFILE_READ_MAX) {
			errno = EFBIG;
			return -1;
		}
		/* The size it says, plus one byte to see the end. */
		size = (size_t)st.st_size + 1;
	}
	b = xmalloc(cap);
	for (;;) {
		if (used == cap) {
			if (cap > PROFILE_READ_MAX) {
				free(b);
				errno = EFBIG;
				return -1;
			}
			cap = size > cap ? size : cap * 2;
			if (cap > PROFILE_READ_MAX + 1)
				cap = PROFILE_READ_MAX + 1;
			b = xrealloc(b, cap);
		}
		n = read(fd, b + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(b);
			return -1;
		}
		if (n == 0)
			break;
		if (used == 0 && !output_plausible(b[0])) {
			free(b);
			return -2;
		}
		used += (size_t)n;
	}
	*buf = b;
	*len = used;
	return 0;
}

/* Whether BUF looks like text: no control bytes but tab, CR and LF. */
static int
output_is_text(const uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if ((buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n' &&
		    buf[i] != '\r') || buf[i] == 0x7f)
			return 0;
	}
	return 1;
}

/* Whether the first non-blank line of BUF ends in an integer token. */
static int
output_looks_folded(const uint8_t *buf, size_t len, int *blank)
{
	const uint8_t *end = buf + len, *eol, *stop, *tok;

	*blank = 1;
	for (; buf < end; buf = eol + 1) {
		eol = memchr(buf, '\n', (size_t)(end - buf));
		if (eol == NULL)
			eol = end;
		stop = eol;
		while (stop > buf && (stop[-1] == ' ' || stop[-1] == '\t' ||
		    stop[-1] == '\r'))
			stop--;
		if (stop == buf)
			continue;
		*blank = 0;
		for (tok = stop; tok > buf && tok[-1] >= '0' && tok[-1] <= '9';
		    tok--)
			;
		if (tok > buf && tok[-1] == '-')
			tok--;
		return tok != stop && (tok == buf || tok[-1] == ' ' ||
		    tok[-1] == '\t');
	}
	return 0;
}

struct profile *
profile_parse_buffer(const uint8_t *buf, size_t len, const char *name,
    enum profile_format *fmt, char *err, size_t errlen)
{
	struct profile *p;
	char detail[256];
	int blank;

	if (fmt != NULL)
		*fmt = PROFILE_FORMAT_NONE;
	if (len == 0) {
		error_set(err, errlen, "'%s' is empty", name);
		return NULL;
	}
	detail[0] = '\0';
	if (pprof_is_gzip(buf, len)) {
		p = pprof_parse(buf, len, detail, sizeof detail);
		if (p == NULL)
			goto corrupt;
		if (fmt != NULL)
			*fmt = PROFILE_FORMAT_PPROF;
		return p;
	}
	if (output_is_text(buf, len)) {
		if (!output_looks_folded(buf, len, &blank)) {
			if (blank)
				error_set(err, errlen, "'%s' is empty",
				    name);
			else
				goto unknown;
			return NULL;
		}
		p = folded_parse((const char *)buf, len, detail,
		    sizeof detail);
		if (p == NULL)
			goto corrupt;
		if (fmt != NULL)
			*fmt = PROFILE_FORMAT_FOLDED;
		return p;
	}
	p = pprof_parse(buf, len, detail, sizeof detail);
	if (p != NULL) {
		if (fmt != NULL)
			*fmt = PROFILE_FORMAT_PPROF;
		return p;
	}
	/* A profile's first field is almost always sample_type or sample. */
	if (buf[0] == 0x0a || buf[0] == 0x12)
		goto corrupt;
unknown:
	error_set(err, errlen, "'%s' is not a pprof or folded profile",
	    name);
	return NULL;
corrupt:
	error_set(err, errlen, "'%s' is truncated or corrupt: %s", name,
	    detail);
	return NULL;
}

struct profile *
profile_read_format(const char *path, enum profile_format *fmt, char *err,
    size_t errlen)
{
	struct profile *p;
	uint8_t *buf;
	size_t len;
	int fd, rc, stdin_ = strcmp(path, "-") == 0;

	if (fmt != NULL)
		*fmt = PROFILE_FORMAT_NONE;
	fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1) {
		error_set(err, errlen, "cannot read '%s': %s", path,
		    strerror(errno));
		return NULL;
	}
	if ((rc = output_slurp(fd, &buf, &len)) != 0) {
		if (rc == -2)
			error_set(err, errlen, "'%s' is not a pprof or folded profile", path);
		else if (errno == EFBIG)
			error_set(err, errlen, "'%s' is too large (more "
			    "than %zu MiB)", path, PROFILE_READ_MAX >> 20);
		else
			error_set(err, errlen, "cannot read '%s': %s",
			    path, strerror(errno));
		if (!stdin_)
			close(fd);
		return NULL;
	}
	if (!stdin_)
		close(fd);
	p = profile_parse_buffer(buf, len, path, fmt, err, errlen);
	free(buf);
	return p;
}

struct profile *
profile_read(const char *path, char *err, size_t errlen)
{
	return profile_read_format(path, NULL, err, errlen);
}
