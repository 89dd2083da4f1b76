/* TT6 and TT6E views: dump.txt, class streams, conversions, sync.txt and din. Columns and
 * rules: doc/views.md and doc/formats.md, "TT6 and TT6E". */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tt6.h"
#include "tracemount/util.h"

/* Here, with the dump lines and class/ files that show them, so that tt6.c, whose table lists
 * them, depends on this file and not the other way round. */
const char *const tt6_classes[TT6_N_CLASSES] = {
    "compute", "flow", "memory", "memext", "escape", "sync", "initial_pc",
};

const char *const tt6_sync_kinds[TT6_N_SYNC_KINDS] = {"signal", "broadcast", "wait", "try_wait"};

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
	case ESC_DCBX_NO_ADDRESS: return "dcbx_no_address";
	case ESC_SYNC_SIGNAL: return "sync_signal";
	case ESC_SYNC_BROADCAST: return "sync_broadcast";
	case ESC_SYNC_WAIT: return "sync_wait";
	case ESC_SYNC_TRY_WAIT: return "sync_try_wait";
	default: return code >= 0x20 && code <= 0x3f ? "sync_reserved" : "unknown";
	}
}

/* dump.txt: NUMBER(12) PC WORD TEXT(36) CLASS [EXTRA]; see doc/views.md. */

/* Text a line of each class adds after its class name, counted from these templates. */
#define EXTRA_LEN(template) (sizeof(template) - 1)
#define PREFIX_LEN	    (NUM_WIDTH + 1 + 8 + 1 + 8 + 1 + PPC_TEXT_WIDTH + 1)
#define FLOW_EXTRA	    EXTRA_LEN(" next=00000000")
#define MEMORY_EXTRA	    EXTRA_LEN(" ea=00000000 size=000")
#define MEMEXT_EXTRA	    EXTRA_LEN(" ea=00000000 size=000 xer=00000000")
#define SYNC_EXTRA	    EXTRA_LEN(" addr=00000000 count=00000000")

static const char spaces[64] = "                                                               ";

/* Hex digits of an escape code in dump lines: at least 2. */
static unsigned code_digits(unsigned code)
{
	unsigned n = 2;
	while (code >> (4 * n))
		n++;
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
	return 8 + code_digits(code) + 7 + tm_decimal_digits(count) + 9 * count;
}

static size_t wide_digits(const struct tt6_record *r)
{
	return (size_t)(r->head.flags >> B_WIDE & 15);
}

size_t tt6_line_len(const struct tt6_record *r)
{
	if (r->head.cls != TT6_ESCAPE)
		return dump_fixed_len(r->head.cls) - 1 + wide_digits(r);
	return PREFIX_LEN + class_name_len(TT6_ESCAPE) + escape_extra_len(r->word) + wide_digits(r);
}

static size_t dump_measure(const struct tm_chunk *c, size_t i)
{
	return tt6_line_len(tt6_rec(c, i)) + 1;
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

char *tt6_put_line(char *out, const struct tt6_record *r, const uint8_t *raw)
{
	unsigned cls = r->head.cls;
	char *p = tm_put_decimal(out, r->num, NUM_WIDTH);
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
		if (r->head.flags & F_NO_EA) /* not address 0: no address */
			p = (char *)memcpy(p, " ea=????????", 12) + 12;
		else
			p = put_field(p, " ea=", 4, r->w1);
		memcpy(p, " size=", 6);
		p = tm_put_decimal(p + 6, ppc_access_size(ppc_op_of(r->word), r->word, r->w2), 3);
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
		const uint8_t *words = raw + 4;
		memcpy(p, " code=0x", 8);
		p = tm_put_hex(p + 8, esc_code(r->word), code_digits(esc_code(r->word)));
		memcpy(p, " words=", 7);
		p = tm_put_decimal(p + 7, count, 0);
		for (unsigned k = 0; k < count; k++) {
			*p++ = ' ';
			p = tm_put_hex32(p, tm_be32(words + 4 * k));
		}
		break;
	}
	default: break;
	}
	return p;
}

static size_t dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = tt6_rec(c, i);
	char *p = tt6_put_line(out, r, c->raw + r->head.raw_rel);
	*p++ = '\n';
	return (size_t)(p - out);
}

static const int16_t dump_flag_len[TM_FLAG_BITS] = {
    [B_WIDE] = 1, [B_WIDE + 1] = 2, [B_WIDE + 2] = 4, [B_WIDE + 3] = 8};

const struct tm_render_ops tt6_dump_ops = {
    .fixed_len = dump_fixed_len,
    .flag_len = dump_flag_len,
    .measure = dump_measure,
    .render = dump_render,
};

static char *put_raw(char *p, const struct tm_chunk *c, const struct tt6_record *r)
{
	memcpy(p, c->raw + r->head.raw_rel, r->head.raw_len);
	return p + r->head.raw_len;
}

