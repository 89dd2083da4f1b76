/* TT6 and TT6E: what the decoder and format tables (tt6.c), the views (tt6_views.c) and the
 * statistics (tt6_stats.c) share: classes, escape codes, record flags and the decoded record.
 * Layers, so that no two files call each other: the views use none of the others (but ppc.c),
 * the statistics use the views, tt6.c uses both. */
#ifndef TRACEMOUNT_TT6_H
#define TRACEMOUNT_TT6_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plots/series.h"
#include "ppc.h"
#include "tracemount/footprint.h"
#include "tracemount/format.h"

enum tt6_class {
	TT6_COMPUTE = PPC_COMPUTE,
	TT6_FLOW = PPC_FLOW,
	TT6_MEMORY = PPC_MEMORY,
	TT6_MEMEXT = PPC_MEMEXT,
	TT6_ESCAPE,
	TT6_SYNC,
	TT6_INITIAL,
	TT6_N_CLASSES,
	TT6_NO_CLASS = 0xff, /* after a position record: the next record needs one */
};

extern const char *const tt6_classes[TT6_N_CLASSES]; /* tt6_views.c */

#define CLASS_BIT(c) (1ull << (c))
#define INSTRUCTION_BITS                                                                           \
	(CLASS_BIT(TT6_COMPUTE) | CLASS_BIT(TT6_FLOW) | CLASS_BIT(TT6_MEMORY) |                    \
	 CLASS_BIT(TT6_MEMEXT))

/* Escape codes: the spec's, and two tracemount writes into filtered and converted streams. */
enum {
	ESC_DATA_ADDRESS = 0x01,
	ESC_POSITION = 0x10,	    /* PC, instruction number high, low: applied, no record */
	ESC_DCBX_ADDRESS = 0x11,    /* the EA of the dcbx that follows */
	ESC_DCBX_NO_ADDRESS = 0x12, /* TT6E: the dcbx that follows has no address (0 written) */
	ESC_SYNC_SIGNAL = 0x20,
	ESC_SYNC_BROADCAST = 0x21,
	ESC_SYNC_WAIT = 0x30,
	ESC_SYNC_TRY_WAIT = 0x31,
};
#define POSITION_WORDS	  3
#define POSITION_BYTES	  (4 * (1 + POSITION_WORDS))
#define SYNTH_BRANCH_WORD 0x48000702u /* ba 0x700 */
#define SYNTH_BRANCH_NEXT 0x00000700u

static inline unsigned esc_code(uint32_t word)
{
	return (word >> 16) & 0x3ff;
}
static inline unsigned esc_count(uint32_t word)
{
	return word & 0xffff;
}

/* The sync kind of a code, 0-3, or -1. */
static inline int sync_kind(unsigned code)
{
	switch (code) {
	case ESC_SYNC_SIGNAL: return 0;
	case ESC_SYNC_BROADCAST: return 1;
	case ESC_SYNC_WAIT: return 2;
	case ESC_SYNC_TRY_WAIT: return 3;
	default: return -1;
	}
}

/* "signal", "broadcast", "wait", "try_wait": by sync_kind() */
#define TT6_N_SYNC_KINDS 4
extern const char *const tt6_sync_kinds[TT6_N_SYNC_KINDS];

/* Record flags, by bit. Bits B_WIDE to B_WIDE + 3 hold how many digits an instruction number
 * has beyond the NUM_WIDTH of its column, so that lines stay sized by flags. */
enum {
	B_SEEK,
	B_SYNTH,
	B_AFTER_01,
	B_AFTER_11,
	B_TWI,
	B_CACHE,
	B_DCBX_ESC,
	B_NO_EA,
	B_NO_EA_KEPT,
	B_WIDE,
};
_Static_assert(B_WIDE + 4 <= TM_FLAG_BITS, "the flags fit tm_record.flags");
enum {
	F_SEEK =
	    1
	    << B_SEEK, /* the previous record is of another class: class streams need a position */
	F_SYNTH = 1 << B_SYNTH,	      /* TT6E: part of the synthetic pair after a twi */
	F_AFTER_01 = 1 << B_AFTER_01, /* an escape 0x01 precedes: ctx_ea is its address */
	F_AFTER_11 = 1 << B_AFTER_11, /* an escape 0x11 precedes: ctx_ea is its address */
	F_TWI = 1 << B_TWI,	      /* a twi */
	F_CACHE = 1 << B_CACHE,	      /* a dcbx or icbi */
	F_DCBX_ESC = 1 << B_DCBX_ESC, /* TT6E: a dcbx whose address TT6 keeps in an escape 0x11 */
	/* a dcbx whose address the trace does not give: in TT6 one without an escape 0x01 or 0x11
	 * before it, in TT6E one after an escape 0x12 (its address word, 0, means nothing) */
	F_NO_EA = 1 << B_NO_EA,
	/* TT6E: a dcbx without an address right after an escape 0x01 or 0x11, which would lend
	 * it its address in TT6: the one whose escape 0x12 TT6 keeps */
	F_NO_EA_KEPT = 1 << B_NO_EA_KEPT,
};
#define WIDE_NUMBER 1000000000000ull /* 10^12: 13 digits */

struct tt6_record {
	struct tm_record head;
	uint32_t pc;	 /* of the instruction; for an escape, of the next one */
	uint32_t word;	 /* opcode, escape word, or the initial PC */
	uint32_t w1;	 /* next PC, EA, or the escape's first word */
	uint32_t w2;	 /* XER or rB, or the escape's second word */
	uint32_t ctx_ea; /* see F_AFTER_01, F_AFTER_11 */
	uint64_t num;	 /* instruction number; for an escape, the next instruction's */
};

