/* Index files: a round trip gives the same index, plain and gzip; every damaged, foreign or
 * unsafe file is refused with its reason, a system error told from a refusal; the content key
 * follows the trace. The cache folder: made alone unless asked, stale temporary files
 * removed, used again when deleted; its files listed and removed. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "byu_ref.h"
#include "reseal.h"
#include "tracemount/build_id.h"
#include "tracemount/context.h"
#include "tracemount/compress.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/table.h"
#include "tracemount/trace.h"
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
	snprintf(cache, sizeof(cache), "%s/cache/sub", dir);
	ck_assert_msg(tm_index_store_open(&f->store, cache, true, err, sizeof(err)) == 0, "%s",
		      err);
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
	ck_assert_int_eq(!a->z, !b->z);
	if (a->z) {
		ck_assert_uint_eq(a->z->n_points, b->z->n_points);
		ck_assert_int_eq(memcmp(a->z->points, b->z->points,
					(a->z->n_points + 1) * sizeof(*a->z->points)),
				 0);
		ck_assert_uint_eq(a->z->windows_len, b->z->windows_len);
		ck_assert_int_eq(memcmp(a->z->windows, b->z->windows, a->z->windows_len), 0);
		ck_assert_uint_eq(a->z->out_size, b->z->out_size);
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

/* A trace of two processors: its per-stream views' mask and tables come back from its file,
 * and the file of a one-processor trace has none. */
