/* The TT6 and TT6E decoders (src/formats/tt6.c) through the format table: records, the
 * checkpoint contract, bad input, dump lines, class streams and the conversions, against
 * values worked out here from doc/formats.md and doc/views.md. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

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
static const char *const class_names[N_CLASSES] = {"compute", "flow", "memory",	   "memext",
						   "escape",  "sync", "initial_pc"};
#define C_POSITION (-1) /* a position record: no record */

static const struct tm_format *fmt_of(int tt6e)
{
	const struct tm_format *f = tm_format_find(tt6e ? "tt6e" : "tt6");
	ck_assert_ptr_nonnull(f);
	return f;
}

/* xorshift64 with a fixed seed */
static uint64_t rng_state = 1;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t rng_below(uint32_t n)
{
	return (uint32_t)(rng() % n);
}

/* A trace built here: its bytes, and what each record (or position record) is, with the PC
 * and instruction number the documented rules give. */
struct unit {
	size_t off, len;
	int cls; /* C_POSITION for a position record */
	uint32_t pc, word, w1, w2;
	uint64_t num;
};

struct trace {
	uint8_t *b;
	size_t len, cap;
	struct unit *u;
	size_t n, ucap;
	size_t records; /* units less position records */
	uint32_t pc;	/* of the next instruction */
	uint64_t num;
};

static void tb_free(struct trace *t)
{
	free(t->b);
	free(t->u);
	memset(t, 0, sizeof(*t));
}

static void tb_put(struct trace *t, uint32_t w)
{
	if (t->len + 4 > t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->b = realloc(t->b, t->cap);
		ck_assert_ptr_nonnull(t->b);
	}
	t->b[t->len++] = (uint8_t)(w >> 24);
	t->b[t->len++] = (uint8_t)(w >> 16);
	t->b[t->len++] = (uint8_t)(w >> 8);
	t->b[t->len++] = (uint8_t)w;
}

static struct unit *tb_unit(struct trace *t, int cls, const uint32_t *words, size_t n_words)
{
	if (t->n == t->ucap) {
		t->ucap = t->ucap ? 2 * t->ucap : 256;
		t->u = realloc(t->u, t->ucap * sizeof(*t->u));
		ck_assert_ptr_nonnull(t->u);
	}
	struct unit *u = &t->u[t->n++];
	memset(u, 0, sizeof(*u));
	u->off = t->len;
	u->len = 4 * n_words;
	u->cls = cls;
	u->word = words[0];
	t->records += cls != C_POSITION;
	for (size_t i = 0; i < n_words; i++)
		tb_put(t, words[i]);
	return u;
}

static void tb_init(struct trace *t, uint32_t initial_pc)
{
	memset(t, 0, sizeof(*t));
	struct unit *u = tb_unit(t, C_INITIAL, &initial_pc, 1);
	u->pc = t->pc = initial_pc;
}

/* An instruction record of class cls: 1, 2 or 3 words. */
static void tb_insn(struct trace *t, int cls, uint32_t word, uint32_t w1, uint32_t w2)
{
	static const size_t words[] = {
	    [C_COMPUTE] = 1, [C_FLOW] = 2, [C_MEMORY] = 2, [C_MEMEXT] = 3};
	uint32_t v[3] = {word, w1, w2};
	struct unit *u = tb_unit(t, cls, v, words[cls]);
	u->pc = t->pc;
	u->num = t->num;
	u->w1 = words[cls] > 1 ? w1 : 0;
	u->w2 = words[cls] > 2 ? w2 : 0;
	t->pc = cls == C_FLOW ? w1 : t->pc + 4;
	t->num++;
}

/* An escape record: code, count words. */
static void tb_esc(struct trace *t, unsigned code, unsigned count, ...)
{
	uint32_t v[1 + 16];
	va_list ap;
	ck_assert_uint_le(count, 16);
	v[0] = code << 16 | count;
	va_start(ap, count);
	for (unsigned i = 0; i < count; i++)
		v[1 + i] = va_arg(ap, uint32_t);
	va_end(ap);
	int sync = code == 0x20 || code == 0x21 || code == 0x30 || code == 0x31;
	struct unit *u = tb_unit(t, sync && count == 2 ? C_SYNC : C_ESCAPE, v, 1 + count);
	ck_assert(!(code == 0x10 && count == 3));
	u->pc = t->pc;
	u->num = t->num;
	u->w1 = count > 0 ? v[1] : 0;
	u->w2 = count > 1 ? v[2] : 0;
}

/* A position record (escape 0x10, 3 words). */
static void tb_pos(struct trace *t, uint32_t pc, uint64_t num)
{
	uint32_t v[4] = {0x10u << 16 | 3, pc, (uint32_t)(num >> 32), (uint32_t)num};
	tb_unit(t, C_POSITION, v, 4);
	t->pc = pc;
	t->num = num;
}

/* Decoding. */

struct decoded {
	struct rec *r; /* raw_rel made relative to the start of the trace */
	size_t n, cap;
	struct tm_diag diag;
	int last_ret;
};

static void *new_state(const struct tm_format *f)
{
	ck_assert_uint_eq(f->state_size % 8, 0);
	void *s = calloc(1, f->state_size + 8);
	ck_assert_ptr_nonnull(s);
	if (f->state_init)
		f->state_init(s);
	return s;
}

static void grow(struct decoded *d, size_t more)
{
	if (d->n + more <= d->cap)
		return;
	d->cap = (d->n + more) * 2;
	d->r = realloc(d->r, d->cap * sizeof(*d->r));
	ck_assert_ptr_nonnull(d->r);
}

/* One decode call on buf[pos, end) with state s; appends the records. Returns bytes used. */
static size_t decode_step(const struct tm_format *f, void *s, const uint8_t *buf, size_t pos,
			  size_t end, bool at_eof, size_t max, struct decoded *d, bool diag)
{
	struct tm_decode_in in = {
	    .buf = buf + pos, .len = end - pos, .raw_off = pos, .at_eof = at_eof};
	size_t n = 12345, used = 12345;
	grow(d, max);
	memset(d->r + d->n, 0xa5, (max < 64 ? max : 64) * sizeof(*d->r));
	d->last_ret = f->decode(s, &in, d->r + d->n, max, &n, &used, diag ? &d->diag : NULL);
	EXPECT(d->last_ret == 0 || d->last_ret == -EAGAIN, "decode returned %d", d->last_ret);
	EXPECT(d->last_ret == 0 || !at_eof, "-EAGAIN at the end of the trace");
	EXPECT(n <= max && used <= end - pos, "%zu records of %zu, %zu bytes of %zu", n, max, used,
	       end - pos);
	for (size_t i = 0; i < n; i++) {
		struct rec *r = &d->r[d->n + i];
		EXPECT(r->head.raw_rel + r->head.raw_len <= used,
		       "record %zu: bytes %u+%u beyond the %zu used", i, r->head.raw_rel,
		       r->head.raw_len, used);
		r->head.raw_rel += (uint32_t)pos;
	}
	d->n += n;
	return used;
}

/* Decodes the whole of buf in calls of at most max records, from a new state. */
static void decode_all(const struct tm_format *f, const uint8_t *buf, size_t len, size_t max,
		       struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	tm_diag_init(&d->diag);
	void *s = new_state(f);
	size_t pos = 0;
	for (;;) {
		size_t before = d->n, used = decode_step(f, s, buf, pos, len, true, max, d, true);
		pos += used;
		if (!used && d->n == before)
			break;
	}
	EXPECT(pos == len, "%zu of %zu bytes consumed", pos, len);
	ck_assert_int_eq(tm_diag_finish(&d->diag), 0);
	free(s);
}

static void decoded_free(struct decoded *d)
{
	free(d->r);
	tm_diag_free(&d->diag);
	memset(d, 0, sizeof(*d));
}

static struct tm_chunk chunk_of(const struct tm_format *f, const uint8_t *raw, size_t len,
				const struct decoded *d)
{
	struct tm_chunk c = {.raw = raw,
			     .raw_len = len,
			     .records = d->r,
			     .n_records = d->n,
			     .record_size = f->record_size};
	return c;
}

/* The records decoded are the units of t. */
static void check_units(const struct trace *t, const struct decoded *d)
{
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct unit *u = &t->u[i];
		if (u->cls == C_POSITION)
			continue;
		EXPECT(k < d->n, "%zu records, expected more", d->n);
		const struct rec *r = &d->r[k];
		EXPECT(r->head.cls == (unsigned)u->cls && r->head.raw_rel == u->off &&
			   r->head.raw_len == u->len && r->pc == u->pc && r->num == u->num &&
			   r->word == u->word && r->w1 == u->w1 && r->w2 == u->w2,
		       "record %zu at offset %zu: %s pc %08x num %" PRIu64
		       " word %08x w1 %08x w2 %08x bytes %u+%u; expected %s pc %08x num %" PRIu64
		       " word %08x w1 %08x w2 %08x bytes %zu+%zu",
		       k, u->off, r->head.cls < N_CLASSES ? class_names[r->head.cls] : "?", r->pc,
		       r->num, r->word, r->w1, r->w2, r->head.raw_rel, r->head.raw_len,
		       class_names[u->cls], u->pc, u->num, u->word, u->w1, u->w2, u->off, u->len);
		k++;
	}
	EXPECT(k == d->n, "%zu records, expected %zu", d->n, k);
}