static inline const struct tt6_record *tt6_rec(const struct tm_chunk *c, size_t i)
{
	return (const struct tt6_record *)tm_chunk_rec(c, i);
}

/* The bytes of a record of class cls in the trace; 0 for escapes, whose length varies. */
static inline size_t tt6_record_bytes(unsigned cls)
{
	static const uint8_t bytes[TT6_N_CLASSES] = {
	    [TT6_COMPUTE] = 4, [TT6_FLOW] = 8,	[TT6_MEMORY] = 8,
	    [TT6_MEMEXT] = 12, [TT6_SYNC] = 12, [TT6_INITIAL] = 4};
	return cls < TT6_N_CLASSES ? bytes[cls] : 0;
}

#define NUM_WIDTH 12 /* the instruction number column of dump.txt and sync.txt */

/* Writers of the words tracemount's TT6 and TT6E streams hold (class streams, conversions from
 * TT6, TT6E and FULL); each returns the end of what it wrote. */
static inline char *tt6_put_word(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
	return p + 4;
}

/* A position record (escape 0x10): the next record is at pc and instruction number num. */
static inline char *tt6_put_position(char *p, uint32_t pc, uint64_t num)
{
	p = tt6_put_word(p, ESC_POSITION << 16 | POSITION_WORDS);
	p = tt6_put_word(p, pc);
	p = tt6_put_word(p, (uint32_t)(num >> 32));
	return tt6_put_word(p, (uint32_t)num);
}

/* TT6E's synthetic pair after the twi at twi_pc: ba 0x700, then rfi back to twi_pc + 4. */
static inline char *tt6_put_synthetic_pair(char *p, uint32_t twi_pc)
{
	p = tt6_put_word(p, SYNTH_BRANCH_WORD);
	p = tt6_put_word(p, SYNTH_BRANCH_NEXT);
	p = tt6_put_word(p, PPC_RFI_WORD);
	return tt6_put_word(p, twi_pc + 4);
}

/* Render ops and views (tt6_views.c). tt6_din_ops also serve FULL, whose records begin with
 * a struct tt6_record. */
extern const struct tm_render_ops tt6_dump_ops, tt6_stream_ops, tt6e_stream_ops, tt6_din_ops;

/* A record's dump.txt line without its newline, and its length; raw: the record's bytes. */
char *tt6_put_line(char *out, const struct tt6_record *r, const uint8_t *raw);

/* The instruction a TT6, TT6E or FULL record executed, for spix/ (tm_format.instruction). */
bool tt6_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out);
/* The memory a TT6, TT6E or FULL record touches, for plots/ (tm_format.accesses). */
unsigned tt6_accesses(const struct tm_chunk *c, size_t i, struct tm_access *out);
size_t tt6_line_len(const struct tt6_record *r);
#define TT6_N_EXTRA_VIEWS 3
extern const struct tm_view_desc tt6_extra_views[TT6_N_EXTRA_VIEWS],
    tt6e_extra_views[TT6_N_EXTRA_VIEWS];

/* Statistics (tt6_stats.c); the state is here for its size. */
#define TT6_SIZE_BINS 256

struct tt6_stats {
	uint64_t bins[1u << 16]; /* instructions by ppc_bin_of */
	uint64_t loads[TT6_SIZE_BINS], stores[TT6_SIZE_BINS];
	uint64_t escape_codes[1024];
	uint64_t sync[TT6_N_SYNC_KINDS];
	uint64_t cache_ops, taken, not_taken, unconditional, twi_pairs;
	uint64_t din_reads, din_writes; /* convert/NAME.din's data lines */
	uint64_t no_address;		/* dcbx without an address (F_NO_EA) */
	uint32_t initial_pc;
	int has_initial;
	uint64_t last_data_line;
	struct tm_footprint pcs;  /* PC >> 2 */
	struct tm_footprint data; /* EA >> 6 */
};

/* The data lines convert/NAME.din gives a record, and their label ('0' read, '1' write): one
 * per word a multi-word access (lmw, stmw, lswi, stswi, lswx, stswx) moves, one for a
 * cache-block operation with its address; 0 for no data access. */
unsigned tt6_din_refs(const struct tt6_record *r, char *label);

int tt6_stats_init(void *stats);
void tt6_stats_update(void *stats, const struct tm_chunk *c);
/* The keys of the instruction statistics, which FULL shares (all but escape_codes,
 * sync_events and twi_pairs). */
int tt6_stats_common(struct tt6_stats *s, struct json_object *obj, struct tm_diag *diag);
int tt6_stats_finish(void *stats, struct json_object *obj, struct tm_diag *diag);
int tt6e_stats_finish(void *stats, struct json_object *obj, struct tm_diag *diag);
void tt6_stats_free(void *stats);

/* The statistics of a TT6 or TT6E trace: FULL's (struct tt6_stats, first, so that
 * tt6_stats_finish takes it), and plots/sync.svg's counts (tt6_plots.c). */
struct tt6_trace_stats {
	struct tt6_stats s;
	struct tm_series sync; /* sync records by kind (sync_kind), over the records */
};

int tt6_trace_stats_init(void *stats);
void tt6_trace_stats_update(void *stats, const struct tm_chunk *c);
void tt6_trace_stats_free(void *stats);
#define TT6_N_TABLE_VIEWS 1
extern const char *const tt6_table_views[TT6_N_TABLE_VIEWS];
int tt6_tables_finish(void *stats, FILE *const *out);
int tt6e_tables_finish(void *stats, FILE *const *out);

#endif
