/* The payload memory of cached chunks (src/core/chunk_mem.c): sizes in whole pages, payloads
 * that hold what they were asked for, freed mappings reused whole, trimmed or grown, the bytes
 * kept bounded, and nothing kept after a release. Under AddressSanitizer payloads come from
 * malloc and nothing is kept: the tests of keeping are skipped there. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/chunk_mem.h"

static size_t page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

START_TEST(test_sizes)
{
	for (size_t size = 0; size < 5 * page(); size += 1000) {
		size_t got = tm_chunk_mem_size(size);
		ck_assert_uint_eq(got % page(), 0);
		ck_assert_uint_gt(got, size);		   /* a head comes before the payload */
		ck_assert_uint_le(got, size + 2 * page()); /* no more than a page wasted */
	}
	ck_assert_uint_eq(tm_chunk_mem_size(SIZE_MAX - 10), SIZE_MAX);
}
END_TEST

START_TEST(test_payload_holds_its_size)
{
	struct tm_chunk_mem m = {0};
	size_t sizes[] = {0, 1, 100, page(), 3 * page() + 7, 1u << 20};
	void *p[6];
	for (size_t k = 0; k < 6; k++) {
		p[k] = tm_chunk_mem_get(&m, sizes[k]);
		ck_assert_ptr_nonnull(p[k]);
		ck_assert_uint_eq((uintptr_t)p[k] % _Alignof(max_align_t), 0);
		memset(p[k], (int)k + 1, sizes[k]);
	}
	for (size_t k = 0; k < 6; k++) /* no payload overlaps another */
		for (size_t i = 0; i < sizes[k]; i += 97)
			ck_assert_uint_eq(((unsigned char *)p[k])[i], k + 1);
	for (size_t k = 0; k < 6; k++)
		tm_chunk_mem_put(&m, p[k]);
	tm_chunk_mem_put(&m, NULL);
	tm_chunk_mem_release(&m);
	ck_assert_ptr_null(m.kept);
	ck_assert_uint_eq(m.kept_bytes, 0);
}
END_TEST

START_TEST(test_reuse)
{
#ifdef TM_CHUNK_MEM_MALLOC
	return; /* nothing is kept under AddressSanitizer */
#endif
	struct tm_chunk_mem m = {0};
	size_t size = 100 * 1000;
	void *a = tm_chunk_mem_get(&m, size);
	tm_chunk_mem_put(&m, a);
	ck_assert_uint_eq(m.kept_bytes, tm_chunk_mem_size(size));
	/* the same size again: the same mapping, nothing kept any more */
	void *b = tm_chunk_mem_get(&m, size);
	ck_assert_ptr_eq(a, b);
	ck_assert_uint_eq(m.kept_bytes, 0);
	/* a smaller payload from a kept larger one: trimmed where it is */
	tm_chunk_mem_put(&m, b);
	void *c = tm_chunk_mem_get(&m, size / 4);
	ck_assert_ptr_eq(c, a);
	memset(c, 1, size / 4);
	/* a larger payload from a kept smaller one: grown, writable to its end */
	tm_chunk_mem_put(&m, c);
	void *d = tm_chunk_mem_get(&m, 4 * size);
	ck_assert_ptr_nonnull(d);
	memset(d, 2, 4 * size);
	ck_assert_uint_eq(m.kept_bytes, 0);
	/* of two kept, the one that fits: the smallest as large */
	void *big = tm_chunk_mem_get(&m, 8 * size);
	tm_chunk_mem_put(&m, d);
	tm_chunk_mem_put(&m, big);
	ck_assert_ptr_eq(tm_chunk_mem_get(&m, 3 * size), d);
	ck_assert_ptr_eq(tm_chunk_mem_get(&m, size), big);
	tm_chunk_mem_release(&m);
}
END_TEST

START_TEST(test_kept_bounded)
{
#ifdef TM_CHUNK_MEM_MALLOC
	return;
#endif
	struct tm_chunk_mem m = {0};
	void *p[40];
	for (int k = 0; k < 40; k++)
		p[k] = tm_chunk_mem_get(&m, 300 * 1000);
	for (int k = 0; k < 40; k++) {
		tm_chunk_mem_put(&m, p[k]);
		ck_assert_uint_le(m.kept_bytes, TM_CHUNK_MEM_KEEP_MAX);
	}
	ck_assert_uint_gt(m.kept_bytes, TM_CHUNK_MEM_KEEP_MAX - tm_chunk_mem_size(300 * 1000));
	/* the most recent are those kept */
	ck_assert_ptr_eq(tm_chunk_mem_get(&m, 300 * 1000), p[39]);
	tm_chunk_mem_release(&m);
	ck_assert_uint_eq(m.kept_bytes, 0);
}
END_TEST

static Suite *chunk_mem_suite(void)
{
	Suite *s = suite_create("chunk_mem");
	TCase *tc = tcase_create("mem");
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_payload_holds_its_size);
	tcase_add_test(tc, test_reuse);
	tcase_add_test(tc, test_kept_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(chunk_mem_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
