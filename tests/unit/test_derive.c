/* Derivers (derive.h): their table, their views in the view table of every instruction trace
 * and of no other, and the index pass feeding them, through a small instruction format of
 * this file's own, so that no real format is needed. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "mem_source.h"
#include "tracemount/derive.h"
#include "tracemount/index.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

/* Big-endian 32-bit words, each an instruction at that address; 0 is a record that is none. */
struct word_record {
	struct tm_record head;
	uint32_t pc;
};

static int words_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct word_record *r = recs;
	size_t n = 0, pos = 0;
	(void)state;
	(void)diag;
	for (; n < max && in->len - pos >= 4; n++, pos += 4) {
		memset(&r[n], 0, sizeof(r[n]));
		r[n].head.raw_rel = (uint32_t)pos;
		r[n].head.raw_len = 4;
		r[n].pc = tm_be32(in->buf + pos);
	}
	if (n < max && pos < in->len && in->at_eof)
		pos = in->len; /* a cut word: no record */
	*n_out = n;
	*used = pos;
	return n < max && pos < in->len ? -EAGAIN : 0;
}

static bool words_instruction(const struct tm_chunk *c, size_t i, struct tm_insn *out)
{
	const struct word_record *r = (const struct word_record *)tm_chunk_rec(c, i);
	*out = (struct tm_insn){.pc = r->pc, .size = 4};
	return r->pc != 0;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static const char *const words_classes[] = {"word"};

static const struct tm_format words = {
    .name = "words",
    .classes = words_classes,
    .n_classes = 1,
    .record_size = sizeof(struct word_record),
    .chunk_records = 16,
    .raw_record_len = 4,
    .decode = words_decode,
    .instruction = words_instruction,
};

static unsigned n_derivers(void)
{
	unsigned n = 0;
	while (tm_derivers[n])
		n++;
	return n;
}

START_TEST(test_table)
{
	ck_assert_uint_gt(n_derivers(), 0);
	for (unsigned k = 0; tm_derivers[k]; k++) {
		const struct tm_deriver *d = tm_derivers[k];
		ck_assert_ptr_nonnull(d->name);
		ck_assert_uint_gt(strlen(d->name), 0);
		/* instructions or records: one of the two */
		ck_assert((d->add != NULL) != (d->add_records != NULL));
		ck_assert_ptr_nonnull(d->finish);
		ck_assert_uint_gt(d->n_outputs, 0);
		for (unsigned v = 0; v < d->n_outputs; v++)
			ck_assert_ptr_nonnull(d->views[v]);
		for (unsigned j = 0; j < k; j++) /* names and views are distinct */
			ck_assert_str_ne(tm_derivers[j]->name, d->name);
	}
}
END_TEST

START_TEST(test_views)
{
	struct tm_view_table t;
	unsigned n = tm_derived_views(&words);
	ck_assert_uint_le(n, TM_MAX_TABLES);
	ck_assert_int_eq(tm_view_table_init(&t, &words, "prog.words"), 0);
	ck_assert_uint_eq(t.n_tables, n);
	/* after every other view, in the list's order, "%s" standing for the stem; then the
	 * per-stream views, stream by stream, "%u" standing for the stream */
	unsigned per_stream = tm_derived_stream_views(&words);
	ck_assert_uint_gt(per_stream, 0);
	ck_assert_uint_eq(t.n_stream_tables, per_stream);
	unsigned v = t.n_views - n - TM_MAX_STREAM_VIEWS * per_stream, column = 0;
	for (unsigned k = 0; tm_derivers[k]; k++) {
		ck_assert(!tm_derivers[k]->n_stream_outputs || tm_derivers[k]->streams);
		for (unsigned i = 0; i < tm_derivers[k]->n_outputs; i++, v++, column++) {
			char path[256];
			snprintf(path, sizeof(path), tm_derivers[k]->views[i], "prog");
			ck_assert_str_eq(t.views[v].path, path);
			ck_assert_int_eq(t.views[v].kind, TM_VIEW_TABLE);
			ck_assert_int_eq(t.views[v].group, -1);
			ck_assert_uint_eq(t.views[v].column, column);
			ck_assert_int_eq(tm_view_table_find(&t, path), (int)v);
		}
	}
	for (unsigned s = 0; s < TM_MAX_STREAM_VIEWS; s++) {
		column = 0;
		for (unsigned k = 0; tm_derivers[k]; k++)
			for (unsigned i = 0; i < tm_derivers[k]->n_stream_outputs; i++, v++) {
				char path[256];
				snprintf(path, sizeof(path), tm_derivers[k]->stream_views[i], s);
				ck_assert_str_eq(t.views[v].path, path);
				ck_assert_int_eq(t.views[v].kind, TM_VIEW_TABLE);
				ck_assert_int_eq(t.views[v].group, (int)s);
				ck_assert_uint_eq(t.views[v].column, column++);
				ck_assert_int_eq(tm_view_table_find(&t, path), (int)v);
				/* its table: after the others, n_stream_tables per stream */
				ck_assert_uint_eq(tm_view_table_of(&t, &t.views[v]),
						  n + s * per_stream + column - 1);
				ck_assert_uint_eq(t.views[v].products, TM_PRODUCT_DERIVER(k));
				ck_assert_uint_eq(t.views[v].product, 1 + k);
			}
	}
	ck_assert_uint_eq(v, t.n_views);
	tm_view_table_free(&t);

	/* no instructions: only the views of the derivers of records, in the list's order */
	struct tm_format plain = words;
	plain.instruction = NULL;
	unsigned of_records = 0;
	for (unsigned k = 0; tm_derivers[k]; k++)
		of_records += tm_derivers[k]->add_records ? tm_derivers[k]->n_outputs : 0;
	ck_assert_uint_eq(tm_derived_views(&plain), of_records);
	ck_assert_uint_eq(tm_derived_stream_views(&plain), 0);
	ck_assert_int_eq(tm_view_table_init(&t, &plain, "prog.words"), 0);
	ck_assert_uint_eq(t.n_tables, of_records);
	v = t.n_views - of_records;
	for (unsigned i = 0; i < v; i++)
		ck_assert_int_ne(t.views[i].kind, TM_VIEW_TABLE);
	column = 0;
	for (unsigned k = 0; tm_derivers[k]; k++)
		for (unsigned i = 0; tm_derivers[k]->add_records && i < tm_derivers[k]->n_outputs;
		     i++, v++) {
			char path[256];
			snprintf(path, sizeof(path), tm_derivers[k]->views[i], "prog");
			ck_assert_str_eq(t.views[v].path, path);
			ck_assert_int_eq(t.views[v].kind, TM_VIEW_TABLE);
			ck_assert_uint_eq(t.views[v].column, column++);
		}
	ck_assert_uint_eq(v, t.n_views);
	tm_view_table_free(&t);
}
END_TEST

/* The index of fmt over a loop of 8 instructions run 10 times, with a word that is none
 * between runs, and its stats.json parsed. */
static json_object *index_loop(const struct tm_format *fmt, struct tm_index **ix)
{
	uint8_t trace[10 * 9 * 4];
	size_t len = 0;
	for (int run = 0; run < 10; run++) {
		for (uint32_t i = 0; i < 8; i++, len += 4)
			put_be32(trace + len, 0x1000 + 4 * i);
		put_be32(trace + len, 0);
		len += 4;
	}
	struct tm_view_table views;
	struct mem_source src;
	mem_source_init(&src, trace, len);
	ck_assert_int_eq(tm_view_table_init(&views, fmt, "loop.words"), 0);
	ck_assert_int_eq(tm_index_build(fmt, &views, &src.src, "loop.words", NULL, NULL, ix), 0);
	ck_assert_uint_eq((*ix)->n_tables, tm_view_table_slots(&views));
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++) /* one processor: no per-stream views */
		ck_assert_uint_eq((*ix)->product[p].streams, 0);
	tm_view_table_free(&views);
	mem_source_free(&src);
	char *text = strndup((*ix)->stats_json, (*ix)->stats_len); /* not NUL-terminated */
	ck_assert_ptr_nonnull(text);
	json_object *root = json_tokener_parse(text);
	free(text);
	ck_assert_ptr_nonnull(root);
	return root;
}