START_TEST(test_streams_round_trip)
{
	static const char *const traces[] = {
	    "10 clk cpu0 IT (1) 00001000 d503201f O EL1h_s : BL 0x2000\n"
	    "20 clk cpu1 IT (1) 00009000 d503201f O EL1h_s : NOP\n"
	    "30 clk cpu0 IT (2) 00002000 d503201f O EL1h_s : RET\n"
	    "40 clk cpu1 IT (2) 00009004 d503201f O EL1h_s : NOP\n"
	    "50 clk cpu0 IT (3) 00001004 d503201f O EL1h_s : NOP\n",
	    "10 clk cpu1 IT (1) 00009000 d503201f O EL1h_s : NOP\n",
	};
	for (unsigned k = 0; k < 2; k++) {
		const struct tm_format *fmt = tm_format_find("tarmac");
		struct tm_view_table views;
		struct tm_source src;
		struct tm_trace_key key;
		struct tm_index *ix, *back = NULL;
		struct tm_index_store store;
		char why[256], err[512];
		snprintf(trace_path, sizeof(trace_path), "%s/s%u.tarmac", dir, k);
		FILE *out = fopen(trace_path, "w");
		ck_assert_ptr_nonnull(out);
		fputs(traces[k], out);
		fclose(out);
		ck_assert_int_eq(tm_view_table_init(&views, fmt, "s.tarmac"), 0);
		ck_assert_int_eq(tm_source_open(AT_FDCWD, trace_path, &src), 0);
		ck_assert_int_eq(tm_trace_key_of(&src, &key), 0);
		ck_assert_int_eq(tm_index_build(fmt, &views, &src, "s.tarmac", NULL, NULL, &ix), 0);
		ck_assert_uint_eq(ix->streams, k ? 0 : 3);
		ck_assert_uint_eq(ix->n_tables,
				  views.n_tables + (k ? 0 : 2 * views.n_stream_tables));
		snprintf(cache, sizeof(cache), "%s/cache/streams", dir);
		ck_assert_msg(tm_index_store_open(&store, cache, true, err, sizeof(err)) == 0, "%s",
			      err);
		ck_assert_int_eq(tm_index_file_store(&store, fmt, &views, &key, ix), 0);
		ck_assert_int_eq(
		    tm_index_file_load(&store, fmt, &views, &key, &back, why, sizeof(why)), 0);
		same_index(ix, back);
		ck_assert_uint_eq(back->streams, ix->streams);
		ck_assert_uint_eq(back->n_tables, ix->n_tables);
		for (uint32_t t = 0; t < ix->n_tables; t++) {
			ck_assert_uint_eq(back->tables[t].len, ix->tables[t].len);
			ck_assert_uint_eq(tm_table_mem(&back->tables[t]),
					  tm_table_mem(&ix->tables[t]));
		}
		tm_index_free(back);
		tm_index_free(ix);
		tm_index_store_close(&store);
		tm_source_close(&src);
		tm_view_table_free(&views);
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

/* A folder the user names is made alone: a typo in its parent is refused, naming both, and
 * builds nothing. */
START_TEST(test_store_parents)
{
	struct tm_index_store s;
	char err[PATH_MAX + 256], path[300], want[700];
	struct stat st;
	snprintf(path, sizeof(path), "%s/typo/c", dir);
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want),
		 "cache folder %s: %s/typo does not exist (only the last folder of a cache path "
		 "is created)",
		 path, dir);
	ck_assert_str_eq(err, want);
	snprintf(want, sizeof(want), "%s/typo", dir);
	ck_assert_int_eq(stat(want, &st), -1);
	tm_index_store_close(&s); /* harmless after a failed open */
	ck_assert_int_eq(tm_index_store_open(&s, path, true, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	tm_index_store_close(&s);
	snprintf(path, sizeof(path), "%s/typo/d/", dir); /* the last folder only: made */
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	tm_index_store_close(&s);
	/* a relative folder is kept by its absolute path */
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(tm_index_store_open(&s, "rel", false, err, sizeof(err)), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	snprintf(want, sizeof(want), "%s/rel", dir);
	ck_assert_str_eq(s.dir, want);
	tm_index_store_close(&s);
}
END_TEST

static void touch_file(const char *folder, const char *name, time_t age)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", folder, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	struct timespec times[2] = {{time(NULL) - age, 0}, {time(NULL) - age, 0}};
	ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static bool exists(const char *folder, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", folder, name);
	return lstat(path, &st) == 0;
}

/* Opening the folder removes the temporary files of dead writers, by age, and nothing else. */
START_TEST(test_stale_temporaries)
{
	struct tm_index_store s;
	char err[512], path[300];
	snprintf(path, sizeof(path), "%s/stale", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	const char *old = ".0123456789abcdef.tmi.4242.1f2e3d";
	const char *fresh = ".0123456789abcdef.tmi.4243.abc";
	const time_t hour = 3600;
	touch_file(path, old, hour);
	touch_file(path, fresh, 0);
	touch_file(path, ".0123456789abcdef.tmi.1.2.x", TM_STALE_TMP_SECONDS + 60);
	touch_file(path, ".keep", hour);		     /* not a temporary file */
	touch_file(path, "0123456789abcdef.tmi", hour);	     /* an index file */
	touch_file(path, ".0123456789abcdeg.tmi.1.2", hour); /* not hex */
	touch_file(path, ".0123456789abcdef.tmi.", hour);    /* no writer */
	ck_assert_int_eq(tm_index_store_open(&s, path, false, err, sizeof(err)), 0);
	tm_index_store_close(&s);
	ck_assert(!exists(path, old));
	ck_assert(!exists(path, ".0123456789abcdef.tmi.1.2.x"));
	ck_assert(exists(path, fresh));
	ck_assert(exists(path, ".keep"));
	ck_assert(exists(path, "0123456789abcdef.tmi"));
	ck_assert(exists(path, ".0123456789abcdeg.tmi.1.2"));
	ck_assert(exists(path, ".0123456789abcdef.tmi."));
}
END_TEST

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "a load blocked on a FIFO\n";
	ssize_t n = write(2, msg, sizeof(msg) - 1);
	(void)n;
	_exit(3);
}

/* A FIFO named as the index file is refused at once, never read; a store replaces it. */
START_TEST(test_fifo)
{
	struct fixture f;
	struct tm_index *back = NULL;
	char path[512], why[256];
	setup(&f, 1000, 0);
	file_path(&f, path, sizeof(path));
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(20);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
	    -EBADMSG);
	alarm(0);
	ck_assert_str_eq(why, "not a regular file");
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)), 0);
	tm_index_free(back);
	/* a symbolic link is not followed */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink("/dev/zero", path), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
	    -EBADMSG);
	ck_assert_str_eq(why, "a symbolic link");
	ck_assert_int_eq(unlink(path), 0);
	teardown(&f);
}
END_TEST

static void empty_folder(const char *path)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	ck_assert_int_eq(system(cmd), 0);
}

