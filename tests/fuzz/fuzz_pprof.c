/*
 * fuzz_pprof.c: libFuzzer harness for pprof_parse().  Whatever the input,
 * parsing must end in a profile or a one-line error; a parsed profile
 * must go through every writer, and what pprof_write() makes of it must
 * parse again to the same profile.  See README.md for building it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "pprof.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run one input. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p, *q;
	char err[256] = "", *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	FILE *fp;

	p = pprof_parse(data, size, err, sizeof err);
	if (p == NULL) {
		if (err[0] == '\0' || strchr(err, '\n') != NULL)
			abort();
		return 0;
	}
	fp = open_memstream(&buf, &len);
	if (pprof_write(p, fp, err, sizeof err) != 0)
		abort();
	fclose(fp);
	q = pprof_parse((const uint8_t *)buf, len, err, sizeof err);
	if (q == NULL)
		abort();
	fp = open_memstream(&buf2, &len2);
	if (pprof_write(q, fp, err, sizeof err) != 0)
		abort();
	fclose(fp);
	if (len != len2 || memcmp(buf, buf2, len) != 0)
		abort();
	free(buf);
	free(buf2);

	fp = fopen("/dev/null", "w");
	folded_write(p, fp, p->default_value);
	text_write(p, fp, NULL);
	fclose(fp);
	profile_free(q);
	profile_free(p);
	return 0;
}
