/* QEMU4V and ARM Tarmac text traces: the line parser, the decoder and detection. One line is
 * one record; the rules, dialect by dialect, are in doc/formats.md. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "tarmac.h"
#include "text_lines.h"
#include "tracemount/diag.h"
#include "tracemount/registry.h"

const char *const tarmac_classes[TARMAC_N_CLASSES] = {
    "instructions",  /* TC_INSTRUCTION */
    "skipped",	     /* TC_SKIPPED */
    "fetch_failed",  /* TC_FETCH_FAILED */
    "memory_reads",  /* TC_READ */
    "memory_writes", /* TC_WRITE */
    "registers",     /* TC_REGISTER */
    "events",	     /* TC_EVENT */
    "unknown",	     /* TC_UNKNOWN */
};

/* Tokens: runs of bytes other than space and tab. */

static bool is_blank(uint8_t c)
{
	return c == ' ' || c == '\t';
}

static bool is_hex(uint8_t c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static bool is_lower(uint8_t c)
{
	return c >= 'a' && c <= 'z';
}

/* A line cut into tokens once: the parser looks ahead a token or two, often. */
#define MAX_TOKENS 32

struct cursor {
	const uint8_t *s;
	size_t len;
	size_t end; /* where tokens stop: len, or the token past MAX_TOKENS */
	unsigned i, n;
	struct tarmac_span tok[MAX_TOKENS];
};

static bool is_control(uint8_t c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* Cuts s[0, len) into tokens; returns whether it holds control bytes (binary data). */
static bool tokenize(struct cursor *c, const uint8_t *s, size_t len)
{
	c->s = s;
	c->len = c->end = len;
	c->i = c->n = 0;
	for (size_t p = 0; p < len;) {
		if (is_blank(s[p])) {
			p++;
			continue;
		}
		size_t e = p;
		while (e < len && s[e] > ' ' && s[e] != 0x7f)
			e++;
		if (e < len && !is_blank(s[e]))
			return true;
		if (c->n == MAX_TOKENS) { /* the parser needs no more; check the rest */
			c->end = p;
			for (; p < len; p++)
				if (is_control(s[p]))
					return true;
			break;
		}
		c->tok[c->n++] = (struct tarmac_span){(uint16_t)p, (uint16_t)(e - p)};
		p = e;
	}
	return false;
}

static struct tarmac_span tok_at(const struct cursor *c, unsigned i)
{
	return i < c->n ? c->tok[i] : (struct tarmac_span){(uint16_t)c->end, 0};
}

/* The next token (len 0 at the end of the line), without moving past it. */
static struct tarmac_span peek(const struct cursor *c)
{
	return tok_at(c, c->i);
}

static struct tarmac_span next(struct cursor *c)
{
	struct tarmac_span t = peek(c);
	c->i += c->i < c->n;
	return t;
}

/* Moves past token t. */
static void skip_past(struct cursor *c, struct tarmac_span t)
{
	while (c->i < c->n && c->tok[c->i].off <= t.off)
		c->i++;
}

/* The token after t. */
static struct tarmac_span peek_after(const struct cursor *c, struct tarmac_span t)
{
	unsigned i = c->i;
	while (i < c->n && c->tok[i].off <= t.off)
		i++;
	return tok_at(c, i);
}

static bool tok_is(const struct cursor *c, struct tarmac_span t, const char *word)
{
	size_t n = strlen(word);
	return t.len == n && memcmp(c->s + t.off, word, n) == 0;
}

/* Leading run of hex digits of t. */
static size_t hex_run(const struct cursor *c, struct tarmac_span t)
{
	size_t n = 0;
	while (n < t.len && is_hex(c->s[t.off + n]))
		n++;
	return n;
}

static uint64_t hex_value(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v << 4 | (uint64_t)(is_digit(p[i]) ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
	return v;
}

/* An address token: 1-16 hex digits, then the end or ':', ',' or '_' and more
 * ("0000815c:00000000815c_NS,00000000815e_NS"). */
static bool is_address(const struct cursor *c, struct tarmac_span t)
{
	size_t n = hex_run(c, t);
	if (!n || n > 16)
		return false;
	uint8_t after = n < t.len ? c->s[t.off + n] : 0;
	return !after || after == ':' || after == ',' || after == '_';
}

/* An opcode token: at least 4 hex digits or '-' ("a00a", "fa000000", "--------"). */
static bool is_opcode(const struct cursor *c, struct tarmac_span t)
{
	if (t.len < 4)
		return false;
	for (size_t i = 0; i < t.len; i++)
		if (!is_hex(c->s[t.off + i]) && c->s[t.off + i] != '-')
			return false;
	return true;
}

/* An LD/ST lane token: exactly 8 of hex digits, '.' (byte not accessed) and '#'. */
static bool is_lane(const struct cursor *c, struct tarmac_span t)
{
	if (t.len != 8)
		return false;
	for (size_t i = 0; i < 8; i++) {
		uint8_t ch = c->s[t.off + i];
		if (!is_hex(ch) && ch != '.' && ch != '#')
			return false;
	}
	return true;
}

static void set_problem(struct tarmac_line *l, const char *why, struct tarmac_span tok)
{
	l->cls = TC_UNKNOWN;
	l->problem = why;
	l->bad_tok = tok;
}

/* A decimal number of at most 18 digits, with an optional '-': the time. */
static bool parse_time(const uint8_t *p, size_t n, int64_t *out)
{
	bool neg = n && p[0] == '-';
	size_t i = neg;
	if (i == n || n - i > 18)
		return false;
	int64_t v = 0;
	for (; i < n; i++) {
		if (!is_digit(p[i]))
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = neg ? -v : v;
	return true;
}

static bool parse_cpu(const uint8_t *p, size_t n, uint32_t *out)
{
	if (!n || n > 9)
		return false;
	uint32_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return false;
		v = v * 10 + (uint32_t)(p[i] - '0');
	}
	*out = v;
	return true;
}

/* The disassembly from the cursor on: its first word is the mnemonic. */
static void take_disasm(struct cursor *c, struct tarmac_line *l)
{
	struct tarmac_span t = peek(c);
	l->tail = t.off;
	l->mnemonic = t;
}

/* IT/IS: "(ID) ADDR OPCODE ISET MODE : DISASM" and the variants of doc/formats.md. */
static void parse_instruction(struct cursor *c, struct tarmac_line *l)
{
	struct tarmac_span id = next(c);
	if (id.len < 2 || c->s[id.off] != '(' || c->s[id.off + id.len - 1] != ')') {
		set_problem(l, "instruction record without (ID)", id);
		return;
	}
	struct tarmac_span t1 = peek(c), t2 = peek_after(c, t1);
	if (is_address(c, t1) && is_opcode(c, t2)) {
		l->addr = t1;
		l->opcode = t2;
		skip_past(c, t2);
	} else if (is_opcode(c, t1)) { /* "(ADDRESS) OPCODE": the id is the address */
		l->addr = (struct tarmac_span){(uint16_t)(id.off + 1), (uint16_t)(id.len - 2)};
		l->opcode = t1;
		skip_past(c, t1);
	} else {
		set_problem(l, "instruction record without address and opcode", t1);
		return;
	}
	size_t digits = hex_run(c, l->addr);
	if (!digits || digits > 16) {
		set_problem(l, "instruction address is not 1 to 16 hex digits", l->addr);
		return;
	}
	l->addr.len = (uint16_t)digits;
	l->va = hex_value(c->s + l->addr.off, digits);

	struct tarmac_span t = peek(c);
	if (t.len && !tok_is(c, t, ":")) {
		l->iset = t;
		skip_past(c, t);
		t = peek(c);
	}
	struct tarmac_span after = peek_after(c, t);
	if (tok_is(c, t, ":")) {
		skip_past(c, t);
	} else if (t.len && tok_is(c, after, ":")) {
		l->mode = t;
		skip_past(c, after);
	} else if (t.len > 1 && c->s[t.off + t.len - 1] == ':') {
		l->mode = (struct tarmac_span){t.off, (uint16_t)(t.len - 1)};
		skip_past(c, t);
	}
	take_disasm(c, l);
}

/* An opcode of dashes only, as Cycle Models print one whose fetch failed (an ECC fault). */
static bool fetch_failed(const struct cursor *c, struct tarmac_span t)
{
	for (uint16_t i = 0; i < t.len; i++)
		if (c->s[t.off + i] != '-')
			return false;
	return t.len > 0;
}

/* ES style: "ES (VA:OPCODE) ISET MODE: [CCFAIL] DISASM"; OPCODE "--------" when the fetch
 * failed. */
static void parse_es_instruction(struct cursor *c, struct tarmac_line *l)
{
	struct tarmac_span p = next(c);
	const uint8_t *s = c->s + p.off;
	const uint8_t *colon = memchr(s, ':', p.len);
	if (p.len < 4 || s[p.len - 1] != ')' || !colon) {
		set_problem(l, "ES record without (ADDRESS:OPCODE)", p);
		return;
	}
	uint16_t colon_off = (uint16_t)(colon - c->s);
	l->addr = (struct tarmac_span){(uint16_t)(p.off + 1), (uint16_t)(colon_off - p.off - 1)};
	l->opcode = (struct tarmac_span){(uint16_t)(colon_off + 1),
					 (uint16_t)(p.off + p.len - 1 - colon_off - 1)};
	size_t digits = hex_run(c, l->addr);
	if (!digits || digits != l->addr.len || digits > 16) {
		set_problem(l, "instruction address is not 1 to 16 hex digits", l->addr);
		return;
	}
	l->va = hex_value(c->s + l->addr.off, digits);
	struct tarmac_span t = peek(c);
	if (t.len && c->s[t.off + t.len - 1] != ':') {
		l->iset = t;
		skip_past(c, t);
		t = peek(c);
	}
	if (t.len && c->s[t.off + t.len - 1] == ':') {
		l->mode = (struct tarmac_span){t.off, (uint16_t)(t.len - 1)};
		skip_past(c, t);
	}
	t = peek(c);
	if (tok_is(c, t, "CCFAIL")) {
		l->cls = TC_SKIPPED;
		skip_past(c, t);
	}
	if (fetch_failed(c, l->opcode))
		l->cls = TC_FETCH_FAILED;
	take_disasm(c, l);
}

/* "M[X]R4[attr]": sets rw ('R' or 'W') and size, or returns false. */
static bool memory_kind(const struct cursor *c, struct tarmac_span t, uint8_t *rw, unsigned *size,
			bool *fetch)
{
	const uint8_t *s = c->s + t.off;
	size_t i = 1;
	if (t.len >= 2 && (s[0] == 'R' || s[0] == 'W') && is_digit(s[1]))
		i = 0; /* "R08 ADDRESS DATA" of some simulators */
	else if (t.len < 3 || s[0] != 'M')
		return false;
	else if (s[1] != 'R' && s[1] != 'W') {
		if (s[1] < 'A' || s[1] > 'Z')
			return false;
		i = 2;
	}
	if (s[i] != 'R' && s[i] != 'W')
		return false;
	*rw = s[i++];
	size_t d = i;
	unsigned v = 0;
	while (i < t.len && is_digit(s[i]) && i - d < 5)
		v = v * 10 + (unsigned)(s[i++] - '0');
	if (i == d || v > UINT16_MAX)
		return false;
	for (size_t k = i; k < t.len; k++)
		if (!((s[k] | 0x20) >= 'a' && (s[k] | 0x20) <= 'z') && s[k] != '_')
			return false;
	*size = v;
	*fetch = t.len - i >= 2 && s[t.len - 2] == '_' && s[t.len - 1] == 'I';
	return true;
}

/* "MR4 ADDRESS DATA": the kind token is parsed already. */
static void parse_memory(struct cursor *c, struct tarmac_line *l, uint8_t rw, unsigned size,
			 bool fetch)
{
	struct tarmac_span t = next(c);
	if (t.len && c->s[t.off] == '(') /* "(PC:SERIAL)" of some RTL traces */
		t = next(c);
	if (t.len == 1 && is_address(c, peek(c))) /* an attribute letter: "W04 X ADDRESS" */
		t = next(c);
	if (!t.len) {
		set_problem(l, "memory record without address", t);
		return;
	}
	if (fetch || !is_address(c, t)) { /* instruction fetches; "TRANSFER" */
		l->cls = TC_EVENT;
		return;
	}
	if (tok_is(c, peek(c), "(ABORTED)")) {
		l->cls = TC_EVENT;
		return;
	}
	l->cls = rw == 'R' ? TC_READ : TC_WRITE;
	l->addr = (struct tarmac_span){t.off, (uint16_t)hex_run(c, t)};
	l->va = hex_value(c->s + t.off, l->addr.len);
	l->size = size;
	l->tail = peek(c).off;
}

/* LD/ST (or a continuation line): "ADDRESS LANE LANE LANE LANE ...", bytes accessed shown,
 * the others "..", the rightmost byte at the lowest address. */
static void parse_lanes(struct cursor *c, struct tarmac_line *l, struct tarmac_span address)
{
	size_t digits = hex_run(c, address);
	if (!digits || digits != address.len || digits > 16) {
		set_problem(l, "LD/ST address is not 1 to 16 hex digits", address);
		return;
	}
	l->flags |= F_LANES;
	l->addr = address;
	uint64_t base = hex_value(c->s + address.off, digits);
	l->tail = peek(c).off;
	char lanes[32];
	size_t n = 0;
	for (struct tarmac_span t = peek(c); l->n_data < 4 && is_lane(c, t); t = peek(c)) {
		memcpy(lanes + n, c->s + t.off, 8);
		n += 8;
		l->n_data++;
		skip_past(c, t);
	}
	int lowest = -1;
	for (size_t byte = 0; byte < n / 2; byte++) {
		const char *pair = lanes + n - 2 * byte - 2;
		if (pair[0] == '.' && pair[1] == '.')
			continue;
		if (lowest < 0)
			lowest = (int)byte;
		l->size++;
	}
	l->va = base + (uint64_t)(lowest < 0 ? 0 : lowest);
	if (!l->n_data)
		l->tail = l->len; /* no data: "-" */
}

/* The kinds of line that are events, by their first token. */
static bool is_event_word(const struct cursor *c, struct tarmac_span t)
{
	static const char *const words[] = {"E", "CADI", "SIGNAL:", "EXC", "BR", "Tarmac"};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (tok_is(c, t, words[i]))
			return true;
	return false;
}

/* The prefix: an optional time and unit, then an optional cpu. */
static void parse_prefix(struct cursor *c, struct tarmac_line *l)
{
	const uint8_t *s = c->s;
	struct tarmac_span t0 = peek(c), t1 = peek_after(c, t0);
	size_t letters = 0;
	while (letters < t1.len && is_lower(s[t1.off + letters]))
		letters++;
	if (t1.len && letters == t1.len && letters <= 8 &&
	    parse_time(s + t0.off, t0.len, &l->time)) {
		l->time_tok = t0;
		l->unit = t1;
		l->flags |= F_TIME;
		skip_past(c, t1);
	} else if (t0.len) { /* "271ns" */
		size_t d = t0.len;
		while (d && is_lower(s[t0.off + d - 1]))
			d--;
		if (d < t0.len && t0.len - d <= 8 && parse_time(s + t0.off, d, &l->time)) {
			l->time_tok = (struct tarmac_span){t0.off, (uint16_t)d};
			l->unit =
			    (struct tarmac_span){(uint16_t)(t0.off + d), (uint16_t)(t0.len - d)};
			l->flags |= F_TIME;
			skip_past(c, t0);
		}
	}
	struct tarmac_span t = peek(c), after = peek_after(c, t);
	if (t.len > 3 && memcmp(s + t.off, "cpu", 3) == 0 &&
	    parse_cpu(s + t.off + 3, t.len - 3u, &l->cpu)) {
		l->has_cpu = true;
		skip_past(c, t);
	} else if ((tok_is(c, after, "IT") || tok_is(c, after, "IS")) &&
		   parse_cpu(s + t.off, t.len, &l->cpu)) { /* QEMU4V: "1 clk 0 IT" */
		l->has_cpu = l->numeric_cpu = true;
		skip_past(c, t);
	}
}

void tarmac_parse(const uint8_t *text, size_t len, int cont_cls, struct tarmac_line *l)
{
	struct cursor c;
	memset(l, 0, sizeof(*l));
	l->text = text;
	l->len = len;
	l->cls = TC_EVENT;
	if (tokenize(&c, text, len)) {
		l->flags |= F_BINARY;
		set_problem(l, "control bytes in a text line (binary data?)",
			    (struct tarmac_span){0, 0});
		return;
	}
	struct tarmac_span t0 = peek(&c);
	l->rest = t0.off;
	if (!t0.len || text[t0.off] == '#')
		return; /* blank line or comment: an event */
	if (cont_cls >= 0 && t0.len >= 8 && hex_run(&c, t0) == t0.len &&
	    is_lane(&c, peek_after(&c, t0))) {
		l->cls = (unsigned)cont_cls;
		l->flags |= F_CONT;
		skip_past(&c, t0);
		parse_lanes(&c, l, t0);
		return;
	}
	parse_prefix(&c, l);
	struct tarmac_span k = next(&c);
	l->rest = k.off;
	uint8_t rw;
	unsigned size;
	bool fetch;
	if (!k.len) {
		set_problem(l, "no record after the time", k);
	} else if (tok_is(&c, k, "IT") || tok_is(&c, k, "IS")) {
		l->cls = text[k.off + 1] == 'T' ? TC_INSTRUCTION : TC_SKIPPED;
		parse_instruction(&c, l);
	} else if (tok_is(&c, k, "ES")) {
		struct tarmac_span t = peek(&c);
		if (t.len && text[t.off] == '(') {
			l->cls = TC_INSTRUCTION;
			parse_es_instruction(&c, l);
		}
	} else if (tok_is(&c, k, "R")) {
		struct tarmac_span name = next(&c);
		if (!name.len || !peek(&c).len) {
			set_problem(l, "register record without name and value", name);
			return;
		}
		l->cls = TC_REGISTER;
		l->iset = name;
		l->tail = peek(&c).off;
	} else if (memory_kind(&c, k, &rw, &size, &fetch)) {
		parse_memory(&c, l, rw, size, fetch);
	} else if (tok_is(&c, k, "LD") || tok_is(&c, k, "ST")) {
		l->cls = text[k.off] == 'L' ? TC_READ : TC_WRITE;
		parse_lanes(&c, l, next(&c));
	} else if (!is_event_word(&c, k)) {
		set_problem(l, "unknown record kind", k);
	}
}

/* Decoding. */

struct tarmac_state {
	struct tm_lines lines;
	uint32_t last_cpu;
	uint32_t flags; /* S_LANES_* */
};

enum {
	S_LANES_READ = 1, /* the last line was an LD record or its continuation */
	S_LANES_WRITE = 2,
};

static void report(const struct tarmac_line *l, uint64_t number, struct tm_diag *diag)
{
	if (!diag)
		return;
	if (!l->bad_tok.len) {
		tm_diag_line(diag, number, "%s: kept in class unknown", l->problem);
		return;
	}
	int n = l->bad_tok.len > 40 ? 40 : l->bad_tok.len;
	tm_diag_line(diag, number, "%s ('%.*s%s'): kept in class unknown", l->problem, n,
		     (const char *)l->text + l->bad_tok.off, l->bad_tok.len > 40 ? "..." : "");
}

/* Fills r from the parsed line. */
static void make_record(struct tarmac_state *s, const struct tarmac_line *l,
			struct tarmac_record *r)
{
	r->head.cls = (uint8_t)l->cls;
	r->head.flags = (uint16_t)l->flags;
	r->cpu = l->has_cpu ? l->cpu : s->last_cpu;
	r->head.group = r->cpu < TM_MAX_GROUPS ? (uint8_t)r->cpu : UINT8_MAX;
	if (l->cls == TC_INSTRUCTION || l->cls == TC_SKIPPED || l->cls == TC_FETCH_FAILED)
		s->last_cpu = r->cpu;
	r->time = l->time;
	r->addr = l->va;
	/* memory: bytes accessed; instructions: the opcode's bytes (Thumb's 16-bit ones: 2) */
	r->size =
	    (uint16_t)(l->cls == TC_INSTRUCTION || l->cls == TC_SKIPPED || l->cls == TC_FETCH_FAILED
			   ? l->opcode.len / 2
			   : l->size);
	r->span[S_UNIT] = l->unit;
	r->span[S_ISET] = l->iset;
	r->span[S_MODE] = l->mode;
	r->span[S_MNEMONIC] = l->mnemonic;
	r->dump_len = (uint16_t)tarmac_dump_line(l, r->cpu, NULL);
	s->flags &= ~(uint32_t)(S_LANES_READ | S_LANES_WRITE);
	if (l->flags & F_LANES)
		s->flags |= l->cls == TC_READ ? S_LANES_READ : S_LANES_WRITE;
}

static int tarmac_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			 size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct tarmac_state *s = state;
	struct tarmac_record *out = recs;
	size_t pos = 0, n = 0;
	int ret = 0;

	struct tm_line l;
	/* an over-long line, skipped, breaks a run of LD/ST continuation lines */
	uint64_t lines_before = s->lines.line;
	while (n < max && tm_lines_next(&s->lines, in, &pos, TARMAC_MAX_LINE, &l, &ret, diag)) {
		if (l.number != lines_before + 1)
			s->flags &= ~(uint32_t)(S_LANES_READ | S_LANES_WRITE);
		lines_before = l.number;
		int cont = s->flags & S_LANES_READ    ? TC_READ
			   : s->flags & S_LANES_WRITE ? TC_WRITE
						      : -1;
		struct tarmac_line t;
		tarmac_parse(l.text, l.text_len, cont, &t);
		struct tarmac_record *r = &out[n++];
		make_record(s, &t, r);
		r->head.raw_rel = (uint32_t)l.off;
		r->head.raw_len = (uint32_t)l.raw_len;
		if (t.cls == TC_UNKNOWN)
			report(&t, l.number, diag);
		if (tm_lines_report_end(&s->lines, &l, diag))
			r->head.flags |= F_CRLF;
	}
	*n_out = n;
	*used = pos;
	return ret;
}

/* Detection. */

static const char *const tarmac_extensions[] = {"tarmac", NULL};
static const char *const qemu4v_extensions[] = {"qemu4v", "q4v", NULL};

/* MicroTESK's QEMU4V logs: tracer_NNNN.log. */
static bool is_tracer_log(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "tracer_", 7) != 0)
		return false;
	const char *p = base + 7;
	while (is_digit((uint8_t)*p))
		p++;
	return p > base + 7 && strcmp(p, ".log") == 0;
}

