/*
 * rperf-module.h: the Rperf module that scripts see (labels, profile
 * blocks, snapshots) and the label sets it keeps for the sampler.
 */
#ifndef RPERF_MODULE_H
#define RPERF_MODULE_H

#include <stdint.h>

/* Define Rperf in the running VM.  Needs the GVL. */
void rperf_module_define(void);

/*
 * Call FN for each label of label set ID (0 is the empty set), with the
 * key and value as C strings.  Needs the GVL.
 */
void rperf_module_each_label(int id,
    void (*fn)(void *arg, const char *key, const char *value), void *arg);

#include <ruby.h>

/* The id of label set ID merged with the Hash LABELS (nil values delete
 * keys); raises ArgumentError on a bad key or value. */
int rperf_module_merge_labels(int id, VALUE labels);

/* The values label KEY (a String) has had in any label set, as sorted,
 * unique Strings. */
VALUE rperf_module_label_values(VALUE key);

/*
 * What happens around fork and exec in the script (Process._fork,
 * Kernel#exec, Process.exec): BEFORE_FORK in the forking process before
 * the fork; then CHILD in the new child or PARENT(pid) in the parent; and
 * BEFORE_EXEC right before the process image would be replaced.  Any may
 * be NULL.  Called with the GVL.
 */
struct rperf_module_hooks {
	/* Returns an id for the fork, given to the child and parent hooks
	 * of the same fork (another thread may fork in between). */
	uint64_t (*before_fork)(void *arg);
	void (*child)(void *arg, uint64_t fork_id);
	void (*parent)(long pid, void *arg, uint64_t fork_id);
	void (*before_exec)(void *arg);
	/* Around Process.daemon, whose parent ends inside it: before it,
	 * and after it in the daemon, or in the process it failed in. */
	void (*before_daemon)(void *arg);
	void (*daemon)(void *arg, int failed);
	void *arg;
};
void rperf_module_set_hooks(const struct rperf_module_hooks *h);

#endif
