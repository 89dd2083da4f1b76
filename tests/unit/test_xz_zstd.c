/* xz and zstd access: detection, the scan's output and access points, pieces of a long span
 * (the parked decoder), many blocks and frames, streams with padding and different checks,
 * cut, corrupt, padded and empty files, and files changed after indexing. Compressed data is
 * made here with liblzma and libzstd; expectations are the original bytes. */
#include <check.h>
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "mem_source.h"
#include "zscan.h"
#include "tracemount/compress.h"

/* Appends one xz stream of data written as one block to *out (grown), with check. */
static void xz_one(const uint8_t *data, size_t len, lzma_check check, uint8_t **out,
		   size_t *out_len)
{
	size_t bound = lzma_stream_buffer_bound(len);
	*out = realloc(*out, *out_len + bound);
	ck_assert_int_eq(
	    lzma_easy_buffer_encode(1, check, NULL, data, len, *out, out_len, *out_len + bound),
	    LZMA_OK);
}

/* Appends one xz stream of data in blocks of block bytes (the threaded encoder, one thread). */
static void xz_blocks(const uint8_t *data, size_t len, size_t block, lzma_check check,
		      uint8_t **out, size_t *out_len)
{
	lzma_mt mt = {.threads = 1, .block_size = block, .preset = 1, .check = check};
	lzma_stream s = LZMA_STREAM_INIT;
	ck_assert_int_eq(lzma_stream_encoder_mt(&s, &mt), LZMA_OK);
	size_t bound = lzma_stream_buffer_bound(len) + len / block * 64 + 4096;
	*out = realloc(*out, *out_len + bound);
	s.next_in = data;
	s.avail_in = len;
	s.next_out = *out + *out_len;
	s.avail_out = bound;
	lzma_ret ret;
	while ((ret = lzma_code(&s, LZMA_FINISH)) == LZMA_OK)
		;
	ck_assert_int_eq(ret, LZMA_STREAM_END);
	*out_len += bound - s.avail_out;
	lzma_end(&s);
}

/* Appends one zstd frame of data to *out (grown), with a checksum, as the zstd tool writes. */
static void zstd_one(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len)
{
	size_t bound = ZSTD_compressBound(len);
	*out = realloc(*out, *out_len + bound);
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1)));
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
	size_t n = ZSTD_compress2(cc, *out + *out_len, bound, data, len);
	ck_assert(!ZSTD_isError(n));
	*out_len += n;
	ZSTD_freeCCtx(cc);
}

/* Appends a skippable frame of n payload bytes. */
static void zstd_skippable(size_t n, uint8_t **out, size_t *out_len)
{
	*out = realloc(*out, *out_len + 8 + n);
	uint8_t *p = *out + *out_len;
	uint32_t magic = 0x184D2A53, size = (uint32_t)n;
	for (int i = 0; i < 4; i++) {
		p[i] = (uint8_t)(magic >> 8 * i);
		p[4 + i] = (uint8_t)(size >> 8 * i);
	}
	memset(p + 8, 0xa5, n);
	*out_len += 8 + n;
}

/* Appends data as zstd frames of part bytes each, a skippable frame after the second. */
static void zstd_frames(const uint8_t *data, size_t len, size_t part, uint8_t **out,
			size_t *out_len)
{
	for (size_t at = 0, i = 0; at < len; at += part, i++) {
		zstd_one(data + at, len - at < part ? len - at : part, out, out_len);
		if (i == 1)
			zstd_skippable(1000, out, out_len);
	}
}

/* xz blocks and zstd frames are points a quarter span or more after the last. */
static uint64_t quarter_span(const struct tm_zpoint *next)
{
	(void)next;
	return TM_Z_SPAN / 4;
}

/* Every span decompresses on its own to the bytes the scan produced there; spans after the
 * first start a quarter span or more after the last point. */
static void check_spans(struct mem_source *file, const struct scanned *s)
{
	zscan_check_spans(file, s, quarter_span);
}

/* The compressed offset a report names, or -1. */
static long long report_offset(const char *report)
{
	const char *at = strstr(report, "at compressed byte ");
	return at ? atoll(at + strlen("at compressed byte ")) : -1;
}

