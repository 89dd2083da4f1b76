/* Reading views at any offset, in any piece size, against contents built here from the spec's
 * decoder line; failures of the source and changes to it after indexing. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byu_ref.h"
#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/trace.h"

static const struct tm_format *const F = &tm_format_byu;

#define TRAILING 3

static const char *const view_paths[] = {
    "dump.txt",		 "class/int_ack.txt", "class/d_read.byu",
    "class/special.txt", "class/i_fetch.txt", "convert/t.din",
    "stats.json",	 "errors.txt",	      "raw",
};
#define N_VIEW_PATHS (int)(sizeof(view_paths) / sizeof(view_paths[0]))

struct fixture {
	size_t n, len;
	uint8_t *data;
	struct mem_source src;
	struct tm_context *ctx;
	struct tm_trace *t;	 /* a reference */
	struct tm_open_trace ot; /* of t and src */
};

/* 3 chunks and a bit, INT_ACK records in chunks 0 and 2 only, a partial record at the end.
 * memory: the chunk cache budget (small, so that chunks are evicted and decoded again). */
static void setup(struct fixture *f, size_t memory)
{
	size_t cr = F->chunk_records;
	f->n = 3 * cr + 5;
	f->len = f->n * 6 + TRAILING;
	f->data = byu_ref_gen(f->n, TRAILING, 42, 2 * cr + 1);
	mem_source_init(&f->src, f->data, f->len);
	ck_assert_int_eq(tm_context_new(memory, &f->ctx), 0);
	ck_assert_int_eq(tm_context_trace(f->ctx, "t.byu", F, &f->t), 0);
	tm_trace_open(&f->ot, f->t, &f->src.src);
}

static void teardown(struct fixture *f)
{
	tm_trace_close(&f->ot);
	tm_trace_put(f->t);
	tm_context_free(f->ctx);
	mem_source_free(&f->src);
	free(f->data);
}

static enum tm_trace_state state_of(struct tm_trace *t)
{
	struct tm_trace_progress p;
	tm_trace_progress(t, &p);
	return p.state;
}

static int view_no(const struct fixture *f, const char *path)
{
	int v = tm_view_table_find(tm_trace_views(f->t), path);
	ck_assert_msg(v >= 0, "no view %s", path);
	return v;
}

/* The expected bytes of a view: built here for raw and record views; stats.json and
 * errors.txt are the index pass's own text (their content is checked in test_byu and
 * test_index), checked here for how they read. */
static char *expected(struct fixture *f, const char *path, size_t *len)
{
	if (strcmp(path, "stats.json") == 0 || strcmp(path, "errors.txt") == 0) {
		ck_assert_int_eq(tm_trace_index(&f->ot), 0);
		const struct tm_index *ix = f->ot.index;
		int stats = path[0] == 's';
		*len = stats ? ix->stats_len : ix->errors_len;
		char *out = malloc(*len + 1);
		memcpy(out, stats ? ix->stats_json : ix->errors_txt, *len);
		return out;
	}
	return byu_ref_view(path, f->data, f->len, len);
}

static void check_same(const char *what, const char *got, const char *want, size_t len)
{
	if (memcmp(got, want, len) == 0)
		return;
	size_t i = 0;
	while (got[i] == want[i])
		i++;
	ck_abort_msg("%s: first difference at byte %zu: got %.20s... expected %.20s...", what, i,
		     got + i, want + i);
}

/* Reads the whole view in pieces of `piece` bytes from offset 0. */
static void read_in_pieces(struct tm_reader *r, const char *path, const char *want, size_t len,
			   size_t piece)
{
	char *buf = malloc(len + piece + 1);
	size_t pos = 0;
	ck_assert_ptr_nonnull(buf);
	for (;;) {
		ssize_t got = tm_reader_read(r, buf + pos, piece, pos);
		size_t exp = len - pos < piece ? len - pos : piece;
		ck_assert_msg(got >= 0 && (size_t)got == exp,
			      "%s: read of %zu at %zu returned %zd, expected %zu", path, piece, pos,
			      got, exp);
		if (!got)
			break;
		pos += (size_t)got;
	}
	ck_assert_uint_eq(pos, len);
	char what[128];
	snprintf(what, sizeof(what), "%s in pieces of %zu", path, piece);
	check_same(what, buf, want, len);
	free(buf);
}