/* The cache folder deleted while open is used again: made again by hand, or by the store. */
START_TEST(test_folder_deleted)
{
	struct fixture f;
	struct tm_index *back = NULL;
	char path[512], why[256];
	struct stat st;
	setup(&f, 1000, 0);
	file_path(&f, path, sizeof(path));
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	empty_folder(cache);
	ck_assert_int_eq(mkdir(cache, 0755), 0);
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)),
	    -ENOENT);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0); /* in the new folder, */
	ck_assert_int_eq(stat(cache, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700); /* made private */
	ck_assert_int_eq(
	    tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why)), 0);
	tm_index_free(back);
	/* deleted and not made again: the store makes it */
	empty_folder(cache);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	/* deleted with its parent: nothing is made, the store fails and says why */
	char parent[300];
	snprintf(parent, sizeof(parent), "%s/cache", dir);
	empty_folder(parent);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), -ENOENT);
	ck_assert_int_eq(stat(parent, &st), -1);
	ck_assert_int_eq(mkdir(parent, 0700), 0);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	teardown(&f);
}
END_TEST

struct racer {
	struct fixture *f;
	atomic_bool *done;
	int errors;
};

static void *load_and_store(void *arg)
{
	struct racer *r = arg;
	struct tm_index *back;
	char why[256];
	for (int i = 0; i < 10 || !atomic_load(r->done); i++) {
		back = NULL;
		int err = tm_index_file_load(&r->f->store, r->f->fmt, &r->f->views, &r->f->key,
					     &back, why, sizeof(why));
		tm_index_free(back);
		if (err && err != -ENOENT)
			r->errors++;
		(void)tm_index_file_store(&r->f->store, r->f->fmt, &r->f->views, &r->f->key,
					  r->f->ix);
	}
	return NULL;
}

/* Loads and stores on many threads while the folder is deleted under them: no fd is closed
 * under another thread (the sanitizers and valgrind watch), and the last store lands. */
START_TEST(test_folder_deleted_racing)
{
	struct fixture f;
	struct racer r[4];
	pthread_t th[4];
	char path[512];
	struct stat st;
	setup(&f, 1000, 0);
	file_path(&f, path, sizeof(path));
	atomic_bool done = false;
	setenv("TM_RACE_CACHE", cache, 1);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct racer){&f, &done, 0};
		ck_assert_int_eq(pthread_create(&th[i], NULL, load_and_store, &r[i]), 0);
	}
	for (int i = 0; i < 5; i++) { /* writers may make it again as rm empties it: retried */
		for (int tries = 0; tries < 100; tries++)
			if (system("rm -rf \"$TM_RACE_CACHE\" 2>/dev/null") == 0)
				break;
		usleep(20000); /* room for loads and stores between deletions */
	}
	atomic_store(&done, true);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(r[i].errors, 0); /* a file is whole or absent */
	}
	empty_folder(cache);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_gt(f.store.n_old_fds, 0); /* opened again, the old fds kept */
	teardown(&f);
}
END_TEST

static char logged[16384];

static void log_line(int priority, const char *line)
{
	(void)priority;
	size_t n = strlen(logged);
	snprintf(logged + n, sizeof(logged) - n, "%s\n", line);
}

static struct tm_index_counts count(const struct tm_context *ctx)
{
	struct tm_index_counts c;
	tm_context_counts(ctx, &c);
	return c;
}

/* A context over the cache folder, logging to logged. */
static struct tm_context *new_context(bool force, const char *root)
{
	struct tm_context *ctx;
	char err[512];
	ck_assert_int_eq(tm_context_new(TM_DEFAULT_MEMORY, &ctx), 0);
	ck_assert_msg(tm_context_set_store(ctx, cache, false, err, sizeof(err)) == 0, "%s", err);
	tm_context_set_log(ctx, log_line);
	tm_context_set_force_rebuild(ctx, force);
	ck_assert_int_eq(tm_context_set_root(ctx, root), 0);
	logged[0] = '\0';
	return ctx;
}

/* Indexes f's trace as t.byu in ctx. Returns tm_trace_index's result. */
static int index_once(struct tm_context *ctx, struct fixture *f)
{
	struct tm_trace *t;
	struct tm_open_trace ot;
	ck_assert_int_eq(tm_context_trace(ctx, "t.byu", f->fmt, &t), 0);
	tm_trace_open(&ot, t, &f->src);
	int err = tm_trace_index(&ot);
	tm_trace_close(&ot);
	tm_trace_put(t);
	return err;
}

