/*
 * check_secret.c: unit tests for secret.c: which words of an argv are
 * masked (rperf's secret-carrying options in every spelling getopt takes,
 * URLs with user info in any position, $RPERF_PUSH_TOKEN), that masking
 * in place keeps every length, the "***" of the stored command line, and
 * what is masked in a server's reply text and what is left readable.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"
#include "testutil.h"

/* Scrub a copy of the NULL-terminated WORDS in place; check each length. */
static char **
scrub(const char *const *words)
{
	char **v;
	int n = 0, i;

	while (words[n] != NULL)
		n++;
	v = xcalloc((size_t)n + 1, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = xstrdup(words[i]);
	secret_scrub_argv(n, v);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(strlen(v[i]), strlen(words[i]));
	return v;
}

/* Free what scrub() made. */
static void
free_words(char **v)
{
	int i;

	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

START_TEST(test_argv_options)
{
	static const char *const in[] = { "rperf", "record",
		"--push", "http://me:pa55@h:4040/x",
		"--push=https://me:pa55@h/",
		"--push-header", "X-Api-Key: k3y",
		"--push-header=Authorization: Basic abc",
		"--push-h", "X-Other:  v4lue",
		"--app-name", "shop",
		"--tag", "env=prod",
		"-e", "x = 1", NULL };
	static const char *const want[] = { "rperf", "record",
		"--push", "http://me:****@h:4040/x",
		"--push=https://me:****@h/",
		"--push-header", "X-Api-Key: ***",
		"--push-header=Authorization: *********",
		"--push-h", "X-Other:  *****",
		"--app-name", "shop",
		"--tag", "env=prod",
		"-e", "x = 1", NULL };
	char **v = scrub(in);
	int i;

	for (i = 0; in[i] != NULL; i++)
		ck_assert_str_eq(v[i], want[i]);
	free_words(v);
}
END_TEST

START_TEST(test_argv_push_command)
{
	static const char *const in[] = { "rperf", "push", "--url",
	    "http://tok3n@h/", "--u=http://a:b@h", "--push-header",
	    "no colon s3cr3t", "spool", NULL };
	static const char *const want[] = { "rperf", "push", "--url",
	    "http://*****@h/", "--u=http://a:*@h", "--push-header",
	    "***************", "spool", NULL };
	char **v = scrub(in);
	int i;

	for (i = 0; in[i] != NULL; i++)
		ck_assert_str_eq(v[i], want[i]);
	free_words(v);
}
END_TEST

START_TEST(test_argv_urls_anywhere)
{
	static const char *const in[] = { "rperf", "record", "app.rb",
	    "--db", "postgres://u:p%40ss@db:5432/x",
	    "open('http://u:pw@h/a?b=http://c:d@e')",
	    "http://no-user@", "http://h/@x", "plain", "--", NULL };
	static const char *const want[] = { "rperf", "record", "app.rb",
	    "--db", "postgres://u:******@db:5432/x",
	    "open('http://u:**@h/a?b=http://c:*@e')",
	    "http://*******@", "http://h/@x", "plain", "--", NULL };
	char **v = scrub(in);
	int i;

	for (i = 0; in[i] != NULL; i++)
		ck_assert_str_eq(v[i], want[i]);
	free_words(v);
}
END_TEST

START_TEST(test_argv_token)
{
	static const char *const in[] = { "rperf", "record", "-e",
	    "puts 'tok-1234567'", "short", NULL };
	char **v;

	setenv("RPERF_PUSH_TOKEN", "tok-1234567", 1);
	v = scrub(in);
	ck_assert_str_eq(v[3], "puts '***********'");
	ck_assert_str_eq(v[4], "short");
	free_words(v);
	/* a token too short to be told from a word is left alone */
	setenv("RPERF_PUSH_TOKEN", "sh", 1);
	v = scrub(in);
	ck_assert_str_eq(v[4], "short");
	free_words(v);
	unsetenv("RPERF_PUSH_TOKEN");
	secret_scrub_argv(0, NULL);
}
END_TEST

START_TEST(test_command_line)
{
	char *argv[] = { "record", "-o", "x.pb.gz", "--push",
	    "http://user:secret@h/", "--push-header", "X-Key: abc def",
	    "app.rb", "a b", NULL };
	char *s = secret_command_line("rperf", 9, argv);

	ck_assert_str_eq(s, "rperf record -o x.pb.gz --push http://user:***@h/ "
	    "--push-header X-Key: *** app.rb a b");
	/* the caller's words are untouched */
	ck_assert_str_eq(argv[4], "http://user:secret@h/");
	free(s);
	s = secret_command_line("rperf", 0, argv);
	ck_assert_str_eq(s, "rperf");
	free(s);
}
END_TEST

START_TEST(test_stored_command)
{
	static const struct { const char *in, *want; } t[] = {
		/* as rperf stored it before */
		{ "rperf record --push http://u:pw@h/ --push-header X-Key: abc def "
		  "-o x app.rb", "rperf record --push http://u:***@h/ "
		  "--push-header X-Key: *** -o x app.rb" },
		{ "rperf record --push-header=Authorization: Bearer t app.rb",
		  "rperf record --push-header=Authorization: ***" },
		{ "rperf push --push-header nocolon --url http://tok@h/ f",
		  "rperf push --push-header *** --url http://***@h/ f" },
		/* as it stores it now: left as it is */
		{ "rperf record --push http://u:***@h/ --push-header X-Key: *** "
		  "app.rb a", "rperf record --push http://u:***@h/ "
		  "--push-header X-Key: *** app.rb a" },
		{ "rperf record --push-header=X:*** app.rb",
		  "rperf record --push-header=X:*** app.rb" },
		{ "rperf record -e 'x' my--push-header", "rperf record -e 'x' "
		  "my--push-header" },
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		s = secret_scrub_command(t[i].in);
		ck_assert_msg(strcmp(s, t[i].want) == 0, "'%s' gave '%s', "
		    "wanted '%s'", t[i].in, s, t[i].want);
		free(s);
	}
}
END_TEST

START_TEST(test_text)
{
	static const struct { const char *in, *want; } t[] = {
		{ "Authorization: Basic bWU6cGE1NXcwcmQ=", "Authorization: ***" },
		{ "bad request header x-api-key: hdrs3cr3t",
		  "bad request header x-api-key: ***" },
		{ "{\"error\":\"denied\",\"Authorization\":\"Bearer abc\",\"n\":1}",
		  "{\"error\":\"***\",\"Authorization\":\"***\",\"n\":1}" },
		{ "invalid credentials Basic bWU6cA== for tenant",
		  "invalid credentials Basic *** for tenant" },
		{ "bearer   xyz", "bearer   ***" },
		{ "GET /x?access_token=abc&page=2 failed",
		  "GET /x?access_token=***&page=2 failed" },
		{ "password=hunter2; retry", "password=***; retry" },
		{ "see http://me:pw@host/docs at 12:30 UTC",
		  "see http://me:***@host/docs at 12:30 UTC" },
		{ "no such tenant", "no such tenant" },
		{ "a=b c:d https://h/x", "a=b c:d https://h/x" },
		{ "", "" },
	};
	size_t i;
	char *s;

	for (i = 0; i < sizeof t / sizeof t[0]; i++) {
		s = secret_scrub_text(t[i].in);
		ck_assert_msg(strcmp(s, t[i].want) == 0, "'%s' gave '%s', "
		    "wanted '%s'", t[i].in, s, t[i].want);
		free(s);
	}
}
END_TEST

/* The suite. */
static Suite *
secret_suite(void)
{
	Suite *s = suite_create("secret");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_argv_options);
	tcase_add_test(tc, test_argv_push_command);
	tcase_add_test(tc, test_argv_urls_anywhere);
	tcase_add_test(tc, test_argv_token);
	tcase_add_test(tc, test_command_line);
	tcase_add_test(tc, test_stored_command);
	tcase_add_test(tc, test_text);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	unsetenv("RPERF_PUSH_TOKEN");
	return tu_run(secret_suite());
}