static int same_record(const struct rec *a, const struct rec *b)
{
	return a->head.cls == b->head.cls && a->head.flags == b->head.flags &&
	       a->head.raw_rel == b->head.raw_rel && a->head.raw_len == b->head.raw_len &&
	       a->pc == b->pc && a->num == b->num && a->word == b->word && a->w1 == b->w1 &&
	       a->w2 == b->w2 && a->ctx_ea == b->ctx_ea;
}

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
static void tb_cache(struct trace *t, int tt6e, uint32_t word, uint32_t ea)
{
	tb_insn(t, tt6e ? C_MEMORY : C_COMPUTE, word, ea, 0);
}

/* A twi, followed in TT6E by the canonical synthetic pair. */
static void tb_twi(struct trace *t, int tt6e, uint32_t word)
{
	uint32_t next = t->pc + 4;
	tb_insn(t, C_COMPUTE, word, 0, 0);
	if (tt6e) {
		tb_insn(t, C_FLOW, W_BA700, 0x700, 0);
		tb_insn(t, C_FLOW, W_RFI, next, 0);
	}
}

/* Every kind of record, without problems. */
static void hand_trace(struct trace *t, int tt6e, int with_twi)
{
	tb_init(t, 0x1000);
	tb_insn(t, C_COMPUTE, W_MFLR, 0, 0);
	tb_insn(t, C_FLOW, W_BL, 0x1014, 0);
	tb_insn(t, C_MEMORY, W_LWZ, 0x00fff008, 0);
	tb_insn(t, C_MEMEXT, W_LSWX, 0x00fff100, 0x0000000d);
	tb_esc(t, 0x20, 2, 0x00a0b0c0u, 1u);
	tb_esc(t, 0x01, 1, 0x00fff200u);
	tb_cache(t, tt6e, W_DCBZ, tt6e ? 0x00fff200 : 0);
	tb_esc(t, 0x02, 0);
	tb_esc(t, 0x00, 3, 0xaaaaaaaau, 0xbbbbbbbbu, 0xccccccccu);
	tb_pos(t, 0x2000, 0x100000002ull);
	tb_insn(t, C_COMPUTE, W_LI, 0, 0);
	tb_insn(t, C_FLOW, W_BNE, 0x2008, 0); /* not taken */
	tb_insn(t, C_FLOW, W_BLR, 0x3000, 0);
	tb_insn(t, C_MEMORY, W_STW, 0x7fff0010, 0);
	tb_insn(t, C_MEMORY, W_LMW, 0x7ffefff8, 0);
	tb_insn(t, C_MEMEXT, W_DST, 0x5000, 0x01020304);
	if (with_twi)
		tb_twi(t, tt6e, W_TWI);
	tb_esc(t, 0x11, 1, 0x8000u);
	tb_cache(t, tt6e, W_DCBF, tt6e ? 0x8000 : 0);
	tb_esc(t, 0x21, 2, 0x1234u, 0xffffffffu);
	tb_esc(t, 0x30, 2, 0x1238u, 7u);
	tb_esc(t, 0x31, 2, 0x123cu, 0u);
	tb_esc(t, 0x05, 1, 0x4000u);
	tb_pos(t, 0xfffffff0, 0);
	tb_insn(t, C_FLOW, W_SC, 0x00000c00, 0);
	tb_esc(t, 0x03, 2, 1u, 2u);
	tb_insn(t, C_MEMORY, W_STSWI, 0xfffffffc, 0);
	tb_cache(t, tt6e, W_ICBI, 0);
}

/* Generated traces: n records of every kind with random fields. canonical: only what the
 * conversions give back byte for byte (no position records, no problems); otherwise also
 * position records and bad escapes. */
static const uint8_t compute_majors[] = {1,  2,	 4,  5,	 6,  7,	 8,  9,	 10, 11, 12,
					 13, 14, 15, 20, 21, 22, 23, 24, 25, 26, 27,
					 28, 29, 30, 56, 57, 59, 60, 61, 63};
static const uint16_t compute31[] = {266, 444, 339, 467, 40,  8,   10,	0,   32,
				     24,  536, 792, 28,	 316, 124, 235, 491, 104,
				     778, 522, 598, 854, 144, 19,  83,	146};
static const uint16_t compute19[] = {0, 150, 33, 129, 193, 225, 257, 289, 417, 449};
static const uint16_t memory31[] = {597, 119, 87,  631, 599, 567, 535, 375, 343, 790, 311, 279, 20,
				    534, 55,  23,  7,	39,  71,  103, 359, 310, 438, 247, 215, 759,
				    727, 983, 695, 663, 918, 439, 407, 725, 662, 150, 183, 151, 135,
				    167, 199, 231, 487, 21,  53,  84,  341, 373, 149, 181, 214};
static const uint8_t memory_majors[] = {32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
					45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 58, 62};
static const uint16_t cache31[] = {758, 86, 470, 54, 278, 246, 1014, 982};
static const uint16_t memext31[] = {533, 661, 342, 374};
#define PICK(a) (a)[rng_below(sizeof(a) / sizeof((a)[0]))]

static uint32_t x_form(unsigned major, unsigned minor)
{
	return major << 26 | ((uint32_t)rng() & 0x03fff801u) | minor << 1;
}

static void gen_trace(struct trace *t, int tt6e, size_t n, uint64_t seed, int canonical)
{
	rng_state = seed;
	tb_init(t, 0x10000 + 4 * rng_below(0x1000));
	while (t->records < n) {
		unsigned k = rng_below(1000);
		if (k < 350) {
			uint32_t w = k % 3 == 0	  ? x_form(31, PICK(compute31))
				     : k % 3 == 1 ? x_form(19, PICK(compute19))
						  : (uint32_t)PICK(compute_majors) << 26 |
							((uint32_t)rng() & 0x03ffffff);
			tb_insn(t, C_COMPUTE, w, 0, 0);
		} else if (k < 500) {
			uint32_t w, next;
			switch (k % 5) {
			case 0: w = 18u << 26 | ((uint32_t)rng() & 0x03ffffff); break;
			case 1: w = 16u << 26 | ((uint32_t)rng() & 0x03ffffff); break;
			case 2: w = x_form(19, 16); break;
			case 3: w = x_form(19, 528); break;
			default: w = k & 8 ? W_RFI : W_SC; break;
			}
			next = k & 16 ? t->pc + 4 : (uint32_t)rng() & ~3u;
			if (next == 0x700)
				next = 0x704;
			tb_insn(t, C_FLOW, w, next, 0);
		} else if (k < 700) {
			uint32_t w = k & 1 ? x_form(31, PICK(memory31))
					   : (uint32_t)PICK(memory_majors) << 26 |
						 ((uint32_t)rng() & 0x03ffffff);
			tb_insn(t, C_MEMORY, w, (uint32_t)rng(), 0);
		} else if (k < 760) {
			tb_insn(t, C_MEMEXT, x_form(31, PICK(memext31)), (uint32_t)rng(),
				(uint32_t)rng());
		} else if (k < 830) {
			unsigned code = rng_below(6), count = rng_below(4);
			uint32_t a = (uint32_t)rng(), b = (uint32_t)rng(), c = (uint32_t)rng();
			tb_esc(t, code, count, a, b, c);
		} else if (k < 870) {
			static const unsigned codes[] = {0x20, 0x21, 0x30, 0x31};
			tb_esc(t, PICK(codes), 2, (uint32_t)rng(), (uint32_t)rng_below(100));
		} else if (k < 880) {
			uint32_t w = 3u << 26 | ((uint32_t)rng() & 0x03ffffff);
			if (!canonical && tt6e && k % 3 == 0)
				tb_insn(t, C_COMPUTE, w, 0, 0); /* a twi without its pair */
			else
				tb_twi(t, tt6e, w);
		} else if (k < 950) {
			uint32_t w = x_form(31, PICK(cache31)) & ~1u, ea = (uint32_t)rng();
			unsigned before = rng_below(4);
			if (tt6e) {
				if (before == 0)
					ea = 0; /* also after a random escape 0x01 */
				if (before == 1)
					tb_esc(t, 0x01, 1, ea);
				tb_cache(t, 1, w, ea);
			} else {
				if (before == 1)
					tb_esc(t, 0x01, 1, ea | 1);
				if (before == 2)
					tb_esc(t, 0x11, 1, ea | 1);
				tb_cache(t, 0, w, 0);
			}
		} else if (!canonical && k < 965) {
			uint64_t num = k & 1 ? rng() >> 28 : k & 2 ? rng() : rng() >> 20;
			tb_pos(t, (uint32_t)rng() & ~3u, num);
		} else if (!canonical && k < 985) {
			static const unsigned codes[] = {0x06, 0x12, 0x22, 0x3ff, 0x1f, 0x3f};
			tb_esc(t, PICK(codes), rng_below(3), 1u, 2u);
		} else if (!canonical) {
			static const struct {
				unsigned code, count;
			} bad[] = {{0x20, 1}, {0x21, 3}, {0x10, 2},
				   {0x10, 4}, {0x11, 0}, {0x11, 2}};
			unsigned i = rng_below(6);
			tb_esc(t, bad[i].code, bad[i].count, 5u, 6u, 7u, 8u);
		}
	}
}

