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

#include "tracemount/trace.h"

struct tm_reader {
	/* Its own open trace (a reference, ot's source), its index set unless the view is a
	 * plain trace's raw */
	struct tm_open_trace ot;
	unsigned view;
	_Atomic uint64_t next_off; /* where a streaming reader reads next: a read-ahead hint */
};

/* Prepares a reader of view `view` of the open trace ot, which it copies (ot's source must
 * outlive the reader); builds the index unless the view is a plain trace's raw. Returns 0 or
 * -errno (-ENOENT: no such view, or a per-stream view of a stream not shown); a reader that
 * failed to open holds nothing, and closing it does nothing. */
int tm_reader_open(struct tm_reader *r, const struct tm_open_trace *ot, unsigned view);
void tm_reader_close(struct tm_reader *r);

/* The view's exact size in bytes. */
uint64_t tm_reader_size(const struct tm_reader *r);

/* Copies up to size bytes from view offset off; returns the count (0 at or past the end)
 * or -errno. */
ssize_t tm_reader_read(struct tm_reader *r, void *out, size_t size, uint64_t off);

/* Makes sure the rendered bytes of chunk `chunk` of r's record view are in the chunk cache.
 * Returns 0 or -errno. */
int tm_reader_render(const struct tm_reader *r, uint64_t chunk);

/* Size of view `view` of ot (building the index, and the view's products, if needed) without
 * opening a reader. */
int tm_view_size(const struct tm_open_trace *ot, unsigned view, uint64_t *size);

/* Whether view `view` of ot exists: 1 for every view but a group view without records, a
 * per-stream view of a stream the index does not show (derive.h) and an empty view that hides
 * when empty (tm_view.hide_empty), whose answers need the index, built if needed; else 0, or
 * -errno. */
int tm_view_exists(const struct tm_open_trace *ot, unsigned view);

#endif
