/* FULL PowerPC traces (specs/000_97974b8c72fb256c.txt, "FULL trace format"): the whole user
 * state before every instruction. Decisions: doc/formats.md, "FULL".
 *
 *   word 0      0xA1118E17
 *   then        records of one layout, all big-endian:
 *     1004      opcode | ppc_thread_state (160) | ppc_float_state (264) | ppc_vector_state (576)
 *     1008      opcode | pad (4) | thread | float | vector       (the pad after the opcode)
 *     1008      opcode | thread | pad (4) | float | vector       (a natural C struct)
 *
 * The layout is chosen once, from the first records: the one under which successive PCs follow
 * (PC + 4, or the branch target the registers give), then the one that divides the file. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "full.h"
#include "tracemount/diag.h"
#include "tracemount/util.h"

static const char *const full_classes[FULL_N_CLASSES] = {"compute", "flow", "memory", "memext"};
static const char *const full_tables[] = {"plots/registers.svg"};

#define LAYOUT_UNKNOWN 0xff

/* Checkpointed decoder state: the previous record is kept whole, since a record shows the
 * registers that changed since it. */
struct full_state {
	uint64_t num;
	uint32_t expect_pc; /* where the next instruction should be */
	uint32_t prev_pc;
	uint8_t started; /* the magic word consumed */
	uint8_t layout;
	uint8_t classes_seen;
	uint8_t pad[5];
	uint8_t prev[FULL_MAX_RECORD]; /* the previous record, once num > 0 */
};

/* The magic word, whatever the name: FULL traces have no extension of their own. */
static int full_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	(void)name;
	return head_len >= 4 && tm_be32(head) == FULL_MAGIC ? 95 : 0;
}

static void full_state_init(void *p)
{
	struct full_state *s = p;
	memset(s, 0, sizeof(*s));
	s->layout = LAYOUT_UNKNOWN;
}

/* Where the instruction after the record at rec goes, by its own opcode and registers. */
static uint32_t next_pc_of(const uint8_t *rec, const struct full_layout *l)
{
	const uint8_t *thread = rec + l->thread;
	uint32_t word = tm_be32(rec), pc = tm_be32(thread + TS_SRR0);
	struct ppc_branch_regs regs = {tm_be32(thread + TS_CR), tm_be32(thread + TS_LR),
				       tm_be32(thread + TS_CTR)};
	return ppc_op_of(word)->tt6e_class == PPC_FLOW ? ppc_next_pc(word, pc, &regs) : pc + 4;
}

/* Scores a layout on the first records of buf: 2 for each PC that follows from the record
 * before, 1 for each aligned PC, 1 if the bytes are the whole rest of the trace and divide. */
static unsigned layout_score(const uint8_t *buf, size_t len, bool whole,
			     const struct full_layout *l)
{
	size_t n = len / l->size;
	unsigned score = whole && len % l->size == 0 ? 1 : 0;
	if (n > FULL_DETECT_RECS)
		n = FULL_DETECT_RECS;
	for (size_t k = 0; k < n; k++) {
		const uint8_t *rec = buf + k * l->size;
		uint32_t pc = tm_be32(rec + l->thread + TS_SRR0);
		score += (pc & 3) == 0;
		if (k + 1 < n && tm_be32(rec + l->size + l->thread + TS_SRR0) == next_pc_of(rec, l))
			score += 2;
	}
	return score;
}

static uint8_t choose_layout(const struct tm_decode_in *in, size_t pos, struct tm_diag *diag)
{
	const uint8_t *buf = in->buf + pos;
	size_t len = in->len - pos;
	/* the file size counts only when all of it is in view, as in every read of chunk 0 */
	bool whole = in->at_eof && len < (size_t)FULL_DETECT_RECS * FULL_MAX_RECORD;
	unsigned best = FULL_PACKED, best_score = 0, max_score = 0;
	for (unsigned k = 0; k < FULL_N_LAYOUTS; k++) {
		unsigned score = layout_score(buf, len, whole, &full_layouts[k]);
		if (score > best_score) {
			best = k;
			best_score = score;
		}
	}
	size_t n = len / full_layouts[best].size;
	if (n > FULL_DETECT_RECS)
		n = FULL_DETECT_RECS;
	max_score = 3 * (unsigned)n - (n ? 2 : 0) + (whole ? 1 : 0);
	if (n >= 2 && 2 * best_score < max_score)
		tm_diag_at(
		    diag, in->raw_off + pos,
		    "the record size fits neither layout: the PCs of the first %zu records "
		    "do not follow as records of 1004 or 1008 bytes; read as %s records of %u "
		    "bytes",
		    n, full_layouts[best].name, full_layouts[best].size);
	return (uint8_t)best;
}

