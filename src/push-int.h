/*
 * push-int.h: what of the uploader the unit tests reach below the public
 * calls of push.h: the bounded queue, the counters, the query, the
 * multipart body and the spool files.  Only push.c and
 * tests/unit/check_push.c include it; commands use push.h.
 */
#ifndef RPERF_PUSH_INT_H
#define RPERF_PUSH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "push.h"

/* Backoff between attempts: doubling from the first to the last, jittered. */
#define PUSH_BACKOFF_FIRST_S		0.5
#define PUSH_BACKOFF_MAX_S		30.0
/* Per-request limits handed to libcurl. */
#define PUSH_CONNECT_TIMEOUT_S		10
#define PUSH_REQUEST_TIMEOUT_S		30

struct push_stats {
	uint64_t sent;		/* intervals a 2xx accepted */
	uint64_t failed;	/* failed attempts (each retry counts) */
	uint64_t rejected;	/* intervals refused with a 4xx, not retried */
	uint64_t dropped;	/* intervals lost: could not be encoded */
	uint64_t spooled;	/* intervals written to the spool directory */
	uint64_t over_limit;	/* intervals not spooled: over spool_max */
};

/*
 * The bounded FIFO of the upload thread.  put() appends and returns the
 * oldest entry it had to push out to make room (the caller's to spool),
 * or NULL; take() removes the oldest, or returns NULL when empty.
 */
struct push_queue {
	struct push_interval **items;
	size_t cap, head, count;
};

/* --- checks --- */

/* Everything a request is built from must pass the checks: 0, or -1
 * with ERR. */
int push_check_interval(const struct push_interval *iv, char *err,
    size_t errlen);

/* --- requests --- */

/* The query string of IV's request (without '?'); free() it. */
char *push_query(const struct push_interval *iv);
/* S with every byte but A-Z a-z 0-9 - . _ ~ percent-encoded; free() it. */
char *push_url_encode(const char *s);
/*
 * The multipart/form-data body carrying DATA as the field "profile",
 * with BOUNDARY (which DATA must not contain); its length in *OUTLEN.
 */
uint8_t *push_multipart(const uint8_t *data, size_t len, const char *boundary,
    size_t *outlen);

/* --- the queue --- */

void push_queue_init(struct push_queue *q, size_t cap);
struct push_interval *push_queue_put(struct push_queue *q,
    struct push_interval *iv);
struct push_interval *push_queue_take(struct push_queue *q);
void push_queue_release(struct push_queue *q);
/* The counters so far. */
void push_stats(const struct push *p, struct push_stats *out);

/* --- spool files --- */

/* The default spool directory: $XDG_STATE_HOME/rperf/spool; free() it. */
char *push_default_spool_dir(void);
/*
 * Write IV to a new file in DIR (made, mode 0700, when missing), whole
 * or not at all, mode 0600.  Its path in *PATH (free() it).  Returns 0,
 * or -1 with ERR.
 */
int push_spool_write(const char *dir, const struct push_interval *iv,
    char **path, char *err, size_t errlen);
/* Read a spool file into IV.  Returns 0, or -1 with ERR naming PATH. */
int push_spool_read(const char *path, struct push_interval *iv, char *err,
    size_t errlen);

#endif
