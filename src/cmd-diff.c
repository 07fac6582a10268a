/*
 * cmd-diff.c: "rperf diff": compare two profiles (any mix of pprof and
 * folded) function by function, or draw a differential flame graph in
 * the target's shape.  Both profiles go through the same filters as
 * "rperf report" before they are compared.  Plain C over the profile
 * model: no Ruby is started.
 *
 * Each side may be several runs ("BASE... -- TARGET..."), so that a CI
 * job's gate (--fail-over) compares medians and one noisy run cannot trip
 * it; the report then shows the run of each side whose total is the
 * median, a real profile whose figures match the gate's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "diff.h"
#include "error.h"
#include "flamegraph.h"
#include "formats.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "xmalloc.h"

enum {
	CMD_DIFF_OPT_FORMAT = 256,
	CMD_DIFF_OPT_TOP,
	CMD_DIFF_OPT_NORMALIZE,
	CMD_DIFF_OPT_SAMPLE_INDEX,
	CMD_DIFF_OPT_FAIL_OVER,
};

static const struct cmd_option cmd_diff_options[] = {
	{ "output", 'o', 0, required_argument, "FILE",
	  "write to FILE instead of stdout (.svg: a flame graph)", "@file", 'o', 0 },
	{ "format", 0, 0, required_argument, "FORMAT",
	  "%F (default: text)", "@format", CMD_DIFF_OPT_FORMAT, FORMAT_DIFF },
	{ "top", 0, 0, required_argument, "N",
	  "rows in each table (default 30)", "@number", CMD_DIFF_OPT_TOP, 0 },
	{ "normalize", 0, 0, no_argument, NULL,
	  "scale BASE to TARGET's total before comparing", NULL, CMD_DIFF_OPT_NORMALIZE, 0 },
	CMD_SAMPLE_INDEX_OPTION(CMD_DIFF_OPT_SAMPLE_INDEX),
	{ "fail-over", 0, 0, required_argument, "PCT",
	  "exit 1 when TARGET is slower than BASE by more than PCT percent",
	  "@number", CMD_DIFF_OPT_FAIL_OVER, 0 },
	CMD_FILTER_OPTIONS,
	{ NULL, 0, 0, 0, NULL, NULL, NULL, 0, 0 }
};

/* Everything one "rperf diff" run needs. */
struct cmd_diff {
	const char *output;
	const struct format *format;	/* text or svg */
	int normalize;
	size_t top;
	const char *sample_index;	/* --sample-index, or NULL */
	size_t bvi, tvi;		/* its index in base and target */
	double fail_over;		/* --fail-over PCT; 0 without */
	/* All the filters (for the report's header), and the same split in
	 * two: --focus, applied after the others so that each run's total
	 * before it is known (--normalize's gate needs it). */
	struct report_filter filter, focus, rest;
	char **base_paths, **target_paths;	/* the runs of each side */
	size_t nbase, ntarget;
	const char *base_path, *target_path;	/* the median runs */
	char *base_name, *target_name;	/* and how the report names them */
	struct profile *base, *target;
	struct diff d;
};

/* One run's totals after the filters: ALL before --focus, FOCUSED after. */
struct cmd_diff_total {
	int64_t all, focused;
};

/* Write the text report of the comparison (output_write_fn). */
static int
cmd_diff_write_text(FILE *fp, void *arg)
{
	struct cmd_diff *c = arg;
	struct diff_opts o;

	memset(&o, 0, sizeof o);
	o.top = c->top;
	o.base_name = c->base_name;
	o.target_name = c->target_name;
	o.filters = report_filter_describe(&c->filter);
	return diff_write(&c->d, fp, &o);
}

/* Write the differential flame graph (output_write_fn). */
static int
cmd_diff_write_svg(FILE *fp, void *arg)
{
	struct cmd_diff *c = arg;
	struct flamegraph_opts fo;
	char *title;
	int rc;

	flamegraph_opts_init(&fo);
	title = xasprintf("Differential Flame Graph: %s -> %s", c->base_name,
	    c->target_name);
	fo.title = title;
	fo.base = c->base;
	fo.value_index = c->tvi;
	fo.base_value_index = c->bvi;
	fo.base_scale = c->d.scale;
	if (report_filter_active(&c->filter))
		fo.subtitle = report_filter_describe(&c->filter);
	rc = flamegraph_write(c->target, fp, &fo);
	free(title);
	return rc;
}

