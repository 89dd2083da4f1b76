/* FULL views: dump.txt with the registers that changed, regs/FAMILY.txt, class streams, and
 * the conversions to TT6, TT6E and din. Columns and rules: doc/views.md and doc/formats.md,
 * "FULL". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "full.h"
#include "tracemount/util.h"

#define FPR_WIDTH 24 /* the longest shortest round-trip text of a double */

/* The shortest "%.Ng" text of a double that reads back as the same value (15 to 17 digits);
 * "nan", "-nan", "inf", "-inf" for the special values. Returns its length. */
static size_t format_double(uint64_t bits, char out[FPR_WIDTH + 8])
{
	double d;
	memcpy(&d, &bits, sizeof(d));
	if (isnan(d) || isinf(d)) {
		const char *text = isnan(d) ? (bits >> 63 ? "-nan" : "nan")
				   : d < 0  ? "-inf"
					    : "inf";
		size_t n = strlen(text);
		memcpy(out, text, n);
		return n;
	}
	int n = 0;
	for (int digits = 15; digits <= 17; digits++) {
		n = snprintf(out, FPR_WIDTH + 8, "%.*g", digits, d);
		if (strtod(out, NULL) == d)
			break;
	}
	return (size_t)n;
}

/* Formatting doubles dominates regs/fpr.txt, and registers change rarely: each thread keeps the
 * text of the last value it formatted for each register. */
static _Thread_local struct {
	uint64_t bits;
	uint8_t valid, len;
	char text[FPR_WIDTH + 8];
} fpr_texts[32];

static size_t fpr_text(unsigned n, uint64_t bits, const char **text)
{
	if (!fpr_texts[n].valid || fpr_texts[n].bits != bits) {
		fpr_texts[n].len = (uint8_t)format_double(bits, fpr_texts[n].text);
		fpr_texts[n].bits = bits;
		fpr_texts[n].valid = 1;
	}
	*text = fpr_texts[n].text;
	return fpr_texts[n].len;
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)tm_be32(p) << 32 | tm_be32(p + 4);
}

static const struct full_layout *layout_of(const struct full_record *r)
{
	return &full_layouts[r->layout];
}

static const uint8_t *spr_at(const uint8_t *rec, const struct full_layout *l, unsigned k)
{
	return full_part(rec, l, full_sprs[k].part) + full_sprs[k].off;
}

static size_t wide_digits(const struct full_record *r)
{
	return (size_t)(r->tt.head.flags >> B_WIDE & 15);
}

/* dump.txt: TT6's line, then " NAME=VALUE" for each register that changed since the previous
 * record: rN and the special registers as 0x + 8 hex digits, fN as format_double, vN as 0x + 32
 * hex digits. */

#define GPR_CHANGE_LEN 14 /* " rN=0x00000000" with a one-digit N */
#define VR_CHANGE_LEN  38
#define FPR_CHANGE_LEN 4 /* " fN=" with a one-digit N, before the value */

static unsigned popcount(uint32_t v)
{
	return (unsigned)__builtin_popcount(v);
}

static size_t changes_len(const struct full_record *r, const uint8_t *rec)
{
	const uint32_t two_digits = 0xfffffc00u; /* registers 10-31 */
	size_t len = GPR_CHANGE_LEN * popcount(r->gpr_changed) +
		     popcount(r->gpr_changed & two_digits) +
		     VR_CHANGE_LEN * popcount(r->vr_changed) + popcount(r->vr_changed & two_digits);
	for (unsigned k = 0; k < FULL_N_SPRS; k++)
		if (r->spr_changed >> k & 1)
			len += 1 + strlen(full_sprs[k].name) + 11;
	for (uint32_t m = r->fpr_changed; m; m &= m - 1) {
		unsigned n = (unsigned)__builtin_ctz(m);
		const char *text;
		len += FPR_CHANGE_LEN + (n >= 10) +
		       fpr_text(n, be64(rec + layout_of(r)->fp + FS_FPR + 8 * n), &text);
	}
	return len;
}

