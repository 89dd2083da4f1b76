/* Index files: a round trip gives the same index, plain and gzip; every damaged, foreign or
 * unsafe file is refused with its reason, a system error told from a refusal; the content key
 * follows the trace. (The cache folder that holds them: test_index_store.c.) */
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
#include "index_fixture.h"
#include "reseal.h"
#include "tracemount/build_id.h"
#include "tracemount/context.h"
#include "tracemount/derive.h"
#include "tracemount/compress.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/table.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

/* Whether b, read from a file, is a: its source name is the reader's to set (an index file
 * is the same for every path of the same bytes). */
static void same_index(const struct tm_index *a, struct tm_index *b)
{
	ck_assert_int_eq(tm_index_set_source(b, a->source), 0);
	ck_assert_uint_eq(a->products, b->products);
	ck_assert_uint_eq(a->n_errors, b->n_errors);
	ck_assert_uint_eq(a->n_notes, b->n_notes);
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
		struct ix_fixture f;
		struct tm_index *back = NULL;
		char why[256], path[512];
		struct stat st;
		ix_setup(&f, 200000, gz);
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
		ix_file_path(&f, path, sizeof(path));
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0600);
		ck_assert_int_eq(stat(ix_cache, &st), 0);
		ck_assert_uint_eq(st.st_mode & 0777, 0700);
		ix_teardown(&f);
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
		snprintf(ix_trace_path, sizeof(ix_trace_path), "%s/s%u.tarmac", ix_dir, k);
		FILE *out = fopen(ix_trace_path, "w");
		ck_assert_ptr_nonnull(out);
		fputs(traces[k], out);
		fclose(out);
		ck_assert_int_eq(tm_view_table_init(&views, fmt, "s.tarmac"), 0);
		ck_assert_int_eq(tm_source_open(AT_FDCWD, ix_trace_path, &src), 0);
		ck_assert_int_eq(tm_trace_key_of(&src, &key), 0);
		ck_assert_int_eq(tm_index_build(fmt, &views, &src, "s.tarmac", NULL, NULL, &ix), 0);
		unsigned calls = 0; /* the product of calls/, whose views are per stream */
		while (strcmp(tm_derivers[calls]->name, "calls") != 0)
			calls++;
		ck_assert_uint_eq(ix->product[1 + calls].streams, k ? 0 : 3);
		ck_assert_uint_eq(ix->n_tables, tm_view_table_slots(&views));
		snprintf(ix_cache, sizeof(ix_cache), "%s/cache/streams", ix_dir);
		ck_assert_msg(tm_index_store_open(&store, ix_cache, true, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_int_eq(tm_index_file_store(&store, fmt, &views, &key, ix), 0);
		ck_assert_int_eq(
		    tm_index_file_load(&store, fmt, &views, &key, &back, why, sizeof(why)), 0);
		same_index(ix, back);
		ck_assert_uint_eq(back->product[1 + calls].streams, ix->product[1 + calls].streams);
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

/* Products built one at a time, each by a pass of its own (doc/architecture.md, "Products"),
 * make an index equal to one whose pass built them all with the record index: stats.json,
 * errors.txt and every table byte for byte. An index file written between holds the products
 * built so far and no more. */
START_TEST(test_products_later)
{
	const struct tm_format *fmt = tm_format_find("tarmac");
	const char *trace = "10 clk cpu0 IT (1) 00001000 d503201f O EL1h_s : NOP\n"
			    "20 clk cpu0 IT (2) 00001004 94000002 O EL1h_s : BL 0x100c\n"
			    "30 clk cpu1 IT (1) 00009000 d503201f O EL1h_s : NOP\n"
			    "40 clk cpu0 IT (3) 0000100c d65f03c0 O EL1h_s : RET\n"
			    "garbage line\n";
	struct tm_view_table views;
	struct tm_source src;
	struct tm_trace_key key;
	struct tm_index *all, *lazy, *part, *back;
	struct tm_index_store store;
	char why[256], err[512];
	snprintf(ix_trace_path, sizeof(ix_trace_path), "%s/later.tarmac", ix_dir);
	FILE *out = fopen(ix_trace_path, "w");
	ck_assert_ptr_nonnull(out);
	fputs(trace, out);
	fclose(out);
	ck_assert_int_eq(tm_view_table_init(&views, fmt, "later.tarmac"), 0);
	ck_assert_int_eq(tm_source_open(AT_FDCWD, ix_trace_path, &src), 0);
	ck_assert_int_eq(tm_trace_key_of(&src, &key), 0);
	ck_assert_int_eq(tm_index_build(fmt, &views, &src, "later.tarmac", NULL, NULL, &all), 0);
	ck_assert_uint_eq(all->products, tm_products_of(fmt));

	struct tm_index_pass pass = {0}; /* the record pass alone */
	ck_assert_int_eq(tm_index_build_pass(fmt, &views, &src, "later.tarmac", &pass, &lazy), 0);
	ck_assert_uint_eq(lazy->products, 0);
	ck_assert_ptr_null(lazy->stats_json);
	ck_assert_ptr_null(lazy->tables);
	ck_assert_int_eq(memcmp(lazy->rows, all->rows, all->n_rows * all->row_words * 8), 0);
	snprintf(ix_cache, sizeof(ix_cache), "%s/cache/later", ix_dir);
	ck_assert_msg(tm_index_store_open(&store, ix_cache, true, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_int_eq(tm_index_file_store(&store, fmt, &views, &key, lazy), 0);
	ck_assert_int_eq(tm_index_file_load(&store, fmt, &views, &key, &back, why, sizeof(why)), 0);
	ck_assert_uint_eq(back->products, 0); /* none in the file */
	ck_assert_ptr_null(back->stats_json);
	tm_index_free(back);

	/* one product at a time, the last first: the file holds those built */
	uint32_t built = 0;
	for (int p = TM_MAX_PRODUCTS - 1; p >= 0; p--) {
		if (!(tm_products_of(fmt) >> p & 1))
			continue;
		pass.products = 1u << p;
		ck_assert_int_eq(
		    tm_index_build_pass(fmt, &views, &src, "later.tarmac", &pass, &part), 0);
		ck_assert_uint_eq(part->products, 1u << p);
		ck_assert_int_eq(tm_index_adopt(lazy, part), 0);
		tm_index_free(part);
		built |= 1u << p;
		ck_assert_uint_eq(lazy->products, built);
		ck_assert_int_eq(!lazy->stats_json, built != tm_products_of(fmt));
		ck_assert_int_eq(tm_index_file_store(&store, fmt, &views, &key, lazy), 0);
		ck_assert_int_eq(
		    tm_index_file_load(&store, fmt, &views, &key, &back, why, sizeof(why)), 0);
		ck_assert_uint_eq(back->products, built);
		tm_index_free(back);
	}
	same_index(all, lazy);
	ck_assert_uint_gt(all->errors_len, 0); /* the garbage line: said once, by the record pass */
	ck_assert_uint_eq(lazy->n_tables, all->n_tables);
	for (uint32_t t = 0; t < all->n_tables; t++) {
		ck_assert_uint_eq(lazy->tables[t].len, all->tables[t].len);
		ck_assert_uint_eq(tm_table_mem(&lazy->tables[t]), tm_table_mem(&all->tables[t]));
	}
	/* a pass over other bytes is refused */
	all->rows[TM_ROW_RAW_OFF + all->row_words]++;
	pass.products = TM_PRODUCT_STATS;
	ck_assert_int_eq(tm_index_build_pass(fmt, &views, &src, "later.tarmac", &pass, &part), 0);
	ck_assert_int_eq(tm_index_adopt(all, part), -ESTALE);
	tm_index_free(part);
	tm_index_free(lazy);
	tm_index_free(all);
	tm_index_store_close(&store);
	tm_source_close(&src);
	tm_view_table_free(&views);
}
END_TEST

/* Rewrites the stored file with change() applied, then expects a refusal naming why. Returns
 * the load's error. */
static int expect_refused(struct ix_fixture *f, void (*change)(const char *path), const char *why)
{
	char path[512], got[256];
	struct tm_index *back = NULL;
	ck_assert_int_eq(tm_index_file_store(&f->store, f->fmt, &f->views, &f->key, f->ix), 0);
	ix_file_path(f, path, sizeof(path));
	change(path);
	int err =
	    tm_index_file_load(&f->store, f->fmt, &f->views, &f->key, &back, got, sizeof(got));
	ck_assert_int_lt(err, 0);
	ck_assert_ptr_null(back);
	ck_assert_msg(strstr(got, why) != NULL, "refused for \"%s\", want \"%s\"", got, why);
	return err;
}

static void flip_version(const char *path)
{
	ix_patch(path, 8, 1); /* after the 8-byte magic */
}

static void flip_magic(const char *path)
{
	ix_patch(path, 0, 1);
}

static void flip_header(const char *path)
{
	ix_patch(path, 100, 1); /* in the key or sizes */
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
	ix_patch(path, row_word(path, 2, 1) + 7, 0x80); /* row 2 starts at record 2^63 + ... */
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

static void view_backwards(const char *path)
{
	ix_patch(path, row_word(path, 1, 3) + 6, 0x10); /* row 1's dump.txt offset past row 2's */
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

static void past_the_end(const char *path)
{
	for (unsigned r = 1; r < 5; r++) /* every row after the first, in order, past the end */
		ix_patch(path, row_word(path, r, 0) + 5, 0x01);
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

static void class_overflow(const char *path)
{
	ix_patch(path, row_word(path, 1, first_class) + 4,
		 0x01); /* a class counts 2^32 in a chunk */
	ck_assert_int_eq(index_file_reseal_path(path), 0);
}

START_TEST(test_refused_rows)
{
	struct ix_fixture f;
	ix_setup(&f, 50000, 0);
	ck_assert_ptr_null(tm_index_check(f.ix, f.fmt->chunk_records, f.key.size));
	ck_assert_uint_eq(f.ix->n_rows, 5); /* 4 chunks of 16384 records at most */
	ck_assert_uint_eq(f.ix->n_classes, 11);
	row_words = f.ix->row_words;
	first_class = TM_ROW_VIEWS + f.ix->n_views;
	expect_refused(&f, records_backwards, "rows out of order");
	expect_refused(&f, view_backwards, "view offsets out of order");
	expect_refused(&f, past_the_end, "trace offsets past the trace's end");
	expect_refused(&f, class_overflow, "class counts out of order");
	ix_teardown(&f);
}
END_TEST

START_TEST(test_refusals)
{
	struct ix_fixture f;
	ix_setup(&f, 50000, 0);
	ck_assert_int_eq(expect_refused(&f, ix_flip_body, "body checksum mismatch"), -EBADMSG);
	ck_assert_int_eq(expect_refused(&f, flip_version, "index file format version differs"),
			 -ESTALE);
	ck_assert_int_eq(expect_refused(&f, ix_another_build, "written by another build"), -ESTALE);
	expect_refused(&f, flip_magic, "not an index file");
	expect_refused(&f, flip_header, "header checksum mismatch");
	expect_refused(&f, cut, "truncated or overlong");
	expect_refused(&f, cut_to_nothing, "truncated or overlong");
	if (geteuid() == 0)
		expect_refused(&f, give_away, "owned by another user");
	expect_refused(&f, open_to_all, "writable by others");
	char path[512];
	ix_file_path(&f, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	expect_refused(&f, make_dir, "not a regular file");
	ck_assert_int_eq(rmdir(path), 0);
	ix_teardown(&f);
}
END_TEST

/* The key changes with the content, the size or the time, and so does the file's name; the
 * index of another format is another file. */
START_TEST(test_keys)
{
	struct ix_fixture f;
	ix_setup(&f, 1000, 0);
	struct tm_trace_key before = f.key, after;
	char a[32], b[32];
	ix_patch(ix_trace_path, 3000, 0xff); /* inside the first 64 KiB */
	struct timespec times[2] = {{0, UTIME_OMIT}, {before.mtime_sec, before.mtime_nsec}};
	ck_assert_int_eq(utimensat(AT_FDCWD, ix_trace_path, times, 0), 0); /* the time it had */
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
	ix_teardown(&f);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
	    test_round_trip, test_streams_round_trip, test_products_later,
	    test_refusals,   test_refused_rows,	      test_keys,
	};
	return ix_run("index_file", tests, sizeof(tests) / sizeof(tests[0]));
}
