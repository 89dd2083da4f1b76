/* TT6 and TT6E PowerPC instruction traces (specs/000_97974b8c72fb256c.txt), with Amber's
 * thread-synchronisation escape records. Decisions: doc/formats.md, "TT6 and TT6E".
 *
 *   word 0      INITIAL_PC
 *   then        opcode [next PC | EA [XER | rB]]       by the spec's class macros
 *          or   escape word (major 0: code, count), then count words
 *
 * The two formats share everything but the classification of dcbx/icbi and TT6E's synthetic
 * "ba 0x700; rfi" pair after every twi. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "ppc.h"
#include "tracemount/diag.h"
#include "tracemount/footprint.h"
#include "tracemount/format.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"

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

static const char *const tt6_classes[TT6_N_CLASSES] = {
    "compute", "flow", "memory", "memext", "escape", "sync", "initial_pc",
};

#define CLASS_BIT(c) (1ull << (c))
#define INSTRUCTION_BITS                                                                           \
	(CLASS_BIT(TT6_COMPUTE) | CLASS_BIT(TT6_FLOW) | CLASS_BIT(TT6_MEMORY) |                    \
	 CLASS_BIT(TT6_MEMEXT))

/* Escape codes: the spec's, and two tracemount writes into filtered and converted streams. */
enum {
	ESC_DATA_ADDRESS = 0x01,
	ESC_POSITION = 0x10,	 /* PC, instruction number high, low: applied, no record */
	ESC_DCBX_ADDRESS = 0x11, /* the EA of the dcbx that follows */
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

static const char *esc_name(unsigned code)
{
	switch (code) {
	case 0x00: return "segment_register";
	case 0x01: return "data_address";
	case 0x02: return "condition_register";
	case 0x03: return "branch_target_real";
	case 0x04: return "data_address_real";
	case 0x05: return "next_instruction_real";
	case ESC_DCBX_ADDRESS: return "dcbx_address";
	case ESC_SYNC_SIGNAL: return "sync_signal";
	case ESC_SYNC_BROADCAST: return "sync_broadcast";
	case ESC_SYNC_WAIT: return "sync_wait";
	case ESC_SYNC_TRY_WAIT: return "sync_try_wait";
	default: return code >= 0x20 && code <= 0x3f ? "sync_reserved" : "unknown";
	}
}

/* The sync kind of a code, 0-3, or -1. */
static int sync_kind(unsigned code)
{
	switch (code) {
	case ESC_SYNC_SIGNAL: return 0;
	case ESC_SYNC_BROADCAST: return 1;
	case ESC_SYNC_WAIT: return 2;
	case ESC_SYNC_TRY_WAIT: return 3;
	default: return -1;
	}
}
static const char *const sync_kinds[4] = {"signal", "broadcast", "wait", "try_wait"};

enum {
	F_SEEK = 1,	/* the previous record is of another class: class streams need a position */
	F_SYNTH = 2,	/* TT6E: part of the synthetic pair after a twi */
	F_AFTER_01 = 4, /* an escape 0x01 precedes: ctx_ea is its address */
	F_AFTER_11 = 8, /* an escape 0x11 precedes: ctx_ea is its address */
	F_TWI = 16,	/* a twi */
	F_CACHE = 32,	/* a dcbx or icbi */
	F_DCBX_ESC = 64, /* TT6E: a dcbx whose address TT6 keeps in an escape 0x11 */
};

/* Bits 7-10 hold how many digits an instruction number has beyond the 12 of its column, so
 * that lines stay sized by flags. */
enum {
	B_SEEK,
	B_SYNTH,
	B_AFTER_01,
	B_AFTER_11,
	B_TWI,
	B_CACHE,
	B_DCBX_ESC,
	B_WIDE,
	N_FLAG_BITS = 16
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

/* What the previous record was, for the patterns that span records. */
enum { CTX_NONE, CTX_ESC01, CTX_ESC11, CTX_TWI, CTX_SYNTH_BRANCH };

/* Checkpointed decoder state: everything a restart in the middle of a trace needs. */
struct tt6_state {
	uint64_t num;
	uint32_t pc;
	uint32_t ctx_ea;
	uint32_t twi_pc;
	uint8_t started; /* INITIAL_PC read */
	uint8_t prev_cls;
	uint8_t ctx;
	uint8_t pad;
};

static const char *const tt6_extensions[] = {"tt6", NULL};
static const char *const tt6e_extensions[] = {"tt6e", NULL};

/* No magic number: the name is the evidence. */
static int tt6_probe(const char *name, const uint8_t *head, size_t head_len)
{
	(void)head;
	(void)head_len;
	return tm_name_has_extension(name, tt6_extensions) ? 50 : 0;
}

static int tt6e_probe(const char *name, const uint8_t *head, size_t head_len)
{
	(void)head;
	(void)head_len;
	return tm_name_has_extension(name, tt6e_extensions) ? 50 : 0;
}

static void tt6_state_init(void *p)
{
	struct tt6_state *s = p;
	memset(s, 0, sizeof(*s));
	s->prev_cls = TT6_INITIAL;
}

/* TT6E's synthetic pair: checks a record against what the previous ones promise. */
static void check_pair(struct tt6_state *s, struct tt6_record *r, uint64_t off,
		       struct tm_diag *diag)
{
	if (s->ctx == CTX_TWI) {
		if (r->head.cls == TT6_FLOW && ppc_major(r->word) == 18 &&
		    r->w1 == SYNTH_BRANCH_NEXT) {
			r->head.flags |= F_SYNTH;
			s->ctx = CTX_SYNTH_BRANCH;
			return;
		}
		tm_diag_at(diag, off,
			   "the twi at pc 0x%08" PRIx32 " is not followed by the synthetic "
			   "ba 0x700 + rfi pair",
			   s->twi_pc);
	} else if (s->ctx == CTX_SYNTH_BRANCH) {
		if (r->word == PPC_RFI_WORD) {
			r->head.flags |= F_SYNTH;
			return;
		}
		tm_diag_at(diag, off,
			   "the synthetic ba 0x700 after the twi at pc 0x%08" PRIx32
			   " is not followed by rfi",
			   s->twi_pc);
	}
}

/* Decodes one escape record of count words at p; returns 1 when it is a position record,
 * which is applied to the state and yields no record. */
static int decode_escape(struct tt6_state *s, const uint8_t *p, struct tt6_record *r, uint64_t off,
			 struct tm_diag *diag)
{
	uint32_t word = tm_be32(p);
	unsigned code = esc_code(word), count = esc_count(word);
	uint32_t w1 = count > 0 ? tm_be32(p + 4) : 0, w2 = count > 1 ? tm_be32(p + 8) : 0;

