#define _GNU_SOURCE 1
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byu_ref.h"

const char *const byu_ref_op[16] = {
    "INVALID", "INT_ACK",    "INVALID", "SPECIAL", "INVALID", "IO_READ",   "INVALID",	 "IO_WRITE",
    "I_FETCH", "NC_I_FETCH", "INVALID", "INVALID", "D_READ",  "NC_D_READ", "WRITE_BACK", "D_WRITE",
};

void byu_ref_put(uint8_t *out, uint32_t addr, uint8_t be, uint8_t control)
{
	out[0] = (uint8_t)(addr >> 24);
	out[1] = (uint8_t)(addr >> 16);
	out[2] = (uint8_t)(addr >> 8);
	out[3] = (uint8_t)addr;
	out[4] = be;
	out[5] = control;
}

uint32_t byu_ref_addr(const uint8_t *rec)
{
	return (uint32_t)rec[0] << 24 | (uint32_t)rec[1] << 16 | (uint32_t)rec[2] << 8 | rec[3];
}

const char *byu_ref_class_name(uint8_t control, char *buf)
{
	const char *op = byu_ref_op[control >> 4];
	size_t i;
	for (i = 0; op[i]; i++)
		buf[i] = (char)tolower((unsigned char)op[i]);
	buf[i] = '\0';
	return buf;
}

const char *byu_ref_class(unsigned i)
{
	static const char *const names[BYU_REF_N_CLASSES] = {
	    "invalid",	  "int_ack", "special",	  "io_read",	"io_write", "i_fetch",
	    "nc_i_fetch", "d_read",  "nc_d_read", "write_back", "d_write"};
	return i < BYU_REF_N_CLASSES ? names[i] : NULL;
}

/* The index of the class of a control byte in byu_ref_class's order. */
static unsigned class_of(uint8_t control)
{
	char name[16];
	byu_ref_class_name(control, name);
	for (unsigned c = 0; c < BYU_REF_N_CLASSES; c++)
		if (strcmp(byu_ref_class(c), name) == 0)
			return c;
	abort(); /* the op table names only these */
}

int byu_ref_din_label(uint8_t control)
{
	switch (control >> 4) {
	case 8:
	case 9: return 2;
	case 12:
	case 13: return 0;
	case 14:
	case 15: return 1;
	default: return -1;
	}
}

size_t byu_ref_dump_line(const uint8_t *rec, char *out)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%08x %02x %s\n", (unsigned)byu_ref_addr(rec), rec[4],
			 byu_ref_op[rec[5] >> 4]);
	memcpy(out, line, (size_t)n);
	return (size_t)n;
}

/* NAME less its last extension, as convert/NAME.din names it. */
static char *stem_of(const char *name)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	const char *dot = strrchr(base, '.');
	size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	char *stem = strndup(base, n);
	if (!stem)
		abort();
	return stem;
}

static char *path_of(const char *fmt, const char *a, const char *b)
{
	char *p;
	if (asprintf(&p, fmt, a, b) < 0)
		abort();
	return p;
}

char **byu_ref_view_paths(const char *name, size_t *n)
{
	char **v = malloc((5 + 2 * BYU_REF_N_CLASSES) * sizeof(*v));
	char *stem = stem_of(name);
	size_t k = 0;
	if (!v)
		abort();
	v[k++] = path_of("%s%s", "raw", "");
	v[k++] = path_of("%s%s", "dump.txt", "");
	v[k++] = path_of("%s%s", "stats.json", "");
	v[k++] = path_of("%s%s", "errors.txt", "");
	for (unsigned c = 0; c < BYU_REF_N_CLASSES; c++) {
		v[k++] = path_of("class/%s.%s", byu_ref_class(c), "txt");
		v[k++] = path_of("class/%s.%s", byu_ref_class(c), "byu");
	}
	v[k++] = path_of("convert/%s%s", stem, ".din");
	free(stem);
	*n = k;
	return v;
}

