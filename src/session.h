/*
 * session.h: the private directory where the processes of one profiled
 * run meet.  A forked child that is profiled writes its profile there
 * when it exits; the root process waits a bounded time for the children
 * still running, merges their profiles into its own (each sample labelled
 * with its pid) and removes the directory.  The directory is made only
 * when the script first forks; each use opens it by its path and checks
 * that it is still the one made (session.c), so that no descriptor stays
 * open in the program, and a directory of the same name made by someone
 * else once it is gone is never written to.  Plain C, no Ruby.
 */
#ifndef RPERF_SESSION_H
#define RPERF_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct profile;

/* What tells the directory made for a run from any other (session.c). */
struct session_id {
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	uint32_t uid, mode;
	int64_t btime_sec;	/* 0 where the file system keeps none */
	uint32_t btime_nsec;
	int linked;		/* not removed */
};

struct session {
	char *dir;		/* its absolute path, mode 0700, under $TMPDIR or
				 * /tmp; NULL while there is none */
	struct session_id id;	/* what DIR must still name */
	int failed;		/* making it failed: never try again */
	/* Pids are reused (a forking job worker can go through pid_max in
	 * one run), so each fork has an id as well, made of the forking
	 * process's pid and its count of forks, and unique in the run. */
	uint32_t forks;		/* forks this process made */
	uint64_t self;		/* this process's fork id (0 in the root) */
};

/* No directory yet. */
void session_init(struct session *s);

/* Note TMPDIR as the run starts: a relative one is taken from the
 * directory rperf started in, not the one the script is in when it
 * first forks (unless the script sets TMPDIR itself). */
void session_note_tmpdir(void);

/* Make the directory unless it is there already.  0, or -1 with a
 * message in ERR (the first time it fails; -1 with ERR untouched after). */
int session_create(struct session *s, char *err, size_t errlen);

/* Whether the directory is there to be used. */
int session_active(const struct session *s);

/* Right before this process forks: the id of that fork (never 0). */
uint64_t session_fork_id(struct session *s);

/* In the child made by the fork of id ID. */
void session_in_child(struct session *s, uint64_t id);

/* Note that process PID was forked (by the fork of id ID) and will write
 * a profile (called by its parent, so the root cannot miss a child that
 * starts late). */
void session_child_started(const struct session *s, pid_t pid, uint64_t id);

/* In the child PID: save its profile P for the root.  0 or -1 + ERR; a
 * directory already removed by the root is such an error, and nothing at
 * all is written then. */
int session_child_write(const struct session *s, pid_t pid, const struct profile *p,
    char *err, size_t errlen);

/*
 * In the root: wait at most TIMEOUT_S seconds for children still running
 * (a child that died without writing is not waited for), then merge every
 * child profile into OUT with a "pid" label, adding comments that list
 * the processes merged and those missing.  Returns how many were merged;
 * their pids are stored in PIDS (up to MAXPIDS).
 */
size_t session_collect(const struct session *s, struct profile *out, double timeout_s,
    long *pids, size_t maxpids);

/* Whether any child was noted. */
int session_has_children(const struct session *s);

/* Remove the directory and what is in it (whatever a crashed child left
 * too); close and free S. */
void session_remove(struct session *s);

#endif
