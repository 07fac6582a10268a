/*
 * check_push.c: unit tests for the uploader (src/push-*.c, reached
 * through push-int.h): the query (the series name with its tags,
 * URL-encoded), the multipart body, the checks of app names,
 * modes, tags, headers and URLs (and that their messages show no
 * secret), the spool file round trip, the bounded queue and the backoff,
 * and the upload thread against a closed loopback port: nothing is sent,
 * and every interval is spooled, those the full queue pushed out too.  No
 * network beyond 127.0.0.1.
 *
 * Run as "check_push --spool DIR URL PROFILE" it is also the helper
 * t0600-push.sh uses to make spool files the way a run does: PROFILE is
 * queued for URL and push_finish() spools it into DIR when it cannot be
 * sent within half a second.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "push-int.h"
#include "testutil.h"

/* A fresh empty directory for one test. */
static char *
make_dir(void)
{
	char *dir = xstrdup("/tmp/rperf-check-push.XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/* Remove DIR and the files in it. */
static void
remove_dir(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		char *path;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		unlink(path);
		free(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
	free(dir);
}

/* The names of the entries of DIR ending in SUFFIX, counted. */
static int
count_suffix(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d != NULL && (de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name), sl = strlen(suffix);

		if (len >= sl && strcmp(de->d_name + len - sl, suffix) == 0)
			n++;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* A loopback port nothing listens on (bound, then closed). */
static int
closed_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_int_ge(fd, 0);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* An interval with tags, for the query and spool tests. */
static void
make_interval(struct push_interval *iv)
{
	memset(iv, 0, sizeof *iv);
	iv->app_name = xstrdup("shop.web");
	iv->mode = xstrdup("cpu");
	push_interval_set_tag(iv, "env=prod");
	push_interval_set_tag(iv, "region=eu-1");
	iv->from_ns = 1700000000123456789LL;
	iv->until_ns = 1700000010999999999LL;
	iv->sample_rate = 99;
}

START_TEST(test_url_encode)
{
	char *s = push_url_encode("a.b-c_d~e{k=v,x=y}/ %&?");

	ck_assert_str_eq(s, "a.b-c_d~e%7Bk%3Dv%2Cx%3Dy%7D%2F%20%25%26%3F");
	free(s);
}
END_TEST

START_TEST(test_query)
{
	struct push_interval iv;
	char *q;

	make_interval(&iv);
	q = push_query(&iv);
	ck_assert_str_eq(q, "name=shop.web.cpu%7Benv%3Dprod%2Cregion%3Deu-1%7D"
	    "&from=1700000000&until=1700000010&format=pprof&sampleRate=99"
	    "&spyName=rperf");
	free(q);

	/* a tag given again replaces the old value, in place */
	push_interval_set_tag(&iv, "env=dev");
	ck_assert_uint_eq(iv.ntags, 2);
	ck_assert_str_eq(iv.tags[0], "env=dev");

	/* no tags: empty braces; a sub-second interval still spans a second */
	push_interval_release(&iv);
	memset(&iv, 0, sizeof iv);
	iv.app_name = xstrdup("a");
	iv.mode = xstrdup("wall");
	iv.from_ns = 5000000000LL + 100;
	iv.until_ns = 5000000000LL + 900;
	iv.sample_rate = 100;
	q = push_query(&iv);
	ck_assert_str_eq(q, "name=a.wall%7B%7D&from=5&until=6&format=pprof"
	    "&sampleRate=100&spyName=rperf");
	free(q);
	push_interval_release(&iv);
}
END_TEST

START_TEST(test_multipart)
{
	static const uint8_t data[] = { 0x1f, 0x8b, 0, '\r', '\n', 0xff };
	static const char want_head[] = "--BND\r\nContent-Disposition: form-data; "
	    "name=\"profile\"; filename=\"profile.pprof\"\r\n"
	    "Content-Type: application/octet-stream\r\n\r\n";
	static const char want_tail[] = "\r\n--BND--\r\n";
	size_t len, hl = strlen(want_head), tl = strlen(want_tail);
	uint8_t *body = push_multipart(data, sizeof data, "BND", &len);

	ck_assert_uint_eq(len, hl + sizeof data + tl);
	ck_assert_int_eq(memcmp(body, want_head, hl), 0);
	ck_assert_int_eq(memcmp(body + hl, data, sizeof data), 0);
	ck_assert_int_eq(memcmp(body + hl + sizeof data, want_tail, tl), 0);
	free(body);
}
END_TEST

START_TEST(test_check_tags_names_modes)
{
	static const char *const good[] = { "env=prod", "a_b.c=v-1/2:3",
	    "k=with%percent", "_k=v", NULL };
	static const char *const bad[] = { "env", "=v", "env=", "e nv=x",
	    "env=a b", "env=a,b", "env=a}", "env={", "env=a=b", "__name__=x",
	    "1k=v", "k-x=v", "env=\"q\"", "env=tab\there", NULL };
	char err[512];
	size_t i;

	for (i = 0; good[i] != NULL; i++)
		ck_assert_msg(push_check_tag(good[i], err, sizeof err) == 0,
		    "%s: %s", good[i], err);
	for (i = 0; bad[i] != NULL; i++) {
		err[0] = '\0';
		ck_assert_msg(push_check_tag(bad[i], err, sizeof err) == -1,
		    "accepted '%s'", bad[i]);
		ck_assert_ptr_nonnull(strstr(err, "invalid tag"));
	}
	ck_assert_int_eq(push_check_app_name("my-app.web/v2:x", err, sizeof err), 0);
	ck_assert_int_eq(push_check_app_name("", err, sizeof err), -1);
	ck_assert_int_eq(push_check_app_name("a{b}", err, sizeof err), -1);
	ck_assert_int_eq(push_check_app_name("a b", err, sizeof err), -1);
	ck_assert_int_eq(push_check_mode("cpu", err, sizeof err), 0);
	ck_assert_int_eq(push_check_mode("wall", err, sizeof err), 0);
	ck_assert_int_eq(push_check_mode("CPU", err, sizeof err), -1);
	ck_assert_str_eq(err, "invalid mode 'CPU' (expected cpu, wall or alloc)");
}
END_TEST

START_TEST(test_check_headers)
{
	char err[512];

	ck_assert_int_eq(push_check_header("X-Api-Key: abc123", err, sizeof err), 0);
	ck_assert_int_eq(push_check_header("Authorization: Basic Zm9v", err, sizeof err), 0);
	ck_assert_int_eq(push_check_header("X-Empty:", err, sizeof err), 0);
	/* no colon: the whole word may be a secret, so none of it is shown */
	ck_assert_int_eq(push_check_header("Authorization Bearer s3cr3t", err,
	    sizeof err), -1);
	ck_assert_ptr_null(strstr(err, "s3cr3t"));
	ck_assert_ptr_null(strstr(err, "Authorization"));
	ck_assert_int_eq(push_check_header(": s3cr3t", err, sizeof err), -1);
	ck_assert_int_eq(push_check_header("Bad Name: s3cr3t", err, sizeof err), -1);
	ck_assert_ptr_null(strstr(err, "s3cr3t"));
	ck_assert_int_eq(push_check_header("X-Key: s3cr3t\r\nX-Evil: 1", err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "invalid header 'X-Key' (its value has a control character)");
	ck_assert_int_eq(push_check_header("content-type: text/plain", err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "header 'Content-Type' is set by rperf itself");
}
END_TEST

START_TEST(test_open_urls)
{
	struct push_config c;
	struct push *p;
	char err[512];
	static const char *const bad[] = { "ftp://host/", "host:4040",
	    "http://", "http://:80/", "http://host/?x=1", "http://host/#f",
	    "http://ho st/", "http://u:p%zz@host/", NULL };
	size_t i;

	memset(&c, 0, sizeof c);
	c.url = "HTTP://user:pa%40ss@127.0.0.1:4040/base/";
	p = push_open(&c, err, sizeof err);
	ck_assert_msg(p != NULL, "%s", err);
	ck_assert_str_eq(push_display_url(p), "http://127.0.0.1:4040/base/ingest");
	push_close(p);

	c.url = "https://h.example/ingest";
	p = push_open(&c, err, sizeof err);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(push_display_url(p), "https://h.example/ingest");
	push_close(p);

	for (i = 0; bad[i] != NULL; i++) {
		c.url = bad[i];
		err[0] = '\0';
		p = push_open(&c, err, sizeof err);
		ck_assert_msg(p == NULL, "accepted '%s'", bad[i]);
		ck_assert_msg(err[0] != '\0', "no message for '%s'", bad[i]);
	}
	/* a bad URL's message never repeats the URL, which may hold a password */
	c.url = "ftp://me:s3cr3t@host/";
	ck_assert_ptr_null(push_open(&c, err, sizeof err));
	ck_assert_ptr_null(strstr(err, "s3cr3t"));

	/* a token and the URL's credentials: refused, neither shown */
	c.url = "http://me:pwsecret@127.0.0.1/";
	c.token = "zq9tok";
	ck_assert_ptr_null(push_open(&c, err, sizeof err));
	ck_assert_str_eq(err, "both RPERF_PUSH_TOKEN and a user name in the URL "
	    "are given; use one of them");

	c.url = "http://127.0.0.1/";
	c.token = "zq9tok";
	{
		const char *h[] = { "Authorization: Basic x" };

		c.headers = h;
		c.nheaders = 1;
		ck_assert_ptr_null(push_open(&c, err, sizeof err));
		ck_assert_ptr_null(strstr(err, "zq9tok"));
	}
}
END_TEST

START_TEST(test_send_closed_port_hides_secrets)
{
	struct push_config c;
	struct push_interval iv;
	struct push *p;
	char url[128], err[512];
	const char *h[] = { "X-Api-Key: hdrsecret" };

	int port = closed_port(), i;

	make_interval(&iv);
	iv.data = xmalloc(4);
	memcpy(iv.data, "\x1f\x8b\x08\x00", 4);
	iv.len = 4;
	/* the URL's credentials, then a token: the two are not taken together */
	for (i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(url, sizeof url, "http://me:pwsecret@127.0.0.1:%d/", port);
		else
			snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
		memset(&c, 0, sizeof c);
		c.url = url;
		c.token = i == 1 ? "toksecret" : NULL;
		c.headers = h;
		c.nheaders = 1;
		p = push_open(&c, err, sizeof err);
		ck_assert_msg(p != NULL, "%s", err);
		ck_assert_int_eq(push_send(p, &iv, err, sizeof err), PUSH_RETRY);
		ck_assert_msg(err[0] != '\0', "no message");
		ck_assert_ptr_null(strstr(err, "secret"));
		push_close(p);
	}
	push_interval_release(&iv);
}
END_TEST

START_TEST(test_spool_round_trip)
{
	char *dir = make_dir(), *sub = xasprintf("%s/a/b", dir), *path, err[512];
	struct push_interval iv, back;
	struct stat st;
	uint8_t *buf;
	size_t len = 0, i;
	FILE *fp;

	make_interval(&iv);
	iv.len = 3000;
	iv.data = xmalloc(iv.len);
	iv.data[0] = 0x1f;
	iv.data[1] = 0x8b;
	for (i = 2; i < iv.len; i++)
		iv.data[i] = (uint8_t)(i * 7);
	ck_assert_msg(push_spool_write(sub, &iv, &path, err, sizeof err) == 0,
	    "%s", err);
	ck_assert_ptr_nonnull(strstr(path, "/shop.web.cpu-1700000000-"));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(stat(sub, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(count_suffix(sub, ".tmp"), 0);

	ck_assert_msg(push_spool_read(path, &back, err, sizeof err) == 0, "%s", err);
	ck_assert_str_eq(back.app_name, iv.app_name);
	ck_assert_str_eq(back.mode, iv.mode);
	ck_assert_uint_eq(back.ntags, 2);
	ck_assert_str_eq(back.tags[0], "env=prod");
	ck_assert_str_eq(back.tags[1], "region=eu-1");
	ck_assert_int_eq(back.from_ns, iv.from_ns);
	ck_assert_int_eq(back.until_ns, iv.until_ns);
	ck_assert_int_eq(back.sample_rate, 99);
	ck_assert_uint_eq(back.len, iv.len);
	ck_assert_int_eq(memcmp(back.data, iv.data, iv.len), 0);
	push_interval_release(&back);

	/* cut short: refused with a message naming the file */
	buf = tu_read_file(path, &len);
	ck_assert(push_is_spool(buf, len));
	ck_assert_int_eq(push_spool_parse(buf, len - 1, "x.spool", &back, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "'x.spool' is truncated or corrupt: expected 3000 "
	    "bytes of profile, found 2999");
	ck_assert_int_eq(push_spool_parse(buf, 20, "x.spool", &back, err,
	    sizeof err), -1);
	ck_assert_int_eq(push_spool_parse(buf + 1, len - 1, "x.spool", &back, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "'x.spool' is not an rperf spool file");
	free(buf);

	/* a header that fails the checks */
	fp = fopen(path, "w");
	fprintf(fp, "rperf-spool 1\napp: a b\nmode: cpu\nfrom-ns: 1\nuntil-ns: 2\n"
	    "sample-rate: 9\nlength: 2\n\n\x1f\x8b");
	fclose(fp);
	ck_assert_int_eq(push_spool_read(path, &back, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "invalid app name"));
	unlink(path);
	free(path);

	ck_assert_int_eq(push_spool_read("/nonexistent/x.spool", &back, err,
	    sizeof err), -1);
	ck_assert_str_eq(err, "cannot read '/nonexistent/x.spool': No such file "
	    "or directory");
	push_interval_release(&iv);
	rmdir(sub);
	free(sub);
	sub = xasprintf("%s/a", dir);
	rmdir(sub);
	free(sub);
	remove_dir(dir);
}
END_TEST

START_TEST(test_default_spool_dir)
{
	char *d;

	setenv("XDG_STATE_HOME", "/st", 1);
	d = push_default_spool_dir();
	ck_assert_str_eq(d, "/st/rperf/spool");
	free(d);
	setenv("XDG_STATE_HOME", "relative", 1);
	setenv("HOME", "/home/u", 1);
	d = push_default_spool_dir();
	ck_assert_str_eq(d, "/home/u/.local/state/rperf/spool");
	free(d);
	unsetenv("XDG_STATE_HOME");
}
END_TEST

/* A heap interval whose from_ns is N, for the queue tests. */
static struct push_interval *
queue_item(int n)
{
	struct push_interval *iv = xcalloc(1, sizeof *iv);

	iv->from_ns = n;
	return iv;
}

START_TEST(test_queue_drops_oldest)
{
	struct push_queue q;
	struct push_interval *iv;
	int i;

	push_queue_init(&q, 3);
	ck_assert_ptr_null(push_queue_take(&q));
	for (i = 1; i <= 3; i++)
		ck_assert_ptr_null(push_queue_put(&q, queue_item(i)));
	for (i = 4; i <= 7; i++) {
		iv = push_queue_put(&q, queue_item(i));
		ck_assert_ptr_nonnull(iv);
		ck_assert_int_eq(iv->from_ns, i - 3);
		free(iv);
	}
	ck_assert_uint_eq(q.count, 3);
	for (i = 5; i <= 7; i++) {
		iv = push_queue_take(&q);
		ck_assert_int_eq(iv->from_ns, i);
		free(iv);
	}
	ck_assert_ptr_null(push_queue_take(&q));
	push_queue_put(&q, queue_item(8));
	push_queue_release(&q);
}
END_TEST

START_TEST(test_backoff)
{
	static const double want[] = { 0.5, 1, 2, 4, 8, 16, 30, 30, 30 };
	unsigned seed = 1;
	double base = 0, d;
	size_t i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		d = push_backoff(&base, &seed);
		ck_assert_msg(base == want[i], "step %zu: base %g", i, base);
		ck_assert_msg(d >= base / 2 && d <= base, "step %zu: %g not in "
		    "[%g, %g]", i, d, base / 2, base);
	}
}
END_TEST

START_TEST(test_thread_spools_what_it_cannot_send)
{
	char *dir = make_dir(), url[64], err[512];
	const char *tags[] = { "env=test" };
	struct push_config c;
	struct push_stats st;
	struct profile *prof = tu_sample_profile();
	struct push *p;
	int i;

	snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
	memset(&c, 0, sizeof c);
	c.url = url;
	c.app_name = "t";
	c.mode = "cpu";
	c.tags = tags;
	c.ntags = 1;
	c.timeout_s = 0.3;
	c.queue_max = 2;
	c.spool_dir = dir;
	c.quiet = 1;
	p = push_start(&c, err, sizeof err);
	ck_assert_msg(p != NULL, "%s", err);
	for (i = 0; i < 5; i++)
		push_enqueue(p, prof, (int64_t)(1000 + i) * 1000000000,
		    (int64_t)(1010 + i) * 1000000000);
	push_stats(p, &st);
	ck_assert_uint_eq(st.sent, 0);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_int_eq(push_finish(p), 0);
	/* 2 waited in the queue, at most one was in flight, the rest were
	 * pushed out of the queue: all 5 are spooled */
	ck_assert_int_eq(count_suffix(dir, ".spool"), 5);
	/* the newest interval is among those kept */
	{
		char *path = xasprintf("%s/t.cpu-1004-%ld-", dir, (long)getpid());
		DIR *d = opendir(dir);
		struct dirent *de;
		int found = 0;

		while ((de = readdir(d)) != NULL)
			found |= strncmp(de->d_name, strrchr(path, '/') + 1,
			    strlen(strrchr(path, '/') + 1)) == 0;
		closedir(d);
		ck_assert(found);
		free(path);
	}
	profile_free(prof);
	remove_dir(dir);
}
END_TEST

START_TEST(test_spool_limit)
{
	char *dir = make_dir(), url[64], err[512], *old;
	struct push_config c;
	struct profile *prof = tu_sample_profile();
	struct push *p;
	FILE *fp;
	int i;

	/* A spool file of an earlier run already takes 900 of the 1000 bytes. */
	old = xasprintf("%s/old.cpu-1-1-1.spool", dir);
	fp = fopen(old, "w");
	ck_assert_ptr_nonnull(fp);
	for (i = 0; i < 900; i++)
		fputc('x', fp);
	fclose(fp);
	snprintf(url, sizeof url, "http://127.0.0.1:%d", closed_port());
	memset(&c, 0, sizeof c);
	c.url = url;
	c.app_name = "t";
	c.mode = "cpu";
	c.timeout_s = 0.2;
	c.queue_max = 2;
	c.spool_dir = dir;
	c.spool_max = 1000;
	c.quiet = 1;
	p = push_start(&c, err, sizeof err);
	ck_assert_msg(p != NULL, "%s", err);
	for (i = 0; i < 5; i++)
		push_enqueue(p, prof, (int64_t)(1000 + i) * 1000000000,
		    (int64_t)(1010 + i) * 1000000000);
	ck_assert_int_eq(push_finish(p), 0);
	/* no interval fits in the 100 bytes left: none is written, and a
	 * limit reached is not a failure */
	ck_assert_int_eq(count_suffix(dir, ".spool"), 1);
	ck_assert_int_eq(unlink(old), 0);
	free(old);

	c.spool_max = 0;	/* the default, 100M */
	p = push_start(&c, err, sizeof err);
	ck_assert_msg(p != NULL, "%s", err);
	for (i = 0; i < 5; i++)
		push_enqueue(p, prof, (int64_t)(1000 + i) * 1000000000,
		    (int64_t)(1010 + i) * 1000000000);
	ck_assert_int_eq(push_finish(p), 0);
	ck_assert_int_eq(count_suffix(dir, ".spool"), 5);
	profile_free(prof);
	remove_dir(dir);
}
END_TEST

START_TEST(test_parse_size)
{
	static const struct { const char *s; uint64_t want; } ok[] = {
		{ "1", 1 }, { "512", 512 }, { "64k", 65536 }, { "64K", 65536 },
		{ "100M", 104857600 }, { "100m", 104857600 },
		{ "1.5G", 1610612736 }, { "2g", 2147483648ULL }, { "0.5k", 512 },
	};
	static const char *const bad[] = { "", "0", "0k", "-1", "1x", "1kb",
	    "k", "1.5.2", " 1", "1e3", "0x10", "inf", "nan", "1 M", NULL };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		ck_assert_msg(push_parse_size(ok[i].s, &v) == 0, "'%s'", ok[i].s);
		ck_assert_msg(v == ok[i].want, "'%s': %llu", ok[i].s,
		    (unsigned long long)v);
	}
	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(push_parse_size(bad[i], &v) == -1, "'%s'", bad[i]);
}
END_TEST

START_TEST(test_start_needs_name_and_mode)
{
	struct push_config c;
	char err[512];

	memset(&c, 0, sizeof c);
	c.url = "http://127.0.0.1/";
	c.mode = "cpu";
	ck_assert_ptr_null(push_start(&c, err, sizeof err));
	c.app_name = "a";
	c.mode = "gc";
	ck_assert_ptr_null(push_start(&c, err, sizeof err));
	ck_assert_str_eq(err, "invalid mode 'gc' (expected cpu, wall or alloc)");
}
END_TEST

static Suite *
push_suite(void)
{
	Suite *s = suite_create("push");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_url_encode);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_multipart);
	tcase_add_test(tc, test_check_tags_names_modes);
	tcase_add_test(tc, test_check_headers);
	tcase_add_test(tc, test_open_urls);
	tcase_add_test(tc, test_send_closed_port_hides_secrets);
	tcase_add_test(tc, test_spool_round_trip);
	tcase_add_test(tc, test_default_spool_dir);
	tcase_add_test(tc, test_queue_drops_oldest);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_thread_spools_what_it_cannot_send);
	tcase_add_test(tc, test_start_needs_name_and_mode);
	tcase_add_test(tc, test_spool_limit);
	tcase_add_test(tc, test_parse_size);
	suite_add_tcase(s, tc);
	return s;
}

/* "--spool DIR URL PROFILE": queue PROFILE for URL, spool it into DIR. */
static int
spool_helper(const char *dir, const char *url, const char *path)
{
	const char *tags[] = { "env=test" };
	struct push_config c;
	struct profile *prof;
	struct push *p;
	char err[512];
	const char *mode;

	prof = profile_read(path, err, sizeof err);
	if (prof == NULL) {
		fprintf(stderr, "check_push: %s\n", err);
		return 1;
	}
	mode = profile_comment_value(prof, "mode");
	memset(&c, 0, sizeof c);
	c.url = url;
	c.app_name = "spooled";
	c.mode = mode ? mode : "cpu";
	c.tags = tags;
	c.ntags = 1;
	c.sample_rate = 99;
	c.timeout_s = 0.5;
	c.spool_dir = dir;
	c.token = getenv("RPERF_PUSH_TOKEN");
	p = push_start(&c, err, sizeof err);
	if (p == NULL) {
		fprintf(stderr, "check_push: %s\n", err);
		profile_free(prof);
		return 1;
	}
	push_enqueue(p, prof, prof->time_nanos, prof->time_nanos +
	    prof->duration_nanos);
	profile_free(prof);
	return push_finish(p) == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--spool") == 0)
		return spool_helper(argv[2], argv[3], argv[4]);
	/* Loopback only: never through a proxy a developer has set. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	return tu_run(push_suite());
}