static void random_reads(struct tm_reader *r1, struct tm_reader *r2, const char *path,
			 const char *want, size_t len, uint64_t seed, unsigned count)
{
	char *buf = malloc(70000);
	ck_assert_ptr_nonnull(buf);
	for (unsigned i = 0; i < count; i++) {
		uint64_t a = byu_ref_rand(&seed), b = byu_ref_rand(&seed);
		uint64_t off = a % (len + 64);
		size_t size = (size_t)(b % 4 == 0 ? b % 16 : b % 70000);
		struct tm_reader *r = i & 1 ? r2 : r1;
		ssize_t got = tm_reader_read(r, buf, size, off);
		size_t exp = off >= len ? 0 : len - off < size ? len - (size_t)off : size;
		ck_assert_msg(got >= 0 && (size_t)got == exp,
			      "%s: read of %zu at %llu returned %zd, expected %zu", path, size,
			      (unsigned long long)off, got, exp);
		char what[128];
		snprintf(what, sizeof(what), "%s: %zu at %llu", path, size,
			 (unsigned long long)off);
		if (exp)
			check_same(what, buf, want + off, exp);
	}
	free(buf);
}

START_TEST(test_read_view)
{
	const char *path = view_paths[_i];
	struct fixture f;
	struct tm_reader r1, r2;
	size_t len;

	setup(&f, 512u << 10);
	int v = view_no(&f, path);
	ck_assert_int_eq(tm_reader_open(&r1, &f.ot, (unsigned)v), 0);
	ck_assert_int_eq(tm_reader_open(&r2, &f.ot, (unsigned)v), 0);
	char *want = expected(&f, path, &len);

	ck_assert_uint_eq(tm_reader_size(&r1), len);
	uint64_t size = 0;
	ck_assert_int_eq(tm_view_size(&f.ot, (unsigned)v, &size), 0);
	ck_assert_uint_eq(size, len);
	if (strcmp(path, "class/special.txt") != 0 && strcmp(path, "stats.json") != 0)
		ck_assert_uint_gt(len, 0); /* every view here has content */
	if (strcmp(path, "errors.txt") == 0) {
		char prefix[48];
		int pl = snprintf(prefix, sizeof(prefix), "offset %zu: ", f.n * 6);
		ck_assert(len > (size_t)pl && memcmp(want, prefix, (size_t)pl) == 0);
	}

	/* in one go, asking for more than there is */
	char *buf = malloc(len + 4096);
	ssize_t got = tm_reader_read(&r1, buf, len + 4096, 0);
	ck_assert_int_eq(got, (ssize_t)len);
	check_same(path, buf, want, len);
	free(buf);

	static const size_t pieces[] = {1, 7, 4095, 65537};
	for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++)
		read_in_pieces(p & 1 ? &r2 : &r1, path, want, len, pieces[p]);

	random_reads(&r1, &r2, path, want, len, 1000 + (uint64_t)_i, 400);

	/* past the end */
	char c;
	ck_assert_int_eq(tm_reader_read(&r1, &c, 1, len), 0);
	ck_assert_int_eq(tm_reader_read(&r1, &c, 1, len + 1), 0);
	ck_assert_int_eq(tm_reader_read(&r2, &c, 1, UINT64_MAX), 0);
	ck_assert_int_eq(tm_reader_read(&r2, &c, 0, 0), 0);

	free(want);
	tm_reader_close(&r1);
	tm_reader_close(&r2);
	teardown(&f);
}
END_TEST

/* Bytes of view `path` before record number `record` (a chunk start when a multiple of
 * chunk_records). */
static uint64_t view_offset_of(const struct fixture *f, const char *path, size_t record)
{
	struct byu_ref_view v;
	uint64_t off = 0;
	ck_assert_int_eq(byu_ref_view_parse(path, &v), 0);
	for (size_t i = 0; i < record; i++)
		off += byu_ref_view_render(&v, f->data + i * 6, NULL);
	return off;
}

static uint8_t nibble_with_other_dump_len(uint8_t nib)
{
	return strlen(byu_ref_op[nib]) != strlen(byu_ref_op[9]) ? 9 : 12;
}

