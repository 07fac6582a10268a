/*
 * secret.c: masking credentials out of command lines and server replies
 * (see secret.h).  It only recognises and overwrites; deciding where to
 * scrub is the callers'.
 *
 * The argv of the process is masked in place and keeps the length of
 * each string: Ruby's setproctitle (behind "$0 = ...") measures the
 * space it may overwrite by walking argv and environ while each string
 * ends where the next one starts, so a shortened string would shrink the
 * room a long process title gets.  The copies rperf stores and shows use
 * "***" instead, which does not tell a secret's length.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "secret.h"
#include "xmalloc.h"

/* Marks the masked bytes of a copy until they are collapsed to "***". */
#define SECRET_MARK '\001'
/* A shorter $RPERF_PUSH_TOKEN would mask common words, not a token. */
#define SECRET_TOKEN_MIN 8

enum secret_kind {
	SECRET_NONE,
	SECRET_URL,		/* a URL: its user info */
	SECRET_HEADER,		/* "Name: value": the value */
};

/* Overwrite the bytes [FROM, TO) with FILL. */
static void
secret_fill(char *from, const char *to, char fill)
{
	for (; from < to; from++)
		*from = fill;
}

/* What the value of the long option NAME (LEN bytes, no "--") holds. */
static enum secret_kind
secret_option_kind(const char *name, size_t len)
{
	if (len == 4 && strncmp(name, "push", 4) == 0)
		return SECRET_URL;
	/* getopt_long takes any unambiguous abbreviation: --u, --push-h */
	if (len >= 1 && len <= 3 && strncmp("url", name, len) == 0)
		return SECRET_URL;
	/* "--pu" and "--push-" are ambiguous and refused, but masking them
	 * costs nothing */
	if (len >= 2 && len <= 11 && strncmp("push-header", name, len) == 0)
		return SECRET_HEADER;
	return SECRET_NONE;
}

/*
 * The user info of every URL in S: its password, or all of it when it
 * has none (a token given as the user name).  The authority ends where
 * a URL parser would end it, or at a space or quote (S may be text).
 */
static void
secret_mask_urls(char *s, char fill)
{
	char *p = s, *auth, *end, *at, *colon, *q;

	while ((p = strstr(p, "://")) != NULL) {
		auth = p + 3;
		end = auth + strcspn(auth, "/?#\"'<>\\ \t\r\n");
		at = NULL;
		for (q = auth; q < end; q++) {
			if (*q == '@')
				at = q;	/* the last one, as push-config.c parses it */
		}
		if (at != NULL) {
			colon = memchr(auth, ':', (size_t)(at - auth));
			secret_fill(colon != NULL ? colon + 1 : auth, at, fill);
		}
		p = end;
	}
}

/* The value of the header H; all of H when it has no colon. */
static void
secret_mask_header(char *h, char fill)
{
	char *colon = strchr(h, ':'), *v;

	if (colon == NULL) {
		secret_fill(h, h + strlen(h), fill);
		return;
	}
	v = colon + 1 + strspn(colon + 1, " \t");
	secret_fill(v, v + strlen(v), fill);
}

/* Every occurrence of $RPERF_PUSH_TOKEN in S. */
static void
secret_mask_token(char *s, char fill)
{
	const char *token = getenv("RPERF_PUSH_TOKEN");
	size_t len = token != NULL ? strlen(token) : 0;
	char *hit;

	if (len < SECRET_TOKEN_MIN)
		return;
	while ((hit = strstr(s, token)) != NULL) {
		secret_fill(hit, hit + len, fill);
		s = hit + len;
	}
}

/* Mask the secrets of the words of ARGV with FILL, in place. */
static void
secret_scrub_words(int argc, char **argv, char fill)
{
	enum secret_kind kind = SECRET_NONE, next;
	size_t len;
	char *a;
	int i;

	for (i = 0; i < argc; i++) {
		a = argv[i];
		next = SECRET_NONE;
		if (a == NULL)
			continue;
		secret_mask_token(a, fill);
		if (kind == SECRET_HEADER) {
			secret_mask_header(a, fill);
		} else if (kind == SECRET_NONE && i > 0 && a[0] == '-' &&
		    a[1] == '-' && a[2] != '\0') {
			len = strcspn(a + 2, "=");
			if (a[2 + len] != '=')
				next = secret_option_kind(a + 2, len);
			else if (secret_option_kind(a + 2, len) == SECRET_HEADER)
				secret_mask_header(a + 3 + len, fill);
		}
		/* Any word, an option's or the script's, may hold a URL. */
		secret_mask_urls(a, fill);
		kind = next;
	}
}

/* Mask the secrets of ARGV in place with '*', keeping the lengths. */
void
secret_scrub_argv(int argc, char **argv)
{
	if (argv != NULL)
		secret_scrub_words(argc, argv, '*');
}

/* S with each run of SECRET_MARK as "***". */
static char *
secret_collapse(const char *s)
{
	char *out = xmalloc(3 * strlen(s) + 1), *o = out;

	while (*s != '\0') {
		if (*s != SECRET_MARK) {
			*o++ = *s++;
			continue;
		}
		memcpy(o, "***", 3);
		o += 3;
		while (*s == SECRET_MARK)
			s++;
	}
	*o = '\0';
	return out;
}