/* Compresses data as codec c, in one block or frame (many: in blocks or frames of 100 KiB). */
static void compress(const struct tm_codec *c, const uint8_t *data, size_t len, bool many,
		     uint8_t **out, size_t *out_len)
{
	if (c == &tm_codec_xz && many)
		xz_blocks(data, len, 100 << 10, LZMA_CHECK_CRC64, out, out_len);
	else if (c == &tm_codec_xz)
		xz_one(data, len, LZMA_CHECK_CRC64, out, out_len);
	else if (many)
		zstd_frames(data, len, 100 << 10, out, out_len);
	else
		zstd_one(data, len, out, out_len);
}

static const struct tm_codec *const codecs[] = {&tm_codec_xz, &tm_codec_zstd};

/* Magic and name: detection, the probe length, the suffix, and the decompressed head. */
START_TEST(detects_by_magic_and_name)
{
	const struct tm_codec *c = codecs[_i];
	size_t len = 300000;
	uint8_t *data = zscan_data(len, 1), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, false, &z, &z_len);
	char named[64];
	snprintf(named, sizeof(named), "t.byu%s", c->suffix);
	ck_assert_ptr_eq(tm_codec_detect(named, z, z_len), c);
	ck_assert_ptr_eq(tm_codec_detect("t.byu", z, z_len), c); /* mislabelled: magic decides */
	ck_assert_ptr_eq(tm_codec_detect(named, z, 4096), c);
	ck_assert_ptr_null(tm_codec_detect(named, data, 4096)); /* no magic */
	ck_assert_ptr_null(tm_codec_detect(named, z, 3));	/* too short for a magic */
	uint8_t bad[4096];
	memcpy(bad, z, sizeof(bad));
	bad[0] ^= 0x40;
	ck_assert_ptr_null(tm_codec_detect(named, bad, sizeof(bad)));
	ck_assert_ptr_null(tm_codec_detect("t.byu", bad, sizeof(bad)));

	char stem[NAME_MAX + 1];
	ck_assert_uint_eq(tm_codec_suffix_len(named), strlen(c->suffix));
	ck_assert_str_eq(tm_codec_strip(named, stem), "t.byu");
	ck_assert_uint_eq(tm_codec_suffix_len(c->suffix), 0); /* only a suffix */
	ck_assert_str_eq(tm_codec_strip(c->suffix, stem), c->suffix);
	ck_assert_str_eq(tm_codec_strip("t.byu", stem), "t.byu");
	ck_assert_ptr_eq(tm_codec_by_id(c->id), c);

	/* zstd decodes whole blocks of up to 128 KiB: it asks for more than 4096 bytes */
	size_t want = tm_codec_probe_len(named, z, 4096);
	if (c == &tm_codec_zstd)
		ck_assert_uint_gt(want, 4096);
	else
		ck_assert_uint_eq(want, 4096);
	ck_assert_uint_ge(tm_codec_probe_max(), c->probe_len);
	ck_assert_uint_eq(tm_codec_probe_len("t.byu", data, 4096), 4096);

	uint8_t head[8192];
	size_t have = z_len < c->probe_len ? z_len : c->probe_len;
	ck_assert_uint_eq(c->decompress_head(z, have, head, sizeof(head)), sizeof(head));
	ck_assert_int_eq(memcmp(head, data, sizeof(head)), 0);
	ck_assert_uint_eq(tm_codec_head(named, z, have, head, sizeof(head)), sizeof(head));
	ck_assert_int_eq(memcmp(head, data, sizeof(head)), 0);
	size_t n = c->decompress_head(z, have / 2, head, sizeof(head)); /* a cut head */
	ck_assert_int_eq(memcmp(head, data, n), 0);
	ck_assert_uint_eq(c->decompress_head(data, 4096, head, sizeof(head)), 0);
	free(data);
	free(z);
}
END_TEST

/* Reads every piece of s in the order given and checks each against data. */
static void read_pieces(struct mem_source *file, const struct scanned *s, const uint8_t *data,
			const uint64_t *order, uint64_t n)
{
	uint8_t *buf = malloc(TM_Z_PIECE);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t p = order[i], start = tm_zindex_piece_start(s->ix, p),
			 end = tm_zindex_piece_start(s->ix, p + 1);
		char why[192] = "";
		ck_assert_msg(tm_z_decompress_piece(&file->src, s->ix, p, buf, why, sizeof(why)) ==
				  0,
			      "piece %llu: %s", (unsigned long long)p, why);
		ck_assert_int_eq(memcmp(buf, data + start, (size_t)(end - start)), 0);
	}
	free(buf);
}