/* The --fail-over PCT: a positive number of percent ("5", "2.5", "5%"),
 * or a usage error. */
static double
cmd_diff_parse_pct(const struct cmd_entry *e, const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end != arg && *end == '%')
		end++;
	if (end == arg || *end != '\0' || errno != 0 || !isfinite(v) ||
	    v <= 0)
		cmd_usage_error(e, "invalid --fail-over '%s' (expected a "
		    "percentage above 0, such as 5)", arg);
	return v;
}

/* Split the operands, "BASE TARGET" or "BASE... -- TARGET...". */
static void
cmd_diff_operands(struct cmd_diff *c, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_diff_entry;
	int i, sep = -1;

	for (i = optind; i < argc; i++) {
		/* getopt stops at the first profile; a gate appended to a CI
		 * command line would otherwise be read as a missing file. */
		if (strcmp(argv[i], "--") != 0 && cmd_is_own_option(e, argv[i]))
			cmd_usage_error(e, "option '%.*s' after the profiles "
			    "(options come first)", (int)strcspn(argv[i], "="),
			    argv[i]);
		if (strcmp(argv[i], "--") != 0)
			continue;
		if (sep >= 0)
			cmd_usage_error(e, "more than one '--' between the "
			    "profiles");
		sep = i;
	}
	if (sep < 0) {
		if (argc - optind < 2)
			cmd_usage_error(e, "need two profiles: BASE and TARGET");
		if (argc - optind > 2)
			cmd_usage_error(e, "too many arguments: '%s' (several "
			    "runs: BASE... -- TARGET...)", argv[optind + 2]);
		sep = optind + 1;
	} else {
		if (sep == optind)
			cmd_usage_error(e, "no BASE profile before '--'");
		if (sep == argc - 1)
			cmd_usage_error(e, "no TARGET profile after '--'");
	}
	c->base_paths = argv + optind;
	c->nbase = (size_t)(sep - optind);
	c->target_paths = argv + sep + (strcmp(argv[sep], "--") == 0);
	c->ntarget = (size_t)(argv + argc - c->target_paths);
}

/* Parse the command line into C; usage errors exit 2. */
static void
cmd_diff_parse(struct cmd_diff *c, int argc, char **argv)
{
	const struct cmd_entry *e = &cmd_diff_entry;
	struct cmd_getopt g;
	int opt;

	cmd_getopt_init(&g, e);
	while ((opt = cmd_getopt(&g, argc, argv)) != -1) {
		if (cmd_filter_option(e, opt, optarg, &c->filter)) {
			(void)cmd_filter_option(e, opt, optarg,
			    opt == CMD_OPT_FOCUS ? &c->focus : &c->rest);
			continue;
		}
		switch (opt) {
		case 'o':
			c->output = optarg;
			break;
		case CMD_DIFF_OPT_FORMAT:
			c->format = cmd_parse_format(e, optarg, FORMAT_DIFF);
			break;
		case CMD_DIFF_OPT_TOP:
			c->top = cmd_parse_top(e, optarg);
			break;
		case CMD_DIFF_OPT_NORMALIZE:
			c->normalize = 1;
			break;
		case CMD_DIFF_OPT_SAMPLE_INDEX:
			c->sample_index = optarg;
			break;
		case CMD_DIFF_OPT_FAIL_OVER:
			c->fail_over = cmd_diff_parse_pct(e, optarg);
			break;
		}
	}
	cmd_getopt_release(&g);
	cmd_diff_operands(c, argc, argv);
	/* --normalize makes the totals equal: only the share of the total
	 * that --focus picks out can still grow. */
	if (c->fail_over > 0 && c->normalize && !report_filter_active(&c->focus))
		cmd_usage_error(e, "--fail-over with --normalize needs --focus "
		    "(normalized totals are equal)");
	if (c->format == NULL)
		c->format = format_by_path(c->output, FORMAT_DIFF);
	if (c->format == NULL)
		c->format = &format_text;
}

