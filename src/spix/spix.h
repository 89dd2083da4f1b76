/* SpixTools basic-block counts (spixcounts(5), specs/003_942e4b42a75d0ead.txt): the block
 * table, its file form, its texts, the sum of several tables (sadd), and the builder that
 * derives a table from an executed instruction stream (spix/ of every instruction trace).
 *
 * A file is a header of four 32-bit words (magic, text size, text checksum, blocks), one
 * length byte per block (instructions of 4 bytes) padded to a word, then a pair of 32-bit
 * counters per block: taken and not taken for a block ending in a conditional branch, the
 * executions and 0 for another executed block, SPIX_SC_BADCNT twice for a block that cannot
 * execute. The byte order is the writer's: the magic tells it. */
#ifndef TRACEMOUNT_SPIX_SPIX_H
#define TRACEMOUNT_SPIX_SPIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemount/format.h"
#include "tracemount/util.h"

#define TM_SPIX_MAGIC	  0x62620011u
#define TM_SPIX_BADCNT	  0xffffffffu
#define TM_SPIX_HEADER	  16u
#define TM_SPIX_MAX_BLOCK 255u	       /* instructions: a length is one byte */
#define TM_SPIX_MAX_GAP	  (256u << 10) /* bytes of a gap kept as they are (see builder) */
#define TM_SPIX_MAX_RUN	  4096u	       /* instructions of a straight run (see builder) */
/* Blocks one table holds, and distinct runs the builder keeps: what bounds the working memory
 * of a spixcounts file's or an instruction trace's index pass (about 30 bytes a block, 120 a
 * run: 120 MiB at most each). Past them: -EFBIG, reported in errors.txt. */
#define TM_SPIX_MAX_BLOCKS   (1u << 22)
#define TM_SPIX_MAX_RUNS     (1u << 20)
#define TM_SPIX_CNT_OFF(nbb) (TM_SPIX_HEADER + (((uint64_t)(nbb) + 3) & ~(uint64_t)3))
/* Room for a reason tm_spix_parse or tm_spix_add gives: the longest is under 100 bytes. */
#define TM_SPIX_WHY_LEN 128

struct tm_spix_table {
	uint32_t tsize, tsum, nbb;
	bool big_endian;
	uint8_t *len;	      /* nbb lengths, in instructions */
	uint32_t (*count)[2]; /* nbb counter pairs */
	uint64_t *addr;	      /* NULL, or each block's first address (synthesized tables) */
	uint32_t cap;
};

/* Room for n blocks. Returns 0, -EFBIG past TM_SPIX_MAX_BLOCKS, or -ENOMEM. */
int tm_spix_table_reserve(struct tm_spix_table *t, uint64_t n);
void tm_spix_table_free(struct tm_spix_table *t);

/* Whether block b cannot execute: both counters SPIX_SC_BADCNT. */
static inline bool tm_spix_non_executable(const struct tm_spix_table *t, uint32_t b)
{
	return t->count[b][0] == TM_SPIX_BADCNT && t->count[b][1] == TM_SPIX_BADCNT;
}

/* Instructions block b executed: its length times its counters' sum; 0 for BADCNT. */
static inline uint64_t tm_spix_block_instructions(const struct tm_spix_table *t, uint32_t b)
{
	if (tm_spix_non_executable(t, b))
		return 0;
	return (uint64_t)t->len[b] * ((uint64_t)t->count[b][0] + t->count[b][1]);
}

/* The table's totals, as summary.txt and stats.json give them. */
struct tm_spix_totals {
	uint64_t instructions;		   /* executed, over every block */
	uint32_t executed, non_executable; /* blocks */
};

void tm_spix_totals(const struct tm_spix_table *t, struct tm_spix_totals *out);

/* Bytes of the file form of a table of nbb blocks. */
static inline uint64_t tm_spix_file_size(uint64_t nbb)
{
	return TM_SPIX_CNT_OFF(nbb) + 8 * nbb;
}

/* Reads a 32-bit word of a file of the given byte order. */
static inline uint32_t tm_spix_word(const uint8_t *p, bool big_endian)
{
	return big_endian ? tm_be32(p) : __builtin_bswap32(tm_be32(p));
}

/* A file's header: its words, in the byte order its magic tells. */
struct tm_spix_header {
	bool big_endian;
	uint32_t tsize, tsum, nbb;
};

/* Whether the len bytes at p (a file's first) open with the magic number, in either byte
 * order. Sets h->big_endian from the first byte when len >= 4, and the other fields when the
 * magic is there and len >= TM_SPIX_HEADER. The one reading of a header: the decoder, its
 * statistics, the parser and the sums of files use it. */
bool tm_spix_header(const uint8_t *p, size_t len, struct tm_spix_header *h);

/* The table's file form, in its byte order, written to f. Returns 0, or -EIO when a write
 * failed. */
int tm_spix_write(const struct tm_spix_table *t, FILE *f);

/* Parses a whole file. Returns 0, or -EBADMSG with what is wrong in why (bad magic, unexpected
 * EOF; then t holds the blocks read whole). */
int tm_spix_parse(const uint8_t *buf, size_t len, struct tm_spix_table *t, char *why,
		  size_t why_len);

/* summary.txt: the header's fields and totals, then the executed blocks by decreasing
 * instructions executed (as sdas -sb orders them) with percent and cumulative percent, and
 * each block's address when the table has them, written to f. Returns 0, -ENOMEM, or -EIO
 * when a write failed. */
int tm_spix_summary(const struct tm_spix_table *t, FILE *f);

/* blocks.txt: one line per block: index, offset in the text, length, counters ("-" for
 * BADCNT), written to f. Returns 0, or -EIO when a write failed. */
int tm_spix_blocks(const struct tm_spix_table *t, FILE *f);

/* Adds b's counters to sum's, as sadd does; the tables have the same blocks. Where sadd
 * stops, this goes on: a counter that overflows stays at 0xfffffffe, and a block that is
 * non-executable (BADCNT) in one table only takes the other's counters. Returns the number of
 * such blocks; the first is described in why (with its text offset, as sadd names it). */
uint64_t tm_spix_add(struct tm_spix_table *sum, const struct tm_spix_table *b, char *why,
		     size_t why_len);

/* Derives the table of an executed instruction stream, fed in order. */
struct tm_spix_builder;

int tm_spix_builder_new(struct tm_spix_builder **out);
/* Adds n executed instructions, in trace order (a batch of the index pass at a time). */
void tm_spix_builder_add(struct tm_spix_builder *b, const struct tm_insn *insn, size_t n);
/* What a derived table had to bend to fit the file form. */
struct tm_spix_facts {
	uint64_t instructions;	 /* executed: the table's total */
	uint64_t gaps_shortened; /* gaps over TM_SPIX_MAX_GAP kept as one non-executable word */
	uint64_t overlaps;	 /* instructions that began inside another executed one */
	uint64_t saturated;	 /* counters above 0xfffffffe, kept at that value */
};

/* The table (big-endian, checksum 0, text size at most 0xffffffff), with each block's address.
 * Returns 0, -EFBIG when the code executed passes TM_SPIX_MAX_RUNS distinct runs or
 * TM_SPIX_MAX_BLOCKS blocks, or -ENOMEM (also for an allocation that failed while adding). */
int tm_spix_builder_finish(struct tm_spix_builder *b, struct tm_spix_table *t,
			   struct tm_spix_facts *facts);
void tm_spix_builder_free(struct tm_spix_builder *b);

#endif