/* One block (xz) or one frame (zstd) of about 9 MiB: one span of three pieces. Every piece
 * decompresses to the data's bytes in any order, repeated; and reading them in order continues
 * the decoder the previous piece parked, so it costs about one decompression of the span. */
START_TEST(one_block_is_read_in_pieces)
{
	const struct tm_codec *c = codecs[_i];
	size_t len = 9 * (1u << 20) + 12345;
	uint8_t *data = zscan_data(len, 2), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, false, &z, &z_len);
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(c, &file, 100000 - 7);
	ck_assert_uint_eq(s.len, len);
	ck_assert_int_eq(memcmp(s.out, data, len), 0);
	ck_assert_uint_eq(s.ix->n_points, 1);
	ck_assert_uint_eq(s.ix->in_size, z_len);
	ck_assert_msg(strstr(s.report, "random reads decode from the start") &&
			  strstr(s.report, c->name),
		      "%s", s.report);
	uint64_t n = tm_zindex_n_pieces(s.ix);
	ck_assert_uint_ge(n, 3);

	/* the whole span, once: the cost of a decompression */
	uint8_t *all = malloc(len);
	unsigned long before = file.reads;
	ck_assert_int_eq(tm_z_decompress_span(&file.src, s.ix, 0, all, NULL, 0), 0);
	unsigned long span_reads = file.reads - before;
	ck_assert_int_eq(memcmp(all, data, len), 0);
	free(all);

	uint64_t order[16];
	for (uint64_t i = 0; i < n; i++)
		order[i] = i;
	before = file.reads;
	read_pieces(&file, &s, data, order, n);
	unsigned long in_order = file.reads - before;
	/* from the span's start each time would read the span about n(n+1)/2n times over */
	ck_assert_msg(in_order < span_reads * 3 / 2 + 2, "in order: %lu reads; the span: %lu",
		      in_order, span_reads);

	for (uint64_t i = 0; i < n; i++)
		order[i] = n - 1 - i;
	read_pieces(&file, &s, data, order, n);
	uint64_t shuffled[] = {1, 0, 2, 2, 1, 1, 0, 0, 2};
	read_pieces(&file, &s, data, shuffled, sizeof(shuffled) / sizeof(shuffled[0]));
	read_pieces(&file, &s, data, order, n); /* repeated */
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

/* Blocks or frames of 100 KiB: several points, each a quarter span or more after the last,
 * every span decompresses on its own, and no note about random reads. */
START_TEST(many_blocks_make_many_points)
{
	const struct tm_codec *c = codecs[_i];
	size_t len = 3 * TM_Z_SPAN + 4321;
	uint8_t *data = zscan_data(len, 3), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, true, &z, &z_len);
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(c, &file, 65536);
	ck_assert_uint_eq(s.len, len);
	ck_assert_int_eq(memcmp(s.out, data, len), 0);
	ck_assert_msg(strcmp(s.report, "") == 0, "%s", s.report);
	ck_assert_uint_ge(s.ix->n_points, 4);
	ck_assert_uint_le(s.ix->n_points, 12);
	ck_assert_uint_eq(s.ix->in_size, z_len);
	for (uint64_t k = 1; k <= s.ix->n_points; k++)
		ck_assert_uint_gt(s.ix->points[k].in, s.ix->points[k - 1].in);
	check_spans(&file, &s);
	uint64_t n = tm_zindex_n_pieces(s.ix), order[64];
	ck_assert_uint_le(n, 64);
	for (uint64_t i = 0; i < n; i++)
		order[i] = (i * 5) % n; /* out of order when n is not a multiple of 5 */
	read_pieces(&file, &s, data, order, n);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

/* xz: three streams, with stream padding between them, each with its own check (CRC32,
 * SHA-256, none), the first of one block, the others of many. */
