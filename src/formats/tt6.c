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

#include "tt6.h"
#include "calls/calls.h"
#include "tracemount/diag.h"
#include "tracemount/util.h"

/* What the previous record was, for the patterns that span records. */
enum { CTX_NONE, CTX_ESC01, CTX_ESC11, CTX_ESC12, CTX_TWI, CTX_SYNTH_BRANCH };

/* Checkpointed decoder state: everything a restart in the middle of a trace needs. */
struct tt6_state {
	uint64_t num;
	uint32_t pc;
	uint32_t ctx_ea;
	uint32_t twi_pc;
	uint8_t started; /* INITIAL_PC read */
	uint8_t prev_cls;
	uint8_t ctx;
	uint8_t lends_ea; /* the last record is an escape 0x01 or 0x11 (position records aside) */
};

static const char *const tt6_extensions[] = {"tt6", NULL};
static const char *const tt6e_extensions[] = {"tt6e", NULL};

/* No magic number: the name is the evidence, and weak (50), so that a FULL trace named .tt6
 * is read as FULL, whose magic word outbids it. */
static int tt6_name_bid(const char *name)
{
	return tm_name_has_extension(name, tt6_extensions) ? 50 : 0;
}

static int tt6e_name_bid(const char *name)
{
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
	if (code == ESC_DCBX_NO_ADDRESS && count == 0) {
		s->ctx = CTX_ESC12; /* a mark on the next record, not a record */
		return 1;
	}
	r->head.cls = TT6_ESCAPE;
	if (sync_kind(code) >= 0 && count == 2)
		r->head.cls = TT6_SYNC;
	else if (sync_kind(code) >= 0)
		tm_diag_at(diag, off, "sync escape 0x%02x has %u words, expected 2", code, count);
	else if (code == ESC_POSITION || (code == ESC_DCBX_ADDRESS && count != 1) ||
		 (code == ESC_DCBX_NO_ADDRESS && count != 0))
		tm_diag_at(diag, off, "escape 0x%02x has %u words, expected %u", code, count,
			   code == ESC_POSITION ? POSITION_WORDS : code == ESC_DCBX_ADDRESS);
	else if (code > 0x05 && code != ESC_DCBX_ADDRESS && code != ESC_DCBX_NO_ADDRESS)
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
	s->lends_ea = s->ctx != CTX_NONE;
	return 0;
}

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
	} else if (ctx == CTX_ESC12) {
		if (r->head.flags & F_CACHE)
			r->head.flags |= s->lends_ea ? F_NO_EA | F_NO_EA_KEPT : F_NO_EA;
		else
			tm_diag_at(diag, off,
				   "escape 0x12 (no address) before an instruction that is not a "
				   "cache-block operation: ignored");
	} else if (tt6e && (ctx == CTX_TWI || ctx == CTX_SYNTH_BRANCH)) {
		s->ctx = ctx;
		check_pair(s, r, off, diag);
		if (s->ctx == ctx) /* the pattern did not advance: it is complete or broken */
			s->ctx = CTX_NONE;
	}
}

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
						 : tt6_record_bytes(cls);
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
		r->head.group = 0;
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
			r->head.cls = (uint8_t)cls; /* check_pair looks at it */
			if (s->ctx != CTX_NONE)
				instruction_context(s, r, off, tt6e, diag);
			s->lends_ea = 0;
			if (tt6e && (flags & F_TWI)) {
				s->ctx = CTX_TWI;
				s->twi_pc = r->pc;
			}
			/* TT6 keeps a dcbx address in an escape 0x11 unless TT6 -> TT6E would
			 * find it anyway, in an escape 0x01 just before; an address 0 too, since
			 * a TT6 dcbx without an escape has no address */
			if (tt6e && (flags & F_CACHE) && !(r->head.flags & F_NO_EA) &&
			    !((r->head.flags & F_AFTER_01) && r->w1 == r->ctx_ea))
				r->head.flags |= F_DCBX_ESC;
			if (!tt6e && (flags & F_CACHE) &&
			    !(r->head.flags & (F_AFTER_01 | F_AFTER_11)))
				r->head.flags |= F_NO_EA; /* TT6 records none */
			s->pc = cls == TT6_FLOW ? r->w1 : s->pc + 4;
			s->num++;
		}
		if (s->prev_cls != cls && s->prev_cls != TT6_INITIAL)
			r->head.flags |= F_SEEK;
		if (r->num >= WIDE_NUMBER)
			r->head.flags |=
			    (uint16_t)((tm_decimal_digits(r->num) - NUM_WIDTH) << B_WIDE);
		s->prev_cls = (uint8_t)cls;
		r->head.cls = (uint8_t)cls;
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