	if (code == ESC_POSITION && count == POSITION_WORDS) {
		s->pc = w1;
		s->num = (uint64_t)w2 << 32 | tm_be32(p + 12);
		s->prev_cls = TT6_NO_CLASS;
		s->ctx = CTX_NONE;
		return 1;
	}
	r->head.cls = TT6_ESCAPE;
	if (sync_kind(code) >= 0 && count == 2)
		r->head.cls = TT6_SYNC;
	else if (sync_kind(code) >= 0)
		tm_diag_at(diag, off, "sync escape 0x%02x has %u words, expected 2", code, count);
	else if (code == ESC_POSITION || (code == ESC_DCBX_ADDRESS && count != 1))
		tm_diag_at(diag, off, "escape 0x%02x has %u words, expected %u", code, count,
			   code == ESC_POSITION ? POSITION_WORDS : 1);
	else if (code > 0x05 && code != ESC_DCBX_ADDRESS)
		tm_diag_at(diag, off, "unknown escape code 0x%02x (%u words kept)", code, count);
	r->pc = s->pc;
	r->num = s->num;
	r->word = word;
	r->w1 = w1;
	r->w2 = w2;
	if (s->ctx == CTX_TWI || s->ctx == CTX_SYNTH_BRANCH)
		check_pair(s, r, off, diag);
	s->ctx = code == ESC_DATA_ADDRESS && count >= 1	  ? CTX_ESC01
		 : code == ESC_DCBX_ADDRESS && count == 1 ? CTX_ESC11
							  : CTX_NONE;
	s->ctx_ea = w1;
	return 0;
}

#define NUM_WIDTH 12 /* the instruction number column */
static unsigned decimal_digits(uint64_t v);

/* The patterns that span records, for an instruction after a record that started one: a dcbx
 * address in an escape before it, TT6E's synthetic pair after a twi. */
static void instruction_context(struct tt6_state *s, struct tt6_record *r, uint64_t off, bool tt6e,
				struct tm_diag *diag)
{
	uint8_t ctx = s->ctx;
	s->ctx = CTX_NONE;
	if (ctx == CTX_ESC01 || ctx == CTX_ESC11) {
		r->head.flags |= ctx == CTX_ESC01 ? F_AFTER_01 : F_AFTER_11;
		r->ctx_ea = s->ctx_ea;
	} else if (tt6e && (ctx == CTX_TWI || ctx == CTX_SYNTH_BRANCH)) {
		s->ctx = ctx;
		check_pair(s, r, off, diag);
		if (s->ctx == ctx) /* the pattern did not advance: it is complete or broken */
			s->ctx = CTX_NONE;
	}
}

static const uint8_t record_words[4] = {
    [TT6_COMPUTE] = 1, [TT6_FLOW] = 2, [TT6_MEMORY] = 2, [TT6_MEMEXT] = 3};

/* Reports a record cut by the end of the trace and consumes what is left of it. */
static void report_cut(const struct tt6_state *s, const struct tm_decode_in *in, size_t pos,
		       uint32_t word, unsigned cls, size_t need, struct tm_diag *diag)
{
	size_t left = in->len - pos;
	if (cls == TT6_ESCAPE)
		tm_diag_truncated(diag, in->raw_off + pos,
				  "escape 0x%02x: its %u words run past the end of the trace (%zu "
				  "bytes of %zu present)",
				  esc_code(word), esc_count(word), left, need);
	else
		tm_diag_truncated(diag, in->raw_off + pos,
				  "%s record cut by the end of the trace: %zu of %zu bytes, not "
				  "decoded",
				  left < 4 ? (s->started ? "a" : "the INITIAL_PC")
					   : tt6_classes[cls],
				  left, need);
}

static int decode(void *state, const struct tm_decode_in *in, void *recs, size_t max, size_t *n_out,
		  size_t *used, struct tm_diag *diag, bool tt6e)
{
	struct tt6_state *restrict s = state; /* no record aliases the state */
	struct tt6_record *restrict out = recs;
	size_t pos = 0, n = 0;
	int ret = 0;

	while (n < max) {
		const uint8_t *p = in->buf + pos;
		size_t left = in->len - pos, need = 4;
		uint32_t word = left >= 4 ? tm_be32(p) : 0;
		unsigned cls = TT6_INITIAL, flags = 0;
		const struct ppc_op *op = ppc_op_of(word);
		if (s->started && left >= 4) {
			if (ppc_major(word) == 0)
				cls = TT6_ESCAPE;
			else
				cls = tt6e ? op->tt6e_class : op->tt6_class;
			need = cls == TT6_ESCAPE ? 4 * (1 + (size_t)esc_count(word))
						 : 4u * record_words[cls];
		}
		if (left < need) {
			if (!in->at_eof) {
				ret = -EAGAIN;
			} else if (left) {
				report_cut(s, in, pos, word, cls, need, diag);
				pos = in->len;
			}
			break;
		}
		struct tt6_record *r = &out[n];
		uint64_t off = in->raw_off + pos;
		r->pc = s->pc;
		r->num = s->num;
		r->word = word;
		r->w1 = need >= 8 ? tm_be32(p + 4) : 0;
		r->w2 = need >= 12 ? tm_be32(p + 8) : 0;
		r->ctx_ea = 0;
		r->head.flags = 0;
		if (cls == TT6_ESCAPE) {
			if (decode_escape(s, p, r, off, diag)) {
				pos += need; /* a position record: applied, no record */
				continue;
			}
			cls = r->head.cls;
		} else if (!s->started) {
			s->pc = r->pc = word;
			s->started = 1;
		} else {
			if (ppc_major(word) == PPC_TWI_MAJOR)
				flags |= F_TWI;
			if (ppc_is_cache_block_op(op))
				flags |= F_CACHE;
			r->head.flags = (uint16_t)flags;
			r->head.cls = (uint16_t)cls; /* check_pair looks at it */
			if (s->ctx != CTX_NONE)
				instruction_context(s, r, off, tt6e, diag);
			if (tt6e && (flags & F_TWI)) {
				s->ctx = CTX_TWI;
				s->twi_pc = r->pc;
			}
			/* TT6 keeps a dcbx address in an escape 0x11 unless TT6 -> TT6E would
			 * find it anyway: in an escape 0x01 just before, else 0 */
			if (tt6e && (flags & F_CACHE) &&
			    r->w1 != (r->head.flags & F_AFTER_01 ? r->ctx_ea : 0))
				r->head.flags |= F_DCBX_ESC;
			s->pc = cls == TT6_FLOW ? r->w1 : s->pc + 4;
			s->num++;
		}
		if (s->prev_cls != cls && s->prev_cls != TT6_INITIAL)
			r->head.flags |= F_SEEK;
		if (r->num >= WIDE_NUMBER)
			r->head.flags |= (uint16_t)((decimal_digits(r->num) - NUM_WIDTH) << B_WIDE);
		s->prev_cls = (uint8_t)cls;
		r->head.cls = (uint16_t)cls;
		r->head.raw_rel = (uint32_t)pos;
		r->head.raw_len = (uint32_t)need;
		pos += need;
		n++;
	}
	if (in->at_eof && pos == in->len && n < max && tt6e &&
	    (s->ctx == CTX_TWI || s->ctx == CTX_SYNTH_BRANCH)) {
		tm_diag_at(
		    diag, in->raw_off + pos,
		    "the trace ends inside the synthetic pair after the twi at pc 0x%08" PRIx32,
		    s->twi_pc);
		s->ctx = CTX_NONE;
	}
	*n_out = n;
	*used = pos;
	return ret;
}

static int tt6_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		      size_t *n_out, size_t *used, struct tm_diag *diag)
{
	return decode(state, in, recs, max, n_out, used, diag, false);
}

static int tt6e_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		       size_t *n_out, size_t *used, struct tm_diag *diag)
{
	return decode(state, in, recs, max, n_out, used, diag, true);
}

