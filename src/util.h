/*
 * util.h: the small system helpers every part of rperf shares, each kept
 * once: the monotonic clock (and when the process began on it), writing a
 * whole buffer to a descriptor and reading a whole descriptor under a size
 * cap.  Plain C, no Ruby;
 * util_mono_ns() and util_write_all() allocate nothing and may be called
 * without the GVL.
 */
#ifndef RPERF_UTIL_H
#define RPERF_UTIL_H

#include <sys/resource.h>

#include <stddef.h>
#include <stdint.h>

#define UTIL_NS_PER_SEC INT64_C(1000000000)

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t util_mono_ns(void);

/*
 * Note when this process began, on the monotonic clock, as well as it can
 * be told: now, less the CPU time the process has used so far (its exec
 * and the dynamic linker's loading of its libraries are CPU work), and
 * again in every child forked after (whose CPU clocks start at the fork).
 * Called first thing in main(); util_origin_ns() then returns it (0
 * before).
 *
 * A process's clocks and counters run on across an exec: one that ran
 * another program before it exec'd rperf (`bundle exec rperf ...`, a
 * Ruby wrapper) comes to main with that program's CPU time on them.
 * The exec's time is nowhere to be read, so a process that comes to main
 * with more than UTIL_INHERITED_NS of CPU is taken to have run another
 * program first: its origin is main, and util_inherited() says what its
 * clocks read there, for the sampler and stat to count from.  rperf's
 * own way to main (exec, loading libruby) took 2 ms of CPU on the VMs
 * here, 10-16 ms in the sanitizer build; Ruby's own start, with
 * RubyGems, 100 ms.
 */
#define UTIL_INHERITED_NS (50 * INT64_C(1000000))
struct util_inherited {
	int64_t proc_cpu;	/* CLOCK_PROCESS_CPUTIME_ID at main */
	int64_t thread_cpu;	/* CLOCK_THREAD_CPUTIME_ID at main */
	struct rusage ru;	/* getrusage(RUSAGE_SELF) at main */
};
void util_mark_origin(void);
int64_t util_origin_ns(void);
/* What the clocks had when main began, if another program ran before;
 * NULL if not (and in a forked child, whose clocks start at the fork). */
const struct util_inherited *util_inherited(void);

/* Write all LEN bytes of BUF to FD, retrying short writes and EINTR;
 * 0, or -1 with errno set. */
int util_write_all(int fd, const void *buf, size_t len);

/* Whether the first byte read may begin what the caller wants; a reader
 * may refuse a large file after one small read. */
typedef int (*util_first_byte_fn)(uint8_t byte);

/*
 * Read all of FD into *BUF (to free(); *LEN bytes, plus a NUL after them
 * that *LEN does not count).  At most MAX bytes: a longer input fails
 * with EFBIG before more than MAX + 1 bytes are held.  When FIRST is not
 * NULL and refuses the first byte, returns -2 having read little.
 * Returns 0, -1 with errno set, or -2.
 */
int util_read_fd(int fd, size_t max, util_first_byte_fn first, uint8_t **buf,
    size_t *len);

#endif
