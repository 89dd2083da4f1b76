/* The chunk index of BYU traces around chunk boundaries: rows, offsets of every record view
 * and class counts, against sums computed here record by record; lookups at every boundary. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byu_ref.h"
#include "mem_source.h"
#include "tracemount/index.h"
#include "tracemount/view.h"

static const struct tm_format *const F = &tm_format_byu;

/* Trace sizes: mult * chunk_records + delta records, then trailing bytes. */
static const struct size_case {
	long mult, delta;
	size_t trailing;
} cases[] = {
    {0, 0, 0}, {0, 1, 0}, {1, -1, 0}, {1, 0, 0}, {1, 1, 0}, {3, 5, 0},
    {0, 0, 1}, {0, 0, 5}, {0, 1, 3},  {1, 0, 5}, {3, 5, 1}, {2, 0, 2},
};

struct fixture {
	size_t n, len;
	uint8_t *data;
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix;
	struct byu_ref_view *ref; /* by column */
};

static void setup(struct fixture *f, size_t n, size_t trailing, size_t rare_mod)
{
	f->n = n;
	f->len = n * 6 + trailing;
	f->data = byu_ref_gen(n, trailing, n + trailing, rare_mod);
	mem_source_init(&f->src, f->data, f->len);
	ck_assert_int_eq(tm_view_table_init(&f->views, F, "t.byu"), 0);
	f->ref = calloc(f->views.n_record_views + 1, sizeof(*f->ref));
	ck_assert_ptr_nonnull(f->ref);
	for (unsigned i = 0; i < f->views.n_views; i++) {
		const struct tm_view *v = &f->views.views[i];
		if (v->kind != TM_VIEW_RECORDS)
			continue;
		ck_assert_uint_lt(v->column, f->views.n_record_views);
		ck_assert_msg(byu_ref_view_parse(v->path, &f->ref[v->column]) == 0,
			      "unexpected view %s", v->path);
	}
	ck_assert_int_eq(tm_index_build(F, &f->views, &f->src.src, "t.byu", NULL, NULL, &f->ix), 0);
	ck_assert_ptr_nonnull(f->ix);
}

static void teardown(struct fixture *f)
{
	tm_index_free(f->ix);
	tm_view_table_free(&f->views);
	mem_source_free(&f->src);
	free(f->ref);
	free(f->data);
}

/* Compares row r with the running totals. */
static void check_row(const struct fixture *f, uint64_t r, uint64_t raw_off, uint64_t record,
		      const uint64_t *view_off, const uint64_t *class_count)
{
	const struct tm_index *ix = f->ix;
	const uint64_t *row = tm_index_row(ix, r);
	ck_assert_msg(row[TM_ROW_RAW_OFF] == raw_off, "row %llu: raw offset %llu, expected %llu",
		      (unsigned long long)r, (unsigned long long)row[TM_ROW_RAW_OFF],
		      (unsigned long long)raw_off);
	ck_assert_uint_eq(row[TM_ROW_RECORD], record);
	for (unsigned v = 0; v < ix->n_views; v++)
		ck_assert_msg(tm_index_view_off(ix, r, v) == view_off[v],
			      "row %llu view %u: %llu, expected %llu", (unsigned long long)r, v,
			      (unsigned long long)tm_index_view_off(ix, r, v),
			      (unsigned long long)view_off[v]);
	for (unsigned c = 0; c < ix->n_classes; c++)
		ck_assert_msg(tm_index_class_count(ix, r, c) == class_count[c],
			      "row %llu class %s: %llu, expected %llu", (unsigned long long)r,
			      F->classes[c], (unsigned long long)tm_index_class_count(ix, r, c),
			      (unsigned long long)class_count[c]);
}

/* The chunk holding byte o of view v, found by a linear scan. */
static uint64_t chunk_at(const struct tm_index *ix, unsigned v, uint64_t o)
{
	for (uint64_t r = 0; r < tm_index_chunks(ix); r++)
		if (tm_index_view_off(ix, r, v) <= o && o < tm_index_view_off(ix, r + 1, v))
			return r;
	ck_abort_msg("no chunk holds offset %llu", (unsigned long long)o);
	return 0;
}

static void check_find(const struct tm_index *ix, unsigned v, uint64_t o, uint64_t expected)
{
	uint64_t chunk = 99999;
	int ret = tm_index_find(ix, v, o, &chunk);
	ck_assert_msg(ret == 0 && chunk == expected,
		      "view %u offset %llu: find returned %d chunk %llu, expected chunk %llu", v,
		      (unsigned long long)o, ret, (unsigned long long)chunk,
		      (unsigned long long)expected);
}

