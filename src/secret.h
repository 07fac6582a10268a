/*
 * secret.h: masking credentials out of what rperf stores and shows: its
 * own command line (in the process's argv, which every local user can
 * read in /proc/PID/cmdline, and in the "command:" comment of every
 * profile, spool file and pushed interval) and the text a server sends
 * back, which rperf echoes in its error messages.
 *
 * What is a secret: the password of a URL's user info (the whole user
 * info when it has no password: a token given as a user name), the value
 * of a --push-header (whatever the header), the value of
 * $RPERF_PUSH_TOKEN wherever it appears, and, in a server's text, the
 * value of anything that looks like a header or a credential.  Plain C,
 * no Ruby, no allocation in secret_scrub_argv.
 */
#ifndef RPERF_SECRET_H
#define RPERF_SECRET_H

/*
 * Mask the secrets of ARGV in place with '*', keeping every string's
 * length.  ARGV[0] is the program; rperf's options that carry a secret
 * (--push URL, --url URL, --push-header HEADER, with "=" or as two words,
 * and their abbreviations) are found in every position, and a URL's user
 * info in every word.
 */
void secret_scrub_argv(int argc, char **argv);

/*
 * FIRST and the words of ARGV joined by spaces, with each secret that
 * secret_scrub_argv would mask shown as "***" (so that its length does
 * not show either); free() it.
 */
char *secret_command_line(const char *first, int argc, char *const *argv);

/*
 * LINE, a command line as a profile's "command:" comment holds it, with
 * the secrets that an rperf older than secret_command_line() stored
 * shown as "***": URL user info, $RPERF_PUSH_TOKEN, and what follows
 * --push-header's "Name:" up to the next option (the words of a stored
 * line cannot be told apart, so more may go); free() it.
 */
char *secret_scrub_command(const char *line);

/*
 * TEXT (a server's reply, one line or more) with the user info of URLs,
 * the values of header-like "Name: value" pairs, of credential-like
 * "key=value" pairs and what follows "Basic" or "Bearer" replaced by
 * "***"; free() it.
 */
char *secret_scrub_text(const char *text);

#endif