static size_t dump_measure(const struct tm_chunk *c, size_t i)
{
	const struct full_record *r = full_rec(c, i);
	return tt6_line_len(&r->tt) + changes_len(r, full_bytes(c, r)) + 1;
}

static char *put_reg_name(char *p, char family, unsigned n)
{
	*p++ = ' ';
	*p++ = family;
	if (n >= 10)
		*p++ = (char)('0' + n / 10);
	*p++ = (char)('0' + n % 10);
	*p++ = '=';
	return p;
}

static char *put_hex_words(char *p, const uint8_t *words, unsigned count)
{
	*p++ = '0';
	*p++ = 'x';
	for (unsigned k = 0; k < count; k++)
		p = tm_put_hex32(p, tm_be32(words + 4 * k));
	return p;
}

static size_t dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct full_record *r = full_rec(c, i);
	const uint8_t *rec = full_bytes(c, r);
	const struct full_layout *l = layout_of(r);
	char *p = tt6_put_line(out, &r->tt, rec);
	for (uint32_t m = r->gpr_changed; m; m &= m - 1) {
		unsigned n = (unsigned)__builtin_ctz(m);
		p = put_hex_words(put_reg_name(p, 'r', n), rec + l->thread + TS_GPR + 4 * n, 1);
	}
	for (uint32_t m = r->fpr_changed; m; m &= m - 1) {
		unsigned n = (unsigned)__builtin_ctz(m);
		const char *text;
		size_t len = fpr_text(n, be64(rec + l->fp + FS_FPR + 8 * n), &text);
		p = put_reg_name(p, 'f', n);
		memcpy(p, text, len);
		p += len;
	}
	for (uint32_t m = r->vr_changed; m; m &= m - 1) {
		unsigned n = (unsigned)__builtin_ctz(m);
		p = put_hex_words(put_reg_name(p, 'v', n), rec + l->vector + VS_VR + 16 * n, 4);
	}
	for (unsigned k = 0; k < FULL_N_SPRS; k++) {
		if (!(r->spr_changed >> k & 1))
			continue;
		size_t len = strlen(full_sprs[k].name);
		*p++ = ' ';
		memcpy(p, full_sprs[k].name, len);
		p[len] = '=';
		p = put_hex_words(p + len + 1, spr_at(rec, l, k), 1);
	}
	*p++ = '\n';
	return (size_t)(p - out);
}

const struct tm_render_ops full_dump_ops = {
    .measure = dump_measure,
    .render = dump_render,
};

/* regs/FAMILY.txt: NUMBER(12) PC, then the family's registers in fixed columns. */

#define REGS_PREFIX_LEN (NUM_WIDTH + 1 + 8)

static const int16_t wide_flag_len[TM_FLAG_BITS] = {
    [B_WIDE] = 1, [B_WIDE + 1] = 2, [B_WIDE + 2] = 4, [B_WIDE + 3] = 8};

static char *put_regs_prefix(char *p, const struct full_record *r)
{
	p = tm_put_decimal(p, r->tt.num, NUM_WIDTH);
	*p++ = ' ';
	return tm_put_hex32(p, r->tt.pc);
}

#define GPR_LINE_LEN (REGS_PREFIX_LEN + 32 * 9 + 1)
#define FPR_LINE_LEN (REGS_PREFIX_LEN + 32 * (1 + FPR_WIDTH) + 1)
#define VR_LINE_LEN  (REGS_PREFIX_LEN + 32 * 33 + 1)
#define SPR_LINE_LEN (REGS_PREFIX_LEN + FULL_N_SPRS * 9 + 1)

/* A family's line length is the same for every class, and longer by a wide NUMBER's digits. */
#define REGS_SIZES(family, line_len)                                                               \
	static size_t family##_len(unsigned cls)                                                   \
	{                                                                                          \
		(void)cls;                                                                         \
		return line_len;                                                                   \
	}                                                                                          \
	static size_t family##_measure(const struct tm_chunk *c, size_t i)                         \
	{                                                                                          \
		return line_len + wide_digits(full_rec(c, i));                                     \
	}