/* The format table. */

START_TEST(test_layout)
{
	for (int tt6e = 0; tt6e <= 1; tt6e++) {
		const struct tm_format *f = fmt_of(tt6e);
		ck_assert_str_eq(f->name, tt6e ? "tt6e" : "tt6");
		ck_assert_uint_eq(f->n_classes, N_CLASSES);
		for (unsigned c = 0; c < N_CLASSES; c++)
			ck_assert_str_eq(f->classes[c], class_names[c]);
		ck_assert_uint_eq(f->record_size, sizeof(struct rec));
		ck_assert_uint_eq(f->state_size % 8, 0);
		ck_assert_uint_eq(f->raw_record_len, 0);
		ck_assert_str_eq(f->class_ext, tt6e ? "tt6e" : "tt6");
		ck_assert_uint_eq(f->common_classes, 1ull << C_INITIAL);
		ck_assert_ptr_nonnull(f->class_stream);
		ck_assert_ptr_nonnull(f->dump);
		ck_assert_uint_gt(f->chunk_records, 0);
		/* the extension is the evidence, and only it */
		ck_assert_int_eq(f->probe(tt6e ? "thread_001.tt6e" : "thread_001.tt6", NULL, 0),
				 50);
		ck_assert_int_eq(f->probe(tt6e ? "thread_001.tt6" : "thread_001.tt6e", NULL, 0), 0);
		ck_assert_int_eq(f->probe("a.txt", NULL, 0), 0);
		ck_assert_ptr_eq(tm_format_detect(tt6e ? "x.tt6e" : "x.tt6", NULL, 0), f);
		struct tm_view_table v;
		ck_assert_int_eq(tm_view_table_init(&v, f, tt6e ? "t.tt6e" : "t.tt6"), 0);
		const char *paths[] = {"dump.txt",
				       "class/compute.txt",
				       "class/sync.txt",
				       "class/memext.txt",
				       "sync.txt",
				       "convert/t.din",
				       tt6e ? "convert/t.tt6" : "convert/t.tt6e",
				       tt6e ? "class/flow.tt6e" : "class/flow.tt6"};
		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			ck_assert_msg(tm_view_table_find(&v, paths[i]) >= 0, "no view %s",
				      paths[i]);
		ck_assert_int_lt(tm_view_table_find(&v, "class/initial_pc.txt"), 0);
		tm_view_table_free(&v);
	}
}
END_TEST

/* Every kind of record: classes, PCs, numbers, words; escapes do not move the PC; position
 * records set PC and number and are no record. */
START_TEST(test_decode_records)
{
	int tt6e = _i;
	const struct tm_format *f = fmt_of(tt6e);
	struct trace t;
	struct decoded d;
	hand_trace(&t, tt6e, 1);
	decode_all(f, t.b, t.len, 1000, &d);
	check_units(&t, &d);
	ck_assert_msg(d.diag.count == 0, "errors: %.*s", (int)d.diag.len, d.diag.text);
	ck_assert(!d.diag.truncated);

	/* spot checks of what the table above computed */
	ck_assert_uint_eq(d.r[0].head.cls, C_INITIAL);
	ck_assert_uint_eq(d.r[0].word, 0x1000);
	ck_assert_uint_eq(d.r[0].pc, 0x1000);
	ck_assert_uint_eq(d.r[0].num, 0);
	ck_assert_uint_eq(d.r[2].pc, 0x1004);
	ck_assert_uint_eq(d.r[3].pc, 0x1014); /* the branch's next PC */
	ck_assert_uint_eq(d.r[5].head.cls, C_SYNC);
	ck_assert_uint_eq(d.r[5].pc, 0x101c); /* an escape: the next instruction's */
	ck_assert_uint_eq(d.r[5].num, 4);
	ck_assert_uint_eq(d.r[6].pc, 0x101c);
	ck_assert_uint_eq(d.r[7].pc, 0x101c); /* the dcbz after the escapes */
	ck_assert_uint_eq(d.r[7].num, 4);
	ck_assert_uint_eq(d.r[7].head.cls, tt6e ? C_MEMORY : C_COMPUTE);
	ck_assert_uint_eq(d.r[7].head.raw_len, tt6e ? 8 : 4);
	/* after the position record */
	ck_assert_uint_eq(d.r[10].word, W_LI);
	ck_assert_uint_eq(d.r[10].pc, 0x2000);
	ck_assert_uint_eq(d.r[10].num, 0x100000002ull);
	ck_assert_uint_eq(d.r[10].head.raw_rel, d.r[9].head.raw_rel + d.r[9].head.raw_len + 16);
	tb_free(&t);
	decoded_free(&d);
}
END_TEST

/* The checkpoint contract on one trace: growing prefixes without the end return -EAGAIN and
 * consume exactly the complete records; a restart from any state copy gives the same records;
 * errors are reported once. */
static void check_checkpoints(const struct tm_format *f, const struct trace *t, size_t restarts)
{
	struct decoded ref, inc;
	decode_all(f, t->b, t->len, 5000, &ref);

	/* byte by byte */
	memset(&inc, 0, sizeof(inc));
	tm_diag_init(&inc.diag);
	void *s = new_state(f);
	size_t pos = 0, unit = 0;
	for (size_t end = 0; end <= t->len; end++) {
		/* one more byte completes one unit at most, so 16 records are never reached */
		pos += decode_step(f, s, t->b, pos, end, false, 16, &inc, true);
		EXPECT(inc.last_ret == -EAGAIN, "prefix %zu: returned %d", end, inc.last_ret);
		/* consumed: up to the last unit that ends by `end` */
		while (unit < t->n && t->u[unit].off + t->u[unit].len <= end)
			unit++;
		size_t want = unit ? t->u[unit - 1].off + t->u[unit - 1].len : 0;
		EXPECT(pos == want, "prefix %zu: %zu bytes consumed, expected %zu", end, pos, want);
	}
	size_t before = inc.n;
	ck_assert_uint_eq(decode_step(f, s, t->b, pos, t->len, true, 16, &inc, true), 0);
	ck_assert_uint_eq(inc.n, before);
	ck_assert_int_eq(inc.last_ret, 0);
	ck_assert_int_eq(tm_diag_finish(&inc.diag), 0);
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t i = 0; i < ref.n; i++)
		EXPECT(same_record(&inc.r[i], &ref.r[i]), "record %zu differs byte by byte", i);
	ck_assert_uint_eq(inc.diag.len, ref.diag.len);
	ck_assert(inc.diag.len == 0 || memcmp(inc.diag.text, ref.diag.text, ref.diag.len) == 0);
	ck_assert(inc.diag.truncated == ref.diag.truncated);
	decoded_free(&inc);
	free(s);

	/* one record per call, keeping a copy of the state before each */
	size_t n_steps = 0;
	size_t steps_cap = ref.n + t->n + 2;
	uint8_t *states = malloc(steps_cap * f->state_size);
	size_t *offs = malloc(steps_cap * sizeof(*offs)), *firsts = malloc(steps_cap * 8);
	ck_assert(states && offs && firsts);
	memset(&inc, 0, sizeof(inc));
	s = new_state(f);
	pos = 0;
	for (;;) {
		ck_assert_uint_lt(n_steps, steps_cap);
		memcpy(states + n_steps * f->state_size, s, f->state_size);
		offs[n_steps] = pos;
		firsts[n_steps] = inc.n;
		n_steps++;
		size_t b = inc.n, used = decode_step(f, s, t->b, pos, t->len, true, 1, &inc, false);
		pos += used;
		if (!used && inc.n == b)
			break;
	}
	ck_assert_uint_eq(inc.n, ref.n);
	for (size_t i = 0; i < ref.n; i++)
		EXPECT(same_record(&inc.r[i], &ref.r[i]), "record %zu differs one by one", i);
	decoded_free(&inc);
	free(s);

	/* restarts from the copies, with various batch sizes */
	size_t step = n_steps / restarts + 1;
	for (size_t k = 0; k < n_steps; k += step) {
		void *copy = malloc(f->state_size);
		memcpy(copy, states + k * f->state_size, f->state_size);
		struct decoded rest = {0};
		size_t p = offs[k], max = 1 + k % 7;
		for (;;) {
			size_t b = rest.n, used = decode_step(f, copy, t->b, p, t->len, true, max,
							      &rest, false);
			p += used;
			if (!used && rest.n == b)
				break;
		}
		EXPECT(rest.n == ref.n - firsts[k], "restart %zu: %zu records, expected %zu", k,
		       rest.n, ref.n - firsts[k]);
		for (size_t i = 0; i < rest.n; i++)
			EXPECT(same_record(&rest.r[i], &ref.r[firsts[k] + i]),
			       "restart at %zu: record %zu differs", offs[k], firsts[k] + i);
		free(rest.r);
		free(copy);
	}
	free(states);
	free(offs);
	free(firsts);
	decoded_free(&ref);
}

