/* FULL PowerPC traces: what the decoder and format table (full.c), the views (full_views.c),
 * the statistics (full_stats.c), plots/registers.svg (full_registers.c) and the record layouts
 * (full_layout.c) share. A FULL record is
 * decoded into a TT6 record (PC, opcode, next PC or effective address, XER or rB) followed by
 * which registers changed, so the TT6 statistics and din conversion apply to it unchanged.
 * Layers, so that no two files call each other: full_layout.c uses none of the others, the
 * views, the register plot (full_registers.c) and the statistics use it (and TT6's views and
 * statistics; the statistics the register plot), full.c uses them all. */
#ifndef TRACEMOUNT_FULL_H
#define TRACEMOUNT_FULL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tt6.h"

#define FULL_MAGIC	 0xa1118e17u
#define FULL_MAX_RECORD	 1008
#define FULL_N_CLASSES	 4  /* compute, flow, memory, memext: TT6E's classes by opcode */
#define FULL_DETECT_RECS 16 /* records the layout is chosen from */

/* Where the three Mach structures sit in a record of each layout (doc/formats.md, "FULL"). */
struct full_layout {
	uint16_t size;
	uint16_t thread, fp, vector; /* offsets of ppc_thread_state, ppc_float_state, vector */
	const char *name;	     /* for stats.json */
};
enum { FULL_PACKED, FULL_PAD_OPCODE, FULL_PAD_THREAD, FULL_N_LAYOUTS };
extern const struct full_layout full_layouts[FULL_N_LAYOUTS]; /* full_layout.c */

/* Offsets inside ppc_thread_state, ppc_float_state and ppc_vector_state. */
enum {
	TS_SRR0 = 0,
	TS_SRR1 = 4,
	TS_GPR = 8,
	TS_CR = 136,
	TS_XER = 140,
	TS_LR = 144,
	TS_CTR = 148,
	TS_MQ = 152,
	TS_VRSAVE = 156,
	FS_FPR = 0,
	FS_FPSCR = 260,
	VS_VR = 0,
	VS_VSCR = 524, /* the last word of save_vscr[4], where mfvscr finds it */
	VS_VRVALID = 544,
};

/* The special registers, in the order of regs/spr.txt and of dump.txt's changes. */
enum { FULL_PART_THREAD, FULL_PART_FP, FULL_PART_VECTOR };
struct full_spr {
	char name[8];
	uint8_t part;
	uint16_t off;
};
#define FULL_N_SPRS 10
extern const struct full_spr full_sprs[FULL_N_SPRS]; /* full_layout.c */

static inline const uint8_t *full_part(const uint8_t *rec, const struct full_layout *l,
				       unsigned part)
{
	return rec + (part == FULL_PART_THREAD ? l->thread
		      : part == FULL_PART_FP   ? l->fp
					       : l->vector);
}

/* Record flags, by bit. B_TWI, B_CACHE and B_WIDE mean what they mean in TT6 (tt6.h); B_SYNTH,
 * which the TT6 statistics read, is never set. */
enum {
	B_CLASS_FIRST = B_SEEK, /* the first record of its class: class streams need the magic */
	B_TRACE_FIRST = B_AFTER_01, /* the first record: conversions need INITIAL_PC */
	B_JUMP = B_AFTER_11,	    /* the PC does not follow from the previous record */
};
enum {
	F_CLASS_FIRST = 1 << B_CLASS_FIRST,
	F_TRACE_FIRST = 1 << B_TRACE_FIRST,
	F_JUMP = 1 << B_JUMP,
};

struct full_record {
	struct tt6_record tt; /* pc, word, w1 (next PC or EA), w2 (XER or rB), num */
	uint32_t gpr_changed, fpr_changed, vr_changed; /* bit n: rN, fN, vN changed */
	uint16_t spr_changed;			       /* bit n: full_sprs[n] changed */
	uint8_t layout;
	uint8_t pad;
};

static inline const struct full_record *full_rec(const struct tm_chunk *c, size_t i)
{
	return (const struct full_record *)tm_chunk_rec(c, i);
}

/* The bytes of a decoded record, and of its layout. */
static inline const uint8_t *full_bytes(const struct tm_chunk *c, const struct full_record *r)
{
	return c->raw + r->tt.head.raw_rel;
}

/* Views (full_views.c). */
extern const struct tm_render_ops full_dump_ops, full_stream_ops;
#define FULL_N_EXTRA_VIEWS 7
extern const struct tm_view_desc full_extra_views[FULL_N_EXTRA_VIEWS];

/* Register writes by slice of the trace, for plots/registers.svg (full_registers.c): the
 * slices as plots/ cuts them (src/plots/plots.h), a row of counters per register. */
enum {
	FULL_REG_GPR = 0,
	FULL_REG_FPR = 32,
	FULL_REG_VR = 64,
	FULL_REG_SPR = 96,
	FULL_N_REGS = FULL_REG_SPR + FULL_N_SPRS,
};
struct full_reg_heat {
	uint64_t (*v)[FULL_N_REGS]; /* TM_PLOT_SLICES rows: 256 x 106 x 8 bytes, 212 KiB */
	unsigned shift;		    /* slices of 2^shift records */
	uint64_t records;
};
int full_reg_heat_init(struct full_reg_heat *h);
void full_reg_heat_free(struct full_reg_heat *h);
void full_reg_heat_update(struct full_reg_heat *h, const struct tm_chunk *c);
/* Draws plots/registers.svg: 0, or -errno (a failed write: -EIO). */
int full_reg_heat_draw(const struct full_reg_heat *h, FILE *out);

/* Statistics (full_stats.c). */
struct full_stats {
	struct tt6_stats tt;
	uint64_t written[4]; /* registers changed: gpr, fpr, vr, spr */
	uint64_t fp, vector; /* instructions by unit */
	uint64_t jumps;	     /* PCs that do not follow */
	int layout;	     /* -1 before the first record */
	struct full_reg_heat regs;
};

int full_stats_init(void *stats);
void full_stats_update(void *stats, const struct tm_chunk *c);
int full_stats_finish(void *stats, struct json_object *obj, struct tm_diag *diag);
void full_stats_free(void *stats);
int full_tables_finish(void *stats, FILE *const *out);

#endif
