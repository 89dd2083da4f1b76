/* Payload memory of cached chunks: a mapping each, freed ones kept for reuse (chunk_mem.h). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chunk_mem.h"

/* The head of a mapping; the payload follows, aligned for any record. */
struct tm_chunk_mapping {
	size_t size; /* of the whole mapping */
	struct tm_chunk_mapping *next;
	max_align_t align[];
};

#define HEAD sizeof(struct tm_chunk_mapping)

size_t tm_chunk_mem_size(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (size > SIZE_MAX - HEAD - page)
		return SIZE_MAX;
	return (size + HEAD + page - 1) / page * page;
}

#ifdef TM_CHUNK_MEM_MALLOC
void *tm_chunk_mem_get(struct tm_chunk_mem *m, size_t size)
{
	(void)m;
	return malloc(size ? size : 1);
}

void tm_chunk_mem_put(struct tm_chunk_mem *m, void *payload)
{
	(void)m;
	free(payload);
}
#else
static void *payload_of(struct tm_chunk_mapping *map)
{
	return map + 1;
}

/* Whether a mapping of a bytes fits size better than one of b: one as large beats a smaller one;
 * of two as large, the smaller (less to trim); of two smaller, the larger (less to grow). */
static bool fits_better(size_t a, size_t b, size_t size)
{
	if ((a >= size) != (b >= size))
		return a >= size;
	return a >= size ? a < b : a > b;
}

/* The kept mapping that fits size best, unlinked; NULL when none is kept. */
static struct tm_chunk_mapping *take_kept(struct tm_chunk_mem *m, size_t size)
{
	struct tm_chunk_mapping **best = NULL;
	for (struct tm_chunk_mapping **p = &m->kept; *p; p = &(*p)->next)
		if (!best || fits_better((*p)->size, (*best)->size, size))
			best = p;
	if (!best)
		return NULL;
	struct tm_chunk_mapping *map = *best;
	*best = map->next;
	m->kept_bytes -= map->size;
	return map;
}

void *tm_chunk_mem_get(struct tm_chunk_mem *m, size_t size)
{
	size_t want = tm_chunk_mem_size(size);
	if (want == SIZE_MAX)
		return NULL;
	struct tm_chunk_mapping *map = take_kept(m, want);
	if (map && map->size != want) { /* trimmed, or grown where it is or elsewhere */
		void *moved = mremap(map, map->size, want, MREMAP_MAYMOVE);
		if (moved == MAP_FAILED) {
			munmap(map, map->size);
			map = NULL;
		} else {
			map = moved;
		}
	}
	if (!map) {
		map = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			return NULL;
	}
	map->size = want;
	return payload_of(map);
}

void tm_chunk_mem_put(struct tm_chunk_mem *m, void *payload)
{
	if (!payload)
		return;
	struct tm_chunk_mapping *map = (struct tm_chunk_mapping *)payload - 1;
	map->next = m->kept;
	m->kept = map;
	m->kept_bytes += map->size;
	while (m->kept_bytes > TM_CHUNK_MEM_KEEP_MAX) { /* the oldest go */
		struct tm_chunk_mapping **last = &m->kept;
		while ((*last)->next)
			last = &(*last)->next;
		struct tm_chunk_mapping *old = *last;
		*last = NULL;
		m->kept_bytes -= old->size;
		munmap(old, old->size);
	}
}

#endif

void tm_chunk_mem_release(struct tm_chunk_mem *m)
{
	while (m->kept) {
		struct tm_chunk_mapping *map = m->kept;
		m->kept = map->next;
		munmap(map, map->size);
	}
	m->kept_bytes = 0;
}
