/* Index files: a round trip gives the same index, plain and gzip; every damaged, foreign or
 * unsafe file is refused with its reason; the content key follows the trace. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "byu_ref.h"
#include "reseal.h"
#include "tracemount/build_id.h"
#include "tracemount/gzip.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/view.h"

static char dir[] = "/tmp/tm-index-file.XXXXXX";
static char trace_path[256], cache[256];

struct fixture {
	const struct tm_format *fmt;
	struct tm_view_table views;
	struct tm_source src;
	struct tm_trace_key key;
	struct tm_index *ix;
	struct tm_index_store store;
};

/* A BYU trace of n records in trace_path, gzip-compressed when gz, indexed. */
static void setup(struct fixture *f, size_t n, int gz)
{
	uint8_t *data = byu_ref_gen(n, 0, 7, 0);
	snprintf(trace_path, sizeof(trace_path), "%s/t.byu%s", dir, gz ? ".gz" : "");
	if (gz) {
		gzFile g = gzopen(trace_path, "wb6");
		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(gzwrite(g, data, (unsigned)(n * 6)), (int)(n * 6));
		gzclose(g);
	} else {
		FILE *out = fopen(trace_path, "wb");
		ck_assert_ptr_nonnull(out);
		ck_assert_uint_eq(fwrite(data, 6, n, out), n);
		fclose(out);
	}
	free(data);
	f->fmt = tm_format_find("byu");
	ck_assert_int_eq(tm_view_table_init(&f->views, f->fmt, "t.byu"), 0);
	ck_assert_int_eq(tm_source_open(AT_FDCWD, trace_path, &f->src), 0);
	ck_assert_int_eq(tm_trace_key_of(&f->src, &f->key), 0);
	if (gz) {
		struct tm_source scan;
		ck_assert_int_eq(tm_gz_scan_open(&f->src, &scan), 0);
		ck_assert_int_eq(
		    tm_index_build(f->fmt, &f->views, &scan, "t.byu.gz", NULL, NULL, &f->ix), 0);
		ck_assert_int_eq(tm_gz_scan_finish(&scan, &f->ix->gz), 0);
		tm_source_close(&scan);
	} else {
		ck_assert_int_eq(
		    tm_index_build(f->fmt, &f->views, &f->src, "t.byu", NULL, NULL, &f->ix), 0);
	}
	char err[512];
	snprintf(cache, sizeof(cache), "%s/cache/sub", dir);
	ck_assert_msg(tm_index_store_open(&f->store, cache, true, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(struct fixture *f)
{
	tm_index_store_close(&f->store);
	tm_index_free(f->ix);
	tm_source_close(&f->src);
	tm_view_table_free(&f->views);
}

static void file_path(const struct fixture *f, char *buf, size_t len)
{
	char name[32];
	tm_index_file_name(f->fmt, &f->key, name, sizeof(name));
	snprintf(buf, len, "%s/%s", cache, name);
}

static void same_index(const struct tm_index *a, const struct tm_index *b)
{
	ck_assert_uint_eq(a->n_rows, b->n_rows);
	ck_assert_uint_eq(a->row_words, b->row_words);
	ck_assert_int_eq(memcmp(a->rows, b->rows, a->n_rows * a->row_words * 8), 0);
	ck_assert_uint_eq(a->stats_len, b->stats_len);
	ck_assert_int_eq(memcmp(a->stats_json, b->stats_json, a->stats_len), 0);
	ck_assert_uint_eq(a->errors_len, b->errors_len);
	if (a->errors_len)
		ck_assert_int_eq(memcmp(a->errors_txt, b->errors_txt, a->errors_len), 0);
	ck_assert_uint_eq(a->raw_size, b->raw_size);
	ck_assert_int_eq(a->truncated, b->truncated);
	ck_assert_int_eq(!a->gz, !b->gz);
	if (a->gz) {
		ck_assert_uint_eq(a->gz->n_points, b->gz->n_points);
		ck_assert_int_eq(memcmp(a->gz->points, b->gz->points,
					(a->gz->n_points + 1) * sizeof(*a->gz->points)),
				 0);
		ck_assert_uint_eq(a->gz->windows_len, b->gz->windows_len);
		ck_assert_int_eq(memcmp(a->gz->windows, b->gz->windows, a->gz->windows_len), 0);
		ck_assert_uint_eq(a->gz->out_size, b->gz->out_size);
	}
}

START_TEST(test_round_trip)
{
	for (int gz = 0; gz < 2; gz++) {
		struct fixture f;
		struct tm_index *back = NULL;
		char why[256], path[512];
		struct stat st;
		setup(&f, 200000, gz);
		ck_assert_int_eq(
		    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
		    -ENOENT);
		ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
		ck_assert_int_eq(
		    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
		    0);
		same_index(f.ix, back);
		/* stats.json names the path it is read under */
		ck_assert_int_eq(tm_index_set_source(back, "x/y.byu"), 0);
		ck_assert_ptr_nonnull(
		    memmem(back->stats_json, back->stats_len, "\"source\": \"x/y.byu\",", 20));
		ck_assert_int_eq(tm_index_set_source(back, gz ? "t.byu.gz" : "t.byu"), 0);
		same_index(f.ix, back); /* the same text again */
		tm_index_free(back);
		file_path(&f, path, sizeof(path));
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0600);
		ck_assert_int_eq(stat(cache, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0700);
		teardown(&f);
	}
}
END_TEST

/* Rewrites the stored file with change() applied, then expects a refusal naming why. Returns
 * the load's error. */
static int expect_refused(struct fixture *f, void (*change)(const char *path), const char *why)
{
	char path[512], got[256];
	struct tm_index *back = NULL;
	ck_assert_int_eq(tm_index_file_store(&f->store, f->fmt, &f->views, &f->key, f->ix), 0);
	file_path(f, path, sizeof(path));
	change(path);
	int err =
	    tm_index_file_load(&f->store, f->fmt, &f->views, &f->key, &back, got, sizeof(got));
	ck_assert_int_lt(err, 0);
	ck_assert_ptr_null(back);
	ck_assert_msg(strstr(got, why) != NULL, "refused for \"%s\", want \"%s\"", got, why);
	return err;
}

static void patch(const char *path, long off, uint8_t xor_mask)
{
	int fd = open(path, O_RDWR);
	uint8_t b;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &b, 1, off), 1);
	b ^= xor_mask;
	ck_assert_int_eq(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void flip_body(const char *path)
{
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	patch(path, st.st_size - 10, 0x40);
}

static void flip_version(const char *path)
{
	patch(path, 8, 1); /* after the 8-byte magic */
}

/* The build key (after magic, version, header size, byte order and the 32-byte format name)
 * of another build: a different source hash, behind valid checksums. */
static void another_build(const char *path)
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

static void flip_magic(const char *path)
{
	patch(path, 0, 1);
}

static void flip_header(const char *path)
{
	patch(path, 100, 1); /* in the key or sizes */
}

static void cut(const char *path)
{
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 1), 0);
}

static void cut_to_nothing(const char *path)
{
	ck_assert_int_eq(truncate(path, 0), 0);
}

static void give_away(const char *path)
{
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
}

static void open_to_all(const char *path)
{
	ck_assert_int_eq(chmod(path, 0666), 0);
}

static void make_dir(const char *path)
{
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

/* Changes of a row's words behind valid checksums (the header's size is at offset 12; the
 * rows follow the header; a BYU row is raw offset, record, the views, 11 classes, no state). */
static uint32_t row_words, first_class;

static long row_word(const char *path, unsigned row, unsigned word)
{
	uint32_t header_size;
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, &header_size, 4, 12), 4);
	close(fd);
	return (long)header_size + (long)(row * row_words + word) * 8;
}

