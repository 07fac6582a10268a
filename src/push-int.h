/*
 * push-int.h: what the files of the uploader share, and what of them the
 * unit tests reach: struct push, the bounded queue, the table of libcurl
 * functions, and the pieces below the public calls of push.h.  Only
 * push-*.c and tests/unit/check_push.c include it; commands use push.h.
 *
 * The uploader in parts: push-curl.c loads libcurl; push-config.c checks
 * what the user configures and holds a push's settings; push-http.c makes
 * one request and scrubs what comes back; push-queue.c runs the queue and
 * the upload and spool threads; push-spool.c reads and writes the spool
 * files and keeps the spool directory under its limit.  Nothing here may
 * carry a secret into a message: see push-http.c and push-spool.c.
 */
#ifndef RPERF_PUSH_INT_H
#define RPERF_PUSH_INT_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "push.h"
#include "util.h"

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

struct push {
	char *url;		/* base + "/ingest", without user info */
	char *user, *password;	/* from the URL's user info, or NULL */
	char *basic;		/* base64 of "user:password", as sent */
	struct push_interval defaults;	/* app, mode, tags, rate (no data) */
	char **headers;
	size_t nheaders;
	char *tenant, *token;
	int insecure, quiet;
	double timeout_s;
	char *spool_dir;	/* as given, for messages */
	char *spool_at;		/* the same, absolute: the script may chdir */
	size_t queue_max;
	/* The spool directory's size, scanned at the first spooled interval
	 * and counted on from there; only the spooler (or push_finish, after
	 * it stopped) touches these. */
	uint64_t spool_max, spool_used;
	int spool_scanned;
	uint64_t over_bytes;	/* not spooled: over spool_max */
	int64_t over_ns;	/* how much profile time those covered */
	CURL *curl;		/* used by one thread at a time */
	atomic_int aborting;	/* in-flight requests stop when set */
	int64_t deadline_ns;	/* monotonic; requests stop after it; 0: none */

	/* The upload thread and what it shares with the callers. */
	int threaded;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct push_queue queue;	/* waiting to be sent */
	struct push_queue spill;	/* pushed out of the queue or refused
					 * with a 4xx: for the spooler */
	struct push_interval *inflight;	/* taken by the thread, not yet sent */
	pthread_t spooler;		/* writes the spill to the spool dir */
	int spooler_stop;
	int spool_failed;	/* intervals that could not even be spooled */
	int spool_noted;	/* the first spooled file has been named */
	int stopping;
	int retry_noted;	/* "retrying" printed since the last success */
	int last_rejected;	/* the status last reported as refused */
	struct push_stats stats;
	unsigned seed;
};

/* Seconds of a Unix time in ns, rounded down. */
static inline long long
push_seconds(int64_t ns)
{
	return (long long)(ns / UTIL_NS_PER_SEC);
}

/* --- push-curl.c --- */

/* The libcurl functions used, found by dlopen(). */
struct push_curl {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_reset)(CURL *);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
};
extern struct push_curl push_curl;

/* Load libcurl once per process; 0, or -1 with why in ERR. */
int push_curl_load(char *err, size_t errlen);

/* --- push-config.c --- */

/* Give DST (empty) SRC's app name, mode, tags and sample rate. */
void push_interval_copy_labels(struct push_interval *dst,
    const struct push_interval *src);
/* Everything a request is built from must pass the checks: 0, or -1
 * with ERR. */
int push_check_interval(const struct push_interval *iv, char *err,
    size_t errlen);

/* --- push-http.c --- */

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

/* --- push-queue.c --- */

void push_queue_init(struct push_queue *q, size_t cap);
struct push_interval *push_queue_put(struct push_queue *q,
    struct push_interval *iv);
struct push_interval *push_queue_take(struct push_queue *q);
void push_queue_release(struct push_queue *q);
/* The counters so far. */
void push_stats(const struct push *p, struct push_stats *out);

/* --- push-spool.c --- */

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
/*
 * Spool IV for P unless that would take the spool directory over its
 * limit, count it, and free it; P->lock is not held.
 */
void push_spool_keep(struct push *p, struct push_interval *iv);
/* At the end of P: sum up what was spooled, dropped or not kept. */
void push_spool_summary(const struct push *p);

#endif
