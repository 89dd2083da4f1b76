#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "read_views.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

const struct tm_format *fuzz_format_of(const uint8_t *data, size_t size, size_t *used)
{
	char name[32];
	const uint8_t *nul = memchr(data, '\0', size < sizeof(name) ? size : sizeof(name));
	if (!nul)
		return NULL;
	memcpy(name, data, (size_t)(nul - data) + 1);
	*used = (size_t)(nul - data) + 1;
	return tm_format_find(name);
}

static void read_whole(const struct tm_open_trace *ot, unsigned v, uint8_t *buf, size_t step,
		       int strict)
{
	struct tm_reader r;
	if (tm_reader_open(&r, ot, v) < 0)
		return; /* an index that cannot be built: reported, not served */
	uint64_t size = tm_reader_size(&r);
	uint64_t mid = size / 2;
	size_t mid_len = size - mid < 4096 ? (size_t)(size - mid) : 4096;
	uint8_t first[4096];
	ssize_t got = tm_reader_read(&r, first, mid_len, mid);
	if (got != (ssize_t)mid_len && (strict || got > (ssize_t)mid_len))
		abort();
	if (got != (ssize_t)mid_len)
		mid_len = 0; /* lenient: nothing to compare */
	uint64_t pos = 0;
	for (;;) {
		got = tm_reader_read(&r, buf, step, pos);
		if ((got < 0 && strict) || (got > 0 && (uint64_t)got > size - pos))
			abort();
		if (got <= 0)
			break;
		/* The part of [pos, pos + got) inside [mid, mid + mid_len). */
		uint64_t from = pos > mid ? pos : mid;
		uint64_t to =
		    pos + (uint64_t)got < mid + mid_len ? pos + (uint64_t)got : mid + mid_len;
		if (from < to && memcmp(buf + (from - pos), first + (from - mid), to - from) != 0)
			abort();
		pos += (uint64_t)got;
	}
	if (strict && pos != size)
		abort();
	tm_reader_close(&r);
}

void fuzz_read_views(const struct tm_open_trace *ot, size_t step, int strict)
{
	uint8_t *buf = malloc(step);
	if (!buf)
		abort();
	for (unsigned v = 0; v < tm_trace_views(ot->trace)->n_views; v++)
		if (tm_view_exists(ot, v) > 0)
			read_whole(ot, v, buf, step, strict);
	free(buf);
}
