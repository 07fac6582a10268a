/*
 * cmd.c: the table of subcommands and the option machinery they share.
 * Help text and the completion helper's output are generated from each
 * command's options table here, so they cannot drift from what getopt
 * accepts.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "formats.h"
#include "report.h"
#include "xmalloc.h"

const struct cmd_entry *const cmd_table[] = {
	&cmd_record_entry,
	&cmd_report_entry,
	&cmd_diff_entry,
	&cmd_stat_entry,
	&cmd_exec_entry,
	&cmd_snapshot_entry,
	&cmd_push_entry,
	NULL
};

/* The command called exactly NAME, or NULL. */
const struct cmd_entry *
cmd_find(const char *name)
{
	size_t i;

	for (i = 0; cmd_table[i] != NULL; i++) {
		if (strcmp(cmd_table[i]->name, name) == 0)
			return cmd_table[i];
	}
	return NULL;
}

/* O's help line into BUF, "%F" replaced by the names of its formats. */
static const char *
cmd_option_help(const struct cmd_option *o, char *buf, size_t len)
{
	const char *at = o->formats != 0 ? strstr(o->help, "%F") : NULL;
	char names[128];

	if (at == NULL)
		return o->help;
	snprintf(buf, len, "%.*s%s%s", (int)(at - o->help), o->help,
	    format_names(o->formats, NULL, names, sizeof names), at + 2);
	return buf;
}

/* O's completion hint into BUF, "@format" replaced by its formats. */
static const char *
cmd_option_hint(const struct cmd_option *o, char *buf, size_t len)
{
	if (o->has_arg == no_argument || o->complete == NULL)
		return "";
	if (o->formats != 0 && strcmp(o->complete, "@format") == 0)
		return format_names(o->formats, " ", buf, len);
	return o->complete;
}

/* Print "usage: ..." and the options table of E to FP. */
void
cmd_print_help(const struct cmd_entry *e, FILE *fp)
{
	const struct cmd_option *o;
	char left[64], help[256];

	fprintf(fp, "usage: rperf %s %s\n\n%s\n\n", e->name, e->usage, e->summary);
	fprintf(fp, "options:\n");
	for (o = e->options; o->long_name != NULL; o++) {
		int n;

		if (o->short_alias != 0)
			n = snprintf(left, sizeof left, "-%c, -%c, --%s", o->short_name,
			    o->short_alias, o->long_name);
		else if (o->short_name != 0)
			n = snprintf(left, sizeof left, "-%c, --%s", o->short_name, o->long_name);
		else
			n = snprintf(left, sizeof left, "    --%s", o->long_name);
		if (o->has_arg == required_argument && n > 0 && (size_t)n < sizeof left)
			snprintf(left + n, sizeof left - n, " %s", o->arg_name);
		else if (o->has_arg == optional_argument && n > 0 && (size_t)n < sizeof left)
			snprintf(left + n, sizeof left - n, "[=%s]", o->arg_name);
		fprintf(fp, "  %-26s %s\n", left, cmd_option_help(o, help, sizeof help));
	}
	fprintf(fp, "  %-26s %s\n", "-h, --help", "show this help and exit");
	fprintf(fp, "\nSee 'man rperf-%s' for more.\n", e->name);
}

/* Print E's flags one a line, with their completion hints (for shells). */
void
cmd_print_completion(const struct cmd_entry *e, FILE *fp)
{
	const struct cmd_option *o;
	char hbuf[128], help[256], exts[256];

	for (o = e->options; o->long_name != NULL; o++) {
		const char *hint = cmd_option_hint(o, hbuf, sizeof hbuf);
		const char *text = cmd_option_help(o, help, sizeof help);

		fprintf(fp, "--%s\t%s\t%s\n", o->long_name, hint, text);
		if (o->short_name != 0)
			fprintf(fp, "-%c\t%s\t%s\n", o->short_name, hint, text);
		if (o->short_alias != 0)
			fprintf(fp, "-%c\t%s\t%s\n", o->short_alias, hint, text);
	}
	fprintf(fp, "--help\t\tshow this help and exit\n");
	fprintf(fp, "-h\t\tshow this help and exit\n");
	/* What "@pprof" completes: files in a format rperf reads. */
	fprintf(fp, "@profile-exts\t%s\t\n", format_exts(FORMAT_READ, "|", exts,
	    sizeof exts));
	if (e->operands != NULL)
		fprintf(fp, "@operands\t%s\t\n", e->operands);
}

/* Append short option C (if any) to a getopt option string at *S. */
static void
cmd_add_short(char **s, int c, int has_arg)
{
	if (c == 0)
		return;
	*(*s)++ = (char)c;
	if (has_arg != no_argument)
		*(*s)++ = ':';
	if (has_arg == optional_argument)
		*(*s)++ = ':';
}

/* Build getopt_long's tables from E's options table. */
void
cmd_getopt_init(struct cmd_getopt *g, const struct cmd_entry *e)
{
	const struct cmd_option *o;
	size_t n = 0, i = 0;
	char *s;

	for (o = e->options; o->long_name != NULL; o++)
		n++;
	g->entry = e;
	g->longopts = xcalloc(n + 2, sizeof *g->longopts);
	g->shortopts = s = xmalloc(6 * n + 4);
	*s++ = '+';	/* stop at the first operand */
	*s++ = ':';	/* report a missing argument as ':' */
	for (o = e->options; o->long_name != NULL; o++, i++) {
		g->longopts[i].name = o->long_name;
		g->longopts[i].has_arg = o->has_arg;
		g->longopts[i].val = o->id;
		cmd_add_short(&s, o->short_name, o->has_arg);
		cmd_add_short(&s, o->short_alias, o->has_arg);
	}
	g->longopts[i].name = "help";
	g->longopts[i].val = 'h';
	*s++ = 'h';
	*s = '\0';
	optind = 1;
	opterr = 0;
}

