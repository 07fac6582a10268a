/*
 * push.c: the Pyroscope uploader (see push.h).  It owns the upload
 * thread, its bounded queue, the HTTP requests made through libcurl, the
 * checks of what the user configures, and the spool files.
 *
 * The upload thread is a plain pthread: it never calls Ruby, never holds
 * the GVL and has every signal blocked, so the sampler's timer signals
 * go to the Ruby threads.  push_enqueue() only encodes and takes a mutex
 * for as long as a pointer moves; it never waits for the network (only,
 * rarely, for the spooler below to catch up with the disk).  What
 * the queue cannot hold, and what the server refuses, goes to a second
 * such thread, the spooler, which writes it to the spool directory as it
 * comes: an interval is either sent or spooled, never dropped unseen.  No
 * message here may carry a secret: URLs are shown without their user
 * info, header values are never printed, and text that comes back from
 * the server or from libcurl is scrubbed of every secret before it is.
 *
 * libcurl is loaded with dlopen() by the first push_open(), not linked:
 * it brings some thirty libraries with it, and loading them at every
 * start would cost each "rperf record" tens of milliseconds of CPU time
 * on the main thread before its first sample, push or no push.
 */
#include <curl/curl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "output.h"
#include "pprof.h"
#include "push-int.h"
#include "secret.h"
#include "util.h"
#include "xmalloc.h"

#define PUSH_SPOOL_MAGIC "rperf-spool 1\n"
/* The largest spool file or server reply text read. */
#define PUSH_SPOOL_MAX ((size_t)1 << 30)
#define PUSH_REPLY_MAX 512

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

/* One response, as the libcurl callbacks collect it. */
struct push_reply {
	char reason[64];	/* of the last status line */
	char body[PUSH_REPLY_MAX];
	size_t body_len;
};

/* The libcurl functions used, found by dlopen(); ok once all are. */
static struct {
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
	int ok;
	char error[200];
} push_curl;

static pthread_once_t push_curl_once = PTHREAD_ONCE_INIT;
static atomic_uint push_spool_seq;

/* Defined with the spool files, used by the spooler. */
static uint64_t push_spool_size(const struct push_interval *iv);
static uint64_t push_spool_dir_size(const char *dir);
static void push_format_size(uint64_t size, char *buf, size_t len);

/* Load libcurl and initialise it, once per process, before any thread uses it. */
static void
push_curl_init(void)
{
	static const char *const names[] = { "libcurl.so.4",
	    "libcurl-gnutls.so.4", "libcurl.so", NULL };
	void *h = NULL;
	size_t i;

	for (i = 0; h == NULL && names[i] != NULL; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(push_curl.error, sizeof push_curl.error,
		    "pushing needs libcurl: %s", dlerror());
		return;
	}
#define PUSH_SYM(field, name) \
	if ((*(void **)&push_curl.field = dlsym(h, name)) == NULL) { \
		snprintf(push_curl.error, sizeof push_curl.error, \
		    "pushing needs libcurl: no %s in it", name); \
		return; \
	}
	PUSH_SYM(global_init, "curl_global_init");
	PUSH_SYM(easy_init, "curl_easy_init");
	PUSH_SYM(easy_setopt, "curl_easy_setopt");
	PUSH_SYM(easy_perform, "curl_easy_perform");
	PUSH_SYM(easy_getinfo, "curl_easy_getinfo");
	PUSH_SYM(easy_reset, "curl_easy_reset");
	PUSH_SYM(easy_cleanup, "curl_easy_cleanup");
	PUSH_SYM(easy_strerror, "curl_easy_strerror");
	PUSH_SYM(slist_append, "curl_slist_append");
	PUSH_SYM(slist_free_all, "curl_slist_free_all");
#undef PUSH_SYM
	if (push_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(push_curl.error, sizeof push_curl.error,
		    "cannot initialise libcurl");
		return;
	}
	push_curl.ok = 1;
}

/* Free a NULL-terminated-free vector of N strings. */
static void
push_free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A copy of N strings. */
static char **
push_dup_strv(const char *const *v, size_t n)
{
	char **out = xcalloc(n ? n : 1, sizeof *out);
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

/* --- intervals --- */

/* Free what IV owns and zero it. */
void
push_interval_release(struct push_interval *iv)
{
	free(iv->app_name);
	free(iv->mode);
	push_free_strv(iv->tags, iv->ntags);
	free(iv->data);
	memset(iv, 0, sizeof *iv);
}

/* Add or replace the tag "k=v" on IV (copied). */
void
push_interval_set_tag(struct push_interval *iv, const char *tag)
{
	size_t klen = strcspn(tag, "="), i;

	for (i = 0; i < iv->ntags; i++) {
		if (strncmp(iv->tags[i], tag, klen) == 0 &&
		    iv->tags[i][klen] == '=') {
			free(iv->tags[i]);
			iv->tags[i] = xstrdup(tag);
			return;
		}
	}
	iv->tags = xrealloc(iv->tags, (iv->ntags + 1) * sizeof *iv->tags);
	iv->tags[iv->ntags++] = xstrdup(tag);
}

/* --- checks --- */

/* Whether C may appear in an app name. */
static int
push_app_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("._-/:", c) != NULL;
}