/* FIRST and ARGV joined by spaces, the secrets shown as "***". */
char *
secret_command_line(const char *first, int argc, char *const *argv)
{
	char **w = xcalloc((size_t)argc + 1, sizeof *w), *line, *out;
	size_t len = strlen(first) + 1;
	int i;

	for (i = 0; i < argc; i++) {
		w[i] = xstrdup(argv[i]);
		len += strlen(w[i]) + 1;
	}
	secret_scrub_words(argc, w, SECRET_MARK);
	line = xmalloc(len);
	strcpy(line, first);
	for (i = 0; i < argc; i++) {
		strcat(line, " ");
		strcat(line, w[i]);
		free(w[i]);
	}
	free(w);
	out = secret_collapse(line);
	free(line);
	return out;
}

/* LINE, a stored command line, with the secrets of older rperfs masked. */
char *
secret_scrub_command(const char *line)
{
	static const char opt[] = "--push-header";
	char *s = xstrdup(line), *out, *p, *v, *end, *colon;

	secret_mask_token(s, SECRET_MARK);
	secret_mask_urls(s, SECRET_MARK);
	for (p = s; (p = strstr(p, opt)) != NULL; p = end) {
		end = p + strlen(opt);
		if ((p > s && p[-1] != ' ') || (*end != ' ' && *end != '='))
			continue;
		v = end + 1;
		end = strstr(v, " -");
		if (end == NULL)
			end = v + strlen(v);
		colon = memchr(v, ':', (size_t)(end - v));
		if (colon != NULL)
			v = colon + 1 + strspn(colon + 1, " \t");
		/* already masked by a newer rperf: leave the words after it */
		if (strncmp(v, "***", 3) == 0 || *v == SECRET_MARK)
			continue;
		secret_fill(v, end, SECRET_MARK);
	}
	out = secret_collapse(s);
	free(s);
	return out;
}

/* Whether C may be part of a header or parameter name. */
static int
secret_name_char(int c)
{
	return isalnum(c) || c == '_' || c == '-';
}

/* Whether NAME (LEN bytes) names a credential in a "key=value" pair. */
static int
secret_is_key(const char *name, size_t len)
{
	static const char *const keys[] = { "token", "password", "passwd",
	    "pwd", "secret", "key", "apikey", "auth", "authorization",
	    "credential", "credentials", "signature", "sig", "session", NULL };
	size_t i, klen;

	for (i = 0; keys[i] != NULL; i++) {
		klen = strlen(keys[i]);
		if (len < klen || strncasecmp(name + len - klen, keys[i], klen) != 0)
			continue;
		/* all of the name, or its last part: access_token, x-api-key */
		if (len == klen || name[len - klen - 1] == '_' ||
		    name[len - klen - 1] == '-')
			return 1;
	}
	return 0;
}

/*
 * The values of header-like "Name: value" pairs (JSON's "Name": "value"
 * too), to the closing quote or the end of the line, and of
 * credential-like "key=value" pairs, to the next separator.
 */
static void
secret_mask_pairs(char *s, char fill)
{
	char *p, *q, *r, *v, *end;
	size_t ws;

	for (p = s; *p != '\0'; p++) {
		if (!isalpha((unsigned char)*p) || (p > s &&
		    (secret_name_char((unsigned char)p[-1]) || p[-1] == '.')))
			continue;
		for (q = p; secret_name_char((unsigned char)*q); q++)
			;
		r = q + (*q == '"' || *q == '\'');
		v = NULL;
		end = NULL;
		if (*r == ':' && r[1] != '/') {
			ws = strspn(r + 1, " \t");
			if (ws > 0 || r[1] == '"' || r[1] == '\'') {
				v = r + 1 + ws;
				if (*v == '"' || *v == '\'') {
					end = strchr(v + 1, *v);
					v++;
				}
				if (end == NULL)
					end = v + strcspn(v, "\r\n");
			}
		} else if (*r == '=' && secret_is_key(p, (size_t)(q - p))) {
			v = r + 1;
			end = v + strcspn(v, "&;, \t\r\n\"'");
		}
		if (v != NULL) {
			secret_fill(v, end, fill);
			q = end;
		}
		p = q - 1;
		if (*q == '\0')
			break;
	}
}

/* The credential after each "Basic " or "Bearer ". */
static void
secret_mask_schemes(char *s, char fill)
{
	static const char *const schemes[] = { "basic", "bearer", NULL };
	char *p, *v;
	size_t i, len;

	for (p = s; *p != '\0'; p++) {
		if (p > s && secret_name_char((unsigned char)p[-1]))
			continue;
		for (i = 0; schemes[i] != NULL; i++) {
			len = strlen(schemes[i]);
			if (strncasecmp(p, schemes[i], len) != 0 ||
			    (p[len] != ' ' && p[len] != '\t'))
				continue;
			v = p + len + strspn(p + len, " \t");
			secret_fill(v, v + strcspn(v, " \t\r\n\"',;"), fill);
		}
	}
}

/* TEXT with what looks like a credential replaced by "***". */
char *
secret_scrub_text(const char *text)
{
	char *s = xstrdup(text), *out;

	secret_mask_token(s, SECRET_MARK);
	secret_mask_urls(s, SECRET_MARK);
	secret_mask_pairs(s, SECRET_MARK);
	secret_mask_schemes(s, SECRET_MARK);
	out = secret_collapse(s);
	free(s);
	return out;
}
