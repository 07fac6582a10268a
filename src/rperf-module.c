/*
 * rperf-module.c: the Rperf module a profiled script can use without any
 * gem: labels (Rperf.label, Rperf.labels), profile blocks (Rperf.profile,
 * which arm the timer under --defer), Rperf.snapshot and Rperf.running?.
 *
 * Label sets are interned: each distinct Hash of labels gets a small id,
 * which is all a thread's record and a sample carry.  The Hashes live in a
 * Ruby Array registered with the GC, so they need no marking of ours.
 */
#include <string.h>

#include <ruby.h>

#include "output.h"
#include "profile.h"
#include "rperf-module.h"
#include "rperf-server.h"
#include "sampler.h"
#include "text.h"

static VALUE rperf_label_sets = Qnil;	/* id -> frozen Hash */
static VALUE rperf_label_ids = Qnil;	/* frozen Hash -> id */
static VALUE rperf_module = Qnil;

/* The id of label set HASH (frozen here), added when new. */
static int
rperf_label_set_id(VALUE hash)
{
	VALUE id;

	if (RHASH_SIZE(hash) == 0)
		return 0;
	rb_hash_freeze(hash);
	id = rb_hash_lookup2(rperf_label_ids, hash, Qnil);
	if (!NIL_P(id))
		return NUM2INT(id);
	rb_ary_push(rperf_label_sets, hash);
	id = LONG2NUM(RARRAY_LEN(rperf_label_sets) - 1);
	rb_hash_aset(rperf_label_ids, hash, id);
	return NUM2INT(id);
}

/* The Hash of label set ID. */
static VALUE
rperf_label_set(int id)
{
	VALUE h = rb_ary_entry(rperf_label_sets, id);

	return NIL_P(h) ? rb_ary_entry(rperf_label_sets, 0) : h;
}

/* Merge one key/value of the caller's labels into the new set. */
static int
rperf_merge_label(VALUE key, VALUE value, VALUE merged)
{
	if (!SYMBOL_P(key) && !RB_TYPE_P(key, T_STRING))
		rb_raise(rb_eArgError, "label keys must be Symbols or Strings, not %s",
		    rb_obj_classname(key));
	if (NIL_P(value)) {
		rb_hash_delete(merged, key);
		return ST_CONTINUE;
	}
	if (!RB_TYPE_P(value, T_STRING) && !SYMBOL_P(value) && !RB_INTEGER_TYPE_P(value) &&
	    !RB_FLOAT_TYPE_P(value) && value != Qtrue && value != Qfalse)
		rb_raise(rb_eArgError,
		    "label %" PRIsVALUE " must be a String, Symbol, number, true, false or nil, not %s",
		    rb_inspect(key), rb_obj_classname(value));
	if (RB_TYPE_P(value, T_STRING))
		value = rb_str_new_frozen(value);
	rb_hash_aset(merged, key, value);
	return ST_CONTINUE;
}

/* The current thread's labels merged with LABELS; returns the new id. */
static int
rperf_merged_id(VALUE labels)
{
	VALUE merged = rb_hash_dup(rperf_label_set(sampler_current_label_set()));

	rb_hash_foreach(labels, rperf_merge_label, merged);
	return rperf_label_set_id(merged);
}

int
rperf_module_merge_labels(int id, VALUE labels)
{
	VALUE merged = rb_hash_dup(rperf_label_set(id));

	rb_hash_foreach(labels, rperf_merge_label, merged);
	return rperf_label_set_id(merged);
}

/* Collect the value of key ARG[0] into the Hash ARG[1]. */
static int
rperf_label_value_i(VALUE key, VALUE value, VALUE arg)
{
	VALUE *a = (VALUE *)arg;

	if (rb_str_equal(rb_obj_as_string(key), a[0]) == Qtrue)
		rb_hash_aset(a[1], rb_obj_as_string(value), Qtrue);
	return ST_CONTINUE;
}