/* class/CLASS.tt6: the record's bytes, after a position record when the record before it in
 * the trace is of another class; in TT6E (mark_no_ea), after an escape 0x12 when it is a dcbx
 * without an address, which would else read as address 0. TT6 needs no mark: a stream's dcbx
 * have no address anyway, the escapes that give one being in another stream. */
static size_t stream_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = tt6_rec(c, i);
	return r->head.raw_len + (r->head.flags & F_SEEK ? POSITION_BYTES : 0);
}

static size_t stream_record(const struct tm_chunk *c, size_t i, char *out, bool mark_no_ea)
{
	const struct tt6_record *r = tt6_rec(c, i);
	char *p = out;
	if (r->head.flags & F_SEEK)
		p = tt6_put_position(p, r->pc, r->num);
	if (mark_no_ea && (r->head.flags & F_NO_EA))
		p = tt6_put_word(p, ESC_DCBX_NO_ADDRESS << 16);
	return (size_t)(put_raw(p, c, r) - out);
}

static size_t stream_render(const struct tm_chunk *c, size_t i, char *out)
{
	return stream_record(c, i, out, false);
}

static const int16_t stream_flag_len[TM_FLAG_BITS] = {[B_SEEK] = POSITION_BYTES};

const struct tm_render_ops tt6_stream_ops = {
    .fixed_len = tt6_record_bytes,
    .flag_len = stream_flag_len,
    .measure = stream_measure,
    .render = stream_render,
};

static size_t tt6e_stream_measure(const struct tm_chunk *c, size_t i)
{
	return stream_measure(c, i) + (tt6_rec(c, i)->head.flags & F_NO_EA ? 4 : 0);
}

static size_t tt6e_stream_render(const struct tm_chunk *c, size_t i, char *out)
{
	return stream_record(c, i, out, true);
}

static const int16_t tt6e_stream_flag_len[TM_FLAG_BITS] = {
    [B_SEEK] = POSITION_BYTES, [B_NO_EA] = 4};

const struct tm_render_ops tt6e_stream_ops = {
    .fixed_len = tt6_record_bytes,
    .flag_len = tt6e_stream_flag_len,
    .measure = tt6e_stream_measure,
    .render = tt6e_stream_render,
};

/* convert/NAME.tt6e from TT6: dcbx gain an address (0 after an escape 0x12 where TT6 gives
 * none), twi gain the synthetic pair, escapes 0x11 are dropped. */
static size_t to_tt6e_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = tt6_rec(c, i);
	switch (r->head.cls) {
	case TT6_COMPUTE:
		return r->head.flags & F_TWI	 ? 4 + 16
		       : r->head.flags & F_NO_EA ? 12
		       : r->head.flags & F_CACHE ? 8
						 : 4;
	case TT6_ESCAPE:
		return esc_code(r->word) == ESC_DCBX_ADDRESS && esc_count(r->word) == 1
			   ? 0
			   : r->head.raw_len;
	default: return r->head.raw_len;
	}
}

static size_t to_tt6e_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = tt6_rec(c, i);
	char *p = out;
	if (r->head.cls != TT6_COMPUTE)
		return to_tt6e_measure(c, i) ? (size_t)(put_raw(p, c, r) - out) : 0;
	if (r->head.flags & F_NO_EA)
		p = tt6_put_word(p, ESC_DCBX_NO_ADDRESS << 16);
	p = tt6_put_word(p, r->word);
	if (r->head.flags & F_TWI) {
		p = tt6_put_synthetic_pair(p, r->pc);
	} else if (r->head.flags & F_CACHE) {
		p = tt6_put_word(p, r->head.flags & (F_AFTER_01 | F_AFTER_11) ? r->ctx_ea : 0);
	}
	return (size_t)(p - out);
}

static const int16_t to_tt6e_flag_len[TM_FLAG_BITS] = {[B_TWI] = 16, [B_CACHE] = 4, [B_NO_EA] = 4};

static const struct tm_render_ops tt6_to_tt6e_ops = {
    .fixed_len = tt6_record_bytes,
    .flag_len = to_tt6e_flag_len,
    .measure = to_tt6e_measure,
    .render = to_tt6e_render,
};

/* convert/NAME.tt6 from TT6E: the synthetic pairs are dropped, dcbx lose their address, which
 * an escape 0x11 keeps unless an escape 0x01 just before already says it. A dcbx without an
 * address loses its escape 0x12 too, as TT6 -> TT6E adds it back: a TT6 dcbx has none anyway,
 * unless an escape 0x01 or 0x11 just before would lend it one (F_NO_EA_KEPT). */
