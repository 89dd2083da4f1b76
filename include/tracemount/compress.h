/* Random access into compressed traces: gzip, xz and zstd.
 *
 * The index pass decompresses a compressed trace once, front to back (tm_z_scan_open), and
 * records access points: places from which decompression can start. Decompressing span k,
 * the bytes between points k and k + 1, then needs only that span's compressed bytes and
 * what point k holds, so a read anywhere decompresses at most one span, and spans decompress
 * independently on several cores. Where the points fall is the codec's:
 *   - gzip: at the first deflate block boundary after every TM_Z_SPAN bytes of output, with
 *     the compressed offset, the bit position there and the 32 KiB of output before it (the
 *     window a deflate stream may refer back into), stored deflated; and at a member start a
 *     quarter span or more after the last point, with no window;
 *   - xz: at a block's header, a quarter span or more after the last point (xz -T0 and pixz
 *     write blocks of a few MiB; plain xz writes one block, and so one span);
 *   - zstd: at a frame's start, likewise (zstd -T0, pzstd and the seekable format write many
 *     frames; plain zstd writes one).
 *
 * A span is as long as the blocks in it: a file written as one block is one span. Readers
 * therefore take a span in pieces of at most TM_Z_PIECE bytes, each decompressed from the
 * span's point with what comes before it discarded: memory stays bounded, and a read deep
 * into a long span costs decompressing the span up to there. A reader that goes on to the
 * next piece continues the decoder the last piece left (tm_z_decompress_piece keeps a few),
 * so reading a one-block file from start to end decompresses it once.
 *
 * The index pass also records a CRC-32 of every piece's decompressed bytes, and every piece
 * decompressed later is checked against it before it is served: bytes damaged since the pass
 * (a file rewritten with its size and time kept) are an error, never data. gzip's own check
 * covers a member only when it is read from its start to its end, xz's a block read to its
 * end, and zstd's checksum is optional: a piece's CRC covers what they leave out.
 *
 * The point table holds no pointers, only integers, one blob of windows and one array of
 * CRCs, so it can be written to a cache file as it is. */
#ifndef TRACEMOUNT_COMPRESS_H
#define TRACEMOUNT_COMPRESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracemount/log.h"
#include "tracemount/source.h"

#define TM_Z_SPAN  (1u << 20) /* output bytes between access points, at least */
#define TM_Z_PIECE (4u << 20) /* output bytes a reader decompresses and holds at once, at most */
/* An archive's span (archive.h): its points' windows are 0.14% of a binary trace's bytes (1.4%
 * at TM_Z_SPAN), and a read decompresses 8 MiB on average before its piece */
#define TM_Z_ARCHIVE_SPAN (16u << 20)

struct tm_codec;
struct tm_zscan; /* src/compress/scan.h */

struct tm_zpoint {
	uint64_t out;	     /* decompressed offset */
	uint64_t in;	     /* compressed offset of the first whole byte after the point */
	uint64_t window_off; /* offset of the point's window in tm_zindex.windows */
	uint32_t window_len; /* its length; 0: none */
	uint8_t bits;	     /* gzip: bits of byte in - 1 that belong to the point's block (0-7) */
	uint8_t flags;	/* the codec's (gzip: TM_GZ_MEMBER); the end point's: TM_Z_ENDS_EARLY */
	uint16_t check; /* xz: the stream's check type */
};

/* The end point's flag: the data ends early (cut, corrupt, or followed by garbage), where
 * the index pass's problem says. */
enum { TM_Z_ENDS_EARLY = 0x80 };

struct tm_zindex {
	const struct tm_codec *codec;
	struct tm_zpoint *points; /* n_points, then a last one at the end of the data */
	uint64_t n_points;	  /* spans */
	uint8_t *windows;
	size_t windows_len;
	/* the CRC-32 of each piece's decompressed bytes, in piece order (tm_zindex_pieces) */
	uint32_t *piece_crcs;
	uint64_t n_piece_crcs;
	uint64_t in_size;  /* compressed bytes read */
	uint64_t out_size; /* decompressed bytes that decompressed cleanly */
	/* n_points + 1 (tm_zindex_pieces): the pieces before each span, then their total */
	uint64_t *first_piece;
	uint64_t serial; /* tells this table from any other in the process (tm_zindex_pieces) */
};

