/* The tar reader (src/archive/tar.c): tm_tar_read over archives built here block by block (an
 * in-memory source), tm_tar_normalise and tm_tar_is_header.
 *
 * Every archive is read twice, seekable and sequential (a decompressing scan's mode): both must
 * give the same members, the same problems and the same end. Covered: ustar's prefix, v7
 * headers, GNU long names and link names ('L', 'K'), pax extended headers ('x') and global ones
 * ('g') for path, linkpath, size and mtime (fractions, negative), base-256 sizes and times, old
 * GNU sparse members with extension blocks, pax sparse 0.0, 0.1 and 1.0, bad checksums, cuts
 * inside a header, a member's data, a sparse map, a pax header and an extension block, a lone
 * zero block, malformed pax records, devices and FIFOs, hard links, the head bytes kept for
 * detection (head_min, head_more, head_max, holes as zeros), the callback's stop and read
 * errors. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem_source.h"
#include "tracemount/diag.h"
#include "tracemount/tar.h"

/* Building archives. */

struct arc {
	uint8_t *b;
	size_t len, cap;
};

static void put(struct arc *a, const void *p, size_t n)
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

static void pad(struct arc *a)
{
	if (a->len % TM_TAR_BLOCK)
		put(a, NULL, TM_TAR_BLOCK - a->len % TM_TAR_BLOCK);
}

static void data(struct arc *a, const void *p, size_t n)
{
	put(a, p, n);
	pad(a);
}

static void end_blocks(struct arc *a)
{
	put(a, NULL, 2 * TM_TAR_BLOCK);
}

/* One header's fields; zero values give the defaults. */
struct hs {
	const char *name, *link, *prefix;
	char type;	  /* '\0': '0' */
	uint64_t size;	  /* of the data that follows */
	int64_t mtime;	  /* 0: 1700000000 */
	unsigned mode;	  /* 0: 0644 */
	bool gnu;	  /* GNU's magic "ustar  \0" instead of POSIX's "ustar\0" "00" */
	bool v7;	  /* no magic at all */
	bool b256_size;	  /* the size in base-256 */
	bool b256_mtime;  /* the mtime in base-256 (negative ones always are) */
	bool signed_sum;  /* the checksum as old tars summed: signed bytes */
	uint64_t runs[8]; /* 'S': up to four offset, size pairs */
	unsigned n_runs;
	bool extended; /* 'S': extension blocks follow */
	uint64_t realsize;
};

static void octal(uint8_t *f, size_t len, uint64_t v)
{
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "%0*llo", (int)len - 1, (unsigned long long)v);
	memcpy(f, tmp, len - 1);
	f[len - 1] = '\0';
}

static void base256(uint8_t *f, size_t len, int64_t v)
{
	uint64_t u = (uint64_t)v;
	for (size_t i = len; i-- > 1;) {
		f[i] = (uint8_t)u;
		u = v < 0 ? (u >> 8) | 0xff00000000000000ull : u >> 8;
	}
	f[0] = v < 0 ? 0xff : 0x80;
}

static void seal(uint8_t *h, bool signed_sum)
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

static void header_block(uint8_t *h, const struct hs *s)
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

static void header(struct arc *a, const struct hs *s)
{
	uint8_t h[TM_TAR_BLOCK];
	header_block(h, s);
	put(a, h, sizeof(h));
}

/* A regular member: its header and data. */
static void file(struct arc *a, const char *name, const void *p, size_t n)
{
	header(a, &(struct hs){.name = name, .size = n});
	data(a, p, n);
}

/* A GNU 'L' or 'K' header with its text. */
static void gnu_long(struct arc *a, char type, const char *text)
{
	size_t n = strlen(text) + 1;
	header(a, &(struct hs){.name = "././@LongLink", .type = type, .size = n, .gnu = true});
	data(a, text, n);
}

/* A pax header ('x' or 'g') of records given as "key=value" strings, NULL-terminated. */
static void pax(struct arc *a, char type, const char *const *kv)
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

struct mem {
	char path[PATH_MAX], link[PATH_MAX];
	bool has_link;
	enum tm_member_type type;
	uint64_t header, offset, size, stored;
	bool cut;
	int64_t mtime;
	uint32_t mode, uid, gid;
	uint32_t n_runs;
	bool sparse;
	struct tm_sparse_run runs[64];
	size_t head_len;
	uint8_t head[8192];
};

#define MAX_MEMBERS 64

struct got {
	struct mem m[MAX_MEMBERS];
	int n;
	int stop_after; /* >0: the callback returns 99 after this many */
	int ret;
	uint64_t end;
	char *diag;
	bool truncated;
};

static int collect(void *arg, const struct tm_tar_member *m)
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

static const struct tm_tar_options default_opt = {.head_min = 512, .head_max = 4096};