static void check_lookups(const struct fixture *f)
{
	const struct tm_index *ix = f->ix;
	uint64_t chunk;
	for (unsigned v = 0; v < ix->n_views; v++) {
		uint64_t size = tm_index_view_size(ix, v);
		for (uint64_t r = 0; r < tm_index_chunks(ix); r++) {
			uint64_t start = tm_index_view_off(ix, r, v);
			uint64_t end = tm_index_view_off(ix, r + 1, v);
			if (start == end) {
				/* an empty chunk: its offset belongs to the next non-empty one */
				if (start < size)
					check_find(ix, v, start, chunk_at(ix, v, start));
				continue;
			}
			check_find(ix, v, start, r);
			check_find(ix, v, end - 1, r);
			check_find(ix, v, start + (end - start) / 2, r);
		}
		ck_assert_int_eq(tm_index_find(ix, v, size, &chunk), -ERANGE);
		ck_assert_int_eq(tm_index_find(ix, v, size + 1, &chunk), -ERANGE);
		ck_assert_int_eq(tm_index_find(ix, v, UINT64_MAX, &chunk), -ERANGE);
	}
	ck_assert_int_eq(tm_index_find(ix, ix->n_views, 0, &chunk), -ERANGE);
}

START_TEST(test_sizes)
{
	const struct size_case *sc = &cases[_i];
	size_t cr = F->chunk_records;
	size_t n = (size_t)((long)cr * sc->mult + sc->delta);
	struct fixture f;

	setup(&f, n, sc->trailing, 20000);
	const struct tm_index *ix = f.ix;
	unsigned nv = f.views.n_record_views;

	ck_assert_uint_eq(ix->n_views, nv);
	ck_assert_uint_eq(ix->n_classes, F->n_classes);
	ck_assert_uint_eq(ix->row_words,
			  TM_ROW_VIEWS + ix->n_views + ix->n_classes + ix->state_words);
	/* a checkpoint row starts a chunk every chunk_records records, but only once the chunk
	 * has a record (an empty trace still has one, empty, chunk); then the totals row */
	uint64_t chunks = n ? (n + cr - 1) / cr : 1;
	ck_assert_msg(tm_index_chunks(ix) == chunks, "%zu records: %llu chunks, expected %llu", n,
		      (unsigned long long)tm_index_chunks(ix), (unsigned long long)chunks);
	ck_assert_uint_eq(ix->n_rows, chunks + 1);

	uint64_t view_off[64] = {0}, class_count[TM_MAX_CLASSES] = {0};
	ck_assert_uint_lt(nv, 64);
	for (size_t i = 0; i <= n; i++) {
		if (i % cr == 0 && i / cr < chunks) /* a chunk's row; the totals row is below */
			check_row(&f, i / cr, i * 6, i, view_off, class_count);
		if (i == n)
			break;
		const uint8_t *rec = f.data + i * 6;
		for (unsigned v = 0; v < nv; v++)
			view_off[v] += byu_ref_view_render(&f.ref[v], rec, NULL);
		int c = byu_ref_class_index(rec[5]);
		ck_assert_int_ge(c, 0);
		class_count[c]++;
	}
	/* the totals cover the trailing bytes too */
	check_row(&f, chunks, f.len, n, view_off, class_count);
	ck_assert_uint_eq(tm_index_records(ix), n);
	for (unsigned v = 0; v < nv; v++)
		ck_assert_uint_eq(tm_index_view_size(ix, v), view_off[v]);

	ck_assert_uint_eq(ix->raw_size, f.len);
	ck_assert(ix->truncated == (sc->trailing != 0));
	ck_assert_uint_eq(ix->n_errors, sc->trailing ? 1 : 0);
	if (sc->trailing) {
		char prefix[48];
		int pl = snprintf(prefix, sizeof(prefix), "offset %zu: ", n * 6);
		ck_assert_uint_gt(ix->errors_len, (size_t)pl);
		ck_assert_msg(memcmp(ix->errors_txt, prefix, (size_t)pl) == 0, "errors.txt: %.*s",
			      (int)ix->errors_len, ix->errors_txt);
		ck_assert_ptr_eq(memchr(ix->errors_txt, '\n', ix->errors_len),
				 ix->errors_txt + ix->errors_len - 1);
	} else {
		ck_assert_uint_eq(ix->errors_len, 0);
	}
	ck_assert_uint_gt(ix->stats_len, 0);
	ck_assert_int_eq(ix->stats_json[ix->stats_len - 1], '\n');
	ck_assert_uint_ge(tm_index_mem(ix),
			  ix->n_rows * ix->row_words * 8 + ix->stats_len + ix->errors_len);
	check_lookups(&f);
	teardown(&f);
}
END_TEST

