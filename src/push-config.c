/*
 * push-config.c: what a push is configured with (see push.h and
 * push-int.h).  It owns the checks of what the user gives (URL, app name,
 * mode, tags, headers, tenant, token), the split of the URL into where
 * requests go and the basic-auth credentials in its user info, the labels
 * of an interval, and the making and freeing of a struct push.
 *
 * What the user gives may hold a secret: the password of the URL, the
 * token, the value of a header.  No message made here shows one: a URL
 * is shown at most by its scheme, a header at most by its name, and only
 * once that name is known to be one.  It starts no thread and sends
 * nothing; push-queue.c does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "error.h"
#include "output.h"
#include "push-int.h"
#include "xmalloc.h"

/* Free a vector of N strings and the strings. */
static void
push_config_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A copy of N strings. */
static char **
push_config_strv_dup(const char *const *v, size_t n)
{
	char **out = xcalloc(n ? n : 1, sizeof *out);
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

/* Free what IV owns and zero it. */
void
push_interval_release(struct push_interval *iv)
{
	free(iv->app_name);
	free(iv->mode);
	push_config_strv_free(iv->tags, iv->ntags);
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

/* Give DST (empty) SRC's app name, mode, tags and sample rate. */
void
push_interval_copy_labels(struct push_interval *dst,
    const struct push_interval *src)
{
	dst->app_name = xstrdup(src->app_name);
	dst->mode = xstrdup(src->mode);
	dst->tags = push_config_strv_dup((const char *const *)src->tags,
	    src->ntags);
	dst->ntags = src->ntags;
	dst->sample_rate = src->sample_rate;
}

/* Whether C may appear in an app name. */
static int
push_config_app_char(int c)
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
		if (!push_config_app_char((unsigned char)*s) || s - name >= 200) {
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
	    strcmp(mode, "wall") == 0 || strcmp(mode, "alloc") == 0))
		return 0;
	error_set(err, errlen, "invalid mode '%s' (expected cpu, wall or alloc)",
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
push_config_tchar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* 0 when S may be sent as a header value: no control characters. */
static int
push_config_value_ok(const char *s)
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
		if (!push_config_tchar((unsigned char)*s))
			nlen = 0;
	}
	if (nlen == 0 || nlen > 100) {
		error_set(err, errlen, "invalid header (expected 'Name: value')");
		return -1;
	}
	if (push_config_value_ok(colon + 1) != 0) {
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
push_config_hexval(int c)
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
push_config_url_decode(const char *s, size_t len)
{
	char *out = xmalloc(len + 1), *o = out;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= len + 0 || push_config_hexval((unsigned char)s[i + 1]) < 0 ||
		    push_config_hexval((unsigned char)s[i + 2]) < 0 ||
		    (s[i + 1] == '0' && s[i + 2] == '0')) {
			free(out);
			return NULL;
		}
		*o++ = (char)(push_config_hexval((unsigned char)s[i + 1]) * 16 +
		    push_config_hexval((unsigned char)s[i + 2]));
		i += 2;
	}
	*o = '\0';
	return out;
}

/* Base64 of "USER:PASSWORD", what basic authentication sends; free() it. */
static char *
push_config_base64_userpass(const char *user, const char *password)
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
push_config_parse_url(struct push *p, const char *url, char *err, size_t errlen)
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
		p->user = push_config_url_decode(rest, (size_t)((colon ? colon : at) - rest));
		p->password = colon ? push_config_url_decode(colon + 1,
		    (size_t)(at - colon - 1)) : xstrdup("");
		if (p->user == NULL || p->password == NULL) {
			error_set(err, errlen, "the user info of the push URL has a bad %%-escape");
			return -1;
		}
		p->basic = push_config_base64_userpass(p->user, p->password);
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

/* Validate C and copy it into a new push, without a thread. */
struct push *
push_open(const struct push_config *c, char *err, size_t errlen)
{
	struct push *p = xcalloc(1, sizeof *p);
	struct push_interval *d = &p->defaults;
	size_t i;

	if (push_curl_load(err, errlen) != 0)
		goto fail;
	if (push_config_parse_url(p, c->url, err, errlen) != 0)
		goto fail;
	d->app_name = xstrdup(c->app_name ? c->app_name : "");
	d->mode = xstrdup(c->mode ? c->mode : "");
	d->tags = push_config_strv_dup(c->tags, c->ntags);
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
	    push_config_value_ok(c->tenant) != 0)) {
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
	    push_config_value_ok(c->token) != 0)) {
		error_set(err, errlen, "invalid token (empty or with a control character)");
		goto fail;
	}
	if (d->sample_rate < 0 || d->sample_rate > 1000000 ||
	    c->timeout_s < 0 || c->timeout_s != c->timeout_s) {
		error_set(err, errlen, "invalid sample rate or timeout");
		goto fail;
	}
	p->headers = push_config_strv_dup(c->headers, c->nheaders);
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
	push_config_strv_free(p->headers, p->nheaders);
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