int byu_ref_view_parse(const char *path, struct byu_ref_view *v)
{
	char name[64];
	size_t len = strlen(path);

	memset(v, 0, sizeof(*v));
	if (strcmp(path, "raw") == 0) {
		v->kind = BYU_REF_RAW;
		return 0;
	}
	if (strcmp(path, "dump.txt") == 0) {
		v->kind = BYU_REF_DUMP;
		return 0;
	}
	if (strncmp(path, "convert/", 8) == 0 && len > 12 && strcmp(path + len - 4, ".din") == 0) {
		v->kind = BYU_REF_DIN;
		return 0;
	}
	if (strncmp(path, "class/", 6) != 0 || len < 11)
		return -1;
	if (strcmp(path + len - 4, ".txt") == 0)
		v->kind = BYU_REF_CLASS_TXT;
	else if (strcmp(path + len - 4, ".byu") == 0)
		v->kind = BYU_REF_CLASS_BIN;
	else
		return -1;
	if (len - 10 >= sizeof(name))
		return -1;
	memcpy(name, path + 6, len - 10);
	name[len - 10] = '\0';
	for (unsigned n = 0; n < 16; n++) {
		char cls[16];
		if (strcmp(byu_ref_class_name((uint8_t)(n << 4), cls), name) == 0)
			v->nibbles |= 1u << n;
	}
	return v->nibbles ? 0 : -1;
}

size_t byu_ref_view_render(const struct byu_ref_view *v, const uint8_t *rec, char *out)
{
	char line[64];
	size_t n = 0;
	int label;

	switch (v->kind) {
	case BYU_REF_RAW:
	case BYU_REF_CLASS_BIN:
		if (v->kind == BYU_REF_CLASS_BIN && !(v->nibbles >> (rec[5] >> 4) & 1))
			return 0;
		if (out)
			memcpy(out, rec, BYU_REF_LEN);
		return BYU_REF_LEN;
	case BYU_REF_CLASS_TXT:
		if (!(v->nibbles >> (rec[5] >> 4) & 1))
			return 0;
		/* fall through */
	case BYU_REF_DUMP: n = byu_ref_dump_line(rec, line); break;
	case BYU_REF_DIN:
		label = byu_ref_din_label(rec[5]);
		if (label < 0)
			return 0;
		n = (size_t)snprintf(line, sizeof(line), "%d %08x\n", label,
				     (unsigned)byu_ref_addr(rec));
		break;
	}
	if (out)
		memcpy(out, line, n);
	return n;
}

int byu_ref_flagged(uint64_t records, uint64_t invalid)
{
	return records >= 64 && invalid * 10 >= records * 9;
}

/* errors.txt (doc/views.md's BYU messages), in the order found: the trailing partial record
 * while decoding, then the finding about the whole trace. */
static char *errors_txt(const uint8_t *data, size_t len, size_t *out_len)
{
	struct byu_ref_stats s;
	char *text = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&text, &cap);
	if (!f)
		abort();
	byu_ref_stats(data, len, &s);
	if (len % BYU_REF_LEN)
		fprintf(f, "offset %zu: trailing partial record: %zu of 6 bytes, not decoded\n",
			len / BYU_REF_LEN * BYU_REF_LEN, len % BYU_REF_LEN);
	if (s.probably_not_byu)
		fprintf(f,
			"%" PRIu64 " of %" PRIu64 " records are INVALID: probably not a 6-byte BYU "
			"trace (a 12-byte BYU trace, or another format?)\n",
			s.classes[0], s.records);
	if (fclose(f))
		abort();
	*out_len = cap;
	return text;
}