/* The app name: letters, digits and . _ - / : only. */
int
push_check_app_name(const char *name, char *err, size_t errlen)
{
	const char *s;

	if (name == NULL || *name == '\0') {
		error_set(err, errlen, "the app name is empty");
		return -1;
	}
	for (s = name; *s != '\0'; s++) {
		if (!push_app_char((unsigned char)*s) || s - name >= 200) {
			error_set(err, errlen, "invalid app name '%.200s' (use "
			    "letters, digits and . _ - / :)", name);
			return -1;
		}
	}
	return 0;
}

/* The mode: "cpu" or "wall". */
int
push_check_mode(const char *mode, char *err, size_t errlen)
{
	if (mode != NULL && (strcmp(mode, "cpu") == 0 ||
	    strcmp(mode, "wall") == 0))
		return 0;
	error_set(err, errlen, "invalid mode '%s' (expected cpu or wall)",
	    mode ? mode : "");
	return -1;
}

/* A tag: KEY=VALUE, KEY a label name, VALUE without , { } = or spaces. */
int
push_check_tag(const char *tag, char *err, size_t errlen)
{
	const char *s = tag, *eq = strchr(tag, '=');
	int ok = eq != NULL && eq > tag && eq[1] != '\0' &&
	    strlen(tag) <= 400 && strncmp(tag, "__", 2) != 0 &&
	    !(*s >= '0' && *s <= '9');

	for (; ok && s < eq; s++)
		ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '.';
	for (s = eq ? eq + 1 : s; ok && *s != '\0'; s++)
		ok = (unsigned char)*s > ' ' && *s != 0x7f &&
		    strchr(",{}=\"", *s) == NULL;
	if (ok)
		return 0;
	error_set(err, errlen, "invalid tag '%.400s' (expected KEY=VALUE: KEY of "
	    "letters, digits, _ and ., VALUE without spaces , { } = or \")", tag);
	return -1;
}

/* Whether C is an HTTP token character (RFC 9110 tchar). */
static int
push_tchar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* 0 when S may be sent as a header value: no control characters. */
static int
push_check_header_value_ok(const char *s)
{
	for (; *s != '\0'; s++) {
		if (((unsigned char)*s < ' ' && *s != '\t') || *s == 0x7f)
			return -1;
	}
	return 0;
}

/*
 * A header "Name: value".  The value may be a secret, so no message
 * shows it; the name is shown only once it is known to be one.
 */
int
push_check_header(const char *header, char *err, size_t errlen)
{
	static const char *const own[] = { "Content-Type", "Content-Length",
	    "Host", "Transfer-Encoding", "Expect", "Connection", NULL };
	const char *colon = strchr(header, ':'), *s;
	size_t nlen = colon ? (size_t)(colon - header) : 0, i;

	for (s = header; s < header + nlen; s++) {
		if (!push_tchar((unsigned char)*s))
			nlen = 0;
	}
	if (nlen == 0 || nlen > 100) {
		error_set(err, errlen, "invalid header (expected 'Name: value')");
		return -1;
	}
	if (push_check_header_value_ok(colon + 1) != 0) {
		error_set(err, errlen, "invalid header '%.*s' (its value "
		    "has a control character)", (int)nlen, header);
		return -1;
	}
	for (i = 0; own[i] != NULL; i++) {
		if (strlen(own[i]) == nlen && strncasecmp(header, own[i], nlen) == 0) {
			error_set(err, errlen, "header '%s' is set by rperf itself",
			    own[i]);
			return -1;
		}
	}
	return 0;
}

/* Everything a request is built from must pass the checks. */
int
push_check_interval(const struct push_interval *iv, char *err, size_t errlen)
{
	size_t i;

	if (push_check_app_name(iv->app_name, err, errlen) != 0 ||
	    push_check_mode(iv->mode, err, errlen) != 0)
		return -1;
	for (i = 0; i < iv->ntags; i++) {
		if (push_check_tag(iv->tags[i], err, errlen) != 0)
			return -1;
	}
	if (iv->until_ns < iv->from_ns || iv->from_ns < 0) {
		error_set(err, errlen, "invalid time range");
		return -1;
	}
	if (iv->sample_rate <= 0 || iv->sample_rate > 1000000) {
		error_set(err, errlen, "invalid sample rate %d", iv->sample_rate);
		return -1;
	}
	return 0;
}

/* The value of hex digit C, or -1. */
static int
push_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* LEN bytes of S with %XX decoded; NULL when a %XX is malformed. */
static char *
push_url_decode(const char *s, size_t len)
{
	char *out = xmalloc(len + 1), *o = out;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= len + 0 || push_hexval((unsigned char)s[i + 1]) < 0 ||
		    push_hexval((unsigned char)s[i + 2]) < 0 ||
		    (s[i + 1] == '0' && s[i + 2] == '0')) {
			free(out);
			return NULL;
		}
		*o++ = (char)(push_hexval((unsigned char)s[i + 1]) * 16 +
		    push_hexval((unsigned char)s[i + 2]));
		i += 2;
	}
	*o = '\0';
	return out;
}

