/* Memory for the payloads of cached chunks (chunk_cache.c).
 *
 * Each payload is a mapping of its own, in whole pages, and a freed one is kept for the next
 * payload rather than returned: decoded chunks and views' bytes come in a few sizes that change
 * from view to view, and in malloc's heap the holes they leave grew the daemon by a quarter of
 * the cache's budget (8 readers, 64 MiB: 14 MiB free in the heap, all of it resident). Mappings
 * leave no holes, and a kept one is reused whole or trimmed to size, so the daemon's memory
 * follows what the cache counts. Not thread-safe: the cache's lock guards it. */
#ifndef TRACEMOUNT_CORE_CHUNK_MEM_H
#define TRACEMOUNT_CORE_CHUNK_MEM_H

#include <stddef.h>

/* AddressSanitizer sees overruns of heap blocks only: under it, payloads come from malloc and
 * nothing is kept. */
#if defined(__SANITIZE_ADDRESS__)
#define TM_CHUNK_MEM_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TM_CHUNK_MEM_MALLOC 1
#endif
#endif

/* Bytes of freed mappings kept at most: enough for what an eviction frees just before the
 * allocation that caused it takes it back; more would be memory the cache does not count. */
#define TM_CHUNK_MEM_KEEP_MAX (2u << 20)

struct tm_chunk_mapping;

struct tm_chunk_mem {
	struct tm_chunk_mapping *kept; /* freed mappings, most recent first */
	size_t kept_bytes;
};

/* Bytes a payload of size bytes takes: what the cache counts against its budget. */
size_t tm_chunk_mem_size(size_t size);

/* A payload of size bytes, from a kept mapping when there is one; NULL when out of memory. */
void *tm_chunk_mem_get(struct tm_chunk_mem *m, size_t size);

/* Gives back a payload tm_chunk_mem_get made (NULL is ignored), kept for reuse. */
void tm_chunk_mem_put(struct tm_chunk_mem *m, void *payload);

/* Unmaps the kept mappings. */
void tm_chunk_mem_release(struct tm_chunk_mem *m);

#endif