char *byu_ref_view(const char *path, const uint8_t *data, size_t len, size_t *out_len)
{
	struct byu_ref_view v;
	if (strcmp(path, "errors.txt") == 0)
		return errors_txt(data, len, out_len);
	if (byu_ref_view_parse(path, &v) < 0) {
		fprintf(stderr, "byu_ref_view: unknown view %s\n", path);
		abort();
	}
	if (v.kind == BYU_REF_RAW) {
		char *out = malloc(len + 1);
		if (!out)
			abort();
		memcpy(out, data, len);
		*out_len = len;
		return out;
	}
	size_t n = len / BYU_REF_LEN, total = 0;
	for (size_t i = 0; i < n; i++)
		total += byu_ref_view_render(&v, data + i * BYU_REF_LEN, NULL);
	char *out = malloc(total + 1);
	if (!out)
		abort();
	size_t pos = 0;
	for (size_t i = 0; i < n; i++)
		pos += byu_ref_view_render(&v, data + i * BYU_REF_LEN, out + pos);
	*out_len = pos;
	return out;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t distinct(uint32_t *v, size_t n)
{
	uint64_t d = 0;
	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		d += i == 0 || v[i] != v[i - 1];
	return d;
}

void byu_ref_stats(const uint8_t *data, size_t len, struct byu_ref_stats *s)
{
	size_t n = len / BYU_REF_LEN;
	uint32_t *lines = malloc((n + 1) * sizeof(*lines)),
		 *pages = malloc((n + 1) * sizeof(*pages)), *code = malloc((n + 1) * sizeof(*code)),
		 *data_pages = malloc((n + 1) * sizeof(*data_pages));
	size_t n_code = 0, n_data = 0;
	if (!lines || !pages || !code || !data_pages)
		abort();
	memset(s, 0, sizeof(*s));
	s->bytes = len;
	s->records = n;
	s->truncated = len % BYU_REF_LEN != 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = data + i * BYU_REF_LEN;
		uint32_t addr = byu_ref_addr(r);
		s->classes[class_of(r[5])]++;
		s->byte_enables[r[4]]++;
		switch (byu_ref_din_label(r[5])) {
		case -1: continue;
		case 2: s->din_fetches++; break;
		case 0: s->din_reads++; break;
		default: s->din_writes++; break;
		}
		if (byu_ref_din_label(r[5]) == 2)
			code[n_code++] = addr >> 12;
		else
			data_pages[n_data++] = addr >> 12;
		/* a clear bit requests that byte of the 8-byte bus */
		s->bytes_requested += 8 - (uint64_t)__builtin_popcount(r[4]);
		if (!s->have_addresses || addr < s->address_min)
			s->address_min = addr;
		if (!s->have_addresses || addr > s->address_max)
			s->address_max = addr;
		s->have_addresses = 1;
		lines[s->memory_references] = addr >> 6;
		pages[s->memory_references] = addr >> 12;
		s->memory_references++;
	}
	s->distinct_lines_64b = distinct(lines, s->memory_references);
	s->distinct_pages_4k = distinct(pages, s->memory_references);
	s->code_pages_4k = distinct(code, n_code);
	s->data_pages_4k = distinct(data_pages, n_data);
	/* slices of 2^k records, k the least for which n records take at most 256 */
	unsigned k = 0;
	while (n > (size_t)256 << k)
		k++;
	s->plot_slice_records = 1ull << k;
	s->plot_slices = (n + s->plot_slice_records - 1) >> k;
	s->invalid_fraction = n ? (double)s->classes[0] / (double)n : 0.0;
	s->probably_not_byu = byu_ref_flagged(n, s->classes[0]);
	s->errors = (uint64_t)s->truncated + (uint64_t)s->probably_not_byu;
	free(lines);
	free(pages);
	free(code);
	free(data_pages);
}

static void address_json(FILE *out, const char *key, int have, uint32_t addr)
{
	if (have)
		fprintf(out, "    \"%s\": \"0x%08x\",\n", key, (unsigned)addr);
	else
		fprintf(out, "    \"%s\": null,\n", key);
}

