/* Random access into gzip-compressed traces.
 *
 * The index pass decompresses a .gz trace once, front to back (tm_gz_scan), and records an
 * access point at the first deflate block boundary after every TM_GZ_SPAN bytes of output:
 * the compressed offset and bit position there, and the 32 KiB of output before it (the
 * window a deflate stream may refer back into), stored deflated. A member boundary of a
 * multi-member file, a quarter span or more after the last point, is an access point with no
 * window. Decompressing span k, the bytes
 * between points k and k + 1, then needs only that span's compressed bytes and point k's
 * window (tm_gz_inflate_span), so a read anywhere inflates at most one span, and spans
 * inflate independently on several cores.
 *
 * Points fall on deflate block boundaries, so a span is as long as the blocks in it: a file
 * written as one huge block is one huge span. Readers therefore take a span in pieces of at
 * most TM_GZ_PIECE bytes (one piece for the usual span), each inflated from the span's point
 * with what comes before it discarded: memory stays bounded, and a read deep into a huge
 * block costs the inflating of the block up to there.
 *
 * The point table holds no pointers, only integers and one blob of windows, so it can be
 * written to a cache file as it is. */
#ifndef TRACEMOUNT_GZIP_H
#define TRACEMOUNT_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/source.h"

#define TM_GZ_SPAN  (1u << 20) /* output bytes between access points, at least */
#define TM_GZ_PIECE (4u << 20) /* output bytes a reader inflates and holds at once, at most */

enum {
	TM_GZ_MEMBER = 1, /* the point starts a gzip member: its header is at `in` */
};

struct tm_gz_point {
	uint64_t out;	     /* decompressed offset */
	uint64_t in;	     /* compressed offset of the first whole byte after the point */
	uint64_t window_off; /* offset of the deflated window in tm_gz_index.windows */
	uint32_t window_len; /* its length; 0 at a member start */
	uint8_t bits;	     /* bits of byte in - 1 that belong to the point's block (0-7) */
	uint8_t flags;	     /* TM_GZ_MEMBER */
	uint16_t reserved;
};

struct tm_gz_index {
	struct tm_gz_point *points; /* n_points, then a last one at the end of the data */
	uint64_t n_points;	    /* spans */
	uint8_t *windows;
	size_t windows_len;
	uint64_t in_size;  /* compressed bytes read */
	uint64_t out_size; /* decompressed bytes that decompressed cleanly */
	/* n_points + 1 (tm_gz_index_pieces): the pieces before each span, then their total */
	uint64_t *first_piece;
};

/* Whether a file with base name `name` whose first bytes are head[0..head_len) is gzip: it
 * starts with a gzip header (1f 8b 08, no reserved flag) and either its name ends in ".gz"
 * or its head inflates. */
bool tm_gz_detect(const char *name, const uint8_t *head, size_t head_len);

/* Inflates the start of a gzip file, head[0..head_len), into out: up to cap bytes. Returns
 * the count (0 when nothing inflates). For format detection. */
size_t tm_gz_inflate_head(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap);

/* A sequential reader of the decompressed bytes of gzip file `file`, which records the
 * access points as it goes. It inflates on a thread of its own, ahead of the caller.
 * On success *out reads from offset 0 up, in order (another offset gives -ESPIPE); reading
 * ends early, short of the compressed data's end, at the first corrupt or truncated byte.
 * file must stay open until out is closed. Returns 0 or -errno. */
int tm_gz_scan_open(struct tm_source *file, struct tm_source *out);

/* Compressed bytes of the file consumed so far by a scan, for progress. */
uint64_t tm_gz_scan_position(struct tm_source *scan);

/* Ends a scan that has been read to its end: moves its point table into *out (free with
 * tm_gz_index_free). The gzip problems it met (corrupt data, truncation, trailing garbage)
 * go to the diag the index pass hands to the scan's report op. Returns 0 or -errno. */
int tm_gz_scan_finish(struct tm_source *scan, struct tm_gz_index **out);

void tm_gz_index_free(struct tm_gz_index *ix);

/* Bytes the point table occupies. */
size_t tm_gz_index_mem(const struct tm_gz_index *ix);

/* The span holding decompressed offset off (< out_size). */
uint64_t tm_gz_span_of(const struct tm_gz_index *ix, uint64_t off);

/* Numbers the pieces of the spans of a built or loaded, checked point table. Returns 0 or
 * -ENOMEM. */
int tm_gz_index_pieces(struct tm_gz_index *ix);

/* The pieces, the piece holding decompressed offset off (< out_size), and piece k's first
 * decompressed offset (k up to the number of pieces: then out_size). */
uint64_t tm_gz_n_pieces(const struct tm_gz_index *ix);
uint64_t tm_gz_piece_of(const struct tm_gz_index *ix, uint64_t off);
uint64_t tm_gz_piece_start(const struct tm_gz_index *ix, uint64_t k);

/* Decompresses piece k into out, which has room for its bytes (see tm_gz_inflate_span). */
int tm_gz_inflate_piece(struct tm_source *file, const struct tm_gz_index *ix, uint64_t k,
			uint8_t *out, char *why, size_t why_len);

/* Decompresses span k of the gzip file `file` into out, which has room for the span's
 * points[k + 1].out - points[k].out bytes. Returns 0, or -EIO when the file no longer
 * decompresses as indexed, or -errno, with the reason (zlib's message, or where the file
 * ended) in why (may be NULL). Thread-safe: no shared state. */
int tm_gz_inflate_span(struct tm_source *file, const struct tm_gz_index *ix, uint64_t k,
		       uint8_t *out, char *why, size_t why_len);

#endif