static inline const struct tt6_record *rec(const struct tm_chunk *c, size_t i)
{
	return (const struct tt6_record *)tm_chunk_rec(c, i);
}

/* dump.txt: NUMBER(12) PC WORD TEXT(36) CLASS [EXTRA]; see doc/views.md. */

#define NUM_WIDTH    12
#define PREFIX_LEN   (NUM_WIDTH + 1 + 8 + 1 + 8 + 1 + PPC_TEXT_WIDTH + 1)
#define FLOW_EXTRA   14			 /* " next=XXXXXXXX" */
#define MEMORY_EXTRA 21			 /* " ea=XXXXXXXX size=NNN" */
#define MEMEXT_EXTRA (MEMORY_EXTRA + 13) /* " xer=XXXXXXXX" */
#define SYNC_EXTRA   29			 /* " addr=XXXXXXXX count=XXXXXXXX" */

static const char spaces[64] = "                                                               ";

/* Writes v right-aligned in width columns (more when it needs more digits). */
static char *put_decimal(char *out, uint64_t v, unsigned width)
{
	char digits[20];
	unsigned n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	unsigned pad = n < width ? width - n : 0;
	memcpy(out, spaces, pad);
	out += pad;
	while (n)
		*out++ = digits[--n];
	return out;
}

static unsigned decimal_digits(uint64_t v)
{
	unsigned n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static unsigned hex_digits(uint64_t v)
{
	unsigned n = 1;
	while (v >= 16) {
		v >>= 4;
		n++;
	}
	return n;
}

static size_t class_name_len(unsigned cls)
{
	return strlen(tt6_classes[cls]);
}

static size_t dump_fixed_len(unsigned cls)
{
	static const size_t extra[TT6_N_CLASSES] = {
	    [TT6_FLOW] = FLOW_EXTRA,
	    [TT6_MEMORY] = MEMORY_EXTRA,
	    [TT6_MEMEXT] = MEMEXT_EXTRA,
	    [TT6_SYNC] = SYNC_EXTRA,
	};
	if (cls == TT6_ESCAPE)
		return 0;
	return PREFIX_LEN + class_name_len(cls) + extra[cls] + 1;
}

static size_t escape_extra_len(uint32_t word)
{
	unsigned code = esc_code(word), count = esc_count(word);
	return 8 + (code < 16 ? 2 : hex_digits(code)) + 7 + decimal_digits(count) + 9 * count;
}

static size_t wide_digits(const struct tt6_record *r)
{
	return (size_t)(r->head.flags >> B_WIDE & 15);
}

static size_t dump_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = rec(c, i);
	if (r->head.cls != TT6_ESCAPE)
		return dump_fixed_len(r->head.cls) + wide_digits(r);
	return PREFIX_LEN + class_name_len(TT6_ESCAPE) + escape_extra_len(r->word) + 1 +
	       wide_digits(r);
}