VALUE
rperf_module_label_values(VALUE key)
{
	VALUE a[2];
	long i;

	a[0] = key;
	a[1] = rb_hash_new();
	for (i = 1; !NIL_P(rperf_label_sets) && i < RARRAY_LEN(rperf_label_sets); i++)
		rb_hash_foreach(RARRAY_AREF(rperf_label_sets, i), rperf_label_value_i,
		    (VALUE)a);
	return rb_ary_sort_bang(rb_funcall(a[1], rb_intern("keys"), 0));
}

/* ensure-part of a labelled block: restore the previous label set. */
static VALUE
rperf_restore_labels(VALUE prev)
{
	sampler_set_label_set(NUM2INT(prev));
	return Qnil;
}

static VALUE
rperf_yield(VALUE arg)
{
	return rb_yield(Qundef);
}

/*
 * Rperf.label(key: value, ...) { ... }: merge labels into the current
 * thread's (nil deletes one); with a block only for the block.
 */
static VALUE
rperf_label(int argc, VALUE *argv, VALUE self)
{
	VALUE labels;
	int prev, id;

	rb_scan_args(argc, argv, "0:", &labels);
	if (NIL_P(labels) || RHASH_SIZE(labels) == 0)
		rb_raise(rb_eArgError, "Rperf.label needs at least one label, e.g. Rperf.label(request: id)");
	prev = sampler_current_label_set();
	id = rperf_merged_id(labels);
	sampler_set_label_set(id);
	if (!rb_block_given_p())
		return rb_hash_dup(rperf_label_set(id));
	return rb_ensure(rperf_yield, Qnil, rperf_restore_labels, INT2NUM(prev));
}

/* Rperf.labels: the current thread's labels, as a new Hash. */
static VALUE
rperf_labels(VALUE self)
{
	return rb_hash_dup(rperf_label_set(sampler_current_label_set()));
}

/* ensure-part of Rperf.profile. */
static VALUE
rperf_profile_leave(VALUE prev)
{
	sampler_set_label_set(NUM2INT(prev));
	sampler_profile_leave();
	return Qnil;
}

/* Rperf.profile(**labels) { ... }: sample this block (under --defer, only
 * such blocks are sampled), with optional labels. */
static VALUE
rperf_profile(int argc, VALUE *argv, VALUE self)
{
	VALUE labels;
	int prev;

	rb_scan_args(argc, argv, "0:", &labels);
	if (!rb_block_given_p())
		rb_raise(rb_eArgError, "Rperf.profile needs a block");
	prev = sampler_current_label_set();
	if (!NIL_P(labels) && RHASH_SIZE(labels) > 0)
		sampler_set_label_set(rperf_merged_id(labels));
	sampler_profile_enter();
	return rb_ensure(rperf_yield, Qnil, rperf_profile_leave, INT2NUM(prev));
}

/* A C string as a Ruby String. */
static VALUE
rperf_str(const char *s)
{
	return rb_str_new_cstr(s != NULL ? s : "");
}

