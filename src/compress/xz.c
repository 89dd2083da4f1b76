/* xz (liblzma): streams of independent blocks, so a point is a block's header, or a stream's
 * start for the first point. One walker parses the container for both the index pass and the
 * reader: stream header, blocks, index, footer, padding, and the next stream. */
#include <errno.h>
#include <inttypes.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/compress.h"
#include "scan.h"

#define INPUT_BYTES   (64u << 10)
#define XZ_HEADER_LEN 12 /* a stream's header and footer alike */

enum { XZ_STREAM = 1 }; /* a point's flag: decompression starts with a stream header */

static const uint8_t xz_magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0};

enum expect { EXPECT_STREAM, EXPECT_BLOCK, EXPECT_PADDING };

struct xz_walk {
	struct tm_source *file;
	uint8_t in[INPUT_BYTES];
	size_t in_len, in_pos;
	uint64_t in_off; /* compressed offset of in[0] */
	enum expect expect;
	uint32_t check; /* of the current stream */
	lzma_stream strm;
	bool in_block, strm_ready;
	lzma_block block;
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	char why[160]; /* what ended the data, when a step returns -EBADMSG */
};

static uint64_t consumed(const struct xz_walk *w)
{
	return w->in_off + w->in_pos;
}

static void walk_init(struct xz_walk *w, struct tm_source *file, uint64_t at, enum expect e,
		      uint32_t check)
{
	memset(w, 0, offsetof(struct xz_walk, in));
	w->in_len = w->in_pos = 0;
	w->in_off = at;
	w->expect = e;
	w->check = check;
	w->strm = (lzma_stream)LZMA_STREAM_INIT;
	w->in_block = w->strm_ready = false;
	w->why[0] = '\0';
	w->file = file;
}

static void walk_end(struct xz_walk *w)
{
	if (w->in_block)
		lzma_filters_free(w->filters, NULL);
	if (w->strm_ready)
		lzma_end(&w->strm);
	w->in_block = w->strm_ready = false;
}

/* Makes at least need bytes (need <= INPUT_BYTES) available from in_pos if the file has
 * them. Returns the bytes available, or -errno. */
static ssize_t fill(struct xz_walk *w, size_t need)
{
	size_t have = w->in_len - w->in_pos;
	if (have >= need)
		return (ssize_t)have;
	memmove(w->in, w->in + w->in_pos, have);
	w->in_off += w->in_pos;
	w->in_pos = 0;
	w->in_len = have;
	ssize_t n = tm_source_read(w->file, w->in + have, INPUT_BYTES - have, w->in_off + have);
	if (n < 0)
		return n;
	w->in_len += (size_t)n;
	return (ssize_t)w->in_len;
}

static int bad(struct xz_walk *w, const char *what)
{
	snprintf(w->why, sizeof(w->why), "xz: %s at compressed byte %" PRIu64, what, consumed(w));
	return -EBADMSG;
}

/* The most memory liblzma may take for a stream's index: what one record per 8 bytes of the
 * file needs (a block is 8 bytes at least), at most 16 Mi records. liblzma allocates for the
 * count of records an index claims before it reads them: a hostile count of a few bytes took
 * 2.6 GB (issue 42's fuzz run). */
static uint64_t index_memlimit(const struct tm_source *file)
{
	uint64_t records = file->size / 8 + 1;
	return lzma_index_memusage(1, records < (1u << 24) ? records : 1u << 24);
}

/* Reads the index that ends a stream, and its footer. */
static int skip_index(struct xz_walk *w)
{
	lzma_index *idx = NULL;
	if (lzma_index_decoder(&w->strm, &idx, index_memlimit(w->file)) != LZMA_OK)
		return -ENOMEM;
	w->strm_ready = true;
	lzma_ret ret = LZMA_OK;
	while (ret == LZMA_OK) {
		ssize_t n = fill(w, 1);
		if (n < 0)
			return (int)n;
		if (n == 0)
			return bad(w, "truncated: the data ends inside a stream's index");
		w->strm.next_in = w->in + w->in_pos;
		w->strm.avail_in = w->in_len - w->in_pos;
		ret = lzma_code(&w->strm, LZMA_RUN);
		w->in_pos = w->in_len - w->strm.avail_in;
	}
	lzma_end(&w->strm);
	w->strm_ready = false;
	if (idx)
		lzma_index_end(idx, NULL);
	if (ret != LZMA_STREAM_END)
		return bad(w, "corrupt stream index");
	ssize_t n = fill(w, XZ_HEADER_LEN);
	if (n < 0)
		return (int)n;
	lzma_stream_flags footer;
	if ((size_t)n < XZ_HEADER_LEN)
		return bad(w, "truncated: the data ends inside a stream's footer");
	if (lzma_stream_footer_decode(&footer, w->in + w->in_pos) != LZMA_OK)
		return bad(w, "corrupt stream footer");
	w->in_pos += XZ_HEADER_LEN;
	w->expect = EXPECT_PADDING;
	return 0;
}

