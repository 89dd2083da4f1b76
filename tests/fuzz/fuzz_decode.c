/* Fuzz target for every decoder: the input's first byte picks a format of the registry, the
 * rest is the trace (a gzip stream too, when it starts with gzip's magic). Every view is read
 * whole through the core, as the mount reads it, in reads of a size the input also picks; the
 * bytes read must equal the view's size, and a read at the middle must give the same bytes
 * again. Any broken promise aborts, so the fuzzer reports it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMORY (1u << 20) /* small: chunks are evicted and decoded again */

static size_t count_formats(void)
{
	size_t n = 0;
	while (tm_formats[n])
		n++;
	return n;
}

/* Reads view v whole in reads of step bytes; aborts on any inconsistency. */
static void read_whole(struct tm_context *ctx, struct tm_trace *t, struct tm_source *src,
		       unsigned v, size_t step)
{
	struct tm_reader r;
	if (tm_reader_open(&r, ctx, t, src, v) < 0)
		return; /* an index that cannot be built: reported, not served */
	uint64_t size = tm_reader_size(&r);
	if (size > (64u << 20))
		abort(); /* views of an input of at most a few MiB stay far below this */
	uint8_t *all = malloc(size + 1);
	if (!all)
		abort();
	uint64_t pos = 0;
	for (;;) {
		ssize_t got = tm_reader_read(&r, all + pos, step, pos);
		if (got < 0 || (uint64_t)got > size - pos)
			abort();
		if (!got)
			break;
		pos += (uint64_t)got;
	}
	if (pos != size)
		abort();
	if (size) {
		uint64_t mid = size / 2;
		size_t len = size - mid < 4096 ? (size_t)(size - mid) : 4096;
		uint8_t again[4096];
		if (tm_reader_read(&r, again, len, mid) != (ssize_t)len ||
		    memcmp(again, all + mid, len) != 0)
			abort();
	}
	free(all);
	tm_reader_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static size_t n_formats;
	if (!n_formats)
		n_formats = count_formats();
	if (size < 2)
		return 0;
	const struct tm_format *fmt = tm_formats[data[0] % n_formats];
	size_t step = (size_t)1 << (9 + data[1] % 12); /* 512 B to 1 MiB */
	struct mem_source src;
	struct tm_context *ctx;
	struct tm_trace *t;
	mem_source_init(&src, data + 2, size - 2);
	if (tm_context_new(MEMORY, &ctx) < 0)
		abort();
	if (tm_context_trace(ctx, "fuzz.trace", fmt, &t) < 0)
		abort();
	for (unsigned v = 0; v < t->views.n_views; v++)
		if (tm_view_exists(t, &src.src, v) > 0)
			read_whole(ctx, t, &src.src, v, step);
	tm_context_trace_put(ctx, t);
	tm_context_free(ctx);
	mem_source_free(&src);
	return 0;
}