START_TEST(test_checkpoints_hand)
{
	struct trace t;
	hand_trace(&t, _i, 1);
	check_checkpoints(fmt_of(_i), &t, 1000);
	tb_free(&t);
}
END_TEST

START_TEST(test_checkpoints_generated)
{
	for (int canonical = 0; canonical <= 1; canonical++) {
		struct trace t;
		gen_trace(&t, _i, 1500, 0x1000 + (uint64_t)canonical, canonical);
		check_checkpoints(fmt_of(_i), &t, 300);
		tb_free(&t);
	}
}
END_TEST

/* Through the index pass. */

struct built {
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix;
	json_object *root;
};

static void build(struct built *b, const struct tm_format *f, const uint8_t *data, size_t len)
{
	mem_source_init(&b->src, data, len);
	ck_assert_int_eq(tm_view_table_init(&b->views, f, f == fmt_of(1) ? "t.tt6e" : "t.tt6"), 0);
	ck_assert_int_eq(tm_index_build(f, &b->views, &b->src.src, "t", NULL, NULL, &b->ix), 0);
	char *text = strndup(b->ix->stats_json, b->ix->stats_len);
	b->root = json_tokener_parse(text);
	ck_assert_msg(b->root != NULL, "stats.json does not parse: %s", text);
	free(text);
}

static void unbuild(struct built *b)
{
	json_object_put(b->root);
	tm_index_free(b->ix);
	tm_view_table_free(&b->views);
	mem_source_free(&b->src);
}

static int64_t stat_int(struct built *b, const char *key)
{
	json_object *v;
	ck_assert_msg(json_object_object_get_ex(b->root, key, &v), "no %s", key);
	return json_object_get_int64(v);
}

/* The errors.txt line for a trace cut at `cut` inside unit u. */
static void cut_line(const struct trace *t, const struct unit *u, size_t cut, char *out, size_t len)
{
	size_t left = cut - u->off;
	if (left >= 4 && u->cls != C_INITIAL && (u->word >> 26) == 0)
		snprintf(out, len,
			 "offset %zu: escape 0x%02x: its %u words run past the end of the trace "
			 "(%zu bytes of %zu present)\n",
			 u->off, (u->word >> 16) & 0x3ff, u->word & 0xffff, left, u->len);
	else
		snprintf(out, len,
			 "offset %zu: %s record cut by the end of the trace: %zu of %zu bytes, not "
			 "decoded\n",
			 u->off,
			 left < 4 ? (u == &t->u[0] ? "the INITIAL_PC" : "a") : class_names[u->cls],
			 left, left < 4 ? (size_t)4 : u->len);
}

/* The trace cut at every byte: the records before the cut, one error naming the offset of the
 * record cut, truncated set. */
START_TEST(test_truncation)
{
	const struct tm_format *f = fmt_of(_i);
	struct trace t;
	hand_trace(&t, _i, 0); /* no twi: TT6E would also report the pair cut off */
	for (size_t cut = 0; cut <= t.len; cut++) {
		struct built b;
		build(&b, f, t.b, cut);
		size_t complete = 0, records = 0;
		const struct unit *inside = NULL;
		for (size_t i = 0; i < t.n; i++) {
			if (t.u[i].off + t.u[i].len <= cut) {
				complete = t.u[i].off + t.u[i].len;
				records += t.u[i].cls != C_POSITION;
			} else if (t.u[i].off < cut) {
				inside = &t.u[i];
			}
		}
		EXPECT(tm_index_records(b.ix) == records,
		       "cut %zu: %" PRIu64 " records, expected %zu", cut, tm_index_records(b.ix),
		       records);
		EXPECT(stat_int(&b, "records") == (int64_t)records, "cut %zu", cut);
		EXPECT(stat_int(&b, "bytes") == (int64_t)cut, "cut %zu", cut);
		EXPECT(b.ix->raw_size == cut, "cut %zu: raw_size %" PRIu64, cut, b.ix->raw_size);
		if (!inside) {
			EXPECT(complete == cut, "cut %zu", cut);
			EXPECT(b.ix->n_errors == 0 && b.ix->errors_len == 0 && !b.ix->truncated,
			       "cut %zu at a record boundary: errors %.*s", cut,
			       (int)b.ix->errors_len, b.ix->errors_txt);
		} else {
			char want[256];
			cut_line(&t, inside, cut, want, sizeof(want));
			EXPECT(b.ix->truncated, "cut %zu: not truncated", cut);
			EXPECT(b.ix->n_errors == 1, "cut %zu: %" PRIu64 " errors", cut,
			       b.ix->n_errors);
			EXPECT(b.ix->errors_len == strlen(want) &&
				   memcmp(b.ix->errors_txt, want, strlen(want)) == 0,
			       "cut %zu: errors.txt \"%.*s\", expected \"%s\"", cut,
			       (int)b.ix->errors_len, b.ix->errors_txt, want);
		}
		json_object *v;
		ck_assert(json_object_object_get_ex(b.root, "truncated", &v));
		EXPECT(json_object_get_boolean(v) == (inside != NULL), "cut %zu", cut);
		unbuild(&b);
	}
	tb_free(&t);
}
END_TEST