static struct got *read_one(const uint8_t *b, size_t len, const struct tm_tar_options *opt,
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

static void got_free(struct got *g)
{
	free(g->diag);
	free(g);
}

/* Reads the archive seekable and sequential: the same members, problems, end and return. */
static struct got *read_opt(const struct arc *a, const struct tm_tar_options *opt, int stop_after)
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

static struct got *read_arc(const struct arc *a)
{
	return read_opt(a, &default_opt, 0);
}

/* Whether the problems hold line (a whole line). */
static bool has_line(const struct got *g, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = g->diag; (p = strstr(p, line)); p++)
		if ((p == g->diag || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define ck_line(g, ...)                                                                            \
	do {                                                                                       \
		char want_[1024];                                                                  \
		snprintf(want_, sizeof(want_), __VA_ARGS__);                                       \
		ck_assert_msg(has_line(g, want_), "no line \"%s\" in:\n%s", want_, (g)->diag);     \
	} while (0)

static uint8_t *pattern(size_t n, unsigned seed)
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

/* tm_tar_normalise */

START_TEST(test_normalise)
{
	static const struct {
		const char *in, *out; /* out NULL: -EINVAL */
	} cases[] = {
	    {"a", "a"},
	    {"a/b/c", "a/b/c"},
	    {"./a", "a"},
	    {"/a", "a"},
	    {"///a//b///", "a/b"},
	    {"./././a/./b/.", "a/b"},
	    {"a/", "a"},
	    {".", ""},
	    {"./", ""},
	    {"/", ""},
	    {"", ""},
	    {"...", "..."},
	    {"a/..b/c..", "a/..b/c.."},
	    {".a/.b", ".a/.b"},
	    {"..", NULL},
	    {"../a", NULL},
	    {"a/../b", NULL},
	    {"a/..", NULL},
	    {"./../a", NULL},
	    {"/..", NULL},
	    {"a/b/../../..", NULL},
	};
	char out[PATH_MAX];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(out, 'x', sizeof(out));
		int n = tm_tar_normalise(cases[i].in, out, sizeof(out));
		if (!cases[i].out) {
			ck_assert_msg(n == -EINVAL, "\"%s\": %d, expected -EINVAL", cases[i].in, n);
			continue;
		}
		ck_assert_msg(n == (int)strlen(cases[i].out) && strcmp(out, cases[i].out) == 0,
			      "\"%s\": %d \"%s\", expected \"%s\"", cases[i].in, n,
			      n >= 0 ? out : "", cases[i].out);
	}
	/* the buffer: just enough, one byte short */
	ck_assert_int_eq(tm_tar_normalise("./ab/cd/", out, 6), 5);
	ck_assert_str_eq(out, "ab/cd");
	ck_assert_int_eq(tm_tar_normalise("./ab/cd/", out, 5), -EINVAL);
	ck_assert_int_eq(tm_tar_normalise("abc", out, 3), -EINVAL);
	ck_assert_int_eq(tm_tar_normalise("", out, 1), 0);
	ck_assert_str_eq(out, "");
	/* a component of NAME_MAX bytes, and one more */
	char name[NAME_MAX + 8];
	memset(name, 'n', NAME_MAX);
	strcpy(name + NAME_MAX, "/x");
	ck_assert_int_eq(tm_tar_normalise(name, out, sizeof(out)), NAME_MAX + 2);
	memset(name, 'n', NAME_MAX + 1);
	name[NAME_MAX + 1] = '\0';
	ck_assert_int_eq(tm_tar_normalise(name, out, sizeof(out)), -ENAMETOOLONG);
}
END_TEST

/* tm_tar_is_header */

START_TEST(test_is_header)
{
	uint8_t h[TM_TAR_BLOCK];
	header_block(h, &(struct hs){.name = "a.txt", .size = 10});
	ck_assert(tm_tar_is_header(h));
	/* every single byte changed breaks the sum but those of the checksum field itself */
	for (unsigned i = 0; i < TM_TAR_BLOCK; i += 7) {
		if (i >= 148 && i < 156)
			continue;
		uint8_t was = h[i];
		h[i] ^= 0x21;
		ck_assert_msg(!tm_tar_is_header(h), "byte %u changed: still a header", i);
		h[i] = was;
	}
	uint8_t zero[TM_TAR_BLOCK] = {0};
	ck_assert(!tm_tar_is_header(zero));
	/* the sum written in other ways: leading spaces, ended by a space, all eight digits */
	header_block(h, &(struct hs){.name = "b", .size = 1});
	char digits[8];
	memcpy(digits, h + 148, 6);
	memcpy(h + 148, " ", 1);
	memcpy(h + 149, digits + 1, 5); /* the first digit of "%06o" is a 0 */
	h[154] = ' ';
	h[155] = '\0';
	ck_assert(tm_tar_is_header(h));
	/* not octal */
	h[150] = '9';
	ck_assert(!tm_tar_is_header(h));
	/* no digits at all */
	memset(h + 148, ' ', 8);
	ck_assert(!tm_tar_is_header(h));
	/* old tars' signed sum, of a name with bytes past 127 */
	header_block(h, &(struct hs){.name = "\xe9t\xe9\xff\xfe", .size = 1, .signed_sum = true});
	ck_assert(tm_tar_is_header(h));
	/* its unsigned sum too */
	header_block(h, &(struct hs){.name = "\xe9t\xe9\xff\xfe", .size = 1});
	ck_assert(tm_tar_is_header(h));
}
END_TEST

/* Plain members */

START_TEST(test_ustar_and_v7)
{
	struct arc a = {0};
	uint8_t *p = pattern(1000, 1);
	header(&a, &(struct hs){.name = "name.txt",
				.prefix = "some/prefix",
				.size = 1000,
				.mode = 0751,
				.mtime = 1234567890});
	data(&a, p, 1000);
	header(&a, &(struct hs){.name = "dir/", .type = '5', .mode = 0755});
	header(&a, &(struct hs){.name = "old.txt", .prefix = "ignored", .size = 3, .v7 = true});
	data(&a, "abc", 3);
	header(&a, &(struct hs){.name = "slash/", .size = 0, .v7 = true}); /* a v7 folder */
	header(&a, &(struct hs){.name = "sym", .type = '2', .link = "../target"});
	header(&a, &(struct hs){.name = "./hard", .type = '1', .link = "./some/prefix/name.txt"});
	header(&a, &(struct hs){.name = "contig", .type = '7', .size = 2});
	data(&a, "ok", 2);
	header(&a, &(struct hs){.name = "aregtype", .type = '\0', .size = 1});
	/* type '\0' needs the byte written: header_block writes '0' for '\0' */
	a.b[a.len - TM_TAR_BLOCK + 156] = '\0';
	seal(a.b + a.len - TM_TAR_BLOCK, false);
	data(&a, "z", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_int_eq(g->ret, 0);
	ck_assert_str_eq(g->diag, "");
	ck_assert_int_eq(g->n, 8);
	ck_assert_str_eq(g->m[0].path, "some/prefix/name.txt");
	ck_assert_int_eq(g->m[0].type, TM_MEMBER_FILE);
	ck_assert_uint_eq(g->m[0].header, 0);
	ck_assert_uint_eq(g->m[0].offset, 512);
	ck_assert_uint_eq(g->m[0].size, 1000);
	ck_assert_uint_eq(g->m[0].stored, 1000);
	ck_assert(!g->m[0].cut);
	ck_assert_int_eq(g->m[0].mtime, 1234567890);
	ck_assert_uint_eq(g->m[0].mode, 0751);
	ck_assert_uint_eq(g->m[0].uid, 1000);
	ck_assert(!g->m[0].sparse);
	ck_assert_uint_eq(g->m[0].head_len, 512); /* head_min */
	ck_assert(memcmp(g->m[0].head, p, 512) == 0);
	ck_assert_str_eq(g->m[1].path, "dir");
	ck_assert_int_eq(g->m[1].type, TM_MEMBER_DIR);
	ck_assert_str_eq(g->m[2].path, "old.txt"); /* v7: no prefix */
	ck_assert_uint_eq(g->m[2].size, 3);
	ck_assert_str_eq(g->m[3].path, "slash");
	ck_assert_int_eq(g->m[3].type, TM_MEMBER_DIR);
	ck_assert_str_eq(g->m[4].path, "sym");
	ck_assert_int_eq(g->m[4].type, TM_MEMBER_SYMLINK);
	ck_assert_str_eq(g->m[4].link, "../target"); /* as written */
	ck_assert_uint_eq(g->m[4].size, 0);
	ck_assert_str_eq(g->m[5].path, "hard");
	ck_assert_int_eq(g->m[5].type, TM_MEMBER_HARDLINK);
	ck_assert_str_eq(g->m[5].link, "some/prefix/name.txt"); /* normalised */
	ck_assert_str_eq(g->m[6].path, "contig");
	ck_assert_int_eq(g->m[6].type, TM_MEMBER_FILE);
	ck_assert_str_eq(g->m[7].path, "aregtype");
	ck_assert_int_eq(g->m[7].type, TM_MEMBER_FILE);
	ck_assert_uint_eq(g->end, a.len - 0); /* both end blocks read */
	got_free(g);
	free(p);
	free(a.b);
}
END_TEST

START_TEST(test_gnu_long)
{
	struct arc a = {0};
	char name[301], link[201];
	memset(name, 'n', 300);
	name[300] = '\0';
	memcpy(name, "dir/", 4);
	name[150] = '/'; /* components of NAME_MAX bytes at most */
	memset(link, 'l', 200);
	link[200] = '\0';
	gnu_long(&a, 'L', name);
	header(&a, &(struct hs){.name = "truncated-name", .size = 5, .gnu = true});
	data(&a, "hello", 5);
	gnu_long(&a, 'K', link);
	gnu_long(&a, 'L', "sym");
	header(&a, &(struct hs){.name = "s", .type = '2', .link = "short", .gnu = true});
	file(&a, "after", "x", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_str_eq(g->diag, "");
	ck_assert_int_eq(g->n, 3);
	ck_assert_str_eq(g->m[0].path, name);
	ck_assert_uint_eq(g->m[0].header, 0); /* its 'L' header */
	ck_assert_uint_eq(g->m[0].offset, 512 + 512 + 512);
	ck_assert_uint_eq(g->m[0].size, 5);
	ck_assert_str_eq(g->m[1].path, "sym");
	ck_assert_str_eq(g->m[1].link, link);
	ck_assert_uint_eq(g->m[1].header, 2048);
	ck_assert_str_eq(g->m[2].path, "after"); /* the long name is not kept */
	got_free(g);
	free(a.b);
}
END_TEST

START_TEST(test_pax)
{
	struct arc a = {0};
	char path[400], kv[450];
	memset(path, 'p', 399);
	path[399] = '\0';
	path[10] = path[200] = '/';
	snprintf(kv, sizeof(kv), "path=%s", path);
	uint8_t *p = pattern(3000, 2);
	/* path and size (the header says 0), mtime with a fraction, uid, gid */
	pax(&a, 'x',
	    (const char *[]){kv, "size=3000", "mtime=1600000000.123456789", "uid=42", "gid=43",
			     "comment=ignored", "SCHILY.xattr.user.x=ignored", NULL});
	header(&a, &(struct hs){.name = "header-name", .size = 0});
	size_t data_at = a.len;
	data(&a, p, 3000);
	size_t sym_at = a.len;
	/* linkpath */
	pax(&a, 'x', (const char *[]){"linkpath=a target with = and spaces", NULL});
	header(&a, &(struct hs){.name = "sym", .type = '2', .link = "short"});
	/* a negative mtime */
	pax(&a, 'x', (const char *[]){"mtime=-1000000.5", NULL});
	file(&a, "old", "o", 1);
	/* a global mtime for what follows, a member's own over it */
	pax(&a, 'g', (const char *[]){"mtime=1111111111", NULL});
	file(&a, "g1", "1", 1);
	pax(&a, 'x', (const char *[]){"mtime=1222222222", NULL});
	file(&a, "g2", "2", 1);
	file(&a, "g3", "3", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_str_eq(g->diag, "");
	ck_assert_int_eq(g->n, 6);
	ck_assert_str_eq(g->m[0].path, path);
	ck_assert_uint_eq(g->m[0].size, 3000);
	ck_assert_uint_eq(g->m[0].stored, 3000);
	ck_assert_uint_eq(g->m[0].header, 0);
	ck_assert_uint_eq(g->m[0].offset, data_at);
	ck_assert_int_eq(g->m[0].mtime, 1600000000);
	ck_assert_uint_eq(g->m[0].uid, 42);
	ck_assert_uint_eq(g->m[0].gid, 43);
	ck_assert(memcmp(g->m[0].head, p, g->m[0].head_len) == 0);
	ck_assert_str_eq(g->m[1].path, "sym");
	ck_assert_str_eq(g->m[1].link, "a target with = and spaces");
	ck_assert_str_eq(g->m[2].path, "old");
	/* -1000000.5 s: its second is the one before (a timespec's tv_sec, as tarfile and GNU
	 * tar extract it) */
	ck_assert_int_eq(g->m[2].mtime, -1000001);
	ck_assert_str_eq(g->m[3].path, "g1");
	ck_assert_int_eq(g->m[3].mtime, 1111111111);
	ck_assert_int_eq(g->m[4].mtime, 1222222222);
	ck_assert_int_eq(g->m[5].mtime, 1111111111);
	/* the member after the pax-sized one is where its data ends */
	ck_assert_uint_eq(g->m[1].header, sym_at);
	got_free(g);
	free(p);
	free(a.b);
}
END_TEST

START_TEST(test_base256)
{
	struct arc a = {0};
	uint8_t *p = pattern(700, 3);
	header(&a, &(struct hs){.name = "b256", .size = 700, .b256_size = true});
	data(&a, p, 700);
	header(&a,
	       &(struct hs){.name = "future", .size = 1, .mtime = 10000000000, .b256_mtime = true});
	data(&a, "f", 1);
	header(&a, &(struct hs){.name = "past", .size = 1, .mtime = -86400});
	data(&a, "p", 1);
	file(&a, "after", "a", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_str_eq(g->diag, "");
	ck_assert_int_eq(g->n, 4);
	ck_assert_uint_eq(g->m[0].size, 700);
	ck_assert(memcmp(g->m[0].head, p, 512) == 0);
	ck_assert_int_eq(g->m[1].mtime, 10000000000);
	ck_assert_int_eq(g->m[2].mtime, -86400);
	ck_assert_str_eq(g->m[3].path, "after");
	ck_assert_uint_eq(g->m[3].header, 512 + 1024 + 1024 + 1024);
	got_free(g);
	free(p);
	free(a.b);
}
END_TEST

/* Sparse members */

/* The member laid out: runs of bytes from stored, zeros between. */
static uint8_t *lay_out(const uint64_t *runs, unsigned n, const uint8_t *stored, uint64_t size)
{
	uint8_t *out = calloc(1, size ? size : 1);
	uint64_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		memcpy(out + runs[2 * i], stored + at, runs[2 * i + 1]);
		at += runs[2 * i + 1];
	}
	return out;
}

static void check_runs(const struct mem *m, const uint64_t *runs, unsigned n)
{
	ck_assert(m->sparse);
	ck_assert_uint_eq(m->n_runs, n);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_eq(m->runs[i].offset, runs[2 * i]);
		ck_assert_uint_eq(m->runs[i].size, runs[2 * i + 1]);
	}
}

START_TEST(test_gnu_sparse)
{
	/* 30 runs: 4 in the header, 21 in the first extension block, 5 in the second */
	enum { N = 30 };
	uint64_t runs[2 * N];
	uint64_t stored = 0;
	for (unsigned i = 0; i < N; i++) {
		runs[2 * i] = i * 1000 + (i ? 100 : 0);
		runs[2 * i + 1] = 10 + i;
		stored += runs[2 * i + 1];
	}
	uint64_t realsize = N * 1000 + 77;
	uint8_t *p = pattern(stored, 4);
	struct arc a = {0};
	struct hs s = {.name = "sparse",
		       .type = 'S',
		       .size = stored,
		       .gnu = true,
		       .n_runs = 4,
		       .extended = true,
		       .realsize = realsize};
	memcpy(s.runs, runs, sizeof(s.runs));
	header(&a, &s);
	for (unsigned first = 4; first < N; first += 21) {
		uint8_t ext[TM_TAR_BLOCK] = {0};
		for (unsigned i = first; i < N && i < first + 21; i++) {
			octal(ext + (i - first) * 24, 12, runs[2 * i]);
			octal(ext + (i - first) * 24 + 12, 12, runs[2 * i + 1]);
		}
		ext[504] = first + 21 < N;
		put(&a, ext, sizeof(ext));
	}
	size_t data_at = a.len;
	data(&a, p, stored);
	file(&a, "after", "a", 1);
	end_blocks(&a);
	struct tm_tar_options opt = {.head_min = 4096, .head_max = 4096};
	struct got *g = read_opt(&a, &opt, 0);
	ck_assert_str_eq(g->diag, "");
	ck_assert_int_eq(g->n, 2);
	ck_assert_str_eq(g->m[0].path, "sparse");
	ck_assert_int_eq(g->m[0].type, TM_MEMBER_FILE);
	ck_assert_uint_eq(g->m[0].size, realsize);
	ck_assert_uint_eq(g->m[0].stored, stored);
	ck_assert_uint_eq(g->m[0].offset, data_at);
	check_runs(&g->m[0], runs, N);
	uint8_t *whole = lay_out(runs, N, p, realsize);
	ck_assert_uint_eq(g->m[0].head_len, 4096);
	ck_assert(memcmp(g->m[0].head, whole, 4096) == 0); /* holes as zeros */
	ck_assert_str_eq(g->m[1].path, "after");
	got_free(g);

	/* cut inside the second extension block: no member */
	struct arc c = {.b = a.b, .len = 512 + 512 + 200};
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 0);
	ck_assert(g->truncated);
	ck_assert_msg(strstr(g->diag, "cut"), "%s", g->diag);
	got_free(g);
	/* cut inside its data: the runs it fills, the size where its stored bytes end */
	c.len = data_at + 25;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 1);
	ck_assert(g->m[0].cut);
	ck_assert_uint_eq(g->m[0].stored, 25);
	uint64_t cut_runs[] = {0, 10, 1100, 11, 2100, 4};
	check_runs(&g->m[0], cut_runs, 3);
	ck_assert_uint_eq(g->m[0].size, 2104);
	ck_line(g,
		"offset %zu: tar: the archive is cut inside sparse: 25 of its %llu bytes are there",
		data_at + 25, (unsigned long long)stored);
	got_free(g);
	/* cut at the end of a run: the size is where it ends */
	c.len = data_at + 21;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 1);
	ck_assert_uint_eq(g->m[0].size, 1111);
	ck_assert_uint_eq(g->m[0].n_runs, 2);
	got_free(g);
	free(whole);
	free(p);
	free(a.b);
}
END_TEST

/* A file of size bytes with these runs, as GNU tar writes it in pax form 0.0, 0.1 or 1.0. */
static void pax_sparse(struct arc *a, int version, const char *name, const uint64_t *runs,
		       unsigned n, uint64_t size, const uint8_t *stored, uint64_t stored_len)
{
	char kv[40][128];
	const char *list[48];
	unsigned k = 0;
	char map[4096] = "";
	size_t ml = 0;
	for (unsigned i = 0; i < n; i++)
		ml += (size_t)snprintf(map + ml, sizeof(map) - ml, "%s%llu,%llu", i ? "," : "",
				       (unsigned long long)runs[2 * i],
				       (unsigned long long)runs[2 * i + 1]);
	char mapkv[4200];
	if (version == 0) {
		snprintf(kv[k], 128, "GNU.sparse.size=%llu", (unsigned long long)size), k++;
		snprintf(kv[k], 128, "GNU.sparse.numblocks=%u", n), k++;
		for (unsigned i = 0; i < n; i++) {
			snprintf(kv[k], 128, "GNU.sparse.offset=%llu",
				 (unsigned long long)runs[2 * i]),
			    k++;
			snprintf(kv[k], 128, "GNU.sparse.numbytes=%llu",
				 (unsigned long long)runs[2 * i + 1]),
			    k++;
		}
	} else if (version == 1) {
		snprintf(kv[k], 128, "GNU.sparse.size=%llu", (unsigned long long)size), k++;
		snprintf(kv[k], 128, "GNU.sparse.numblocks=%u", n), k++;
		snprintf(kv[k], 128, "GNU.sparse.name=%s", name), k++;
	} else {
		snprintf(kv[k], 128, "GNU.sparse.major=1"), k++;
		snprintf(kv[k], 128, "GNU.sparse.minor=0"), k++;
		snprintf(kv[k], 128, "GNU.sparse.name=%s", name), k++;
		snprintf(kv[k], 128, "GNU.sparse.realsize=%llu", (unsigned long long)size), k++;
	}
	for (unsigned i = 0; i < k; i++)
		list[i] = kv[i];
	if (version == 1) {
		snprintf(mapkv, sizeof(mapkv), "GNU.sparse.map=%s", map);
		list[k++] = mapkv;
	}
	list[k] = NULL;
	pax(a, 'x', list);
	if (version == 2) {
		char text[4096];
		size_t tl = (size_t)snprintf(text, sizeof(text), "%u\n", n);
		for (unsigned i = 0; i < n; i++)
			tl += (size_t)snprintf(text + tl, sizeof(text) - tl, "%llu\n%llu\n",
					       (unsigned long long)runs[2 * i],
					       (unsigned long long)runs[2 * i + 1]);
		size_t map_len = (tl + 511) / 512 * 512;
		header(a, &(struct hs){.name = "GNUSparseFile.0/x", .size = map_len + stored_len});
		data(a, text, tl);
	} else {
		header(a, &(struct hs){.name = version ? "GNUSparseFile.0/x" : name,
				       .size = stored_len});
	}
	data(a, stored, stored_len);
}

START_TEST(test_pax_sparse)
{
	uint64_t runs[] = {0, 100, 5000, 700, 9000, 1, 20000, 0};
	uint64_t size = 20000, stored = 801;
	uint8_t *p = pattern(stored, 5);
	uint8_t *whole = lay_out(runs, 4, p, size);
	for (int version = 0; version < 3; version++) {
		struct arc a = {0};
		file(&a, "before", "b", 1);
		pax_sparse(&a, version, "dir/sparse", runs, 4, size, p, stored);
		file(&a, "after", "a", 1);
		end_blocks(&a);
		struct tm_tar_options opt = {.head_min = 8192, .head_max = 8192};
		struct got *g = read_opt(&a, &opt, 0);
		ck_assert_msg(strcmp(g->diag, "") == 0, "version %d: %s", version, g->diag);
		ck_assert_int_eq(g->n, 3);
		ck_assert_str_eq(g->m[1].path, "dir/sparse");
		ck_assert_uint_eq(g->m[1].size, size);
		ck_assert_uint_eq(g->m[1].stored, stored);
		ck_assert_uint_eq(g->m[1].header, 1024);
		check_runs(&g->m[1], runs, 4);
		ck_assert_uint_eq(g->m[1].head_len, 8192);
		ck_assert(memcmp(g->m[1].head, whole, 8192) == 0);
		ck_assert_str_eq(g->m[2].path, "after");
		uint64_t data_at = g->m[1].offset;
		got_free(g);
		if (version == 2) {
			/* cut inside the map (the data's first block) */
			struct arc c = {.b = a.b, .len = (size_t)data_at - 512 + 5};
			g = read_arc(&c);
			ck_assert_int_eq(g->n, 1);
			ck_assert(g->truncated);
			got_free(g);
		}
		/* cut inside the data, in the second run */
		struct arc c = {.b = a.b, .len = (size_t)data_at + 150};
		g = read_arc(&c);
		ck_assert_int_eq(g->n, 2);
		ck_assert(g->m[1].cut);
		ck_assert_uint_eq(g->m[1].stored, 150);
		ck_assert_uint_eq(g->m[1].size, 5050);
		ck_assert_uint_eq(g->m[1].n_runs, 2);
		ck_assert(g->truncated);
		got_free(g);
		/* cut inside the pax header's data */
		c.len = 1024 + 512 + 10;
		g = read_arc(&c);
		ck_assert_int_eq(g->n, 1);
		ck_assert(g->truncated);
		ck_assert_msg(strstr(g->diag, "cut"), "%s", g->diag);
		got_free(g);
		free(a.b);
	}
	free(whole);
	free(p);
}
END_TEST

START_TEST(test_sparse_bad_maps)
{
	uint8_t p[100] = {0};
	/* runs out of order, past the size, not adding up to the data */
	static const uint64_t bad[][4] = {
	    {500, 50, 100, 50}, /* out of order */
	    {0, 50, 980, 50},	/* past the size (1000) */
	    {0, 50, 100, 40},	/* 90 of 100 stored bytes */
	};
	for (int i = 0; i < 3; i++) {
		struct arc a = {0};
		pax_sparse(&a, 1, "bad", bad[i], 2, 1000, p, 100);
		file(&a, "after", "a", 1);
		end_blocks(&a);
		struct got *g = read_arc(&a);
		ck_assert_int_eq(g->n, 1);
		ck_assert_str_eq(g->m[0].path, "after");
		ck_line(g, "offset 0: tar: bad: a sparse map that does not fit its data: left out");
		got_free(g);
		free(a.b);
	}
	/* a 1.0 map that is no numbers */
	struct arc a = {0};
	pax(&a, 'x',
	    (const char *[]){"GNU.sparse.major=1", "GNU.sparse.minor=0", "GNU.sparse.realsize=10",
			     "GNU.sparse.name=m", NULL});
	header(&a, &(struct hs){.name = "GNUSparseFile.0/m", .size = 512});
	data(&a, "1\nzz\n", 5);
	file(&a, "after", "a", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_int_eq(g->n, 1);
	ck_assert_str_eq(g->m[0].path, "after");
	ck_assert_msg(strstr(g->diag, "sparse map"), "%s", g->diag);
	got_free(g);
	free(a.b);
}
END_TEST

/* Damage */

START_TEST(test_bad_checksum)
{
	struct arc a = {0};
	file(&a, "one", "1", 1);
	file(&a, "two", "2", 1);
	file(&a, "three", "3", 1);
	end_blocks(&a);
	a.b[2048 + 3] ^= 1; /* "three"'s name */
	struct got *g = read_arc(&a);
	ck_assert_int_eq(g->ret, 0);
	ck_assert_int_eq(g->n, 2);
	ck_line(g, "offset 2048: tar: not a tar header (bad checksum): the rest of the archive is "
		   "not read");
	got_free(g);
	/* the first header bad: nothing */
	a.b[3] ^= 1;
	g = read_arc(&a);
	ck_assert_int_eq(g->n, 0);
	ck_line(g, "offset 0: tar: not a tar header (bad checksum): the rest of the archive is not "
		   "read");
	got_free(g);
	free(a.b);
}
END_TEST

START_TEST(test_cuts)
{
	struct arc a = {0};
	uint8_t *p = pattern(2000, 6);
	file(&a, "one", "1", 1);
	file(&a, "big", p, 2000);
	file(&a, "three", "3", 1);
	end_blocks(&a);
	struct arc c = {.b = a.b};
	/* inside the second header */
	c.len = 1024 + 100;
	struct got *g = read_arc(&c);
	ck_assert_int_eq(g->n, 1);
	ck_assert(g->truncated);
	ck_line(g, "offset 1024: tar: the archive is cut inside a header");
	got_free(g);
	/* inside big's data */
	c.len = 1536 + 777;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 2);
	ck_assert(g->m[1].cut);
	ck_assert_uint_eq(g->m[1].size, 777);
	ck_assert_uint_eq(g->m[1].stored, 777);
	ck_assert(memcmp(g->m[1].head, p, 512) == 0);
	ck_assert(g->truncated);
	ck_line(g,
		"offset 2313: tar: the archive is cut inside big: 777 of its 2000 bytes are there");
	got_free(g);
	/* at the start of big's data: a member of no bytes */
	c.len = 1536;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 2);
	ck_assert_uint_eq(g->m[1].size, 0);
	ck_assert(g->m[1].cut);
	got_free(g);
	/* inside big's padding: whole */
	c.len = 1536 + 2010;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 2);
	ck_assert(!g->m[1].cut);
	ck_assert_uint_eq(g->m[1].size, 2000);
	ck_assert(g->truncated || strstr(g->diag, "cut"));
	got_free(g);
	/* after the members, no end blocks */
	c.len = 1536 + 2048 + 1024;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 3);
	ck_line(g, "offset 4608: tar: the archive ends without its end blocks: it may be cut");
	got_free(g);
	/* one end block only */
	c.len = 1536 + 2048 + 1024 + 512;
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 3);
	got_free(g);
	/* inside a GNU long name's header and its data */
	struct arc l = {0};
	file(&l, "one", "1", 1);
	gnu_long(&l, 'L', "a/long/name");
	header(&l, &(struct hs){.name = "x", .size = 1, .gnu = true});
	data(&l, "x", 1);
	c = (struct arc){.b = l.b, .len = 1024 + 512 + 5};
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 1);
	ck_assert(g->truncated);
	got_free(g);
	c.len = 1024 + 1024 + 100; /* inside the header after the long name */
	g = read_arc(&c);
	ck_assert_int_eq(g->n, 1);
	ck_line(g, "offset 1024: tar: the archive is cut inside a header");
	got_free(g);
	free(l.b);
	free(p);
	free(a.b);
}
END_TEST

