/*
 * check_session.c: unit tests for session.c: the directory is made only
 * when asked and once, a TMPDIR that names nothing is one error and no
 * more, a child's profile goes in and is merged (also when the child was
 * done before its parent noted it), a child that died
 * without writing (even one still a zombie) is not waited for, and a
 * child whose session was removed writes nothing anywhere, even into a
 * directory recreated under the same name with a link planted in it; no
 * descriptor stays open between uses, and a relative TMPDIR survives a
 * chdir.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "session.h"
#include "testutil.h"

/* A fresh empty directory, made TMPDIR. */
static char *
make_tmpdir(void)
{
	char *dir = xstrdup("/tmp/rperf-check-session.XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
	return dir;
}

/* Seconds on the monotonic clock. */
static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST(test_child_profile_merged)
{
	struct profile *p = tu_sample_profile(), *out;
	char *tmp = make_tmpdir(), err[512];
	struct session s;
	struct stat st;
	long pids[4];
	int fds = tu_count_entries("/proc/self/fd");

	session_init(&s);
	ck_assert(!session_active(&s));
	ck_assert_int_eq(tu_count_entries(tmp), 0);	/* nothing until asked */
	ck_assert_msg(session_create(&s, err, sizeof err) == 0, "%s", err);
	ck_assert(session_active(&s));
	ck_assert_int_eq(session_create(&s, err, sizeof err), 0);	/* once */
	ck_assert_int_eq(tu_count_entries(tmp), 1);
	ck_assert_int_eq(stat(s.dir, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0700);

	ck_assert(!session_has_children(&s));
	session_child_started(&s, 4242, 0);
	ck_assert(session_has_children(&s));
	ck_assert_msg(session_child_write(&s, 4242, p, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(tu_count_entries(s.dir), 1);	/* .running gone */
	/* A child quicker than its parent: done before the parent notes
	 * it (a CI run under ASan lost a forked child's profile so). */
	ck_assert_msg(session_child_write(&s, 4343, p, err, sizeof err) == 0, "%s", err);
	session_child_started(&s, 4343, 0);
	ck_assert_int_eq(tu_count_entries(s.dir), 2);	/* no stray .running */
	out = profile_new_like(p);
	ck_assert_int_eq(session_collect(&s, out, 1, pids, 4), 2);
	ck_assert_int_eq(pids[0], 4242);
	ck_assert_int_eq(pids[1], 4343);
	ck_assert_int_eq(profile_total(out, 0), 2 * profile_total(p, 0));
	/* Nothing kept open for the program to see, close or shift its
	 * next descriptor's number. */
	ck_assert_int_eq(tu_count_entries("/proc/self/fd"), fds);
	session_remove(&s);
	ck_assert(!session_active(&s));
	ck_assert_int_eq(tu_count_entries(tmp), 0);
	rmdir(tmp);
	free(tmp);
	profile_free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_reused_pid_kept_apart)
{
	struct profile *p = tu_sample_profile(), *out;
	char *tmp = make_tmpdir(), err[512];
	struct session root, child;
	uint64_t first, second;
	long pids[4];

	session_init(&root);
	ck_assert_msg(session_create(&root, err, sizeof err) == 0, "%s", err);
	/* Two forks whose children both got pid 4242 (the first had ended
	 * by the second), each noted and reporting under its own fork id. */
	first = session_fork_id(&root);
	second = session_fork_id(&root);
	ck_assert(first != 0 && second != 0 && first != second);
	child = root;
	session_in_child(&child, first);
	session_child_started(&root, 4242, first);
	ck_assert_msg(session_child_write(&child, 4242, p, err, sizeof err) == 0, "%s", err);
	session_in_child(&child, second);
	session_child_started(&root, 4242, second);
	ck_assert_int_eq(tu_count_entries(root.dir), 2);	/* one still running */
	ck_assert_msg(session_child_write(&child, 4242, p, err, sizeof err) == 0, "%s", err);
	ck_assert_int_eq(tu_count_entries(root.dir), 2);	/* both profiles */
	out = profile_new_like(p);
	ck_assert_int_eq(session_collect(&root, out, 1, pids, 4), 2);
	ck_assert_int_eq(pids[0], 4242);
	ck_assert_int_eq(pids[1], 4242);
	ck_assert_int_eq(profile_total(out, 0), 2 * profile_total(p, 0));
	session_remove(&root);
	ck_assert_int_eq(tu_count_entries(tmp), 0);
	rmdir(tmp);
	free(tmp);
	profile_free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_relative_tmpdir)
{
	struct profile *p = tu_sample_profile(), *out;
	char *tmp = make_tmpdir(), *cwd = getcwd(NULL, 0), err[512];
	struct session s;
	long pids[2];

	ck_assert_ptr_nonnull(cwd);
	ck_assert_int_eq(chdir(tmp), 0);
	ck_assert_int_eq(mkdir("sub", 0700), 0);
	ck_assert_int_eq(setenv("TMPDIR", "sub", 1), 0);
	session_init(&s);
	ck_assert_msg(session_create(&s, err, sizeof err) == 0, "%s", err);
	ck_assert_msg(s.dir[0] == '/', "%s", s.dir);
	ck_assert_int_eq(chdir("/"), 0);	/* the script moves on */
	session_child_started(&s, 4242, 0);
	ck_assert_msg(session_child_write(&s, 4242, p, err, sizeof err) == 0, "%s", err);
	out = profile_new_like(p);
	ck_assert_int_eq(session_collect(&s, out, 1, pids, 2), 1);
	session_remove(&s);
	ck_assert_int_eq(chdir(tmp), 0);
	ck_assert_int_eq(tu_count_entries("sub"), 0);
	ck_assert_int_eq(rmdir("sub"), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	rmdir(tmp);
	free(tmp);
	free(cwd);
	profile_free(out);
	profile_free(p);
}
END_TEST

START_TEST(test_tmpdir_nowhere)
{
	struct profile *p = tu_sample_profile();
	struct session s;
	char err[512];

	ck_assert_int_eq(setenv("TMPDIR", "/nonexistent/rperf-check", 1), 0);
	session_init(&s);
	ck_assert_int_eq(session_create(&s, err, sizeof err), -1);
	ck_assert_str_eq(err, "cannot make a session directory in "
	    "'/nonexistent/rperf-check': No such file or directory");
	strcpy(err, "untouched");
	ck_assert_int_eq(session_create(&s, err, sizeof err), -1);
	ck_assert_str_eq(err, "untouched");	/* said once */
	ck_assert(!session_active(&s));
	session_child_started(&s, 4242, 0);
	ck_assert_int_eq(session_child_write(&s, 4242, p, err, sizeof err), 0);
	ck_assert(!session_has_children(&s));
	session_remove(&s);
	profile_free(p);
}
END_TEST

START_TEST(test_removed_session_never_written)
{
	struct profile *p = tu_sample_profile();
	char *tmp = make_tmpdir(), *victim, *link, err[512], buf[16];
	struct session root, child;
	FILE *fp;

	session_init(&root);
	ck_assert_int_eq(session_create(&root, err, sizeof err), 0);
	/* What a forked child holds: the same directory. */
	child = root;
	child.dir = xstrdup(root.dir);
	session_child_started(&root, 4242, 0);
	session_remove(&root);

	/* Someone recreates the directory, as private as ours, and plants
	 * a link. */
	ck_assert_int_eq(mkdir(child.dir, 0700), 0);
	victim = xasprintf("%s/victim", tmp);
	fp = fopen(victim, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("secret\n", fp);
	fclose(fp);
	link = xasprintf("%s/4242.pb.gz", child.dir);
	ck_assert_int_eq(symlink(victim, link), 0);

	ck_assert_int_eq(session_child_write(&child, 4242, p, err, sizeof err), -1);
	ck_assert_msg(strstr(err, "was removed when the run ended") != NULL, "%s", err);
	fp = fopen(victim, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(buf, sizeof buf, fp));
	fclose(fp);
	ck_assert_str_eq(buf, "secret\n");
	ck_assert_int_eq(tu_count_entries(child.dir), 1);

	/* Made open to others, as a mkdir with the usual umask makes it. */
	ck_assert_int_eq(chmod(child.dir, 0755), 0);
	ck_assert_int_eq(session_child_write(&child, 4242, p, err, sizeof err), -1);
	ck_assert_int_eq(tu_count_entries(child.dir), 1);

	unlink(link);
	rmdir(child.dir);
	unlink(victim);
	rmdir(tmp);
	free(child.dir);
	free(victim);
	free(link);
	free(tmp);
	profile_free(p);
}
END_TEST

START_TEST(test_dead_child_not_waited_for)
{
	struct profile *p = tu_sample_profile(), *out;
	char *tmp = make_tmpdir(), err[512];
	struct session s;
	double t0;
	long pids[4];
	pid_t pid;
	int status;

	session_init(&s);
	ck_assert_int_eq(session_create(&s, err, sizeof err), 0);
	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0)
		_exit(0);	/* dies without writing: a zombie until reaped */
	session_child_started(&s, pid, 0);
	usleep(100 * 1000);
	out = profile_new_like(p);
	t0 = now_s();
	ck_assert_int_eq(session_collect(&s, out, 10, pids, 4), 0);
	ck_assert_msg(now_s() - t0 < 2, "waited %.1f s for a zombie", now_s() - t0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	session_remove(&s);
	ck_assert_int_eq(tu_count_entries(tmp), 0);
	rmdir(tmp);
	free(tmp);
	profile_free(out);
	profile_free(p);
}
END_TEST

/* The test suite. */
static Suite *
session_suite(void)
{
	Suite *s = suite_create("session");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_child_profile_merged);
	tcase_add_test(tc, test_reused_pid_kept_apart);
	tcase_add_test(tc, test_relative_tmpdir);
	tcase_add_test(tc, test_tmpdir_nowhere);
	tcase_add_test(tc, test_removed_session_never_written);
	tcase_add_test(tc, test_dead_child_not_waited_for);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(session_suite());
}
