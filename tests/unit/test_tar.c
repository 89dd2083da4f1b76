/* The tar reader (src/archive/tar.c): tm_tar_read over archives built here block by block (an
 * in-memory source), tm_tar_normalise and tm_tar_is_header.
 *
 * Every archive is read twice, seekable and sequential (a decompressing scan's mode): both must
 * give the same members, the same problems and the same end. Covered: ustar's prefix, v7
 * headers, GNU long names and link names ('L', 'K'), pax extended headers ('x') and global ones
 * ('g') for path, linkpath, size and mtime (fractions, negative), base-256 sizes and times, old
 * bad checksums, cuts
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
#include "tar_fixture.h"
#include "tracemount/diag.h"
#include "tracemount/tar.h"

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
