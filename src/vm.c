/*
 * vm.c: embed libruby and run a script as the ruby executable would.
 *
 * The order is ruby's own (ruby_sysinit, ruby_init, ruby_options,
 * ruby_run_node) with two additions: the start hook runs right after
 * ruby_init, and the finish hook is the first end proc registered, so
 * Ruby runs it after every at_exit handler the script or its libraries
 * add, on every path that runs at_exit handlers.  Everything the script can
 * observe ($0, ARGV, __FILE__, DATA, RbConfig.ruby, exit statuses, signal
 * behaviour) is therefore ruby's, not ours.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <locale.h>
#include <unistd.h>

#include <ruby.h>
#include <ruby/version.h>

#include "error.h"
#include "formats.h"
#include "vm.h"
#include "xmalloc.h"

struct vm_state {
	const struct vm_hooks *hooks;
	int ran;		/* ruby_options gave a runnable script */
	int finished;		/* the finish hook has run */
	int finish_failed;	/* it could not save its results */
};

extern char **environ;

static int vm_process_argc;
static char **vm_process_argv;
static struct vm_state vm_state;
/* How many empty strings were put in front of environ so that Ruby sees
 * the argument area and the environment as one (see vm_place_args);
 * taken out again once Ruby has copied environ. */
static size_t vm_env_padding;

/* Remember the process's own argv: its strings are where ruby's go. */
void
vm_save_process_args(int argc, char **argv)
{
	vm_process_argc = argc;
	vm_process_argv = argv;
}

/* The end of the process's argument strings, when they lie one after
 * another as the kernel puts them; NULL otherwise. */
static char *
vm_process_args_end(void)
{
	char *end;
	int i;

	if (vm_process_argc < 1 || vm_process_argv == NULL)
		return NULL;
	end = vm_process_argv[0];
	for (i = 0; i < vm_process_argc; i++) {
		if (vm_process_argv[i] != end)
			return NULL;
		end += strlen(end) + 1;
	}
	return end;
}

/*
 * Copy ARGC strings of ARGV into the process's argument area, one after
 * the other from its start, and return an argv pointing at them: what
 * ruby's main() hands Ruby.  The rest of the area (rperf's own words,
 * always longer than "ruby") is zeroed; it is then bridged to the
 * environment strings that follow it by one empty string per byte in
 * front of environ, so Ruby's setproctitle finds one contiguous area as
 * long as ruby's would be and a long title is cut where ruby cuts it.
 * With no usable area (not contiguous, too small) the strings go into a
 * block of our own: a title is then kept to that block, never written
 * past it.  The argv strings must not point into the area (main copies).
 */
static char **
vm_place_args(int argc, char **argv)
{
	char **out = xcalloc((size_t)argc + 1, sizeof *out);
	char *start = vm_process_argv ? vm_process_argv[0] : NULL;
	char *end = vm_process_args_end();
	size_t need = 0;
	char *p;
	int i;

	for (i = 0; i < argc; i++)
		need += strlen(argv[i]) + 1;
	if (end == NULL || need > (size_t)(end - start)) {
		start = xmalloc(need);
		end = start + need;
	}
	p = start;
	for (i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(p, argv[i], n);
		out[i] = p;
		p += n;
	}
	memset(p, 0, (size_t)(end - p));

	if (environ != NULL && environ[0] == end && p < end) {
		size_t pad = (size_t)(end - p), nenv = 0, k;
		char **env;

		while (environ[nenv] != NULL)
			nenv++;
		env = xcalloc(pad + nenv + 1, sizeof *env);
		/* The string before the first pad byte ends at p - 1, so
		 * the pad strings start at p. */
		for (k = 0; k < pad; k++)
			env[k] = p + k;
		memcpy(env + pad, environ, nenv * sizeof *env);
		environ = env;
		vm_env_padding = pad;
	}
	return out;
}

/* Take the bridging empty strings out of the front of the environ Ruby
 * copied, so that no child process inherits them (an empty entry of the
 * user's own, further on, stays as under ruby). */
static void
vm_drop_env_padding(void)
{
	size_t i, n = vm_env_padding;

	vm_env_padding = 0;
	if (n == 0 || environ == NULL)
		return;
	for (i = 0; i < n; i++)
		if (environ[i] == NULL || environ[i][0] != '\0')
			return;	/* not the array we padded: leave it */
	for (i = 0; environ[n + i] != NULL; i++)
		environ[i] = environ[n + i];
	environ[i] = NULL;
}

/* Body of the end proc, run under rb_protect. */
static VALUE
vm_finish_body(VALUE arg)
{
	struct vm_state *st = &vm_state;

	if (st->hooks->finish(st->hooks->arg, st->ran) != 0)
		st->finish_failed = 1;
	return Qnil;
}

/* Body of vm_finish_error's rb_protect: EXC's message as a String. */
static VALUE
vm_exc_message(VALUE exc)
{
	return rb_obj_as_string(rb_funcall(exc, rb_intern("message"), 0));
}

