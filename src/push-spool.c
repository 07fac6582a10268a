/*
 * push-spool.c: the spool files (see push-int.h).  It owns their format
 * (a "rperf-spool 1" line, "key: value" header lines, a blank line, then
 * the gzipped pprof), their names, the spool directory and its size
 * limit, and the lines that tell the user what was spooled or dropped.
 *
 * A file is written whole or not at all (a temporary name, fsync, then
 * rename), mode 0600 in a directory made 0700: an interval carries the
 * command line and labels of a run.  Spool files are byte-compatible
 * across versions: "rperf push" of a later rperf sends what an older one
 * spooled, so the format here must never change unversioned.  Nothing
 * here sends or holds the push's lock but to count.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "pprof.h"
#include "push-int.h"
#include "xmalloc.h"

#define PUSH_SPOOL_MAGIC "rperf-spool 1\n"
/* The largest spool file read. */
#define PUSH_SPOOL_MAX ((size_t)1 << 30)

static atomic_uint push_spool_seq;

/* Parse a size with an optional k, M or G (powers of 1024). */
int
push_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmg";
	const char *u;
	char *end;
	double v, mult = 1;

	if (s == NULL || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	/* digits and a point only: no exponents, hex or "inf" */
	if (errno != 0 || end == s || strspn(s, "0123456789.") != (size_t)(end - s))
		return -1;
	if (*end != '\0') {
		u = strchr(units, *end | 0x20);
		if (u == NULL || end[1] != '\0')
			return -1;
		mult = (double)((uint64_t)1 << (10 * (u - units + 1)));
	}
	v *= mult;
	if (!(v >= 1) || v > 1e18)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

/* SIZE as the user would write it: "100M", "1536k", "1000 bytes". */
static void
push_spool_format_size(uint64_t size, char *buf, size_t len)
{
	static const char units[] = "GMk";
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t m = (uint64_t)1 << (10 * (3 - i));

		if (size >= m && size % m == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(size / m),
			    units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu bytes", (unsigned long long)size);
}

/* The default spool directory: $XDG_STATE_HOME/rperf/spool. */
char *
push_default_spool_dir(void)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (state != NULL && state[0] == '/')
		return xasprintf("%s/rperf/spool", state);
	if (home == NULL || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw != NULL && pw->pw_dir != NULL ? pw->pw_dir : "/tmp";
	}
	return xasprintf("%s/.local/state/rperf/spool", home);
}

/* Whether BUF starts like a spool file. */
int
push_is_spool(const uint8_t *buf, size_t len)
{
	size_t n = strlen(PUSH_SPOOL_MAGIC);

	return len >= n && memcmp(buf, PUSH_SPOOL_MAGIC, n) == 0;
}

/* mkdir -p DIR with mode 0700 for what is made. */
static int
push_spool_mkdirs(const char *dir, char *err, size_t errlen)
{
	char *d = xstrdup(dir), *s;
	int rc = 0;

	for (s = d + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(d, 0700) != 0 && errno != EEXIST) {
			error_set(err, errlen, "cannot create '%s': %s", d,
			    strerror(errno));
			rc = -1;
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(d);
	return rc;
}

/* The header lines of IV's spool file; their length in *HLEN. */
static char *
push_spool_header(const struct push_interval *iv, size_t *hlen)
{
	size_t i, cap = 256 + strlen(iv->app_name) + strlen(iv->mode);
	char *head;

	for (i = 0; i < iv->ntags; i++)
		cap += strlen(iv->tags[i]) + 8;
	head = xmalloc(cap);
	*hlen = (size_t)sprintf(head, "%sapp: %s\nmode: %s\n",
	    PUSH_SPOOL_MAGIC, iv->app_name, iv->mode);
	for (i = 0; i < iv->ntags; i++)
		*hlen += (size_t)sprintf(head + *hlen, "tag: %s\n", iv->tags[i]);
	*hlen += (size_t)sprintf(head + *hlen, "from-ns: %lld\nuntil-ns: %lld\n"
	    "sample-rate: %d\nlength: %zu\n\n", (long long)iv->from_ns,
	    (long long)iv->until_ns, iv->sample_rate, iv->len);
	return head;
}

/* The size of IV's spool file. */
static uint64_t
push_spool_size(const struct push_interval *iv)
{
	size_t hlen;

	free(push_spool_header(iv, &hlen));
	return (uint64_t)hlen + iv->len;
}

/* Whether NAME, an entry of a directory, is a spool file: "*.spool",
 * not hidden (temporary files being written start with a dot). */
int
push_spool_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len >= 7 && strcmp(name + len - 6, ".spool") == 0;
}

/* The bytes of the spool files ("*.spool") in DIR; 0 when it is missing. */
static uint64_t
push_spool_dir_size(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	uint64_t sum = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (!push_spool_name(de->d_name))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

/* Write IV to a new file in DIR, whole or not at all. */
int
push_spool_write(const char *dir, const struct push_interval *iv,
    char **path, char *err, size_t errlen)
{
	char *head, *name, *tmp, *final, *s;
	size_t hlen;
	int fd, saved;

	if (push_spool_mkdirs(dir, err, errlen) != 0)
		return -1;
	head = push_spool_header(iv, &hlen);

	name = xasprintf("%s.%s-%lld-%ld-%u.spool", iv->app_name, iv->mode,
	    push_seconds(iv->from_ns), (long)getpid(),
	    atomic_fetch_add(&push_spool_seq, 1));
	for (s = name; *s != '\0'; s++) {
		if (*s == '/' || *s == ':')
			*s = '_';
	}
	if (name[0] == '.')
		name[0] = '_';
	final = xasprintf("%s/%s", dir, name);
	tmp = xasprintf("%s/.%s.tmp", dir, name);
	free(name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || util_write_all(fd, head, hlen) != 0 ||
	    util_write_all(fd, iv->data, iv->len) != 0 || fsync(fd) != 0 ||
	    close(fd) != 0 || (fd = -1, rename(tmp, final) != 0)) {
		saved = errno;
		error_set(err, errlen, "cannot write '%s': %s", final,
		    strerror(saved));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		free(tmp);
		free(final);
		free(head);
		return -1;
	}
	free(tmp);
	free(head);
	*path = final;
	return 0;
}

/* Parse a decimal int64 that is all of S. */
static int
push_spool_parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (*s == '\0')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* Parse LEN bytes of a spool file into IV. */
int
push_spool_parse(const uint8_t *buf, size_t len, const char *name,
    struct push_interval *iv, char *err, size_t errlen)
{
	const char *s = (const char *)buf, *end = s + len, *nl;
	int64_t v, length = -1;
	int have_from = 0, have_until = 0;
	char line[512], detail[600];

	memset(iv, 0, sizeof *iv);
	if (!push_is_spool(buf, len)) {
		error_set(err, errlen, "'%s' is not an rperf spool file", name);
		return -1;
	}
	s += strlen(PUSH_SPOOL_MAGIC);
	for (;;) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (nl == NULL || nl - s >= (long)sizeof line) {
			snprintf(detail, sizeof detail, "header is cut short");
			goto bad;
		}
		memcpy(line, s, (size_t)(nl - s));
		line[nl - s] = '\0';
		s = nl + 1;
		if (line[0] == '\0')
			break;
		if (strncmp(line, "app: ", 5) == 0 && iv->app_name == NULL) {
			iv->app_name = xstrdup(line + 5);
		} else if (strncmp(line, "mode: ", 6) == 0 && iv->mode == NULL) {
			iv->mode = xstrdup(line + 6);
		} else if (strncmp(line, "tag: ", 5) == 0) {
			push_interval_set_tag(iv, line + 5);
		} else if (strncmp(line, "from-ns: ", 9) == 0 &&
		    push_spool_parse_i64(line + 9, &v) == 0) {
			iv->from_ns = v;
			have_from = 1;
		} else if (strncmp(line, "until-ns: ", 10) == 0 &&
		    push_spool_parse_i64(line + 10, &v) == 0) {
			iv->until_ns = v;
			have_until = 1;
		} else if (strncmp(line, "sample-rate: ", 13) == 0 &&
		    push_spool_parse_i64(line + 13, &v) == 0 && v > 0 && v <= 1000000) {
			iv->sample_rate = (int)v;
		} else if (strncmp(line, "length: ", 8) == 0 &&
		    push_spool_parse_i64(line + 8, &v) == 0 && v >= 0) {
			length = v;
		} else {
			snprintf(detail, sizeof detail, "bad header line '%.100s'", line);
			goto bad;
		}
	}
	if (iv->app_name == NULL || iv->mode == NULL || !have_from ||
	    !have_until || iv->sample_rate == 0 || length < 0) {
		snprintf(detail, sizeof detail, "header lacks a field");
		goto bad;
	}
	if ((uint64_t)length != (uint64_t)(end - s)) {
		snprintf(detail, sizeof detail, "expected %lld bytes of profile, "
		    "found %lld", (long long)length, (long long)(end - s));
		goto bad;
	}
	if (push_check_interval(iv, line, sizeof line) != 0) {
		snprintf(detail, sizeof detail, "%s", line);
		goto bad;
	}
	if (!pprof_is_gzip((const uint8_t *)s, (size_t)(end - s))) {
		snprintf(detail, sizeof detail, "the profile is not gzipped pprof");
		goto bad;
	}
	iv->len = (size_t)(end - s);
	iv->data = xmalloc(iv->len ? iv->len : 1);
	memcpy(iv->data, s, iv->len);
	return 0;
bad:
	error_set(err, errlen, "'%s' is truncated or corrupt: %s", name, detail);
	push_interval_release(iv);
	return -1;
}

/* Read the spool file at PATH into IV. */
int
push_spool_read(const char *path, struct push_interval *iv, char *err,
    size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *buf;
	size_t len;
	int rc, saved;

	memset(iv, 0, sizeof *iv);
	if (fd < 0) {
		error_set(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	rc = util_read_fd(fd, PUSH_SPOOL_MAX, NULL, &buf, &len);
	saved = errno;
	close(fd);
	if (rc != 0) {
		if (saved == EFBIG)
			error_set(err, errlen, "'%s' is too large", path);
		else
			error_set(err, errlen, "cannot read '%s': %s", path,
			    strerror(saved));
		return -1;
	}
	rc = push_spool_parse(buf, len, path, iv, err, errlen);
	free(buf);
	return rc;
}

/*
 * Spool IV; -1 when it could not be written.  Only the first file and
 * the first failure are told in full (unless quiet): against a server
 * that is down, a long run spools every interval, and one line each
 * would flood the program's stderr; push_finish counts the rest.
 */
static int
push_spool_one(struct push *p, const struct push_interval *iv)
{
	char err[512], *path;

	if (push_spool_write(p->spool_at, iv, &path, err, sizeof err) != 0) {
		if (p->spool_failed == 0) {
			/* Name the directory as the user spelled it. */
			char *at = strstr(err, p->spool_at);
			int pre = at != NULL ? (int)(at - err) : (int)strlen(err);

			error_print("push: could not keep an unsent "
			    "profile: %.*s%s%s", pre, err,
			    at != NULL ? p->spool_dir : "",
			    at != NULL ? at + strlen(p->spool_at) : "");
		}
		return -1;
	}
	if (!p->spool_noted && !p->quiet)
		error_print("push: saved an unsent profile to '%s/%s'",
		    p->spool_dir, strrchr(path, '/') + 1);
	p->spool_noted = 1;
	free(path);
	return 0;
}

/*
 * Spool IV unless that would take the spool directory over spool_max,
 * count it, and free it; P->lock is not held.  The first interval the
 * limit drops is named at once, so that a long run does not hide it
 * until its end; push_spool_summary sums them all up.
 */
void
push_spool_keep(struct push *p, struct push_interval *iv)
{
	uint64_t size = push_spool_size(iv);
	int rc = 0, over;
	char limit[32];

	if (!p->spool_scanned) {
		p->spool_used = push_spool_dir_size(p->spool_at);
		p->spool_scanned = 1;
	}
	over = p->spool_used + size > p->spool_max;
	if (over && p->over_bytes == 0) {
		push_spool_format_size(p->spool_max, limit, sizeof limit);
		error_print("push: the spool directory '%s' is at its "
		    "limit of %s: dropping the unsent intervals that do not fit",
		    p->spool_dir, limit);
	}
	if (over) {
		p->over_bytes += size;
		p->over_ns += iv->until_ns - iv->from_ns;
	} else {
		rc = push_spool_one(p, iv);
		if (rc == 0)
			p->spool_used += size;
	}
	if (p->threaded)
		pthread_mutex_lock(&p->lock);
	if (over)
		p->stats.over_limit++;
	else if (rc == 0)
		p->stats.spooled++;
	else
		p->spool_failed++;
	if (p->threaded)
		pthread_mutex_unlock(&p->lock);
	push_interval_release(iv);
	free(iv);
}

/* At the end of P: sum up what was dropped, spooled or not kept. */
void
push_spool_summary(const struct push *p)
{
	if (p->stats.over_limit > 0) {
		char limit[32];

		push_spool_format_size(p->spool_max, limit, sizeof limit);
		error_print("push: dropped %llu unsent interval%s "
		    "(%.1f s of profile, %llu bytes) over the spool limit of %s "
		    "of '%s'", (unsigned long long)p->stats.over_limit,
		    p->stats.over_limit == 1 ? "" : "s", p->over_ns / 1e9,
		    (unsigned long long)p->over_bytes, limit, p->spool_dir);
	}
	if (p->stats.spooled > 1 && !p->quiet)
		error_print("push: saved %llu unsent profiles in '%s'",
		    (unsigned long long)p->stats.spooled, p->spool_dir);
	if (p->spool_failed > 1)
		error_print("push: could not keep %d unsent profiles "
		    "in '%s'", p->spool_failed, p->spool_dir);
}
