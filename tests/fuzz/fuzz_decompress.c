/* Fuzz target for random access into compressed traces (src/compress): whatever the compressed
 * bytes, the index pass must never read outside its buffers, hang or crash, and every piece of
 * its point table must decompress on its own to exactly the bytes the pass served.
 *
 * Input: a byte that picks the codec (0 gzip, 1 xz, 2 zstd, modulo 3); a byte that picks the
 * size of the scan's reads; the rest is the compressed file. The file is scanned to its end
 * (tm_z_scan_open, reads in order, the report into a tm_diag, tm_z_scan_finish), then every
 * piece is decompressed with tm_z_decompress_piece in order, continuing the decoders parked
 * there, and one piece again out of order, from its span's point. A piece that fails or gives
 * other bytes than the scan's aborts, so the fuzzer reports it. A scan that serves more than
 * MAX_OUT bytes (a small input can expand a thousandfold) is closed early, unchecked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_source.h"
#include "tracemount/compress.h"
#include "tracemount/diag.h"
#include "tracemount/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OUT (6u << 20) /* more than one piece */

static const struct tm_codec *const codecs[] = {&tm_codec_gzip, &tm_codec_xz, &tm_codec_zstd};
static const size_t steps[] = {13, 4096, 65521, 1u << 20};
/* the scan's output and a piece, kept from one input to the next: allocating them for each
 * costs more than the rest under the sanitizers */
static uint8_t *out, *buf;

/* Decompresses piece p of file and checks it against the scan's output. */
static void check_piece(struct mem_source *file, const struct tm_zindex *ix, uint64_t p)
{
	uint64_t start = tm_zindex_piece_start(ix, p), end = tm_zindex_piece_start(ix, p + 1);
	char why[256] = "";
	if (end <= start || end - start > TM_Z_PIECE || end > ix->out_size) {
		fprintf(stderr, "piece %llu: bytes %llu to %llu\n", (unsigned long long)p,
			(unsigned long long)start, (unsigned long long)end);
		abort();
	}
	int err = tm_z_decompress_piece(&file->src, ix, p, buf, why, sizeof(why));
	if (err || memcmp(buf, out + start, (size_t)(end - start)) != 0) {
		fprintf(stderr, "piece %llu of %llu (span %llu): %d %s\n", (unsigned long long)p,
			(unsigned long long)tm_zindex_n_pieces(ix),
			(unsigned long long)tm_zindex_span_of_piece(ix, p), err,
			err ? why : "other bytes than the scan's");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const struct tm_codec *c = codecs[data[0] % 3];
	size_t step = steps[data[1] % (sizeof(steps) / sizeof(steps[0]))];
	struct mem_source file;
	struct tm_source scan;
	mem_source_init(&file, data + 2, size - 2);
	if (tm_z_scan_open(c, &file.src, &scan) < 0)
		abort();
	size_t len = 0;
	if (!out && (!(out = malloc(MAX_OUT + (1u << 20))) || !(buf = malloc(TM_Z_PIECE))))
		abort();
	for (;;) {
		ssize_t n = tm_source_read(&scan, out + len, step, len);
		if (n < 0)
			abort();
		len += (size_t)n;
		if ((size_t)n < step)
			break;
		if (len > MAX_OUT) { /* too long to check: the scan stops early */
			tm_source_close(&scan);
			mem_source_free(&file);
			return 0;
		}
	}
	struct tm_diag diag;
	tm_diag_init(&diag);
	scan.ops->report(&scan, &diag);
	if (tm_diag_finish(&diag) < 0)
		abort();
	tm_diag_free(&diag);
	struct tm_zindex *ix;
	if (tm_z_scan_finish(&scan, &ix) < 0)
		abort();
	tm_source_close(&scan);
	if (ix->out_size != len || ix->points[0].out != 0 || ix->points[ix->n_points].out != len)
		abort();

	uint64_t n = tm_zindex_n_pieces(ix);
	for (uint64_t p = 0; p < n; p++)
		check_piece(&file, ix, p);
	if (n)
		check_piece(&file, ix, (n - 1) / 2);
	tm_zindex_free(ix);
	mem_source_free(&file);
	return 0;
}
