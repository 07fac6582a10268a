/*
 * push-queue.c: the uploader while a script runs (see push.h).  It owns
 * the bounded queue, the upload thread that sends it in order with
 * backoff, the spool thread that writes what the queue pushes out or the
 * server refuses, and the start and end of both.
 *
 * The threads are plain pthreads: they never call Ruby, never hold the
 * GVL and have every signal blocked, so the sampler's timer signals go to
 * the Ruby threads.  push_enqueue() only encodes and takes the lock for
 * as long as a pointer moves; it never waits for the network (only,
 * rarely, for the spooler to catch up with the disk).  An interval is
 * either sent or spooled, never dropped unseen.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "push-int.h"
#include "xmalloc.h"

/* An empty queue of at most CAP entries (at least one). */
void
push_queue_init(struct push_queue *q, size_t cap)
{
	q->cap = cap ? cap : 1;
	q->items = xcalloc(q->cap, sizeof *q->items);
	q->head = q->count = 0;
}

/* Append IV; the oldest entry dropped to make room, or NULL. */
struct push_interval *
push_queue_put(struct push_queue *q, struct push_interval *iv)
{
	struct push_interval *dropped = NULL;

	if (q->count == q->cap)
		dropped = push_queue_take(q);
	q->items[(q->head + q->count) % q->cap] = iv;
	q->count++;
	return dropped;
}

/* Remove and return the oldest entry, or NULL. */
struct push_interval *
push_queue_take(struct push_queue *q)
{
	struct push_interval *iv;

	if (q->count == 0)
		return NULL;
	iv = q->items[q->head];
	q->items[q->head] = NULL;
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return iv;
}

/* Free the queue and every interval still in it. */
void
push_queue_release(struct push_queue *q)
{
	struct push_interval *iv;

	while ((iv = push_queue_take(q)) != NULL) {
		push_interval_release(iv);
		free(iv);
	}
	free(q->items);
	q->items = NULL;
}

/* An absolute CLOCK_MONOTONIC time NS from now, for pthread_cond_timedwait. */
static struct timespec
push_queue_abstime(int64_t ns)
{
	struct timespec ts;
	int64_t t = util_mono_ns() + (ns > 0 ? ns : 0);

	ts.tv_sec = (time_t)(t / UTIL_NS_PER_SEC);
	ts.tv_nsec = (long)(t % UTIL_NS_PER_SEC);
	return ts;
}

/*
 * Hand IV to the spooler (P->lock held).  Waits only while the spooler
 * is a whole queue behind, that is for the disk, never for the network.
 */
static void
push_queue_spill(struct push *p, struct push_interval *iv)
{
	while (p->spill.count == p->spill.cap)
		pthread_cond_wait(&p->cond, &p->lock);
	push_queue_put(&p->spill, iv);
	pthread_cond_broadcast(&p->cond);
}