/* Base64 of "USER:PASSWORD", what basic authentication sends; free() it. */
static char *
push_base64_userpass(const char *user, const char *password)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *in = xasprintf("%s:%s", user, password), *out, *o;
	size_t len = strlen(in), i;
	uint32_t v;

	out = o = xmalloc(4 * (len / 3 + 1) + 1);
	for (i = 0; i < len; i += 3) {
		v = (uint32_t)(unsigned char)in[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)(unsigned char)in[i + 1] << 8;
		if (i + 2 < len)
			v |= (uint32_t)(unsigned char)in[i + 2];
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	free(in);
	return out;
}

/*
 * Split URL into P->url (scheme://host[:port]/path/ingest, no user info)
 * and P->user/P->password.  The URL itself may hold a password, so
 * messages show at most its scheme.
 */
static int
push_parse_url(struct push *p, const char *url, char *err, size_t errlen)
{
	const char *rest, *auth_end, *at, *colon, *s, *path;
	size_t scheme_len, plen;

	if (url == NULL || *url == '\0') {
		error_set(err, errlen, "no URL to push to");
		return -1;
	}
	if (strncasecmp(url, "http://", 7) == 0)
		scheme_len = 4;
	else if (strncasecmp(url, "https://", 8) == 0)
		scheme_len = 5;
	else {
		error_set(err, errlen, "the push URL must start with http:// or https://");
		return -1;
	}
	for (s = url; *s != '\0'; s++) {
		if ((unsigned char)*s <= ' ' || *s == 0x7f) {
			error_set(err, errlen, "the push URL has a space or a control character");
			return -1;
		}
	}
	rest = url + scheme_len + 3;
	auth_end = rest + strcspn(rest, "/?#");
	if (strpbrk(auth_end, "?#") != NULL) {
		error_set(err, errlen, "the push URL must not have a query or a fragment");
		return -1;
	}
	at = NULL;
	for (s = rest; s < auth_end; s++) {
		if (*s == '@')
			at = s;
	}
	if (at != NULL) {
		colon = memchr(rest, ':', (size_t)(at - rest));
		p->user = push_url_decode(rest, (size_t)((colon ? colon : at) - rest));
		p->password = colon ? push_url_decode(colon + 1,
		    (size_t)(at - colon - 1)) : xstrdup("");
		if (p->user == NULL || p->password == NULL) {
			error_set(err, errlen, "the user info of the push URL has a bad %%-escape");
			return -1;
		}
		p->basic = push_base64_userpass(p->user, p->password);
		rest = at + 1;
	}
	if (rest == auth_end || *rest == ':') {
		error_set(err, errlen, "the push URL has no host");
		return -1;
	}
	path = auth_end;
	plen = strlen(path);
	while (plen > 0 && path[plen - 1] == '/')
		plen--;
	if (plen >= 7 && strncmp(path + plen - 7, "/ingest", 7) == 0)
		plen -= 7;
	p->url = xasprintf("%.*s://%.*s%.*s/ingest", (int)scheme_len, url,
	    (int)(auth_end - rest), rest, (int)plen, path);
	for (s = p->url; *s != '\0'; s++) {
		/* the scheme as the user typed it, in lower case for libcurl */
		if (*s == ':')
			break;
		p->url[s - p->url] = (char)(*s | 0x20);
	}
	return 0;
}

/* --- requests --- */

/* S with every byte but A-Z a-z 0-9 - . _ ~ percent-encoded. */
char *
push_url_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(3 * strlen(s) + 1), *o = out;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~", c) != NULL) {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

/* Seconds of a Unix time in ns, rounded down. */
static long long
push_seconds(int64_t ns)
{
	return (long long)(ns / UTIL_NS_PER_SEC);
}

/* name=APP.MODE{k=v,...}&from=S&until=S&format=pprof&sampleRate=HZ&spyName=rperf */
char *
push_query(const struct push_interval *iv)
{
	size_t len = strlen(iv->app_name) + strlen(iv->mode) + 4, i;
	char *name, *enc, *q, *o;
	long long from = push_seconds(iv->from_ns);
	long long until = push_seconds(iv->until_ns);

	for (i = 0; i < iv->ntags; i++)
		len += strlen(iv->tags[i]) + 1;
	name = o = xmalloc(len);
	o += sprintf(o, "%s.%s{", iv->app_name, iv->mode);
	for (i = 0; i < iv->ntags; i++)
		o += sprintf(o, "%s%s", i ? "," : "", iv->tags[i]);
	strcpy(o, "}");
	if (until <= from)
		until = from + 1;
	enc = push_url_encode(name);
	q = xasprintf("name=%s&from=%lld&until=%lld&format=pprof&sampleRate=%d"
	    "&spyName=rperf", enc, from, until, iv->sample_rate);
	free(enc);
	free(name);
	return q;
}

/* The multipart/form-data body with DATA as the field "profile". */
uint8_t *
push_multipart(const uint8_t *data, size_t len, const char *boundary,
    size_t *outlen)
{
	char *head = xasprintf("--%s\r\nContent-Disposition: form-data; "
	    "name=\"profile\"; filename=\"profile.pprof\"\r\n"
	    "Content-Type: application/octet-stream\r\n\r\n", boundary);
	char *tail = xasprintf("\r\n--%s--\r\n", boundary);
	size_t hlen = strlen(head), tlen = strlen(tail);
	uint8_t *out = xmalloc(hlen + len + tlen);

	memcpy(out, head, hlen);
	if (len > 0)
		memcpy(out + hlen, data, len);
	memcpy(out + hlen + len, tail, tlen);
	*outlen = hlen + len + tlen;
	free(head);
	free(tail);
	return out;
}

