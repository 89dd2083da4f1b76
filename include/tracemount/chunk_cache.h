/* A bounded LRU cache of decoded chunks, shared by every trace and every reader.
 *
 * Entries are reference counted: a chunk handed out stays valid until released, even if it
 * is evicted meanwhile. The budget counts the bytes of records and trace data held. */
#ifndef TRACEMOUNT_CHUNK_CACHE_H
#define TRACEMOUNT_CHUNK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

struct tm_chunk_cache;

/* A cached chunk: the decoded records and the bytes they came from. */
struct tm_cached_chunk {
	struct tm_chunk chunk;
	size_t mem; /* bytes counted against the budget */
	/* owned by the cache */
	uint64_t trace_uid, index;
	unsigned refs;
	struct tm_cached_chunk *lru_prev, *lru_next, *hash_next;
};

int tm_chunk_cache_new(size_t budget, struct tm_chunk_cache **out);
void tm_chunk_cache_free(struct tm_chunk_cache *cc);

/* The cached chunk, with a reference taken, or NULL. */
struct tm_cached_chunk *tm_chunk_cache_get(struct tm_chunk_cache *cc, uint64_t trace_uid,
					   uint64_t index);

/* Inserts c (allocated by tm_cached_chunk_new) and returns the entry to use, with a
 * reference taken: c, or the entry another thread inserted first (then c is freed).
 * Evicts least recently used unreferenced entries to stay within the budget. */
struct tm_cached_chunk *tm_chunk_cache_put(struct tm_chunk_cache *cc, uint64_t trace_uid,
					   uint64_t index, struct tm_cached_chunk *c);

void tm_chunk_cache_release(struct tm_chunk_cache *cc, struct tm_cached_chunk *c);

/* Drops every unreferenced chunk of a trace, as when it goes away. */
void tm_chunk_cache_forget(struct tm_chunk_cache *cc, uint64_t trace_uid);

/* Allocates an uncached chunk with room for raw_len bytes and n_records records. */
struct tm_cached_chunk *tm_cached_chunk_new(size_t raw_len, size_t n_records, size_t record_size);
void tm_cached_chunk_free(struct tm_cached_chunk *c);

/* Bytes held, and the budget. */
void tm_chunk_cache_usage(struct tm_chunk_cache *cc, size_t *used, size_t *budget);

#endif