START_TEST(test_changed_bytes)
{
	size_t cr = F->chunk_records;
	struct fixture f;
	struct tm_reader r, rc;
	size_t len, clen;
	char buf[256];

	setup(&f, 64u << 20);
	ck_assert_int_eq(tm_reader_open(&r, &f.ot, (unsigned)view_no(&f, "dump.txt")), 0);
	ck_assert_int_eq(tm_reader_open(&rc, &f.ot, (unsigned)view_no(&f, "class/d_read.byu")), 0);
	char *want = byu_ref_view("dump.txt", f.data, f.len, &len);
	char *cwant = byu_ref_view("class/d_read.byu", f.data, f.len, &clen);

	/* after indexing, record cr + 10 changes class (and dump line length), and the first
	 * d_read record of chunk 2 becomes a write */
	uint8_t *ctl = &f.src.data[(cr + 10) * 6 + 5];
	*ctl = (uint8_t)(nibble_with_other_dump_len(*ctl >> 4) << 4);
	size_t d = 2 * cr;
	while (f.src.data[d * 6 + 5] >> 4 != 12)
		d++;
	ck_assert_uint_lt(d, 3 * cr);
	f.src.data[d * 6 + 5] = 0xf0;

	uint64_t c0 = 0, c1 = view_offset_of(&f, "dump.txt", cr);
	uint64_t c2 = view_offset_of(&f, "dump.txt", 2 * cr);
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), c1), -EIO);
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), c1 + 1000), -EIO);
	/* untouched chunks still read as they were */
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), c0), (ssize_t)sizeof(buf));
	check_same("chunk 0", buf, want + c0, sizeof(buf));
	/* chunk 2 of dump.txt holds the d_read turned d_write: a longer line */
	ck_assert_int_eq(tm_reader_read(&r, buf, 16, c2), -EIO);

	uint64_t k2 = view_offset_of(&f, "class/d_read.byu", 2 * cr);
	ck_assert_int_eq(tm_reader_read(&rc, buf, 12, k2), -EIO);
	ck_assert_int_eq(tm_reader_read(&rc, buf, 12, 0), 12);
	check_same("class/d_read.byu chunk 0", buf, cwant, 12);

	/* the trace shrinks into chunk 2: chunks 2 and 3 no longer read */
	f.src.len = 2 * cr * 6 + 100;
	uint64_t c3 = view_offset_of(&f, "dump.txt", 3 * cr);
	ck_assert_int_eq(tm_reader_read(&r, buf, 10, c3), -EIO);
	ck_assert_int_eq(tm_reader_read(&r, buf, 10, len - 10), -EIO);

	free(want);
	free(cwant);
	tm_reader_close(&r);
	tm_reader_close(&rc);
	teardown(&f);
}
END_TEST

START_TEST(test_source_errors)
{
	struct fixture f;
	struct tm_reader r, raw;
	size_t len;
	char buf[64];

	setup(&f, 64u << 20);
	char *want = byu_ref_view("dump.txt", f.data, f.len, &len);
	unsigned dump = (unsigned)view_no(&f, "dump.txt");

	/* the index pass fails: the error propagates and is not kept */
	f.src.fail = -EIO;
	ck_assert_int_eq(tm_reader_open(&r, &f.ot, dump), -EIO);
	tm_reader_close(&r);
	ck_assert_int_eq(state_of(f.t), TM_TRACE_FAILED);
	uint64_t size;
	ck_assert_int_eq(tm_view_size(&f.ot, dump, &size), -EIO);
	f.src.fail = 0;
	ck_assert_int_eq(tm_reader_open(&r, &f.ot, dump), 0);
	ck_assert_int_eq(state_of(f.t), TM_TRACE_INDEXED);
	ck_assert_uint_eq(tm_reader_size(&r), len);

	/* reading a chunk fails */
	f.src.fail = -EIO;
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), 0), -EIO);
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), len / 2), -EIO);
	ck_assert_int_eq(tm_reader_open(&raw, &f.ot, 0), 0);
	ck_assert_int_eq(tm_reader_read(&raw, buf, sizeof(buf), 0), -EIO);
	f.src.fail = -ENXIO; /* whatever the source says */
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), len / 3), -ENXIO);

	/* and works again once the source does */
	f.src.fail = 0;
	ck_assert_int_eq(tm_reader_read(&r, buf, sizeof(buf), len / 2), (ssize_t)sizeof(buf));
	check_same("after the error", buf, want + len / 2, sizeof(buf));
	ck_assert_int_eq(tm_reader_read(&raw, buf, 6, 0), 6);
	ck_assert(memcmp(buf, f.data, 6) == 0);

	/* a view that does not exist */
	tm_reader_close(&raw);
	ck_assert_int_eq(tm_reader_open(&raw, &f.ot, tm_trace_views(f.t)->n_views), -ENOENT);

	free(want);
	tm_reader_close(&r);
	tm_reader_close(&raw);
	teardown(&f);
}
END_TEST

struct thread_arg {
	struct fixture *f;
	struct tm_reader *shared; /* NULL: the thread opens its own reader */
	unsigned view;
	const char *want;
	size_t len;
	uint64_t seed;
	int bad;
};