/* A boundary of random hex that DATA does not contain, into BUF[48]. */
static void
push_boundary(char *buf, const uint8_t *data, size_t len)
{
	unsigned char r[16];
	size_t i;

	do {
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
			unsigned seed = (unsigned)util_mono_ns() ^ (unsigned)getpid();

			for (i = 0; i < sizeof r; i++)
				r[i] = (unsigned char)rand_r(&seed);
		}
		memcpy(buf, "rperf-", 6);
		for (i = 0; i < sizeof r; i++)
			sprintf(buf + 6 + 2 * i, "%02x", r[i]);
	} while (memmem(data, len, buf, strlen(buf)) != NULL);
}

/* Gzipped pprof of PROF in memory. */
uint8_t *
push_encode(const struct profile *prof, size_t *outlen, char *err,
    size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (mem == NULL) {
		error_set(err, errlen, "cannot encode the profile: %s",
		    strerror(errno));
		return NULL;
	}
	if (pprof_write(prof, mem, err, errlen) != 0) {
		fclose(mem);
		free(buf);
		return NULL;
	}
	if (fclose(mem) != 0) {
		error_set(err, errlen, "cannot encode the profile: %s",
		    strerror(errno));
		free(buf);
		return NULL;
	}
	*outlen = len;
	return (uint8_t *)buf;
}

/* MSG with every occurrence of SECRET replaced by "***", in place. */
static void
push_scrub_one(char *msg, size_t msglen, const char *secret)
{
	size_t slen = strlen(secret);
	char *out, *o;
	const char *s = msg, *hit;

	if (slen == 0 || strstr(msg, secret) == NULL)
		return;
	out = o = xmalloc(3 * strlen(msg) + 1);
	while ((hit = strstr(s, secret)) != NULL) {
		memcpy(o, s, (size_t)(hit - s));
		o += hit - s;
		memcpy(o, "***", 3);
		o += 3;
		s = hit + slen;
	}
	strcpy(o, s);
	snprintf(msg, msglen, "%s", out);
	free(out);
}

/* Replace every secret of P in MSG (of MSGLEN bytes) with "***". */
static void
push_scrub(const struct push *p, char *msg, size_t msglen)
{
	size_t i;

	if (p->token != NULL)
		push_scrub_one(msg, msglen, p->token);
	if (p->password != NULL)
		push_scrub_one(msg, msglen, p->password);
	/* a user name without a password is a token; a short one a name */
	if (p->user != NULL && *p->password == '\0' && strlen(p->user) >= 4)
		push_scrub_one(msg, msglen, p->user);
	if (p->basic != NULL)
		push_scrub_one(msg, msglen, p->basic);
	for (i = 0; i < p->nheaders; i++) {
		const char *v = strchr(p->headers[i], ':') + 1;

		push_scrub_one(msg, msglen, v + strspn(v, " \t"));
	}
}

/* libcurl's header callback: keep the reason phrase of the status line. */
static size_t
push_on_header(char *data, size_t size, size_t n, void *arg)
{
	struct push_reply *r = arg;
	size_t len = size * n, i = 0, o = 0;

	if (len < 5 || strncmp(data, "HTTP/", 5) != 0)
		return len;
	while (i < len && data[i] != ' ')
		i++;
	while (i < len && data[i] == ' ')
		i++;
	while (i < len && data[i] >= '0' && data[i] <= '9')
		i++;
	while (i < len && data[i] == ' ')
		i++;
	for (; i < len && o + 1 < sizeof r->reason; i++) {
		if ((unsigned char)data[i] < ' ' || (unsigned char)data[i] >= 0x7f)
			break;
		r->reason[o++] = data[i];
	}
	r->reason[o] = '\0';
	return len;
}

/* libcurl's write callback: keep the first bytes of the reply body. */
static size_t
push_on_body(char *data, size_t size, size_t n, void *arg)
{
	struct push_reply *r = arg;
	size_t len = size * n, room = sizeof r->body - 1 - r->body_len;

	if (len < room)
		room = len;
	memcpy(r->body + r->body_len, data, room);
	r->body_len += room;
	r->body[r->body_len] = '\0';
	return len;
}

/* libcurl's progress callback: stop at exit or past the deadline. */
static int
push_on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct push *p = arg;

	if (atomic_load(&p->aborting))
		return 1;
	return p->deadline_ns != 0 && util_mono_ns() > p->deadline_ns;
}

/* The usual reason phrase of STATUS, for replies without one (HTTP/2). */
static const char *
push_reason(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "";
	}
}

/*
 * "STATUS Reason[: first line of the body]" into ERR.  A server may echo
 * what it was sent (a 401 that quotes the Authorization header), so the
 * whole body is scrubbed of P's secrets and of anything that looks like a
 * header value or a credential before it is cut: a secret is never shown,
 * not even the part of one that a cut would leave.
 */
