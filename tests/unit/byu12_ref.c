#define _GNU_SOURCE 1
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byu12_ref.h"

/* byutr.h's request codes, in order; the class of known[k] is k + 1. */
const uint8_t byu12_ref_known[17] = {0x00, 0x01, 0x02, 0x03, 0x10, 0x11, 0x20, 0x21, 0x22,
				     0x23, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37};

static const char *const class_names[BYU12_REF_N_CLASSES] = {
    "invalid",	"i_fetch",	  "d_read",  "d_read_inv",    "d_write",	"io_read",
    "io_write", "deferred_reply", "int_ack", "central_agent", "branch_trace",	"shutdown",
    "flush",	"halt",		  "sync",    "flush_ack",     "stop_clock_ack", "smi_ack"};

void byu12_ref_put(uint8_t *out, const struct byu12_ref_rec *r)
{
	for (int k = 0; k < 4; k++) {
		out[k] = (uint8_t)(r->addr >> (8 * k));
		out[8 + k] = (uint8_t)(r->time >> (8 * k));
	}
	out[4] = r->reqtype;
	out[5] = r->size;
	out[6] = r->attr;
	out[7] = r->proc;
}

void byu12_ref_get(const uint8_t *p, struct byu12_ref_rec *r)
{
	r->addr =
	    (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	r->time =
	    (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
	r->reqtype = p[4];
	r->size = p[5];
	r->attr = p[6];
	r->proc = p[7];
}

const char *byu12_ref_class(unsigned i)
{
	return i < BYU12_REF_N_CLASSES ? class_names[i] : NULL;
}

unsigned byu12_ref_class_of(uint8_t reqtype)
{
	for (unsigned k = 0; k < 17; k++)
		if (byu12_ref_known[k] == reqtype)
			return k + 1;
	return 0;
}

const char *byu12_ref_op(uint8_t reqtype, char *buf)
{
	const char *c = class_names[byu12_ref_class_of(reqtype)];
	size_t i;
	for (i = 0; c[i]; i++)
		buf[i] = (char)toupper((unsigned char)c[i]);
	buf[i] = '\0';
	return buf;
}

int byu12_ref_din_label(uint8_t reqtype)
{
	switch (reqtype) {
	case 0x00: return 2;
	case 0x01:
	case 0x02: return 0;
	case 0x03: return 1;
	default: return -1;
	}
}

size_t byu12_ref_dump_line(const uint8_t *rec, char *out)
{
	struct byu12_ref_rec r;
	char line[80], op[24];
	byu12_ref_get(rec, &r);
	int n = snprintf(line, sizeof(line), "%08x %02x %02x %02x %02x %08x %s\n", (unsigned)r.addr,
			 r.reqtype, r.size, r.attr, r.proc, (unsigned)r.time,
			 byu12_ref_op(r.reqtype, op));
	memcpy(out, line, (size_t)n);
	return (size_t)n;
}

/* Bytes of a compression suffix ending name: ".gz", ".xz", ".zst", or 0. */
static size_t suffix_len(const char *name)
{
	static const char *const suffixes[] = {".gz", ".xz", ".zst"};
	size_t n = strlen(name);
	for (size_t i = 0; i < 3; i++) {
		size_t s = strlen(suffixes[i]);
		if (n > s && strcmp(name + n - s, suffixes[i]) == 0)
			return s;
	}
	return 0;
}

/* NAME less its compression suffix and its last extension, as convert/NAME.din names it. */
static char *stem_of(const char *name)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	size_t n = strlen(base) - suffix_len(base);
	char *stem = strndup(base, n);
	char *dot = stem ? strrchr(stem, '.') : NULL;
	if (!stem)
		abort();
	if (dot && dot != stem)
		*dot = '\0';
	return stem;
}

static char *path_of(const char *fmt, const char *a, const char *b)
{
	char *p;
	if (asprintf(&p, fmt, a, b) < 0)
		abort();
	return p;
}

char **byu12_ref_view_paths(const char *name, const uint8_t *data, size_t len, size_t *n)
{
	char **v = malloc((5 + 2 * BYU12_REF_N_CLASSES + 64) * sizeof(*v));
	char *stem = stem_of(name);
	int procs[64] = {0};
	size_t k = 0;
	if (!v)
		abort();
	for (size_t i = 0; i < len / BYU12_REF_LEN; i++)
		if (data[i * BYU12_REF_LEN + 7] < 64)
			procs[data[i * BYU12_REF_LEN + 7]] = 1;
	v[k++] = path_of("%s%s", "raw", "");
	v[k++] = path_of("%s%s", "dump.txt", "");
	v[k++] = path_of("%s%s", "stats.json", "");
	v[k++] = path_of("%s%s", "errors.txt", "");
	for (unsigned c = 0; c < BYU12_REF_N_CLASSES; c++) {
		v[k++] = path_of("class/%s.%s", class_names[c], "txt");
		v[k++] = path_of("class/%s.%s", class_names[c], "byu12");
	}
	v[k++] = path_of("convert/%s%s", stem, ".din");
	for (unsigned p = 0; p < 64; p++) {
		char num[8];
		snprintf(num, sizeof(num), "%u", p);
		if (procs[p])
			v[k++] = path_of("cpu/%s%s", num, ".txt");
	}
	free(stem);
	*n = k;
	return v;
}

/* The class named by class/NAME.EXT, or -1. */
static int class_of_path(const char *path, const char *ext)
{
	size_t len = strlen(path), el = strlen(ext);
	if (strncmp(path, "class/", 6) != 0 || len <= 6 + el || strcmp(path + len - el, ext) != 0)
		return -1;
	for (unsigned c = 0; c < BYU12_REF_N_CLASSES; c++)
		if (strlen(class_names[c]) == len - 6 - el &&
		    strncmp(path + 6, class_names[c], len - 6 - el) == 0)
			return (int)c;
	return -1;
}

long byu12_ref_view_render(const char *path, const uint8_t *rec, char *out)
{
	char line[80];
	size_t n;
	int c;
	unsigned proc;
	char tail[16];
	struct byu12_ref_rec r;
	byu12_ref_get(rec, &r);

	if (strcmp(path, "dump.txt") == 0) {
		n = byu12_ref_dump_line(rec, line);
	} else if ((c = class_of_path(path, ".txt")) >= 0) {
		if (byu12_ref_class_of(r.reqtype) != (unsigned)c)
			return 0;
		n = byu12_ref_dump_line(rec, line);
	} else if ((c = class_of_path(path, ".byu12")) >= 0) {
		if (byu12_ref_class_of(r.reqtype) != (unsigned)c)
			return 0;
		if (out)
			memcpy(out, rec, BYU12_REF_LEN);
		return BYU12_REF_LEN;
	} else if (sscanf(path, "cpu/%u%15s", &proc, tail) == 2 && strcmp(tail, ".txt") == 0) {
		if (r.proc != proc)
			return 0;
		n = byu12_ref_dump_line(rec, line);
	} else if (strncmp(path, "convert/", 8) == 0 && strlen(path) > 12 &&
		   strcmp(path + strlen(path) - 4, ".din") == 0) {
		int label = byu12_ref_din_label(r.reqtype);
		if (label < 0)
			return 0;
		n = (size_t)snprintf(line, sizeof(line), "%d %08x\n", label, (unsigned)r.addr);
	} else {
		return -1;
	}
	if (out)
		memcpy(out, line, n);
	return (long)n;
}

static int named_byu(const char *name)
{
	size_t n = strlen(name) - suffix_len(name);
	return n > 4 && strncmp(name + n - 4, ".byu", 4) == 0;
}

/* errors.txt (doc/views.md's byu12 messages) in the order found: invalid request types and
 * the trailing partial record while decoding, then the note on a .byu name. */
static char *errors_txt(const char *name, const uint8_t *data, size_t len, size_t *out_len)
{
	char *text = NULL;
	size_t cap = 0, n = len / BYU12_REF_LEN;
	FILE *f = open_memstream(&text, &cap);
	if (!f)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!byu12_ref_class_of(data[i * BYU12_REF_LEN + 4]))
			fprintf(f, "offset %zu: invalid request type 0x%02x\n", i * BYU12_REF_LEN,
				data[i * BYU12_REF_LEN + 4]);
	if (len % BYU12_REF_LEN)
		fprintf(f, "offset %zu: trailing partial record: %zu of 12 bytes, not decoded\n",
			n * BYU12_REF_LEN, len % BYU12_REF_LEN);
	if (named_byu(name))
		fprintf(f, "named .byu, but its records are 12-byte BYU (p2AddrTr): decoded as "
			   "byu12\n");
	if (fclose(f))
		abort();
	*out_len = cap;
	return text;
}

