/* The TT6/TT6E trace builder of the unit tests; see tt6_trace.h. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/registry.h"
#include "tt6_trace.h"
#include "view_check.h"

const char *const class_names[N_CLASSES] = {"compute", "flow", "memory",    "memext",
					    "escape",  "sync", "initial_pc"};

const struct tm_format *fmt_of(int tt6e)
{
	const struct tm_format *f = tm_format_find(tt6e ? "tt6e" : "tt6");
	ck_assert_ptr_nonnull(f);
	return f;
}

/* xorshift64 with a fixed seed */
static uint64_t rng_state = 1;

uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

uint32_t rng_below(uint32_t n)
{
	return (uint32_t)(rng() % n);
}

void tb_free(struct trace *t)
{
	free(t->b);
	free(t->u);
	memset(t, 0, sizeof(*t));
}

void tb_put(struct trace *t, uint32_t w)
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

struct unit *tb_unit(struct trace *t, int cls, const uint32_t *words, size_t n_words)
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

void tb_init(struct trace *t, uint32_t initial_pc)
{
	memset(t, 0, sizeof(*t));
	tb_unit(t, C_INITIAL, &initial_pc, 1);
	t->pc = initial_pc;
}

/* An instruction record of class cls: 1, 2 or 3 words. */
void tb_insn(struct trace *t, int cls, uint32_t word, uint32_t w1, uint32_t w2)
{
	static const size_t words[] = {
	    [C_COMPUTE] = 1, [C_FLOW] = 2, [C_MEMORY] = 2, [C_MEMEXT] = 3};
	uint32_t v[3] = {word, w1, w2};
	tb_unit(t, cls, v, words[cls]);
	t->pc = cls == C_FLOW ? w1 : t->pc + 4;
	t->num++;
}

/* An escape record: code, count words. */
void tb_esc(struct trace *t, unsigned code, unsigned count, ...)
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
	tb_unit(t, sync && count == 2 ? C_SYNC : C_ESCAPE, v, 1 + count);
	ck_assert(!(code == 0x10 && count == 3));
}

void tb_no_address(struct trace *t)
{
	uint32_t v = 0x12u << 16;
	tb_unit(t, C_POSITION, &v, 1);
}

bool tb_lends_address(const struct trace *t)
{
	if (!t->n || t->u[t->n - 1].cls != C_ESCAPE)
		return false;
	uint32_t w = t->u[t->n - 1].word;
	unsigned code = w >> 16 & 0x3ff, count = w & 0xffff;
	return (code == 0x01 && count >= 1) || (code == 0x11 && count == 1);
}

/* A position record (escape 0x10, 3 words). */
void tb_pos(struct trace *t, uint32_t pc, uint64_t num)
{
	uint32_t v[4] = {0x10u << 16 | 3, pc, (uint32_t)(num >> 32), (uint32_t)num};
	tb_unit(t, C_POSITION, v, 4);
	t->pc = pc;
	t->num = num;
}

void *new_state(const struct tm_format *f)
{
	ck_assert_uint_eq(f->state_size % 8, 0);
	void *s = calloc(1, f->state_size + 8);
	ck_assert_ptr_nonnull(s);
	if (f->state_init)
		f->state_init(s);
	return s;
}

void grow(struct decoded *d, size_t more)
{
	if (d->n + more <= d->cap)
		return;
	d->cap = (d->n + more) * 2;
	d->r = realloc(d->r, d->cap * sizeof(*d->r));
	ck_assert_ptr_nonnull(d->r);
}

