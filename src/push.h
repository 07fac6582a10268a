/*
 * push.h: sending profiles to Grafana Pyroscope's HTTP ingest API (also
 * served by Grafana Alloy's pyroscope.receive_http), in the background
 * while a script runs and one file at a time for "rperf push".
 *
 * A profile goes out as one POST to URL/ingest?name=APP.MODE{k=v,...}&
 * from=S&until=S&format=pprof&sampleRate=HZ&spyName=rperf with the
 * gzipped pprof as the multipart/form-data field "profile".  What is not
 * sent (pushed out of a full queue or refused while the script runs, or
 * still unsent at its end) is written to a spool directory, one file per
 * interval, which "rperf push" sends later.  Plain C: no Ruby.  What the
 * commands do not call is in push-int.h.
 * Secrets (the token, the password of the URL, the values of extra
 * headers) never appear in a message.
 */
#ifndef RPERF_PUSH_H
#define RPERF_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

/* Defaults of the fields of struct push_config left zero. */
#define PUSH_DEFAULT_TIMEOUT_S		5.0
#define PUSH_DEFAULT_QUEUE_MAX		16
#define PUSH_DEFAULT_SAMPLE_RATE	100
/* How many bytes of spool files the spool directory may hold. */
#define PUSH_DEFAULT_SPOOL_MAX		((uint64_t)100 << 20)

struct push_config {
	const char *url;		/* base URL; "/ingest" is appended */
	const char *app_name;		/* NAME */
	const char *mode;		/* "cpu" or "wall": name=NAME.MODE */
	const char *const *tags;	/* "k=v" strings */
	size_t ntags;
	const char *const *headers;	/* extra "Name: value" headers */
	size_t nheaders;
	const char *tenant;		/* X-Scope-OrgID when set */
	const char *token;		/* bearer token, or NULL */
	int insecure;			/* skip TLS verification only when asked */
	int sample_rate;		/* Hz; 0 is PUSH_DEFAULT_SAMPLE_RATE */
	double timeout_s;		/* how long push_finish waits; 0 is 5 */
	const char *spool_dir;		/* NULL: $XDG_STATE_HOME/rperf/spool */
	size_t queue_max;		/* 0 is PUSH_DEFAULT_QUEUE_MAX */
	uint64_t spool_max;		/* 0 is PUSH_DEFAULT_SPOOL_MAX */
	int quiet;			/* no "retrying"/"spooled" notes, errors only */
};

struct push;

/*
 * Validate C (URL scheme http or https, no query or fragment, app name,
 * mode, tag and header syntax; user info in the URL becomes basic auth,
 * and is refused together with a token) and start the upload thread.
 * NULL with a one-line message in ERR on a bad config.  C's strings are
 * copied.
 */
struct push *push_start(const struct push_config *c, char *err, size_t errlen);

/*
 * Encode PROF as gzipped pprof in memory and queue it for the interval
 * [FROM_NS, UNTIL_NS) (Unix epoch ns).  Quick: never waits for the
 * network; when the queue is full the oldest queued interval goes to the
 * spool thread, which writes it to the spool directory (this waits only
 * when that thread is a whole queue of files behind).  Safe to call from
 * a Ruby thread: no Ruby is called.
 */
void push_enqueue(struct push *p, const struct profile *prof, int64_t from_ns,
    int64_t until_ns);

/*
 * Wait at most timeout_s for the queue to drain, then write each unsent
 * interval to the spool directory.  Each spooled file, during the run or
 * now, was named by one line on stderr.  Returns 0, or -1 when an
 * interval could not even be spooled (with a message on stderr).  Frees P.
 */
int push_finish(struct push *p);

/* --- the pieces "rperf push" sends one file with --- */

/* One interval: where it belongs and its gzipped pprof bytes. */
struct push_interval {
	char *app_name;
	char *mode;
	char **tags;		/* "k=v" */
	size_t ntags;
	int64_t from_ns, until_ns;
	int sample_rate;
	uint8_t *data;
	size_t len;
};

/* Free what IV owns and zero it. */
void push_interval_release(struct push_interval *iv);
/* Add or replace the tag "k=v" on IV (copied). */
void push_interval_set_tag(struct push_interval *iv, const char *tag);

/* Like push_start but without the thread: for push_send(). */
struct push *push_open(const struct push_config *c, char *err, size_t errlen);
/* Free a push made by push_open. */
void push_close(struct push *p);

/* The URL requests go to, without user info ("http://host/ingest"). */
const char *push_display_url(const struct push *p);
/* Make push_send() give up SECONDS from now (0: only its own timeouts). */
void push_set_deadline(struct push *p, double seconds);

enum push_result {
	PUSH_SENT,		/* a 2xx */
	PUSH_RETRY,		/* 408, 429, 5xx, connection or timeout */
	PUSH_REJECTED,		/* any other status: do not send it again */
};
/* One attempt to send IV; the reason of a failure in ERR (no secrets). */
enum push_result push_send(struct push *p, const struct push_interval *iv,
    char *err, size_t errlen);

/* Each check returns 0, or -1 with a one-line message in ERR. */
int push_check_app_name(const char *name, char *err, size_t errlen);
int push_check_mode(const char *mode, char *err, size_t errlen);
int push_check_tag(const char *tag, char *err, size_t errlen);
int push_check_header(const char *header, char *err, size_t errlen);

/* Gzipped pprof of PROF in memory; NULL with ERR when encoding fails. */
uint8_t *push_encode(const struct profile *prof, size_t *outlen, char *err,
    size_t errlen);

/*
 * Parse a size such as "512", "64k", "100M" or "1.5G" (powers of 1024)
 * into *OUT bytes.  Returns 0, or -1 when S is not one or is 0.
 */
int push_parse_size(const char *s, uint64_t *out);

/* Whether NAME, a directory entry, is a spool file ("*.spool", not
 * hidden). */
int push_spool_name(const char *name);
/* Whether the LEN bytes at BUF start like a spool file. */
int push_is_spool(const uint8_t *buf, size_t len);
/* Parse LEN bytes of a spool file (NAME for errors). */
int push_spool_parse(const uint8_t *buf, size_t len, const char *name,
    struct push_interval *iv, char *err, size_t errlen);

/*
 * The wait before the next attempt: *BASE_S goes from 0 to the first
 * delay, then doubles up to the last; the wait is a random part of it,
 * between a half and all of it, so that clients do not retry in step.
 */
double push_backoff(double *base_s, unsigned *seed);

#endif