/* The TEXT column, padded to its width. */
static char *put_text(char *p, const struct tt6_record *r)
{
	size_t n;
	memcpy(p, spaces, PPC_TEXT_WIDTH);
	switch (r->head.cls) {
	case TT6_INITIAL: p[0] = '-'; break;
	case TT6_ESCAPE:
	case TT6_SYNC:
		n = (size_t)snprintf(p, PPC_TEXT_WIDTH, "escape %s", esc_name(esc_code(r->word)));
		p[n] = ' ';
		break;
	default: ppc_disasm(r->word, r->pc, p); break;
	}
	return p + PPC_TEXT_WIDTH;
}

static char *put_field(char *p, const char *name, size_t len, uint32_t v)
{
	memcpy(p, name, len);
	return tm_put_hex32(p + len, v);
}

static size_t dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = rec(c, i);
	unsigned cls = r->head.cls;
	char *p = put_decimal(out, r->num, NUM_WIDTH);
	*p++ = ' ';
	p = tm_put_hex32(p, r->pc);
	*p++ = ' ';
	p = tm_put_hex32(p, r->word);
	*p++ = ' ';
	p = put_text(p, r);
	*p++ = ' ';
	memcpy(p, tt6_classes[cls], class_name_len(cls));
	p += class_name_len(cls);
	switch (cls) {
	case TT6_FLOW: p = put_field(p, " next=", 6, r->w1); break;
	case TT6_MEMORY:
	case TT6_MEMEXT:
		p = put_field(p, " ea=", 4, r->w1);
		memcpy(p, " size=", 6);
		p = put_decimal(p + 6, ppc_access_size(ppc_op_of(r->word), r->word, r->w2), 3);
		if (cls == TT6_MEMEXT)
			p = put_field(p,
				      ppc_minor(r->word) == 533 || ppc_minor(r->word) == 661
					  ? " xer="
					  : " ctl=",
				      5, r->w2);
		break;
	case TT6_SYNC:
		p = put_field(p, " addr=", 6, r->w1);
		p = put_field(p, " count=", 7, r->w2);
		break;
	case TT6_ESCAPE: {
		unsigned count = esc_count(r->word);
		const uint8_t *words = c->raw + r->head.raw_rel + 4;
		memcpy(p, " code=0x", 8);
		p = tm_put_hex(p + 8, esc_code(r->word),
			       esc_code(r->word) < 16 ? 2 : hex_digits(esc_code(r->word)));
		memcpy(p, " words=", 7);
		p = put_decimal(p + 7, count, 0);
		for (unsigned k = 0; k < count; k++) {
			*p++ = ' ';
			p = tm_put_hex32(p, tm_be32(words + 4 * k));
		}
		break;
	}
	default: break;
	}
	*p++ = '\n';
	return (size_t)(p - out);
}