static void *reader_thread(void *p)
{
	struct thread_arg *a = p;
	struct tm_reader own;
	struct tm_reader *r = a->shared;
	char buf[9000];
	if (!r) {
		if (tm_reader_open(&own, &a->f->ot, a->view) != 0) {
			a->bad = 1;
			return NULL;
		}
		r = &own;
	}
	for (int i = 0; i < 300 && !a->bad; i++) {
		uint64_t off = byu_ref_rand(&a->seed) % a->len;
		size_t size = (size_t)(byu_ref_rand(&a->seed) % sizeof(buf));
		size_t exp = a->len - off < size ? a->len - (size_t)off : size;
		ssize_t got = tm_reader_read(r, buf, size, off);
		if (got != (ssize_t)exp || memcmp(buf, a->want + off, exp) != 0)
			a->bad = 1;
	}
	if (!a->shared)
		tm_reader_close(&own);
	return NULL;
}

/* Readers of one trace in several threads share the index and a small chunk cache; threads
 * 4-7 share one reader, whose reads may run in parallel. */
START_TEST(test_concurrent_readers)
{
	struct fixture f;
	struct thread_arg args[8];
	pthread_t th[8];
	size_t len[2];
	struct tm_reader shared;
	setup(&f, 600u << 10);
	char *want[2] = {byu_ref_view("dump.txt", f.data, f.len, &len[0]),
			 byu_ref_view("convert/t.din", f.data, f.len, &len[1])};
	unsigned views[2] = {(unsigned)view_no(&f, "dump.txt"),
			     (unsigned)view_no(&f, "convert/t.din")};
	ck_assert_int_eq(tm_reader_open(&shared, &f.ot, views[0]), 0);
	for (int i = 0; i < 8; i++) {
		int k = i < 4 ? i % 2 : 0;
		args[i] = (struct thread_arg){.f = &f,
					      .shared = i < 4 ? NULL : &shared,
					      .view = views[k],
					      .want = want[k],
					      .len = len[k],
					      .seed = 77 + (uint64_t)i};
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader_thread, &args[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!args[i].bad, "thread %d read wrong bytes", i);
	}
	tm_reader_close(&shared);
	free(want[0]);
	free(want[1]);
	teardown(&f);
}
END_TEST

/* A format with decoder state: every chunk read at random restarts from its checkpoint. */
START_TEST(test_stateful_read)
{
	const struct tm_format *fmt = byu_ref_counting();
	size_t cr = fmt->chunk_records, n = 3 * cr + 5, len = 0;
	uint8_t *data = byu_ref_gen(n, 0, 21, 0);
	struct mem_source src;
	struct tm_context *ctx;
	struct tm_trace *t;
	struct tm_open_trace ot;
	struct tm_reader r;

	/* expected dump.txt: the spec's line with the record's number as its address */
	char *want = malloc(n * 32), line[64];
	ck_assert_ptr_nonnull(want);
	for (size_t i = 0; i < n; i++) {
		uint8_t rec[6];
		memcpy(rec, data + i * 6, 6);
		byu_ref_put(rec, BYU_REF_COUNT_BASE + (uint32_t)i, rec[4], rec[5]);
		size_t l = byu_ref_dump_line(rec, line);
		memcpy(want + len, line, l);
		len += l;
	}
	mem_source_init(&src, data, n * 6);
	ck_assert_int_eq(tm_context_new(1u << 20, &ctx), 0);
	ck_assert_int_eq(tm_context_trace(ctx, "c.byu", fmt, &t), 0);
	tm_trace_open(&ot, t, &src.src);
	tm_trace_put(t); /* ot holds it */
	ck_assert_int_eq(
	    tm_reader_open(&r, &ot, (unsigned)tm_view_table_find(tm_trace_views(t), "dump.txt")),
	    0);
	ck_assert_uint_eq(tm_reader_size(&r), len);
	/* the last chunk first, so its decode starts from its own checkpoint */
	char tail[100];
	ck_assert_int_eq(tm_reader_read(&r, tail, sizeof(tail), len - sizeof(tail)),
			 (ssize_t)sizeof(tail));
	check_same("counting dump.txt, last chunk first", tail, want + len - sizeof(tail),
		   sizeof(tail));
	random_reads(&r, &r, "counting dump.txt", want, len, 5, 200);
	read_in_pieces(&r, "counting dump.txt", want, len, 65537);

	tm_reader_close(&r);
	tm_trace_close(&ot);
	tm_context_free(ctx);
	mem_source_free(&src);
	free(want);
	free(data);
}
END_TEST

static Suite *reader_suite(void)
{
	Suite *s = suite_create("reader");
	TCase *tc = tcase_create("views");
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, test_read_view, 0, N_VIEW_PATHS);
	suite_add_tcase(s, tc);
	tc = tcase_create("failures");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_changed_bytes);
	tcase_add_test(tc, test_source_errors);
	tcase_add_test(tc, test_concurrent_readers);
	tcase_add_test(tc, test_stateful_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(reader_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