#define PROBE_LINES 16

struct evidence {
	unsigned records, unknown;
	bool numeric_cpu; /* "1 clk 0 IT": QEMU4V */
};

/* The complete lines of the head, parsed: timed records of known kinds and no unknown line
 * is strong evidence. Comments, blank lines and other untimed events do not count towards
 * PROBE_LINES: parsertest.txt opens with a 27-line licence. */
static struct evidence probe_content(const uint8_t *head, size_t head_len)
{
	struct evidence e = {0};
	const uint8_t *p = head, *end = head + head_len;
	int cont = -1;
	for (unsigned i = 0; p < end && i < PROBE_LINES;) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl && head_len >= TM_PROBE_HEAD_LEN)
			break; /* cut by the end of the head */
		size_t len = (size_t)((nl ? nl : end) - p);
		len -= len && p[len - 1] == '\r';
		struct tarmac_line l;
		if (len > TARMAC_MAX_LINE) {
			e.unknown++;
			break;
		}
		tarmac_parse(p, len, cont, &l);
		if (l.cls == TC_UNKNOWN)
			e.unknown++;
		else if ((l.flags & F_TIME) && l.cls != TC_EVENT)
			e.records++;
		i += l.cls != TC_EVENT || (l.flags & F_TIME);
		e.numeric_cpu |= l.numeric_cpu;
		cont = (l.flags & F_LANES) ? (int)l.cls : -1;
		p = nl ? nl + 1 : end;
	}
	return e;
}