static const int16_t dump_flag_len[N_FLAG_BITS] = {
    [B_WIDE] = 1, [B_WIDE + 1] = 2, [B_WIDE + 2] = 4, [B_WIDE + 3] = 8};

static const struct tm_render_ops tt6_dump_ops = {
    .fixed_len = dump_fixed_len,
    .flag_len = dump_flag_len,
    .measure = dump_measure,
    .render = dump_render,
};

/* The bytes of a record of class cls in the trace; 0 for escapes, whose length varies. */
static size_t record_bytes(unsigned cls)
{
	return cls == TT6_ESCAPE  ? 0
	       : cls < TT6_ESCAPE ? 4 * record_words[cls]
	       : cls == TT6_SYNC  ? 12
				  : 4;
}

/* class/CLASS.tt6: the record's bytes, after a position record when the record before it in
 * the trace is of another class. */
static size_t stream_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = rec(c, i);
	return r->head.raw_len + (r->head.flags & F_SEEK ? POSITION_BYTES : 0);
}

static char *put_word(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
	return p + 4;
}

static char *put_raw(char *p, const struct tm_chunk *c, const struct tt6_record *r)
{
	memcpy(p, c->raw + r->head.raw_rel, r->head.raw_len);
	return p + r->head.raw_len;
}

static size_t stream_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = rec(c, i);
	char *p = out;
	if (r->head.flags & F_SEEK) {
		p = put_word(p, ESC_POSITION << 16 | POSITION_WORDS);
		p = put_word(p, r->pc);
		p = put_word(p, (uint32_t)(r->num >> 32));
		p = put_word(p, (uint32_t)r->num);
	}
	return (size_t)(put_raw(p, c, r) - out);
}

static const int16_t stream_flag_len[N_FLAG_BITS] = {[B_SEEK] = POSITION_BYTES};

static const struct tm_render_ops tt6_stream_ops = {
    .fixed_len = record_bytes,
    .flag_len = stream_flag_len,
    .measure = stream_measure,
    .render = stream_render,
};

/* convert/NAME.tt6e from TT6: dcbx gain an address, twi gain the synthetic pair, escapes 0x11
 * are dropped. */
static size_t to_tt6e_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = rec(c, i);
	switch (r->head.cls) {
	case TT6_COMPUTE: return r->head.flags & F_TWI ? 4 + 16 : r->head.flags & F_CACHE ? 8 : 4;
	case TT6_ESCAPE:
		return esc_code(r->word) == ESC_DCBX_ADDRESS && esc_count(r->word) == 1
			   ? 0
			   : r->head.raw_len;
	default: return r->head.raw_len;
	}
}

static size_t to_tt6e_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = rec(c, i);
	char *p = out;
	if (r->head.cls != TT6_COMPUTE)
		return to_tt6e_measure(c, i) ? (size_t)(put_raw(p, c, r) - out) : 0;
	p = put_word(p, r->word);
	if (r->head.flags & F_TWI) {
		p = put_word(p, SYNTH_BRANCH_WORD);
		p = put_word(p, SYNTH_BRANCH_NEXT);
		p = put_word(p, PPC_RFI_WORD);
		p = put_word(p, r->pc + 4);
	} else if (r->head.flags & F_CACHE) {
		p = put_word(p, r->head.flags & (F_AFTER_01 | F_AFTER_11) ? r->ctx_ea : 0);
	}
	return (size_t)(p - out);
}

static const int16_t to_tt6e_flag_len[N_FLAG_BITS] = {[B_TWI] = 16, [B_CACHE] = 4};

static const struct tm_render_ops tt6_to_tt6e_ops = {
    .fixed_len = record_bytes,
    .flag_len = to_tt6e_flag_len,
    .measure = to_tt6e_measure,
    .render = to_tt6e_render,
};

/* convert/NAME.tt6 from TT6E: the synthetic pairs are dropped, dcbx lose their address, which
 * an escape 0x11 keeps unless it is 0 or an escape 0x01 just before already says it. */
static size_t to_tt6_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = rec(c, i);
	if (r->head.flags & F_SYNTH)
		return 0;
	if (r->head.cls == TT6_MEMORY && (r->head.flags & F_CACHE))
		return (r->head.flags & F_DCBX_ESC) ? 12 : 4;
	return r->head.raw_len;
}

