/* A builder of TT6/TT6E traces for the unit tests, and helpers that decode them through the
 * format table. The record values each trace must decode to are the TT6 model's reading of its
 * bytes (tests/integration/tt6_expect.py, run by check_units), never the decoder's. */
#ifndef TRACEMOUNT_TEST_TT6_TRACE_H
#define TRACEMOUNT_TEST_TT6_TRACE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/diag.h"
#include "tracemount/format.h"

/* An assertion for hot loops: Check's own record every passing assertion through a pipe. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* The record the decoders produce, as tt6.c lays it out (checked against record_size). */
struct rec {
	struct tm_record head;
	uint32_t pc, word, w1, w2, ctx_ea;
	uint64_t num;
};

/* doc/views.md's class order */
enum { C_COMPUTE, C_FLOW, C_MEMORY, C_MEMEXT, C_ESCAPE, C_SYNC, C_INITIAL, N_CLASSES };
extern const char *const class_names[N_CLASSES];
#define C_POSITION (-1) /* a position record, or an escape 0x12: no record */

const struct tm_format *fmt_of(int tt6e);

uint64_t rng(void);

uint32_t rng_below(uint32_t n);

/* A trace built here: its bytes, and where each record (or position record) is, with the
 * class it was built as. */
struct unit {
	size_t off, len;
	int cls; /* C_POSITION for a position record */
	uint32_t word;
};

struct trace {
	uint8_t *b;
	size_t len, cap;
	struct unit *u;
	size_t n, ucap;
	size_t records; /* units less position records */
	uint32_t pc;	/* of the next instruction, for branches built here */
	uint64_t num;
};

void tb_free(struct trace *t);

void tb_put(struct trace *t, uint32_t w);

struct unit *tb_unit(struct trace *t, int cls, const uint32_t *words, size_t n_words);

void tb_init(struct trace *t, uint32_t initial_pc);

/* An instruction record of class cls: 1, 2 or 3 words. */
void tb_insn(struct trace *t, int cls, uint32_t word, uint32_t w1, uint32_t w2);

/* An escape record: code, count words. */
void tb_esc(struct trace *t, unsigned code, unsigned count, ...);

/* TT6E's escape 0x12 (no word): the dcbx that follows has no address. No record. */
void tb_no_address(struct trace *t);
/* Whether the last unit is an escape 0x01 or 0x11 that TT6 takes as the next dcbx's address:
 * the only place a canonical TT6 holds an escape 0x12. */
bool tb_lends_address(const struct trace *t);
/* A position record (escape 0x10, 3 words). */
void tb_pos(struct trace *t, uint32_t pc, uint64_t num);

/* Decoding. */

struct decoded {
	struct rec *r; /* raw_rel made relative to the start of the trace */
	size_t n, cap;
	struct tm_diag diag;
	int last_ret;
};

void *new_state(const struct tm_format *f);

void grow(struct decoded *d, size_t more);

/* One decode call on buf[pos, end) with state s; appends the records. Returns bytes used. */
size_t decode_step(const struct tm_format *f, void *s, const uint8_t *buf, size_t pos, size_t end,
		   bool at_eof, size_t max, struct decoded *d, bool diag);

/* Decodes the whole of buf in calls of at most max records, from a new state. */
void decode_all(const struct tm_format *f, const uint8_t *buf, size_t len, size_t max,
		struct decoded *d);

void decoded_free(struct decoded *d);

struct tm_chunk chunk_of(const struct tm_format *f, const uint8_t *raw, size_t len,
			 const struct decoded *d);

/* The records decoded are those the TT6 model (tt6_expect.py) reads in t's bytes. */
void check_units(const struct tm_format *f, const struct trace *t, const struct decoded *d);

int same_record(const struct rec *a, const struct rec *b);

/* Hand-built traces. */

#define W_MFLR	0x7c0802a6u /* mflr r0 */
#define W_BL	0x48000011u /* bl +0x10 */
#define W_LWZ	0x80610008u /* lwz r3, 8(r1) */
#define W_LSWX	0x7c64042au /* lswx r3, r4, r0 */
#define W_LI	0x38600005u /* li r3, 5 */
#define W_BNE	0x40820008u /* bne +8 */
#define W_BLR	0x4e800020u
#define W_STW	0x90610010u /* stw r3, 16(r1) */
#define W_LMW	0xbbc1fff8u /* lmw r30, -8(r1) */
#define W_DST	0x7c0042acu /* dst r0, r8, 0 */
#define W_TWI	0x0c000000u
#define W_BA700 0x48000702u
#define W_RFI	0x4c000064u
#define W_DCBZ	0x7c0007ecu
#define W_DCBF	0x7c0018acu
#define W_DCBT	0x7c001a2cu
#define W_DCBST 0x7c00186cu
#define W_ICBI	0x7c001facu
#define W_SC	0x44000002u
#define W_STSWI 0x7c6405aau /* stswi r3, r4, 0: 32 bytes */

/* A dcbx in format tt6e: MEMORY with its address; in TT6: COMPUTE. */
void tb_cache(struct trace *t, int tt6e, uint32_t word, uint32_t ea);

/* A twi, followed in TT6E by the canonical synthetic pair. */
void tb_twi(struct trace *t, int tt6e, uint32_t word);

/* Every kind of record, without problems. */
void hand_trace(struct trace *t, int tt6e, int with_twi);

uint32_t x_form(unsigned major, unsigned minor);

void gen_trace(struct trace *t, int tt6e, size_t n, uint64_t seed, int canonical);

#endif