START_TEST(xz_streams_with_padding_and_checks)
{
	size_t sizes[] = {TM_Z_SPAN / 2, TM_Z_SPAN + 777, TM_Z_SPAN};
	size_t len = sizes[0] + sizes[1] + sizes[2];
	uint8_t *data = zscan_data(len, 4), *z = NULL;
	size_t z_len = 0;
	xz_one(data, sizes[0], LZMA_CHECK_CRC32, &z, &z_len);
	z = realloc(z, z_len + 8);
	memset(z + z_len, 0, 8); /* stream padding: a multiple of 4 zeros */
	z_len += 8;
	xz_blocks(data + sizes[0], sizes[1], 100 << 10, LZMA_CHECK_SHA256, &z, &z_len);
	z = realloc(z, z_len + 4);
	memset(z + z_len, 0, 4);
	z_len += 4;
	xz_blocks(data + sizes[0] + sizes[1], sizes[2], 100 << 10, LZMA_CHECK_NONE, &z, &z_len);
	z = realloc(z, z_len + 4);
	memset(z + z_len, 0, 4); /* padding at the end too */
	z_len += 4;
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(&tm_codec_xz, &file, 12345);
	ck_assert_uint_eq(s.len, len);
	ck_assert_int_eq(memcmp(s.out, data, len), 0);
	ck_assert_msg(strcmp(s.report, "") == 0, "%s", s.report);
	ck_assert_uint_ge(s.ix->n_points, 3);
	bool sha256 = false, none = false;
	for (uint64_t k = 0; k < s.ix->n_points; k++) {
		sha256 |= s.ix->points[k].check == LZMA_CHECK_SHA256;
		none |= k > 0 && s.ix->points[k].check == LZMA_CHECK_NONE;
	}
	ck_assert(sha256);
	ck_assert(none);
	check_spans(&file, &s);
	uint64_t n = tm_zindex_n_pieces(s.ix), order[64];
	for (uint64_t i = 0; i < n; i++)
		order[i] = n - 1 - i;
	read_pieces(&file, &s, data, order, n);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

/* Cut files, at lengths inside the first header, inside the data and near the end: the output
 * is a prefix of the data, the report names the codec and a compressed offset no further than
 * the cut, and what was served is served again. */
START_TEST(cut_files_give_a_prefix)
{
	const struct tm_codec *c = codecs[_i / 2];
	bool many = _i % 2;
	size_t len = 2 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 5), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, many, &z, &z_len);
	size_t cuts[] = {1, 4, 5, 11, 12, 13, 20, z_len / 3, z_len / 2, z_len - 13, z_len - 1};
	for (unsigned i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		struct mem_source file;
		mem_source_init(&file, z, cuts[i]);
		struct scanned s = zscan(c, &file, 65536);
		ck_assert_uint_le(s.len, len);
		ck_assert_int_eq(memcmp(s.out, data, s.len), 0);
		char name[16];
		snprintf(name, sizeof(name), "%s: ", c->name);
		long long at = report_offset(s.report);
		ck_assert_msg(strstr(s.report, name) && at >= 0 && at <= (long long)cuts[i],
			      "cut at %zu: %s", cuts[i], s.report);
		if (cuts[i] >= z_len / 2 && many)
			ck_assert_uint_gt(s.len, len / 4);
		check_spans(&file, &s);
		scanned_free(&s);
		mem_source_free(&file);
	}
	free(data);
	free(z);
}
END_TEST

/* Bytes flipped in the middle: the scan ends and reports the codec; it never crashes; and the
 * spans it served decompress again to the same bytes. */
START_TEST(corrupt_files_are_reported)
{
	const struct tm_codec *c = codecs[_i / 2];
	bool many = _i % 2;
	size_t len = 2 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 6), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, many, &z, &z_len);
	/* 16 bytes at 7 places, then one byte near the end: in xz's last block's check, in
	 * zstd's last frame's data */
	size_t places[9], n_places = 0;
	for (size_t at = 100; at < z_len - 40; at += z_len / 7)
		places[n_places++] = at;
	places[n_places++] = z_len - 25;
	for (size_t i = 0; i < n_places; i++) {
		size_t at = places[i], flips = i + 1 < n_places ? 16 : 1;
		uint8_t *bad = malloc(z_len);
		memcpy(bad, z, z_len);
		for (unsigned k = 0; k < flips; k++)
			bad[at + k] ^= 0x5a;
		struct mem_source file;
		mem_source_init(&file, bad, z_len);
		struct scanned s = zscan(c, &file, 65536);
		ck_assert_uint_le(s.len, len);
		ck_assert_msg(strstr(s.report, c->name) && report_offset(s.report) >= 0,
			      "flip at %zu: %s", at, s.report);
		check_spans(&file, &s); /* what was served is served again, the same */
		scanned_free(&s);
		mem_source_free(&file);
		free(bad);
	}
	free(data);
	free(z);
}
END_TEST