bool tt6_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct tt6_record *r = tt6_rec(c, i);
	if (!(CLASS_BIT(r->head.cls) & INSTRUCTION_BITS))
		return false;
	*out = (struct tm_insn){.pc = r->pc, .size = 4};
	if (r->head.cls == TT6_FLOW) { /* w1: the next PC */
		out->flow = !ppc_is_conditional(r->word) ? TM_FLOW_JUMP
			    : r->w1 == r->pc + 4	 ? TM_FLOW_NOT_TAKEN
							 : TM_FLOW_TAKEN;
		/* a branch not taken neither calls nor returns: calls/ need not guess */
		out->call = out->flow == TM_FLOW_NOT_TAKEN ? TM_INSN_PLAIN
							   : (uint8_t)tm_classify_ppc(r->word);
		out->target = r->w1;
		out->known = TM_INSN_HAS_TARGET;
	}
	return true;
}

/* An instruction's fetch, and a memory instruction's first and (on another page) last byte:
 * the pages stats.json's code_pages_4k and data_pages_4k count (tt6_stats.c). */
unsigned tt6_accesses(const struct tm_chunk *c, size_t i, struct tm_access *out)
{
	const struct tt6_record *r = tt6_rec(c, i);
	if (!(CLASS_BIT(r->head.cls) & INSTRUCTION_BITS))
		return 0;
	unsigned n = 0;
	out[n++] = (struct tm_access){.addr = r->pc, .kind = TM_ACCESS_FETCH};
	if (r->head.cls != TT6_MEMORY && r->head.cls != TT6_MEMEXT)
		return n;
	const struct ppc_op *op = ppc_op_of(r->word);
	if (op->access == PPC_NO_ACCESS || (r->head.flags & F_NO_EA))
		return n;
	unsigned size = ppc_access_size(op, r->word, r->w2);
	uint8_t kind = op->access == PPC_STORE ? TM_ACCESS_WRITE : TM_ACCESS_READ;
	uint64_t last = (uint64_t)r->w1 + (size ? size - 1 : 0);
	out[n++] = (struct tm_access){.addr = r->w1, .kind = kind};
	if (last >> 12 != r->w1 >> 12) /* at most 128 bytes: two pages at most */
		out[n++] = (struct tm_access){.addr = last, .kind = kind};
	return n;
}

#define TT6_COMMON                                                                                 \
	.classes = tt6_classes, .n_classes = TT6_N_CLASSES,                                        \
	.common_classes = CLASS_BIT(TT6_INITIAL), .record_size = sizeof(struct tt6_record),        \
	.state_size = sizeof(struct tt6_state), .chunk_records = 16384,                            \
	.state_init = tt6_state_init, .dump = &tt6_dump_ops,                                       \
	.stats_size = sizeof(struct tt6_trace_stats), .stats_init = tt6_trace_stats_init,          \
	.stats_update = tt6_trace_stats_update, .stats_free = tt6_trace_stats_free,                \
	.instruction = tt6_instruction, .accesses = tt6_accesses, .table_views = tt6_table_views,  \
	.n_table_views = TT6_N_TABLE_VIEWS

const struct tm_format tm_format_tt6 = {
    .name = "tt6",
    .description = "PowerPC TT6 instruction trace (Apple Amber)",
    .recognition = "extension .tt6",
    .extensions = tt6_extensions,
    .class_ext = "tt6",
    .class_stream = &tt6_stream_ops,
    .name_bid = tt6_name_bid,
    .decode = tt6_decode,
    .stats_finish = tt6_stats_finish,
    .tables_finish = tt6_tables_finish,
    .extra_views = tt6_extra_views,
    .n_extra_views = ARRAY_SIZE(tt6_extra_views),
    TT6_COMMON,
};

const struct tm_format tm_format_tt6e = {
    .name = "tt6e",
    .description = "PowerPC TT6E instruction trace (Apple Amber)",
    .recognition = "extension .tt6e",
    .extensions = tt6e_extensions,
    .class_ext = "tt6e",
    .class_stream = &tt6e_stream_ops,
    .name_bid = tt6e_name_bid,
    .decode = tt6e_decode,
    .stats_finish = tt6e_stats_finish,
    .tables_finish = tt6e_tables_finish,
    .extra_views = tt6e_extra_views,
    .n_extra_views = ARRAY_SIZE(tt6e_extra_views),
    TT6_COMMON,
};
