/* Penn CIS501 x86 micro-op text traces: what the decoder (cis501.c), the views
 * (cis501_views.c) and the statistics (cis501_stats.c) share. */
#ifndef TRACEMOUNT_CIS501_H
#define TRACEMOUNT_CIS501_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracemount/footprint.h"
#include "tracemount/format.h"
#include "tracemount/names.h"

#define CIS501_FIELDS	14
#define CIS501_MAX_LINE 4096 /* bytes before the newline; a longer line is skipped */

/* Exclusive classes: the family of the macro opcode (field 13). */
enum cis501_family {
	FAM_MOVE,
	FAM_ARITH,
	FAM_MULDIV,
	FAM_LOGIC,
	FAM_SHIFT,
	FAM_COMPARE,
	FAM_COND_BRANCH,
	FAM_JUMP,
	FAM_CALL,
	FAM_RET,
	FAM_STACK,
	FAM_STRING,
	FAM_FLOAT_SIMD,
	FAM_NOP,
	FAM_SYNC,
	FAM_SYSTEM,
	FAM_OTHER,
	CIS501_N_FAMILIES
};

extern const char *const cis501_families[CIS501_N_FAMILIES];

/* Record flags, by bit. The first CIS501_N_TAGS are the tags (overlapping classes), named by
 * cis501_tags; the others are private. */
enum {
	B_LOAD,	       /* Ld/St 'L' */
	B_STORE,       /* Ld/St 'S' */
	B_BRANCH,      /* Branch 'T' or 'N' */
	B_TAKEN,       /* Branch 'T' */
	B_NOT_TAKEN,   /* Branch 'N' */
	B_FLAGS_READ,  /* Flags 'R' */
	B_FLAGS_WRITE, /* Flags 'W' */
	CIS501_N_TAGS,
	B_CRLF = CIS501_N_TAGS, /* the line ended in CR LF */
	CIS501_FLAG_BITS
};
enum {
	F_LOAD = 1 << B_LOAD,
	F_STORE = 1 << B_STORE,
	F_BRANCH = 1 << B_BRANCH,
	F_TAKEN = 1 << B_TAKEN,
	F_NOT_TAKEN = 1 << B_NOT_TAKEN,
	F_FLAGS_READ = 1 << B_FLAGS_READ,
	F_FLAGS_WRITE = 1 << B_FLAGS_WRITE,
	F_CRLF = 1 << B_CRLF,
};

extern const char *const cis501_tags[CIS501_N_TAGS];

/* One micro-op: one well-formed line. head.raw_rel/raw_len cover the line and its newline.
 * The opcode names stay in the line: offsets from its first byte. */
struct cis501_record {
	struct tm_record head;
	int32_t uop;
	uint64_t pc, addr, fallthrough, target;
	int64_t imm;
	uint64_t macro; /* macro-op number: lines with Uop 1 so far, this one included */
	int32_t src1, src2, dest;
	uint16_t macro_off, macro_len, micro_off, micro_len;
	uint16_t dump_len; /* bytes of its dump.txt line, worked out while parsing */
	uint16_t pad;
};

static inline const struct cis501_record *cis501_rec(const struct tm_chunk *c, size_t i)
{
	return (const struct cis501_record *)tm_chunk_rec(c, i);
}

/* Render ops and views (cis501_views.c). */
extern const struct tm_render_ops cis501_dump_ops;
#define CIS501_N_EXTRA_VIEWS 1
extern const struct tm_view_desc cis501_extra_views[CIS501_N_EXTRA_VIEWS];

/* Statistics (cis501_stats.c). */
#define CIS501_UOP_BINS	  64 /* uops_per_macro: 1..63 exactly, then "64+" */
#define CIS501_TOP_NAMES  10
#define CIS501_MAX_NAMES  4096	     /* distinct opcode names counted, per table */
#define CIS501_MAX_PCS	  (1u << 24) /* slots of the PC set: half as many PCs counted exactly */
#define CIS501_MAX_BLOCKS 16384 /* footprint blocks of 4 KiB (2 MiB of addresses each): 64 MiB */

struct cis501_pcs {
	uint64_t *slots; /* 0: empty; PC 0 is has_zero */
	size_t n_slots, n;
	bool has_zero, full;
	int err;
};

struct cis501_stats {
	uint64_t flag_hist[1u << CIS501_FLAG_BITS]; /* records by their flags */
	uint64_t records, macro_ops, before_first;
	uint64_t uops[CIS501_UOP_BINS + 1]; /* macro-ops by micro-op count */
	uint64_t cur_uops;		    /* micro-ops of the macro-op in progress */
	bool in_macro;
	uint64_t pc_min, pc_max, last_pc;
	uint64_t addr_min, addr_max, last_line;
	uint64_t data_refs;
	bool data_capped;
	struct cis501_pcs pcs;
	struct tm_footprint data; /* addr >> 6 of loads and stores */
	struct tm_names macros, micros;
};

int cis501_stats_init(void *stats);
void cis501_stats_update(void *stats, const struct tm_chunk *c);
int cis501_stats_finish(void *stats, struct json_object *obj, struct tm_diag *diag);
void cis501_stats_free(void *stats);

#endif
