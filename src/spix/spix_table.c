/* The spixcounts block table: its file form, both ways, its texts and sadd's sum. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spix/spix.h"

int tm_spix_table_reserve(struct tm_spix_table *t, uint64_t n)
{
	if (n <= t->cap)
		return 0;
	if (n > TM_SPIX_MAX_BLOCKS)
		return -EFBIG;
	uint64_t cap = t->cap ? t->cap : 256;
	while (cap < n)
		cap *= 2;
	if (cap > TM_SPIX_MAX_BLOCKS)
		cap = TM_SPIX_MAX_BLOCKS;
	uint8_t *len = realloc(t->len, cap);
	if (len)
		t->len = len;
	uint32_t(*count)[2] = len ? realloc(t->count, cap * sizeof(*count)) : NULL;
	if (count)
		t->count = count;
	uint64_t *addr = count && t->addr ? realloc(t->addr, cap * sizeof(*addr)) : NULL;
	if (addr)
		t->addr = addr;
	if (!len || !count || (t->addr && !addr))
		return -ENOMEM;
	t->cap = (uint32_t)cap;
	return 0;
}

void tm_spix_table_free(struct tm_spix_table *t)
{
	free(t->len);
	free(t->count);
	free(t->addr);
	memset(t, 0, sizeof(*t));
}

static void put_word(uint8_t *p, uint32_t v, bool big_endian)
{
	for (int i = 0; i < 4; i++)
		p[big_endian ? i : 3 - i] = (uint8_t)(v >> (24 - 8 * i));
}

/* 0, or -EIO when a write to f failed (a table's writer: -ENOMEM). */
static int stream_done(FILE *f)
{
	return ferror(f) ? -EIO : 0;
}

int tm_spix_write(const struct tm_spix_table *t, FILE *f)
{
	uint8_t header[TM_SPIX_HEADER], pad[4] = {0}, pair[8];
	uint32_t words[4] = {TM_SPIX_MAGIC, t->tsize, t->tsum, t->nbb};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		put_word(header + 4 * i, words[i], t->big_endian);
	fwrite(header, 1, sizeof(header), f);
	fwrite(t->len, 1, t->nbb, f);
	fwrite(pad, 1, TM_SPIX_CNT_OFF(t->nbb) - TM_SPIX_HEADER - t->nbb, f);
	for (uint32_t b = 0; b < t->nbb; b++) {
		put_word(pair, t->count[b][0], t->big_endian);
		put_word(pair + 4, t->count[b][1], t->big_endian);
		fwrite(pair, 1, sizeof(pair), f);
	}
	return stream_done(f);
}

static int say(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

bool tm_spix_header(const uint8_t *p, size_t len, struct tm_spix_header *h)
{
	if (len < 4)
		return false;
	h->big_endian = p[0] == 0x62;
	if (tm_spix_word(p, h->big_endian) != TM_SPIX_MAGIC)
		return false;
	if (len >= TM_SPIX_HEADER) {
		h->tsize = tm_spix_word(p + 4, h->big_endian);
		h->tsum = tm_spix_word(p + 8, h->big_endian);
		h->nbb = tm_spix_word(p + 12, h->big_endian);
	}
	return true;
}

int tm_spix_parse(const uint8_t *buf, size_t len, struct tm_spix_table *t, char *why,
		  size_t why_len)
{
	struct tm_spix_header h;
	memset(t, 0, sizeof(*t));
	if (len < 4)
		return say(why, why_len, "unexpected EOF in the header (%zu of 16 bytes)", len);
	if (!tm_spix_header(buf, len, &h)) {
		t->big_endian = true; /* no order: SPARC's */
		return say(why, why_len, "bad magic");
	}
	t->big_endian = h.big_endian;
	if (len < TM_SPIX_HEADER)
		return say(why, why_len, "unexpected EOF in the header (%zu of 16 bytes)", len);
	t->tsize = h.tsize;
	t->tsum = h.tsum;
	uint32_t nbb = h.nbb;
	/* the blocks read whole: a length and a counter pair each */
	uint64_t whole = len >= TM_SPIX_CNT_OFF(nbb) ? (len - TM_SPIX_CNT_OFF(nbb)) / 8 : 0;
	if (whole > nbb)
		whole = nbb;
	int err = tm_spix_table_reserve(t, whole ? whole : 1);
	if (err == -EFBIG) {
		say(why, why_len, "%" PRIu64 " blocks, more than the %u tracemount holds", whole,
		    TM_SPIX_MAX_BLOCKS);
		return err;
	}
	if (err)
		return err;
	t->nbb = (uint32_t)whole;
	memcpy(t->len, buf + TM_SPIX_HEADER, whole);
	const uint8_t *c = buf + TM_SPIX_CNT_OFF(nbb);
	for (uint64_t b = 0; b < whole; b++, c += 8) {
		t->count[b][0] = tm_spix_word(c, t->big_endian);
		t->count[b][1] = tm_spix_word(c + 4, t->big_endian);
	}
	if (whole < nbb)
		return say(why, why_len, "unexpected EOF: %" PRIu64 " of %" PRIu32 " blocks", whole,
			   nbb);
	return 0;
}

void tm_spix_totals(const struct tm_spix_table *t, struct tm_spix_totals *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t b = 0; b < t->nbb; b++) {
		uint64_t n = tm_spix_block_instructions(t, b);
		out->instructions += n;
		out->executed += n > 0;
		out->non_executable += tm_spix_non_executable(t, b);
	}
}

