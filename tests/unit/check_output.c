/*
 * check_output.c: unit tests for output.c: format names and extensions,
 * atomic writes that leave neither partial nor stray files when they fail
 * (missing directory, a directory as target, a full device, a file size
 * limit hit half-way), and reads that detect the format and name the path
 * in every error.  Tests run as root, so failures are provoked by things
 * root cannot override rather than by permissions.
 */
#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "folded.h"
#include "output.h"
#include "testutil.h"

/* A fresh empty directory for one test. */
static char *
make_dir(void)
{
	char *dir = xstrdup("/tmp/rperf-check-output.XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/* Remove DIR and the plain files in it. */
static void
remove_dir(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *path;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
		    (de->d_name[1] == '.' && de->d_name[2] == '\0')))
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (unlink(path) != 0)
			rmdir(path);
		free(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
	free(dir);
}

/* Write FILE (bytes S) for a test input. */
static void
put_file(const char *path, const char *s, size_t len)
{
	FILE *fp = fopen(path, "wb");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(s, 1, len, fp), len);
	ck_assert_int_eq(fclose(fp), 0);
}

START_TEST(test_format_names)
{
	char buf[128];

	ck_assert_ptr_eq(format_by_name("pprof", 0), &format_pprof);
	ck_assert_ptr_eq(format_by_name("folded", FORMAT_READ), &format_folded);
	ck_assert_ptr_eq(format_by_name("text", FORMAT_RECORD), &format_text);
	ck_assert_ptr_eq(format_by_name("svg", FORMAT_CONVERT), &format_svg);
	ck_assert_ptr_null(format_by_name("svg", FORMAT_READ));
	ck_assert_ptr_null(format_by_name("pprof", FORMAT_DIFF));
	ck_assert_ptr_null(format_by_name("Text", 0));
	ck_assert_ptr_null(format_by_name("", 0));
	ck_assert_ptr_null(format_by_name(NULL, 0));
	ck_assert_str_eq(format_names(FORMAT_READ, NULL, buf, sizeof buf),
	    "pprof or folded");
	ck_assert_str_eq(format_names(0, NULL, buf, sizeof buf),
	    "pprof, folded, text, svg or speedscope");
	ck_assert_ptr_eq(format_by_name("speedscope", FORMAT_RECORD | FORMAT_CONVERT),
	    &format_speedscope);
	ck_assert_ptr_null(format_by_name("speedscope", FORMAT_DIFF));
	ck_assert_str_eq(format_names(FORMAT_DIFF, " ", buf, sizeof buf), "text svg");
	ck_assert_str_eq(format_names(FORMAT_BINARY, NULL, buf, sizeof buf), "pprof");
	ck_assert_str_eq(format_exts(FORMAT_READ, "|", buf, sizeof buf),
	    "pb.gz|pprof|pb|data|folded|collapsed");
	/* A short buffer is cut, never overrun. */
	ck_assert_str_eq(format_names(0, NULL, buf, 6), "pprof");
}
END_TEST

