/* Fuzz target for every decoder: the input starts with a format's name and a NUL ("tt6\0"),
 * then a byte that picks the size of the reads; the rest is the trace (a gzip stream too, when
 * it starts with gzip's magic). Every view is read whole through the core, as the mount reads it:
 * the bytes read must add up to the view's size, and a read at the middle must give the same bytes
 * as the sequential reads; the index must pass the checks an index file's must. Any broken promise
 * aborts, so the fuzzer reports it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem_source.h"
#include "read_views.h"
#include "tracemount/context.h"
#include "tracemount/index.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMORY (1u << 20) /* small: chunks are evicted and decoded again */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used;
	const struct tm_format *fmt = fuzz_format_of(data, size, &used);
	if (!fmt || size - used < 1)
		return 0;
	data += used;
	size -= used;
	size_t step = (size_t)1 << (9 + data[0] % 12); /* 512 B to 1 MiB */
	struct mem_source src;
	struct tm_context *ctx;
	struct tm_trace *t;
	struct tm_open_trace ot;
	mem_source_init(&src, data + 1, size - 1);
	if (tm_context_new(MEMORY, &ctx) < 0)
		abort();
	if (tm_context_trace(ctx, "fuzz.trace", fmt, &t) < 0)
		abort();
	tm_trace_open(&ot, t, &src.src);
	tm_trace_put(t); /* ot holds it */
	fuzz_read_views(&ot, step, 1);
	/* what the pass builds, a later mount accepts from a file */
	if (tm_trace_index(&ot) == 0 &&
	    tm_index_check(ot.index, fmt->chunk_records, src.src.size) != NULL)
		abort();
	tm_trace_close(&ot);
	tm_context_free(ctx);
	mem_source_free(&src);
	return 0;
}
