/*
 * rperf-module.h: the Rperf module that scripts see (labels, profile
 * blocks, snapshots) and the label sets it keeps for the sampler.
 */
#ifndef RPERF_MODULE_H
#define RPERF_MODULE_H

/* Define Rperf in the running VM.  Needs the GVL. */
void rperf_module_define(void);

/*
 * Call FN for each label of label set ID (0 is the empty set), with the
 * key and value as C strings.  Needs the GVL.
 */
void rperf_module_each_label(int id,
    void (*fn)(void *arg, const char *key, const char *value), void *arg);

#endif
