/* The BYU decoder, its render ops, its probe and its statistics, against the tests' BYU model
 * (byu_ref.c) and values worked out by hand. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "byu_ref.h"
#include "mem_source.h"
#include "tracemount/diag.h"
#include "tracemount/index.h"
#include "tracemount/registry.h"
#include "tracemount/view.h"

static const struct tm_format *const F = &tm_format_byu;

/* One record each: every control nibble, with noise in the low bits, and extreme fields. */
static const struct record_row {
	uint8_t bytes[6];
	uint32_t addr;
	uint8_t be, control;
	const char *cls; /* the spec's table, lower case */
} record_rows[] = {
    {{0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, 0x00000000, 0x00, 0x00, "invalid"},
    {{0x12, 0x34, 0x56, 0x78, 0x0f, 0x1a}, 0x12345678, 0x0f, 0x1a, "int_ack"},
    {{0xff, 0xff, 0xff, 0xff, 0xff, 0x2f}, 0xffffffff, 0xff, 0x2f, "invalid"},
    {{0x00, 0x00, 0x00, 0x02, 0xfb, 0x30}, 0x00000002, 0xfb, 0x30, "special"},
    {{0x80, 0x00, 0x00, 0x01, 0x01, 0x47}, 0x80000001, 0x01, 0x47, "invalid"},
    {{0x00, 0x00, 0x03, 0xf8, 0xfe, 0x50}, 0x000003f8, 0xfe, 0x50, "io_read"},
    {{0x01, 0x02, 0x03, 0x04, 0x05, 0x66}, 0x01020304, 0x05, 0x66, "invalid"},
    {{0x00, 0x00, 0x00, 0x80, 0x7f, 0x7c}, 0x00000080, 0x7f, 0x7c, "io_write"},
    {{0x00, 0x01, 0x00, 0x00, 0x00, 0x80}, 0x00010000, 0x00, 0x80, "i_fetch"},
    {{0xde, 0xad, 0xbe, 0xef, 0x00, 0x9f}, 0xdeadbeef, 0x00, 0x9f, "nc_i_fetch"},
    {{0x0a, 0x0b, 0x0c, 0x0d, 0x10, 0xa1}, 0x0a0b0c0d, 0x10, 0xa1, "invalid"},
    {{0x7f, 0xff, 0xff, 0xff, 0x20, 0xb2}, 0x7fffffff, 0x20, 0xb2, "invalid"},
    {{0x00, 0x10, 0x00, 0x08, 0x0f, 0xc0}, 0x00100008, 0x0f, 0xc0, "d_read"},
    {{0x00, 0x10, 0x00, 0x10, 0xf0, 0xd3}, 0x00100010, 0xf0, 0xd3, "nc_d_read"},
    {{0x07, 0xff, 0x00, 0x20, 0x00, 0xe0}, 0x07ff0020, 0x00, 0xe0, "write_back"},
    {{0x1f, 0xff, 0x80, 0x00, 0xfe, 0xff}, 0x1fff8000, 0xfe, 0xff, "d_write"},
};
#define N_RECORD_ROWS (sizeof(record_rows) / sizeof(record_rows[0]))

static int class_index(const char *name)
{
	for (unsigned c = 0; c < F->n_classes; c++)
		if (strcmp(F->classes[c], name) == 0)
			return (int)c;
	return -1;
}

START_TEST(test_record_layout)
{
	ck_assert_uint_eq(F->record_size, sizeof(struct byu_ref_decoded));
	ck_assert_uint_eq(F->raw_record_len, 6);
	ck_assert_ptr_nonnull(F->decode);
	ck_assert_ptr_nonnull(F->dump);
	/* the spec's eleven operation names, each a class, in doc/views.md's order */
	ck_assert_uint_eq(F->n_classes, BYU_REF_N_CLASSES);
	for (unsigned c = 0; c < BYU_REF_N_CLASSES; c++)
		ck_assert_msg(class_index(byu_ref_class(c)) == (int)c, "class %s",
			      byu_ref_class(c));
}
END_TEST

/* Every row decoded alone, then all rows as one buffer. */
START_TEST(test_decode_records)
{
	struct byu_ref_decoded recs[N_RECORD_ROWS + 1];
	uint8_t all[N_RECORD_ROWS * 6];

	for (size_t i = 0; i < N_RECORD_ROWS; i++) {
		const struct record_row *row = &record_rows[i];
		struct tm_decode_in in = {
		    .buf = row->bytes, .len = 6, .raw_off = 600, .at_eof = true};
		size_t n = 99, used = 99;
		struct tm_diag d;
		tm_diag_init(&d);
		memset(recs, 0x5a, sizeof(recs));
		ck_assert_int_eq(F->decode(NULL, &in, recs, 4, &n, &used, &d), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(used, 6);
		ck_assert_uint_eq(recs[0].head.raw_rel, 0);
		ck_assert_uint_eq(recs[0].head.raw_len, 6);
		ck_assert_msg(recs[0].addr == row->addr, "row %zu: addr %08x, expected %08x", i,
			      recs[0].addr, row->addr);
		ck_assert_uint_eq(recs[0].be, row->be);
		ck_assert_uint_eq(recs[0].control, row->control);
		ck_assert_uint_lt(recs[0].head.cls, F->n_classes);
		ck_assert_str_eq(F->classes[recs[0].head.cls], row->cls);
		ck_assert_uint_eq(d.count, 0);
		ck_assert(!d.truncated);
		tm_diag_free(&d);
		memcpy(all + i * 6, row->bytes, 6);
	}

	struct tm_decode_in in = {.buf = all, .len = sizeof(all), .raw_off = 0, .at_eof = false};
	size_t n = 0, used = 0;
	ck_assert_int_eq(F->decode(NULL, &in, recs, N_RECORD_ROWS, &n, &used, NULL), 0);
	ck_assert_uint_eq(n, N_RECORD_ROWS);
	ck_assert_uint_eq(used, sizeof(all));
	for (size_t i = 0; i < N_RECORD_ROWS; i++) {
		ck_assert_uint_eq(recs[i].head.raw_rel, i * 6);
		ck_assert_uint_eq(recs[i].addr, record_rows[i].addr);
		ck_assert_str_eq(F->classes[recs[i].head.cls], record_rows[i].cls);
	}
}
END_TEST

/* Every control byte value: the class is the spec's name for control >> 4. */
START_TEST(test_every_control_byte)
{
	for (unsigned ctl = 0; ctl < 256; ctl++) {
		uint8_t b[6] = {1, 2, 3, 4, 5, (uint8_t)ctl};
		struct byu_ref_decoded r;
		struct tm_decode_in in = {.buf = b, .len = 6, .at_eof = true};
		size_t n, used;
		char name[16];
		ck_assert_int_eq(F->decode(NULL, &in, &r, 1, &n, &used, NULL), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_str_eq(F->classes[r.head.cls], byu_ref_class_name((uint8_t)ctl, name));
		ck_assert_uint_eq(r.control, ctl);
	}
}
END_TEST

/* Results: bytes available, max, at_eof -> return value, records, bytes used, problems. */
static const struct result_row {
	size_t len, max;
	bool at_eof;
	int ret;
	size_t n, used;
	unsigned problems; /* entries reported, each "trailing partial record" */
} result_rows[] = {
    {0, 8, false, -EAGAIN, 0, 0, 0}, {0, 8, true, 0, 0, 0, 0},
    {5, 8, false, -EAGAIN, 0, 0, 0}, {6, 8, false, -EAGAIN, 1, 6, 0},
    {6, 1, false, 0, 1, 6, 0},	     {12, 1, false, 0, 1, 6, 0},
    {18, 2, true, 0, 2, 12, 0},	     {13, 8, false, -EAGAIN, 2, 12, 0},
    {13, 8, true, 0, 2, 13, 1},	     {13, 2, true, 0, 2, 12, 0},
    {17, 0, true, 0, 0, 0, 0},	     {17, 0, false, 0, 0, 0, 0},
    {48, 8, false, 0, 8, 48, 0},     {48, 8, true, 0, 8, 48, 0},
    {54, 8, true, 0, 8, 48, 0},	     {5, 8, true, 0, 0, 5, 1},
};

START_TEST(test_decode_results)
{
	const struct result_row *row = &result_rows[_i];
	uint8_t buf[64];
	struct byu_ref_decoded recs[16];
	struct tm_diag d;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 0x80);
	tm_diag_init(&d);
	struct tm_decode_in in = {
	    .buf = buf, .len = row->len, .raw_off = 1000, .at_eof = row->at_eof};
	size_t n = 99, used = 99;
	int ret = F->decode(NULL, &in, recs, row->max, &n, &used, &d);
	ck_assert_msg(ret == row->ret, "row %d: returned %d, expected %d", _i, ret, row->ret);
	ck_assert_uint_eq(n, row->n);
	ck_assert_uint_eq(used, row->used);
	ck_assert_uint_eq(d.count, row->problems);
	ck_assert(d.truncated == (row->problems > 0));
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(recs[i].addr, byu_ref_addr(buf + i * 6));
	tm_diag_free(&d);
}
END_TEST

/* 1..5 trailing bytes at the end of the trace: one problem at the partial record's offset. */
START_TEST(test_trailing_bytes)
{
	size_t k = (size_t)_i;
	uint8_t buf[2 * 6 + 5];
	struct byu_ref_decoded recs[4];
	struct tm_diag d;
	char prefix[64];

	memset(buf, 0xc5, sizeof(buf));
	tm_diag_init(&d);
	struct tm_decode_in in = {.buf = buf, .len = 12 + k, .raw_off = 1000, .at_eof = true};
	size_t n, used;
	ck_assert_int_eq(F->decode(NULL, &in, recs, 4, &n, &used, &d), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(used, 12 + k);
	ck_assert_uint_eq(d.count, 1);
	ck_assert(d.truncated);
	ck_assert_int_eq(tm_diag_finish(&d), 0);
	snprintf(prefix, sizeof(prefix), "offset %d: ", 1012);
	ck_assert_uint_gt(d.len, strlen(prefix));
	ck_assert_msg(strncmp(d.text, prefix, strlen(prefix)) == 0, "errors.txt: %.*s", (int)d.len,
		      d.text);
	ck_assert(memchr(d.text, '\n', d.len) == d.text + d.len - 1);
	tm_diag_free(&d);

	/* without a diag the same call still consumes the bytes */
	ck_assert_int_eq(F->decode(NULL, &in, recs, 4, &n, &used, NULL), 0);
	ck_assert_uint_eq(used, 12 + k);
}
END_TEST

static struct tm_chunk chunk_of(const uint8_t *raw, size_t len, struct byu_ref_decoded *recs,
				size_t max)
{
	struct tm_decode_in in = {.buf = raw, .len = len, .at_eof = true};
	size_t n, used;
	ck_assert_int_eq(F->decode(NULL, &in, recs, max, &n, &used, NULL), 0);
	struct tm_chunk c = {.raw = raw,
			     .raw_len = used,
			     .records = recs,
			     .n_records = n,
			     .record_size = F->record_size};
	return c;
}

START_TEST(test_dump_render)
{
	uint8_t raw[N_RECORD_ROWS * 6];
	struct byu_ref_decoded recs[N_RECORD_ROWS];
	for (size_t i = 0; i < N_RECORD_ROWS; i++)
		memcpy(raw + i * 6, record_rows[i].bytes, 6);
	struct tm_chunk c = chunk_of(raw, sizeof(raw), recs, N_RECORD_ROWS);
	ck_assert_uint_eq(c.n_records, N_RECORD_ROWS);

	for (size_t i = 0; i < N_RECORD_ROWS; i++) {
		const struct record_row *row = &record_rows[i];
		char expected[64], out[64];
		int len = (int)byu_ref_dump_line(row->bytes, expected);
		memset(out, '#', sizeof(out));
		size_t n = F->dump->render(&c, i, out);
		ck_assert_uint_eq(n, (size_t)len);
		ck_assert_mem_eq(out, expected, (size_t)len);
		/* nothing past the slack a renderer may use */
		ck_assert_uint_lt((size_t)len + TM_RENDER_SLACK, sizeof(out));
		ck_assert_int_eq(out[len + TM_RENDER_SLACK], '#');
		ck_assert_uint_eq(F->dump->measure(&c, i), (size_t)len);
		if (F->dump->fixed_len)
			ck_assert_uint_eq(F->dump->fixed_len(recs[i].head.cls), (size_t)len);
	}
}
END_TEST

static const struct tm_view_desc *din_view(void)
{
	for (unsigned i = 0; i < F->n_extra_views; i++) {
		size_t l = strlen(F->extra_views[i].path);
		if (l > 4 && strcmp(F->extra_views[i].path + l - 4, ".din") == 0)
			return &F->extra_views[i];
	}
	return NULL;
}

START_TEST(test_din_render)
{
	const struct tm_view_desc *din = din_view();
	ck_assert_ptr_nonnull(din);
	ck_assert_str_eq(din->path, "convert/%s.din");

	/* memory references only */
	const char *memory[] = {"i_fetch",   "nc_i_fetch", "d_read",
				"nc_d_read", "write_back", "d_write"};
	uint64_t expected_mask = 0;
	for (size_t i = 0; i < 6; i++)
		expected_mask |= 1ull << class_index(memory[i]);
	ck_assert_uint_eq(din->class_mask, expected_mask);
	const char *excluded[] = {"io_read", "io_write", "special", "int_ack", "invalid"};
	for (size_t i = 0; i < 5; i++)
		ck_assert(!(din->class_mask >> class_index(excluded[i]) & 1));

	uint8_t raw[N_RECORD_ROWS * 6];
	struct byu_ref_decoded recs[N_RECORD_ROWS];
	for (size_t i = 0; i < N_RECORD_ROWS; i++)
		memcpy(raw + i * 6, record_rows[i].bytes, 6);
	struct tm_chunk c = chunk_of(raw, sizeof(raw), recs, N_RECORD_ROWS);
	unsigned rendered = 0;
	struct byu_ref_view model;
	ck_assert_int_eq(byu_ref_view_parse("convert/t.din", &model), 0);
	for (size_t i = 0; i < N_RECORD_ROWS; i++) {
		char expected[32], out[32];
		int len = (int)byu_ref_view_render(&model, record_rows[i].bytes, expected);
		if (!len)
			continue;
		memset(out, '#', sizeof(out));
		size_t n = din->ops->render(&c, i, out);
		ck_assert_uint_eq(n, (size_t)len);
		ck_assert_mem_eq(out, expected, (size_t)len);
		ck_assert_int_eq(out[len], '#');
		ck_assert_uint_eq(din->ops->measure(&c, i), (size_t)len);
		if (din->ops->fixed_len)
			ck_assert_uint_eq(din->ops->fixed_len(recs[i].head.cls), (size_t)len);
		rendered++;
	}
	ck_assert_uint_eq(rendered, 6);
}
END_TEST

START_TEST(test_probe)
{
	ck_assert_int_gt(tm_format_bid(F, "a.byu", NULL, 0), 0);
	ck_assert_int_gt(tm_format_bid(F, "trace.file.byu", NULL, 0), 0);
	const char *others[] = {"a.txt", "a.byu.txt", "byu", "abyu", "a.by", "a.byuu", "a_byu"};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		ck_assert_msg(tm_format_bid(F, others[i], NULL, 0) == 0, "%s scored", others[i]);
	/* six-byte records have no magic: content alone is no evidence */
	uint8_t head[60];
	for (size_t i = 0; i < 10; i++)
		byu_ref_put(head + i * 6, 0x1000 + 8 * (uint32_t)i, 0, 0x80);
	ck_assert_int_eq(tm_format_bid(F, "a.dat", head, sizeof(head)), 0);
	ck_assert_ptr_eq(tm_format_detect("x.byu", NULL, 0), F);
	ck_assert_ptr_null(tm_format_detect("x.dat", NULL, 0));
	ck_assert_ptr_eq(tm_format_find("byu"), F);
}
END_TEST

/* stats.json of a trace, parsed. */
struct built {
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix;
	json_object *root, *own;
};

static void build(struct built *b, const uint8_t *data, size_t len)
{
	mem_source_init(&b->src, data, len);
	ck_assert_int_eq(tm_view_table_init(&b->views, F, "s.byu"), 0);
	ck_assert_int_eq(tm_index_build(F, &b->views, &b->src.src, "dir/s.byu", NULL, NULL, &b->ix),
			 0);
	ck_assert_uint_gt(b->ix->stats_len, 0);
	ck_assert_int_eq(b->ix->stats_json[b->ix->stats_len - 1], '\n');
	/* stats.json is a sized buffer, not a C string */
	char *text = strndup(b->ix->stats_json, b->ix->stats_len);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(strlen(text), b->ix->stats_len);
	b->root = json_tokener_parse(text);
	ck_assert_msg(b->root != NULL, "stats.json does not parse: %s", text);
	free(text);
	ck_assert(json_object_object_get_ex(b->root, "byu", &b->own));
}

static void unbuild(struct built *b)
{
	json_object_put(b->root);
	tm_index_free(b->ix);
	tm_view_table_free(&b->views);
	mem_source_free(&b->src);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	ck_assert_msg(json_object_object_get_ex(o, key, &v), "no key %s", key);
	return v;
}

static int64_t get_int(json_object *o, const char *key)
{
	json_object *v = get(o, key);
	ck_assert_msg(json_object_is_type(v, json_type_int), "%s is not an integer", key);
	return json_object_get_int64(v);
}

/* Checks stats.json and errors.txt against the model's (byu_ref.c). */
static void check_stats(const uint8_t *data, size_t len)
{
	struct byu_ref_stats want;
	struct built b;

	byu_ref_stats(data, len, &want);
	build(&b, data, len);
	ck_assert_str_eq(json_object_get_string(get(b.root, "format")), "byu");
	ck_assert_str_eq(json_object_get_string(get(b.root, "source")), "dir/s.byu");
	ck_assert_int_eq(get_int(b.root, "bytes"), (int64_t)want.bytes);
	ck_assert_int_eq(get_int(b.root, "records"), (int64_t)want.records);
	ck_assert_int_eq(get_int(b.root, "errors"), (int64_t)want.errors);
	ck_assert(json_object_get_boolean(get(b.root, "truncated")) == want.truncated);
	json_object *cls = get(b.root, "classes");
	ck_assert_int_eq(json_object_object_length(cls), BYU_REF_N_CLASSES);
	for (unsigned c = 0; c < BYU_REF_N_CLASSES; c++)
		ck_assert_int_eq(get_int(cls, byu_ref_class(c)), (int64_t)want.classes[c]);
	ck_assert_int_eq(get_int(b.own, "memory_references"), (int64_t)want.memory_references);
	ck_assert_int_eq(get_int(b.own, "bytes_requested"), (int64_t)want.bytes_requested);
	ck_assert_int_eq(get_int(b.own, "distinct_lines_64b"), (int64_t)want.distinct_lines_64b);
	ck_assert_int_eq(get_int(b.own, "distinct_pages_4k"), (int64_t)want.distinct_pages_4k);
	if (want.have_addresses) {
		char addr[16];
		snprintf(addr, sizeof(addr), "0x%08x", want.address_min);
		ck_assert_str_eq(json_object_get_string(get(b.own, "address_min")), addr);
		snprintf(addr, sizeof(addr), "0x%08x", want.address_max);
		ck_assert_str_eq(json_object_get_string(get(b.own, "address_max")), addr);
	} else {
		ck_assert(json_object_is_type(get(b.own, "address_min"), json_type_null));
		ck_assert(json_object_is_type(get(b.own, "address_max"), json_type_null));
	}
	json_object *din = get(b.own, "din");
	ck_assert_int_eq(get_int(din, "fetches"), (int64_t)want.din_fetches);
	ck_assert_int_eq(get_int(din, "reads"), (int64_t)want.din_reads);
	ck_assert_int_eq(get_int(din, "writes"), (int64_t)want.din_writes);
	double fraction = json_object_get_double(get(b.own, "invalid_fraction"));
	ck_assert_msg(fraction - want.invalid_fraction < 5e-6 * want.invalid_fraction + 1e-12 &&
			  want.invalid_fraction - fraction < 5e-6 * want.invalid_fraction + 1e-12,
		      "invalid_fraction %g, expected %g", fraction, want.invalid_fraction);
	ck_assert(json_object_get_boolean(get(b.own, "probably_not_byu")) == want.probably_not_byu);
	/* the byte-enable histogram: one key per value seen, two lower-case hex digits */
	json_object *be = get(b.own, "byte_enables");
	unsigned keys = 0;
	for (unsigned v = 0; v < 256; v++) {
		char key[3];
		snprintf(key, sizeof(key), "%02x", v);
		json_object *o = NULL;
		if (!want.byte_enables[v]) {
			ck_assert_msg(!json_object_object_get_ex(be, key, &o), "key %s", key);
			continue;
		}
		ck_assert_int_eq(get_int(be, key), (int64_t)want.byte_enables[v]);
		keys++;
	}
	ck_assert_int_eq(json_object_object_length(be), (int)keys);
	size_t errors_len;
	char *errors = byu_ref_view("errors.txt", data, len, &errors_len);
	ck_assert_msg(b.ix->errors_len == errors_len &&
			  (!errors_len || memcmp(b.ix->errors_txt, errors, errors_len) == 0),
		      "errors.txt \"%.*s\", expected \"%s\"", (int)b.ix->errors_len,
		      b.ix->errors_txt, errors);
	free(errors);
	unbuild(&b);
}

START_TEST(test_stats_crafted)
{
	/* memory references marked *: 7 of them, 33 bytes requested, lines {0x40, 0x41, 0xc0,
	 * 0, 0x2000000}, pages {1, 3, 0, 0x80000} */
	static const struct {
		uint32_t addr;
		uint8_t be, control;
	} recs[] = {
	    {0x00001000, 0x00, 0x80}, /* * i_fetch, 8 bytes */
	    {0x00001004, 0x0f, 0xc0}, /* * d_read, 4 */
	    {0x00001040, 0xfe, 0xf0}, /* * d_write, 1 */
	    {0x00003000, 0xff, 0xe0}, /* * write_back, 0 */
	    {0x00000004, 0x00, 0x50}, /* io_read */
	    {0xfffffff0, 0x00, 0x70}, /* io_write */
	    {0x00000000, 0x55, 0x00}, /* invalid */
	    {0xffff0000, 0x55, 0x30}, /* special */
	    {0x00000008, 0xf0, 0x90}, /* * nc_i_fetch, 4 */
	    {0x80000000, 0x00, 0xd0}, /* * nc_d_read, 8 */
	    {0x00001000, 0x00, 0x8f}, /* * i_fetch, 8 */
	    {0x12345678, 0x00, 0x10}, /* int_ack */
	};
	uint8_t data[sizeof(recs) / sizeof(recs[0]) * 6 + 3];
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		byu_ref_put(data + i * 6, recs[i].addr, recs[i].be, recs[i].control);
	memset(data + sizeof(data) - 3, 0x11, 3);

	for (int trailing = 0; trailing <= 3; trailing += 3) {
		struct built b;
		size_t len = sizeof(data) - 3 + (size_t)trailing;
		build(&b, data, len);
		ck_assert_int_eq(get_int(b.root, "records"), 12);
		ck_assert_int_eq(get_int(b.root, "bytes"), (int64_t)len);
		ck_assert_int_eq(get_int(b.own, "memory_references"), 7);
		ck_assert_int_eq(get_int(b.own, "bytes_requested"), 33);
		ck_assert_str_eq(json_object_get_string(get(b.own, "address_min")), "0x00000008");
		ck_assert_str_eq(json_object_get_string(get(b.own, "address_max")), "0x80000000");
		ck_assert_int_eq(get_int(b.own, "distinct_lines_64b"), 5);
		ck_assert_int_eq(get_int(b.own, "distinct_pages_4k"), 4);
		json_object *be = get(b.own, "byte_enables");
		ck_assert_int_eq(get_int(be, "00"), 6);
		ck_assert_int_eq(get_int(be, "55"), 2);
		ck_assert_int_eq(get_int(be, "0f"), 1);
		ck_assert_int_eq(get_int(be, "f0"), 1);
		ck_assert_int_eq(get_int(be, "fe"), 1);
		ck_assert_int_eq(get_int(be, "ff"), 1);
		ck_assert_int_eq(json_object_object_length(be), 6);
		json_object *cls = get(b.root, "classes");
		ck_assert_int_eq(get_int(cls, "i_fetch"), 2);
		ck_assert_int_eq(get_int(cls, "int_ack"), 1);
		ck_assert_int_eq(get_int(cls, "invalid"), 1);
		ck_assert(!json_object_get_boolean(get(b.own, "probably_not_byu")));
		ck_assert(json_object_get_boolean(get(b.root, "truncated")) == (trailing != 0));
		ck_assert_int_eq(get_int(b.root, "errors"), trailing ? 1 : 0);
		ck_assert(b.ix->truncated == (trailing != 0));
		if (trailing) {
			ck_assert_uint_gt(b.ix->errors_len, 0);
			ck_assert(strncmp(b.ix->errors_txt, "offset 72: ", 11) == 0);
		} else {
			ck_assert_uint_eq(b.ix->errors_len, 0);
		}
		unbuild(&b);
		check_stats(data, len);
	}
}
END_TEST

START_TEST(test_stats_generated)
{
	size_t cr = F->chunk_records, n = 3 * cr + 5;
	uint8_t *data = byu_ref_gen(n, 4, 11, 5000);
	check_stats(data, n * 6 + 4);
	check_stats(data, 0);
	check_stats(data, 6);
	free(data);
}
END_TEST

/* A trace of n records of which `invalid` come first and are INVALID (other nibbles vary). */
static uint8_t *mostly_invalid(size_t n, size_t invalid)
{
	static const uint8_t bad[] = {0x00, 0x20, 0x40, 0x60, 0xa0, 0xb0};
	uint8_t *data = malloc(n * 6 + 1);
	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < n; i++)
		byu_ref_put(data + i * 6, (uint32_t)i * 64, 0,
			    i < invalid ? bad[i % sizeof(bad)] | (uint8_t)(i & 15) : 0xc0);
	return data;
}

static void check_suspect(size_t n, size_t invalid, bool suspect)
{
	uint8_t *data = mostly_invalid(n, invalid);
	struct built b;
	build(&b, data, n * 6);
	ck_assert_msg(json_object_get_boolean(get(b.own, "probably_not_byu")) == suspect,
		      "%zu of %zu invalid: probably_not_byu should be %d", invalid, n, suspect);
	ck_assert_int_eq(get_int(get(b.root, "classes"), "invalid"), (int64_t)invalid);
	/* a finding about the whole trace is a line without an offset */
	ck_assert_uint_eq(b.ix->n_errors, suspect ? 1 : 0);
	ck_assert_int_eq(get_int(b.root, "errors"), suspect ? 1 : 0);
	if (suspect) {
		ck_assert_uint_gt(b.ix->errors_len, 0);
		ck_assert(strncmp(b.ix->errors_txt, "offset", 6) != 0);
		ck_assert_int_eq(b.ix->errors_txt[b.ix->errors_len - 1], '\n');
	}
	unbuild(&b);
	check_stats(data, n * 6);
	free(data);
}

START_TEST(test_probably_not_byu)
{
	check_suspect(64, 64, true);
	check_suspect(63, 63, false);
	check_suspect(1000, 1000, true);
	check_suspect(1000, 0, false);
	check_suspect(1000, 500, false);
}
END_TEST

static Suite *byu_suite(void)
{
	Suite *s = suite_create("byu");
	TCase *tc = tcase_create("decode");
	tcase_add_test(tc, test_record_layout);
	tcase_add_test(tc, test_decode_records);
	tcase_add_test(tc, test_every_control_byte);
	tcase_add_loop_test(tc, test_decode_results, 0,
			    (int)(sizeof(result_rows) / sizeof(result_rows[0])));
	tcase_add_loop_test(tc, test_trailing_bytes, 1, 6);
	suite_add_tcase(s, tc);

	tc = tcase_create("render");
	tcase_add_test(tc, test_dump_render);
	tcase_add_test(tc, test_din_render);
	tcase_add_test(tc, test_probe);
	suite_add_tcase(s, tc);

	tc = tcase_create("stats");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_stats_crafted);
	tcase_add_test(tc, test_stats_generated);
	tcase_add_test(tc, test_probably_not_byu);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(byu_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
