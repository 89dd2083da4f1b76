/* The tar reader's sparse members (src/archive/tar.c): old GNU 'S' members with extension
 * blocks, pax sparse 0.0, 0.1 and 1.0, maps that do not fit, each read seekable and sequential
 * (tar_fixture.h), laid out against the bytes written. */
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

static Suite *tar_sparse_suite(void)
{
	Suite *s = suite_create("tar_sparse");
	TCase *tc = tcase_create("sparse");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_gnu_sparse);
	tcase_add_test(tc, test_pax_sparse);
	tcase_add_test(tc, test_sparse_bad_maps);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tar_sparse_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
