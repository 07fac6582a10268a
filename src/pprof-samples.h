/*
 * pprof-samples.h: the samples of a pprof profile (field 2 of
 * perftools.profiles.Profile), encoded by hand for pprof_write.
 *
 * protobuf-c packs a message by walking its descriptors, and sizes each
 * nested message again at every level it is nested in; a timeline
 * profile (record --timeline) has a sample for every tick, each with
 * three or four labels, so that generic walk was most of the work of
 * writing one at the end of a run.  The samples are the one repeated
 * part that grows with the run; the rest stays with protobuf-c.  The
 * bytes are the ones protobuf-c writes for the same message (fields in
 * number order, packed repeated scalars, proto3 zeros left out), so the
 * file is unchanged; check_pprof compares the two.
 */
#ifndef RPERF_PPROF_SAMPLES_H
#define RPERF_PPROF_SAMPLES_H

#include <protobuf-c/protobuf-c.h>

#include "profile.h"

/* Append every sample of P, as Profile field 2, to OUT. */
void pprof_samples_pack(const struct profile *p, ProtobufCBuffer *out);

#endif