/* Say that saving the profile raised EXC: its class and message, where
 * they can be had (the caller puts $! back). */
static void
vm_finish_error(VALUE exc)
{
	VALUE msg = Qnil;
	int state = 1;

	if (!NIL_P(exc) && rb_obj_is_kind_of(exc, rb_eException))
		msg = rb_protect(vm_exc_message, exc, &state);
	if (state == 0 && RB_TYPE_P(msg, T_STRING))
		error_print("internal error while saving the profile: %s: %.*s",
		    rb_obj_classname(exc), (int)RSTRING_LEN(msg), RSTRING_PTR(msg));
	else
		error_print("internal error while saving the profile");
}

/* The end proc: the finish hook, once, never letting an exception out.
 * Its argument is marked by the GC as a VALUE, so it is Qnil and the
 * state is the file's own. */
static void
vm_end_proc(VALUE arg)
{
	struct vm_state *st = &vm_state;
	VALUE errinfo;
	int state = 0;

	if (st->finished || st->hooks->finish == NULL)
		return;
	st->finished = 1;
	/* Keep the script's $! for Ruby's own error report after us. */
	errinfo = rb_errinfo();
	rb_protect(vm_finish_body, Qnil, &state);
	if (state != 0) {
		vm_finish_error(rb_errinfo());
		st->finish_failed = 1;
	}
	rb_set_errinfo(errinfo);
}

/*
 * exit! skips at_exit handlers, and so would skip the finish hook: the
 * replacement runs the hook, then leaves exactly as Ruby's exit! does
 * (no handlers, no flushing of Ruby's IO buffers, the same status).
 */
static VALUE
vm_exit_bang(int argc, VALUE *argv, VALUE self)
{
	VALUE v;
	int status = EXIT_FAILURE;

	rb_scan_args(argc, argv, "01", &v);
	if (argc > 0) {
		if (v == Qtrue)
			status = EXIT_SUCCESS;
		else if (v != Qfalse)
			status = NUM2INT(v);
	}
	vm_end_proc(Qnil);
	_exit(status);
	UNREACHABLE_RETURN(Qnil);
}

/* Run ruby with ARGV; return its exit status. */
int
vm_run(int argc, char **argv, const struct vm_hooks *hooks)
{
	int status = 0;
	void *node;

	setlocale(LC_CTYPE, "");
	argv = vm_place_args(argc, argv);
	ruby_sysinit(&argc, &argv);
	{
		RUBY_INIT_STACK;
		ruby_init();
		memset(&vm_state, 0, sizeof vm_state);
		vm_state.hooks = hooks;
		if (hooks->start != NULL && hooks->start(hooks->arg) != 0) {
			vm_state.finished = 1;
			ruby_cleanup(0);
			return 1;
		}
		rb_set_end_proc(vm_end_proc, Qnil);
		rb_define_global_function("exit!", vm_exit_bang, -1);
		rb_define_module_function(rb_mProcess, "exit!", vm_exit_bang, -1);
		node = ruby_options(argc, argv);
		vm_drop_env_padding();
		vm_state.ran = ruby_executable_node(node, &status);
		if (vm_state.ran && hooks->ready != NULL)
			hooks->ready(hooks->arg);
		status = ruby_run_node(node);
	}
	if (vm_state.finish_failed && status == 0)
		status = 1;
	return status;
}

/* One figure of a GC.stat Hash, 0 when this Ruby does not have it. */
static uint64_t
vm_gc_stat(VALUE h, const char *key)
{
	VALUE v = rb_hash_lookup2(h, ID2SYM(rb_intern(key)), Qnil);

	return RB_INTEGER_TYPE_P(v) ? (uint64_t)NUM2ULL(v) : 0;
}

/* The VM's GC counters (a Hash, so that a key this Ruby lacks is 0,
 * not an error). */
void
vm_gc_counters(struct vm_gc_counters *c)
{
	VALUE h = rb_hash_new();

	rb_gc_stat(h);
	c->count = vm_gc_stat(h, "count");
	c->minor = vm_gc_stat(h, "minor_gc_count");
	c->major = vm_gc_stat(h, "major_gc_count");
	c->time_ms = vm_gc_stat(h, "time");
	c->allocated = vm_gc_stat(h, "total_allocated_objects");
	c->freed = vm_gc_stat(h, "total_freed_objects");
	c->heap_pages = vm_gc_stat(h, "heap_allocated_pages");
}

/* The embedded Ruby's description. */
const char *
vm_ruby_description(void)
{
	return ruby_description;
}

/* The embedded Ruby's version. */
const char *
vm_ruby_version(void)
{
	return ruby_version;
}

/* The optional features of this build: its formats, and more. */
const char *
vm_features(void)
{
	static char buf[256];

	format_names(0, " ", buf, sizeof buf);
#ifdef __linux__
	strncat(buf, " timer-signal", sizeof buf - strlen(buf) - 1);
#endif
	return buf;
}
