/* Detection's memo (detect_memo.h): a chained hash table of paths under one lock. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "detect_memo.h"
#include "tracemount/util.h"

#define BUCKETS	    (1u << 14)
#define MAX_ENTRIES (1u << 20) /* about 100 MiB of the longest paths; then it starts again */

struct memo_entry {
	struct memo_entry *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	struct tm_detect_result r;
	char path[];
};

struct tm_detect_memo {
	pthread_mutex_t lock;
	size_t n_entries;
	struct memo_entry *buckets[BUCKETS];
};

int tm_detect_memo_new(struct tm_detect_memo **out)
{
	struct tm_detect_memo *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return 0;
}

static void forget_all(struct tm_detect_memo *m)
{
	for (size_t i = 0; i < BUCKETS; i++) {
		while (m->buckets[i]) {
			struct memo_entry *e = m->buckets[i];
			m->buckets[i] = e->next;
			free(e);
		}
	}
	m->n_entries = 0;
}

void tm_detect_memo_free(struct tm_detect_memo *m)
{
	if (!m)
		return;
	forget_all(m);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct memo_entry **bucket_of(struct tm_detect_memo *m, const char *path)
{
	return &m->buckets[tm_fnv1a(TM_FNV_START, path, strlen(path)) & (BUCKETS - 1)];
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static bool same_file(const struct memo_entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       same_time(e->mtime, st->st_mtim) && same_time(e->ctime, st->st_ctim);
}

bool tm_detect_memo_find(struct tm_detect_memo *m, const char *path, const struct stat *st,
			 struct tm_detect_result *r)
{
	bool found = false;
	pthread_mutex_lock(&m->lock);
	for (struct memo_entry *e = *bucket_of(m, path); e; e = e->next) {
		if (strcmp(e->path, path) == 0) {
			found = same_file(e, st) && e->r.also == r->also;
			if (found)
				*r = e->r;
			break;
		}
	}
	pthread_mutex_unlock(&m->lock);
	return found;
}

void tm_detect_memo_store(struct tm_detect_memo *m, const char *path, const struct stat *st,
			  const struct tm_detect_result *r)
{
	size_t len = strlen(path);
	struct memo_entry *n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return; /* a memo: detection runs again next time */
	n->dev = st->st_dev;
	n->ino = st->st_ino;
	n->size = st->st_size;
	n->mtime = st->st_mtim;
	n->ctime = st->st_ctim;
	n->r = *r;
	memcpy(n->path, path, len + 1);
	pthread_mutex_lock(&m->lock);
	struct memo_entry **p = bucket_of(m, path);
	for (; *p; p = &(*p)->next) {
		if (strcmp((*p)->path, path) == 0) {
			struct memo_entry *old = *p;
			*p = old->next;
			free(old);
			m->n_entries--;
			break;
		}
	}
	if (m->n_entries == MAX_ENTRIES)
		forget_all(m);
	p = bucket_of(m, path);
	n->next = *p;
	*p = n;
	m->n_entries++;
	pthread_mutex_unlock(&m->lock);
}