char *byu12_ref_view(const char *path, const char *name, const uint8_t *data, size_t len,
		     size_t *out_len)
{
	if (strcmp(path, "errors.txt") == 0)
		return errors_txt(name, data, len, out_len);
	if (strcmp(path, "raw") == 0) {
		char *out = malloc(len + 1);
		if (!out)
			abort();
		memcpy(out, data, len);
		*out_len = len;
		return out;
	}
	size_t n = len / BYU12_REF_LEN, total = 0;
	for (size_t i = 0; i < n; i++) {
		long k = byu12_ref_view_render(path, data + i * BYU12_REF_LEN, NULL);
		if (k < 0) {
			fprintf(stderr, "byu12_ref_view: unknown view %s\n", path);
			abort();
		}
		total += (size_t)k;
	}
	char *out = malloc(total + 1);
	if (!out)
		abort();
	size_t pos = 0;
	for (size_t i = 0; i < n; i++)
		pos += (size_t)byu12_ref_view_render(path, data + i * BYU12_REF_LEN, out + pos);
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

void byu12_ref_stats(const char *name, const uint8_t *data, size_t len, struct byu12_ref_stats *s)
{
	size_t n = len / BYU12_REF_LEN, n_code = 0, n_data = 0;
	uint32_t *lines = malloc((n + 1) * sizeof(uint32_t)), *pages = malloc((n + 1) * 4),
		 *code = malloc((n + 1) * 4), *data_pages = malloc((n + 1) * 4);
	if (!lines || !pages || !code || !data_pages)
		abort();
	memset(s, 0, sizeof(*s));
	s->bytes = len;
	s->records = n;
	s->truncated = len % BYU12_REF_LEN != 0;
	for (size_t i = 0; i < n; i++) {
		struct byu12_ref_rec r;
		byu12_ref_get(data + i * BYU12_REF_LEN, &r);
		unsigned c = byu12_ref_class_of(r.reqtype);
		s->classes[c]++;
		s->errors += c == 0;
		s->processors[r.proc]++;
		if (i == 0 || r.time < s->time_min)
			s->time_min = r.time;
		if (i == 0 || r.time > s->time_max)
			s->time_max = r.time;
		if (i > 0) {
			struct byu12_ref_rec prev;
			byu12_ref_get(data + (i - 1) * BYU12_REF_LEN, &prev);
			s->time_decreases += r.time < prev.time;
		}
		switch (byu12_ref_din_label(r.reqtype)) {
		case -1: continue;
		case 2:
			s->din_fetches++;
			code[n_code++] = r.addr >> 12;
			break;
		case 0:
			s->din_reads++;
			data_pages[n_data++] = r.addr >> 12;
			break;
		default:
			s->din_writes++;
			data_pages[n_data++] = r.addr >> 12;
			break;
		}
		s->bytes_requested += r.size;
		if (!s->have_addresses || r.addr < s->address_min)
			s->address_min = r.addr;
		if (!s->have_addresses || r.addr > s->address_max)
			s->address_max = r.addr;
		s->have_addresses = 1;
		lines[s->memory_references] = r.addr >> 6;
		pages[s->memory_references] = r.addr >> 12;
		s->memory_references++;
	}
	s->distinct_lines_64b = distinct(lines, s->memory_references);
	s->distinct_pages_4k = distinct(pages, s->memory_references);
	s->code_pages_4k = distinct(code, n_code);
	s->data_pages_4k = distinct(data_pages, n_data);
	/* plots/: slices of 2^k records, k the least for which n records take at most 256 */
	unsigned k = 0;
	while (n > (size_t)256 << k)
		k++;
	s->plot_slice_records = 1ull << k;
	s->plot_slices = (n + s->plot_slice_records - 1) >> k;
	s->errors += (uint64_t)s->truncated + (uint64_t)named_byu(name);
	free(lines);
	free(pages);
	free(code);
	free(data_pages);
}

static void hex_or_null(FILE *out, const char *key, int have, uint32_t v)
{
	if (have)
		fprintf(out, "    \"%s\": \"0x%08x\",\n", key, (unsigned)v);
	else
		fprintf(out, "    \"%s\": null,\n", key);
}

void byu12_ref_stats_json(const struct byu12_ref_stats *s, const char *source, FILE *out)
{
	const char *sep = "";
	fprintf(out,
		"{\n  \"format\": \"byu12\",\n  \"source\": \"%s\",\n  \"bytes\": %" PRIu64
		",\n  \"records\": %" PRIu64 ",\n  \"classes\": {",
		source, s->bytes, s->records);
	for (unsigned c = 0; c < BYU12_REF_N_CLASSES; c++)
		fprintf(out, "%s\n    \"%s\": %" PRIu64, c ? "," : "", class_names[c],
			s->classes[c]);
	fprintf(out,
		"\n  },\n  \"errors\": %" PRIu64
		",\n  \"notes\": 0,\n  \"truncated\": %s,\n  \"byu12\": {\n"
		"    \"memory_references\": %" PRIu64 ",\n    \"processors\": {",
		s->errors, s->truncated ? "true" : "false", s->memory_references);
	for (unsigned p = 0; p < 256; p++) {
		if (!s->processors[p])
			continue;
		fprintf(out, "%s\n      \"%u\": %" PRIu64, sep, p, s->processors[p]);
		sep = ",";
	}
	fprintf(out, "%s},\n", *sep ? "\n    " : "");
	hex_or_null(out, "address_min", s->have_addresses, s->address_min);
	hex_or_null(out, "address_max", s->have_addresses, s->address_max);
	if (s->records)
		fprintf(out, "    \"time_min\": %u,\n    \"time_max\": %u,\n",
			(unsigned)s->time_min, (unsigned)s->time_max);
	else
		fprintf(out, "    \"time_min\": null,\n    \"time_max\": null,\n");
	fprintf(out,
		"    \"time_decreases\": %" PRIu64 ",\n    \"distinct_lines_64b\": %" PRIu64
		",\n    \"distinct_pages_4k\": %" PRIu64 ",\n    \"bytes_requested\": %" PRIu64
		",\n    \"din\": {\n      \"fetches\": %" PRIu64 ",\n      \"reads\": %" PRIu64
		",\n      \"writes\": %" PRIu64 "\n    }\n  },\n",
		s->time_decreases, s->distinct_lines_64b, s->distinct_pages_4k, s->bytes_requested,
		s->din_fetches, s->din_reads, s->din_writes);
	fprintf(out,
		"  \"plots\": {\n    \"slices\": %" PRIu64 ",\n    \"slice_records\": %" PRIu64
		",\n    \"accesses\": %" PRIu64 ",\n    \"code_pages_4k\": %" PRIu64
		",\n    \"data_pages_4k\": %" PRIu64 "\n  }\n}\n",
		s->plot_slices, s->plot_slice_records, s->memory_references, s->code_pages_4k,
		s->data_pages_4k);
}

int byu12_ref_plausible(const char *name, const uint8_t *head, size_t len)
{
	size_t n = len / BYU12_REF_LEN, invalid6 = 0;
	size_t nl = strlen(name);
	int named = (nl > 3 && strcmp(name + nl - 3, ".tr") == 0) ||
		    (nl > 4 && strcmp(name + nl - 4, ".byu") == 0);
	if (!named || n < 4)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t type = head[i * 12 + 4], size = head[i * 12 + 5];
		/* reqtypes 0 to 3 (fetch, read, read-invalidate, write) move at least a byte */
		if (!byu12_ref_class_of(type) || size > 64 || (type <= 3 && !size))
			return 0;
	}
	/* 6-byte BYU: control >> 4 of 0, 2, 4, 6, 10 and 11 is INVALID */
	for (size_t i = 0; i < 2 * n; i++) {
		unsigned nib = head[i * 6 + 5] >> 4;
		invalid6 += nib == 0 || nib == 2 || nib == 4 || nib == 6 || nib == 10 || nib == 11;
	}
	return invalid6 * 10 >= 2 * n * 9;
}