static size_t to_tt6_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = rec(c, i);
	char *p = out;
	if (r->head.flags & F_SYNTH)
		return 0;
	if (!(r->head.cls == TT6_MEMORY && (r->head.flags & F_CACHE)))
		return (size_t)(put_raw(p, c, r) - out);
	if ((r->head.flags & F_DCBX_ESC)) {
		p = put_word(p, ESC_DCBX_ADDRESS << 16 | 1);
		p = put_word(p, r->w1);
	}
	return (size_t)(put_word(p, r->word) - out);
}

/* synthetic flow records vanish; a dcbx loses its address word, and may gain an escape */
static const int16_t to_tt6_flag_len[N_FLAG_BITS] = {
    [B_SYNTH] = -8, [B_CACHE] = -4, [B_DCBX_ESC] = 8};

static const struct tm_render_ops tt6e_to_tt6_ops = {
    .fixed_len = record_bytes,
    .flag_len = to_tt6_flag_len,
    .measure = to_tt6_measure,
    .render = to_tt6_render,
};

/* sync.txt: NUMBER PC KIND(9) ADDRESS COUNT */
static size_t sync_measure(const struct tm_chunk *c, size_t i)
{
	return NUM_WIDTH + 1 + 8 + 1 + 9 + 1 + 8 + 1 + decimal_digits(rec(c, i)->w2) + 1 +
	       wide_digits(rec(c, i));
}

static size_t sync_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = rec(c, i);
	const char *kind = sync_kinds[sync_kind(esc_code(r->word))];
	char *p = put_decimal(out, r->num, NUM_WIDTH);
	*p++ = ' ';
	p = tm_put_hex32(p, r->pc);
	*p++ = ' ';
	memcpy(p, spaces, 9);
	memcpy(p, kind, strlen(kind));
	p += 9;
	*p++ = ' ';
	p = tm_put_hex32(p, r->w1);
	*p++ = ' ';
	p = put_decimal(p, r->w2, 0);
	*p++ = '\n';
	return (size_t)(p - out);
}

static const struct tm_render_ops tt6_sync_ops = {
    .measure = sync_measure,
    .render = sync_render,
};

/* convert/NAME.din: "2 PC" per instruction, then "0 EA" or "1 EA" per word accessed. */
#define DIN_LINE_LEN 11

/* Data lines of a record and their label; 0 lines for no data access. */
static unsigned din_refs(const struct tt6_record *r, char *label)
{
	if (r->head.cls != TT6_MEMORY && r->head.cls != TT6_MEMEXT)
		return 0;
	const struct ppc_op *op = ppc_op_of(r->word);
	*label = op->access == PPC_STORE || op->access == PPC_ZERO ? '1' : '0';
	switch (op->access) {
	case PPC_LOAD:
	case PPC_STORE:
		if (op->sizing == PPC_SIZE_FIXED || op->sizing == PPC_SIZE_DS)
			return 1;
		return (ppc_access_size(op, r->word, r->w2) + 3) / 4;
	case PPC_TOUCH:
	case PPC_ZERO: return 1;
	default: return 0;
	}
}

static size_t din_fixed_len(unsigned cls)
{
	return cls == TT6_COMPUTE || cls == TT6_FLOW ? DIN_LINE_LEN : 0;
}

static size_t din_measure(const struct tm_chunk *c, size_t i)
{
	char label;
	return DIN_LINE_LEN * (1 + (size_t)din_refs(rec(c, i), &label));
}

static char *din_line(char *p, char label, uint32_t addr)
{
	p[0] = label;
	p[1] = ' ';
	tm_put_hex32(p + 2, addr);
	p[10] = '\n';
	return p + DIN_LINE_LEN;
}

static size_t din_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = rec(c, i);
	char label = '0';
	unsigned refs = din_refs(r, &label);
	char *p = din_line(out, '2', r->pc);
	for (unsigned k = 0; k < refs; k++)
		p = din_line(p, label, r->w1 + 4 * k);
	return (size_t)(p - out);
}

static const struct tm_render_ops tt6_din_ops = {
    .fixed_len = din_fixed_len,
    .measure = din_measure,
    .render = din_render,
};

static const struct tm_view_desc tt6_extra_views[] = {
    {.path = "sync.txt", .class_mask = CLASS_BIT(TT6_SYNC), .ops = &tt6_sync_ops},
    {.path = "convert/%s.tt6e", .class_mask = ~0ull, .ops = &tt6_to_tt6e_ops},
    {.path = "convert/%s.din", .class_mask = INSTRUCTION_BITS, .ops = &tt6_din_ops},
};

static const struct tm_view_desc tt6e_extra_views[] = {
    {.path = "sync.txt", .class_mask = CLASS_BIT(TT6_SYNC), .ops = &tt6_sync_ops},
    {.path = "convert/%s.tt6", .class_mask = ~0ull, .ops = &tt6e_to_tt6_ops},
    {.path = "convert/%s.din", .class_mask = INSTRUCTION_BITS, .ops = &tt6_din_ops},
};

/* Statistics. */

