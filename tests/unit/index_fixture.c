/* The index-file tests' fixture (index_fixture.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "byu_ref.h"
#include "index_fixture.h"
#include "reseal.h"
#include "tracemount/build_id.h"
#include "tracemount/compress.h"
#include "tracemount/registry.h"

char ix_dir[] = "/tmp/tm-index-file.XXXXXX";
char ix_trace_path[256], ix_cache[256];

/* A BYU trace of n records in ix_trace_path, gzip-compressed when gz, indexed. */
void ix_setup(struct ix_fixture *f, size_t n, int gz)
{
	uint8_t *data = byu_ref_gen(n, 0, 7, 0);
	snprintf(ix_trace_path, sizeof(ix_trace_path), "%s/t.byu%s", ix_dir, gz ? ".gz" : "");
	if (gz) {
		gzFile g = gzopen(ix_trace_path, "wb6");
		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(gzwrite(g, data, (unsigned)(n * 6)), (int)(n * 6));
		gzclose(g);
	} else {
		FILE *out = fopen(ix_trace_path, "wb");
		ck_assert_ptr_nonnull(out);
		ck_assert_uint_eq(fwrite(data, 6, n, out), n);
		fclose(out);
	}
	free(data);
	f->fmt = tm_format_find("byu");
	ck_assert_int_eq(tm_view_table_init(&f->views, f->fmt, "t.byu"), 0);
	ck_assert_int_eq(tm_source_open(AT_FDCWD, ix_trace_path, &f->src), 0);
	ck_assert_int_eq(tm_trace_key_of(&f->src, &f->key), 0);
	if (gz) {
		struct tm_source scan;
		ck_assert_int_eq(tm_z_scan_open(&tm_codec_gzip, &f->src, &scan), 0);
		ck_assert_int_eq(
		    tm_index_build(f->fmt, &f->views, &scan, "t.byu.gz", NULL, NULL, &f->ix), 0);
		ck_assert_int_eq(tm_z_scan_finish(&scan, &f->ix->z), 0);
		tm_source_close(&scan);
	} else {
		ck_assert_int_eq(
		    tm_index_build(f->fmt, &f->views, &f->src, "t.byu", NULL, NULL, &f->ix), 0);
	}
	char err[512];
	snprintf(ix_cache, sizeof(ix_cache), "%s/cache/sub", ix_dir);
	ck_assert_msg(tm_index_store_open(&f->store, ix_cache, true, err, sizeof(err)) == 0, "%s",
		      err);
}

void ix_teardown(struct ix_fixture *f)
{
	tm_index_store_close(&f->store);
	tm_index_free(f->ix);
	tm_source_close(&f->src);
	tm_view_table_free(&f->views);
}

void ix_file_path(const struct ix_fixture *f, char *buf, size_t len)
{
	char name[32];
	tm_index_file_name(f->fmt, &f->key, name, sizeof(name));
	snprintf(buf, len, "%s/%s", ix_cache, name);
}

void ix_patch(const char *path, long off, uint8_t xor_mask)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, off), 1);
	b ^= xor_mask;
	ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

void ix_flip_body(const char *path)
{
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ix_patch(path, st.st_size - 10, 0x40);
}

/* The build key (after magic, version, header size, byte order and the 32-byte format name)
 * of another build: a different source hash, behind valid checksums. */
void ix_another_build(const char *path)
{
	int fd = open(path, O_RDWR);
	char key[128];
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, key, sizeof(key), 56), (ssize_t)sizeof(key));
	ck_assert_str_eq(key, tm_build_key());
	char *src = strstr(key, "+src.");
	ck_assert_ptr_nonnull(src);
	src[5] = src[5] == '0' ? '1' : '0';
	ck_assert_int_eq(pwrite(fd, key, sizeof(key), 56), (ssize_t)sizeof(key));
	close(fd);
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

int ix_run(const char *name, const TTest *const *tests, size_t n)
{
	if (!mkdtemp(ix_dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, 120);
	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ix_dir);
	if (system(cmd) != 0)
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