/* Bad input: the documented errors.txt lines. */
static const struct bad_row {
	int tt6e;
	const char *what;
	uint32_t words[12];
	unsigned n_words;
	unsigned tail; /* bytes of one more word 0x7c7c7c7c */
	const char *errors;
	int truncated;
	unsigned records;
	int last_cls; /* of the last record */
} bad_rows[] = {
    {0,
     "escape count past the end",
     {0x1000, W_MFLR, 0x00010005, 1, 2},
     5,
     0,
     "offset 8: escape 0x01: its 5 words run past the end of the trace (12 bytes of 24 present)\n",
     1,
     2,
     C_COMPUTE},
    {1,
     "escape count past the end (TT6E)",
     {0x1000, 0x00300002, 1},
     3,
     0,
     "offset 4: escape 0x30: its 2 words run past the end of the trace (8 bytes of 12 present)\n",
     1,
     1,
     C_INITIAL},
    {0,
     "unknown code",
     {0x1000, 0x00070002, 1, 2, W_MFLR},
     5,
     0,
     "offset 4: unknown escape code 0x07 (2 words kept)\n",
     0,
     3,
     C_COMPUTE},
    {0,
     "unknown code 0x3ff",
     {0x1000, W_MFLR, 0x03ff0000},
     3,
     0,
     "offset 8: unknown escape code 0x3ff (0 words kept)\n",
     0,
     3,
     C_ESCAPE},
    {0,
     "reserved sync code",
     {0x1000, 0x00220002, 1, 2},
     4,
     0,
     "offset 4: unknown escape code 0x22 (2 words kept)\n",
     0,
     2,
     C_ESCAPE},
    {0,
     "sync with 3 words",
     {0x1000, W_MFLR, 0x00200003, 1, 2, 3, W_MFLR},
     7,
     0,
     "offset 8: sync escape 0x20 has 3 words, expected 2\n",
     0,
     4,
     C_COMPUTE},
    {1,
     "sync with 1 word",
     {0x1000, 0x00310001, 1},
     3,
     0,
     "offset 4: sync escape 0x31 has 1 words, expected 2\n",
     0,
     2,
     C_ESCAPE},
    {0,
     "position with 2 words",
     {0x1000, 0x00100002, 1, 2},
     4,
     0,
     "offset 4: escape 0x10 has 2 words, expected 3\n",
     0,
     2,
     C_ESCAPE},
    {0,
     "dcbx address with 2 words",
     {0x1000, 0x00110002, 1, 2},
     4,
     0,
     "offset 4: escape 0x11 has 2 words, expected 1\n",
     0,
     2,
     C_ESCAPE},
    {1,
     "twi without its pair",
     {0x1000, W_TWI, W_MFLR},
     3,
     0,
     "offset 8: the twi at pc 0x00001000 is not followed by the synthetic ba 0x700 + rfi pair\n",
     0,
     3,
     C_COMPUTE},
    {1,
     "twi then a branch elsewhere",
     {0x1000, W_MFLR, W_TWI, W_BA700, 0x704, W_MFLR},
     6,
     0,
     "offset 12: the twi at pc 0x00001004 is not followed by the synthetic ba 0x700 + rfi pair\n",
     0,
     5,
     C_COMPUTE},
    {1,
     "branch without rfi",
     {0x1000, W_TWI, W_BA700, 0x700, W_MFLR},
     5,
     0,
     "offset 16: the synthetic ba 0x700 after the twi at pc 0x00001000 is not followed by rfi\n",
     0,
     4,
     C_COMPUTE},
    {1,
     "pair cut at the end after the twi",
     {0x1000, W_TWI},
     2,
     0,
     "offset 8: the trace ends inside the synthetic pair after the twi at pc 0x00001000\n",
     0,
     2,
     C_COMPUTE},
    {1,
     "pair cut at the end after the branch",
     {0x1000, W_MFLR, W_TWI, W_BA700, 0x700},
     5,
     0,
     "offset 20: the trace ends inside the synthetic pair after the twi at pc 0x00001004\n",
     0,
     4,
     C_FLOW},
    {1,
     "an escape inside the pair",
     {0x1000, W_TWI, 0x00010001, 5, W_BA700, 0x700, W_RFI, 4},
     8,
     0,
     "offset 8: the twi at pc 0x00001000 is not followed by the synthetic ba 0x700 + rfi pair\n",
     0,
     5,
     C_FLOW},
    {1, "the whole pair", {0x1000, W_TWI, W_BA700, 0x700, W_RFI, 0x1004}, 6, 0, "", 0, 4, C_FLOW},
    {0, "TT6: a twi needs no pair", {0x1000, W_TWI}, 2, 0, "", 0, 2, C_COMPUTE},
    {0,
     "INITIAL_PC cut",
     {0},
     0,
     3,
     "offset 0: the INITIAL_PC record cut by the end of the trace: 3 of 4 bytes, not decoded\n",
     1,
     0,
     -1},
    {0,
     "a word cut",
     {0x1000, W_MFLR},
     2,
     1,
     "offset 8: a record cut by the end of the trace: 1 of 4 bytes, not decoded\n",
     1,
     2,
     C_COMPUTE},
    {1,
     "memory record cut",
     {0x1000, W_LWZ},
     2,
     0,
     "offset 4: memory record cut by the end of the trace: 4 of 8 bytes, not decoded\n",
     1,
     1,
     C_INITIAL},
    {1,
     "memext record cut",
     {0x1000, W_LSWX, 1},
     3,
     2,
     "offset 4: memext record cut by the end of the trace: 10 of 12 bytes, not decoded\n",
     1,
     1,
     C_INITIAL},
    {0, "empty trace", {0}, 0, 0, "", 0, 0, -1},
};

START_TEST(test_bad_input)
{
	const struct bad_row *row = &bad_rows[_i];
	const struct tm_format *f = fmt_of(row->tt6e);
	uint8_t data[64];
	size_t len = 0;
	for (unsigned i = 0; i < row->n_words; i++)
		for (int k = 3; k >= 0; k--)
			data[len++] = (uint8_t)(row->words[i] >> (8 * k));
	memset(data + len, 0x7c, row->tail);
	len += row->tail;
	struct built b;
	build(&b, f, data, len);
	const char *text = b.ix->errors_txt ? b.ix->errors_txt : ""; /* NULL when empty */
	ck_assert_msg(
	    b.ix->errors_len == strlen(row->errors) &&
		(b.ix->errors_len == 0 || memcmp(text, row->errors, b.ix->errors_len) == 0),
	    "%s: errors.txt \"%.*s\", expected \"%s\"", row->what, (int)b.ix->errors_len, text,
	    row->errors);
	ck_assert_uint_eq(b.ix->n_errors, *row->errors ? 1 : 0);
	ck_assert_int_eq(stat_int(&b, "errors"), *row->errors ? 1 : 0);
	ck_assert_msg(b.ix->truncated == (row->truncated != 0), "%s: truncated %d", row->what,
		      b.ix->truncated);
	ck_assert_msg(tm_index_records(b.ix) == row->records, "%s: %" PRIu64 " records", row->what,
		      tm_index_records(b.ix));
	ck_assert_int_eq(stat_int(&b, "bytes"), (int64_t)len);
	unbuild(&b);

	/* decoding alone: the same text, and the last record's class */
	struct decoded d;
	decode_all(f, data, len, 1, &d); /* calls at other offsets than 0 */
	ck_assert_uint_eq(d.n, row->records);
	ck_assert_msg(d.diag.len == strlen(row->errors) &&
			  (d.diag.len == 0 || memcmp(d.diag.text, row->errors, d.diag.len) == 0),
		      "%s, decoded alone: \"%.*s\", expected \"%s\"", row->what, (int)d.diag.len,
		      d.diag.text, row->errors);
	if (row->last_cls >= 0)
		ck_assert_str_eq(class_names[d.r[d.n - 1].head.cls], class_names[row->last_cls]);
	decoded_free(&d);
}
END_TEST

/* Rendering. */

#define SLACK_MARK '\x7f'

/* Renders record i with ops; checks render() against measure() and the slack. */
static char *render_one(const struct tm_render_ops *ops, const struct tm_chunk *c, size_t i,
			size_t *len)
{
	size_t m = ops->measure(c, i);
	char *out = malloc(m + TM_RENDER_SLACK + 1);
	ck_assert_ptr_nonnull(out);
	memset(out, SLACK_MARK, m + TM_RENDER_SLACK + 1);
	size_t n = ops->render(c, i, out);
	EXPECT(n == m, "record %zu: render() wrote %zu bytes, measure() said %zu", i, n, m);
	EXPECT(out[m + TM_RENDER_SLACK] == SLACK_MARK, "record %zu: written past the slack", i);
	*len = n;
	return out;
}

/* The dump lines of the records of c whose class is in mask, concatenated. */
static char *dump_text(const struct tm_format *f, const struct tm_chunk *c, uint64_t mask,
		       size_t *len)
{
	size_t cap = 4096, n = 0;
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < c->n_records; i++) {
		const struct tm_record *r = tm_chunk_rec(c, i);
		if (!(mask >> r->cls & 1))
			continue;
		size_t l;
		char *line = render_one(f->dump, c, i, &l);
		if (n + l > cap) {
			cap = 2 * (n + l);
			text = realloc(text, cap);
			ck_assert_ptr_nonnull(text);
		}
		memcpy(text + n, line, l);
		n += l;
		free(line);
	}
	*len = n;
	return text;
}

/* doc/views.md's example, line by line. */
START_TEST(test_dump_example)
{
	static const char *const lines[] = {
	    "           0 00001000 00001000 -                                    initial_pc\n",
	    "           0 00001000 7c0802a6 mflr r0                              compute\n",
	    "           1 00001004 48000011 bl 0x1014                            flow "
	    "next=00001014\n",
	    "           2 00001014 80610008 lwz r3, 8(r1)                        memory "
	    "ea=00fff008 "
	    "size=  4\n",
	    "           3 00001018 7c64042a lswx r3, r4, r0                      memext "
	    "ea=00fff100 "
	    "size= 13 xer=0000000d\n",
	    "           4 0000101c 00200002 escape sync_signal                   sync "
	    "addr=00a0b0c0 "
	    "count=00000001\n",
	    "           4 0000101c 00010001 escape data_address                  escape code=0x01 "
	    "words=1 00fff200\n",
	};
	for (int tt6e = 0; tt6e <= 1; tt6e++) {
		const struct tm_format *f = fmt_of(tt6e);
		struct trace t;
		struct decoded d;
		tb_init(&t, 0x1000);
		tb_insn(&t, C_COMPUTE, W_MFLR, 0, 0);
		tb_insn(&t, C_FLOW, W_BL, 0x1014, 0);
		tb_insn(&t, C_MEMORY, W_LWZ, 0x00fff008, 0);
		tb_insn(&t, C_MEMEXT, W_LSWX, 0x00fff100, 0x0000000d);
		tb_esc(&t, 0x20, 2, 0x00a0b0c0u, 1u);
		tb_esc(&t, 0x01, 1, 0x00fff200u);
		decode_all(f, t.b, t.len, 100, &d);
		struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
		ck_assert_uint_eq(d.n, 7);
		for (size_t i = 0; i < d.n; i++) {
			size_t len;
			char *line = render_one(f->dump, &c, i, &len);
			ck_assert_msg(len == strlen(lines[i]) && memcmp(line, lines[i], len) == 0,
				      "line %zu: \"%.*s\", expected \"%s\"", i, (int)len, line,
				      lines[i]);
			size_t fixed = f->dump->fixed_len ? f->dump->fixed_len(d.r[i].head.cls) : 0;
			ck_assert(fixed == 0 || fixed == len);
			free(line);
		}
		decoded_free(&d);
		tb_free(&t);
	}
}
END_TEST

