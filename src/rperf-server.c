/*
 * rperf-server.c: what the Rperf module gives servers and job workers.
 *
 * - The helpers written in Ruby (rperf/rack, rperf/sidekiq,
 *   rperf/active_job) are found by require: their directory is added to
 *   $LOAD_PATH before ruby's options are processed (so -rrperf/rack
 *   works), then moved to its end as soon as the first file or -e is
 *   compiled (Ruby's own directories are there by then), and again when
 *   the script is about to run: it never hides a file of the
 *   application's, and no require looks there first (ahead of Ruby's
 *   directories, each file rubygems loads at boot was looked for there
 *   first, some 30 failed system calls); Rperf::Rack, Rperf::Sidekiq and
 *   Rperf::ActiveJob autoload.
 * - Rperf.capture_begin / Rperf.capture_end: one request's or job's
 *   samples, labelled at the end (its status) and, when it was slow,
 *   written as a profile of its own (sampler-capture.c).
 * - Rperf.report: the profile so far, or of about the last minutes,
 *   filtered and rendered by rperf's own writers, as a String (the
 *   in-app viewer); Rperf.label_values: the values a label has had.
 * - Rperf.mark: a named span on the thread's timeline (a request, a
 *   job, a phase), with --timeline.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ruby.h>

#include "formats.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "rperf-module.h"
#include "rperf-server.h"
#include "sampler.h"
#include "text.h"
#include "xmalloc.h"

/* Meta entries a capture's profile may carry, and their lengths. */
#define RPERF_META_MAX		16
#define RPERF_META_KEY_MAX	64
#define RPERF_META_VALUE_MAX	512

/* The directory rperf_server_define added to $LOAD_PATH, or "". */
static char rperf_lib_added[PATH_MAX];

/* Whether DIR is a directory. */
static int
rperf_is_dir(const char *dir)
{
	return dir != NULL && *dir != '\0' && access(dir, X_OK) == 0;
}

/*
 * The directory of the Ruby helpers: $RPERF_RUBYLIB; the source tree's
 * lib when this is the binary of the build tree; else beside the
 * installed binary (BINDIR/../share/rperf/ruby), then where it was meant
 * to be installed.  NULL when none exists.
 */
static const char *
rperf_lib_dir(char *buf, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n;
	const char *env = getenv("RPERF_RUBYLIB");

	if (env != NULL && *env != '\0')
		return env;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		if (strcmp(exe, RPERF_BUILD_DIR) == 0 && rperf_is_dir(RPERF_SOURCE_RUBYLIB))
			return RPERF_SOURCE_RUBYLIB;
		snprintf(buf, len, "%s/../share/rperf/ruby", exe);
		if (rperf_is_dir(buf))
			return buf;
	}
	if (rperf_is_dir(RPERF_RUBYLIB_DIR))
		return RPERF_RUBYLIB_DIR;
	return NULL;
}

/* Rperf.capture_begin: a token for capture_end, or nil when this process
 * does not sample time. */
static VALUE
rperf_capture_begin(VALUE self)
{
	int id = sampler_capture_begin();

	return id > 0 ? INT2NUM(id) : Qnil;
}

/* What capture_end's relabelling needs. */
struct rperf_relabel {
	VALUE labels;		/* Hash */
};

static int
rperf_relabel(int label_set, void *arg)
{
	struct rperf_relabel *r = arg;

	return rperf_module_merge_labels(label_set, r->labels);
}

/* Check one meta entry and add it to the profile (rb_hash_foreach). */
static int
rperf_meta_i(VALUE key, VALUE value, VALUE arg)
{
	struct profile *p = (struct profile *)arg;
	VALUE k = rb_obj_as_string(key), v = rb_obj_as_string(value);
	char ck[RPERF_META_KEY_MAX + 16];

	snprintf(ck, sizeof ck, "%s%s", PROFILE_COMMENT_CAPTURE, RSTRING_PTR(k));
	profile_add_meta(p, ck, "%s", RSTRING_PTR(v));
	return ST_CONTINUE;
}

