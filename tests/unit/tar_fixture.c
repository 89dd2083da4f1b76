/* Tar archives built block by block in memory, and the tar reader run over them (tar_fixture.h). */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_source.h"
#include "tar_fixture.h"
#include "tracemount/diag.h"
#include "tracemount/tar.h"

/* Building archives. */

void put(struct arc *a, const void *p, size_t n)
{
	if (a->len + n > a->cap) {
		a->cap = (a->len + n) * 2 + 4096;
		a->b = realloc(a->b, a->cap);
		ck_assert_ptr_nonnull(a->b);
	}
	if (p)
		memcpy(a->b + a->len, p, n);
	else
		memset(a->b + a->len, 0, n);
	a->len += n;
}

void pad(struct arc *a)
{
	if (a->len % TM_TAR_BLOCK)
		put(a, NULL, TM_TAR_BLOCK - a->len % TM_TAR_BLOCK);
}

void data(struct arc *a, const void *p, size_t n)
{
	put(a, p, n);
	pad(a);
}

void end_blocks(struct arc *a)
{
	put(a, NULL, 2 * TM_TAR_BLOCK);
}

void octal(uint8_t *f, size_t len, uint64_t v)
{
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "%0*llo", (int)len - 1, (unsigned long long)v);
	memcpy(f, tmp, len - 1);
	f[len - 1] = '\0';
}

void base256(uint8_t *f, size_t len, int64_t v)
{
	uint64_t u = (uint64_t)v;
	for (size_t i = len; i-- > 1;) {
		f[i] = (uint8_t)u;
		u = v < 0 ? (u >> 8) | 0xff00000000000000ull : u >> 8;
	}
	f[0] = v < 0 ? 0xff : 0x80;
}

void seal(uint8_t *h, bool signed_sum)
{
	memset(h + 148, ' ', 8);
	long sum = 0;
	for (int i = 0; i < 512; i++)
		sum += signed_sum ? (signed char)h[i] : h[i];
	char tmp[16];
	snprintf(tmp, sizeof(tmp), "%06lo", (unsigned long)sum & 0777777);
	memcpy(h + 148, tmp, 6);
	h[154] = '\0';
	h[155] = ' ';
}

void header_block(uint8_t *h, const struct hs *s)
{
	memset(h, 0, TM_TAR_BLOCK);
	if (s->name)
		memcpy(h, s->name, strnlen(s->name, 100));
	octal(h + 100, 8, s->mode ? s->mode : 0644);
	octal(h + 108, 8, 1000);
	octal(h + 116, 8, 1000);
	if (s->b256_size)
		base256(h + 124, 12, (int64_t)s->size);
	else
		octal(h + 124, 12, s->size);
	int64_t mtime = s->mtime ? s->mtime : 1700000000;
	if (s->b256_mtime || mtime < 0)
		base256(h + 136, 12, mtime);
	else
		octal(h + 136, 12, (uint64_t)mtime);
	h[156] = (uint8_t)(s->type ? s->type : '0');
	if (s->link)
		memcpy(h + 157, s->link, strnlen(s->link, 100));
	if (s->gnu)
		memcpy(h + 257, "ustar  ", 8);
	else if (!s->v7)
		memcpy(h + 257,
		       "ustar\0"
		       "00",
		       8);
	if (s->prefix)
		memcpy(h + 345, s->prefix, strnlen(s->prefix, 155));
	for (unsigned i = 0; i < s->n_runs; i++) {
		octal(h + 386 + i * 24, 12, s->runs[2 * i]);
		octal(h + 386 + i * 24 + 12, 12, s->runs[2 * i + 1]);
	}
	h[482] = s->extended;
	if (s->type == 'S')
		octal(h + 483, 12, s->realsize);
	seal(h, s->signed_sum);
}

void header(struct arc *a, const struct hs *s)
{
	uint8_t h[TM_TAR_BLOCK];
	header_block(h, s);
	put(a, h, sizeof(h));
}

/* A regular member: its header and data. */
void file(struct arc *a, const char *name, const void *p, size_t n)
{
	header(a, &(struct hs){.name = name, .size = n});
	data(a, p, n);
}

/* A GNU 'L' or 'K' header with its text. */
void gnu_long(struct arc *a, char type, const char *text)
{
	size_t n = strlen(text) + 1;
	header(a, &(struct hs){.name = "././@LongLink", .type = type, .size = n, .gnu = true});
	data(a, text, n);
}

