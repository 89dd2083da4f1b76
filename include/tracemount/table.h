/* A table view's bytes (spixcounts' summary.txt, spix/'s files): rendered whole by the index
 * pass, kept deflated in pieces of TM_TABLE_PIECE bytes that inflate each on its own.
 *
 * The index holds the compressed pieces only; a read inflates the piece it needs through the
 * chunk cache, within the memory= budget. Rendering writes through a stdio stream that
 * deflates each piece as it fills, so no table is ever whole in memory, however large. */
#ifndef TRACEMOUNT_TABLE_H
#define TRACEMOUNT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TM_TABLE_PIECE (1u << 20)

struct tm_table {
	uint64_t len;	   /* bytes of the view */
	uint64_t n_pieces; /* len / TM_TABLE_PIECE, rounded up */
	uint64_t *ends;	   /* n_pieces + 1 offsets into z: piece k is z[ends[k], ends[k + 1]) */
	uint8_t *z;	   /* the pieces, each a zlib stream */
	/* while written */
	uint8_t *piece; /* grown as it fills: most tables are far smaller than a piece */
	size_t piece_len, piece_cap, z_cap, ends_cap;
	int err;
};

/* A stream whose bytes become t's (t zeroed by the caller), or NULL for -ENOMEM. */
FILE *tm_table_writer(struct tm_table *t);

/* Closes the writer f of t, deflating its last piece. Returns 0 or -errno (-ENOMEM). */
int tm_table_finish(struct tm_table *t, FILE *f);

/* The length of piece k. */
size_t tm_table_piece_len(const struct tm_table *t, uint64_t k);

/* Inflates piece k into out (tm_table_piece_len(t, k) bytes). Returns 0, or -EIO when the
 * piece does not inflate to its length (a damaged index file). */
int tm_table_inflate(const struct tm_table *t, uint64_t k, uint8_t *out);

/* Whether the fields of t, as read from an index file, hold together; NULL or what is wrong. */
const char *tm_table_check(const struct tm_table *t, uint64_t z_len);

/* Bytes t holds. */
size_t tm_table_mem(const struct tm_table *t);
void tm_table_free(struct tm_table *t);

#endif