/* Raise unless META is a small Hash of short one-line strings. */
static int
rperf_meta_check_i(VALUE key, VALUE value, VALUE arg)
{
	VALUE k = rb_obj_as_string(key), v = rb_obj_as_string(value);

	if (RSTRING_LEN(k) == 0 || RSTRING_LEN(k) > RPERF_META_KEY_MAX ||
	    RSTRING_LEN(v) > RPERF_META_VALUE_MAX ||
	    memchr(RSTRING_PTR(k), '\n', RSTRING_LEN(k)) != NULL ||
	    memchr(RSTRING_PTR(v), '\n', RSTRING_LEN(v)) != NULL ||
	    memchr(RSTRING_PTR(k), '\0', RSTRING_LEN(k)) != NULL ||
	    memchr(RSTRING_PTR(v), '\0', RSTRING_LEN(v)) != NULL ||
	    memchr(RSTRING_PTR(k), ':', RSTRING_LEN(k)) != NULL)
		rb_raise(rb_eArgError, "meta %" PRIsVALUE " => %" PRIsVALUE
		    ": keys of 1 to %d and values of at most %d characters, one line, no ':' in a key",
		    rb_inspect(key), rb_inspect(value), RPERF_META_KEY_MAX, RPERF_META_VALUE_MAX);
	return ST_CONTINUE;
}

/* capture_end's options, checked. */
struct rperf_capture_args {
	VALUE opts;
	VALUE labels, output, meta;
	const char *path;
	const struct format *fmt;
};

/* Check capture_end's options into ARG (under rb_protect). */
static VALUE
rperf_capture_args(VALUE arg)
{
	static ID kw[3];
	struct rperf_capture_args *a = (struct rperf_capture_args *)arg;
	VALUE vals[3] = { Qundef, Qundef, Qundef };

	if (kw[0] == 0) {
		kw[0] = rb_intern("labels");
		kw[1] = rb_intern("output");
		kw[2] = rb_intern("meta");
	}
	a->labels = a->output = a->meta = Qnil;
	if (!NIL_P(a->opts))
		rb_get_kwargs(a->opts, kw, 0, 3, vals);
	if (vals[0] != Qundef && !NIL_P(vals[0])) {
		a->labels = rb_convert_type(vals[0], T_HASH, "Hash", "to_hash");
		/* Bad labels raise here. */
		if (RHASH_SIZE(a->labels) > 0)
			rperf_module_merge_labels(0, a->labels);
		else
			a->labels = Qnil;
	}
	if (vals[1] != Qundef && !NIL_P(vals[1])) {
		a->output = vals[1];
		FilePathValue(a->output);
		a->path = StringValueCStr(a->output);
		a->fmt = format_by_path(a->path, FORMAT_RECORD);
		if (a->fmt == NULL)
			a->fmt = &format_pprof;
	}
	if (vals[2] != Qundef && !NIL_P(vals[2])) {
		a->meta = rb_convert_type(vals[2], T_HASH, "Hash", "to_hash");
		if (RHASH_SIZE(a->meta) > RPERF_META_MAX)
			rb_raise(rb_eArgError, "meta has %ld entries (at most %d)",
			    (long)RHASH_SIZE(a->meta), RPERF_META_MAX);
		rb_hash_foreach(a->meta, rperf_meta_check_i, Qnil);
	}
	return Qnil;
}

/*
 * Rperf.capture_end(token, labels: {}, output: nil, meta: {}): close the
 * capture; LABELS go to each of its samples, in the run's profile too;
 * with OUTPUT its samples are written there as a profile of their own
 * (the format from the extension, else pprof), META as comments
 * "capture KEY: VALUE".  Returns OUTPUT, or nil.  An unknown token (or
 * nil: the capture never began) does nothing and returns nil.
 */