/* One decode call on buf[pos, end) with state s; appends the records. Returns bytes used. */
size_t decode_step(const struct tm_format *f, void *s, const uint8_t *buf, size_t pos, size_t end,
		   bool at_eof, size_t max, struct decoded *d, bool diag)
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
void decode_all(const struct tm_format *f, const uint8_t *buf, size_t len, size_t max,
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

void decoded_free(struct decoded *d)
{
	free(d->r);
	tm_diag_free(&d->diag);
	memset(d, 0, sizeof(*d));
}

struct tm_chunk chunk_of(const struct tm_format *f, const uint8_t *raw, size_t len,
			 const struct decoded *d)
{
	struct tm_chunk c = {.raw = raw,
			     .raw_len = len,
			     .records = d->r,
			     .n_records = d->n,
			     .record_size = f->record_size};
	return c;
}

/* The value of key=VALUE among a record line's fields, or 0. */
static uint32_t field(const char *line, const char *key, int base)
{
	char pat[16];
	snprintf(pat, sizeof(pat), "\t%s=", key);
	const char *p = strstr(line, pat);
	return p ? (uint32_t)strtoul(p + strlen(pat), NULL, base) : 0;
}

void check_units(const struct tm_format *f, const struct trace *t, const struct decoded *d)
{
	size_t len, k = 0;
	char *model = model_expect("tt6_expect.py", strcmp(f->name, "tt6e") ? "t.tt6" : "t.tt6e",
				   t->b, t->len, "");
	char *text = model_file(model, "records", &len), *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind[16];
		unsigned long long num, off, rlen;
		unsigned pc, word;
		ck_assert_int_eq(sscanf(line, "%15s %llu %x %x off=%llu len=%llu", kind, &num, &pc,
					&word, &off, &rlen),
				 6);
		int cls = -1;
		for (int c = 0; c < N_CLASSES; c++)
			if (strcmp(class_names[c], kind) == 0)
				cls = c;
		/* the second and third words the decoder keeps, by kind */
		uint32_t w1 = 0, w2 = 0;
		const char *words = strstr(line, "\twords=");
		if (cls == C_FLOW)
			w1 = field(line, "next", 16);
		if (cls == C_MEMORY || cls == C_MEMEXT)
			w1 = field(line, "ea", 16);
		if (cls == C_MEMEXT)
			w2 = field(line, "xer", 16) | field(line, "ctl", 16);
		if (cls == C_SYNC) {
			w1 = field(line, "addr", 16);
			w2 = field(line, "count", 10);
		}
		if (cls == C_ESCAPE && words && words[7] && words[7] != '\t') {
			char *end;
			w1 = (uint32_t)strtoul(words + 7, &end, 16);
			w2 = *end == ',' ? (uint32_t)strtoul(end + 1, NULL, 16) : 0;
		}
		EXPECT(k < d->n, "%zu records, the model reads more", d->n);
		const struct rec *r = &d->r[k];
		EXPECT(r->head.cls == (unsigned)cls && r->head.raw_rel == off &&
			   r->head.raw_len == rlen && r->pc == pc && r->num == num &&
			   r->word == word && r->w1 == w1 && r->w2 == w2,
		       "record %zu at offset %llu: %s pc %08x num %" PRIu64
		       " word %08x w1 %08x w2 %08x bytes %u+%u; the model reads %s pc %08x num %llu"
		       " word %08x w1 %08x w2 %08x bytes %llu+%llu",
		       k, off, r->head.cls < N_CLASSES ? class_names[r->head.cls] : "?", r->pc,
		       r->num, r->word, r->w1, r->w2, r->head.raw_rel, r->head.raw_len, kind, pc,
		       num, word, w1, w2, off, rlen);
		k++;
	}
	EXPECT(k == d->n, "%zu records, the model reads %zu", d->n, k);
	free(text);
	model_free(model);
}

int same_record(const struct rec *a, const struct rec *b)
{
	return a->head.cls == b->head.cls && a->head.flags == b->head.flags &&
	       a->head.raw_rel == b->head.raw_rel && a->head.raw_len == b->head.raw_len &&
	       a->pc == b->pc && a->num == b->num && a->word == b->word && a->w1 == b->w1 &&
	       a->w2 == b->w2 && a->ctx_ea == b->ctx_ea;
}

/* A dcbx in format tt6e: MEMORY with its address; in TT6: COMPUTE. */
void tb_cache(struct trace *t, int tt6e, uint32_t word, uint32_t ea)
{
	tb_insn(t, tt6e ? C_MEMORY : C_COMPUTE, word, ea, 0);
}

/* A twi, followed in TT6E by the canonical synthetic pair. */
void tb_twi(struct trace *t, int tt6e, uint32_t word)
{
	uint32_t next = t->pc + 4;
	tb_insn(t, C_COMPUTE, word, 0, 0);
	if (tt6e) {
		tb_insn(t, C_FLOW, W_BA700, 0x700, 0);
		tb_insn(t, C_FLOW, W_RFI, next, 0);
	}
}

/* Every kind of record, without problems. */
void hand_trace(struct trace *t, int tt6e, int with_twi)
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
	tb_no_address(t); /* both formats: no address (escape 0x12) */
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

uint32_t x_form(unsigned major, unsigned minor)
{
	return major << 26 | ((uint32_t)rng() & 0x03fff801u) | minor << 1;
}

void gen_trace(struct trace *t, int tt6e, size_t n, uint64_t seed, int canonical)
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
				if (before == 3) { /* no address, as TT6 -> TT6E writes it */
					tb_no_address(t);
					ea = 0;
				}
				tb_cache(t, 1, w, ea);
			} else {
				if (before == 1)
					tb_esc(t, 0x01, 1, ea | 1);
				if (before == 2)
					tb_esc(t, 0x11, 1, ea | 1);
				/* no address: canonically (as TT6E -> TT6 writes it) an escape 0x12
				 * only after an escape that would lend its address; else sometimes
				 */
				if (canonical ? (before == 0 || before == 3) && tb_lends_address(t)
					      : before == 3)
					tb_no_address(t);
				tb_cache(t, 0, w, 0);
			}
		} else if (!canonical && k < 965) {
			uint64_t num = k & 1 ? rng() >> 28 : k & 2 ? rng() : rng() >> 20;
			tb_pos(t, (uint32_t)rng() & ~3u, num);
		} else if (!canonical && k < 985) {
			static const unsigned codes[] = {0x06, 0x13, 0x22, 0x3ff, 0x1f, 0x3f};
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