/* More exact lines: the other escape names, wide codes, not-taken branches, sizes, ctl=, and
 * sync.txt. */
/* A dump line from its columns, as doc/views.md lays them out. */
static int dump_line(char *out, size_t len, uint64_t num, uint32_t pc, uint32_t word,
		     const char *text, const char *cls_extra)
{
	return snprintf(out, len, "%12" PRIu64 " %08x %08x %-36s %s\n", num, pc, word, text,
			cls_extra);
}

START_TEST(test_dump_more)
{
	static const struct {
		uint64_t num;
		uint32_t pc, word;
		const char *text, *rest;
	} lines[] = {
	    {0, 0xfffffff8, 0xfffffff8, "-", "initial_pc"},
	    {0, 0xfffffff8, 0x4bfffff0, "b 0xffffffe8", "flow next=ffffffe8"},
	    {1, 0xffffffe8, 0x00000000, "escape segment_register", "escape code=0x00 words=0"},
	    {1, 0xffffffe8, 0x03ff0002, "escape unknown",
	     "escape code=0x3ff words=2 00000001 00000002"},
	    {1, 0xffffffe8, 0x00220000, "escape sync_reserved", "escape code=0x22 words=0"},
	    {1, 0xffffffe8, 0x00110001, "escape dcbx_address", "escape code=0x11 words=1 0000abcd"},
	    {1, 0xffffffe8, 0x00300002, "escape sync_wait", "sync addr=00001230 count=0000002a"},
	    {1, 0xffffffe8, W_BNE, "bne 0xfffffff0", "flow next=ffffffec"},
	    {2, 0xffffffec, W_DST, "dst r0, r8, 0", "memext ea=00005000 size=  0 ctl=01020304"},
	    {3, 0xfffffff0, W_LMW, "lmw r30, -8(r1)", "memory ea=7ffefff8 size=  8"},
	    {4, 0xfffffff4, W_STSWI, "stswi r3, r4, 0", "memory ea=00000010 size= 32"},
	    {5, 0xfffffff8, 0x00050001, "escape next_instruction_real",
	     "escape code=0x05 words=1 00000000"},
	    {5, 0xfffffff8, 0x00040000, "escape data_address_real", "escape code=0x04 words=0"},
	    {5, 0xfffffff8, 0x00030000, "escape branch_target_real", "escape code=0x03 words=0"},
	    {5, 0xfffffff8, 0x00020000, "escape condition_register", "escape code=0x02 words=0"},
	    {5, 0xfffffff8, 0x00210002, "escape sync_broadcast",
	     "sync addr=00000000 count=00000000"},
	    {5, 0xfffffff8, 0x00310002, "escape sync_try_wait",
	     "sync addr=ffffffff count=ffffffff"},
	    {999999999999ull, 0x100, W_LI, "li r3, 5", "compute"},
	};
	const struct tm_format *f = fmt_of(0);
	struct trace t;
	struct decoded d;
	tb_init(&t, 0xfffffff8);
	tb_insn(&t, C_FLOW, 0x4bfffff0, 0xffffffe8, 0);
	tb_esc(&t, 0x00, 0);
	tb_esc(&t, 0x3ff, 2, 1u, 2u);
	tb_esc(&t, 0x22, 0);
	tb_esc(&t, 0x11, 1, 0xabcdu);
	tb_esc(&t, 0x30, 2, 0x1230u, 42u);
	tb_insn(&t, C_FLOW, W_BNE, 0xffffffec, 0);
	tb_insn(&t, C_MEMEXT, W_DST, 0x5000, 0x01020304);
	tb_insn(&t, C_MEMORY, W_LMW, 0x7ffefff8, 0);
	tb_insn(&t, C_MEMORY, W_STSWI, 0x10, 0);
	tb_esc(&t, 0x05, 1, 0u);
	tb_esc(&t, 0x04, 0);
	tb_esc(&t, 0x03, 0);
	tb_esc(&t, 0x02, 0);
	tb_esc(&t, 0x21, 2, 0u, 0u);
	tb_esc(&t, 0x31, 2, 0xffffffffu, 0xffffffffu);
	tb_pos(&t, 0x100, 999999999999ull);
	tb_insn(&t, C_COMPUTE, W_LI, 0, 0);
	decode_all(f, t.b, t.len, 100, &d);
	check_units(&t, &d);
	struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
	ck_assert_uint_eq(d.n, sizeof(lines) / sizeof(lines[0]));
	for (size_t i = 0; i < d.n; i++) {
		char want[256];
		size_t len,
		    want_len = (size_t)dump_line(want, sizeof(want), lines[i].num, lines[i].pc,
						 lines[i].word, lines[i].text, lines[i].rest);
		char *line = render_one(f->dump, &c, i, &len);
		ck_assert_msg(len == want_len && memcmp(line, want, len) == 0,
			      "line %zu: \"%.*s\", expected \"%s\"", i, (int)len, line, want);
		size_t fixed = f->dump->fixed_len(d.r[i].head.cls);
		ck_assert(fixed == 0 || fixed == len);
		free(line);
	}
	/* sync.txt, from doc/views.md */
	const struct tm_view_desc *sync = NULL;
	for (unsigned i = 0; i < f->n_extra_views; i++)
		if (strcmp(f->extra_views[i].path, "sync.txt") == 0)
			sync = &f->extra_views[i];
	ck_assert_ptr_nonnull(sync);
	ck_assert_uint_eq(sync->class_mask, 1ull << C_SYNC);
	size_t len;
	char *line = render_one(sync->ops, &c, 6, &len);
	ck_assert_str_eq(class_names[d.r[6].head.cls], "sync");
	ck_assert_uint_eq(len, strlen("           1 ffffffe8 wait      00001230 42\n"));
	ck_assert(memcmp(line, "           1 ffffffe8 wait      00001230 42\n", len) == 0);
	free(line);
	decoded_free(&d);
	tb_free(&t);

	/* the example of doc/views.md */
	tb_init(&t, 0);
	tb_pos(&t, 0x101c, 42);
	tb_esc(&t, 0x20, 2, 0x00a0b0c0u, 1u);
	decode_all(f, t.b, t.len, 100, &d);
	c = chunk_of(f, t.b, t.len, &d);
	ck_assert_uint_eq(d.n, 2);
	line = render_one(sync->ops, &c, 1, &len);
	ck_assert_uint_eq(len, strlen("          42 0000101c signal    00a0b0c0 1\n"));
	ck_assert(memcmp(line, "          42 0000101c signal    00a0b0c0 1\n", len) == 0);
	free(line);
	decoded_free(&d);
	tb_free(&t);
}
END_TEST

/* Every record view of a generated trace: render() writes measure() bytes, and what the index
 * counts (fixed_len plus flag_len, or measure) is that length. */
START_TEST(test_render_lengths)
{
	const struct tm_format *f = fmt_of(_i);
	struct tm_view_table views;
	ck_assert_int_eq(tm_view_table_init(&views, f, _i ? "t.tt6e" : "t.tt6"), 0);
	for (int canonical = 0; canonical <= 1; canonical++) {
		struct trace t;
		struct decoded d;
		gen_trace(&t, _i, 6000, 0x77 + (uint64_t)canonical, canonical);
		decode_all(f, t.b, t.len, 1000, &d);
		check_units(&t, &d);
		struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
		for (unsigned v = 0; v < views.n_views; v++) {
			const struct tm_view *view = &views.views[v];
			if (view->kind != TM_VIEW_RECORDS)
				continue;
			size_t fixed[N_CLASSES];
			for (unsigned k = 0; k < N_CLASSES; k++)
				fixed[k] = tm_view_fixed_len(f, view, k);
			for (size_t i = 0; i < d.n; i++) {
				if (!(view->class_mask >> d.r[i].head.cls & 1))
					continue;
				size_t len, counted = tm_view_record_len(view, fixed, &c, i);
				char *out = render_one(view->ops, &c, i, &len);
				EXPECT(counted == len,
				       "%s: record %zu (%s, flags %#x): %zu bytes, the index "
				       "counts %zu",
				       view->path, i, class_names[d.r[i].head.cls],
				       d.r[i].head.flags, len, counted);
				if (view->ops == f->dump) {
					EXPECT(len > 0 && out[len - 1] == '\n' &&
						   memchr(out, '\n', len) == out + len - 1,
					       "record %zu: not one line", i);
					char num[24];
					size_t w = (size_t)snprintf(num, sizeof(num), "%12" PRIu64,
								    d.r[i].num);
					EXPECT(len > w + 56 && memcmp(out, num, w) == 0 &&
						   out[w] == ' ' && out[w + 9] == ' ' &&
						   out[w + 18] == ' ' && out[w + 55] == ' ' &&
						   out[w + 56] != ' ',
					       "record %zu: columns: %.*s", i, (int)len, out);
				}
				free(out);
			}
		}
		decoded_free(&d);
		tb_free(&t);
	}
	tm_view_table_free(&views);
}
END_TEST

