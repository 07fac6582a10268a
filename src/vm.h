/*
 * vm.h: running a Ruby script in the embedded VM exactly as the ruby
 * executable would, with two points for the profiler: one after the VM is
 * up and before anything of the script's is loaded, and one after the
 * script's last at_exit handler while the VM still stands.
 */
#ifndef RPERF_VM_H
#define RPERF_VM_H

#include <stdint.h>

struct vm_hooks {
	/* With the VM up, before ruby's options (-r, the script) are
	 * processed.  Nonzero aborts the run with status 1 (the hook has
	 * said why). */
	int (*start)(void *arg);
	/* After ruby's options are processed (-r libraries loaded, the
	 * script compiled), right before the script runs; only when it
	 * will.  Redefining core methods is safe from here on, not before
	 * (YJIT looks core methods up while the options are processed). */
	void (*ready)(void *arg);
	/* After the last at_exit handler, before the VM is torn down;
	 * reached on normal end, exit, abort, an uncaught exception and
	 * SIGINT/SIGTERM.  RAN is 0 when ruby never started the script
	 * (bad option, syntax error, no such file).  Nonzero means the
	 * results could not be saved: a run that would exit 0 exits 1. */
	int (*finish)(void *arg, int ran);
	void *arg;
};

/* Remember the process's own argv for ruby_sysinit (setproctitle). */
void vm_save_process_args(int argc, char **argv);

/*
 * Run ruby with ARGV (argv[0] is the name ruby reports itself by) and
 * return the exit status ruby would.  A script killed by a signal (e.g.
 * SIGINT that nobody rescued) kills this process the same way.  Called at
 * most once per process.
 */
int vm_run(int argc, char **argv, const struct vm_hooks *hooks);

/* The VM's GC counters (GC.stat), read with the VM up. */
struct vm_gc_counters {
	uint64_t count, minor, major;
	uint64_t time_ms;		/* GC.stat(:time), 0 when not measured */
	uint64_t allocated, freed;
	uint64_t heap_pages;
};
void vm_gc_counters(struct vm_gc_counters *c);

/* The embedded Ruby's description, e.g. "ruby 3.4.5 (...) [x86_64-linux]". */
const char *vm_ruby_description(void);
/* The embedded Ruby's version, e.g. "3.4.5". */
const char *vm_ruby_version(void);
/* The optional features of this build, space-separated. */
const char *vm_features(void);

#endif