void byu_ref_stats_json(const struct byu_ref_stats *s, const char *source, FILE *out)
{
	const char *sep = "";
	fprintf(out,
		"{\n  \"format\": \"byu\",\n  \"source\": \"%s\",\n  \"bytes\": %" PRIu64
		",\n  \"records\": %" PRIu64 ",\n  \"classes\": {",
		source, s->bytes, s->records);
	for (unsigned c = 0; c < BYU_REF_N_CLASSES; c++)
		fprintf(out, "%s\n    \"%s\": %" PRIu64, c ? "," : "", byu_ref_class(c),
			s->classes[c]);
	fprintf(out,
		"\n  },\n  \"errors\": %" PRIu64
		",\n  \"notes\": 0,\n  \"truncated\": %s,\n  \"byu\": {\n"
		"    \"memory_references\": %" PRIu64 ",\n    \"byte_enables\": {",
		s->errors, s->truncated ? "true" : "false", s->memory_references);
	for (unsigned v = 0; v < 256; v++) {
		if (!s->byte_enables[v])
			continue;
		fprintf(out, "%s\n      \"%02x\": %" PRIu64, sep, v, s->byte_enables[v]);
		sep = ",";
	}
	fprintf(out, "\n    },\n");
	address_json(out, "address_min", s->have_addresses, s->address_min);
	address_json(out, "address_max", s->have_addresses, s->address_max);
	fprintf(out,
		"    \"distinct_lines_64b\": %" PRIu64 ",\n    \"distinct_pages_4k\": %" PRIu64
		",\n    \"bytes_requested\": %" PRIu64
		",\n    \"din\": {\n      \"fetches\": %" PRIu64 ",\n      \"reads\": %" PRIu64
		",\n      \"writes\": %" PRIu64
		"\n    },\n    \"invalid_fraction\": %.17g,\n    \"probably_not_byu\": %s\n  },\n",
		s->distinct_lines_64b, s->distinct_pages_4k, s->bytes_requested, s->din_fetches,
		s->din_reads, s->din_writes, s->invalid_fraction,
		s->probably_not_byu ? "true" : "false");
	fprintf(out,
		"  \"plots\": {\n    \"slices\": %" PRIu64 ",\n    \"slice_records\": %" PRIu64
		",\n    \"accesses\": %" PRIu64 ",\n    \"code_pages_4k\": %" PRIu64
		",\n    \"data_pages_4k\": %" PRIu64 "\n  }\n}\n",
		s->plot_slices, s->plot_slice_records, s->memory_references, s->code_pages_4k,
		s->data_pages_4k);
}

uint64_t byu_ref_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

uint8_t *byu_ref_gen(size_t n, size_t trailing, uint64_t seed, size_t rare_mod)
{
	/* control >> 4 of the common records: every value but INT_ACK (1) */
	static const uint8_t common[] = {8,  8, 8, 8, 12, 12, 12, 15, 15, 9, 13,
					 14, 5, 7, 3, 0,  2,  4,  6,  10, 11};
	uint8_t *data = malloc(n * BYU_REF_LEN + trailing + 1);
	uint64_t st = seed * 2 + 1;

	if (!data)
		abort();
	for (size_t i = 0; i < n; i++) {
		uint64_t r = byu_ref_rand(&st);
		uint8_t nib = common[(r >> 8) % sizeof(common)];
		if (rare_mod && i % rare_mod == 7)
			nib = 1;
		uint32_t addr = (r >> 60) < 4 ? (uint32_t)(r >> 16)
					      : 0x00100000u + (uint32_t)((r >> 20) % 0x40000);
		byu_ref_put(data + i * BYU_REF_LEN, addr, (uint8_t)(r >> 40),
			    (uint8_t)(nib << 4 | (r & 0xf)));
	}
	for (size_t i = 0; i < trailing; i++)
		data[n * BYU_REF_LEN + i] = (uint8_t)(0xa0 + i);
	return data;
}
