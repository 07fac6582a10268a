/*
 * fuzz_folded.c: libFuzzer harness for folded_parse().  Whatever the
 * input, parsing must end in a profile or a one-line "line N: ..." error,
 * and folded output must be a fixed point: writing what was parsed, then
 * parsing and writing that again, gives the same text.  See README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parse TEXT (which must parse) and write it folded into *OUT. */
static size_t
fuzz_folded_cycle(const char *text, size_t len, char **out)
{
	char err[256];
	struct profile *p = folded_parse(text, len, err, sizeof err);
	size_t outlen = 0;
	FILE *fp;

	if (p == NULL)
		abort();
	fp = open_memstream(out, &outlen);
	if (folded_write(p, fp, 0) != 0)
		abort();
	fclose(fp);
	profile_free(p);
	return outlen;
}

/* Run one input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p;
	char err[256] = "", *a = NULL, *b = NULL;
	size_t alen, blen;
	FILE *fp;

	p = folded_parse((const char *)data, size, err, sizeof err);
	if (p == NULL) {
		if (strncmp(err, "line ", 5) != 0 || strchr(err, '\n') != NULL)
			abort();
		return 0;
	}
	fp = fopen("/dev/null", "w");
	text_write(p, fp, NULL);
	fclose(fp);
	profile_free(p);

	alen = fuzz_folded_cycle((const char *)data, size, &a);
	blen = fuzz_folded_cycle(a, alen, &b);
	if (alen != blen || memcmp(a, b, alen) != 0)
		abort();
	free(a);
	free(b);
	return 0;
}