static VALUE
rperf_capture_end(int argc, VALUE *argv, VALUE self)
{
	struct rperf_capture_args args;
	VALUE token, opts, labels, output, meta;
	struct rperf_relabel rl;
	struct profile *p = NULL;
	const struct format *fmt = NULL;
	const char *path = NULL;
	char err[512];
	int rc, state = 0;

	memset(&args, 0, sizeof args);
	rb_scan_args(argc, argv, "1:", &token, &opts);
	if (!NIL_P(token) && !FIXNUM_P(token))
		rb_raise(rb_eTypeError, "capture token must be an Integer from Rperf.capture_begin");
	/* Bad options raise after the capture is closed (nothing written),
	 * so that a mistake in a middleware does not leave it open. */
	args.opts = opts;
	rb_protect(rperf_capture_args, (VALUE)&args, &state);
	if (state != 0) {
		if (!NIL_P(token))
			sampler_capture_end(FIX2INT(token), NULL, NULL, NULL);
		rb_jump_tag(state);
	}
	labels = args.labels;
	output = args.output;
	meta = args.meta;
	path = args.path;
	fmt = args.fmt;
	if (NIL_P(token))
		return Qnil;
	rl.labels = labels;
	rc = sampler_capture_end(FIX2INT(token), !NIL_P(labels) ? rperf_relabel : NULL, &rl,
	    path != NULL ? &p : NULL);
	if (rc != 0 || p == NULL)
		return Qnil;
	if (!NIL_P(meta))
		rb_hash_foreach(meta, rperf_meta_i, (VALUE)p);
	rc = profile_write_file(p, path, fmt, NULL, err, sizeof err);
	profile_free(p);
	sampler_bill_now();
	if (rc != 0)
		rb_raise(rb_eIOError, "%s", err);
	RB_GC_GUARD(output);
	RB_GC_GUARD(args.opts);
	return output;
}

/* Add the --tagfocus rules of TAGFOCUS (a String or an Array of them). */
static void
rperf_report_filter(struct report_filter *f, VALUE tagfocus)
{
	VALUE list = rb_check_array_type(tagfocus);
	char err[256];
	long i;

	if (NIL_P(list))
		list = rb_ary_new_from_args(1, tagfocus);
	for (i = 0; i < RARRAY_LEN(list); i++) {
		VALUE s = rb_obj_as_string(RARRAY_AREF(list, i));

		if (report_filter_add(f, REPORT_TAGFOCUS, StringValueCStr(s), err,
		    sizeof err) != 0) {
			report_filter_release(f);
			rb_raise(rb_eArgError, "tagfocus: %s", err);
		}
	}
}

/* The bytes a writer wrote to a memory stream. */
struct rperf_render {
	const struct format *fmt;
	struct profile *p;
	struct format_opts fo;
	char *buf;
	size_t len;
	int rc;
};

/* Render the profile into a memory buffer (nothing in it raises). */
static void
rperf_render(struct rperf_render *r)
{
	FILE *fp = open_memstream(&r->buf, &r->len);

	if (fp == NULL) {
		r->rc = -1;
		return;
	}
	r->rc = r->fmt->write(r->p, fp, &r->fo);
	if (fclose(fp) != 0)
		r->rc = -1;
}

/*
 * Rperf.report(format: "text", last: nil, tagfocus: nil, sample_index:
 * nil, top: nil): the profile so far (with LAST, of about the last LAST
 * seconds: windows are kept a minute apart for 15 minutes once asked for)
 * rendered as FORMAT, a String; nil when not profiling.
 */
