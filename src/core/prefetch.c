/* One worker thread that renders the chunk a streaming reader will want next. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/context.h"
#include "tracemount/prefetch.h"
#include "tracemount/reader.h"
#include "tracemount/source.h"

struct job {
	int valid;
	struct tm_reader reader; /* a copy whose source is the job's own handle */
	struct tm_source src;
	uint64_t first, last; /* chunks to render, in order */
};

struct tm_prefetch {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	int started, stop;
	struct job pending;
};

static void job_discard(struct job *j)
{
	if (!j->valid)
		return;
	tm_source_close(&j->src);
	tm_context_trace_put(j->reader.ctx, j->reader.trace);
	j->valid = 0;
}

static void *worker(void *arg)
{
	struct tm_prefetch *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && !p->pending.valid)
			pthread_cond_wait(&p->wake, &p->lock);
		if (p->stop)
			break;
		struct job j = p->pending;
		p->pending.valid = 0;
		pthread_mutex_unlock(&p->lock);
		j.reader.src = &j.src;
		/* From the far end back: the reader renders what it needs first itself, in
		 * order, so the two meet once instead of waiting on each other at every chunk. */
		for (uint64_t c = j.last + 1; c-- > j.first;) {
			/* a hint: errors surface on the reader's own read */
			if (tm_reader_render(&j.reader, c) < 0)
				break;
			pthread_mutex_lock(&p->lock);
			int superseded = p->stop || p->pending.valid;
			pthread_mutex_unlock(&p->lock);
			if (superseded)
				break;
		}
		job_discard(&j);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int tm_prefetch_new(struct tm_prefetch **out)
{
	struct tm_prefetch *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	*out = p;
	return 0;
}

void tm_prefetch_free(struct tm_prefetch *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->thread, NULL);
	job_discard(&p->pending);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void tm_prefetch_request(struct tm_prefetch *p, const struct tm_reader *r, uint64_t first,
			 uint64_t last)
{
	struct job j = {.valid = 1, .first = first, .last = last};
	/* field by field: r->next_off is another thread's atomic */
	j.reader.ctx = r->ctx;
	j.reader.trace = r->trace;
	j.reader.index = r->index;
	j.reader.view = r->view;
	if (tm_source_dup(r->src, &j.src) < 0)
		return;
	tm_context_trace_hold(r->ctx, r->trace);

	pthread_mutex_lock(&p->lock);
	if (!p->stop && !p->started) {
		p->started = pthread_create(&p->thread, NULL, worker, p) == 0;
		if (!p->started)
			p->stop = 1;
	}
	if (p->stop) {
		pthread_mutex_unlock(&p->lock);
		job_discard(&j);
		return;
	}
	struct job old = p->pending; /* the newest request wins */
	p->pending = j;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	job_discard(&old);
}
