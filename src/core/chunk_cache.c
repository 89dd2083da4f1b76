/* LRU cache of decoded chunks: a chained hash table plus a recency list, one mutex. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/chunk_cache.h"

#include "chunk_mem.h"

#define N_BUCKETS 4096

#define TRACE_OWNER_MASK ((1ull << 48) - 1)

struct tm_chunk_cache {
	pthread_mutex_t lock;
	pthread_cond_t loaded; /* an entry finished loading, or was abandoned */
	size_t budget, used;
	struct tm_chunk_mem payloads;
	struct tm_cached_chunk *buckets[N_BUCKETS];
	struct tm_cached_chunk *mru, *lru; /* recency list, most recent first */
};

static size_t bucket_of(uint64_t owner, uint64_t index)
{
	uint64_t h = (owner * 0x9e3779b97f4a7c15ull) ^ (index * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h >> 40) % N_BUCKETS;
}

int tm_chunk_cache_new(size_t budget, struct tm_chunk_cache **out)
{
	struct tm_chunk_cache *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return -ENOMEM;
	pthread_mutex_init(&cc->lock, NULL);
	pthread_cond_init(&cc->loaded, NULL);
	cc->budget = budget;
	*out = cc;
	return 0;
}

static void entry_free(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	tm_chunk_mem_put(&cc->payloads, (void *)c->chunk.raw);
	tm_chunk_mem_put(&cc->payloads, c->chunk.records);
	tm_chunk_mem_put(&cc->payloads, c->bytes);
	free(c);
}

static void lru_unlink(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	if (c->lru_prev)
		c->lru_prev->lru_next = c->lru_next;
	else
		cc->mru = c->lru_next;
	if (c->lru_next)
		c->lru_next->lru_prev = c->lru_prev;
	else
		cc->lru = c->lru_prev;
	c->lru_prev = c->lru_next = NULL;
}

static void lru_push_front(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	c->lru_prev = NULL;
	c->lru_next = cc->mru;
	if (cc->mru)
		cc->mru->lru_prev = c;
	cc->mru = c;
	if (!cc->lru)
		cc->lru = c;
}

static void hash_unlink(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	struct tm_cached_chunk **p = &cc->buckets[bucket_of(c->owner, c->index)];
	while (*p != c)
		p = &(*p)->hash_next;
	*p = c->hash_next;
}

static void drop(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	hash_unlink(cc, c);
	lru_unlink(cc, c);
	cc->used -= c->mem;
	entry_free(cc, c);
}

/* Evicts unreferenced entries, oldest first, until used fits the budget. */
static void evict(struct tm_chunk_cache *cc)
{
	struct tm_cached_chunk *c = cc->lru;
	while (c && cc->used > cc->budget) {
		struct tm_cached_chunk *prev = c->lru_prev;
		if (!c->refs)
			drop(cc, c);
		c = prev;
	}
}

void *tm_cached_chunk_malloc(struct tm_cached_chunk *c, size_t size)
{
	struct tm_chunk_cache *cc = c->cache;
	size_t charge = tm_chunk_mem_size(size);
	pthread_mutex_lock(&cc->lock);
	c->mem += charge;
	cc->used += charge;
	evict(cc); /* first, so that what it frees makes the room */
	void *payload = tm_chunk_mem_get(&cc->payloads, size);
	pthread_mutex_unlock(&cc->lock);
	return payload;
}

int tm_cached_chunk_alloc(struct tm_cached_chunk *c, size_t raw_len, size_t n_records,
			  size_t record_size)
{
	c->chunk.raw = tm_cached_chunk_malloc(c, raw_len);
	c->chunk.records = tm_cached_chunk_malloc(c, n_records * record_size);
	if (!c->chunk.raw || !c->chunk.records)
		return -ENOMEM;
	c->chunk.raw_len = raw_len;
	c->chunk.record_size = record_size;
	return 0;
}

static struct tm_cached_chunk *lookup(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index)
{
	struct tm_cached_chunk *c = cc->buckets[bucket_of(owner, index)];
	while (c && (c->owner != owner || c->index != index))
		c = c->hash_next;
	return c;
}

/* Takes a reference on c and marks it most recently used. */
static void take(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	c->refs++;
	lru_unlink(cc, c);
	lru_push_front(cc, c);
}

/* The loaded entry for the key, or NULL; waits while another thread loads it. */
static struct tm_cached_chunk *lookup_loaded(struct tm_chunk_cache *cc, uint64_t owner,
					     uint64_t index)
{
	struct tm_cached_chunk *c;
	while ((c = lookup(cc, owner, index)) && c->loading)
		pthread_cond_wait(&cc->loaded, &cc->lock);
	return c;
}

static void insert(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index,
		   struct tm_cached_chunk *c)
{
	c->owner = owner;
	c->index = index;
	c->refs = 1;
	c->cache = cc;
	c->mem = sizeof(*c);
	cc->used += c->mem;
	size_t b = bucket_of(owner, index);
	c->hash_next = cc->buckets[b];
	cc->buckets[b] = c;
	lru_push_front(cc, c);
}

int tm_chunk_cache_contains(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index)
{
	pthread_mutex_lock(&cc->lock);
	int found = lookup(cc, owner, index) != NULL;
	pthread_mutex_unlock(&cc->lock);
	return found;
}

int tm_chunk_cache_load(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index,
			tm_chunk_loader load, void *arg, struct tm_cached_chunk **out)
{
	pthread_mutex_lock(&cc->lock);
	struct tm_cached_chunk *c = lookup_loaded(cc, owner, index);
	if (c) {
		take(cc, c);
		pthread_mutex_unlock(&cc->lock);
		*out = c;
		return 0;
	}
	/* claim the key with an empty entry, then load without the lock */
	if (!(c = calloc(1, sizeof(*c)))) {
		pthread_mutex_unlock(&cc->lock);
		return -ENOMEM;
	}
	c->loading = 1;
	insert(cc, owner, index, c);
	pthread_mutex_unlock(&cc->lock);

	int err = load(arg, c);

	pthread_mutex_lock(&cc->lock);
	c->loading = 0;
	if (err) {
		drop(cc, c);
	} else {
		evict(cc);
		*out = c;
	}
	pthread_cond_broadcast(&cc->loaded);
	pthread_mutex_unlock(&cc->lock);
	return err;
}

void tm_chunk_cache_release(struct tm_chunk_cache *cc, struct tm_cached_chunk *c)
{
	pthread_mutex_lock(&cc->lock);
	c->refs--;
	if (!c->refs && cc->used > cc->budget)
		evict(cc);
	pthread_mutex_unlock(&cc->lock);
}

void tm_chunk_cache_forget(struct tm_chunk_cache *cc, uint64_t owner)
{
	pthread_mutex_lock(&cc->lock);
	struct tm_cached_chunk *c = cc->lru;
	while (c) {
		struct tm_cached_chunk *prev = c->lru_prev;
		if ((c->owner & TRACE_OWNER_MASK) == owner && !c->refs)
			drop(cc, c);
		c = prev;
	}
	pthread_mutex_unlock(&cc->lock);
}

void tm_chunk_cache_free(struct tm_chunk_cache *cc)
{
	if (!cc)
		return;
	while (cc->lru)
		drop(cc, cc->lru);
	tm_chunk_mem_release(&cc->payloads);
	pthread_mutex_destroy(&cc->lock);
	pthread_cond_destroy(&cc->loaded);
	free(cc);
}