REGS_SIZES(gpr, GPR_LINE_LEN)
REGS_SIZES(fpr, FPR_LINE_LEN)
REGS_SIZES(vr, VR_LINE_LEN)
REGS_SIZES(spr, SPR_LINE_LEN)

/* Writes count words of 8 hex digits, each after a space. */
static char *put_word_columns(char *p, const uint8_t *words, unsigned count, unsigned stride)
{
	for (unsigned k = 0; k < count; k++) {
		*p++ = ' ';
		p = tm_put_hex32(p, tm_be32(words + stride * k));
	}
	return p;
}

static size_t gpr_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct full_record *r = full_rec(c, i);
	char *p = put_regs_prefix(out, r);
	p = put_word_columns(p, full_bytes(c, r) + layout_of(r)->thread + TS_GPR, 32, 4);
	*p++ = '\n';
	return (size_t)(p - out);
}

static size_t fpr_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct full_record *r = full_rec(c, i);
	const uint8_t *fpr = full_bytes(c, r) + layout_of(r)->fp + FS_FPR;
	char *p = put_regs_prefix(out, r);
	for (unsigned n = 0; n < 32; n++) {
		const char *text;
		size_t len = fpr_text(n, be64(fpr + 8 * n), &text);
		memset(p, ' ', 1 + FPR_WIDTH - len);
		p += 1 + FPR_WIDTH - len;
		memcpy(p, text, len);
		p += len;
	}
	*p++ = '\n';
	return (size_t)(p - out);
}

static size_t vr_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct full_record *r = full_rec(c, i);
	const uint8_t *vr = full_bytes(c, r) + layout_of(r)->vector + VS_VR;
	char *p = put_regs_prefix(out, r);
	for (unsigned n = 0; n < 32; n++) {
		*p++ = ' ';
		for (unsigned k = 0; k < 4; k++)
			p = tm_put_hex32(p, tm_be32(vr + 16 * n + 4 * k));
	}
	*p++ = '\n';
	return (size_t)(p - out);
}

static size_t spr_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct full_record *r = full_rec(c, i);
	const uint8_t *rec = full_bytes(c, r);
	char *p = put_regs_prefix(out, r);
	for (unsigned k = 0; k < FULL_N_SPRS; k++)
		p = put_word_columns(p, spr_at(rec, layout_of(r), k), 1, 0);
	*p++ = '\n';
	return (size_t)(p - out);
}

#define REGS_OPS(family)                                                                           \
	{                                                                                          \
		.fixed_len = family##_len, .flag_len = wide_flag_len, .measure = family##_measure, \
		.render = family##_render                                                          \
	}
static const struct tm_render_ops gpr_ops = REGS_OPS(gpr), fpr_ops = REGS_OPS(fpr),
				  vr_ops = REGS_OPS(vr), spr_ops = REGS_OPS(spr);

/* class/CLASS.full: the records of a class, after the magic word before the first. */
static size_t stream_measure(const struct tm_chunk *c, size_t i)
{
	const struct full_record *r = full_rec(c, i);
	return r->tt.head.raw_len + (r->tt.head.flags & F_CLASS_FIRST ? 4 : 0);
}

static size_t stream_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct full_record *r = full_rec(c, i);
	char *p = out;
	if (r->tt.head.flags & F_CLASS_FIRST)
		p = tt6_put_word(p, FULL_MAGIC);
	memcpy(p, full_bytes(c, r), r->tt.head.raw_len);
	return (size_t)(p - out) + r->tt.head.raw_len;
}

const struct tm_render_ops full_stream_ops = {
    .measure = stream_measure,
    .render = stream_render,
};

