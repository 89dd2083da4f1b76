/* QEMU4V and ARM Tarmac text traces: the line parser, which takes one line apart for the
 * decoder and detection (tarmac.c) and for the views (tarmac_views.c), and the classes it
 * sorts lines into. The rules, dialect by dialect, are in doc/formats.md. */
#include <string.h>

#include "tarmac.h"
#include "tracemount/util.h"

const char *const tarmac_classes[TARMAC_N_CLASSES] = {
    "executed",		/* TC_INSTRUCTION */
    "condition_failed", /* TC_SKIPPED */
    "fetch_failed",	/* TC_FETCH_FAILED */
    "memory_reads",	/* TC_READ */
    "memory_writes",	/* TC_WRITE */
    "registers",	/* TC_REGISTER */
    "events",		/* TC_EVENT */
    "unknown",		/* TC_UNKNOWN */
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
	char lanes[4 * 8]; /* up to 4 lanes of 8 hex digits (l->n_data) */
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
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
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