/* Ruby's view of profile P, as the rperf gem's Rperf.stop returned it. */
static VALUE
rperf_profile_to_hash(const struct profile *p, const struct sampler_stats *st)
{
	VALUE h = rb_hash_new(), samples = rb_ary_new_capa((long)p->nsamples);
	const char *mode = profile_comment_value(p, PROFILE_COMMENT_MODE);
	size_t i, j;

	rb_hash_aset(h, ID2SYM(rb_intern("mode")), ID2SYM(rb_intern(mode ? mode : "cpu")));
	rb_hash_aset(h, ID2SYM(rb_intern("frequency")),
	    LL2NUM(p->period > 0 ? 1000000000LL / p->period : 0));
	rb_hash_aset(h, ID2SYM(rb_intern("trigger_count")), ULL2NUM(st->triggers));
	rb_hash_aset(h, ID2SYM(rb_intern("sampling_count")), ULL2NUM(st->samples));
	rb_hash_aset(h, ID2SYM(rb_intern("sampling_time_ns")), ULL2NUM(st->job_ns));
	rb_hash_aset(h, ID2SYM(rb_intern("job_count")), ULL2NUM(st->timer_samples));
	rb_hash_aset(h, ID2SYM(rb_intern("thread_notes")), ULL2NUM(st->thread_notes));
	rb_hash_aset(h, ID2SYM(rb_intern("start_time_ns")), LL2NUM(p->time_nanos));
	rb_hash_aset(h, ID2SYM(rb_intern("duration_ns")), LL2NUM(p->duration_nanos));
	for (i = 0; i < p->nsamples; i++) {
		const struct profile_sample *s = &p->samples[i];
		const uint64_t *locs = profile_sample_locs(p, s);
		const int64_t *values = profile_sample_values(p, s);
		const struct profile_label *lb = profile_sample_labels(p, s);
		VALUE frames = rb_ary_new_capa(s->nloc), labels = rb_hash_new();
		int64_t thread = 0;

		for (j = 0; j < s->nloc; j++) {
			const struct profile_location *l = &p->locations[locs[j] - 1];
			const struct profile_function *f = &p->functions[l->function - 1];

			rb_ary_push(frames, rb_ary_new_from_args(2,
			    rperf_str(profile_str(p, f->filename)), rperf_str(profile_str(p, f->name))));
		}
		for (j = 0; j < s->nlabel; j++) {
			const char *k = profile_str(p, lb[j].key);

			if (strcmp(k, "thread") == 0)
				thread = lb[j].num;
			else if (lb[j].str != 0)
				rb_hash_aset(labels, rperf_str(k), rperf_str(profile_str(p, lb[j].str)));
			else
				rb_hash_aset(labels, rperf_str(k), LL2NUM(lb[j].num));
		}
		rb_ary_push(samples, rb_ary_new_from_args(4, frames,
		    LL2NUM(values[profile_value_index(p, (size_t)-1)]), LL2NUM(thread), labels));
	}
	rb_hash_aset(h, ID2SYM(rb_intern("samples")), samples);
	return h;
}

/* Rperf.snapshot(clear: false, output: nil, format: nil): the profile so
 * far as a Hash, or written to OUTPUT (returns the path); nil when not
 * profiling. */
static VALUE
rperf_snapshot(int argc, VALUE *argv, VALUE self)
{
	static ID kw[3];
	VALUE opts, vals[3], result;
	struct sampler_stats st;
	struct profile *p;
	const struct format *fmt = NULL;
	const char *path = NULL;
	char err[512];

	if (kw[0] == 0) {
		kw[0] = rb_intern("clear");
		kw[1] = rb_intern("output");
		kw[2] = rb_intern("format");
	}
	rb_scan_args(argc, argv, "0:", &opts);
	vals[0] = vals[1] = vals[2] = Qundef;
	if (!NIL_P(opts))
		rb_get_kwargs(opts, kw, 0, 3, vals);
	if (vals[1] != Qundef && !NIL_P(vals[1])) {
		FilePathValue(vals[1]);
		path = StringValueCStr(vals[1]);
		fmt = format_by_path(path, FORMAT_RECORD);
	}
	if (vals[2] != Qundef && !NIL_P(vals[2])) {
		VALUE f = rb_obj_as_string(vals[2]);

		char names[128];

		fmt = format_by_name(StringValueCStr(f), FORMAT_RECORD);
		if (fmt == NULL)
			rb_raise(rb_eArgError, "unknown format %" PRIsVALUE " (expected %s)",
			    rb_inspect(vals[2]), format_names(FORMAT_RECORD, NULL, names,
			    sizeof names));
	}
	if (fmt == NULL)
		fmt = &format_pprof;
	sampler_mark_event("[snapshot]");
	p = sampler_snapshot(vals[0] != Qundef && RTEST(vals[0]), &st);
	if (p == NULL)
		return Qnil;
	if (path != NULL) {
		if (profile_write_file(p, path, fmt, NULL, err, sizeof err) != 0) {
			profile_free(p);
			rb_raise(rb_eIOError, "%s", err);
		}
		profile_free(p);
		return vals[1];
	}
	result = rperf_profile_to_hash(p, &st);
	profile_free(p);
	return result;
}