/* The lowest free descriptor: with the limit there, every open fails with EMFILE. */
static int lowest_free_fd(void)
{
	int fd = dup(0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	return fd;
}

/* A load that fails for want of descriptors is the system's trouble, not the file's: the
 * error says so, the file is not counted as refused, the trace is built. */
START_TEST(test_no_descriptors)
{
	struct fixture f;
	struct tm_index *back = NULL;
	struct rlimit was, low;
	char why[256], want[600];
	setup(&f, 1000, 0);
	ck_assert_int_eq(tm_index_file_store(&f.store, f.fmt, &f.views, &f.key, f.ix), 0);
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &was), 0);
	low = was;
	low.rlim_cur = (rlim_t)lowest_free_fd();
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	int err = tm_index_file_load(&f.store, f.fmt, &f.views, &f.key, &back, why, sizeof(why));
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	ck_assert_int_eq(err, -EMFILE);
	ck_assert_str_eq(why, strerror(EMFILE));

	struct tm_context *ctx = new_context(false, NULL);
	low.rlim_cur = (rlim_t)lowest_free_fd();
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	err = index_once(ctx, &f);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &was), 0);
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(count(ctx).refused, 0);
	ck_assert_uint_eq(count(ctx).loaded, 0);
	ck_assert_uint_eq(count(ctx).built, 1);
	snprintf(want, sizeof(want),
		 "t.byu: cannot read its index file in %s: Too many open files: indexing again\n",
		 cache);
	ck_assert_msg(strstr(logged, want), "logged:\n%s", logged);
	ck_assert_ptr_null(strstr(logged, "refused"));
	tm_context_free(ctx);

	/* a damaged file, by contrast, is refused and counted */
	char path[512];
	file_path(&f, path, sizeof(path));
	flip_body(path);
	ctx = new_context(false, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).refused, 1);
	ck_assert_ptr_nonnull(
	    strstr(logged, "t.byu: index file refused (body checksum mismatch): indexing again\n"));
	tm_context_free(ctx);
	teardown(&f);
}
END_TEST

/* force_rebuild reads no index file but writes one; an index pass says when it starts and
 * when it ends. */
START_TEST(test_force_rebuild)
{
	struct fixture f;
	char path[512];
	struct stat before, after;
	setup(&f, 1000, 0);
	file_path(&f, path, sizeof(path));
	struct tm_context *ctx = new_context(false, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).built, 1);
	ck_assert_ptr_nonnull(strstr(logged, "t.byu: indexing, 6000 bytes\n"));
	ck_assert_ptr_nonnull(strstr(logged, "t.byu: indexed in "));
	tm_context_free(ctx);
	ck_assert_int_eq(stat(path, &before), 0);

	ctx = new_context(false, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).loaded, 1);
	ck_assert_ptr_null(strstr(logged, "indexing")); /* read, not built: nothing said */
	tm_context_free(ctx);

	ctx = new_context(true, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	ck_assert_uint_eq(count(ctx).loaded, 0);
	ck_assert_uint_eq(count(ctx).built, 1);
	tm_context_free(ctx);
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_ne(before.st_ino, after.st_ino); /* written anew */
	teardown(&f);
}
END_TEST

struct listed {
	int n;
	struct tm_index_file_info first;
	char problems[4][64], names[4][32];
	int stop_after;
};

static int collect(void *arg, const struct tm_index_file_info *info)
{
	struct listed *l = arg;
	if (l->n == 0)
		l->first = *info;
	if (l->n < 4) {
		snprintf(l->problems[l->n], sizeof(l->problems[0]), "%s",
			 info->problem ? info->problem : "-");
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", info->name);
	}
	l->n++;
	return l->stop_after && l->n == l->stop_after ? 7 : 0;
}

/* The list names each index file's trace, format, key and size, and what would refuse it;
 * remove takes index files only. */
