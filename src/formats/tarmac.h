/* QEMU4V and ARM Tarmac text traces: what the line parser (tarmac_parse.c), the decoder and
 * format tables (tarmac.c), the views (tarmac_views.c) and the statistics (tarmac_stats.c)
 * share. Layers, so that no two files call each other: the parser uses none of the others,
 * the views and the statistics use the parser, tarmac.c uses all three. Rules:
 * doc/formats.md. */
#ifndef TRACEMOUNT_TARMAC_H
#define TRACEMOUNT_TARMAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "plots/series.h"
#include "tracemount/footprint.h"
#include "tracemount/format.h"
#include "tracemount/names.h"

#define TARMAC_MAX_LINE 4096 /* bytes before the newline; a longer line is skipped */

enum tarmac_class {
	TC_INSTRUCTION,	 /* IT, ES instruction */
	TC_SKIPPED,	 /* IS, ES CCFAIL */
	TC_FETCH_FAILED, /* ES (ADDR:--------): the fetch failed, nothing ran */
	TC_READ,	 /* MRn, LD */
	TC_WRITE,	 /* MWn, ST */
	TC_REGISTER,	 /* R */
	TC_EVENT,	 /* E, CADI, SIGNAL:, aborted accesses, comments, blank lines... */
	TC_UNKNOWN,	 /* lines that are none of the above: reported */
	TARMAC_N_CLASSES
};

extern const char *const tarmac_classes[TARMAC_N_CLASSES]; /* tarmac_parse.c */

enum {
	F_TIME = 1 << 0,   /* the line has a time and unit */
	F_CRLF = 1 << 1,   /* the line ended in CR LF */
	F_LANES = 1 << 2,  /* an LD/ST byte-lane record: a hex line after it may continue it */
	F_CONT = 1 << 3,   /* a continuation line of an LD/ST record */
	F_BINARY = 1 << 4, /* an unknown line holding control bytes */
};

struct tarmac_span {
	uint16_t off, len; /* in the line */
};

/* Spans a record keeps for the statistics: its unit, and by class: an instruction's ISET,
 * MODE and MNEMONIC; a register's NAME (in S_ISET). */
enum { S_UNIT, S_ISET, S_MODE, S_MNEMONIC, TARMAC_SPANS };
#define S_NAME S_ISET

/* One line. head.raw_rel/raw_len cover the line and its newline. */
struct tarmac_record {
	struct tm_record head;
	uint32_t cpu;  /* its own cpu token, or that of the last instruction before it */
	int64_t time;  /* with F_TIME */
	uint64_t addr; /* instructions: VA; memory: VA of the first byte */
	struct tarmac_span span[TARMAC_SPANS];
	uint16_t size;	   /* memory: bytes */
	uint16_t dump_len; /* bytes of its dump.txt line */
	/* instructions of a processor whose code is MIPS (R_MIPS): the call kind and flow the
	 * decoder gave them, delay slots considered (R_KIND, R_FLOW), and the stack pointer
	 * before them, with R_SP. 0 for other records: tarmac.c classifies them as ARM. */
	uint8_t mips;
	uint64_t sp;
};

enum {
	R_KIND = 0x03, /* enum tm_insn_call */
	R_FLOW = 0x1c, /* enum tm_flow, shifted by R_FLOW_SHIFT */
	R_FLOW_SHIFT = 2,
	R_SP = 0x20,
	R_MIPS = 0x80,
};

static inline const struct tarmac_record *tarmac_rec(const struct tm_chunk *c, size_t i)
{
	return (const struct tarmac_record *)tm_chunk_rec(c, i);
}