/* A compression format: a table of operations, registered in tm_codecs[] (codecs.c). */
struct tm_codec {
	const char *name;   /* "gzip", as errors.txt and stats.json say it */
	const char *suffix; /* ".gz": a trace's name without it names the trace */
	unsigned id;	    /* in index files: never reused */
	/* Compressed bytes detection reads: enough for decompress_head to give a format's
	 * head (zstd decodes whole blocks of up to 128 KiB). */
	size_t probe_len;
	/* Whether a file of base name `name` starting with head[0..head_len) is in this codec:
	 * its magic, and its name's suffix or a head that decompresses. */
	bool (*detect)(const char *name, const uint8_t *head, size_t head_len);
	/* Decompresses the start of a file, head[0..head_len), into out: up to cap bytes.
	 * Returns the count (0 when nothing decompresses). */
	size_t (*decompress_head)(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap);
	/* The index pass's body, run on the scan's thread (scan.h): decompresses the file from
	 * its start into the scan's ring and adds the access points. Returns 0 (the problems
	 * that ended the data early are the scan's `problem`) or -errno. */
	int (*scan)(struct tm_zscan *sc);
	/* Opens a decoder of span k of file standing at the span's start, its point, into *dec.
	 * Returns 0 or -errno. */
	int (*open_span)(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			 void **dec);
	/* Decompresses the decoder's next bytes into out[0..cap): *got of them, fewer than cap
	 * only where the data ends or with an error. file holds the same bytes as the one the
	 * decoder was opened on, perhaps through another handle. Returns 0, or -EIO when the
	 * file no longer decompresses as indexed, with the reason in why (may be NULL), or
	 * -errno. Thread-safe for distinct decoders. */
	int (*read)(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
		    char *why, size_t why_len);
	/* Verifies what the codec can once a decoder has given the last byte of span k (xz:
	 * decodes on to the end of the span's last block, where its check is, so that bytes
	 * damaged since the index pass are not served unchecked). Returns 0, or -EIO with the
	 * reason in why, or -errno. Optional. */
	int (*finish)(void *dec, struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
		      char *why, size_t why_len);
	void (*close)(void *dec);
};

/* NULL-terminated list of every codec. */
extern const struct tm_codec *const tm_codecs[];
extern const struct tm_codec tm_codec_gzip, tm_codec_xz, tm_codec_zstd;

/* The codec of a file of base name `name` whose first bytes are head[0..head_len), or NULL
 * for an uncompressed one. */
const struct tm_codec *tm_codec_detect(const char *name, const uint8_t *head, size_t head_len);

const struct tm_codec *tm_codec_by_id(unsigned id);

/* Bytes of name's codec suffix (".gz", ".xz", ".zst"), or 0; a name that is only a suffix
 * has none. */
size_t tm_codec_suffix_len(const char *name);

/* name without its codec suffix, in stem when there is one to take off. */
const char *tm_codec_strip(const char *name, char stem[NAME_MAX + 1]);

/* The most compressed bytes any codec's detection reads (probe_len). */
size_t tm_codec_probe_max(void);

/* Bytes of the file detection should read, given the first head_len bytes of it: head_len
 * unless they start a codec's data that needs more. */
size_t tm_codec_probe_len(const char *name, const uint8_t *head, size_t head_len);

/* Reads the head of the open file fd of base name `name` for detection into *head (free
 * it): TM_PROBE_HEAD_LEN bytes, or more for a codec that needs them (probe_len). Returns the
 * count or -errno. */
ssize_t tm_probe_head(int fd, const char *name, uint8_t **head);

/* Decompresses the head of a compressed file for detection: returns the count written to
 * out (up to cap), or head_len after copying an uncompressed head. */
size_t tm_codec_head(const char *name, const uint8_t *head, size_t head_len, uint8_t *out,
		     size_t cap);

/* A sequential reader of the decompressed bytes of file `file` in codec c, which records the
 * access points as it goes. It decompresses on a thread of its own, ahead of the caller.
 * On success *out reads from offset 0 up, in order (another offset gives -ESPIPE); reading
 * ends early, short of the compressed data's end, at the first corrupt or truncated byte.
 * file must stay open until out is closed. Returns 0 or -errno. */
int tm_z_scan_open(const struct tm_codec *c, struct tm_source *file, struct tm_source *out);

/* The same, with access points at least span decompressed bytes apart (TM_Z_SPAN above) where
 * they need a window, span / 4 where they need none: an archive, read a member at a time, takes
 * fewer, and keeps a smaller index (TM_Z_ARCHIVE_SPAN). */
