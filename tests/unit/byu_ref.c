#include <ctype.h>
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

int byu_ref_class_index(uint8_t control)
{
	char name[16];
	byu_ref_class_name(control, name);
	for (unsigned c = 0; c < tm_format_byu.n_classes; c++)
		if (strcmp(tm_format_byu.classes[c], name) == 0)
			return (int)c;
	return -1;
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

char *byu_ref_view(const char *path, const uint8_t *data, size_t len, size_t *out_len)
{
	struct byu_ref_view v;
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

static void counting_init(void *state)
{
	*(uint64_t *)state = BYU_REF_COUNT_BASE;
}

static int counting_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			   size_t *n_out, size_t *used, struct tm_diag *diag)
{
	int ret = tm_format_byu.decode(NULL, in, recs, max, n_out, used, diag);
	struct byu_ref_decoded *r = recs;
	uint64_t *count = state;
	for (size_t i = 0; i < *n_out; i++)
		r[i].addr = (uint32_t)(*count)++;
	return ret;
}

const struct tm_format *byu_ref_counting(void)
{
	static struct tm_format counting;
	counting = tm_format_byu;
	counting.name = "byu_counting";
	counting.state_size = sizeof(uint64_t);
	counting.state_init = counting_init;
	counting.decode = counting_decode;
	return &counting;
}