#define SIZE_BINS     256
#define TOP_MNEMONICS 20

struct tt6_stats {
	uint64_t bins[1u << 16]; /* instructions by ppc_bin_of */
	uint64_t loads[SIZE_BINS], stores[SIZE_BINS];
	uint64_t escape_codes[1024];
	uint64_t sync[4];
	uint64_t cache_ops, taken, not_taken, unconditional, twi_pairs;
	uint32_t initial_pc;
	int has_initial;
	uint64_t last_data_line;
	struct tm_footprint pcs;  /* PC >> 2 */
	struct tm_footprint data; /* EA >> 6 */
};

static int tt6_stats_init(void *p)
{
	struct tt6_stats *s = p;
	s->last_data_line = UINT64_MAX;
	tm_footprint_init(&s->pcs);
	tm_footprint_init(&s->data);
	return 0;
}

static void count_access(struct tt6_stats *s, const struct tt6_record *r)
{
	const struct ppc_op *op = ppc_op_of(r->word);
	unsigned size = ppc_access_size(op, r->word, r->w2);
	if (op->access == PPC_LOAD)
		s->loads[size]++;
	else if (op->access == PPC_STORE)
		s->stores[size]++;
	else if (op->sizing == PPC_SIZE_NONE && op->tt6_class == PPC_COMPUTE)
		s->cache_ops++;
	if (op->access == PPC_NO_ACCESS)
		return;
	uint64_t first = r->w1 >> 6, last = ((uint64_t)r->w1 + (size ? size - 1 : 0)) >> 6;
	for (uint64_t line = first; line <= last; line++) {
		if (line == s->last_data_line)
			continue;
		s->last_data_line = line;
		tm_footprint_add(&s->data, line);
	}
}

static void tt6_stats_update(void *p, const struct tm_chunk *c)
{
	struct tt6_stats *s = p;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct tt6_record *r = rec(c, i);
		switch (r->head.cls) {
		case TT6_INITIAL:
			s->initial_pc = r->word;
			s->has_initial = 1;
			continue;
		case TT6_SYNC: s->sync[sync_kind(esc_code(r->word))]++; /* fall through */
		case TT6_ESCAPE: s->escape_codes[esc_code(r->word)]++; continue;
		case TT6_FLOW:
			if (!ppc_is_conditional(r->word))
				s->unconditional++;
			else if (r->w1 == r->pc + 4)
				s->not_taken++;
			else
				s->taken++;
			if ((r->head.flags & F_SYNTH) && r->word == PPC_RFI_WORD)
				s->twi_pairs++;
			break;
		case TT6_MEMORY:
		case TT6_MEMEXT: count_access(s, r); break;
		default: break;
		}
		s->bins[ppc_bin_of(r->word)]++;
		tm_footprint_add(&s->pcs, r->pc >> 2);
	}
}

struct name_count {
	char name[24];
	uint64_t count;
};

