/*
 * cmd.h: the command table.  Each subcommand lives in src/cmd-NAME.c and
 * exports one struct cmd_entry; cmd.c lists them.  A command's options
 * table is the single source of truth for its --help text, for the
 * completion helper the shell scripts call, and for the consistency test
 * that compares them with the man pages; format names and extensions in
 * them come from the table of formats (formats.h).
 */
#ifndef RPERF_CMD_H
#define RPERF_CMD_H

#include <getopt.h>
#include <stdio.h>

/* A number as a string literal, for help text: CMD_STR(2) is "2". */
#define CMD_STR_(x) #x
#define CMD_STR(x) CMD_STR_(x)

/* The signal "rperf snapshot" sends and "rperf record" listens to, as an
 * offset from SIGRTMIN (which is not a compile-time constant). */
#define CMD_CONTROL_SIGNAL_OFFSET 9
#define CMD_CONTROL_SIGNAL_TEXT "SIGRTMIN+" CMD_STR(CMD_CONTROL_SIGNAL_OFFSET)

/* How long a script command waits at exit for children still running,
 * in seconds (--child-timeout). */
#define CMD_CHILD_TIMEOUT 2

/* Exit statuses of the commands that do not pass a script's through. */
#define RPERF_EXIT_OK		0
#define RPERF_EXIT_FAILURE	1
#define RPERF_EXIT_USAGE	2

struct cmd_option {
	const char *long_name;	/* without the leading "--" */
	int short_name;		/* 0 when there is none */
	int short_alias;	/* a second short name, or 0 */
	int has_arg;		/* no_argument, required_argument, optional_argument */
	const char *arg_name;	/* "HZ", "FILE"; NULL without an argument */
	const char *help;	/* one line, lower-case, no full stop */
	/* What a completion offers for the argument: a space-separated
	 * list of words, or one of "@file", "@dir", "@pprof" (profiles),
	 * "@number"; NULL when the option takes none. */
	const char *complete;
	int id;			/* what cmd_getopt returns for it */
	/* For a --format option, the FORMAT_* flags of the formats it
	 * takes: "%F" in HELP reads as their names ("pprof, folded or
	 * text") and "@format" in COMPLETE as the same names as words. */
	unsigned formats;
};

struct cmd_entry {
	const char *name;
	const char *usage;	/* arguments after "rperf NAME", as in the man page */
	const char *summary;	/* one line for "rperf --help" */
	const struct cmd_option *options;	/* ends with an all-zero entry */
	/* What completes the command's operands: "@rb", "@pprof", "@pid". */
	const char *operands;
	int (*exec)(int argc, char **argv);
};

extern const struct cmd_entry cmd_record_entry;
extern const struct cmd_entry cmd_report_entry;
extern const struct cmd_entry cmd_diff_entry;
extern const struct cmd_entry cmd_stat_entry;
extern const struct cmd_entry cmd_exec_entry;
extern const struct cmd_entry cmd_snapshot_entry;
extern const struct cmd_entry cmd_push_entry;

/* All commands, in the order "rperf --help" lists them; NULL-terminated. */
extern const struct cmd_entry *const cmd_table[];

/* The command called exactly NAME, or NULL. */
const struct cmd_entry *cmd_find(const char *name);

/* Print "usage: ..." and the options table of E to FP. */
void cmd_print_help(const struct cmd_entry *e, FILE *fp);

/* Print E's flags one a line, with their completion hints (for shells). */
void cmd_print_completion(const struct cmd_entry *e, FILE *fp);

/*
 * getopt_long over E's options table.  Set up once with cmd_getopt_init,
 * then call cmd_getopt until it returns -1.  --help is handled here: it
 * prints the help and exits 0.  An unknown option or a missing argument
 * is a usage error: one line, a hint, exit 2.
 */
struct cmd_getopt {
	const struct cmd_entry *entry;
	struct option *longopts;
	char *shortopts;
};
void cmd_getopt_init(struct cmd_getopt *g, const struct cmd_entry *e);
int cmd_getopt(struct cmd_getopt *g, int argc, char **argv);
void cmd_getopt_release(struct cmd_getopt *g);

/* Whether ARG (an argv word) is one of E's own options. */
int cmd_is_own_option(const struct cmd_entry *e, const char *arg);

/* "rperf NAME: MESSAGE" plus a hint, then exit 2. */
void cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Parse a whole decimal number in [min, max]; -1 when ARG is not one. */
int cmd_parse_long(const char *arg, long min, long max, long *out);
/* The --top N of the reports (rows in each table), or a usage error. */
size_t cmd_parse_top(const struct cmd_entry *e, const char *arg);

/*
 * The sample filters "rperf report" and "rperf diff" share (report.h),
 * declared once: CMD_FILTER_OPTIONS in a command's options table, and
 * cmd_filter_option() in its getopt loop.
 */
enum {
	CMD_OPT_FOCUS = 1000,
	CMD_OPT_IGNORE,
	CMD_OPT_TAGFOCUS,
	CMD_OPT_TAGIGNORE,
	CMD_OPT_THREAD,
};
#define CMD_FILTER_OPTIONS \
	{ "focus", 0, 0, required_argument, "REGEX", \
	  "keep only samples with a function matching REGEX", "@text", CMD_OPT_FOCUS, 0 }, \
	{ "ignore", 0, 0, required_argument, "REGEX", \
	  "drop samples with a function matching REGEX", "@text", CMD_OPT_IGNORE, 0 }, \
	{ "tagfocus", 0, 0, required_argument, "KEY=VALUE", \
	  "keep only samples with label KEY=VALUE", "@text", CMD_OPT_TAGFOCUS, 0 }, \
	{ "tagignore", 0, 0, required_argument, "KEY=VALUE", \
	  "drop samples with label KEY=VALUE", "@text", CMD_OPT_TAGIGNORE, 0 }, \
	{ "thread", 0, 0, required_argument, "THREAD", \
	  "keep only samples of the thread with this number or name", "@text", \
	  CMD_OPT_THREAD, 0 }

/* The --sample-index option of report and diff (ID: the command's). */
#define CMD_SAMPLE_INDEX_OPTION(id) \
	{ "sample-index", 0, 0, required_argument, "NAME", \
	  "the sample type to show: cpu, alloc_space, inuse_objects... " \
	  "(default: the profile's)", \
	  "samples cpu wall alloc_objects alloc_space inuse_objects inuse_space", id, 0 }

struct profile;
/* The index of the sample type that --sample-index NAME names in P (read
 * from PATH); a usage error when P has none of that name. */
size_t cmd_sample_index(const struct cmd_entry *e, const struct profile *p,
    const char *name, const char *path);

struct report_filter;
/* When C (from cmd_getopt) is one of CMD_FILTER_OPTIONS, add its rule
 * for ARG to F and return 1 (a bad ARG is a usage error); else 0. */
int cmd_filter_option(const struct cmd_entry *e, int c, const char *arg,
    struct report_filter *f);

/* rperf report --list DIR (cmd-report-list.c): the profiles in DIR,
 * slowest first; an exit status. */
struct cmd_list_opts {
	const char *dir, *output;
	const struct report_filter *filter;
	const char *sample_index;	/* NULL: each profile's default */
	size_t top;			/* rows; 0: 50 */
};
int cmd_report_list(const struct cmd_list_opts *o);

struct format;
/* The format named ARG among those with every flag of NEED; a usage
 * error ("unknown format 'x' (expected pprof, folded or text)") if none. */
const struct format *cmd_parse_format(const struct cmd_entry *e, const char *arg,
    unsigned need);

#endif
