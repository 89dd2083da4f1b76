/* Rendering ahead of a streaming reader.
 *
 * A reader that streams a view asks for the next chunk to be rendered into the chunk cache by
 * a worker thread, so that the next read finds it there: decoding one chunk then overlaps the
 * kernel's copy of the previous one, on the machine's other core. Requests are hints: when the
 * worker is busy with another, a new one replaces it; nothing waits for them. The worker
 * starts at the first request (after a daemon has forked into the background). */
#ifndef TRACEMOUNT_PREFETCH_H
#define TRACEMOUNT_PREFETCH_H

#include <stdint.h>

struct tm_prefetch;
struct tm_reader;

int tm_prefetch_new(struct tm_prefetch **out);
/* Stops the worker, waiting for the chunk it renders, and drops pending requests. */
void tm_prefetch_free(struct tm_prefetch *p);

/* Asks for chunks first..last of r's view to be rendered into the cache, last first. A newer
 * request ends the rendering of an older one after its current chunk. */
void tm_prefetch_request(struct tm_prefetch *p, const struct tm_reader *r, uint64_t first,
			 uint64_t last);

#endif