/* Moves to the next block and starts decoding it: returns 1 with its header's offset in
 * *at, 0 at the clean end of the data, -EBADMSG (why says it) where the data stops making
 * sense, or -errno. Trailing garbage after a whole stream is an end, with why set. */
static int next_block(struct xz_walk *w, uint64_t *at)
{
	for (;;) {
		ssize_t n;
		switch (w->expect) {
		case EXPECT_STREAM: {
			if ((n = fill(w, XZ_HEADER_LEN)) < 0)
				return (int)n;
			lzma_stream_flags flags;
			if ((size_t)n < XZ_HEADER_LEN)
				return bad(w, "truncated: the data ends inside a stream header");
			if (lzma_stream_header_decode(&flags, w->in + w->in_pos) != LZMA_OK)
				return bad(w, "not a valid stream header");
			w->check = (uint32_t)flags.check;
			w->in_pos += XZ_HEADER_LEN;
			w->expect = EXPECT_BLOCK;
			break;
		}
		case EXPECT_BLOCK: {
			if ((n = fill(w, 1)) < 0)
				return (int)n;
			if (n == 0)
				return bad(w, "truncated: the data ends between blocks");
			uint8_t first = w->in[w->in_pos];
			if (first == 0) {
				int err = skip_index(w);
				if (err)
					return err;
				break;
			}
			uint32_t size = lzma_block_header_size_decode(first);
			if ((n = fill(w, size)) < 0)
				return (int)n;
			if ((size_t)n < size)
				return bad(w, "truncated: the data ends inside a block header");
			w->block = (lzma_block){.version = 1,
						.check = (lzma_check)w->check,
						.header_size = size,
						.filters = w->filters};
			if (lzma_block_header_decode(&w->block, NULL, w->in + w->in_pos) != LZMA_OK)
				return bad(w, "corrupt block header");
			*at = consumed(w);
			w->in_pos += size;
			w->in_block = true;
			w->strm = (lzma_stream)LZMA_STREAM_INIT;
			if (lzma_block_decoder(&w->strm, &w->block) != LZMA_OK)
				return bad(w, "unsupported block options");
			w->strm_ready = true;
			return 1;
		}
		case EXPECT_PADDING:
			if ((n = fill(w, 4)) < 0)
				return (int)n;
			if (n == 0)
				return 0;
			if (n >= 4 && !memcmp(w->in + w->in_pos, "\0\0\0\0", 4)) {
				w->in_pos += 4;
			} else if ((size_t)n >= sizeof(xz_magic) &&
				   !memcmp(w->in + w->in_pos, xz_magic, sizeof(xz_magic))) {
				w->expect = EXPECT_STREAM;
			} else {
				snprintf(w->why, sizeof(w->why),
					 "xz: data after the last stream at compressed byte "
					 "%" PRIu64 " ignored",
					 consumed(w));
				return 0;
			}
			break;
		}
	}
}

/* Decodes the current block into out[0..cap): *got bytes. Returns 1 at the block's end
 * (checked), 0 when out is full, -EBADMSG (why says it) or -errno. */
static int decode(struct xz_walk *w, uint8_t *out, size_t cap, size_t *got)
{
	w->strm.next_out = out;
	w->strm.avail_out = cap;
	lzma_ret ret = LZMA_OK;
	while (w->strm.avail_out) {
		ssize_t n = fill(w, 1);
		if (n < 0)
			return (int)n;
		w->strm.next_in = w->in + w->in_pos;
		w->strm.avail_in = w->in_len - w->in_pos;
		ret = lzma_code(&w->strm, n ? LZMA_RUN : LZMA_FINISH);
		w->in_pos = w->in_len - w->strm.avail_in;
		if (ret != LZMA_OK)
			break;
		if (!n)
			break;
	}
	*got = cap - w->strm.avail_out;
	if (ret == LZMA_STREAM_END) {
		walk_end(w);
		w->expect = EXPECT_BLOCK;
		return 1;
	}
	if (ret == LZMA_OK && !w->strm.avail_out)
		return 0;
	if (ret == LZMA_OK || ret == LZMA_BUF_ERROR)
		return bad(w, "truncated: the data ends inside a block");
	if (ret == LZMA_MEM_ERROR)
		return -ENOMEM;
	return bad(w, ret == LZMA_DATA_ERROR ? "corrupt data (or a failed check: the block's "
					       "bytes before it are not all right)"
					     : "unsupported or corrupt block");
}