static size_t to_tt6_measure(const struct tm_chunk *c, size_t i)
{
	const struct tt6_record *r = tt6_rec(c, i);
	if (r->head.flags & F_SYNTH)
		return 0;
	if (r->head.cls == TT6_MEMORY && (r->head.flags & F_CACHE))
		return (r->head.flags & F_DCBX_ESC) ? 12 : r->head.flags & F_NO_EA_KEPT ? 8 : 4;
	return r->head.raw_len;
}

static size_t to_tt6_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = tt6_rec(c, i);
	char *p = out;
	if (r->head.flags & F_SYNTH)
		return 0;
	if (!(r->head.cls == TT6_MEMORY && (r->head.flags & F_CACHE)))
		return (size_t)(put_raw(p, c, r) - out);
	if ((r->head.flags & F_DCBX_ESC)) {
		p = tt6_put_word(p, ESC_DCBX_ADDRESS << 16 | 1);
		p = tt6_put_word(p, r->w1);
	} else if (r->head.flags & F_NO_EA_KEPT) {
		p = tt6_put_word(p, ESC_DCBX_NO_ADDRESS << 16);
	}
	return (size_t)(tt6_put_word(p, r->word) - out);
}

/* synthetic flow records vanish; a dcbx loses its address word, and may gain an escape */
static const int16_t to_tt6_flag_len[TM_FLAG_BITS] = {
    [B_SYNTH] = -8, [B_CACHE] = -4, [B_DCBX_ESC] = 8, [B_NO_EA_KEPT] = 4};

static const struct tm_render_ops tt6e_to_tt6_ops = {
    .fixed_len = tt6_record_bytes,
    .flag_len = to_tt6_flag_len,
    .measure = to_tt6_measure,
    .render = to_tt6_render,
};

/* sync.txt: NUMBER PC KIND(9) ADDRESS COUNT */
static size_t sync_measure(const struct tm_chunk *c, size_t i)
{
	return NUM_WIDTH + 1 + 8 + 1 + 9 + 1 + 8 + 1 + tm_decimal_digits(tt6_rec(c, i)->w2) + 1 +
	       wide_digits(tt6_rec(c, i));
}

static size_t sync_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tt6_record *r = tt6_rec(c, i);
	const char *kind = tt6_sync_kinds[sync_kind(esc_code(r->word))];
	char *p = tm_put_decimal(out, r->num, NUM_WIDTH);
	*p++ = ' ';
	p = tm_put_hex32(p, r->pc);
	*p++ = ' ';
	memcpy(p, spaces, 9);
	memcpy(p, kind, strlen(kind));
	p += 9;
	*p++ = ' ';
	p = tm_put_hex32(p, r->w1);
	*p++ = ' ';
	p = tm_put_decimal(p, r->w2, 0);
	*p++ = '\n';
	return (size_t)(p - out);
}

static const struct tm_render_ops tt6_sync_ops = {
    .measure = sync_measure,
    .render = sync_render,
};

/* convert/NAME.din: "2 PC" per instruction, then "0 EA" or "1 EA" per word accessed. */
#define DIN_LINE_LEN 11

unsigned tt6_din_refs(const struct tt6_record *r, char *label)
{
	if ((r->head.cls != TT6_MEMORY && r->head.cls != TT6_MEMEXT) || (r->head.flags & F_NO_EA))
		return 0; /* no data access, or none whose address the trace gives */
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
	return DIN_LINE_LEN * (1 + (size_t)tt6_din_refs(tt6_rec(c, i), &label));
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
	const struct tt6_record *r = tt6_rec(c, i);
	char label = '0';
	unsigned refs = tt6_din_refs(r, &label);
	char *p = din_line(out, '2', r->pc);
	for (unsigned k = 0; k < refs; k++)
		p = din_line(p, label, r->w1 + 4 * k);
	return (size_t)(p - out);
}

const struct tm_render_ops tt6_din_ops = {
    .fixed_len = din_fixed_len,
    .measure = din_measure,
    .render = din_render,
};

const struct tm_view_desc tt6_extra_views[TT6_N_EXTRA_VIEWS] = {
    {.path = "sync.txt", .class_mask = CLASS_BIT(TT6_SYNC), .ops = &tt6_sync_ops},
    {.path = "convert/%s.tt6e", .class_mask = ~0ull, .ops = &tt6_to_tt6e_ops},
    {.path = "convert/%s.din", .class_mask = INSTRUCTION_BITS, .ops = &tt6_din_ops},
};

const struct tm_view_desc tt6e_extra_views[TT6_N_EXTRA_VIEWS] = {
    {.path = "sync.txt", .class_mask = CLASS_BIT(TT6_SYNC), .ops = &tt6_sync_ops},
    {.path = "convert/%s.tt6", .class_mask = ~0ull, .ops = &tt6e_to_tt6_ops},
    {.path = "convert/%s.din", .class_mask = INSTRUCTION_BITS, .ops = &tt6_din_ops},
};
