/* A struct tm_source over a memory buffer, for tests that control what the trace bytes are,
 * when they change and when reading them fails. */
#ifndef TM_TEST_MEM_SOURCE_H
#define TM_TEST_MEM_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/source.h"

struct mem_source {
	struct tm_source src; /* first: the ops receive &src */
	uint8_t *data;	      /* owned copy; tests may change it */
	size_t len;	      /* bytes readable now; src.size keeps the size at creation */
	int fail;	      /* non-zero: every read returns it (a negative errno) */
	/* counted atomically */
	unsigned long reads, closes;
};

/* Copies len bytes of data (data may be NULL when len is 0). */
void mem_source_init(struct mem_source *m, const void *data, size_t len);
void mem_source_free(struct mem_source *m);

#endif