static int xz_scan(struct tm_zscan *sc)
{
	struct xz_walk *w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	walk_init(w, sc->file, 0, EXPECT_STREAM, 0);
	int err = tm_zscan_add_point(sc, 0, 0, XZ_STREAM, 0, NULL, 0);
	uint64_t blocks = 0;
	while (!err) {
		uint64_t at;
		int r = next_block(w, &at);
		sc->in_pos = consumed(w);
		if (r <= 0) {
			err = r;
			break;
		}
		if (blocks++ && tm_zscan_since_point(sc) >= sc->span / 4)
			err = tm_zscan_add_point(sc, at, 0, 0, w->check, NULL, 0);
		for (int ended = 0; !err && !ended;) {
			uint8_t *out;
			size_t room, got = 0;
			if (tm_zscan_room(sc, &out, &room)) {
				walk_end(w);
				free(w);
				return 0; /* the reader stopped early */
			}
			ended = decode(w, out, room, &got);
			sc->in_pos = consumed(w);
			tm_zscan_commit(sc, got);
			if (ended < 0)
				err = ended;
		}
	}
	if (err == -EBADMSG || (!err && w->why[0])) {
		snprintf(sc->problem, sizeof(sc->problem), "%s", w->why);
		err = 0;
	}
	if (!err && blocks == 1 && sc->out_pos > TM_Z_PIECE)
		snprintf(sc->note, sizeof(sc->note),
			 "xz: one block: random reads decode from the start; recompress with "
			 "`xz -T0 --block-size=16MiB`");
	walk_end(w);
	free(w);
	return err;
}

/* The reader's side: a walker opened at a point. */
static int xz_open_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k, void **dec)
{
	const struct tm_zpoint *p = &ix->points[k];
	struct xz_walk *w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	walk_init(w, file, p->in, p->flags & XZ_STREAM ? EXPECT_STREAM : EXPECT_BLOCK, p->check);
	*dec = w;
	return 0;
}

static int xz_read(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
		   char *why, size_t why_len)
{
	struct xz_walk *w = dec;
	int err = 0;
	w->file = file;
	*got = 0;
	while (*got < cap) {
		uint64_t at;
		if (!w->in_block && (err = next_block(w, &at)) <= 0)
			break; /* 0: the end of the data */
		size_t n = 0;
		err = decode(w, out + *got, cap - *got, &n);
		*got += n;
		if (err < 0)
			break;
	}
	if (err >= 0)
		return 0;
	if (why)
		snprintf(why, why_len, "%s", w->why);
	return err == -EBADMSG ? -EIO : err;
}

/* The span's last block, decoded on to its end: its check is verified there. The last span
 * may end inside a block where the scan met its problem (a cut or corrupt file): a problem
 * there counts only before where the scan stopped. */
static int xz_finish(void *dec, struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
		     char *why, size_t why_len)
{
	struct xz_walk *w = dec;
	if (!w->in_block)
		return 0;
	w->file = file;
	uint8_t scratch[256];
	size_t got = 0;
	int err = -EBADMSG; /* why set in a block: the read of the span's last bytes failed */
	if (!w->why[0] && (err = decode(w, scratch, sizeof(scratch), &got)) >= 0 && got)
		err = bad(w, "more data than indexed");
	else if (err < 0 && k + 1 == ix->n_points && consumed(w) >= ix->in_size)
		err = 0;
	if (err >= 0)
		return 0;
	if (why)
		snprintf(why, why_len, "%s", w->why);
	return err == -EBADMSG ? -EIO : err;
}

static void xz_close(void *dec)
{
	walk_end(dec);
	free(dec);
}

static bool xz_detect(const char *name, const uint8_t *head, size_t head_len)
{
	if (head_len < XZ_HEADER_LEN || memcmp(head, xz_magic, sizeof(xz_magic)) != 0)
		return false;
	size_t n = strlen(name);
	lzma_stream_flags flags;
	return (n > 3 && strcmp(name + n - 3, ".xz") == 0) ||
	       lzma_stream_header_decode(&flags, head) == LZMA_OK;
}

static size_t xz_head(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&strm, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return 0;
	strm.next_in = head;
	strm.avail_in = head_len;
	strm.next_out = out;
	strm.avail_out = cap;
	/* a head cut from a longer file ends early: what decoded before is kept */
	while (strm.avail_out && strm.avail_in && lzma_code(&strm, LZMA_RUN) == LZMA_OK)
		;
	size_t n = cap - strm.avail_out;
	lzma_end(&strm);
	return n;
}

const struct tm_codec tm_codec_xz = {
    .name = "xz",
    .suffix = ".xz",
    .id = 2,
    .probe_len = 4096,
    .detect = xz_detect,
    .decompress_head = xz_head,
    .scan = xz_scan,
    .open_span = xz_open_span,
    .read = xz_read,
    .finish = xz_finish,
    .close = xz_close,
};