static VALUE
rperf_report(int argc, VALUE *argv, VALUE self)
{
	static ID kw[5];
	VALUE opts, vals[5] = { Qundef, Qundef, Qundef, Qundef, Qundef }, out;
	struct rperf_render r;
	struct report_filter f;
	struct text_opts topts;
	int64_t last_ns = 0;
	size_t vi;

	if (kw[0] == 0) {
		kw[0] = rb_intern("format");
		kw[1] = rb_intern("last");
		kw[2] = rb_intern("tagfocus");
		kw[3] = rb_intern("sample_index");
		kw[4] = rb_intern("top");
	}
	rb_scan_args(argc, argv, "0:", &opts);
	if (!NIL_P(opts))
		rb_get_kwargs(opts, kw, 0, 5, vals);
	memset(&r, 0, sizeof r);
	r.fmt = &format_text;
	if (vals[0] != Qundef && !NIL_P(vals[0])) {
		VALUE s = rb_obj_as_string(vals[0]);
		char names[128];

		r.fmt = format_by_name(StringValueCStr(s), FORMAT_CONVERT);
		if (r.fmt == NULL)
			rb_raise(rb_eArgError, "unknown format %" PRIsVALUE " (expected %s)",
			    rb_inspect(vals[0]), format_names(FORMAT_CONVERT, NULL, names,
			    sizeof names));
	}
	if (vals[1] != Qundef && !NIL_P(vals[1])) {
		double secs = NUM2DBL(vals[1]);

		if (!(secs > 0 && secs < 1e9))
			rb_raise(rb_eArgError, "last: must be a positive number of seconds");
		last_ns = (int64_t)(secs * 1e9);
	}
	text_opts_init(&topts);
	if (vals[4] != Qundef && !NIL_P(vals[4])) {
		long top = NUM2LONG(vals[4]);

		if (top < 1 || top > 100000)
			rb_raise(rb_eArgError, "top: must be 1 to 100000");
		topts.top = (size_t)top;
	}
	report_filter_init(&f);
	if (vals[2] != Qundef && !NIL_P(vals[2]))
		rperf_report_filter(&f, vals[2]);
	if (last_ns > 0)
		sampler_window_enable();
	r.p = sampler_window(last_ns);
	if (r.p == NULL) {
		report_filter_release(&f);
		return Qnil;
	}
	if (vals[3] != Qundef && !NIL_P(vals[3])) {
		VALUE s = rb_obj_as_string(vals[3]);

		if (profile_value_by_name(r.p, StringValueCStr(s), &vi) != 0) {
			profile_free(r.p);
			report_filter_release(&f);
			rb_raise(rb_eArgError, "no sample type %" PRIsVALUE " in this profile",
			    rb_inspect(vals[3]));
		}
		topts.value_index = vi;
	}
	if (report_filter_active(&f)) {
		report_filter_apply(r.p, &f);
		profile_add_meta(r.p, PROFILE_COMMENT_FILTERS, "%s", report_filter_describe(&f));
		r.fo.subtitle = report_filter_describe(&f);
	}
	r.fo.text = &topts;
	r.fo.source = "Rperf.report";
	rperf_render(&r);
	profile_free(r.p);
	report_filter_release(&f);
	if (r.rc != 0) {
		free(r.buf);
		rb_raise(rb_eIOError, "cannot render the profile as %s", r.fmt->name);
	}
	out = (r.fmt->flags & FORMAT_BINARY) ? rb_str_new(r.buf, (long)r.len) :
	    rb_utf8_str_new(r.buf, (long)r.len);
	free(r.buf);
	return out;
}

/* ensure-part of Rperf.mark. */
static VALUE
rperf_mark_leave(VALUE id)
{
	sampler_mark_end(NUM2INT(id), NULL, 0);
	return Qnil;
}

static VALUE
rperf_mark_yield(VALUE arg)
{
	return rb_yield(Qundef);
}

/* The mark name NAME as a String. */
static VALUE
rperf_mark_name(VALUE name)
{
	if (SYMBOL_P(name))
		return rb_sym2str(name);
	StringValue(name);
	return name;
}

/* Rperf.mark(name) { ... }: the block is a span called NAME on this
 * thread's timeline (with --timeline; otherwise the block just runs). */
