/*
 * output.h: moving whole profiles between the model and files: atomic
 * writes that follow no planted link, and capped reads (the formats
 * themselves are in formats.h).
 */
#ifndef RPERF_OUTPUT_H
#define RPERF_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats.h"
#include "profile.h"

/* Largest file profile_read() accepts. */
#define PROFILE_READ_MAX ((size_t)1 << 30)

/* PATH made absolute against the current directory, so that a later
 * chdir (the profiled script's) cannot move it; a copy to free(). */
char *output_absolute_path(const char *path);

/* Writes a whole output to FP; 0, or -1 with errno set. */
typedef int (*output_write_fn)(FILE *fp, void *arg);

/*
 * Run FN into PATH ("-" is stdout), a file the user named: a regular file
 * is written to a new temporary file in the same directory (O_EXCL),
 * flushed and renamed into place, so it is either complete or untouched; a
 * file replaced keeps its mode and, when we may, its owner.  An existing
 * special file (/dev/null, a FIFO) is written directly.  A symlink at the
 * last component is followed (the user named it), except one that another
 * user owns in a sticky world-writable directory such as /tmp (Linux's
 * fs.protected_symlinks rule, applied whatever the sysctl says).  Returns
 * 0, or -1 with e.g. "cannot write 'PATH': Permission denied" in ERR and
 * no file left behind.
 */
int output_write_file(const char *path, output_write_fn fn, void *arg, char *err,
    size_t errlen);
/* output_write_file naming the file DISPLAY in ERR (the spelling the user
 * gave, when PATH was made absolute). */
int output_write_file_as(const char *path, const char *display, output_write_fn fn,
    void *arg, char *err, size_t errlen);

/* output_write_at: fail if NAME exists rather than replace it. */
#define OUTPUT_NOREPLACE 1

/*
 * Run FN into NAME in the directory DIRFD, a file rperf names itself:
 * written through a new temporary file (O_EXCL, O_NOFOLLOW) renamed into
 * place within DIRFD, so no symlink is ever followed; with
 * OUTPUT_NOREPLACE an existing NAME is an error (EEXIST), otherwise it is
 * replaced (never written through).  DISPLAY names the file in ERR.
 */
int output_write_at(int dirfd, const char *name, int flags, output_write_fn fn, void *arg,
    const char *display, char *err, size_t errlen);

/*
 * Write P in format FMT to PATH ("-" is stdout) through output_write_file,
 * with the writer's options O (may be NULL: the defaults).
 */
int profile_write_file(const struct profile *p, const char *path,
    const struct format *fmt, const struct format_opts *o, char *err,
    size_t errlen);
/* profile_write_file naming the file DISPLAY in ERR. */
int profile_write_file_as(const struct profile *p, const char *path, const char *display,
    const struct format *fmt, const struct format_opts *o, char *err,
    size_t errlen);

/* Write P to PATH, a new file rperf names (a snapshot): whatever is at
 * PATH already, a symlink included, is an error, never written through.
 * DISPLAY names it in ERR. */
int profile_write_new(const struct profile *p, const char *path, const char *display,
    const struct format *fmt, char *err, size_t errlen);

/* Write P to NAME in DIRFD through output_write_at (replacing). */
int profile_write_at(const struct profile *p, int dirfd, const char *name,
    const struct format *fmt, const char *display, char *err, size_t errlen);

/*
 * Read the profile at PATH ("-" is stdin), at most PROFILE_READ_MAX
 * bytes, in any format of the table that can be read, recognised by its
 * content.  Returns NULL with a one-line message naming PATH in ERR, e.g.
 * "cannot read 'x': No such file or directory", "'x' is empty",
 * "'x' is not a pprof or folded profile" or
 * "'x' is truncated or corrupt: <detail>".
 */
struct profile *profile_read(const char *path, char *err, size_t errlen);
/* profile_read() of NAME in DIRFD, never through a symlink; DISPLAY names
 * it in ERR. */
struct profile *profile_read_at(int dirfd, const char *name, const char *display,
    char *err, size_t errlen);
/* profile_read(), also storing the format found in *FMT (may be NULL). */
struct profile *profile_read_format(const char *path,
    const struct format **fmt, char *err, size_t errlen);

#endif