START_TEST(test_list_and_remove)
{
	struct fixture f;
	struct listed l;
	char path[512], want[PATH_MAX], real[PATH_MAX];
	struct stat st;
	setup(&f, 1000, 0);
	file_path(&f, path, sizeof(path));
	empty_folder(cache);				  /* of the other tests' files */
	struct tm_context *ctx = new_context(false, dir); /* a mount: under its root */
	ck_assert_int_eq(index_once(ctx, &f), 0);
	tm_context_free(ctx);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 0);
	ck_assert_int_eq(l.n, 1);
	ck_assert_ptr_null(l.first.problem);
	ck_assert_str_eq(l.first.name, strrchr(path, '/') + 1);
	ck_assert_str_eq(l.first.format, "byu");
	snprintf(want, sizeof(want), "%s/t.byu", dir);
	ck_assert_str_eq(l.first.trace, want);
	ck_assert_int_eq(memcmp(&l.first.key, &f.key, sizeof(f.key)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(l.first.size, (uint64_t)st.st_size);
	ck_assert_int_eq(l.first.written.tv_sec, st.st_mtim.tv_sec);

	/* tracemount index: resolved from the current folder */
	char cwd[PATH_MAX];
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(dir), 0);
	ctx = new_context(true, NULL);
	ck_assert_int_eq(index_once(ctx, &f), 0);
	tm_context_free(ctx);
	ck_assert_int_eq(chdir(cwd), 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 0);
	ck_assert_ptr_nonnull(realpath(trace_path, real));
	ck_assert_str_eq(l.first.trace, real);

	/* others: out of date, damaged, no regular file; temporary files are not listed */
	char other[600];
	snprintf(other, sizeof(other), "%s/0000000000000001.tmi", cache);
	ck_assert_int_eq(link(path, other), 0);
	another_build(other); /* hard-linked: both change */
	snprintf(other, sizeof(other), "%s/0000000000000002.tmi", cache);
	ck_assert_int_eq(mkfifo(other, 0600), 0);
	snprintf(other, sizeof(other), "%s/0000000000000003.tmi", cache);
	FILE *out = fopen(other, "w");
	fputs("not an index file, at all, but long enough? no.", out);
	fclose(out);
	ck_assert_int_eq(chmod(other, 0600), 0);
	touch_file(cache, ".0000000000000004.tmi.1.2", 0);
	touch_file(cache, "notes.txt", 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 0);
	ck_assert_int_eq(l.n, 4);
	ck_assert_str_eq(l.names[0], "0000000000000001.tmi");
	ck_assert_str_eq(l.problems[0], "out of date");
	ck_assert_str_eq(l.first.format, "byu"); /* its header read still */
	ck_assert_str_eq(l.first.trace, real);
	ck_assert_str_eq(l.names[1], "0000000000000002.tmi");
	ck_assert_str_eq(l.problems[1], "not a regular file");
	ck_assert_str_eq(l.names[2], "0000000000000003.tmi");
	ck_assert_str_eq(l.problems[2], "truncated or overlong");
	ck_assert_str_eq(l.names[3], strrchr(path, '/') + 1);
	ck_assert_str_eq(l.problems[3], "out of date"); /* the link's change */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	ck_assert_int_eq(tm_index_store_list(&f.store, collect, &l), 7);
	ck_assert_int_eq(l.n, 2);

	ck_assert_int_eq(tm_index_store_remove(&f.store, "0000000000000002.tmi"), 0);
	ck_assert(!exists(cache, "0000000000000002.tmi"));
	ck_assert_int_eq(tm_index_store_remove(&f.store, "0000000000000002.tmi"), -ENOENT);
	ck_assert_int_eq(tm_index_store_remove(&f.store, "notes.txt"), -EINVAL);
	ck_assert_int_eq(tm_index_store_remove(&f.store, "../x.tmi"), -EINVAL);
	ck_assert_int_eq(tm_index_store_remove(&f.store, ".0000000000000004.tmi.1.2"), -EINVAL);
	ck_assert(exists(cache, "notes.txt"));
	teardown(&f);
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
	tcase_add_test(tc, test_streams_round_trip);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_refused_rows);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_store_folder);
	tcase_add_test(tc, test_store_parents);
	tcase_add_test(tc, test_stale_temporaries);
	tcase_add_test(tc, test_fifo);
	tcase_add_test(tc, test_folder_deleted);
	tcase_add_test(tc, test_folder_deleted_racing);
	tcase_add_test(tc, test_no_descriptors);
	tcase_add_test(tc, test_force_rebuild);
	tcase_add_test(tc, test_list_and_remove);
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
