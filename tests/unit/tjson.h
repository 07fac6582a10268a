/*
 * tjson.h: a small JSON reader for the unit tests of rperf's JSON
 * writers (speedscope, the SVG timeline's data).  rperf itself only
 * writes JSON (src/json.h), so the tests read it back with this: a
 * strict recursive-descent parser into a tree, enough to walk a file by
 * keys and indexes.  Anything it does not accept (trailing commas,
 * unescaped control characters, text after the value) fails the parse,
 * so a test that reads a writer's output also checks that it is JSON.
 * Header-only like testutil.h.
 */
#ifndef RPERF_TJSON_H
#define RPERF_TJSON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

enum tj_type { TJ_NULL, TJ_BOOL, TJ_NUM, TJ_STR, TJ_ARR, TJ_OBJ };

struct tj {
	enum tj_type type;
	double num;		/* TJ_NUM, TJ_BOOL (0 or 1) */
	int64_t i;		/* TJ_NUM: the value when it is an integer */
	char *str;		/* TJ_STR: UTF-8, NUL-terminated */
	struct tj *items;	/* TJ_ARR, TJ_OBJ: the values */
	char **keys;		/* TJ_OBJ: their keys */
	size_t n;
};

struct tj_in {
	const char *s;
	int bad;
};

static inline void
tj_ws(struct tj_in *in)
{
	while (*in->s == ' ' || *in->s == '\n' || *in->s == '\r' || *in->s == '\t')
		in->s++;
}

static inline int
tj_hex4(struct tj_in *in, unsigned *v)
{
	int k;

	*v = 0;
	for (k = 0; k < 4; k++) {
		char c = *in->s++;

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* A string at in->s (past its opening quote), decoded, or NULL. */
static inline char *
tj_string(struct tj_in *in)
{
	size_t cap = 16, n = 0;
	char *out = xmalloc(cap);

	for (;;) {
		unsigned char c = (unsigned char)*in->s++;
		unsigned cp, lo;

		if (n + 5 > cap)
			out = xrealloc(out, cap *= 2);
		if (c == '"')
			break;
		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			out[n++] = (char)c;
			continue;
		}
		c = (unsigned char)*in->s++;
		switch (c) {
		case '"': case '\\': case '/': out[n++] = (char)c; continue;
		case 'b': out[n++] = '\b'; continue;
		case 'f': out[n++] = '\f'; continue;
		case 'n': out[n++] = '\n'; continue;
		case 'r': out[n++] = '\r'; continue;
		case 't': out[n++] = '\t'; continue;
		case 'u': break;
		default: goto bad;
		}
		if (tj_hex4(in, &cp) != 0)
			goto bad;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (in->s[0] != '\\' || in->s[1] != 'u')
				goto bad;
			in->s += 2;
			if (tj_hex4(in, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
				goto bad;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			goto bad;
		}
		if (cp < 0x80) {
			out[n++] = (char)cp;
		} else if (cp < 0x800) {
			out[n++] = (char)(0xc0 | (cp >> 6));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[n++] = (char)(0xe0 | (cp >> 12));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[n++] = (char)(0xf0 | (cp >> 18));
			out[n++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	out[n] = '\0';
	return out;
bad:
	free(out);
	in->bad = 1;
	return NULL;
}

static inline void tj_value(struct tj_in *in, struct tj *v);

/* The items of an array or object at in->s (past its bracket) up to
 * CLOSE; objects (KEYED) have a key before each. */
static inline void
tj_items(struct tj_in *in, struct tj *v, int keyed, char close)
{
	size_t cap = 0;

	tj_ws(in);
	if (*in->s == close) {
		in->s++;
		return;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? cap * 2 : 8;
			v->items = xrealloc(v->items, cap * sizeof *v->items);
			if (keyed)
				v->keys = xrealloc(v->keys, cap * sizeof *v->keys);
		}
		memset(&v->items[v->n], 0, sizeof v->items[v->n]);
		tj_ws(in);
		if (keyed) {
			char *k;

			if (*in->s++ != '"' || (k = tj_string(in)) == NULL) {
				in->bad = 1;
				return;
			}
			v->keys[v->n] = k;
			tj_ws(in);
			if (*in->s++ != ':') {
				v->n++;
				in->bad = 1;
				return;
			}
		}
		tj_value(in, &v->items[v->n++]);
		if (in->bad)
			return;
		tj_ws(in);
		if (*in->s == close) {
			in->s++;
			return;
		}
		if (*in->s++ != ',') {
			in->bad = 1;
			return;
		}
	}
}

static inline void
tj_value(struct tj_in *in, struct tj *v)
{
	const char *s;
	char *end;

	tj_ws(in);
	s = in->s;
	if (*s == '{') {
		in->s++;
		v->type = TJ_OBJ;
		tj_items(in, v, 1, '}');
	} else if (*s == '[') {
		in->s++;
		v->type = TJ_ARR;
		tj_items(in, v, 0, ']');
	} else if (*s == '"') {
		in->s++;
		v->type = TJ_STR;
		v->str = tj_string(in);
	} else if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
		v->type = TJ_BOOL;
		v->num = v->i = *s == 't';
		in->s += *s == 't' ? 4 : 5;
	} else if (strncmp(s, "null", 4) == 0) {
		v->type = TJ_NULL;
		in->s += 4;
	} else if (*s == '-' || (*s >= '0' && *s <= '9')) {
		v->type = TJ_NUM;
		v->num = strtod(s, &end);
		if (end == s) {
			in->bad = 1;
			return;
		}
		v->i = strtoll(s, NULL, 10);
		in->s = end;
	} else {
		in->bad = 1;
	}
}

static inline void
tj_free(struct tj *v)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < v->n; i++) {
		struct tj *c = &v->items[i];

		if (v->keys != NULL)
			free(v->keys[i]);
		tj_free(c);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	v->items = NULL;
	v->keys = NULL;
	v->str = NULL;
	v->n = 0;
}

/* Parse S whole into a new tree; NULL when it is not one JSON value. */
static inline struct tj *
tj_parse(const char *s)
{
	struct tj_in in = { s, 0 };
	struct tj *v = xcalloc(1, sizeof *v);

	tj_value(&in, v);
	tj_ws(&in);
	if (in.bad || *in.s != '\0') {
		tj_free(v);
		free(v);
		return NULL;
	}
	return v;
}

static inline void
tj_delete(struct tj *v)
{
	tj_free(v);
	free(v);
}

/* Member KEY of object V, or NULL. */
static inline const struct tj *
tj_get(const struct tj *v, const char *key)
{
	size_t i;

	if (v == NULL || v->type != TJ_OBJ)
		return NULL;
	for (i = 0; i < v->n; i++) {
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	}
	return NULL;
}

/* Item I of array V, or NULL. */
static inline const struct tj *
tj_at(const struct tj *v, size_t i)
{
	return v != NULL && v->type == TJ_ARR && i < v->n ? &v->items[i] : NULL;
}

/* The string of V, or "" when V is not one (so a comparison fails). */
static inline const char *
tj_str(const struct tj *v)
{
	return v != NULL && v->type == TJ_STR ? v->str : "";
}

/* The integer of V, or INT64_MIN when V is not a number. */
static inline int64_t
tj_int(const struct tj *v)
{
	return v != NULL && v->type == TJ_NUM ? v->i : INT64_MIN;
}

#endif