static bool qemu4v_named(const char *name)
{
	return tm_name_has_extension(name, qemu4v_extensions) || is_tracer_log(name);
}

static int tarmac_name_bid(const char *name)
{
	return !qemu4v_named(name) && tm_name_has_extension(name, tarmac_extensions) ? 50 : 0;
}

static int tarmac_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	if (qemu4v_named(name))
		return 0;
	struct evidence e = probe_content(head, head_len);
	if (tm_name_has_extension(name, tarmac_extensions))
		return e.records > e.unknown ? 95 : 50;
	if (!e.records || e.unknown)
		return 0;
	return e.numeric_cpu ? 80 : 90;
}

static int qemu4v_name_bid(const char *name)
{
	return qemu4v_named(name) ? 50 : 0;
}

static int qemu4v_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	struct evidence e = probe_content(head, head_len);
	if (qemu4v_named(name))
		return e.records > e.unknown ? 95 : 50;
	return e.records && !e.unknown && e.numeric_cpu ? 92 : 0;
}

enum branch { NOT_BRANCH, BRANCH, COND_BRANCH };

/* Whether the word at s (len bytes, lower case) is an ARM condition code. */
static bool is_cond_code(const char *s, size_t len)
{
	static const char codes[] = "eq ne cs hs cc lo mi pl vs vc hi ls ge lt gt le ";
	for (const char *p = codes; len == 2 && *p; p += 3)
		if (p[0] == s[0] && p[1] == s[1])
			return true;
	return false;
}