/* convert/NAME.tt6 and NAME.tt6e: the TT6 records of each instruction (its class's words: the
 * next PC of a flow record, the EA of a memory record, then the XER or rB), after INITIAL_PC
 * before the first, and after a position record (escape 0x10) where the PC does not follow.
 * TT6E adds the synthetic pair after a twi; TT6 drops the EA of a dcbx or icbi. */
static size_t convert_render(const struct tm_chunk *c, size_t i, char *out, bool tt6e)
{
	const struct full_record *r = full_rec(c, i);
	unsigned cls = r->tt.head.cls, flags = r->tt.head.flags;
	char *p = out;
	if (flags & F_TRACE_FIRST)
		p = tt6_put_word(p, r->tt.pc);
	if (flags & F_JUMP)
		p = tt6_put_position(p, r->tt.pc, r->tt.num);
	p = tt6_put_word(p, r->tt.word);
	if (cls != TT6_COMPUTE && (tt6e || !(flags & F_CACHE)))
		p = tt6_put_word(p, r->tt.w1);
	if (cls == TT6_MEMEXT)
		p = tt6_put_word(p, r->tt.w2);
	if (tt6e && (flags & F_TWI))
		p = tt6_put_synthetic_pair(p, r->tt.pc);
	return (size_t)(p - out);
}

static size_t convert_len(const struct full_record *r, const int16_t *flag_len)
{
	size_t len = tt6_record_bytes(r->tt.head.cls);
	for (unsigned f = r->tt.head.flags; f; f &= f - 1)
		len += (size_t)(ptrdiff_t)flag_len[__builtin_ctz(f)];
	return len;
}

static const int16_t to_tt6_flag_len[TM_FLAG_BITS] = {
    [B_TRACE_FIRST] = 4, [B_JUMP] = POSITION_BYTES, [B_CACHE] = -4};
static const int16_t to_tt6e_flag_len[TM_FLAG_BITS] = {
    [B_TRACE_FIRST] = 4, [B_JUMP] = POSITION_BYTES, [B_TWI] = 16};

static size_t to_tt6_measure(const struct tm_chunk *c, size_t i)
{
	return convert_len(full_rec(c, i), to_tt6_flag_len);
}
static size_t to_tt6e_measure(const struct tm_chunk *c, size_t i)
{
	return convert_len(full_rec(c, i), to_tt6e_flag_len);
}
static size_t to_tt6_render(const struct tm_chunk *c, size_t i, char *out)
{
	return convert_render(c, i, out, false);
}
static size_t to_tt6e_render(const struct tm_chunk *c, size_t i, char *out)
{
	return convert_render(c, i, out, true);
}

static const struct tm_render_ops to_tt6_ops = {
    .fixed_len = tt6_record_bytes,
    .flag_len = to_tt6_flag_len,
    .measure = to_tt6_measure,
    .render = to_tt6_render,
};
static const struct tm_render_ops to_tt6e_ops = {
    .fixed_len = tt6_record_bytes,
    .flag_len = to_tt6e_flag_len,
    .measure = to_tt6e_measure,
    .render = to_tt6e_render,
};

#define ALL_CLASSES ((1ull << FULL_N_CLASSES) - 1)

const struct tm_view_desc full_extra_views[FULL_N_EXTRA_VIEWS] = {
    {.path = "convert/%s.tt6", .class_mask = ALL_CLASSES, .ops = &to_tt6_ops},
    {.path = "convert/%s.tt6e", .class_mask = ALL_CLASSES, .ops = &to_tt6e_ops},
    {.path = "convert/%s.din", .class_mask = ALL_CLASSES, .ops = &tt6_din_ops},
    {.path = "regs/gpr.txt", .class_mask = ALL_CLASSES, .ops = &gpr_ops},
    {.path = "regs/fpr.txt", .class_mask = ALL_CLASSES, .ops = &fpr_ops},
    {.path = "regs/vr.txt", .class_mask = ALL_CLASSES, .ops = &vr_ops},
    {.path = "regs/spr.txt", .class_mask = ALL_CLASSES, .ops = &spr_ops},
};