/* A class whose records are few leaves chunks empty in its views: offsets tie. */
START_TEST(test_rare_class_ties)
{
	size_t cr = F->chunk_records;
	struct fixture f;
	setup(&f, 5 * cr + 3, 0, 2 * cr + 1);
	const struct tm_index *ix = f.ix;
	int found = -1;
	for (unsigned i = 0; i < f.views.n_views; i++)
		if (strcmp(f.views.views[i].path, "class/int_ack.txt") == 0)
			found = (int)f.views.views[i].column;
	ck_assert_int_ge(found, 0);
	unsigned v = (unsigned)found;
	/* INT_ACK at records 7, 2cr+8, 4cr+9: chunks 0, 2 and 4 */
	const char *line_len_src = "INT_ACK";
	uint64_t line = 8 + 1 + 2 + 1 + strlen(line_len_src) + 1;
	uint64_t want[] = {0, line, line, 2 * line, 2 * line, 3 * line, 3 * line};
	ck_assert_uint_eq(tm_index_chunks(ix), 6);
	for (uint64_t r = 0; r <= 6; r++)
		ck_assert_uint_eq(tm_index_view_off(ix, r, v), want[r]);
	check_find(ix, v, 0, 0);
	check_find(ix, v, line - 1, 0);
	check_find(ix, v, line, 2); /* rows 1 and 2 tie: the non-empty chunk 2 */
	check_find(ix, v, 2 * line - 1, 2);
	check_find(ix, v, 2 * line, 4);
	check_find(ix, v, 3 * line - 1, 4);
	uint64_t chunk;
	ck_assert_int_eq(tm_index_find(ix, v, 3 * line, &chunk), -ERANGE);
	check_lookups(&f);
	teardown(&f);
}
END_TEST

/* A view with no records at all. */
START_TEST(test_empty_view)
{
	size_t cr = F->chunk_records;
	struct fixture f;
	setup(&f, 2 * cr + 1, 0, 0);
	uint64_t chunk;
	for (unsigned i = 0; i < f.views.n_views; i++) {
		if (strcmp(f.views.views[i].path, "class/int_ack.byu") != 0)
			continue;
		unsigned v = f.views.views[i].column;
		ck_assert_uint_eq(tm_index_view_size(f.ix, v), 0);
		ck_assert_int_eq(tm_index_find(f.ix, v, 0, &chunk), -ERANGE);
	}
	teardown(&f);
}
END_TEST

struct progress_log {
	unsigned calls;
	uint64_t last_done, last_total;
	int backwards;
	unsigned stop_after; /* return non-zero at this call; 0: never */
};

static int progress(void *arg, uint64_t done, uint64_t total)
{
	struct progress_log *p = arg;
	if (p->calls && done < p->last_done)
		p->backwards = 1;
	p->calls++;
	p->last_done = done;
	p->last_total = total;
	return p->stop_after && p->calls == p->stop_after; /* non-zero: give up */
}

START_TEST(test_progress_and_errors)
{
	size_t n = 3000;
	uint8_t *data = byu_ref_gen(n, 0, 5, 0);
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix = NULL;
	struct progress_log log = {0};

	mem_source_init(&src, data, n * 6);
	ck_assert_int_eq(tm_view_table_init(&views, F, "p.byu"), 0);
	ck_assert_int_eq(tm_index_build(F, &views, &src.src, "p.byu", progress, &log, &ix), 0);
	ck_assert_uint_ge(log.calls, 1);
	ck_assert(!log.backwards);
	ck_assert_uint_eq(log.last_done, n * 6);
	ck_assert_uint_eq(log.last_total, n * 6);
	tm_index_free(ix);

	/* a progress function that says stop ends the pass: -ECANCELED, no index (a trace of
	 * 18 MB: progress comes every 16 MiB) */
	size_t big_n = 3000000;
	uint8_t *big = byu_ref_gen(big_n, 0, 5, 0);
	struct mem_source big_src;
	struct progress_log stop = {.stop_after = 1};
	mem_source_init(&big_src, big, big_n * 6);
	ix = NULL;
	ck_assert_int_eq(tm_index_build(F, &views, &big_src.src, "p.byu", progress, &stop, &ix),
			 -ECANCELED);
	ck_assert_ptr_null(ix);
	ck_assert_uint_eq(stop.calls, 1);
	ck_assert_uint_lt(stop.last_done, big_n * 6);
	mem_source_free(&big_src);
	free(big);

	/* an I/O error ends the pass with that error and no index */
	ix = NULL;
	src.fail = -EIO;
	ck_assert_int_eq(tm_index_build(F, &views, &src.src, "p.byu", NULL, NULL, &ix), -EIO);
	ck_assert_ptr_null(ix);
	tm_index_free(NULL);

	tm_view_table_free(&views);
	mem_source_free(&src);
	free(data);
}
END_TEST