static void
push_status_message(const struct push *p, const struct push_reply *r,
    long status, char *err, size_t errlen)
{
	const char *reason = r->reason[0] ? r->reason : push_reason(status);
	char body[161], text[3 * PUSH_REPLY_MAX + 1], *clean;
	size_t i, o = 0, len;

	snprintf(text, sizeof text, "%.*s", (int)r->body_len, r->body);
	push_scrub(p, text, sizeof text);
	clean = secret_scrub_text(text);
	len = strlen(clean);
	for (i = 0; i < len && o + 1 < sizeof body; i++) {
		unsigned char c = (unsigned char)clean[i];

		if (c == '\n' || c == '\r')
			break;
		body[o++] = c < ' ' || c == 0x7f ? '?' : (char)c;
	}
	while (o > 0 && body[o - 1] == ' ')
		o--;
	body[o] = '\0';
	free(clean);
	error_set(err, errlen, "%ld%s%s%s%s", status, *reason ? " " : "", reason,
	    *body ? ": " : "", body);
}

/* One attempt to send IV. */
enum push_result
push_send(struct push *p, const struct push_interval *iv, char *err,
    size_t errlen)
{
	struct curl_slist *h = NULL;
	struct push_reply reply;
	char boundary[48], curl_err[CURL_ERROR_SIZE], *query, *url, *line;
	uint8_t *body;
	size_t body_len, i;
	long status = 0;
	CURLcode rc;
	enum push_result res;

	memset(&reply, 0, sizeof reply);
	curl_err[0] = '\0';
	push_boundary(boundary, iv->data, iv->len);
	body = push_multipart(iv->data, iv->len, boundary, &body_len);
	query = push_query(iv);
	url = xasprintf("%s?%s", p->url, query);

	line = xasprintf("Content-Type: multipart/form-data; boundary=%s", boundary);
	h = push_curl.slist_append(h, line);
	free(line);
	h = push_curl.slist_append(h, "Expect:");
	if (p->token != NULL) {
		line = xasprintf("Authorization: Bearer %s", p->token);
		h = push_curl.slist_append(h, line);
		free(line);
	}
	if (p->tenant != NULL) {
		line = xasprintf("X-Scope-OrgID: %s", p->tenant);
		h = push_curl.slist_append(h, line);
		free(line);
	}
	for (i = 0; i < p->nheaders; i++)
		h = push_curl.slist_append(h, p->headers[i]);

	push_curl.easy_reset(p->curl);
	push_curl.easy_setopt(p->curl, CURLOPT_URL, url);
	/* the libcurl found at run time may predate CURLOPT_PROTOCOLS_STR */
	if (push_curl.easy_setopt(p->curl, (CURLoption)10318 /* PROTOCOLS_STR */,
	    "http,https") != CURLE_OK)
		push_curl.easy_setopt(p->curl, (CURLoption)181 /* PROTOCOLS */,
		    (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	push_curl.easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	push_curl.easy_setopt(p->curl, CURLOPT_POST, 1L);
	push_curl.easy_setopt(p->curl, CURLOPT_POSTFIELDS, (const char *)body);
	push_curl.easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	push_curl.easy_setopt(p->curl, CURLOPT_HTTPHEADER, h);
	push_curl.easy_setopt(p->curl, CURLOPT_USERAGENT, "rperf/" PACKAGE_VERSION);
	push_curl.easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT, (long)PUSH_CONNECT_TIMEOUT_S);
	push_curl.easy_setopt(p->curl, CURLOPT_TIMEOUT, (long)PUSH_REQUEST_TIMEOUT_S);
	push_curl.easy_setopt(p->curl, CURLOPT_ERRORBUFFER, curl_err);
	push_curl.easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, push_on_header);
	push_curl.easy_setopt(p->curl, CURLOPT_HEADERDATA, &reply);
	push_curl.easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, push_on_body);
	push_curl.easy_setopt(p->curl, CURLOPT_WRITEDATA, &reply);
	push_curl.easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	push_curl.easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, push_on_progress);
	push_curl.easy_setopt(p->curl, CURLOPT_XFERINFODATA, p);
	if (p->insecure) {
		push_curl.easy_setopt(p->curl, CURLOPT_SSL_VERIFYPEER, 0L);
		push_curl.easy_setopt(p->curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (p->user != NULL) {
		push_curl.easy_setopt(p->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		push_curl.easy_setopt(p->curl, CURLOPT_USERNAME, p->user);
		push_curl.easy_setopt(p->curl, CURLOPT_PASSWORD, p->password);
	}

	rc = push_curl.easy_perform(p->curl);
	if (rc == CURLE_OK)
		push_curl.easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		error_set(err, errlen, "out of time");
		res = PUSH_RETRY;
	} else if (rc != CURLE_OK) {
		error_set(err, errlen, "%s", curl_err[0] ? curl_err :
		    push_curl.easy_strerror(rc));
		res = PUSH_RETRY;
	} else if (status >= 200 && status < 300) {
		res = PUSH_SENT;
	} else {
		push_status_message(p, &reply, status, err, errlen);
		res = status == 408 || status == 429 || status >= 500 ||
		    status < 100 ? PUSH_RETRY : PUSH_REJECTED;
	}
	/* Drop the references to what is freed below. */
	push_curl.easy_setopt(p->curl, CURLOPT_HTTPHEADER, NULL);
	push_curl.easy_setopt(p->curl, CURLOPT_ERRORBUFFER, NULL);
	if (res != PUSH_SENT && err != NULL && errlen > 0)
		push_scrub(p, err, errlen);
	push_curl.slist_free_all(h);
	free(url);
	free(query);
	free(body);
	return res;
}

/* The wait before the next attempt; advances *BASE_S. */
double
push_backoff(double *base_s, unsigned *seed)
{
	double d = *base_s <= 0 ? PUSH_BACKOFF_FIRST_S : *base_s * 2;

	if (d > PUSH_BACKOFF_MAX_S)
		d = PUSH_BACKOFF_MAX_S;
	*base_s = d;
	return d * (0.5 + 0.5 * (rand_r(seed) / (RAND_MAX + 1.0)));
}

/* --- the queue --- */

/* An empty queue of at most CAP entries (at least one). */
void
push_queue_init(struct push_queue *q, size_t cap)
{
	q->cap = cap ? cap : 1;
	q->items = xcalloc(q->cap, sizeof *q->items);
	q->head = q->count = 0;
}

/* Append IV; the oldest entry dropped to make room, or NULL. */
struct push_interval *
push_queue_put(struct push_queue *q, struct push_interval *iv)
{
	struct push_interval *dropped = NULL;

	if (q->count == q->cap)
		dropped = push_queue_take(q);
	q->items[(q->head + q->count) % q->cap] = iv;
	q->count++;
	return dropped;
}

/* Remove and return the oldest entry, or NULL. */
struct push_interval *
push_queue_take(struct push_queue *q)
{
	struct push_interval *iv;

	if (q->count == 0)
		return NULL;
	iv = q->items[q->head];
	q->items[q->head] = NULL;
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return iv;
}

/* Free the queue and every interval still in it. */
void
push_queue_release(struct push_queue *q)
{
	struct push_interval *iv;

	while ((iv = push_queue_take(q)) != NULL) {
		push_interval_release(iv);
		free(iv);
	}
	free(q->items);
	q->items = NULL;
}

/* --- the uploader --- */

/* Validate C and copy it into a new push, without a thread. */
struct push *
push_open(const struct push_config *c, char *err, size_t errlen)
{
	struct push *p = xcalloc(1, sizeof *p);
	struct push_interval *d = &p->defaults;
	size_t i;

	pthread_once(&push_curl_once, push_curl_init);
	if (!push_curl.ok) {
		error_set(err, errlen, "%s", push_curl.error);
		goto fail;
	}
	if (push_parse_url(p, c->url, err, errlen) != 0)
		goto fail;
	d->app_name = xstrdup(c->app_name ? c->app_name : "");
	d->mode = xstrdup(c->mode ? c->mode : "");
	d->tags = push_dup_strv(c->tags, c->ntags);
	d->ntags = c->ntags;
	d->sample_rate = c->sample_rate ? c->sample_rate : PUSH_DEFAULT_SAMPLE_RATE;
	if ((c->app_name != NULL && push_check_app_name(c->app_name, err, errlen) != 0) ||
	    (c->mode != NULL && push_check_mode(c->mode, err, errlen) != 0))
		goto fail;
	for (i = 0; i < c->ntags; i++) {
		if (push_check_tag(c->tags[i], err, errlen) != 0)
			goto fail;
	}
	for (i = 0; i < c->nheaders; i++) {
		if (push_check_header(c->headers[i], err, errlen) != 0)
			goto fail;
		if (c->token != NULL && strncasecmp(c->headers[i], "Authorization:", 14) == 0) {
			error_set(err, errlen, "both a token and an Authorization header are given");
			goto fail;
		}
	}
	if (c->tenant != NULL && (*c->tenant == '\0' ||
	    push_check_header_value_ok(c->tenant) != 0)) {
		error_set(err, errlen, "invalid tenant");
		goto fail;
	}
	/* Which one the user meant is unknown, and sending a token to a
	 * server given other credentials may hand it to the wrong one. */
	if (c->token != NULL && p->user != NULL) {
		error_set(err, errlen, "both RPERF_PUSH_TOKEN and a user name in "
		    "the URL are given; use one of them");
		goto fail;
	}
	if (c->token != NULL && (*c->token == '\0' ||
	    push_check_header_value_ok(c->token) != 0)) {
		error_set(err, errlen, "invalid token (empty or with a control character)");
		goto fail;
	}
	if (d->sample_rate < 0 || d->sample_rate > 1000000 ||
	    c->timeout_s < 0 || c->timeout_s != c->timeout_s) {
		error_set(err, errlen, "invalid sample rate or timeout");
		goto fail;
	}
	p->headers = push_dup_strv(c->headers, c->nheaders);
	p->nheaders = c->nheaders;
	p->tenant = c->tenant ? xstrdup(c->tenant) : NULL;
	p->token = c->token ? xstrdup(c->token) : NULL;
	p->insecure = c->insecure;
	p->quiet = c->quiet;
	p->timeout_s = c->timeout_s > 0 ? c->timeout_s : PUSH_DEFAULT_TIMEOUT_S;
	p->spool_dir = c->spool_dir ? xstrdup(c->spool_dir) : push_default_spool_dir();
	p->spool_at = output_absolute_path(p->spool_dir);
	p->queue_max = c->queue_max ? c->queue_max : PUSH_DEFAULT_QUEUE_MAX;
	p->spool_max = c->spool_max ? c->spool_max : PUSH_DEFAULT_SPOOL_MAX;
	p->curl = push_curl.easy_init();
	if (p->curl == NULL) {
		error_set(err, errlen, "cannot start libcurl");
		goto fail;
	}
	p->seed = (unsigned)util_mono_ns() ^ (unsigned)getpid();
	push_queue_init(&p->queue, p->queue_max);
	push_queue_init(&p->spill, p->queue_max);
	return p;
fail:
	push_close(p);
	return NULL;
}

/* Free a push made by push_open (not running a thread). */
void
push_close(struct push *p)
{
	if (p == NULL)
		return;
	if (p->curl != NULL)
		push_curl.easy_cleanup(p->curl);
	if (p->queue.items != NULL)
		push_queue_release(&p->queue);
	if (p->spill.items != NULL)
		push_queue_release(&p->spill);
	if (p->inflight != NULL) {
		push_interval_release(p->inflight);
		free(p->inflight);
	}
	push_interval_release(&p->defaults);
	free(p->url);
	free(p->user);
	free(p->password);
	free(p->basic);
	push_free_strv(p->headers, p->nheaders);
	free(p->tenant);
	free(p->token);
	free(p->spool_dir);
	free(p->spool_at);
	free(p);
}

/* The URL requests go to, without user info. */
const char *
push_display_url(const struct push *p)
{
	return p->url;
}

/* Stop any request still running SECONDS from now (0: no limit). */
void
push_set_deadline(struct push *p, double seconds)
{
	p->deadline_ns = seconds > 0 ? util_mono_ns() +
	    (int64_t)(seconds * 1e9) : 0;
}

/* An absolute CLOCK_MONOTONIC time NS from now, for pthread_cond_timedwait. */
static struct timespec
push_abstime(int64_t ns)
{
	struct timespec ts;
	int64_t t = util_mono_ns() + (ns > 0 ? ns : 0);

	ts.tv_sec = (time_t)(t / UTIL_NS_PER_SEC);
	ts.tv_nsec = (long)(t % UTIL_NS_PER_SEC);
	return ts;
}

/*
 * Hand IV to the spooler (P->lock held).  Waits only while the spooler
 * is a whole queue behind, that is for the disk, never for the network.
 */
static void
push_spill(struct push *p, struct push_interval *iv)
{
	while (p->spill.count == p->spill.cap)
		pthread_cond_wait(&p->cond, &p->lock);
	push_queue_put(&p->spill, iv);
	pthread_cond_broadcast(&p->cond);
}

/* The upload thread: send the queue in order, retrying with backoff. */
static void *
push_thread(void *arg)
{
	struct push *p = arg;
	char err[512];
	double base = 0, delay;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct push_interval *iv;
		enum push_result r;

		while (p->inflight == NULL && p->queue.count == 0 &&
		    !p->stopping && !atomic_load(&p->aborting))
			pthread_cond_wait(&p->cond, &p->lock);
		if (atomic_load(&p->aborting))
			break;
		if (p->inflight == NULL) {
			p->inflight = push_queue_take(&p->queue);
			base = 0;
			if (p->inflight == NULL)
				break;	/* stopping, and nothing is left */
		}
		iv = p->inflight;
		pthread_mutex_unlock(&p->lock);
		r = push_send(p, iv, err, sizeof err);
		pthread_mutex_lock(&p->lock);
		switch (r) {
		case PUSH_SENT:
			p->stats.sent++;
			push_interval_release(iv);
			free(iv);
			p->inflight = NULL;
			p->retry_noted = 0;
			break;
		case PUSH_REJECTED:
			p->stats.failed++;
			p->stats.rejected++;
			p->inflight = NULL;
			push_spill(p, iv);
			if (atoi(err) != p->last_rejected) {
				p->last_rejected = atoi(err);
				error_print("push to '%s' failed: %s", p->url,
				    err);
			}
			break;
		case PUSH_RETRY:
			if (atomic_load(&p->aborting))
				break;
			p->stats.failed++;
			if (!p->retry_noted && !p->quiet)
				error_print("push to '%s' failed: %s; retrying",
				    p->url, err);
			p->retry_noted = 1;
			delay = push_backoff(&base, &p->seed);
			{
				struct timespec until = push_abstime((int64_t)(delay * 1e9));

				while (!atomic_load(&p->aborting) &&
				    pthread_cond_timedwait(&p->cond, &p->lock,
				    &until) == 0)
					;
			}
			break;
		}
		pthread_cond_broadcast(&p->cond);
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
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
 * until its end; push_finish sums them all up.
 */
static void
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
		push_format_size(p->spool_max, limit, sizeof limit);
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

/* The spooler: write the spill as it comes, until told to stop and empty. */
static void *
push_spooler(void *arg)
{
	struct push *p = arg;
	struct push_interval *iv;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->spill.count == 0 && !p->spooler_stop)
			pthread_cond_wait(&p->cond, &p->lock);
		iv = push_queue_take(&p->spill);
		if (iv == NULL)
			break;
		pthread_cond_broadcast(&p->cond);	/* there is room again */
		pthread_mutex_unlock(&p->lock);
		push_spool_keep(p, iv);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Validate C and start the upload and spool threads. */
struct push *
push_start(const struct push_config *c, char *err, size_t errlen)
{
	struct push *p = push_open(c, err, errlen);
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (p == NULL)
		return NULL;
	if (c->app_name == NULL || c->mode == NULL) {
		error_set(err, errlen, "no app name or mode to push as");
		push_close(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* The threads inherit this mask: no signal is ever delivered to them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->threaded = 1;	/* before the threads, which read it */
	rc = pthread_create(&p->spooler, NULL, push_spooler, p);
	if (rc == 0) {
		rc = pthread_create(&p->thread, NULL, push_thread, p);
		if (rc != 0) {
			pthread_mutex_lock(&p->lock);
			p->spooler_stop = 1;
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
			pthread_join(p->spooler, NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		error_set(err, errlen, "cannot start the push thread: %s",
		    strerror(rc));
		p->threaded = 0;
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		push_close(p);
		return NULL;
	}
	return p;
}

/* Encode PROF and queue it; when full, the oldest waiting one is spooled. */
void
push_enqueue(struct push *p, const struct profile *prof, int64_t from_ns,
    int64_t until_ns)
{
	struct push_interval *iv, *old;
	char err[256];

	iv = xcalloc(1, sizeof *iv);
	iv->data = push_encode(prof, &iv->len, err, sizeof err);
	if (iv->data == NULL) {
		error_print("push: %s", err);
		free(iv);
		pthread_mutex_lock(&p->lock);
		p->stats.dropped++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	iv->app_name = xstrdup(p->defaults.app_name);
	iv->mode = xstrdup(p->defaults.mode);
	iv->tags = push_dup_strv((const char *const *)p->defaults.tags,
	    p->defaults.ntags);
	iv->ntags = p->defaults.ntags;
	iv->from_ns = from_ns;
	iv->until_ns = until_ns < from_ns ? from_ns : until_ns;
	iv->sample_rate = p->defaults.sample_rate;

	pthread_mutex_lock(&p->lock);
	old = push_queue_put(&p->queue, iv);
	if (old != NULL)
		push_spill(p, old);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Drain for at most timeout_s, then spool what is left, and free P. */
int
push_finish(struct push *p)
{
	struct push_interval *iv;
	struct timespec deadline;
	int rc = 0;

	if (p == NULL)
		return 0;
	if (p->threaded) {
		pthread_mutex_lock(&p->lock);
		p->stopping = 1;
		pthread_cond_broadcast(&p->cond);
		deadline = push_abstime((int64_t)(p->timeout_s * 1e9));
		while ((p->queue.count > 0 || p->inflight != NULL) &&
		    pthread_cond_timedwait(&p->cond, &p->lock, &deadline) == 0)
			;
		atomic_store(&p->aborting, 1);
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		/* The uploader may have spilled until it stopped: drain it. */
		pthread_mutex_lock(&p->lock);
		p->spooler_stop = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->spooler, NULL);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		p->threaded = 0;
	}
	/* Oldest first: the one in flight, then the queue. */
	if (p->inflight != NULL) {
		push_spool_keep(p, p->inflight);
		p->inflight = NULL;
	}
	while ((iv = push_queue_take(&p->queue)) != NULL)
		push_spool_keep(p, iv);
	if (p->stats.over_limit > 0) {
		char limit[32];

		push_format_size(p->spool_max, limit, sizeof limit);
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
	rc = p->spool_failed ? -1 : 0;
	push_close(p);
	return rc;
}

/* The counters so far. */
void
push_stats(const struct push *p, struct push_stats *out)
{
	struct push *mp = (struct push *)p;

	if (p->threaded) {
		pthread_mutex_lock(&mp->lock);
		*out = p->stats;
		pthread_mutex_unlock(&mp->lock);
	} else {
		*out = p->stats;
	}
}

/* --- spool files --- */

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
push_format_size(uint64_t size, char *buf, size_t len)
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
push_mkdirs(const char *dir, char *err, size_t errlen)
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

/* The bytes of the spool files ("*.spool") in DIR; 0 when it is missing. */
static uint64_t
push_spool_dir_size(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	uint64_t sum = 0;
	size_t len;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 7 ||
		    strcmp(de->d_name + len - 6, ".spool") != 0)
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

	if (push_mkdirs(dir, err, errlen) != 0)
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
push_parse_i64(const char *s, int64_t *out)
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
		    push_parse_i64(line + 9, &v) == 0) {
			iv->from_ns = v;
			have_from = 1;
		} else if (strncmp(line, "until-ns: ", 10) == 0 &&
		    push_parse_i64(line + 10, &v) == 0) {
			iv->until_ns = v;
			have_until = 1;
		} else if (strncmp(line, "sample-rate: ", 13) == 0 &&
		    push_parse_i64(line + 13, &v) == 0 && v > 0 && v <= 1000000) {
			iv->sample_rate = (int)v;
		} else if (strncmp(line, "length: ", 8) == 0 &&
		    push_parse_i64(line + 8, &v) == 0 && v >= 0) {
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
