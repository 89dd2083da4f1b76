/* The index pass over a compressed file, shared by the codecs: one thread decompresses into
 * a ring of blocks and records access points while the index pass decodes the blocks before
 * it, on the other core. A codec's scan op is that thread's body; it writes through the
 * functions below. */
#ifndef TRACEMOUNT_COMPRESS_SCAN_H
#define TRACEMOUNT_COMPRESS_SCAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/compress.h"

#define TM_ZSCAN_INPUT (256u << 10) /* compressed bytes a codec's body reads at once */

struct tm_zscan {
	struct tm_source *file;	 /* the compressed file */
	_Atomic uint64_t in_pos; /* compressed bytes consumed, kept by the body */
	uint64_t out_pos;	 /* decompressed bytes given, kept by tm_zscan_commit */
	uint64_t span;		 /* decompressed bytes between points, at least (compress.h) */
	/* what ended the data early, or what reading the file costs, if anything: the body's */
	char problem[200];
	char note[200];		    /* a hint, not a problem (diag.h's tm_diag_hint) */
	struct tm_zscan_ring *ring; /* scan.c's own */
};

/* Room for the next decompressed bytes: *out and *room, at least 1 byte. Returns 0, or 1
 * when the reader has gone (the body then returns 0 at once). */
int tm_zscan_room(struct tm_zscan *sc, uint8_t **out, size_t *room);

/* Gives the first `made` bytes of the room last asked for to the reader. */
void tm_zscan_commit(struct tm_zscan *sc, size_t made);

/* Adds an access point at decompressed offset out_pos: compressed offset in, gzip's bits and
 * flags, the codec's check, and a window of window_len bytes (already compressed) or none.
 * Returns 0 or -ENOMEM. */
int tm_zscan_add_point(struct tm_zscan *sc, uint64_t in, unsigned bits, unsigned flags,
		       unsigned check, const uint8_t *window, size_t window_len);

/* Decompressed bytes since the last point: whether a new one is due at a place that needs
 * no window (a quarter of span) or one that does (span). */
uint64_t tm_zscan_since_point(const struct tm_zscan *sc);

#endif