/* Reading views through the core, in process. */

struct mounted {
	struct tm_context *ctx;
	struct tm_trace *t;
	struct mem_source src;
};

static void mount_trace(struct mounted *m, const char *name, const struct tm_format *f,
			const void *data, size_t len)
{
	mem_source_init(&m->src, data, len);
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &m->ctx), 0);
	ck_assert_int_eq(tm_context_trace(m->ctx, name, f, &m->t), 0);
}

static void unmount_trace(struct mounted *m)
{
	tm_context_trace_put(m->ctx, m->t);
	tm_context_free(m->ctx);
	mem_source_free(&m->src);
}

static char *read_view(struct mounted *m, const char *path, size_t *len)
{
	int v = tm_view_table_find(&m->t->views, path);
	ck_assert_msg(v >= 0, "no view %s", path);
	struct tm_reader r;
	ck_assert_int_eq(tm_reader_open(&r, m->ctx, m->t, &m->src.src, (unsigned)v), 0);
	uint64_t size = tm_reader_size(&r);
	char *buf = malloc(size + 1);
	ck_assert_ptr_nonnull(buf);
	uint64_t pos = 0;
	for (;;) {
		ssize_t got = tm_reader_read(&r, buf + pos, 1 << 20, pos);
		ck_assert_msg(got >= 0, "%s: read at %" PRIu64 " returned %zd", path, pos, got);
		if (!got)
			break;
		pos += (uint64_t)got;
	}
	ck_assert_msg(pos == size, "%s: %" PRIu64 " bytes read, size %" PRIu64, path, pos, size);
	tm_reader_close(&r);
	*len = (size_t)size;
	return buf;
}

/* Up to 24 bytes of p[from, len) as hex. */
static void hex_of(const char *p, size_t from, size_t len, char *out)
{
	*out = '\0';
	for (size_t i = from; i < len && i < from + 24; i++)
		out += sprintf(out, "%02x%s", (uint8_t)p[i], i % 4 == 3 ? " " : "");
}

/* got equals want; the message shows text, or hex for binary (`binary`). */
static void check_same_as(const char *what, const char *got, size_t got_len, const char *want,
			  size_t want_len, int binary)
{
	size_t i = 0;
	while (i < got_len && i < want_len && got[i] == want[i])
		i++;
	if (i == got_len && i == want_len)
		return;
	if (binary) {
		char g[128], w[128];
		size_t from = i & ~(size_t)3;
		from = from >= 8 ? from - 8 : 0;
		hex_of(got, from, got_len, g);
		hex_of(want, from, want_len, w);
		ck_abort_msg("%s: %zu bytes, expected %zu; first difference at %zu: from %zu got "
			     "%s, expected %s",
			     what, got_len, want_len, i, from, g, w);
	}
	size_t from = i > 40 ? i - 40 : 0;
	ck_abort_msg("%s: %zu bytes, expected %zu; first difference at %zu: got \"%.*s\", expected "
		     "\"%.*s\"",
		     what, got_len, want_len, i, (int)(got_len - from < 120 ? got_len - from : 120),
		     got + from, (int)(want_len - from < 120 ? want_len - from : 120), want + from);
}

static void check_same(const char *what, const char *got, size_t got_len, const char *want,
		       size_t want_len)
{
	check_same_as(what, got, got_len, want, want_len, 0);
}

/* class/CLASS.EXT decodes to class/CLASS.txt, which is the class's dump lines. */
static void check_class_streams(const struct tm_format *f, const struct trace *t)
{
	struct mounted m;
	struct decoded d;
	mount_trace(&m, f == fmt_of(1) ? "t.tt6e" : "t.tt6", f, t->b, t->len);
	decode_all(f, t->b, t->len, 5000, &d);
	struct tm_chunk c = chunk_of(f, t->b, t->len, &d);
	for (unsigned k = 0; k < N_CLASSES; k++) {
		if (k == C_INITIAL)
			continue;
		char path[64], what[96];
		size_t stream_len, txt_len, want_len, got_len;
		snprintf(path, sizeof(path), "class/%s.%s", class_names[k], f->class_ext);
		char *stream = read_view(&m, path, &stream_len);
		snprintf(path, sizeof(path), "class/%s.txt", class_names[k]);
		char *txt = read_view(&m, path, &txt_len);
		char *want = dump_text(f, &c, 1ull << k | 1ull << C_INITIAL, &want_len);
		snprintf(what, sizeof(what), "%s (%s)", path, f->name);
		check_same(what, txt, txt_len, want, want_len);

		/* the stream opens with the INITIAL_PC record */
		ck_assert_uint_ge(stream_len, 4);
		ck_assert(memcmp(stream, t->b, 4) == 0);
		struct decoded sd;
		decode_all(f, (const uint8_t *)stream, stream_len, 777, &sd);
		ck_assert_msg(!sd.diag.truncated, "%s: the stream is truncated", what);
		struct tm_chunk sc = chunk_of(f, (const uint8_t *)stream, stream_len, &sd);
		char *got = dump_text(f, &sc, ~0ull, &got_len);
		snprintf(what, sizeof(what), "class/%s.%s decoded (%s)", class_names[k],
			 f->class_ext, f->name);
		check_same(what, got, got_len, want, want_len);
		for (size_t i = 0; i < sd.n; i++)
			EXPECT(i == 0 ? sd.r[i].head.cls == C_INITIAL : sd.r[i].head.cls == k,
			       "%s: record %zu of class %u", what, i, sd.r[i].head.cls);
		free(got);
		decoded_free(&sd);
		free(stream);
		free(txt);
		free(want);
	}
	decoded_free(&d);
	unmount_trace(&m);
}

START_TEST(test_class_streams_hand)
{
	struct trace t;
	hand_trace(&t, _i, 1);
	check_class_streams(fmt_of(_i), &t);
	tb_free(&t);
}
END_TEST

START_TEST(test_class_streams_generated)
{
	const struct tm_format *f = fmt_of(_i);
	for (int canonical = 0; canonical <= 1; canonical++) {
		struct trace t;
		/* several chunks, so that streams restart from checkpoints */
		gen_trace(&t, _i, 2 * f->chunk_records + 1000, 0xabc + (uint64_t)canonical,
			  canonical);
		check_class_streams(f, &t);
		tb_free(&t);
	}
}
END_TEST

/* Conversions. */

/* Reads convert/NAME.EXT of data in format `from`. */
static char *convert(int from_tt6e, const void *data, size_t len, size_t *out_len)
{
	struct mounted m;
	const struct tm_format *f = fmt_of(from_tt6e);
	mount_trace(&m, from_tt6e ? "t.tt6e" : "t.tt6", f, data, len);
	char *out = read_view(&m, from_tt6e ? "convert/t.tt6" : "convert/t.tt6e", out_len);
	size_t errors_len;
	char *errors = read_view(&m, "errors.txt", &errors_len);
	ck_assert_msg(errors_len == 0, "errors.txt of the %s input: %.*s", f->name, (int)errors_len,
		      errors);
	free(errors);
	unmount_trace(&m);
	return out;
}

