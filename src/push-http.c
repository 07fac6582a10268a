/*
 * push-http.c: one request to the ingest API (see push.h).  It owns the
 * encoding of a profile as gzipped pprof, the query string that names the
 * series, the multipart/form-data body, the libcurl options of a POST,
 * the reading of the reply, and what is made of it: sent, retry or
 * rejected, with a one-line reason.
 *
 * A server may echo what it was sent (a 401 that quotes the Authorization
 * header) and libcurl may quote the URL, so every text that comes back is
 * scrubbed of the push's secrets and of anything that looks like a
 * credential before it is shown: no reason made here may carry a secret.
 * It waits on nothing but the network, for at most the request's limits
 * or the push's deadline, and keeps no state between requests but the
 * libcurl handle.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "config.h"
#include "error.h"
#include "pprof.h"
#include "push-int.h"
#include "secret.h"
#include "xmalloc.h"

/* The most of a reply's body kept for the message. */
#define PUSH_HTTP_REPLY_MAX 512

/* One response, as the libcurl callbacks collect it. */
struct push_http_reply {
	char reason[64];	/* of the last status line */
	char body[PUSH_HTTP_REPLY_MAX];
	size_t body_len;
};

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
push_http_boundary(char *buf, const uint8_t *data, size_t len)
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
push_http_scrub_one(char *msg, size_t msglen, const char *secret)
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
push_http_scrub(const struct push *p, char *msg, size_t msglen)
{
	size_t i;

	if (p->token != NULL)
		push_http_scrub_one(msg, msglen, p->token);
	if (p->password != NULL)
		push_http_scrub_one(msg, msglen, p->password);
	/* a user name without a password is a token; a short one a name */
	if (p->user != NULL && *p->password == '\0' && strlen(p->user) >= 4)
		push_http_scrub_one(msg, msglen, p->user);
	if (p->basic != NULL)
		push_http_scrub_one(msg, msglen, p->basic);
	for (i = 0; i < p->nheaders; i++) {
		const char *v = strchr(p->headers[i], ':') + 1;

		push_http_scrub_one(msg, msglen, v + strspn(v, " \t"));
	}
}

/* libcurl's header callback: keep the reason phrase of the status line. */
static size_t
push_http_on_header(char *data, size_t size, size_t n, void *arg)
{
	struct push_http_reply *r = arg;
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
push_http_on_body(char *data, size_t size, size_t n, void *arg)
{
	struct push_http_reply *r = arg;
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
push_http_on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct push *p = arg;

	if (atomic_load(&p->aborting))
		return 1;
	return p->deadline_ns != 0 && util_mono_ns() > p->deadline_ns;
}

/* The usual reason phrase of STATUS, for replies without one (HTTP/2). */
static const char *
push_http_reason(long status)
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
push_http_status_message(const struct push *p, const struct push_http_reply *r,
    long status, char *err, size_t errlen)
{
	const char *reason = r->reason[0] ? r->reason : push_http_reason(status);
	char body[161], text[3 * PUSH_HTTP_REPLY_MAX + 1], *clean;
	size_t i, o = 0, len;

	snprintf(text, sizeof text, "%.*s", (int)r->body_len, r->body);
	push_http_scrub(p, text, sizeof text);
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
	struct push_http_reply reply;
	char boundary[48], curl_err[CURL_ERROR_SIZE], *query, *url, *line;
	uint8_t *body;
	size_t body_len, i;
	long status = 0;
	CURLcode rc;
	enum push_result res;

	memset(&reply, 0, sizeof reply);
	curl_err[0] = '\0';
	push_http_boundary(boundary, iv->data, iv->len);
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
	push_curl.easy_setopt(p->curl, CURLOPT_HEADERFUNCTION, push_http_on_header);
	push_curl.easy_setopt(p->curl, CURLOPT_HEADERDATA, &reply);
	push_curl.easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, push_http_on_body);
	push_curl.easy_setopt(p->curl, CURLOPT_WRITEDATA, &reply);
	push_curl.easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	push_curl.easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, push_http_on_progress);
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
		push_http_status_message(p, &reply, status, err, errlen);
		res = status == 408 || status == 429 || status >= 500 ||
		    status < 100 ? PUSH_RETRY : PUSH_REJECTED;
	}
	/* Drop the references to what is freed below. */
	push_curl.easy_setopt(p->curl, CURLOPT_HTTPHEADER, NULL);
	push_curl.easy_setopt(p->curl, CURLOPT_ERRORBUFFER, NULL);
	if (res != PUSH_SENT && err != NULL && errlen > 0)
		push_http_scrub(p, err, errlen);
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
