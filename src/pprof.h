/*
 * pprof.h: the pprof format (gzip-compressed perftools.profiles.Profile
 * protobuf), written for `go tool pprof` and read from rperf or any tool.
 */
#ifndef RPERF_PPROF_H
#define RPERF_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

/* Largest protobuf pprof_parse() accepts once decompressed. */
#define PPROF_MAX_DECOMPRESSED ((size_t)512 << 20)
/* Most frames (after inlined lines are expanded) pprof_parse() accepts. */
#define PPROF_MAX_FRAMES ((size_t)1 << 26)

/*
 * Write P to FP as gzip-compressed protobuf.  Returns 0, or -1 with a
 * one-line message in ERR (errno is kept from a failed write).
 */
int pprof_write(const struct profile *p, FILE *fp, char *err, size_t errlen);

/*
 * Parse LEN bytes of gzipped or raw protobuf into a new profile.  Every
 * index and id is checked; on anything corrupt, truncated or too large
 * returns NULL with a one-line message in ERR.  A location with several
 * lines (inlined functions) becomes consecutive frames, innermost first;
 * mappings are read and ignored.
 */
struct profile *pprof_parse(const uint8_t *buf, size_t len, char *err,
    size_t errlen);

/* Whether BUF starts with the gzip magic bytes. */
int pprof_is_gzip(const uint8_t *buf, size_t len);

#endif