/* Whether the operands from p (up to a ';' comment) name the register pc. */
static bool names_pc(const uint8_t *p, const uint8_t *end)
{
	for (; p + 1 < end && *p != ';'; p++)
		if ((p[0] | 0x20) == 'p' && (p[1] | 0x20) == 'c' && !isalnum(p[-1]) &&
		    (p + 2 == end || !isalnum(p[2])))
			return true;
	return false;
}

/* An ARM branch, by the mnemonic the disassembly starts with (doc/formats.md): B, BL, BX, BLX,
 * BR, BLR, RET, ERET (and their pointer-authenticating forms), POP and LDM of pc; conditional:
 * B.cond, CBZ, CBNZ, TBZ, TBNZ, and B, BL, BX, BLX with a condition code. */
static enum branch arm_branch(const uint8_t *line, struct tarmac_span m, const uint8_t *end)
{
	static const char *const cond[] = {"cbz", "cbnz", "tbz", "tbnz"};
	static const char *const always[] = {"b",     "bl",    "bx",	 "blx",	  "br",	   "blr",
					     "ret",   "eret",  "braa",	 "brab",  "blraa", "blrab",
					     "retaa", "retab", "eretaa", "eretab"};
	static const char *const bases[] = {"blx", "bx", "bl", "b"};
	char s[16];
	size_t n = m.len;
	if (!n || n >= sizeof(s))
		return NOT_BRANCH;
	for (size_t k = 0; k < n; k++)
		s[k] = (char)tolower(line[m.off + k]);
	s[n] = '\0';
	if (n > 2 && s[n - 2] == '.' && (s[n - 1] == 'w' || s[n - 1] == 'n'))
		s[n -= 2] = '\0'; /* Thumb's width */
	if (s[0] == 'b' && s[1] == '.')
		return COND_BRANCH; /* A64 B.cond */
	for (size_t k = 0; k < sizeof(cond) / sizeof(cond[0]); k++)
		if (strcmp(s, cond[k]) == 0)
			return COND_BRANCH;
	for (size_t k = 0; k < sizeof(always) / sizeof(always[0]); k++)
		if (strcmp(s, always[k]) == 0)
			return BRANCH;
	for (size_t k = 0; k < sizeof(bases) / sizeof(bases[0]); k++) {
		size_t len = strlen(bases[k]);
		if (strncmp(s, bases[k], len) == 0 && is_cond_code(s + len, n - len))
			return COND_BRANCH;
	}
	if ((strcmp(s, "pop") == 0 || strncmp(s, "ldm", 3) == 0) &&
	    names_pc(line + m.off + m.len, end))
		return BRANCH;
	return NOT_BRANCH;
}

