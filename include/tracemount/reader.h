/* Reading one view of one trace at any offset.
 *
 * A reader keeps the last chunk it rendered, so sequential reads continue from memory and
 * only a jump costs a chunk's decode. One reader serves one open file; calls on it must not
 * overlap (the FUSE layer locks it). */
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
	/* the rendered chunk */
	uint64_t chunk;
	char *buf;
	size_t len, cap;
	int have;
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

/* Size of view `view` of t (building the index if needed) without opening a reader. */
int tm_view_size(struct tm_trace *t, struct tm_source *src, unsigned view, uint64_t *size);

#endif