/* Read and filter the profile at PATH, the index of the value compared
 * in *VI and its totals in *T; NULL after printing an error. */
static struct profile *
cmd_diff_read(const struct cmd_diff *c, const char *path, size_t *vi,
    struct cmd_diff_total *t)
{
	struct profile *p;
	char err[512];

	p = profile_read(path, err, sizeof err);
	if (p == NULL) {
		error_print("%s", err);
		return NULL;
	}
	*vi = (size_t)-1;
	if (c->sample_index != NULL)
		*vi = cmd_sample_index(&cmd_diff_entry, p, c->sample_index, path);
	report_filter_apply(p, &c->rest);
	t->all = profile_total(p, profile_value_index(p, *vi));
	report_filter_apply(p, &c->focus);
	t->focused = profile_total(p, profile_value_index(p, *vi));
	return p;
}

/* The unit of value VI of P ("" when it has none). */
static const char *
cmd_diff_unit(const struct profile *p, size_t vi)
{
	vi = profile_value_index(p, vi);
	return vi < p->nvalue_types ? profile_str(p, p->value_types[vi].unit) :
	    "";
}

/* What the gate compares for one run: its focused total, or with
 * --normalize the share of its total that --focus keeps. */
static double
cmd_diff_gate_value(const struct cmd_diff *c, const struct cmd_diff_total *t)
{
	if (!c->normalize)
		return (double)t->focused;
	return t->all > 0 ? (double)t->focused / (double)t->all : 0;
}

/*
 * Read the N runs at PATHS and pick the median one: its path in *PATH,
 * its profile in *P,
 * the value index in *VI, its totals in *T, the median of the runs' gate
 * values in *MEDIAN.  The other runs are read one at a time and freed, so
 * memory holds two profiles however many runs there are.  UNIT is the
 * unit the first run measured (set by the first call).  Returns 0, or -1
 * after printing an error.
 */
static int
cmd_diff_side(struct cmd_diff *c, char **paths, size_t n,
    const char **path, struct profile **p, size_t *vi, struct cmd_diff_total *t, double *median, char *unit,
    size_t unitlen)
{
	struct cmd_diff_total *tot = xcalloc(n, sizeof *tot);
	double *v = xcalloc(n, sizeof *v);
	size_t i, m;
	int rc = -1;

	for (i = 0; i < n; i++) {
		struct profile *q = cmd_diff_read(c, paths[i], vi, &tot[i]);
		const char *u;

		if (q == NULL)
			goto out;
		u = cmd_diff_unit(q, *vi);
		if (*unit == '\0')
			snprintf(unit, unitlen, "%s", *u ? u : "-");
		else if (strcmp(unit, *u ? u : "-") != 0) {
			error_print("cannot compare values in %s with values "
			    "in %s ('%s')", unit, *u ? u : "no unit", paths[i]);
			profile_free(q);
			goto out;
		}
		v[i] = cmd_diff_gate_value(c, &tot[i]);
		if (n == 1)
			*p = q;
		else
			profile_free(q);
	}
	m = diff_median_run(v, n);
	*path = paths[m];
	*t = tot[m];
	if (n > 1 && (*p = cmd_diff_read(c, paths[m], vi, t)) == NULL)
		goto out;
	*median = diff_median(v, n);
	rc = 0;
out:
	free(tot);
	free(v);
	return rc;
}

/* How the report names the median run of N at PATH. */
static char *
cmd_diff_name(const char *path, size_t n)
{
	if (n == 1)
		return xstrdup(path);
	return xasprintf("%s (the median of %zu runs)", path, n);
}

/* Whether NAME matches one of the --focus regexes in filter ARG: the
 * functions a focused gate names. */
static int
cmd_diff_focused(const char *name, void *arg)
{
	const struct report_filter *f = arg;
	size_t i;

	for (i = 0; i < f->nrules; i++) {
		if (f->rules[i].kind == REPORT_FOCUS &&
		    regexec(&f->rules[i].re, name, 0, NULL, 0) == 0)
			return 1;
	}
	return 0;
}