/* A pax header ('x' or 'g') of records given as "key=value" strings, NULL-terminated. */
void pax(struct arc *a, char type, const char *const *kv)
{
	char text[65536];
	size_t len = 0;
	for (; *kv; kv++) {
		size_t body = strlen(*kv) + 2; /* " " and "\n" */
		size_t n = body + 1;
		while (snprintf(NULL, 0, "%zu", n) + body != n)
			n = snprintf(NULL, 0, "%zu", n) + body;
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%zu %s\n", n, *kv);
	}
	header(a, &(struct hs){.name = "PaxHeader/x", .type = type, .size = len});
	data(a, text, len);
}

/* Reading them. */

int collect(void *arg, const struct tm_tar_member *m)
{
	struct got *g = arg;
	ck_assert_int_lt(g->n, MAX_MEMBERS);
	struct mem *o = &g->m[g->n++];
	ck_assert_uint_lt(strlen(m->path), sizeof(o->path));
	strcpy(o->path, m->path);
	if (m->link) {
		ck_assert_uint_lt(strlen(m->link), sizeof(o->link));
		strcpy(o->link, m->link);
		o->has_link = true;
	}
	o->type = m->type;
	o->header = m->header;
	o->offset = m->offset;
	o->size = m->size;
	o->stored = m->stored;
	o->cut = m->cut;
	o->mtime = m->mtime;
	o->mode = m->mode;
	o->uid = m->uid;
	o->gid = m->gid;
	o->sparse = m->runs != NULL;
	o->n_runs = m->n_runs;
	if (m->runs) {
		ck_assert_uint_le(m->n_runs, 64);
		memcpy(o->runs, m->runs, m->n_runs * sizeof(*m->runs));
	}
	ck_assert_uint_le(m->head_len, sizeof(o->head));
	o->head_len = m->head_len;
	if (m->head_len)
		memcpy(o->head, m->head, m->head_len);
	if (g->stop_after && g->n == g->stop_after)
		return 99;
	return 0;
}

const struct tm_tar_options default_opt = {.head_min = 512, .head_max = 4096};

struct got *read_one(const uint8_t *b, size_t len, const struct tm_tar_options *opt,
		     bool sequential, int stop_after, int fail)
{
	struct got *g = calloc(1, sizeof(*g));
	ck_assert_ptr_nonnull(g);
	g->stop_after = stop_after;
	struct mem_source src;
	mem_source_init(&src, b, len);
	src.fail = fail;
	struct tm_tar_options o = *opt;
	o.sequential = sequential;
	struct tm_diag d;
	tm_diag_init(&d);
	g->ret = tm_tar_read(&src.src, &o, collect, g, &d, &g->end);
	ck_assert_int_eq(tm_diag_finish(&d), 0);
	g->diag = strndup(d.text ? d.text : "", d.len);
	g->truncated = d.truncated;
	tm_diag_free(&d);
	mem_source_free(&src);
	return g;
}

void got_free(struct got *g)
{
	free(g->diag);
	free(g);
}

/* Reads the archive seekable and sequential: the same members, problems, end and return. */
struct got *read_opt(const struct arc *a, const struct tm_tar_options *opt, int stop_after)
{
	struct got *s = read_one(a->b, a->len, opt, false, stop_after, 0);
	struct got *q = read_one(a->b, a->len, opt, true, stop_after, 0);
	ck_assert_int_eq(s->ret, q->ret);
	ck_assert_int_eq(s->n, q->n);
	ck_assert_uint_eq(s->end, q->end);
	ck_assert_str_eq(s->diag, q->diag);
	ck_assert_int_eq(s->truncated, q->truncated);
	for (int i = 0; i < s->n; i++)
		ck_assert_msg(memcmp(&s->m[i], &q->m[i], sizeof(s->m[i])) == 0,
			      "member %d (%s) differs between seekable and sequential reads", i,
			      s->m[i].path);
	got_free(q);
	return s;
}

struct got *read_arc(const struct arc *a)
{
	return read_opt(a, &default_opt, 0);
}

/* Whether the problems hold line (a whole line). */
bool has_line(const struct got *g, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = g->diag; (p = strstr(p, line)); p++)
		if ((p == g->diag || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

uint8_t *pattern(size_t n, unsigned seed)
{
	uint8_t *p = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(p);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		p[i] = (uint8_t)x;
	}
	return p;
}