/* The same trace in both formats, by hand: TT6's escapes 0x11 and TT6E's addresses. */
static void hand_pair(struct trace *t6, struct trace *t6e)
{
	for (int e = 0; e <= 1; e++) {
		struct trace *t = e ? t6e : t6;
		tb_init(t, 0x1000);
		tb_insn(t, C_COMPUTE, W_MFLR, 0, 0);
		tb_twi(t, e, W_TWI);
		/* dcbx after an escape 0x01: TT6E takes its address */
		tb_esc(t, 0x01, 1, 0xa000u);
		tb_cache(t, e, W_DCBZ, e ? 0xa000 : 0);
		/* after an escape 0x11: TT6E drops it and takes its address */
		if (!e)
			tb_esc(t, 0x11, 1, 0xb000u);
		tb_cache(t, e, W_DCBF, e ? 0xb000 : 0);
		/* nothing before: 0 */
		tb_cache(t, e, W_ICBI, 0);
		/* an escape 0x01 with another address, then an escape 0x11 */
		tb_esc(t, 0x01, 2, 0xc000u, 1u);
		if (!e)
			tb_esc(t, 0x11, 1, 0xc100u);
		tb_cache(t, e, W_DCBT, e ? 0xc100 : 0);
		/* other escapes between */
		tb_esc(t, 0x02, 1, 0x44000000u);
		if (!e)
			tb_esc(t, 0x11, 1, 0xd000u);
		tb_cache(t, e, W_DCBST, e ? 0xd000 : 0);
		tb_insn(t, C_MEMORY, W_LWZ, 0x2000, 0);
		tb_esc(t, 0x01, 2, 0xe000u, 1u);
		tb_insn(t, C_COMPUTE, W_LI, 0, 0);
		tb_insn(t, C_FLOW, W_BL, t->pc + 0x10, 0);
		tb_esc(t, 0x20, 2, 0xa0b0c0u, 1u);
		tb_insn(t, C_MEMEXT, W_LSWX, 0x3000, 0x10);
		tb_twi(t, e, 0x0fe00000);  /* twui r0, 0 */
		tb_twi(t, e, W_TWI);	   /* twice in a row */
		tb_esc(t, 0x04, 1, 0x11u); /* kept */
		tb_twi(t, e, W_TWI);	   /* last */
	}
}

START_TEST(test_convert_hand)
{
	struct trace t6, t6e;
	hand_pair(&t6, &t6e);
	size_t len;
	char *out = convert(0, t6.b, t6.len, &len);
	check_same_as("TT6 -> TT6E", out, len, (const char *)t6e.b, t6e.len, 1);
	free(out);
	out = convert(1, t6e.b, t6e.len, &len);
	check_same_as("TT6E -> TT6", out, len, (const char *)t6.b, t6.len, 1);
	free(out);
	tb_free(&t6);
	tb_free(&t6e);
}
END_TEST

/* TT6 -> TT6E -> TT6 and TT6E -> TT6 -> TT6E give back the bytes. */
static void check_round_trip(int tt6e, const struct trace *t)
{
	size_t len1, len2;
	char *once = convert(tt6e, t->b, t->len, &len1);
	char *twice = convert(!tt6e, once, len1, &len2);
	check_same_as(tt6e ? "TT6E -> TT6 -> TT6E" : "TT6 -> TT6E -> TT6", twice, len2,
		      (const char *)t->b, t->len, 1);
	free(once);
	free(twice);
}

START_TEST(test_round_trip_hand)
{
	struct trace t6, t6e;
	hand_pair(&t6, &t6e);
	check_round_trip(0, &t6);
	check_round_trip(1, &t6e);
	tb_free(&t6);
	tb_free(&t6e);
	/* hand_trace less its position records, which are not converted, and in TT6E less the
	 * escape 0x11 written by hand (documented as not reproduced) */
	for (int e = 0; e <= 1; e++) {
		struct trace t, u = {0};
		hand_trace(&t, e, 1);
		for (size_t i = 0; i < t.n; i++)
			if (t.u[i].cls != C_POSITION && !(e && t.u[i].word == 0x00110001))
				for (size_t k = 0; k < t.u[i].len; k += 4)
					tb_put(&u, (uint32_t)t.b[t.u[i].off + k] << 24 |
						       (uint32_t)t.b[t.u[i].off + k + 1] << 16 |
						       (uint32_t)t.b[t.u[i].off + k + 2] << 8 |
						       t.b[t.u[i].off + k + 3]);
		check_round_trip(e, &u);
		tb_free(&u);
		tb_free(&t);
	}
}
END_TEST

START_TEST(test_round_trip_generated)
{
	const struct tm_format *f = fmt_of(_i);
	struct trace t;
	gen_trace(&t, _i, 2 * f->chunk_records + 777, 0xfeed + (uint64_t)_i, 1);
	check_round_trip(_i, &t);
	tb_free(&t);
}
END_TEST

/* Regressions. */

/* Instruction numbers wider than NUMBER's 12 columns (a position record can set any): the
 * column grows, and the index still sizes dump.txt and sync.txt right (fixed length plus the
 * record's flags). */
START_TEST(test_wide_number)
{
	static const uint64_t nums[] = {999999999999ull,   1000000000000ull,	  9999999999999ull,
					10000000000000ull, 123456789012345678ull, UINT64_MAX};
	const struct tm_format *f = fmt_of(_i);
	struct tm_view_table views;
	ck_assert_int_eq(tm_view_table_init(&views, f, _i ? "t.tt6e" : "t.tt6"), 0);
	for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
		struct trace t;
		struct decoded d;
		tb_init(&t, 0x1000);
		tb_pos(&t, 0x2000, nums[k]);
		tb_esc(&t, 0x20, 2, 1u, 2u);
		tb_esc(&t, 0x01, 1, 5u);
		tb_insn(&t, C_COMPUTE, W_LI, 0, 0);
		tb_insn(&t, C_FLOW, W_BL, 0x2014, 0);
		tb_insn(&t, C_MEMEXT, W_LSWX, 0x3000, 3);
		decode_all(f, t.b, t.len, 100, &d);
		check_units(&t, &d);
		struct tm_chunk c = chunk_of(f, t.b, t.len, &d);
		for (unsigned v = 0; v < views.n_views; v++) {
			const struct tm_view *view = &views.views[v];
			if (view->kind != TM_VIEW_RECORDS)
				continue;
			size_t fixed[N_CLASSES];
			for (unsigned cls = 0; cls < N_CLASSES; cls++)
				fixed[cls] = tm_view_fixed_len(f, view, cls);
			for (size_t i = 1; i < d.n; i++) {
				if (!(view->class_mask >> d.r[i].head.cls & 1))
					continue;
				size_t len, counted = tm_view_record_len(view, fixed, &c, i);
				char *out = render_one(view->ops, &c, i, &len);
				ck_assert_msg(counted == len,
					      "%s, number %" PRIu64 ", record %zu: %zu bytes, the "
					      "index counts %zu: \"%.*s\"",
					      view->path, nums[k], i, len, counted, (int)len, out);
				char num[40];
				snprintf(num, sizeof(num), "%12" PRIu64 " %08x ", d.r[i].num,
					 d.r[i].pc);
				if (view->ops == f->dump || strcmp(view->path, "sync.txt") == 0)
					ck_assert_msg(len > strlen(num) &&
							  memcmp(out, num, strlen(num)) == 0,
						      "%s: \"%.*s\"", view->path, (int)len, out);
				free(out);
			}
		}
		decoded_free(&d);
		tb_free(&t);
	}
	tm_view_table_free(&views);
}
END_TEST

/* TT6E: a dcbx whose address is 0 right after an escape 0x01 with an address. TT6 -> TT6E
 * would give it the escape's address, so TT6E -> TT6 keeps the 0 in an escape 0x11. */
START_TEST(test_round_trip_zero_after_escape_01)
{
	struct trace t6e, t6;
	for (int e = 0; e <= 1; e++) {
		struct trace *t = e ? &t6e : &t6;
		tb_init(t, 0x1000);
		tb_esc(t, 0x01, 1, 0xa000u);
		if (!e)
			tb_esc(t, 0x11, 1, 0u);
		tb_cache(t, e, W_DCBZ, 0);
		tb_esc(t, 0x01, 1, 0xb000u);
		tb_cache(t, e, W_DCBF, e ? 0xb000 : 0);
	}
	size_t len;
	char *out = convert(1, t6e.b, t6e.len, &len);
	check_same_as("TT6E -> TT6", out, len, (const char *)t6.b, t6.len, 1);
	free(out);
	check_round_trip(1, &t6e);
	check_round_trip(0, &t6);
	tb_free(&t6e);
	tb_free(&t6);
}
END_TEST

static Suite *tt6_suite(void)
{
	Suite *s = suite_create("tt6");
	TCase *tc = tcase_create("decode");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout);
	tcase_add_loop_test(tc, test_decode_records, 0, 2);
	tcase_add_loop_test(tc, test_checkpoints_hand, 0, 2);
	tcase_add_loop_test(tc, test_checkpoints_generated, 0, 2);
	tcase_add_loop_test(tc, test_truncation, 0, 2);
	tcase_add_loop_test(tc, test_bad_input, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("render");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_dump_example);
	tcase_add_test(tc, test_dump_more);
	tcase_add_loop_test(tc, test_render_lengths, 0, 2);
	tcase_add_loop_test(tc, test_class_streams_hand, 0, 2);
	tcase_add_loop_test(tc, test_class_streams_generated, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("convert");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_convert_hand);
	tcase_add_test(tc, test_round_trip_hand);
	tcase_add_loop_test(tc, test_round_trip_generated, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("regressions");
	tcase_add_loop_test(tc, test_wide_number, 0, 2);
	tcase_add_test(tc, test_round_trip_zero_after_escape_01);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tt6_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