/* Rperf.running?: whether this process is being profiled. */
static VALUE
rperf_running_p(VALUE self)
{
	return sampler_running() ? Qtrue : Qfalse;
}

struct rperf_each_ctx {
	void (*fn)(void *, const char *, const char *);
	void *arg;
};

/* One label of a set, as C strings. */
static int
rperf_each_label_i(VALUE key, VALUE value, VALUE arg)
{
	struct rperf_each_ctx *c = (struct rperf_each_ctx *)arg;
	VALUE k = rb_obj_as_string(key), v = rb_obj_as_string(value);

	c->fn(c->arg, StringValueCStr(k), StringValueCStr(v));
	return ST_CONTINUE;
}

/* Call FN for each label of set ID. */
void
rperf_module_each_label(int id, void (*fn)(void *, const char *, const char *), void *arg)
{
	struct rperf_each_ctx c = { fn, arg };

	if (NIL_P(rperf_label_sets) || id <= 0 || id >= RARRAY_LEN(rperf_label_sets))
		return;
	rb_hash_foreach(rb_ary_entry(rperf_label_sets, id), rperf_each_label_i, (VALUE)&c);
}

static struct rperf_module_hooks rperf_hooks;
static int rperf_hooks_defined;

/* Process._fork, prepended: tell the hooks which side of the fork this is. */
static VALUE
rperf_fork(int argc, VALUE *argv, VALUE self)
{
	uint64_t id = 0;
	VALUE pid;

	if (rperf_hooks.before_fork != NULL)
		id = rperf_hooks.before_fork(rperf_hooks.arg);
	pid = rb_call_super(argc, argv);
	if (FIXNUM_P(pid) && FIX2LONG(pid) == 0) {
		if (rperf_hooks.child != NULL)
			rperf_hooks.child(rperf_hooks.arg, id);
	} else if (FIXNUM_P(pid) && rperf_hooks.parent != NULL) {
		rperf_hooks.parent(FIX2LONG(pid), rperf_hooks.arg, id);
	}
	return pid;
}

struct rperf_daemon_args {
	int argc;
	VALUE *argv;
};

/* The original Process.daemon, under rb_protect. */
static VALUE
rperf_daemon_super(VALUE arg)
{
	const struct rperf_daemon_args *a = (const struct rperf_daemon_args *)arg;

	return rb_call_super(a->argc, a->argv);
}

/* Process.daemon, prepended: its parent ends inside it, in C, running
 * nothing of the script's, and the daemon is a child made without
 * Process._fork.  The hooks run before it and after it, in the daemon
 * (or in the process, if it raised). */
static VALUE
rperf_daemon(int argc, VALUE *argv, VALUE self)
{
	struct rperf_daemon_args a = { argc, argv };
	VALUE r;
	int state = 0;

	(void)self;
	if (rperf_hooks.before_daemon != NULL)
		rperf_hooks.before_daemon(rperf_hooks.arg);
	r = rb_protect(rperf_daemon_super, (VALUE)&a, &state);
	if (rperf_hooks.daemon != NULL)
		rperf_hooks.daemon(rperf_hooks.arg, state != 0);
	if (state != 0)
		rb_jump_tag(state);
	return r;
}

static VALUE rperf_kernel_exec = Qnil;	/* the original Kernel.exec */
static VALUE rperf_process_exec = Qnil;	/* the original Process.exec */

struct rperf_exec_call {
	VALUE original;
	int argc, kw;
	VALUE *argv;
};

static VALUE
rperf_exec_call(VALUE arg)
{
	const struct rperf_exec_call *c = (const struct rperf_exec_call *)arg;

	return rb_method_call_kw(c->argc, c->argv, c->original, c->kw);
}