/* Each row keeps the decoder state that restarts its chunk. */
START_TEST(test_decoder_state)
{
	const struct tm_format *fmt = byu_ref_counting();
	size_t cr = fmt->chunk_records, n = 3 * cr + 5;
	uint8_t *data = byu_ref_gen(n, 0, 8, 0);
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix = NULL;

	mem_source_init(&src, data, n * 6);
	ck_assert_int_eq(tm_view_table_init(&views, fmt, "c.byu"), 0);
	ck_assert_int_eq(tm_index_build(fmt, &views, &src.src, "c.byu", NULL, NULL, &ix), 0);
	ck_assert_uint_eq(ix->state_words, 1);
	ck_assert_uint_eq(tm_index_chunks(ix), 4);
	for (uint64_t r = 0; r <= 4; r++) {
		uint64_t state;
		memcpy(&state, tm_index_state(ix, r), sizeof(state));
		uint64_t want = BYU_REF_COUNT_BASE + (r < 4 ? r * cr : n);
		ck_assert_msg(state == want, "row %llu: state %llu, expected %llu",
			      (unsigned long long)r, (unsigned long long)state,
			      (unsigned long long)want);
	}
	tm_index_free(ix);
	tm_view_table_free(&views);
	mem_source_free(&src);
	free(data);
}
END_TEST

/* Decoders that break their contract stop the pass instead of corrupting the index. */
static int bad_class_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			    size_t *n_out, size_t *used, struct tm_diag *diag)
{
	int ret = tm_format_byu.decode(state, in, recs, max, n_out, used, diag);
	if (*n_out > 3)
		((struct byu_ref_decoded *)recs)[3].head.cls = (uint16_t)tm_format_byu.n_classes;
	return ret;
}

static int overrun_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			  size_t *n_out, size_t *used, struct tm_diag *diag)
{
	int ret = tm_format_byu.decode(state, in, recs, max, n_out, used, diag);
	if (*n_out)
		*used = in->len + 1;
	return ret;
}

static int failing_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			  size_t *n_out, size_t *used, struct tm_diag *diag)
{
	int ret = tm_format_byu.decode(state, in, recs, max, n_out, used, diag);
	return *n_out ? -EBADMSG : ret;
}

START_TEST(test_broken_decoders)
{
	size_t n = 100;
	uint8_t *data = byu_ref_gen(n, 0, 9, 0);
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix = NULL;
	struct tm_format fmt = tm_format_byu;

	mem_source_init(&src, data, n * 6);
	ck_assert_int_eq(tm_view_table_init(&views, &tm_format_byu, "b.byu"), 0);
	fmt.decode = bad_class_decode;
	ck_assert_int_eq(tm_index_build(&fmt, &views, &src.src, "b.byu", NULL, NULL, &ix), -EPROTO);
	ck_assert_ptr_null(ix);
	fmt.decode = overrun_decode;
	ck_assert_int_eq(tm_index_build(&fmt, &views, &src.src, "b.byu", NULL, NULL, &ix), -EPROTO);
	ck_assert_ptr_null(ix);
	fmt.decode = failing_decode;
	ck_assert_int_eq(tm_index_build(&fmt, &views, &src.src, "b.byu", NULL, NULL, &ix),
			 -EBADMSG);
	ck_assert_ptr_null(ix);
	fmt = tm_format_byu;
	fmt.n_classes = TM_MAX_CLASSES + 1;
	ck_assert_int_eq(tm_index_build(&fmt, &views, &src.src, "b.byu", NULL, NULL, &ix), -EINVAL);
	ck_assert_ptr_null(ix);
	tm_view_table_free(&views);
	mem_source_free(&src);
	free(data);
}
END_TEST

static Suite *index_suite(void)
{
	Suite *s = suite_create("index");
	TCase *tc = tcase_create("build");
	tcase_set_timeout(tc, 240);
	tcase_add_loop_test(tc, test_sizes, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, test_rare_class_ties);
	tcase_add_test(tc, test_empty_view);
	tcase_add_test(tc, test_progress_and_errors);
	tcase_add_test(tc, test_decoder_state);
	tcase_add_test(tc, test_broken_decoders);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(index_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
