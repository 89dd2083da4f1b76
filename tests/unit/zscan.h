/* Shared by the compressed-trace tests: test data, and a whole scan of a compressed file
 * kept with its output, point table and report. */
#ifndef TM_TEST_ZSCAN_H
#define TM_TEST_ZSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "mem_source.h"
#include "tracemount/compress.h"

/* len bytes, compressible but not repetitive: words drawn by a xorshift generator. */
uint8_t *zscan_data(size_t len, uint64_t seed);

struct scanned {
	uint8_t *out;
	size_t len;
	struct tm_zindex *ix;
	char *report; /* what the scan reports (errors.txt's lines) */
};

/* Scans file, in codec c, in reads of `step` bytes. */
struct scanned zscan(const struct tm_codec *c, struct mem_source *file, size_t step);
void scanned_free(struct scanned *s);

/* Every span of s decompresses on its own to the bytes the scan produced there, the point
 * table covers the output, and each span but the last is at least
 * min_len(its next point) long. */
void zscan_check_spans(struct mem_source *file, const struct scanned *s,
		       uint64_t (*min_len)(const struct tm_zpoint *next));

#endif