static void records_backwards(const char *path)
{
	patch(path, row_word(path, 2, 1) + 7, 0x80); /* row 2 starts at record 2^63 + ... */
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

static void view_backwards(const char *path)
{
	patch(path, row_word(path, 1, 3) + 6, 0x10); /* row 1's dump.txt offset past row 2's */
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

static void past_the_end(const char *path)
{
	for (unsigned r = 1; r < 5; r++) /* every row after the first, in order, past the end */
		patch(path, row_word(path, r, 0) + 5, 0x01);
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

static void class_overflow(const char *path)
{
	patch(path, row_word(path, 1, first_class) + 4, 0x01); /* a class counts 2^32 in a chunk */
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

START_TEST(test_refused_rows)
{
	struct fixture f;
	setup(&f, 50000, 0);
	ck_assert_ptr_null(tm_index_check(f.ix, f.fmt->chunk_records, f.key.size));
	ck_assert_uint_eq(f.ix->n_rows, 5); /* 4 chunks of 16384 records at most */
	ck_assert_uint_eq(f.ix->n_classes, 11);
	row_words = f.ix->row_words;
	first_class = TM_ROW_VIEWS + f.ix->n_views;
	expect_refused(&f, records_backwards, "rows out of order");
	expect_refused(&f, view_backwards, "view offsets out of order");
	expect_refused(&f, past_the_end, "trace offsets past the trace's end");
	expect_refused(&f, class_overflow, "class counts out of order");
	teardown(&f);
}
END_TEST

START_TEST(test_refusals)
{
	struct fixture f;
	setup(&f, 50000, 0);
	ck_assert_int_eq(expect_refused(&f, flip_body, "body checksum mismatch"), -EBADMSG);
	ck_assert_int_eq(expect_refused(&f, flip_version, "index file format version differs"),
			 -ESTALE);
	ck_assert_int_eq(expect_refused(&f, another_build, "written by another build"), -ESTALE);
	expect_refused(&f, flip_magic, "not an index file");
	expect_refused(&f, flip_header, "header checksum mismatch");
	expect_refused(&f, cut, "truncated or overlong");
	expect_refused(&f, cut_to_nothing, "truncated or overlong");
	if (geteuid() == 0)
		expect_refused(&f, give_away, "owned by another user");
	expect_refused(&f, open_to_all, "writable by others");
	char path[512];
	file_path(&f, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	expect_refused(&f, make_dir, "not a regular file");
	ck_assert_int_eq(rmdir(path), 0);
	teardown(&f);
}
END_TEST

/* The key changes with the content, the size or the time, and so does the file's name; the
 * index of another format is another file. */
START_TEST(test_keys)
{
	struct fixture f;
	setup(&f, 1000, 0);
	struct tm_trace_key before = f.key, after;
	char a[32], b[32];
	patch(trace_path, 3000, 0xff); /* inside the first 64 KiB */
	struct timespec times[2] = {{0, UTIME_OMIT}, {before.mtime_sec, before.mtime_nsec}};
	ck_assert_int_eq(utimensat(AT_FDCWD, trace_path, times, 0), 0); /* the time it had */
	ck_assert_int_eq(tm_trace_key_of(&f.src, &after), 0);
	ck_assert_uint_eq(after.size, before.size);
	ck_assert_int_eq(after.mtime_sec, before.mtime_sec);
	ck_assert_uint_ne(after.hash, before.hash);
	tm_index_file_name(f.fmt, &before, a, sizeof(a));
	tm_index_file_name(f.fmt, &after, b, sizeof(b));
	ck_assert_str_ne(a, b);
	tm_index_file_name(tm_format_find("tt6"), &before, b, sizeof(b));
	ck_assert_str_ne(a, b);
	/* an index file of the old content is not found for the new */
	struct tm_index *back = NULL;
	char why[256];
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &before, f.ix), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &after, &back, why, sizeof(why)),
	    -ENOENT);
	teardown(&f);
}
END_TEST

START_TEST(test_store_folder)
{
	struct tm_index_store s;
	char err[512], path[300];
	snprintf(path, sizeof(path), "%s/open", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700); /* made private */
	tm_index_store_close(&s);
	snprintf(path, sizeof(path), "%s/file", dir);
	FILE *f = fopen(path, "w");
	fclose(f);
	ck_assert_int_lt(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, path));
	char buf[64];
	setenv("XDG_CACHE_HOME", "/x/y", 1);
	ck_assert_int_eq(tm_index_store_default(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/x/y/tracemount");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	ck_assert_int_eq(tm_index_store_default(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/home/u/.cache/tracemount");
}
END_TEST

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	Suite *s = suite_create("index_file");
	TCase *tc = tcase_create("index_file");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_refused_rows);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_store_folder);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