static int by_count_desc(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The most frequent base mnemonics: bins named, bins of one name merged, sorted. */
static json_object *top_mnemonics(const struct tt6_stats *s)
{
	size_t n = 0, cap = 64;
	struct name_count *v = malloc(cap * sizeof(*v));
	json_object *obj = json_object_new_object();
	if (!v || !obj)
		goto out;
	for (unsigned b = 0; b < (1u << 16); b++) {
		if (!s->bins[b])
			continue;
		char name[24];
		ppc_bin_name(b >> 10, b & 0x3ff, name, sizeof(name));
		size_t k = 0;
		while (k < n && strcmp(v[k].name, name) != 0)
			k++;
		if (k == n) {
			if (n == cap) {
				struct name_count *w = realloc(v, 2 * cap * sizeof(*v));
				if (!w)
					goto out;
				v = w;
				cap *= 2;
			}
			memcpy(v[n].name, name, sizeof(name));
			v[n++].count = 0;
		}
		v[k].count += s->bins[b];
	}
	qsort(v, n, sizeof(*v), by_count_desc);
	for (size_t k = 0; k < n && k < TOP_MNEMONICS; k++)
		json_object_object_add(obj, v[k].name, json_object_new_int64((int64_t)v[k].count));
	free(v);
	return obj;
out:
	free(v);
	json_object_put(obj);
	return NULL;
}

static json_object *size_histogram(const uint64_t *bins)
{
	json_object *obj = json_object_new_object(), *by_size = json_object_new_object();
	uint64_t total = 0;
	if (!obj || !by_size) {
		json_object_put(obj);
		json_object_put(by_size);
		return NULL;
	}
	for (unsigned k = 0; k < SIZE_BINS; k++) {
		char key[8];
		if (!bins[k])
			continue;
		total += bins[k];
		snprintf(key, sizeof(key), "%u", k);
		json_object_object_add(by_size, key, json_object_new_int64((int64_t)bins[k]));
	}
	json_object_object_add(obj, "total", json_object_new_int64((int64_t)total));
	json_object_object_add(obj, "by_size", by_size);
	return obj;
}

static json_object *int_object(const char *const *names, const uint64_t *values, unsigned n)
{
	json_object *obj = json_object_new_object();
	for (unsigned k = 0; obj && k < n; k++)
		json_object_object_add(obj, names[k], json_object_new_int64((int64_t)values[k]));
	return obj;
}

static int stats_finish(void *p, json_object *obj, struct tm_diag *diag, bool tt6e)
{
	struct tt6_stats *s = p;
	uint64_t instructions = 0;
	char pc[16];
	for (unsigned b = 0; b < (1u << 16); b++)
		instructions += s->bins[b];
	snprintf(pc, sizeof(pc), "0x%08" PRIx32, s->initial_pc);

	json_object *escapes = json_object_new_object();
	for (unsigned code = 0; escapes && code < 1024; code++) {
		char key[8];
		if (!s->escape_codes[code])
			continue;
		snprintf(key, sizeof(key), "0x%02x", code);
		json_object_object_add(escapes, key,
				       json_object_new_int64((int64_t)s->escape_codes[code]));
	}
	static const char *const branch_keys[] = {"conditional_taken", "conditional_not_taken",
						  "unconditional"};
	uint64_t branches[] = {s->taken, s->not_taken, s->unconditional};

	json_object_object_add(obj, "instructions", json_object_new_int64((int64_t)instructions));
	json_object_object_add(obj, "initial_pc",
			       s->has_initial ? json_object_new_string(pc) : NULL);
	json_object_object_add(obj, "top_mnemonics", top_mnemonics(s));
	json_object_object_add(obj, "loads", size_histogram(s->loads));
	json_object_object_add(obj, "stores", size_histogram(s->stores));
	json_object_object_add(obj, "cache_ops", json_object_new_int64((int64_t)s->cache_ops));
	json_object_object_add(obj, "branches", int_object(branch_keys, branches, 3));
	json_object_object_add(obj, "distinct_pcs",
			       json_object_new_int64((int64_t)tm_footprint_count(&s->pcs)));
	json_object_object_add(
	    obj, "code_lines_64b",
	    json_object_new_int64((int64_t)tm_footprint_count_groups(&s->pcs, 4)));
	json_object_object_add(
	    obj, "code_pages_4k",
	    json_object_new_int64((int64_t)tm_footprint_count_groups(&s->pcs, 10)));
	json_object_object_add(obj, "data_lines_64b",
			       json_object_new_int64((int64_t)tm_footprint_count(&s->data)));
	json_object_object_add(
	    obj, "data_pages_4k",
	    json_object_new_int64((int64_t)tm_footprint_count_groups64(&s->data)));
	json_object_object_add(obj, "escape_codes", escapes);
	json_object_object_add(obj, "sync_events", int_object(sync_kinds, s->sync, 4));
	if (tt6e)
		json_object_object_add(obj, "twi_pairs",
				       json_object_new_int64((int64_t)s->twi_pairs));
	if (s->pcs.err || s->data.err)
		tm_diag_note(diag,
			     "out of memory counting distinct addresses: counts are lower bounds");
	return 0;
}

static int tt6_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	return stats_finish(p, obj, diag, false);
}

static int tt6e_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	return stats_finish(p, obj, diag, true);
}

static void tt6_stats_free(void *p)
{
	struct tt6_stats *s = p;
	tm_footprint_free(&s->pcs);
	tm_footprint_free(&s->data);
}

#define TT6_COMMON                                                                                 \
	.classes = tt6_classes, .n_classes = TT6_N_CLASSES,                                        \
	.common_classes = CLASS_BIT(TT6_INITIAL), .class_stream = &tt6_stream_ops,                 \
	.record_size = sizeof(struct tt6_record), .state_size = sizeof(struct tt6_state),          \
	.chunk_records = 16384, .state_init = tt6_state_init, .dump = &tt6_dump_ops,               \
	.stats_size = sizeof(struct tt6_stats), .stats_init = tt6_stats_init,                      \
	.stats_update = tt6_stats_update, .stats_free = tt6_stats_free, .n_extra_views = 3

const struct tm_format tm_format_tt6 = {
    .name = "tt6",
    .description = "PowerPC TT6 instruction trace (Apple Amber)",
    .recognition = "extension .tt6",
    .extensions = tt6_extensions,
    .class_ext = "tt6",
    .probe = tt6_probe,
    .decode = tt6_decode,
    .stats_finish = tt6_stats_finish,
    .extra_views = tt6_extra_views,
    TT6_COMMON,
};

const struct tm_format tm_format_tt6e = {
    .name = "tt6e",
    .description = "PowerPC TT6E instruction trace (Apple Amber)",
    .recognition = "extension .tt6e",
    .extensions = tt6e_extensions,
    .class_ext = "tt6e",
    .probe = tt6e_probe,
    .decode = tt6e_decode,
    .stats_finish = tt6e_stats_finish,
    .extra_views = tt6e_extra_views,
    TT6_COMMON,
};
