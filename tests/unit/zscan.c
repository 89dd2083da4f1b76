/* Test data and whole scans of compressed files (zscan.h). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/diag.h"
#include "zscan.h"

uint8_t *zscan_data(size_t len, uint64_t seed)
{
	static const char *words[] = {"load ", "store ",  "branch ", "0x1f8b ", "r3, ",
				      "r12, ", "taken\n", "add ",    "\t",	"(sp)"};
	uint8_t *d = malloc(len ? len : 1);
	size_t i = 0;
	while (i < len) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		const char *w = words[seed % 10];
		for (size_t k = 0; w[k] && i < len; k++)
			d[i++] = (uint8_t)w[k];
		if (seed % 7 == 0 && i < len)
			d[i++] = (uint8_t)(seed >> 24);
	}
	return d;
}

struct scanned zscan(const struct tm_codec *c, struct mem_source *file, size_t step)
{
	struct scanned s = {0};
	struct tm_source src;
	struct tm_diag diag;
	size_t cap = 1 << 16;
	s.out = malloc(cap);
	ck_assert_int_eq(tm_z_scan_open(c, &file->src, &src), 0);
	for (;;) {
		if (s.len + step > cap)
			s.out = realloc(s.out, cap = cap * 2 + step);
		ssize_t n = tm_source_read(&src, s.out + s.len, step, s.len);
		ck_assert_int_ge(n, 0);
		s.len += (size_t)n;
		if ((size_t)n < step)
			break;
	}
	tm_diag_init(&diag);
	src.ops->report(&src, &diag);
	ck_assert_int_eq(tm_diag_finish(&diag), 0);
	s.report = strndup(diag.text ? diag.text : "", diag.len);
	tm_diag_free(&diag);
	ck_assert_int_eq(tm_z_scan_finish(&src, &s.ix), 0);
	tm_source_close(&src);
	return s;
}

void scanned_free(struct scanned *s)
{
	free(s->out);
	free(s->report);
	tm_zindex_free(s->ix);
}

void zscan_check_spans(struct mem_source *file, const struct scanned *s,
		       uint64_t (*min_len)(const struct tm_zpoint *next))
{
	const struct tm_zindex *ix = s->ix;
	ck_assert_uint_eq(ix->out_size, s->len);
	ck_assert_uint_eq(ix->points[0].out, 0);
	ck_assert_uint_eq(ix->points[ix->n_points].out, s->len);
	for (uint64_t k = 0; k < ix->n_points; k++) {
		const struct tm_zpoint *p = &ix->points[k];
		size_t len = (size_t)(ix->points[k + 1].out - p->out);
		if (k + 1 < ix->n_points)
			ck_assert_uint_ge(len, min_len(&ix->points[k + 1]));
		ck_assert_uint_le(p->bits, 7);
		uint8_t *buf = malloc(len + 1);
		char why[192] = "";
		ck_assert_msg(tm_z_decompress_span(&file->src, ix, k, buf, why, sizeof(why)) == 0,
			      "span %llu: %s", (unsigned long long)k, why);
		ck_assert_int_eq(memcmp(buf, s->out + p->out, len), 0);
		free(buf);
		ck_assert_uint_eq(tm_zindex_span_of(ix, p->out), k);
		if (len > 1)
			ck_assert_uint_eq(tm_zindex_span_of(ix, p->out + len - 1), k);
	}
}