/*
 * The gate's verdict on stderr after the report: RPERF_EXIT_FAILURE when
 * the target grew by more than --fail-over, else RPERF_EXIT_OK (or
 * FAILURE when the verdict cannot be computed or written).
 */
static int
cmd_diff_gate(struct cmd_diff *c, double before, double after,
    const struct cmd_diff_total *bt, const struct cmd_diff_total *tt)
{
	struct diff_gate g;
	struct diff raw;
	const struct diff *d = &c->d;
	char err[512];
	int rc;

	memset(&g, 0, sizeof g);
	g.prefix = "rperf diff";
	g.limit = c->fail_over;
	g.before = before;
	g.after = after;
	g.nbase = c->nbase;
	g.ntarget = c->ntarget;
	g.scale = 1.0;
	g.what = "total";
	if (report_filter_active(&c->focus)) {
		g.what = "focused time";
		g.named = cmd_diff_focused;
		g.named_arg = &c->focus;
	}
	if (c->normalize) {
		/* The report's base is scaled to the target's focused time;
		 * the gate scales by the whole runs instead, so compare the
		 * raw values again. */
		g.share = 1;
		g.what = "focused share";
		if (bt->all > 0)
			g.scale = (double)tt->all / (double)bt->all;
		if (diff_compute(&raw, c->base, c->bvi, c->target, c->tvi, 0,
		    err, sizeof err) != 0) {
			error_print("%s", err);
			return RPERF_EXIT_FAILURE;
		}
		d = &raw;
	}
	fflush(stdout);
	rc = diff_gate_write(d, &g, stderr);
	if (d == &raw)
		diff_release(&raw);
	if (rc != 0)
		return RPERF_EXIT_FAILURE;
	return diff_gate_tripped(&g) ? RPERF_EXIT_FAILURE : RPERF_EXIT_OK;
}

/* "rperf diff [options] BASE... [--] TARGET...". */
static int
cmd_diff_exec(int argc, char **argv)
{
	struct cmd_diff c;
	struct cmd_diff_total bt, tt;
	double before = 0, after = 0;
	char err[512], bunit[64] = "", tunit[64] = "";
	int rc = RPERF_EXIT_FAILURE;

	memset(&c, 0, sizeof c);
	c.output = "-";
	report_filter_init(&c.filter);
	report_filter_init(&c.focus);
	report_filter_init(&c.rest);
	cmd_diff_parse(&c, argc, argv);

	if (cmd_diff_side(&c, c.base_paths, c.nbase, &c.base_path, &c.base,
	    &c.bvi, &bt, &before, bunit, sizeof bunit) != 0)
		goto out;
	if (cmd_diff_side(&c, c.target_paths, c.ntarget, &c.target_path,
	    &c.target, &c.tvi, &tt, &after, tunit, sizeof tunit) != 0)
		goto out;
	c.base_name = cmd_diff_name(c.base_path, c.nbase);
	c.target_name = cmd_diff_name(c.target_path, c.ntarget);
	if (diff_compute(&c.d, c.base, c.bvi, c.target, c.tvi,
	    c.normalize, err, sizeof err) != 0) {
		error_print("%s", err);
		goto out_diff;
	}
	if (output_write_file(c.output, c.format == &format_svg ? cmd_diff_write_svg :
	    cmd_diff_write_text, &c, err, sizeof err) != 0) {
		error_print("%s", err);
		goto out_diff;
	}
	rc = RPERF_EXIT_OK;
	if (c.fail_over > 0)
		rc = cmd_diff_gate(&c, before, after, &bt, &tt);
out_diff:
	diff_release(&c.d);
out:
	profile_free(c.base);
	profile_free(c.target);
	free(c.base_name);
	free(c.target_name);
	report_filter_release(&c.filter);
	report_filter_release(&c.focus);
	report_filter_release(&c.rest);
	return rc;
}

const struct cmd_entry cmd_diff_entry = {
	.name = "diff",
	.usage = "[options] BASE... [--] TARGET...",
	.summary = "compare two profiles function by function",
	.options = cmd_diff_options,
	.operands = "@pprof",
	.exec = cmd_diff_exec,
};
