/* A bounded LRU cache of decoded chunks, shared by every trace and every reader.
 *
 * An entry holds either a chunk's decoded records with the bytes they came from, or the bytes
 * one view renders from that chunk. Entries are keyed by (owner, index): the owner is a
 * trace's own key (trace.h's tm_trace_owner, below 2^48) for its decoded chunks and
 * tm_cache_owner(owner, view) for a view's rendered chunks. They are reference counted: an entry
 * handed out stays valid until released; only unreferenced entries are evicted. The budget counts
 * the bytes entries hold, from the moment a loader allocates them (tm_cached_chunk_malloc): room
 * is made before the allocation, so chunks being loaded count too, and the memory an eviction
 * frees is there for the allocation that caused it.
 *
 * tm_chunk_cache_load() is the one way in: it gets an entry or loads it, with one loader per
 * key. Other threads asking for a key being loaded wait for it, so a reader and the render-ahead
 * worker (readahead.c) that meet in one chunk decode it once, each going on to other chunks. */
#ifndef TRACEMOUNT_CHUNK_CACHE_H
#define TRACEMOUNT_CHUNK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

struct tm_chunk_cache;

/* A cached chunk: decoded records and the bytes they came from, or a view's bytes. */
struct tm_cached_chunk {
	struct tm_chunk chunk; /* decoded records */
	char *bytes;	       /* rendered view bytes */
	size_t len;
	/* owned by the cache */
	size_t mem; /* bytes counted against the budget */
	struct tm_chunk_cache *cache;
	uint64_t owner, index;
	unsigned refs;
	int loading;
	struct tm_cached_chunk *lru_prev, *lru_next, *hash_next;
};

/* The owner key of the chunks view `view` renders of the trace whose own key is owner. */
static inline uint64_t tm_cache_owner(uint64_t owner, unsigned view)
{
	return owner | (uint64_t)(view + 1) << 48;
}

/* Fills a new entry's payload (chunk or bytes), allocated with tm_cached_chunk_malloc or
 * tm_cached_chunk_alloc; returns 0 or -errno (what it allocated is freed with the entry). */
typedef int (*tm_chunk_loader)(void *arg, struct tm_cached_chunk *c);

/* The entry (owner, index) with a reference taken, loading it with load(arg) if absent, then
 * evicting the least recently used unreferenced entries to bring the cache within its budget.
 * Returns 0 or the loader's error (then nothing is cached and a later call retries). */
int tm_chunk_cache_load(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index,
			tm_chunk_loader load, void *arg, struct tm_cached_chunk **out);

int tm_chunk_cache_new(size_t budget, struct tm_chunk_cache **out);
void tm_chunk_cache_free(struct tm_chunk_cache *cc);

/* Whether (owner, index) is cached or being loaded; takes no reference. */
int tm_chunk_cache_contains(struct tm_chunk_cache *cc, uint64_t owner, uint64_t index);

/* Drops a reference load() took; an entry no longer referenced may then be evicted. */
void tm_chunk_cache_release(struct tm_chunk_cache *cc, struct tm_cached_chunk *c);

/* Drops every unreferenced entry of the trace whose own key is owner: its decoded and its
 * rendered chunks. */
void tm_chunk_cache_forget(struct tm_chunk_cache *cc, uint64_t owner);

/* size bytes for the payload of c, an entry being loaded, counted against the cache's budget
 * first: unreferenced entries are evicted to make room before the allocation. NULL when out of
 * memory. */
void *tm_cached_chunk_malloc(struct tm_cached_chunk *c, size_t size);

/* Gives c room for raw_len trace bytes and n_records records (tm_cached_chunk_malloc).
 * Returns 0 or -ENOMEM (what was allocated is freed with c). */
int tm_cached_chunk_alloc(struct tm_cached_chunk *c, size_t raw_len, size_t n_records,
			  size_t record_size);

#endif