/* Release the tables made by cmd_getopt_init. */
void
cmd_getopt_release(struct cmd_getopt *g)
{
	free(g->longopts);
	free(g->shortopts);
	g->longopts = NULL;
	g->shortopts = NULL;
}

/* The option word at argv[optind - 1] as the user typed it, for errors. */
static const char *
cmd_offending_word(int argc, char **argv)
{
	int i = optind - 1;

	if (i >= 1 && i < argc)
		return argv[i];
	return "?";
}

/* Next option of the command; -1 at the first operand or after "--". */
int
cmd_getopt(struct cmd_getopt *g, int argc, char **argv)
{
	int c = getopt_long(argc, argv, g->shortopts, g->longopts, NULL);
	const struct cmd_option *o;

	for (o = g->entry->options; o->long_name != NULL; o++) {
		if (c > 0 && (c == o->short_name || c == o->short_alias))
			return o->id;
	}
	switch (c) {
	case 'h':
		cmd_print_help(g->entry, stdout);
		exit(fflush(stdout) == 0 ? RPERF_EXIT_OK : RPERF_EXIT_FAILURE);
	case '?':
		if (optopt != 0 && optopt != '?')
			cmd_usage_error(g->entry, "unknown option '-%c'", optopt);
		/* the name only: a mistyped --push-header=... holds a secret */
		cmd_usage_error(g->entry, "unknown option '%.*s'",
		    (int)strcspn(cmd_offending_word(argc, argv), "="),
		    cmd_offending_word(argc, argv));
	case ':':
		if (optopt != 0 && strchr(g->shortopts, optopt) != NULL)
			cmd_usage_error(g->entry, "option '-%c' needs a value", optopt);
		cmd_usage_error(g->entry, "option '%s' needs a value",
		    cmd_offending_word(argc, argv));
	}
	return c;
}

/* Whether ARG is one of E's options (or an unambiguous abbreviation). */
int
cmd_is_own_option(const struct cmd_entry *e, const char *arg)
{
	const struct cmd_option *o;
	size_t len;

	if (arg[0] != '-' || arg[1] == '\0')
		return 0;
	if (arg[1] != '-') {
		if (arg[1] == 'h')
			return 1;
		for (o = e->options; o->long_name != NULL; o++) {
			if (o->short_name == arg[1] || o->short_alias == arg[1])
				return 1;
		}
		return 0;
	}
	arg += 2;
	len = strcspn(arg, "=");
	if (len == 0)
		return 0;
	if (strncmp(arg, "help", len) == 0)
		return 1;
	for (o = e->options; o->long_name != NULL; o++) {
		if (strncmp(o->long_name, arg, len) == 0)
			return 1;
	}
	return 0;
}

/* "rperf NAME: MESSAGE" plus a hint, then exit 2. */
void
cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vprint(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'rperf %s --help' for more information.\n", e->name);
	exit(RPERF_EXIT_USAGE);
}

/* Add the rule of filter option C, if it is one. */
int
cmd_filter_option(const struct cmd_entry *e, int c, const char *arg,
    struct report_filter *f)
{
	static const enum report_rule_kind kinds[] = { REPORT_FOCUS,
	    REPORT_IGNORE, REPORT_TAGFOCUS, REPORT_TAGIGNORE, REPORT_THREAD };
	char err[512];

	if (c < CMD_OPT_FOCUS || c > CMD_OPT_THREAD)
		return 0;
	if (report_filter_add(f, kinds[c - CMD_OPT_FOCUS], arg, err, sizeof err) != 0)
		cmd_usage_error(e, "%s", err);
	return 1;
}

/* The format named ARG with every flag of NEED, or a usage error. */
const struct format *
cmd_parse_format(const struct cmd_entry *e, const char *arg, unsigned need)
{
	const struct format *f = format_by_name(arg, need);
	char names[128];

	if (f == NULL)
		cmd_usage_error(e, "unknown format '%s' (expected %s)", arg,
		    format_names(need, NULL, names, sizeof names));
	return f;
}

/* The --top N of the reports, or a usage error. */
size_t
cmd_parse_top(const struct cmd_entry *e, const char *arg)
{
	long v;

	if (cmd_parse_long(arg, 1, 1000000, &v) != 0)
		cmd_usage_error(e, "invalid --top '%s' (expected a number from 1)", arg);
	return (size_t)v;
}

/* Parse a whole decimal number in [min, max]; -1 when ARG is not one. */
int
cmd_parse_long(const char *arg, long min, long max, long *out)
{
	char *end;
	long v;

	if (arg == NULL || *arg == '\0')
		return -1;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The index of sample type NAME in P, or a usage error naming P's types. */
size_t
cmd_sample_index(const struct cmd_entry *e, const struct profile *p, const char *name,
    const char *path)
{
	char types[512];
	size_t vi, i, n = 0;

	if (profile_value_by_name(p, name, &vi) == 0)
		return vi;
	types[0] = '\0';
	for (i = 0; i < p->nvalue_types && n < sizeof types; i++)
		n += (size_t)snprintf(types + n, sizeof types - n, "%s%s", i ? ", " : "",
		    profile_str(p, p->value_types[i].type));
	cmd_usage_error(e, "no sample type '%s' in '%s' (it has %s)", name, path,
	    p->nvalue_types ? types : "none");
}
