/* One worker thread that renders the chunks a streaming reader will want next. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tracemount/readahead.h"

struct tm_readahead {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started, stop, pending_valid;
	struct tm_readahead_job pending;
};

static void *worker(void *arg)
{
	struct tm_readahead *ra = arg;
	pthread_mutex_lock(&ra->lock);
	for (;;) {
		while (!ra->stop && !ra->pending_valid)
			pthread_cond_wait(&ra->wake, &ra->lock);
		if (ra->stop)
			break;
		struct tm_readahead_job j = ra->pending;
		ra->pending_valid = false;
		pthread_mutex_unlock(&ra->lock);
		/* From the far end back: the reader renders what it needs first itself, in
		 * order, so the two meet once instead of waiting on each other at every chunk. */
		for (uint64_t c = j.last + 1; c-- > j.first;) {
			/* a hint: errors surface on the reader's own read */
			if (j.render(j.arg, c) < 0)
				break;
			pthread_mutex_lock(&ra->lock);
			bool superseded = ra->stop || ra->pending_valid;
			pthread_mutex_unlock(&ra->lock);
			if (superseded)
				break;
		}
		j.release(j.arg);
		pthread_mutex_lock(&ra->lock);
	}
	pthread_mutex_unlock(&ra->lock);
	return NULL;
}

int tm_readahead_new(struct tm_readahead **out)
{
	struct tm_readahead *ra = calloc(1, sizeof(*ra));
	if (!ra)
		return -ENOMEM;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->wake, NULL);
	*out = ra;
	return 0;
}

void tm_readahead_free(struct tm_readahead *ra)
{
	if (!ra)
		return;
	pthread_mutex_lock(&ra->lock);
	ra->stop = true;
	pthread_cond_signal(&ra->wake);
	pthread_mutex_unlock(&ra->lock);
	if (ra->started)
		pthread_join(ra->thread, NULL);
	if (ra->pending_valid)
		ra->pending.release(ra->pending.arg);
	pthread_cond_destroy(&ra->wake);
	pthread_mutex_destroy(&ra->lock);
	free(ra);
}

void tm_readahead_request(struct tm_readahead *ra, const struct tm_readahead_job *job)
{
	pthread_mutex_lock(&ra->lock);
	if (!ra->stop && !ra->started) {
		ra->started = pthread_create(&ra->thread, NULL, worker, ra) == 0;
		if (!ra->started)
			ra->stop = true;
	}
	if (ra->stop) {
		pthread_mutex_unlock(&ra->lock);
		job->release(job->arg);
		return;
	}
	struct tm_readahead_job old = ra->pending; /* the newest request wins */
	bool had_old = ra->pending_valid;
	ra->pending = *job;
	ra->pending_valid = true;
	pthread_cond_signal(&ra->wake);
	pthread_mutex_unlock(&ra->lock);
	if (had_old)
		old.release(old.arg);
}