START_TEST(test_empty_and_zero)
{
	struct arc a = {0};
	struct got *g = read_arc(&a);
	ck_assert_int_eq(g->n, 0);
	ck_assert_int_eq(g->ret, 0);
	ck_line(g, "tar: an empty archive");
	got_free(g);
	end_blocks(&a);
	g = read_arc(&a);
	ck_assert_int_eq(g->n, 0);
	ck_assert_str_eq(g->diag, "");
	got_free(g);
	/* less than a header */
	struct arc s = {0};
	put(&s, "hello", 5);
	g = read_arc(&s);
	ck_assert_int_eq(g->n, 0);
	ck_assert(strstr(g->diag, "tar"));
	got_free(g);
	free(s.b);
	/* a lone zero block between members */
	struct arc z = {0};
	file(&z, "one", "1", 1);
	put(&z, NULL, 512);
	file(&z, "two", "2", 1);
	end_blocks(&z);
	g = read_arc(&z);
	ck_assert_int_eq(g->n, 2);
	ck_assert_str_eq(g->m[1].path, "two");
	ck_assert_uint_eq(g->m[1].header, 1536);
	ck_line(g, "offset 1024: tar: a lone zero block: skipped");
	got_free(g);
	/* what follows the end blocks is not read */
	struct arc e = {0};
	file(&e, "one", "1", 1);
	end_blocks(&e);
	file(&e, "hidden", "h", 1);
	g = read_arc(&e);
	ck_assert_int_eq(g->n, 1);
	ck_assert_uint_eq(g->end, 2048);
	got_free(g);
	free(e.b);
	free(z.b);
	free(a.b);
}
END_TEST

