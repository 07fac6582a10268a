/*
 * check_json.c: unit tests for json.c: the plain escaping "rperf stat
 * --json" uses (quotes, backslashes, control characters; other bytes as
 * they are) and the XML-safe escaping of the flame graph's data (markup
 * characters, line separators, invalid and overlong UTF-8, surrogates).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "testutil.h"

/* S escaped with FLAGS, as a new string (to free()). */
static char *
escaped(const char *s, int flags)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	json_write_string(fp, s, flags);
	ck_assert_int_eq(fclose(fp), 0);
	return buf;
}

/* Assert that S escapes to WANT under FLAGS. */
static void
check(const char *s, int flags, const char *want)
{
	char *got = escaped(s, flags);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_plain)
{
	check("", 0, "\"\"");
	check("ruby app.rb --name \"x\"", 0,
	    "\"ruby app.rb --name \\\"x\\\"\"");
	check("a\\b\tc\nd\x1f", 0, "\"a\\\\b\\u0009c\\u000ad\\u001f\"");
	/* Markup and bytes over 0x7f pass as they are. */
	check("<&>\x7f", 0, "\"<&>\x7f\"");
	check("caf\xc3\xa9 \xff", 0, "\"caf\xc3\xa9 \xff\"");
}
END_TEST

START_TEST(test_xml_safe)
{
	check("a<b>&c\x7f", JSON_XML_SAFE,
	    "\"a\\u003cb\\u003e\\u0026c\\u007f\"");
	check("\"\\\n", JSON_XML_SAFE, "\"\\\"\\\\\\u000a\"");
	/* Valid UTF-8 of each length is kept. */
	check("\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5", JSON_XML_SAFE,
	    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\xa5\"");
	/* Line and paragraph separators, non-characters: escaped. */
	check("\xe2\x80\xa8\xe2\x80\xa9\xef\xbf\xbe\xef\xbf\xbf",
	    JSON_XML_SAFE, "\"\\u2028\\u2029\\ufffe\\uffff\"");
	/* Invalid: a lone continuation, a cut sequence, overlong, a
	 * surrogate, past U+10FFFF; each bad lead byte is one U+FFFD. */
	check("\x80", JSON_XML_SAFE, "\"\\ufffd\"");
	check("\xe2\x82", JSON_XML_SAFE, "\"\\ufffd\\ufffd\"");
	check("\xc0\xaf", JSON_XML_SAFE, "\"\\ufffd\\ufffd\"");
	check("\xe0\x80\xaf", JSON_XML_SAFE, "\"\\ufffd\\ufffd\\ufffd\"");
	check("\xed\xa0\x80", JSON_XML_SAFE, "\"\\ufffd\\ufffd\\ufffd\"");
	check("\xf4\x90\x80\x80", JSON_XML_SAFE,
	    "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	check("x\xffy", JSON_XML_SAFE, "\"x\\ufffdy\"");
}
END_TEST

/* The test suite. */
static Suite *
json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_xml_safe);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(json_suite());
}