/* The exec failed (it raised), and the script goes on. */
static VALUE
rperf_exec_failed(VALUE arg)
{
	(void)arg;
	sampler_hold_signals(0);
	return Qnil;
}

/* Save first, then call the original exec, with the sampler's signals
 * held: one pending at the exec would end the new program. */
static VALUE
rperf_exec_with(VALUE original, int argc, VALUE *argv)
{
	struct rperf_exec_call c = { original, argc, rb_keyword_given_p() ?
	    RB_PASS_KEYWORDS : RB_NO_KEYWORDS, argv };

	if (rperf_hooks.before_exec != NULL)
		rperf_hooks.before_exec(rperf_hooks.arg);
	sampler_hold_signals(1);
	return rb_ensure(rperf_exec_call, (VALUE)&c, rperf_exec_failed, Qnil);
}

/* Kernel#exec (and Kernel.exec). */
static VALUE
rperf_exec(int argc, VALUE *argv, VALUE self)
{
	return rperf_exec_with(rperf_kernel_exec, argc, argv);
}

/* Process.exec. */
static VALUE
rperf_process_exec_m(int argc, VALUE *argv, VALUE self)
{
	return rperf_exec_with(rperf_process_exec, argc, argv);
}

/* Install (once) the prepended methods and set the hooks they call. */
void
rperf_module_set_hooks(const struct rperf_module_hooks *h)
{
	rperf_hooks = *h;
	if (rperf_hooks_defined)
		return;
	rperf_hooks_defined = 1;
	{
		VALUE fork_hook = rb_define_module_under(rperf_module, "ForkHook");

		rb_define_method(fork_hook, "_fork", rperf_fork, -1);
		rb_define_method(fork_hook, "daemon", rperf_daemon, -1);
		rb_prepend_module(rb_singleton_class(rb_mProcess), fork_hook);
		/*
		 * exec is replaced, not prepended to: on Ruby 3.3 a module
		 * prepended to Kernel makes every Kernel method's frame read
		 * "Kernel.sleep" instead of "Kernel#sleep".  The originals are
		 * kept as Method objects and called with the same arguments.
		 */
		rperf_kernel_exec = rb_obj_method(rb_mKernel, ID2SYM(rb_intern("exec")));
		rb_gc_register_address(&rperf_kernel_exec);
		rperf_process_exec = rb_obj_method(rb_mProcess, ID2SYM(rb_intern("exec")));
		rb_gc_register_address(&rperf_process_exec);
		{
			/* No "method redefined" warning under -w: the script
			 * did not redefine anything. */
			VALUE verbose = *rb_ruby_verbose_ptr();

			*rb_ruby_verbose_ptr() = Qnil;
			rb_define_global_function("exec", rperf_exec, -1);
			rb_define_module_function(rb_mProcess, "exec", rperf_process_exec_m, -1);
			*rb_ruby_verbose_ptr() = verbose;
		}
	}
}

/* Define Rperf in the running VM. */
void
rperf_module_define(void)
{
	if (NIL_P(rperf_label_sets)) {
		rperf_label_sets = rb_ary_new();
		rb_gc_register_address(&rperf_label_sets);
		rb_ary_push(rperf_label_sets, rb_hash_freeze(rb_hash_new()));
		rperf_label_ids = rb_hash_new();
		rb_gc_register_address(&rperf_label_ids);
	}
	rperf_module = rb_define_module("Rperf");
	rb_define_module_function(rperf_module, "label", rperf_label, -1);
	rb_define_module_function(rperf_module, "labels", rperf_labels, 0);
	rb_define_module_function(rperf_module, "profile", rperf_profile, -1);
	rb_define_module_function(rperf_module, "snapshot", rperf_snapshot, -1);
	rb_define_module_function(rperf_module, "running?", rperf_running_p, 0);
	rperf_server_define(rperf_module);
}