/* Bit n set when the n-th of count fields of width bytes differs between a and b. */
static uint32_t changed_fields(const uint8_t *a, const uint8_t *b, unsigned count, unsigned width)
{
	uint32_t mask = 0;
	for (unsigned n = 0; n < count; n++)
		if (memcmp(a + n * width, b + n * width, width) != 0)
			mask |= 1u << n;
	return mask;
}

static void compare_with(struct full_record *r, const uint8_t *rec, const uint8_t *prev,
			 const struct full_layout *l)
{
	r->gpr_changed = changed_fields(rec + l->thread + TS_GPR, prev + l->thread + TS_GPR, 32, 4);
	r->fpr_changed = changed_fields(rec + l->fp + FS_FPR, prev + l->fp + FS_FPR, 32, 8);
	r->vr_changed = changed_fields(rec + l->vector + VS_VR, prev + l->vector + VS_VR, 32, 16);
	r->spr_changed = 0;
	for (unsigned k = 0; k < FULL_N_SPRS; k++) {
		size_t off =
		    (size_t)(full_part(rec, l, full_sprs[k].part) - rec) + full_sprs[k].off;
		if (memcmp(rec + off, prev + off, 4) != 0)
			r->spr_changed |= (uint16_t)(1u << k);
	}
}

/* Fills r from the record at rec: what TT6 would have recorded, and the flags. */
static void decode_record(struct full_state *s, struct full_record *r, const uint8_t *rec,
			  const uint8_t *prev, uint64_t off, struct tm_diag *diag)
{
	const struct full_layout *l = &full_layouts[s->layout];
	const uint8_t *thread = rec + l->thread;
	uint32_t word = tm_be32(rec), pc = tm_be32(thread + TS_SRR0);
	const struct ppc_op *op = ppc_op_of(word);
	unsigned cls = op->tt6e_class, flags = 0;

	memset(r, 0, sizeof(*r));
	r->tt.pc = pc;
	r->tt.word = word;
	r->tt.num = s->num;
	r->layout = s->layout;
	if (cls == PPC_FLOW) {
		r->tt.w1 = next_pc_of(rec, l);
	} else if (cls == PPC_MEMORY || cls == PPC_MEMEXT) {
		r->tt.w1 = ppc_effective_address(word, thread + TS_GPR);
		if (cls == PPC_MEMEXT) /* lswx/stswx: the XER; dst/dstst: rB */
			r->tt.w2 = op->sizing == PPC_SIZE_STRING_XER
				       ? tm_be32(thread + TS_XER)
				       : tm_be32(thread + TS_GPR + 4 * ((word >> 11) & 31));
	}
	if (ppc_major(word) == PPC_TWI_MAJOR)
		flags |= F_TWI;
	if (ppc_is_cache_block_op(op))
		flags |= F_CACHE;
	if (s->num == 0)
		flags |= F_TRACE_FIRST;
	if (!(s->classes_seen >> cls & 1))
		flags |= F_CLASS_FIRST;
	if (s->num >= WIDE_NUMBER)
		flags |= (unsigned)(tm_decimal_digits(s->num) - NUM_WIDTH) << B_WIDE;
	if (pc & 3)
		tm_diag_at(diag, off,
			   "instruction %" PRIu64 ": pc 0x%08" PRIx32 " is not word-aligned",
			   s->num, pc);
	if (prev) {
		compare_with(r, rec, prev, l);
		if (pc != s->expect_pc) {
			flags |= F_JUMP;
			tm_diag_at(diag, off,
				   "instruction %" PRIu64 " at pc 0x%08" PRIx32
				   " does not follow the one at 0x%08" PRIx32
				   ", which leads to 0x%08" PRIx32,
				   s->num, pc, s->prev_pc, s->expect_pc);
		}
	}
	r->tt.head.cls = (uint8_t)cls;
	r->tt.head.flags = (uint16_t)flags;
	s->classes_seen |= (uint8_t)(1u << cls);
	s->expect_pc = cls == PPC_FLOW ? r->tt.w1 : pc + 4;
	s->prev_pc = pc;
	s->num++;
}