/* Garbage after the end: the whole data, and a line saying what follows is ignored. */
START_TEST(trailing_garbage_is_ignored)
{
	const struct tm_codec *c = codecs[_i / 2];
	bool many = _i % 2;
	size_t len = TM_Z_SPAN + 99;
	uint8_t *data = zscan_data(len, 7), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, many, &z, &z_len);
	static const char *const junks[] = {"junk\n", "x", "\0\0\0\0junk"};
	static const size_t junk_lens[] = {5, 1, 8};
	for (unsigned j = 0; j < 3; j++) {
		if (c == &tm_codec_zstd && j == 2)
			continue; /* zero padding is xz's */
		uint8_t *padded = malloc(z_len + junk_lens[j]);
		memcpy(padded, z, z_len);
		memcpy(padded + z_len, junks[j], junk_lens[j]);
		struct mem_source file;
		mem_source_init(&file, padded, z_len + junk_lens[j]);
		struct scanned s = zscan(c, &file, 65536);
		ck_assert_uint_eq(s.len, len);
		ck_assert_int_eq(memcmp(s.out, data, len), 0);
		char want[128];
		snprintf(want, sizeof(want),
			 "%s: data after the last %s at compressed byte %zu ignored", c->name,
			 c == &tm_codec_xz ? "stream" : "frame", z_len + (j == 2 ? 4 : 0));
		ck_assert_msg(strstr(s.report, want), "%s", s.report);
		check_spans(&file, &s);
		scanned_free(&s);
		mem_source_free(&file);
		free(padded);
	}
	free(data);
	free(z);
}
END_TEST

/* The compressed form of zero bytes is an empty trace with nothing to report; an empty file
 * is an empty trace with a problem. */
START_TEST(empty_inputs)
{
	const struct tm_codec *c = codecs[_i];
	uint8_t *z = NULL;
	size_t z_len = 0;
	compress(c, NULL, 0, false, &z, &z_len);
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(c, &file, 4096);
	ck_assert_uint_eq(s.len, 0);
	ck_assert_msg(strcmp(s.report, "") == 0, "%s", s.report);
	ck_assert_uint_eq(s.ix->out_size, 0);
	ck_assert_uint_eq(tm_zindex_n_pieces(s.ix), 0);
	scanned_free(&s);
	mem_source_free(&file);

	mem_source_init(&file, NULL, 0);
	s = zscan(c, &file, 4096);
	ck_assert_uint_eq(s.len, 0);
	scanned_free(&s);
	mem_source_free(&file);
	free(z);
}
END_TEST

/* A file changed after indexing: a piece gives -EIO and a reason, never other bytes. */
START_TEST(pieces_of_a_changed_file_fail)
{
	const struct tm_codec *c = codecs[_i];
	size_t len = 3 * TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 8), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, true, &z, &z_len);
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(c, &file, 65536);
	ck_assert_uint_ge(s.ix->n_points, 3);
	uint64_t last = s.ix->n_points - 1,
		 lastp = tm_zindex_piece_of(s.ix, s.ix->points[last].out);
	uint8_t *buf = malloc(TM_Z_PIECE);
	char why[192] = "";
	file.len = (size_t)s.ix->points[last].in + 10; /* the file shrank */
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, lastp, buf, why, sizeof(why)),
			 -EIO);
	ck_assert_msg(strstr(why, c->name) && strstr(why, "compressed byte"), "%s", why);
	file.len = z_len;
	/* damaged since it was indexed: the first byte of span 1's block header or frame magic */
	uint64_t p1 = tm_zindex_piece_of(s.ix, s.ix->points[1].out);
	uint8_t was = file.data[s.ix->points[1].in];
	file.data[s.ix->points[1].in] ^= 0x21;
	why[0] = '\0';
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, p1, buf, why, sizeof(why)), -EIO);
	ck_assert_msg(strstr(why, c->name) != NULL, "%s", why);
	file.data[s.ix->points[1].in] = was;
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, p1, buf, NULL, 0), 0);
	ck_assert_int_eq(
	    memcmp(buf, data + s.ix->points[1].out,
		   (size_t)(tm_zindex_piece_start(s.ix, p1 + 1) - s.ix->points[1].out)),
	    0);
	file.fail = -EIO;
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, 0, buf, NULL, 0), -EIO);
	free(buf);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

