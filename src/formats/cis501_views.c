/* CIS501 views: dump.txt (and class/CLASS.txt) and convert/NAME.din. Columns and rules: the
 * CIS501 sections of doc/views.md and doc/formats.md. */
#include <string.h>

#include "cis501.h"
#include "tracemount/util.h"

/* v in lower-case hex without leading zeros. */
static inline char *put_hex(char *out, uint64_t v)
{
	unsigned n = tm_hex_len(v);
	for (unsigned i = n; i > 0; i--) {
		out[i - 1] = tm_hex_digits[v & 15];
		v >>= 4;
	}
	return out + n;
}

static inline char *put_signed(char *out, int64_t v)
{
	uint64_t m = (uint64_t)v;
	if (v < 0) {
		*out++ = '-';
		m = 0 - m;
	}
	return tm_put_decimal(out, m, 0);
}

/* dump.txt: the 14 fields re-printed from their values, one space apart, then the macro-op
 * number. The decoder worked out the length while parsing. */
static size_t dump_measure(const struct tm_chunk *c, size_t i)
{
	return cis501_rec(c, i)->dump_len;
}

static size_t dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct cis501_record *r = cis501_rec(c, i);
	const uint8_t *line = c->raw + r->head.raw_rel;
	unsigned f = r->head.flags;
	char *p = put_signed(out, r->uop);
	*p++ = ' ';
	p = put_hex(p, r->pc);
	*p++ = ' ';
	p = put_signed(p, r->src1);
	*p++ = ' ';
	p = put_signed(p, r->src2);
	*p++ = ' ';
	p = put_signed(p, r->dest);
	p[0] = ' ';
	p[1] = f & F_FLAGS_READ ? 'R' : f & F_FLAGS_WRITE ? 'W' : '-';
	p[2] = ' ';
	p[3] = f & F_TAKEN ? 'T' : f & F_NOT_TAKEN ? 'N' : '-';
	p[4] = ' ';
	p[5] = f & F_LOAD ? 'L' : f & F_STORE ? 'S' : '-';
	p[6] = ' ';
	p = put_signed(p + 7, r->imm);
	*p++ = ' ';
	p = put_hex(p, r->addr);
	*p++ = ' ';
	p = put_hex(p, r->fallthrough);
	*p++ = ' ';
	p = put_hex(p, r->target);
	*p++ = ' ';
	memcpy(p, line + r->macro_off, r->macro_len);
	p += r->macro_len;
	*p++ = ' ';
	memcpy(p, line + r->micro_off, r->micro_len);
	p += r->micro_len;
	*p++ = ' ';
	p = tm_put_decimal(p, r->macro, 0);
	*p++ = '\n';
	return (size_t)(p - out);
}

const struct tm_render_ops cis501_dump_ops = {
    .measure = dump_measure,
    .render = dump_render,
};

/* convert/NAME.din: "2 PC" for the instruction fetch of each macro-op, at its Uop 1 line, then
 * "0 ADDR" for a load or "1 ADDR" for a store, in lower-case hex without leading zeros. */
static size_t din_measure(const struct tm_chunk *c, size_t i)
{
	const struct cis501_record *r = cis501_rec(c, i);
	size_t n = 0;
	if (r->uop == 1)
		n += 3 + tm_hex_len(r->pc);
	if (r->head.flags & (F_LOAD | F_STORE))
		n += 3 + tm_hex_len(r->addr);
	return n;
}

static size_t din_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct cis501_record *r = cis501_rec(c, i);
	char *p = out;
	if (r->uop == 1) {
		p[0] = '2';
		p[1] = ' ';
		p = put_hex(p + 2, r->pc);
		*p++ = '\n';
	}
	if (r->head.flags & (F_LOAD | F_STORE)) {
		p[0] = r->head.flags & F_LOAD ? '0' : '1';
		p[1] = ' ';
		p = put_hex(p + 2, r->addr);
		*p++ = '\n';
	}
	return (size_t)(p - out);
}

static const struct tm_render_ops cis501_din_ops = {
    .measure = din_measure,
    .render = din_render,
};

const struct tm_view_desc cis501_extra_views[CIS501_N_EXTRA_VIEWS] = {
    {.path = "convert/%s.din",
     .class_mask = (1ull << CIS501_N_FAMILIES) - 1,
     .ops = &cis501_din_ops},
};