static VALUE
rperf_mark(VALUE self, VALUE name)
{
	VALUE s = rperf_mark_name(name);
	int id;

	if (!rb_block_given_p())
		rb_raise(rb_eArgError, "Rperf.mark needs a block (or use Rperf.mark_start and Rperf.mark_stop)");
	id = sampler_mark_begin(RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
	if (id == 0)
		return rb_yield(Qundef);
	return rb_ensure(rperf_mark_yield, Qnil, rperf_mark_leave, INT2NUM(id));
}

/* Rperf.mark_start(name): open a span; a token for mark_stop, or nil when
 * marks are not kept. */
static VALUE
rperf_mark_start(VALUE self, VALUE name)
{
	VALUE s = rperf_mark_name(name);
	int id = sampler_mark_begin(RSTRING_PTR(s), (size_t)RSTRING_LEN(s));

	return id > 0 ? INT2NUM(id) : Qnil;
}

/* Rperf.mark_stop(token, name = nil): close it, renamed NAME when given
 * (nil and unknown tokens: nothing). */
static VALUE
rperf_mark_stop(int argc, VALUE *argv, VALUE self)
{
	VALUE token, name, s = Qnil;

	rb_scan_args(argc, argv, "11", &token, &name);
	if (!NIL_P(name))
		s = rperf_mark_name(name);
	if (FIXNUM_P(token)) {
		if (NIL_P(s))
			sampler_mark_end(FIX2INT(token), NULL, 0);
		else
			sampler_mark_end(FIX2INT(token), RSTRING_PTR(s), (size_t)RSTRING_LEN(s));
	} else if (!NIL_P(token)) {
		rb_raise(rb_eTypeError, "mark token must be an Integer from Rperf.mark_start");
	}
	RB_GC_GUARD(s);
	return Qnil;
}

/* Rperf.allocations?: whether allocations are sampled in this run (so
 * that a helper labels them when they happen, not only at the end). */
static VALUE
rperf_allocations_p(VALUE self)
{
	return sampler_alloc_on() ? Qtrue : Qfalse;
}

/* Rperf.label_values(key): the values label KEY has had, sorted. */
static VALUE
rperf_label_values(VALUE self, VALUE key)
{
	return rperf_module_label_values(rb_obj_as_string(key));
}

/* Move the helpers' directory to the end of $LOAD_PATH, unless it is
 * there: any change to $LOAD_PATH makes Ruby's next require expand it
 * all again, the real path of each entry (some 70 readlink calls for
 * Ruby's own entries, 0.1 ms here). */
static void
rperf_lib_to_end(void)
{
	VALUE path = rb_gv_get("$LOAD_PATH"), entry, last;
	long n;

	if (rperf_lib_added[0] == '\0' || !RB_TYPE_P(path, T_ARRAY) || RB_OBJ_FROZEN(path))
		return;
	entry = rb_str_new_cstr(rperf_lib_added);
	n = RARRAY_LEN(path);
	last = n > 0 ? RARRAY_AREF(path, n - 1) : Qnil;
	if (RB_TYPE_P(last, T_STRING) && rb_str_equal(last, entry) == Qtrue)
		return;
	if (!NIL_P(rb_ary_delete(path, entry)))
		rb_ary_push(path, entry);
}

/* SCRIPT_COMPILED, once: the first file (or -e) is compiled, by which
 * time ruby has put its own directories in $LOAD_PATH, and any -r
 * before it was looked up. */
static void
rperf_lib_compiled(rb_event_flag_t event, VALUE data, VALUE self, ID mid, VALUE klass)
{
	(void)event;
	(void)data;
	(void)self;
	(void)mid;
	(void)klass;
	rb_remove_event_hook(rperf_lib_compiled);
	rperf_lib_to_end();
}

void
rperf_server_define(VALUE module)
{
	char buf[PATH_MAX];
	const char *dir = rperf_lib_dir(buf, sizeof buf);

	snprintf(rperf_lib_added, sizeof rperf_lib_added, "%s", dir != NULL ? dir : "");

	rb_define_module_function(module, "capture_begin", rperf_capture_begin, 0);
	rb_define_module_function(module, "capture_end", rperf_capture_end, -1);
	rb_define_module_function(module, "report", rperf_report, -1);
	rb_define_module_function(module, "label_values", rperf_label_values, 1);
	rb_define_module_function(module, "allocations?", rperf_allocations_p, 0);
	rb_define_module_function(module, "mark", rperf_mark, 1);
	rb_define_module_function(module, "mark_start", rperf_mark_start, 1);
	rb_define_module_function(module, "mark_stop", rperf_mark_stop, -1);
	if (dir == NULL)
		return;
	rb_ary_push(rb_gv_get("$LOAD_PATH"), rb_str_new_cstr(dir));
	rb_add_event_hook(rperf_lib_compiled, RUBY_EVENT_SCRIPT_COMPILED, Qnil);
	{
		static const char *const autoloads[][2] = {
			{ "Rack", "rperf/rack" },
			{ "Sidekiq", "rperf/sidekiq" },
			{ "ActiveJob", "rperf/active_job" },
		};
		size_t i;

		for (i = 0; i < sizeof autoloads / sizeof autoloads[0]; i++)
			rb_funcall(module, rb_intern("autoload"), 2,
			    ID2SYM(rb_intern(autoloads[i][0])), rb_str_new_cstr(autoloads[i][1]));
	}
}

void
rperf_server_ready(void)
{
	/* The hook is gone by now unless nothing was compiled (removing
	 * one that is not there does nothing); directories that -r
	 * libraries and the script's options added since the first compile
	 * go before it too. */
	rb_remove_event_hook(rperf_lib_compiled);
	rperf_lib_to_end();
}