/* A line taken apart: offsets into text, which holds no newline or trailing CR. */
struct tarmac_line {
	const uint8_t *text;
	size_t len;
	unsigned cls;
	unsigned flags; /* F_TIME, F_LANES, F_CONT, F_BINARY */
	int64_t time;
	uint32_t cpu;
	bool has_cpu, numeric_cpu; /* numeric_cpu: QEMU4V's "1 clk 0 IT" */
	struct tarmac_span time_tok, unit;
	size_t rest; /* the first token after the time, unit and cpu */
	/* instructions: address, opcode, ISET, MODE (len 0: absent), and the disassembly from
	 * offset `tail`; memory: address, and data tokens from `tail` (n_data of them, all
	 * when 0); registers: the NAME in `iset` and the value from `tail` */
	struct tarmac_span addr, opcode, iset, mode, mnemonic;
	size_t tail;
	unsigned n_data;
	uint64_t va;
	unsigned size;
	const char *problem;	    /* TC_UNKNOWN: why */
	struct tarmac_span bad_tok; /* the token the problem is about, if any */
};

/* Line parser (tarmac_parse.c). Takes apart text[0, len) (no newline). cont_cls is TC_READ or
 * TC_WRITE when the line before was an LD/ST record, so that a line of lanes continues it, else -1.
 * Never fails: a line that is nothing known gets TC_UNKNOWN and a problem. */
void tarmac_parse(const uint8_t *text, size_t len, int cont_cls, struct tarmac_line *l);

/* Views (tarmac_views.c). */

/* The dump.txt line of l for cpu (with its newline); out NULL: only the length. */
size_t tarmac_dump_line(const struct tarmac_line *l, uint32_t cpu, char *out);
extern const struct tm_render_ops tarmac_dump_ops;
#define TARMAC_N_EXTRA_VIEWS 1
extern const struct tm_view_desc tarmac_extra_views[TARMAC_N_EXTRA_VIEWS];

/* Statistics (tarmac_stats.c). */
#define TARMAC_TOP_MNEMONICS 10
#define TARMAC_MAX_NAMES     4096 /* distinct registers, modes, ISETs, mnemonics counted */
#define TARMAC_MAX_CPUS	     1024 /* cpus counted one by one in "cpus"; the others together */
#define TARMAC_MAX_SIZES     64	  /* access sizes counted one by one; the others together */
#define TARMAC_MAX_BLOCKS    8192 /* footprint blocks per set: 4 KiB each, 2 MiB of addresses */

struct tarmac_stats {
	uint64_t (*cpus)[TARMAC_N_CLASSES]; /* TARMAC_MAX_CPUS + 1 rows, the last for others */
	uint32_t max_cpu;		    /* highest cpu seen + 1, capped */
	bool other_cpus;
	uint64_t sizes[TARMAC_MAX_SIZES + 1]; /* the last: larger */
	struct tm_names isets, modes, mnemonics, registers;
	uint64_t timed, negative, backwards, other_units;
	int64_t first, last, min, max, prev;
	bool have_time, have_prev;
	char unit[9]; /* the first unit, if 8 bytes at most (tarmac_stats.c) */
	uint8_t unit_len;
	uint64_t pc_min, pc_max, addr_min, addr_max;
	uint64_t crlf;
	bool capped; /* a footprint reached TARMAC_MAX_BLOCKS */
	struct tm_footprint code, data;
	/* plots/processors.svg: instructions (executed and condition-failed) of each processor
	 * over time, or over the records when the first instruction has no time */
	struct tm_series processors;
	bool axis_set, by_time;
	uint64_t axis_time; /* the time of the last timed instruction */
};

int tarmac_stats_init(void *stats);
void tarmac_stats_update(void *stats, const struct tm_chunk *c);
int tarmac_stats_finish(void *stats, struct json_object *obj, struct tm_diag *diag);
void tarmac_stats_free(void *stats);
#define TARMAC_N_TABLE_VIEWS 1
extern const char *const tarmac_table_views[TARMAC_N_TABLE_VIEWS];
/* Counts instruction record r, number record of the trace, in s->processors. */
void tarmac_plot_count(struct tarmac_stats *s, const struct tarmac_record *r, uint64_t record);
int tarmac_tables_finish(void *stats, FILE *const *out);
int qemu4v_tables_finish(void *stats, FILE *const *out);

#endif
