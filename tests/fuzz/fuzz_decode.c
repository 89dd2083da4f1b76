/* Fuzz target for every decoder: the input's first byte picks a format of the registry, the
 * second the size of the reads, the rest is the trace (a gzip stream too, when it starts with
 * gzip's magic). Every view is read whole through the core, as the mount reads it: the bytes
 * read must add up to the view's size, and a read at the middle must give the same bytes as
 * the sequential reads. Any broken promise aborts, so the fuzzer reports it. */
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

/* Reads view v whole in reads of step bytes (a gzip input may decompress to far more than
 * memory should hold: the bytes stream through one buffer); aborts unless the reads add up to
 * the view's size and the bytes at the middle, read first, come again in order. */
static void read_whole(struct tm_context *ctx, struct tm_trace *t, struct tm_source *src,
		       unsigned v, size_t step)
{
	struct tm_reader r;
	if (tm_reader_open(&r, ctx, t, src, v) < 0)
		return; /* an index that cannot be built: reported, not served */
	uint64_t size = tm_reader_size(&r);
	uint64_t mid = size / 2;
	size_t mid_len = size - mid < 4096 ? (size_t)(size - mid) : 4096;
	uint8_t first[4096];
	uint8_t *buf = malloc(step);
	if (!buf || tm_reader_read(&r, first, mid_len, mid) != (ssize_t)mid_len)
		abort();
	uint64_t pos = 0;
	for (;;) {
		ssize_t got = tm_reader_read(&r, buf, step, pos);
		if (got < 0 || (uint64_t)got > size - pos)
			abort();
		if (!got)
			break;
		/* The part of [pos, pos + got) inside [mid, mid + mid_len). */
		uint64_t from = pos > mid ? pos : mid;
		uint64_t to =
		    pos + (uint64_t)got < mid + mid_len ? pos + (uint64_t)got : mid + mid_len;
		if (from < to && memcmp(buf + (from - pos), first + (from - mid), to - from) != 0)
			abort();
		pos += (uint64_t)got;
	}
	if (pos != size)
		abort();
	free(buf);
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