START_TEST(test_index_pass)
{
	struct tm_index *ix;
	json_object *root = index_loop(&words, &ix), *obj;
	/* one object per deriver, after the format's, in the list's order */
	const char *keys[32];
	unsigned n_keys = 0, n = n_derivers();
	json_object_object_foreach(root, key, value)
	{
		(void)value;
		ck_assert_uint_lt(n_keys, 32);
		keys[n_keys++] = key;
	}
	ck_assert_uint_ge(n_keys, n + 1);
	ck_assert_str_eq(keys[n_keys - n - 1], "words");
	for (unsigned k = 0; k < n; k++) {
		ck_assert_str_eq(keys[n_keys - n + k], tm_derivers[k]->name);
		ck_assert(json_object_object_get_ex(root, tm_derivers[k]->name, &obj));
		ck_assert(json_object_is_type(obj, json_type_object));
	}
	/* spix/ saw every instruction the format yielded, and nothing else */
	if (json_object_object_get_ex(root, "spix", &obj)) {
		json_object *insns;
		ck_assert(json_object_object_get_ex(obj, "instructions", &insns));
		ck_assert_int_eq(json_object_get_int64(insns), 80);
	}
	/* plots/ saw the 90 records, and the instructions' pcs as fetches from one page */
	if (json_object_object_get_ex(root, "plots", &obj)) {
		const struct {
			const char *key;
			int64_t value;
		} want[] = {{"slices", 90},
			    {"slice_records", 1},
			    {"accesses", 80},
			    {"code_pages_4k", 1},
			    {"data_pages_4k", 0}};
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			json_object *value;
			ck_assert(json_object_object_get_ex(obj, want[i].key, &value));
			ck_assert_int_eq(json_object_get_int64(value), want[i].value);
		}
	}
	json_object_put(root);
	tm_index_free(ix);

	struct tm_format plain = words;
	plain.instruction = NULL;
	root = index_loop(&plain, &ix);
	unsigned tables = 0;
	for (unsigned k = 0; k < n; k++) {
		bool applies = tm_derivers[k]->add_records != NULL;
		ck_assert_int_eq(json_object_object_get_ex(root, tm_derivers[k]->name, &obj),
				 applies);
		tables += applies ? tm_derivers[k]->n_outputs : 0;
	}
	ck_assert_uint_eq(ix->n_tables, tables);
	json_object_put(root);
	tm_index_free(ix);
}
END_TEST

static Suite *derive_suite(void)
{
	Suite *s = suite_create("derive");
	TCase *tc = tcase_create("derive");
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_views);
	tcase_add_test(tc, test_index_pass);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(derive_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