/* The upload thread: send the queue in order, retrying with backoff. */
static void *
push_queue_thread(void *arg)
{
	struct push *p = arg;
	char err[512];
	double base = 0, delay;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct push_interval *iv;
		enum push_result r;

		while (p->inflight == NULL && p->queue.count == 0 &&
		    !p->stopping && !atomic_load(&p->aborting))
			pthread_cond_wait(&p->cond, &p->lock);
		if (atomic_load(&p->aborting))
			break;
		if (p->inflight == NULL) {
			p->inflight = push_queue_take(&p->queue);
			base = 0;
			if (p->inflight == NULL)
				break;	/* stopping, and nothing is left */
		}
		iv = p->inflight;
		pthread_mutex_unlock(&p->lock);
		r = push_send(p, iv, err, sizeof err);
		pthread_mutex_lock(&p->lock);
		switch (r) {
		case PUSH_SENT:
			p->stats.sent++;
			push_interval_release(iv);
			free(iv);
			p->inflight = NULL;
			p->retry_noted = 0;
			break;
		case PUSH_REJECTED:
			p->stats.failed++;
			p->stats.rejected++;
			p->inflight = NULL;
			push_queue_spill(p, iv);
			if (atoi(err) != p->last_rejected) {
				p->last_rejected = atoi(err);
				error_print("push to '%s' failed: %s", p->url,
				    err);
			}
			break;
		case PUSH_RETRY:
			if (atomic_load(&p->aborting))
				break;
			p->stats.failed++;
			if (!p->retry_noted && !p->quiet)
				error_print("push to '%s' failed: %s; retrying",
				    p->url, err);
			p->retry_noted = 1;
			delay = push_backoff(&base, &p->seed);
			{
				struct timespec until = push_queue_abstime((int64_t)(delay * 1e9));

				while (!atomic_load(&p->aborting) &&
				    pthread_cond_timedwait(&p->cond, &p->lock,
				    &until) == 0)
					;
			}
			break;
		}
		pthread_cond_broadcast(&p->cond);
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* The spooler: write the spill as it comes, until told to stop and empty. */
static void *
push_queue_spooler(void *arg)
{
	struct push *p = arg;
	struct push_interval *iv;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->spill.count == 0 && !p->spooler_stop)
			pthread_cond_wait(&p->cond, &p->lock);
		iv = push_queue_take(&p->spill);
		if (iv == NULL)
			break;
		pthread_cond_broadcast(&p->cond);	/* there is room again */
		pthread_mutex_unlock(&p->lock);
		push_spool_keep(p, iv);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Validate C and start the upload and spool threads. */
struct push *
push_start(const struct push_config *c, char *err, size_t errlen)
{
	struct push *p = push_open(c, err, errlen);
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	if (p == NULL)
		return NULL;
	if (c->app_name == NULL || c->mode == NULL) {
		error_set(err, errlen, "no app name or mode to push as");
		push_close(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* The threads inherit this mask: no signal is ever delivered to them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->threaded = 1;	/* before the threads, which read it */
	rc = pthread_create(&p->spooler, NULL, push_queue_spooler, p);
	if (rc == 0) {
		rc = pthread_create(&p->thread, NULL, push_queue_thread, p);
		if (rc != 0) {
			pthread_mutex_lock(&p->lock);
			p->spooler_stop = 1;
			pthread_cond_broadcast(&p->cond);
			pthread_mutex_unlock(&p->lock);
			pthread_join(p->spooler, NULL);
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		error_set(err, errlen, "cannot start the push thread: %s",
		    strerror(rc));
		p->threaded = 0;
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		push_close(p);
		return NULL;
	}
	return p;
}

/* Encode PROF and queue it; when full, the oldest waiting one is spooled. */
void
push_enqueue(struct push *p, const struct profile *prof, int64_t from_ns,
    int64_t until_ns)
{
	struct push_interval *iv, *old;
	char err[256];

	iv = xcalloc(1, sizeof *iv);
	iv->data = push_encode(prof, &iv->len, err, sizeof err);
	if (iv->data == NULL) {
		error_print("push: %s", err);
		free(iv);
		pthread_mutex_lock(&p->lock);
		p->stats.dropped++;
		pthread_mutex_unlock(&p->lock);
		return;
	}
	push_interval_copy_labels(iv, &p->defaults);
	iv->from_ns = from_ns;
	iv->until_ns = until_ns < from_ns ? from_ns : until_ns;

	pthread_mutex_lock(&p->lock);
	old = push_queue_put(&p->queue, iv);
	if (old != NULL)
		push_queue_spill(p, old);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* Drain for at most timeout_s, then spool what is left, and free P. */
int
push_finish(struct push *p)
{
	struct push_interval *iv;
	struct timespec deadline;
	int rc = 0;

	if (p == NULL)
		return 0;
	if (p->threaded) {
		pthread_mutex_lock(&p->lock);
		p->stopping = 1;
		pthread_cond_broadcast(&p->cond);
		deadline = push_queue_abstime((int64_t)(p->timeout_s * 1e9));
		while ((p->queue.count > 0 || p->inflight != NULL) &&
		    pthread_cond_timedwait(&p->cond, &p->lock, &deadline) == 0)
			;
		atomic_store(&p->aborting, 1);
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		/* The uploader may have spilled until it stopped: drain it. */
		pthread_mutex_lock(&p->lock);
		p->spooler_stop = 1;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->spooler, NULL);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		p->threaded = 0;
	}
	/* Oldest first: the one in flight, then the queue. */
	if (p->inflight != NULL) {
		push_spool_keep(p, p->inflight);
		p->inflight = NULL;
	}
	while ((iv = push_queue_take(&p->queue)) != NULL)
		push_spool_keep(p, iv);
	push_spool_summary(p);
	rc = p->spool_failed ? -1 : 0;
	push_close(p);
	return rc;
}

/* The counters so far. */
void
push_stats(const struct push *p, struct push_stats *out)
{
	struct push *mp = (struct push *)p;

	if (p->threaded) {
		pthread_mutex_lock(&mp->lock);
		*out = p->stats;
		pthread_mutex_unlock(&mp->lock);
	} else {
		*out = p->stats;
	}
}