START_TEST(test_malformed_pax)
{
	static const char *const bad[] = {
	    "99 path=x\n",     /* longer than the header */
	    "5 path=abcdef\n", /* shorter than its text */
	    "x path=abc\n",    /* no length */
	    "13 pathabcde\n",  /* no "=" */
	    "11 path=abc",     /* no newline */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct arc a = {0};
		size_t n = strlen(bad[i]);
		header(&a, &(struct hs){.name = "PaxHeader/x", .type = 'x', .size = n});
		data(&a, bad[i], n);
		file(&a, "name", "1", 1);
		file(&a, "after", "2", 1);
		end_blocks(&a);
		struct got *g = read_arc(&a);
		ck_assert_msg(g->n == 2, "record %zu: %d members", i, g->n);
		ck_assert_str_eq(g->m[1].path, "after");
		ck_line(g, "offset 0: tar: a malformed pax header: the rest of it ignored");
		got_free(g);
		free(a.b);
	}
	/* a good record before the bad one is kept */
	struct arc a = {0};
	const char *text = "13 path=good\n9 size=x";
	header(&a, &(struct hs){.name = "PaxHeader/x", .type = 'x', .size = strlen(text)});
	data(&a, text, strlen(text));
	file(&a, "name", "1", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_int_eq(g->n, 1);
	ck_assert_str_eq(g->m[0].path, "good");
	got_free(g);
	free(a.b);
}
END_TEST

START_TEST(test_left_out)
{
	struct arc a = {0};
	header(&a, &(struct hs){.name = "fifo", .type = '6'});
	header(&a, &(struct hs){.name = "chr", .type = '3'});
	header(&a, &(struct hs){.name = "blk", .type = '4'});
	file(&a, "../evil", "e", 1);
	header(&a, &(struct hs){.name = "hl", .type = '1', .link = "../x"});
	header(&a, &(struct hs){.name = "odd", .type = 'Q', .size = 600});
	data(&a, NULL, 600);
	header(&a, &(struct hs){.name = "", .size = 1}); /* no name */
	data(&a, "n", 1);
	header(&a, &(struct hs){.name = "./", .type = '5'}); /* the root: not given */
	file(&a, "after", "a", 1);
	end_blocks(&a);
	struct got *g = read_arc(&a);
	ck_assert_int_eq(g->n, 1);
	ck_assert_str_eq(g->m[0].path, "after");
	ck_line(g, "offset 0: tar: fifo: a FIFO: left out");
	ck_line(g, "offset 512: tar: chr: a character device: left out");
	ck_line(g, "offset 1024: tar: blk: a block device: left out");
	ck_line(g, "offset 1536: tar: ../evil: a path with \"..\" or too long: left out");
	ck_assert_msg(strstr(g->diag, "offset 2560: tar: hl: a hard link to"), "%s", g->diag);
	ck_assert_msg(strstr(g->diag, "offset 3072: tar: odd:"), "%s", g->diag);
	ck_line(g, "offset 4608: tar: a member with no name: left out");
	got_free(g);
	free(a.b);
}
END_TEST

/* head_min, head_more, head_max */

static size_t more_for_x(const char *name, const uint8_t *head, size_t len)
{
	(void)head;
	ck_assert_uint_eq(len, 512);
	size_t n = strlen(name);
	if (n > 2 && strcmp(name + n - 2, ".x") == 0)
		return 3000;
	if (n > 4 && strcmp(name + n - 4, ".big") == 0)
		return 100000;
	return 0;
}

START_TEST(test_head)
{
	struct arc a = {0};
	uint8_t *p = pattern(10000, 7);
	file(&a, "plain", p, 10000);
	file(&a, "d/more.x", p, 10000);
	file(&a, "more.big", p, 10000);
	file(&a, "short.x", p, 100);
	file(&a, "mid.big", p, 1000);
	end_blocks(&a);
	struct tm_tar_options opt = {.head_min = 512, .head_max = 4096, .head_more = more_for_x};
	struct got *g = read_opt(&a, &opt, 0);
	ck_assert_int_eq(g->n, 5);
	static const size_t want[] = {512, 3000, 4096, 100, 1000};
	for (int i = 0; i < 5; i++) {
		ck_assert_msg(g->m[i].head_len == want[i], "%s: head_len %zu, expected %zu",
			      g->m[i].path, g->m[i].head_len, want[i]);
		ck_assert(memcmp(g->m[i].head, p, want[i]) == 0);
	}
	got_free(g);
	/* no head asked for */
	struct tm_tar_options none = {0};
	g = read_opt(&a, &none, 0);
	ck_assert_int_eq(g->n, 5);
	ck_assert_uint_eq(g->m[0].head_len, 0);
	got_free(g);
	/* the head of a cut member: the bytes there */
	struct arc c = {.b = a.b, .len = 512 + 300};
	g = read_opt(&c, &opt, 0);
	ck_assert_int_eq(g->n, 1);
	ck_assert_uint_eq(g->m[0].head_len, 300);
	got_free(g);
	free(p);
	free(a.b);
}
END_TEST

/* The callback's stop, read errors */

START_TEST(test_stop_and_errors)
{
	struct arc a = {0};
	for (int i = 0; i < 5; i++) {
		char name[16];
		snprintf(name, sizeof(name), "f%d", i);
		file(&a, name, name, 2);
	}
	end_blocks(&a);
	struct got *g = read_opt(&a, &default_opt, 3);
	ck_assert_int_eq(g->ret, 99);
	ck_assert_int_eq(g->n, 3);
	got_free(g);
	for (int seq = 0; seq < 2; seq++) {
		g = read_one(a.b, a.len, &default_opt, seq, 0, -EIO);
		ck_assert_int_eq(g->ret, -EIO);
		ck_assert_int_eq(g->n, 0);
		got_free(g);
	}
	free(a.b);
}
END_TEST

static Suite *tar_suite(void)
{
	Suite *s = suite_create("tar");
	TCase *tc = tcase_create("reader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_normalise);
	tcase_add_test(tc, test_is_header);
	tcase_add_test(tc, test_ustar_and_v7);
	tcase_add_test(tc, test_gnu_long);
	tcase_add_test(tc, test_pax);
	tcase_add_test(tc, test_base256);
	tcase_add_test(tc, test_gnu_sparse);
	tcase_add_test(tc, test_pax_sparse);
	tcase_add_test(tc, test_sparse_bad_maps);
	tcase_add_test(tc, test_bad_checksum);
	tcase_add_test(tc, test_cuts);
	tcase_add_test(tc, test_empty_and_zero);
	tcase_add_test(tc, test_malformed_pax);
	tcase_add_test(tc, test_left_out);
	tcase_add_test(tc, test_head);
	tcase_add_test(tc, test_stop_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tar_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
