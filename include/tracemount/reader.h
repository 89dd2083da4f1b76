/* Reading one view of one trace at any offset.
 *
 * A read finds its chunk through the index and copies from that chunk's rendered bytes,
 * which the chunk cache keeps: sequential reads continue from memory, and only a jump costs a
 * chunk's decode. Reads of one open file may run in parallel: a reader's only mutable state is
 * a hint, the offset where a streaming reader goes next, from which the context's read-ahead
 * renders the next chunk on another core while the current one is copied. */
#ifndef TRACEMOUNT_READER_H
#define TRACEMOUNT_READER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tm_context;
struct tm_trace;
struct tm_source;
struct tm_index;

struct tm_reader {
	struct tm_context *ctx;
	struct tm_trace *trace;
	struct tm_source *src;
	const struct tm_index *index; /* NULL for raw */
	unsigned view;
	_Atomic uint64_t next_off; /* where a streaming reader reads next: a read-ahead hint */
};

/* Prepares a reader of view `view` of t; builds the index unless the view is raw. */
int tm_reader_open(struct tm_reader *r, struct tm_context *ctx, struct tm_trace *t,
		   struct tm_source *src, unsigned view);
void tm_reader_close(struct tm_reader *r);

/* The view's exact size in bytes. */
uint64_t tm_reader_size(const struct tm_reader *r);

/* Copies up to size bytes from view offset off; returns the count (0 at or past the end)
 * or -errno. */
ssize_t tm_reader_read(struct tm_reader *r, void *out, size_t size, uint64_t off);

/* Makes sure the rendered bytes of chunk `chunk` of r's record view are in the chunk cache.
 * Returns 0 or -errno. */
int tm_reader_render(const struct tm_reader *r, uint64_t chunk);

/* Size of view `view` of t (building the index if needed) without opening a reader. */
int tm_view_size(struct tm_trace *t, struct tm_source *src, unsigned view, uint64_t *size);

/* Whether view `view` of t exists: 1 for every view but a group view without records (whose
 * answer needs the index, built if needed), else 0, or -errno. */
int tm_view_exists(struct tm_trace *t, struct tm_source *src, unsigned view);

#endif
