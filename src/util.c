/*
 * util.c: the monotonic clock and the process's origin on it, whole
 * writes and capped whole reads (see util.h).
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "xmalloc.h"

/* TS in nanoseconds. */
static int64_t
util_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * UTIL_NS_PER_SEC + ts->tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t
util_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return util_ts_ns(&ts);
}

/* The monotonic clock when this process began (util_mark_origin), and
 * what its clocks read then if another program ran in it before. */
static int64_t util_origin;
static struct util_inherited util_before;
static int util_before_set;

/* Note the origin now; the process's CPU time it was taken from (-1:
 * none read). */
static int64_t
util_note_origin_cpu(void)
{
	struct timespec ts;
	int64_t now = util_mono_ns();

	util_before_set = 0;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return -1;
	util_origin = now - util_ts_ns(&ts);
	return util_ts_ns(&ts);
}

/* The fork handler: a child is a new process, whose CPU clock starts at
 * the fork. */
static void
util_note_origin(void)
{
	(void)util_note_origin_cpu();
}

void
util_mark_origin(void)
{
	static int handler_set;
	struct timespec tt;
	int64_t cpu = util_note_origin_cpu();

	if (cpu > UTIL_INHERITED_NS &&
	    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &tt) == 0 &&
	    getrusage(RUSAGE_SELF, &util_before.ru) == 0) {
		util_before.proc_cpu = cpu;
		util_before.thread_cpu = util_ts_ns(&tt);
		util_origin += cpu;	/* the time it was noted: main */
		util_before_set = 1;
	}
	if (!handler_set) {
		(void)pthread_atfork(NULL, NULL, util_note_origin);
		handler_set = 1;
	}
}

int64_t
util_origin_ns(void)
{
	return util_origin;
}

const struct util_inherited *
util_inherited(void)
{
	return util_before_set ? &util_before : NULL;
}

/* Write all of BUF to FD. */
int
util_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read all of FD, at most MAX bytes.  The first read is small, so that a
 * large input FIRST refuses is refused before room is made for it; a
 * regular file's size sizes the buffer at once. */
int
util_read_fd(int fd, size_t max, util_first_byte_fn first, uint8_t **buf,
    size_t *len)
{
	struct stat st;
	size_t cap = 4096, used = 0, size = 0;
	uint8_t *b;
	ssize_t n;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > max) {
			errno = EFBIG;
			return -1;
		}
		/* The size it says, plus one byte to see the end. */
		size = (size_t)st.st_size + 1;
	}
	b = xmalloc(cap + 1);
	for (;;) {
		if (used == cap) {
			if (cap > max) {
				free(b);
				errno = EFBIG;
				return -1;
			}
			cap = size > cap ? size : cap * 2;
			if (cap > max + 1)
				cap = max + 1;
			b = xrealloc(b, cap + 1);
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
		if (used == 0 && first != NULL && !first(b[0])) {
			free(b);
			return -2;
		}
		used += (size_t)n;
	}
	if (used > max) {
		free(b);
		errno = EFBIG;
		return -1;
	}
	b[used] = '\0';
	*buf = b;
	*len = used;
	return 0;
}