static int full_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		       size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct full_state *restrict s = state;
	struct full_record *restrict out = recs;
	const uint8_t *prev = s->num ? s->prev : NULL;
	size_t pos = 0, n = 0;
	int ret = 0;

	if (!s->started) {
		if (in->len < 4 && !in->at_eof) {
			ret = -EAGAIN;
			goto out;
		}
		if (in->len < 4) {
			if (in->len)
				tm_diag_truncated(
				    diag, in->raw_off,
				    "the magic word is cut by the end of the trace: %zu "
				    "of 4 bytes",
				    in->len);
			pos = in->len;
			goto out;
		}
		if (tm_be32(in->buf) != FULL_MAGIC)
			tm_diag_at(diag, in->raw_off,
				   "bad magic 0x%08" PRIx32 ", expected 0xa1118e17: read as FULL "
				   "records all the same",
				   tm_be32(in->buf));
		s->started = 1;
		pos = 4;
	}
	if (s->layout == LAYOUT_UNKNOWN) {
		if (in->len - pos < (size_t)FULL_DETECT_RECS * FULL_MAX_RECORD && !in->at_eof) {
			ret = -EAGAIN;
			goto out;
		}
		s->layout = choose_layout(in, pos, diag);
	}
	size_t size = full_layouts[s->layout].size;
	while (n < max) {
		size_t left = in->len - pos;
		if (left < size) {
			if (!in->at_eof) {
				ret = -EAGAIN;
			} else if (left) {
				tm_diag_truncated(diag, in->raw_off + pos,
						  "instruction %" PRIu64
						  " is cut by the end of the "
						  "trace: %zu of %zu bytes, not decoded",
						  s->num, left, size);
				pos = in->len;
			}
			break;
		}
		const uint8_t *rec = in->buf + pos;
		decode_record(s, &out[n], rec, prev, in->raw_off + pos, diag);
		out[n].tt.head.raw_rel = (uint32_t)pos;
		out[n].tt.head.raw_len = (uint32_t)size;
		prev = rec;
		pos += size;
		n++;
	}
	if (n) /* the next call compares its first record with this call's last */
		memcpy(s->prev, prev, size);
out:
	*n_out = n;
	*used = pos;
	return ret;
}

/* TT6's instruction, with the stack pointer: r1, which a FULL record holds as it was before
 * its instruction (the PowerPC ABIs keep the stack pointer there). */
static bool full_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct full_record *r = full_rec(c, i);
	if (!tt6_instruction(c, i, out))
		return false;
	const struct full_layout *l = &full_layouts[r->layout < FULL_N_LAYOUTS ? r->layout : 0];
	if (r->layout < FULL_N_LAYOUTS && r->tt.head.raw_len >= l->size) {
		out->sp = tm_be32(full_bytes(c, r) + l->thread + TS_GPR + 4);
		out->known |= TM_INSN_HAS_SP;
	}
	return true;
}

const struct tm_format tm_format_full = {
    .name = "full",
    .description = "PowerPC FULL trace: all user registers per instruction (Apple Amber)",
    .recognition = "magic 0xA1118E17 (any name)",
    .classes = full_classes,
    .n_classes = FULL_N_CLASSES,
    .class_ext = "full",
    .class_stream = &full_stream_ops,
    .record_size = sizeof(struct full_record),
    .state_size = sizeof(struct full_state),
    .stats_size = sizeof(struct full_stats),
    .chunk_records = 256,
    .content_bid = full_content_bid,
    .content_bid_max = 95,
    .state_init = full_state_init,
    .decode = full_decode,
    .dump = &full_dump_ops,
    .stats_init = full_stats_init,
    .stats_update = full_stats_update,
    .stats_finish = full_stats_finish,
    .stats_free = full_stats_free,
    .extra_views = full_extra_views,
    .n_extra_views = ARRAY_SIZE(full_extra_views),
    .table_views = full_tables,
    .n_table_views = ARRAY_SIZE(full_tables),
    .tables_finish = full_tables_finish,
    .instruction = full_instruction,
    /* TT6's: a FULL record is a TT6 record, its effective address from the registers */
    .accesses = tt6_accesses,
};