/* Text offset of every block: the lengths before it, in bytes. */
static uint64_t *block_offsets(const struct tm_spix_table *t)
{
	uint64_t *off = malloc(((size_t)t->nbb + 1) * sizeof(*off));
	if (!off)
		return NULL;
	off[0] = 0;
	for (uint32_t b = 0; b < t->nbb; b++)
		off[b + 1] = off[b] + 4u * t->len[b];
	return off;
}

static void put_counter(FILE *f, uint32_t v)
{
	if (v == TM_SPIX_BADCNT)
		fputs(" -", f);
	else
		fprintf(f, " %" PRIu32, v);
}

int tm_spix_blocks(const struct tm_spix_table *t, FILE *f)
{
	uint64_t off = 0;
	for (uint32_t b = 0; b < t->nbb; b++) {
		fprintf(f, "%" PRIu32 " 0x%08" PRIx64 " %u", b, off, t->len[b]);
		put_counter(f, t->count[b][0]);
		put_counter(f, t->count[b][1]);
		fputc('\n', f);
		off += 4u * t->len[b];
	}
	return stream_done(f);
}

struct ranked {
	uint64_t instructions;
	uint32_t block;
};

static int by_instructions(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->instructions != y->instructions)
		return x->instructions < y->instructions ? 1 : -1;
	return x->block < y->block ? -1 : x->block > y->block;
}

int tm_spix_summary(const struct tm_spix_table *t, FILE *f)
{
	struct tm_spix_totals tot;
	uint64_t *off = block_offsets(t);
	struct ranked *rank = malloc(((size_t)t->nbb + 1) * sizeof(*rank));
	if (!off || !rank) {
		free(off);
		free(rank);
		return -ENOMEM;
	}
	tm_spix_totals(t, &tot);
	uint32_t executed = 0;
	for (uint32_t b = 0; b < t->nbb; b++) {
		uint64_t n = tm_spix_block_instructions(t, b);
		if (n)
			rank[executed++] = (struct ranked){n, b};
	}
	qsort(rank, executed, sizeof(*rank), by_instructions);
	fprintf(f,
		"magic 0x%08x %s-endian\n"
		"text_size %" PRIu32 "\n"
		"text_checksum 0x%08" PRIx32 "\n"
		"blocks %" PRIu32 "\n"
		"non_executable_blocks %" PRIu32 "\n"
		"executed_blocks %" PRIu32 "\n"
		"instructions %" PRIu64 "\n\n",
		TM_SPIX_MAGIC, t->big_endian ? "big" : "little", t->tsize, t->tsum, t->nbb,
		tot.non_executable, tot.executed, tot.instructions);
	fprintf(f, "rank block offset length executions instructions percent cumulative%s\n",
		t->addr ? " address" : "");
	uint64_t sum = 0;
	for (uint32_t k = 0; k < executed; k++) {
		uint32_t b = rank[k].block;
		sum += rank[k].instructions;
		fprintf(f,
			"%" PRIu32 " %" PRIu32 " 0x%08" PRIx64 " %u %" PRIu64 " %" PRIu64
			" %.2f %.2f",
			k + 1, b, off[b], t->len[b], rank[k].instructions / t->len[b],
			rank[k].instructions,
			100.0 * (double)rank[k].instructions / (double)tot.instructions,
			100.0 * (double)sum / (double)tot.instructions);
		if (t->addr)
			fprintf(f, " 0x%" PRIx64, t->addr[b]);
		fputc('\n', f);
	}
	free(off);
	free(rank);
	return stream_done(f);
}

uint64_t tm_spix_add(struct tm_spix_table *sum, const struct tm_spix_table *b, char *why,
		     size_t why_len)
{
	uint64_t off = 0, problems = 0;
	for (uint32_t k = 0; k < sum->nbb && k < b->nbb; off += 4u * sum->len[k], k++) {
		uint32_t *x = sum->count[k];
		const uint32_t *y = b->count[k];
		bool bad_x = x[0] == TM_SPIX_BADCNT, bad_y = y[0] == TM_SPIX_BADCNT;
		if (bad_x || bad_y) {
			if (bad_x == bad_y)
				continue; /* non-executable in both */
			if (!problems++)
				snprintf(why, why_len,
					 "block %" PRIu32 " (text offset 0x%08" PRIx64
					 ") is non-executable in one file only",
					 k, off);
			if (bad_x)
				memcpy(x, y, 2 * sizeof(*x));
			continue;
		}
		bool over = false;
		for (int i = 0; i < 2; i++) {
			uint64_t v = (uint64_t)x[i] + y[i];
			over |= v >= TM_SPIX_BADCNT;
			x[i] = v >= TM_SPIX_BADCNT ? TM_SPIX_BADCNT - 1 : (uint32_t)v;
		}
		if (over && !problems++)
			snprintf(why, why_len,
				 "counter overflow at block %" PRIu32 " (text offset 0x%08" PRIx64
				 ")",
				 k, off);
	}
	return problems;
}