int tm_z_scan_open_spaced(const struct tm_codec *c, struct tm_source *file, uint64_t span,
			  struct tm_source *out);

/* Compressed bytes of the file consumed so far by a scan, for progress. */
uint64_t tm_z_scan_position(struct tm_source *scan);

/* Ends a scan that has been read to its end: moves its point table into *out (free with
 * tm_zindex_free). The problems it met (corrupt data, truncation, trailing garbage, a long
 * span's cost) go to the diag the index pass hands to the scan's report op. Returns 0 or
 * -errno. */
int tm_z_scan_finish(struct tm_source *scan, struct tm_zindex **out);

void tm_zindex_free(struct tm_zindex *ix);

/* NULL when a point table read from a file is sound for a compressed file of file_size bytes;
 * else why not. */
const char *tm_zindex_check(const struct tm_zindex *z, uint64_t file_size);

/* Bytes the point table occupies. */
size_t tm_zindex_mem(const struct tm_zindex *ix);

/* The span holding decompressed offset off (< out_size). */
uint64_t tm_zindex_span_of(const struct tm_zindex *ix, uint64_t off);

/* Numbers the pieces of the spans of a built or loaded, checked point table, and gives it
 * its serial. Returns 0 or -ENOMEM. */
int tm_zindex_pieces(struct tm_zindex *ix);

/* The pieces, the piece holding decompressed offset off (< out_size), and piece k's first
 * decompressed offset (k up to the number of pieces: then out_size). */
uint64_t tm_zindex_n_pieces(const struct tm_zindex *ix);
uint64_t tm_zindex_piece_of(const struct tm_zindex *ix, uint64_t off);
uint64_t tm_zindex_piece_start(const struct tm_zindex *ix, uint64_t k);

/* The span holding piece k. */
uint64_t tm_zindex_span_of_piece(const struct tm_zindex *ix, uint64_t k);

/* Decompresses piece k of file, whose point table is ix, into out, which has room for its
 * bytes, continuing a decoder the previous piece of its span left when there is one, and
 * checks the bytes against the piece's CRC-32. Returns 0, or -EIO when the file no longer
 * decompresses as indexed (its bytes changed since the index pass), or -errno, with the
 * reason in why (may be NULL). Thread-safe. */
int tm_z_decompress_piece(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			  uint8_t *out, char *why, size_t why_len);

/* Decompresses span k whole (points[k + 1].out - points[k].out bytes) into out, as above,
 * each of its pieces checked. */
int tm_z_decompress_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			 uint8_t *out, char *why, size_t why_len);

/* Adds line to what a scan reports, before its own problems: why this pass runs, for one
 * that replaces an index that no longer matched the file. */
void tm_z_scan_say(struct tm_source *scan, const char *line);

/* A compressed file's decompressed bytes read through a chunk cache (chunk_cache.h), whose
 * entries under owner are its pieces: what compressed traces and archives share. */
struct tm_chunk_cache;
struct tm_cached_chunk;
struct tm_zcached {
	struct tm_chunk_cache *cache;
	uint64_t owner;		   /* the cache's key of the file's pieces */
	struct tm_source *file;	   /* the compressed file */
	const struct tm_zindex *z; /* its point table, with its pieces numbered */
	tm_log_fn *log;		   /* where a piece that no longer decompresses is said */
	const char *path;	   /* the file's, for that line */
	/* called, when not NULL, with arg, the piece's offset and the reason, when a piece no
	 * longer decompresses as indexed: the file changed since its index was made */
	void (*changed)(void *arg, uint64_t off, const char *why);
	void *arg;
};

/* Piece k, decompressed on a miss. Returns 0 or -errno; release with
 * tm_chunk_cache_release. */
int tm_zcached_piece(const struct tm_zcached *zc, uint64_t k, struct tm_cached_chunk **out);

/* Reads len decompressed bytes at off. Returns the count (short only at the end) or -errno. */
ssize_t tm_zcached_read(const struct tm_zcached *zc, void *buf, size_t len, uint64_t off);

/* gzip's own: whether head starts a gzip member (1f 8b 08, no reserved flag) and either the
 * name ends in ".gz" or the head inflates; and the start of its data inflated. */
enum {
	TM_GZ_MEMBER = 1, /* a gzip point starts a member: its header is at `in` */
};
bool tm_gz_detect(const char *name, const uint8_t *head, size_t head_len);
size_t tm_gz_inflate_head(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap);

#endif