/* Executed (IT) and condition-failed (IS) instructions, on their processor. A branch that
 * failed its condition is not taken; a conditional one that ran is taken where the next PC of
 * its processor does not follow; the others always leave the straight line. */
static bool tarmac_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct tarmac_record *r = tarmac_rec(c, i);
	if (r->head.cls != TC_INSTRUCTION && r->head.cls != TC_SKIPPED)
		return false;
	const uint8_t *line = c->raw + r->head.raw_rel;
	enum branch kind = arm_branch(line, r->span[S_MNEMONIC], line + r->head.raw_len);
	*out = (struct tm_insn){.pc = r->addr,
				.size = r->size ? r->size : 4,
				.stream = r->cpu < TM_MAX_GROUPS ? (uint8_t)r->cpu : 0};
	if (kind != NOT_BRANCH)
		out->flow = r->head.cls == TC_SKIPPED ? TM_FLOW_NOT_TAKEN
			    : kind == BRANCH	      ? TM_FLOW_JUMP
						      : TM_FLOW_COND;
	return true;
}

#define TARMAC_FORMAT_COMMON                                                                       \
	.classes = tarmac_classes, .n_classes = TARMAC_N_CLASSES, .group_view = "cpu/%u.txt",      \
	.record_size = sizeof(struct tarmac_record), .state_size = sizeof(struct tarmac_state),    \
	.stats_size = sizeof(struct tarmac_stats), .chunk_records = 8192, .content_bid_max = 95,   \
	.decode = tarmac_decode, .dump = &tarmac_dump_ops, .stats_init = tarmac_stats_init,        \
	.stats_update = tarmac_stats_update, .stats_finish = tarmac_stats_finish,                  \
	.stats_free = tarmac_stats_free, .extra_views = tarmac_extra_views, .n_extra_views = 1,    \
	.instruction = tarmac_instruction

const struct tm_format tm_format_tarmac = {
    .name = "tarmac",
    .description = "ARM Tarmac text trace (Fast Models, gem5, RTL and others)",
    .recognition = "extension .tarmac, or lines such as \"N clk IT (...)\"",
    .extensions = tarmac_extensions,
    .class_ext = "tarmac",
    .name_bid = tarmac_name_bid,
    .content_bid = tarmac_content_bid,
    TARMAC_FORMAT_COMMON,
};

const struct tm_format tm_format_qemu4v = {
    .name = "qemu4v",
    .description = "QEMU4V text trace (Tarmac syntax; MicroTESK logs)",
    .recognition = "extension .qemu4v or .q4v, name tracer_NNNN.log, or Tarmac lines with a "
		   "numeric cpu before IT",
    .extensions = qemu4v_extensions,
    .class_ext = "qemu4v",
    .name_bid = qemu4v_name_bid,
    .content_bid = qemu4v_content_bid,
    TARMAC_FORMAT_COMMON,
};