/* A check damaged since indexing: the last block's (xz) or frame's (zstd) of a span, in a file
 * of one block or frame and in a span that ends at the next point. The piece that ends the span
 * decodes to the block's or frame's end, so its check is verified and it fails, where it used to
 * return the bytes unchecked; and a span whose data was damaged just before the check fails
 * or gives the right bytes, never wrong ones. */
START_TEST(damaged_checks_fail)
{
	const struct tm_codec *c = codecs[_i / 2];
	bool many = _i % 2;
	size_t len = TM_Z_SPAN;
	uint8_t *data = zscan_data(len, 9), *z = NULL;
	size_t z_len = 0;
	compress(c, data, len, many, &z, &z_len);
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(c, &file, 65536);
	ck_assert_uint_eq(s.len, len);
	ck_assert_uint_eq(s.ix->n_points > 1, many);
	/* the last byte of the check before span 1's point, or of the file's one block or frame
	 * (xz: then an index of one record, 12 bytes, and the footer, 12) */
	size_t at = many		? (size_t)s.ix->points[1].in - 1
		    : c == &tm_codec_xz ? z_len - 25
					: z_len - 1;
	file.data[at] ^= 1;
	uint8_t *buf = malloc(len);
	char why[192] = "";
	ck_assert_int_eq(tm_z_decompress_span(&file.src, s.ix, 0, buf, why, sizeof(why)), -EIO);
	ck_assert_msg(strstr(why, c->name) != NULL, "%s", why);
	why[0] = '\0';
	uint64_t n = tm_zindex_piece_of(s.ix, s.ix->points[1].out - 1);
	for (uint64_t p = 0; p < n; p++) /* the pieces before the last are unchecked */
		ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, p, buf, NULL, 0), 0);
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, n, buf, why, sizeof(why)), -EIO);
	file.data[at] ^= 1;
	/* a byte of the data before the check damaged: the span fails or is right, never wrong */
	size_t span_len = (size_t)s.ix->points[1].out;
	for (size_t back = 4; back < 64; back++) {
		file.data[at - back] ^= 0x10;
		int err = tm_z_decompress_span(&file.src, s.ix, 0, buf, NULL, 0);
		ck_assert_msg(err == -EIO || (err == 0 && memcmp(buf, data, span_len) == 0),
			      "byte %zu damaged: %d", at - back, err);
		file.data[at - back] ^= 0x10;
	}
	check_spans(&file, &s);
	free(buf);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

/* Bytes that do not compress: xz stores them as uncompressed LZMA2 chunks and zstd as raw
 * blocks, so a byte flipped in them decodes, silently, to another byte. */
static uint8_t *noise(size_t len, uint64_t seed)
{
	uint8_t *d = malloc(len);
	for (size_t i = 0; i < len; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		d[i] = (uint8_t)(seed >> 32);
	}
	return d;
}

/* A byte damaged since indexing inside a piece that is not its span's last, in one block or
 * frame: xz without a check or with one (read only at the block's end), zstd without a
 * checksum or with one (read only at the frame's end). The piece's CRC-32 makes it an error,
 * where the bytes used to be served as they came out (issue 42). */
