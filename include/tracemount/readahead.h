/* Rendering ahead of a streaming reader.
 *
 * A reader that streams a view asks for the next chunks to be rendered into the chunk cache
 * by a worker thread, so that the next read finds them there: decoding one chunk then
 * overlaps the kernel's copy of the previous one, on the machine's other core. Requests are
 * hints: when the worker is busy with another, a new one replaces it; nothing waits for them.
 * The worker starts at the first request (after a daemon has forked into the background).
 * It knows nothing of readers or traces: a request brings its own render and release. */
#ifndef TRACEMOUNT_READAHEAD_H
#define TRACEMOUNT_READAHEAD_H

#include <stdint.h>

struct tm_readahead;

/* What a request asks for: chunks first..last, rendered by render(arg, chunk) (0 or -errno;
 * an error ends the request), from last back to first; release(arg) when it is done with,
 * run or dropped. */
struct tm_readahead_job {
	int (*render)(void *arg, uint64_t chunk);
	void (*release)(void *arg);
	void *arg;
	uint64_t first, last;
};

int tm_readahead_new(struct tm_readahead **out);
/* Stops the worker, waiting for the chunk it renders, and drops the pending request. */
void tm_readahead_free(struct tm_readahead *ra);

/* Hands job over: a newer request ends the rendering of an older one after its current
 * chunk. job->release is called in every case. */
void tm_readahead_request(struct tm_readahead *ra, const struct tm_readahead_job *job);

#endif
