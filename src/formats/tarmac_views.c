/* QEMU4V / Tarmac views: dump.txt (and class/CLASS.txt) and convert/NAME.din. Columns: the
 * QEMU4V and Tarmac section of doc/views.md. */
#include <string.h>

#include "tarmac.h"
#include "tracemount/util.h"

/* Writes to p, or with p NULL only counts. */
struct out {
	char *p;
	size_t n;
};

static void put(struct out *o, const void *s, size_t n)
{
	if (o->p)
		memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void put_char(struct out *o, char c)
{
	if (o->p)
		o->p[o->n] = c;
	o->n++;
}

/* A field and the space after it: "-" when absent. */
static void put_field(struct out *o, const struct tarmac_line *l, struct tarmac_span t)
{
	if (t.len)
		put(o, l->text + t.off, t.len);
	else
		put_char(o, '-');
	put_char(o, ' ');
}

/* The tokens from offset `from` on (at most max, 0: all), separated by sep (0: none, and '_'
 * dropped); "-" when that writes nothing. */
static void put_tokens(struct out *o, const struct tarmac_line *l, size_t from, unsigned max,
		       char sep)
{
	size_t start = o->n;
	unsigned tokens = 0;
	for (size_t i = from; i < l->len;) {
		while (i < l->len && (l->text[i] == ' ' || l->text[i] == '\t'))
			i++;
		if (i == l->len || (max && tokens == max))
			break;
		if (tokens++ && sep)
			put_char(o, sep);
		size_t e = i;
		while (e < l->len && l->text[e] != ' ' && l->text[e] != '\t')
			e++;
		if (sep) {
			put(o, l->text + i, e - i);
		} else {
			for (size_t k = i; k < e; k++)
				if (l->text[k] != '_')
					put_char(o, (char)l->text[k]);
		}
		i = e;
	}
	if (o->n == start)
		put_char(o, '-');
}

static const char *const kind_names[TARMAC_N_CLASSES] = {
    "IT", /* TC_INSTRUCTION */
    "IS", /* TC_SKIPPED */
    "IF", /* TC_FETCH_FAILED */
    "MR", /* TC_READ */
    "MW", /* TC_WRITE */
    "R",  /* TC_REGISTER */
    "E",  /* TC_EVENT */
    "?",  /* TC_UNKNOWN */
};

size_t tarmac_dump_line(const struct tarmac_line *l, uint32_t cpu, char *out)
{
	struct out o = {out, 0};
	char digits[sizeof("18446744073709551615")]; /* a cpu number */
	put_field(&o, l, l->time_tok);
	put_field(&o, l, l->unit);
	put(&o, digits, (size_t)(tm_put_decimal(digits, cpu, 0) - digits));
	put_char(&o, ' ');
	put(&o, kind_names[l->cls], kind_names[l->cls][1] ? 2 : 1); /* names of 1 or 2 bytes */
	put_char(&o, ' ');
	switch (l->cls) {
	case TC_INSTRUCTION:
	case TC_SKIPPED:
	case TC_FETCH_FAILED:
		put_field(&o, l, l->addr);
		put_field(&o, l, l->opcode);
		put_field(&o, l, l->iset);
		put_field(&o, l, l->mode);
		put_tokens(&o, l, l->tail, 0, ' ');
		break;
	case TC_READ:
	case TC_WRITE:
		if (l->flags & F_LANES) { /* the accessed byte's address, as wide as the base's */
			unsigned n =
			    tm_hex_len(l->va) > l->addr.len ? tm_hex_len(l->va) : l->addr.len;
			if (o.p)
				tm_put_hex(o.p + o.n, l->va, n);
			o.n += n;
			put_char(&o, ' ');
		} else {
			put_field(&o, l, l->addr);
		}
		put(&o, digits, (size_t)(tm_put_decimal(digits, l->size, 0) - digits));
		put_char(&o, ' ');
		put_tokens(&o, l, l->tail, l->n_data, 0);
		break;
	case TC_REGISTER:
		put_field(&o, l, l->iset);
		put_tokens(&o, l, l->tail, 0, ' ');
		break;
	default: put_tokens(&o, l, (l->flags & F_BINARY) ? l->len : l->rest, 0, ' ');
	}
	put_char(&o, '\n');
	return o.n;
}

static size_t dump_measure(const struct tm_chunk *c, size_t i)
{
	return tarmac_rec(c, i)->dump_len;
}

/* The line is parsed again: records keep only what the index pass and statistics need. */
static size_t dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tarmac_record *r = tarmac_rec(c, i);
	const uint8_t *text = c->raw + r->head.raw_rel;
	size_t len = r->head.raw_len;
	len -= len && text[len - 1] == '\n';
	len -= len && text[len - 1] == '\r'; /* as the decoder's line splitter drops it */
	int cont = (r->head.flags & F_CONT) ? r->head.cls : -1;
	struct tarmac_line l;
	tarmac_parse(text, len, cont, &l);
	return tarmac_dump_line(&l, r->cpu, out);
}

const struct tm_render_ops tarmac_dump_ops = {
    .measure = dump_measure,
    .render = dump_render,
};

/* convert/NAME.din: "2 VA" for each instruction, executed or condition-failed (it was fetched
 * all the same: simulators that mark no failed condition give the same din), "0 VA" for each
 * read, "1 VA" for each write, lower-case hex without leading zeros. */
static size_t din_measure(const struct tm_chunk *c, size_t i)
{
	return 3 + tm_hex_len(tarmac_rec(c, i)->addr);
}

static size_t din_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct tarmac_record *r = tarmac_rec(c, i);
	unsigned n = tm_hex_len(r->addr);
	out[0] = r->head.cls == TC_READ ? '0' : r->head.cls == TC_WRITE ? '1' : '2';
	out[1] = ' ';
	tm_put_hex(out + 2, r->addr, n);
	out[2 + n] = '\n';
	return 3 + n;
}

static const struct tm_render_ops tarmac_din_ops = {
    .measure = din_measure,
    .render = din_render,
};

const struct tm_view_desc tarmac_extra_views[TARMAC_N_EXTRA_VIEWS] = {
    {"convert/%s.din", 1u << TC_INSTRUCTION | 1u << TC_SKIPPED | 1u << TC_READ | 1u << TC_WRITE,
     &tarmac_din_ops},
};