START_TEST(damaged_bytes_inside_a_piece_fail)
{
	const struct tm_codec *c = codecs[_i / 2];
	bool checked = _i % 2;
	size_t len = TM_Z_PIECE + TM_Z_PIECE / 2;
	uint8_t *data = noise(len, 10 + (uint64_t)_i), *z = NULL;
	size_t z_len = 0;
	if (c == &tm_codec_xz) {
		xz_one(data, len, checked ? LZMA_CHECK_CRC64 : LZMA_CHECK_NONE, &z, &z_len);
	} else if (checked) {
		zstd_one(data, len, &z, &z_len);
	} else {
		z = malloc(ZSTD_compressBound(len));
		z_len = ZSTD_compress(z, ZSTD_compressBound(len), data, len, 1);
		ck_assert(!ZSTD_isError(z_len));
	}
	struct mem_source file;
	mem_source_init(&file, z, z_len);
	struct scanned s = zscan(c, &file, 65536);
	ck_assert_uint_eq(s.len, len);
	ck_assert_uint_eq(tm_zindex_n_pieces(s.ix), 2);
	uint8_t *buf = malloc(TM_Z_PIECE);
	char why[256] = "";
	file.data[z_len / 3] ^= 0x40; /* in piece 0's bytes, a third into the data */
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, 0, buf, why, sizeof(why)), -EIO);
	ck_assert_msg(strstr(why, "CRC-32") && strstr(why, "changed since"), "%s", why);
	file.data[z_len / 3] ^= 0x40;
	ck_assert_int_eq(tm_z_decompress_piece(&file.src, s.ix, 0, buf, why, sizeof(why)), 0);
	ck_assert_int_eq(memcmp(buf, data, TM_Z_PIECE), 0);
	free(buf);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

/* A stream's index that claims a million records in three bytes, then a hundred: liblzma would
 * allocate for them all before reading one (16 MB here; the fuzzer's input asked 2.6 GB), then
 * read the hundred and find the file cut. Its memory is limited by what the file's size allows,
 * so the count alone makes the index corrupt. */
START_TEST(an_index_claiming_too_many_records_is_refused)
{
	size_t len = 4000;
	uint8_t *data = zscan_data(len, 12), *z = NULL;
	size_t z_len = 0;
	xz_one(data, len, LZMA_CHECK_CRC64, &z, &z_len);
	/* the footer's backward size: the index's length, in 4-byte units less one */
	uint32_t backward = (uint32_t)z[z_len - 8] | (uint32_t)z[z_len - 7] << 8 |
			    (uint32_t)z[z_len - 6] << 16 | (uint32_t)z[z_len - 5] << 24;
	size_t index_at = z_len - 12 - (backward + 1) * 4;
	ck_assert_uint_eq(z[index_at], 0); /* the index indicator */
	uint64_t count = 1000000;
	size_t at = index_at + 1;
	do { /* a multibyte integer, 7 bits a byte, least significant first */
		z[at++] = (uint8_t)((count & 0x7f) | (count > 0x7f ? 0x80 : 0));
		count >>= 7;
	} while (count);
	z = realloc(z, at + 200);
	for (unsigned k = 0; k < 100; k++, at += 2) /* records that parse: 16 bytes, 16 bytes */
		z[at] = z[at + 1] = 0x10;
	struct mem_source file;
	mem_source_init(&file, z, at);
	struct scanned s = zscan(&tm_codec_xz, &file, 65536);
	ck_assert_uint_eq(s.len, len);
	ck_assert_msg(strstr(s.report, "xz: corrupt stream index at compressed byte"), "%s",
		      s.report);
	ck_assert_int_ge(report_offset(s.report), (long long)index_at);
	scanned_free(&s);
	mem_source_free(&file);
	free(data);
	free(z);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xz_zstd");
	TCase *tc = tcase_create("xz_zstd");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, detects_by_magic_and_name, 0, 2);
	tcase_add_loop_test(tc, one_block_is_read_in_pieces, 0, 2);
	tcase_add_loop_test(tc, many_blocks_make_many_points, 0, 2);
	tcase_add_test(tc, xz_streams_with_padding_and_checks);
	tcase_add_loop_test(tc, cut_files_give_a_prefix, 0, 4);
	tcase_add_loop_test(tc, corrupt_files_are_reported, 0, 4);
	tcase_add_loop_test(tc, trailing_garbage_is_ignored, 0, 4);
	tcase_add_loop_test(tc, empty_inputs, 0, 2);
	tcase_add_loop_test(tc, pieces_of_a_changed_file_fail, 0, 2);
	tcase_add_loop_test(tc, damaged_checks_fail, 0, 4);
	tcase_add_loop_test(tc, damaged_bytes_inside_a_piece_fail, 0, 4);
	tcase_add_test(tc, an_index_claiming_too_many_records_is_refused);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