START_TEST(test_format_paths)
{
	static const struct {
		const char *path;
		const struct format *fmt;
	} cases[] = {
		{ "out.pb.gz", &format_pprof },
		{ "dir/cpu.pprof", &format_pprof },
		{ "x.pb", &format_pprof },
		{ "rperf.data", &format_pprof },
		{ "a.folded", &format_folded },
		{ "/tmp/a.collapsed", &format_folded },
		{ "report.txt", &format_text },
		{ "flame.svg", &format_svg },
		{ "t.speedscope.json", &format_speedscope },
		{ "t.json", NULL },
		{ "x.gz", NULL },
		{ "x.html", NULL },
		{ "txt", NULL },
		{ ".txt", NULL },
		{ "dir/.pprof", NULL },
		{ "dir/.svg", NULL },
		{ "-", NULL },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(format_by_path(cases[i].path, 0) ==
		    cases[i].fmt, "%s", cases[i].path);
	ck_assert_ptr_null(format_by_path("x.pb.gz", FORMAT_DIFF));
	ck_assert_ptr_eq(format_by_path("x.svg", FORMAT_DIFF), &format_svg);
}
END_TEST

START_TEST(test_write_and_read_back)
{
	static const struct format *const fmts[] = { &format_pprof,
	    &format_folded, &format_text };
	static const char *const names[] = { "p.pb.gz", "p.folded", "p.txt" };
	struct profile *p = tu_sample_profile(), *q;
	char *dir = make_dir(), *path, err[256], why[256];
	const struct format *got;
	struct stat st;
	mode_t mask;
	size_t i;

	mask = umask(022);
	for (i = 0; i < 3; i++) {
		path = xasprintf("%s/%s", dir, names[i]);
		ck_assert_msg(profile_write_file(p, path, fmts[i], NULL, err,
		    sizeof err) == 0, "%s", err);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0644);
		q = profile_read_format(path, &got, err, sizeof err);
		if (fmts[i] == &format_text) {
			char *want = xasprintf("'%s' is not a pprof or "
			    "folded profile", path);

			ck_assert_ptr_null(q);
			ck_assert_str_eq(err, want);
			free(want);
		} else {
			ck_assert_msg(q != NULL, "%s", err);
			ck_assert_ptr_eq(got, fmts[i]);
		}
		if (fmts[i] == &format_pprof)
			ck_assert_msg(tu_profiles_equal(p, q, why, sizeof why),
			    "%s", why);
		if (fmts[i] == &format_folded)
			ck_assert_int_eq(profile_total(q, 0),
			    profile_total(p, 1));
		profile_free(q);
		free(path);
	}
	ck_assert_int_eq(tu_count_entries(dir), 3);
	umask(mask);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_replace_existing)
{
	struct profile *p = tu_sample_profile(), *q;
	char *dir = make_dir(), *path, *link, *hard, err[256], buf[16];
	int fd;

	path = xasprintf("%s/out.folded", dir);
	put_file(path, "old 1\n", 6);
	/* The old file is put aside whole, not rewritten: a reader that
	 * has it open, and another name for it, still see it. */
	hard = xasprintf("%s/hard.folded", dir);
	ck_assert_int_eq(linkat(AT_FDCWD, path, AT_FDCWD, hard, 0), 0);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(profile_write_file(p, path, &format_folded,
	    NULL, err, sizeof err), 0);
	q = profile_read(path, err, sizeof err);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(profile_total(q, 0), 12000000);
	profile_free(q);
	memset(buf, 0, sizeof buf);
	ck_assert_int_eq(read(fd, buf, sizeof buf - 1), 6);
	ck_assert_str_eq(buf, "old 1\n");
	close(fd);
	q = profile_read(hard, err, sizeof err);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(profile_total(q, 0), 1);
	profile_free(q);
	ck_assert_int_eq(tu_count_entries(dir), 2);
	ck_assert_int_eq(unlink(hard), 0);
	free(hard);

	/* Through a symlink: the target is replaced, the link stays. */
	link = xasprintf("%s/link.folded", dir);
	ck_assert_int_eq(symlink("out.folded", link), 0);
	put_file(path, "old 1\n", 6);
	ck_assert_int_eq(profile_write_file(p, link, &format_folded,
	    NULL, err, sizeof err), 0);
	{
		struct stat st;

		ck_assert_int_eq(lstat(link, &st), 0);
		ck_assert(S_ISLNK(st.st_mode));
	}
	q = profile_read(path, err, sizeof err);
	ck_assert_int_eq(profile_total(q, 0), 12000000);
	profile_free(q);
	ck_assert_int_eq(tu_count_entries(dir), 2);
	free(path);
	free(link);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_replace_keeps_mode_and_owner)
{
	struct profile *p = tu_sample_profile();
	char *dir = make_dir(), *path, err[256];
	struct stat st;
	mode_t mask = umask(022);

	/* A private file stays private: it used to come back 0644. */
	path = xasprintf("%s/private.pb.gz", dir);
	put_file(path, "old 1\n", 6);
	ck_assert_int_eq(chmod(path, 0600), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(path, 4242, 4343), 0);
	ck_assert_msg(profile_write_file(p, path, &format_pprof, NULL, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	if (geteuid() == 0) {
		ck_assert_int_eq(st.st_uid, 4242);
		ck_assert_int_eq(st.st_gid, 4343);
	}
	/* A new file: 0666 less the umask, as before. */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(profile_write_file(p, path, &format_pprof, NULL, err,
	    sizeof err), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(tu_count_entries(dir), 1);
	umask(mask);
	free(path);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_symlink_in_shared_dir)
{
	struct profile *p = tu_sample_profile(), *q;
	char *dir = make_dir(), *shared, *victim, *link, *want, err[256], buf[16];
	struct stat st;
	FILE *fp;

	/* /tmp-like: sticky, world-writable, owned by root. */
	shared = xasprintf("%s/shared", dir);
	ck_assert_int_eq(mkdir(shared, 0700), 0);
	ck_assert_int_eq(chmod(shared, 01777), 0);
	victim = xasprintf("%s/victim", dir);
	put_file(victim, "secret\n", 7);
	ck_assert_int_eq(chmod(victim, 0600), 0);
	link = xasprintf("%s/out.pb.gz", shared);
	ck_assert_int_eq(symlink(victim, link), 0);

	/* Our own link there is followed, and stays a link. */
	ck_assert_msg(profile_write_file(p, link, &format_pprof, NULL, err,
	    sizeof err) == 0, "%s", err);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	q = profile_read(victim, err, sizeof err);
	ck_assert_msg(q != NULL, "%s", err);
	profile_free(q);
	ck_assert_int_eq(stat(victim, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);

	/* Another user's link there is not (needs root to make one). */
	if (geteuid() == 0 && getuid() == 0) {
		put_file(victim, "secret\n", 7);
		ck_assert_int_eq(lchown(link, 4242, 4242), 0);
		ck_assert_int_eq(profile_write_file(p, link, &format_pprof, NULL,
		    err, sizeof err), -1);
		want = xasprintf("cannot write '%s': not following a symbolic link "
		    "another user owns in a shared directory", link);
		ck_assert_str_eq(err, want);
		free(want);
		fp = fopen(victim, "r");
		ck_assert_ptr_nonnull(fp);
		ck_assert_ptr_nonnull(fgets(buf, sizeof buf, fp));
		fclose(fp);
		ck_assert_str_eq(buf, "secret\n");
		ck_assert_int_eq(tu_count_entries(shared), 1);
	}
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(rmdir(shared), 0);
	free(shared);
	free(victim);
	free(link);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_write_new_and_at)
{
	struct profile *p = tu_sample_profile(), *q;
	char *dir = make_dir(), *victim, *link, *path, *want, err[256], buf[16];
	struct stat st;
	FILE *fp;
	int dirfd;

	victim = xasprintf("%s/victim", dir);
	put_file(victim, "secret\n", 7);
	link = xasprintf("%s/snap.1", dir);
	ck_assert_int_eq(symlink(victim, link), 0);

	/* A name rperf makes up: whatever is there is an error. */
	ck_assert_int_eq(profile_write_new(p, link, link, &format_pprof, err,
	    sizeof err), -1);
	want = xasprintf("cannot write '%s': File exists", link);
	ck_assert_str_eq(err, want);
	free(want);
	path = xasprintf("%s/snap.2", dir);
	ck_assert_msg(profile_write_new(p, path, path, &format_pprof, err,
	    sizeof err) == 0, "%s", err);
	q = profile_read(path, err, sizeof err);
	ck_assert_msg(q != NULL, "%s", err);
	profile_free(q);

	/* In a directory fd: a link at the name is replaced, not followed. */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ne(dirfd, -1);
	ck_assert_msg(profile_write_at(p, dirfd, "snap.1", &format_pprof,
	    "snap.1", err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	q = profile_read_at(dirfd, "snap.1", "snap.1", err, sizeof err);
	ck_assert_msg(q != NULL, "%s", err);
	profile_free(q);
	close(dirfd);

	fp = fopen(victim, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, fp));
	fclose(fp);
	ck_assert_str_eq(buf, "secret\n");
	ck_assert_int_eq(tu_count_entries(dir), 3);
	free(victim);
	free(link);
	free(path);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_write_missing_dir)
{
	struct profile *p = tu_sample_profile();
	char *dir = make_dir(), *path, *want, err[256];

	path = xasprintf("%s/no/such/dir/x.pb.gz", dir);
	ck_assert_int_eq(profile_write_file(p, path, &format_pprof,
	    NULL, err, sizeof err), -1);
	want = xasprintf("cannot write '%s': No such file or directory", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(tu_count_entries(dir), 0);
	free(want);
	free(path);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_write_to_directory)
{
	struct profile *p = tu_sample_profile();
	char *dir = make_dir(), *want, err[256];

	ck_assert_int_eq(profile_write_file(p, dir, &format_pprof,
	    NULL, err, sizeof err), -1);
	want = xasprintf("cannot write '%s': Is a directory", dir);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(tu_count_entries(dir), 0);
	free(want);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_write_no_format)
{
	struct profile *p = tu_sample_profile();
	char err[256];

	ck_assert_int_eq(profile_write_file(p, "/tmp/x.html",
	    NULL, NULL, err, sizeof err), -1);
	ck_assert_str_eq(err, "no format to write '/tmp/x.html' in");
	profile_free(p);
}
END_TEST

START_TEST(test_write_device_full)
{
	struct profile *p = tu_sample_profile();
	char err[256];
	size_t fmt;

	for (fmt = 0; format_table[fmt] != NULL; fmt++) {
		ck_assert_int_eq(profile_write_file(p, "/dev/full", format_table[fmt], NULL,
		    err, sizeof err), -1);
		ck_assert_str_eq(err,
		    "cannot write '/dev/full': No space left on device");
	}
	/* A special file is written in place, not replaced. */
	ck_assert_int_eq(profile_write_file(p, "/dev/null",
	    &format_pprof, NULL, err, sizeof err), 0);
	{
		struct stat st;

		ck_assert_int_eq(stat("/dev/null", &st), 0);
		ck_assert(S_ISCHR(st.st_mode));
	}
	profile_free(p);
}
END_TEST

START_TEST(test_write_stdout_full)
{
	struct profile *p = tu_sample_profile();
	char err[256];

	/* Check forks each test, so redirecting stdout stays local. */
	ck_assert_ptr_nonnull(freopen("/dev/full", "w", stdout));
	ck_assert_int_eq(profile_write_file(p, "-", &format_text, NULL,
	    err, sizeof err), -1);
	ck_assert_str_eq(err,
	    "cannot write to standard output: No space left on device");
	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stdout));
	ck_assert_int_eq(profile_write_file(p, "-", &format_folded,
	    NULL, err, sizeof err), 0);
	profile_free(p);
}
END_TEST

START_TEST(test_write_fails_half_way)
{
	/* A file size limit makes the write fail after the temporary file
	 * was created and partly written: the old file must survive intact
	 * and the temporary file must be gone. */
	static const char old[] = "old;stack 42\n";
	struct profile *p = profile_new(), *q;
	static const char *const t[] = { "cpu" }, *const u[] = { "ns" };
	struct rlimit rl = { 4096, 4096 };
	char *dir = make_dir(), *path, *want, err[256], name[64];
	uint64_t loc;
	int64_t v = 1;
	int i;

	profile_set_value_types(p, 1, t, u);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "Function%d", i);
		loc = profile_location(p, profile_function(p, name, name,
		    "x.rb", i), i);
		profile_add_sample(p, &loc, 1, &v, NULL, 0);
	}
	path = xasprintf("%s/out.folded", dir);
	put_file(path, old, sizeof old - 1);
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	ck_assert_int_eq(profile_write_file(p, path, &format_folded,
	    NULL, err, sizeof err), -1);
	want = xasprintf("cannot write '%s': File too large", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(tu_count_entries(dir), 1);
	q = profile_read(path, err, sizeof err);
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(profile_total(q, 0), 42);
	profile_free(q);
	free(want);
	free(path);
	remove_dir(dir);
	profile_free(p);
}
END_TEST

START_TEST(test_read_errors)
{
	static const uint8_t gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00 };
	static const uint8_t bin[] = { 0x00, 0x01, 0x02, 0xff };
	static const uint8_t pb[] = { 0x0a, 0x04, 0x08, 0x01, 0x10 };
	char *dir = make_dir(), *path, *want, err[256];
	struct profile *p;

#define READ_FAILS(name, data, len, fmt) do {				\
	path = xasprintf("%s/%s", dir, name);				\
	if ((data) != NULL)						\
		put_file(path, (const char *)(data), len);		\
	want = xasprintf(fmt, path);					\
	p = profile_read(path, err, sizeof err);			\
	ck_assert_ptr_null(p);						\
	ck_assert_str_eq(err, want);					\
	free(want);							\
	free(path);							\
} while (0)
	READ_FAILS("missing", NULL, 0,
	    "cannot read '%s': No such file or directory");
	READ_FAILS("empty", "", 0, "'%s' is empty");
	READ_FAILS("blank", "\n  \n", 4, "'%s' is empty");
	READ_FAILS("readme", "hello world\n", 12,
	    "'%s' is not a pprof or folded profile");
	READ_FAILS("binary", bin, sizeof bin,
	    "'%s' is not a pprof or folded profile");
	READ_FAILS("cut.pb.gz", gz, sizeof gz,
	    "'%s' is truncated or corrupt: gzip data is truncated");
	READ_FAILS("cut.pb", pb, sizeof pb,
	    "'%s' is truncated or corrupt: not a valid profile protobuf");
	READ_FAILS("bad.folded", "a;b 1\nc;d x\n", 12,
	    "'%s' is truncated or corrupt: line 2: weight 'x' is not an "
	    "integer");
	READ_FAILS("neg.folded", "a;b -1\n", 7,
	    "'%s' is truncated or corrupt: line 1: negative weight '-1'");
#undef READ_FAILS
	want = xasprintf("cannot read '%s': Is a directory", dir);
	ck_assert_ptr_null(profile_read(dir, err, sizeof err));
	ck_assert_str_eq(err, want);
	free(want);
	remove_dir(dir);
}
END_TEST

START_TEST(test_read_huge_files)
{
	/* 900 MiB of zero bytes (a sparse file) was read whole before its
	 * first byte was refused; more than PROFILE_READ_MAX is refused by
	 * its size. */
	char *dir = make_dir(), *path, *want, err[256];
	double t0;
	int fd;

	path = xasprintf("%s/zeros.pb", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(ftruncate(fd, (off_t)900 << 20), 0);
	close(fd);
	want = xasprintf("'%s' is not a pprof or folded profile", path);
	tu_limit_memory(64);
	t0 = tu_cpu_seconds();
	ck_assert_ptr_null(profile_read(path, err, sizeof err));
	t0 = tu_cpu_seconds() - t0;
	ck_assert_str_eq(err, want);
	ck_assert_msg(t0 < 1.0 * TU_CPU_SCALE, "took %.1f CPU seconds", t0);
	free(want);

	fd = open(path, O_WRONLY);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(ftruncate(fd, (off_t)PROFILE_READ_MAX + 1), 0);
	ck_assert_int_eq(pwrite(fd, "a 1\n", 4, 0), 4);
	close(fd);
	want = xasprintf("'%s' is too large (more than 1024 MiB)", path);
	ck_assert_ptr_null(profile_read(path, err, sizeof err));
	ck_assert_str_eq(err, want);
	free(want);
	free(path);
	remove_dir(dir);
}
END_TEST

START_TEST(test_read_raw_and_stdin)
{
	struct profile *p = tu_sample_profile(), *q;
	char *buf = NULL, err[256];
	size_t len;
	const struct format *fmt;
	int rc;

	TU_CAPTURE(buf, len, rc, folded_write(p, fp, 1));
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(freopen("/dev/null", "r", stdin));
	{
		char *dir = make_dir(), *path = xasprintf("%s/in", dir);

		put_file(path, buf, len);
		ck_assert_ptr_nonnull(freopen(path, "r", stdin));
		q = profile_read_format("-", &fmt, err, sizeof err);
		ck_assert_msg(q != NULL, "%s", err);
		ck_assert_ptr_eq(fmt, &format_folded);
		ck_assert_uint_eq(q->nsamples, 5);
		profile_free(q);
		free(path);
		remove_dir(dir);
	}
	q = format_parse((const uint8_t *)buf, len, "mem", &fmt, err,
	    sizeof err);
	ck_assert_ptr_nonnull(q);
	profile_free(q);
	free(buf);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_format_names);
	tcase_add_test(tc, test_format_paths);
	tcase_add_test(tc, test_write_and_read_back);
	tcase_add_test(tc, test_replace_existing);
	tcase_add_test(tc, test_replace_keeps_mode_and_owner);
	tcase_add_test(tc, test_symlink_in_shared_dir);
	tcase_add_test(tc, test_write_new_and_at);
	tcase_add_test(tc, test_write_missing_dir);
	tcase_add_test(tc, test_write_to_directory);
	tcase_add_test(tc, test_write_no_format);
	tcase_add_test(tc, test_write_device_full);
	tcase_add_test(tc, test_write_stdout_full);
	tcase_add_test(tc, test_write_fails_half_way);
	tcase_add_test(tc, test_read_errors);
	tcase_add_test(tc, test_read_huge_files);
	tcase_add_test(tc, test_read_raw_and_stdin);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(output_suite());
}
