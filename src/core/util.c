#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/util.h"

const char tm_hex_digits[16] = "0123456789abcdef";

#define HEX_ROW(h)                                                                                 \
	{h, '0'}, {h, '1'}, {h, '2'}, {h, '3'}, {h, '4'}, {h, '5'}, {h, '6'}, {h, '7'}, {h, '8'},  \
	    {h, '9'}, {h, 'a'}, {h, 'b'}, {h, 'c'}, {h, 'd'}, {h, 'e'},                            \
	{                                                                                          \
		h, 'f'                                                                             \
	}
const char tm_hex_pairs[256][2] = {
    HEX_ROW('0'), HEX_ROW('1'), HEX_ROW('2'), HEX_ROW('3'), HEX_ROW('4'), HEX_ROW('5'),
    HEX_ROW('6'), HEX_ROW('7'), HEX_ROW('8'), HEX_ROW('9'), HEX_ROW('a'), HEX_ROW('b'),
    HEX_ROW('c'), HEX_ROW('d'), HEX_ROW('e'), HEX_ROW('f'),
};

int tm_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

unsigned tm_edit_distance(const char *a, const char *b)
{
	enum { MAX_LEN = 63 };
	size_t na = strlen(a), nb = strlen(b);
	if (na > MAX_LEN || nb > MAX_LEN)
		return strcmp(a, b) ? UINT_MAX : 0;
	unsigned row[MAX_LEN + 1]; /* the distances of a[0..i) to each prefix of b */
	for (size_t j = 0; j <= nb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		unsigned diagonal = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= nb; j++) {
			unsigned best = diagonal + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diagonal = row[j];
			row[j] = best;
		}
	}
	return row[nb];
}

const char *tm_nearest(const char *word, const char *const *candidates)
{
	size_t len = strlen(word);
	unsigned allowed = len >= 6 ? (unsigned)(len / 3) : 1, best = UINT_MAX;
	const char *nearest = NULL;
	for (; *candidates; candidates++) {
		unsigned d = tm_edit_distance(word, *candidates);
		if (d < best) {
			best = d;
			nearest = *candidates;
		}
	}
	return best <= allowed ? nearest : NULL;
}

/* The length of the valid UTF-8 sequence at p (up to end), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;
	if (!n || (size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	uint32_t c = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++)
		c = c << 6 | (p[i] & 0x3f);
	bool overlong = (n == 3 && c < 0x800) || (n == 4 && c < 0x10000);
	return overlong || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff ? 0 : n;
}

char *tm_escape_name(const char *name)
{
	size_t len = strlen(name);
	char *out = malloc(4 * len + 1), *o = out;
	const unsigned char *p = (const unsigned char *)name, *end = p + len;
	if (!out)
		return NULL;
	while (p < end) {
		size_t n = *p >= 0x80 ? utf8_len(p, end) : 1;
		if (*p == '\\' || *p == '\t' || *p == '\n' || *p == '\r') {
			*o++ = '\\';
			*o++ = *p == '\\' ? '\\' : *p == '\t' ? 't' : *p == '\n' ? 'n' : 'r';
			p++;
		} else if (!n || *p < 0x20 || *p == 0x7f) {
			o += sprintf(o, "\\%03o", *p++);
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
	return out;
}

int tm_name_has_extension(const char *name, const char *const *extensions)
{
	size_t n = strlen(name);
	for (const char *const *e = extensions; e && *e; e++) {
		size_t el = strlen(*e);
		if (n > el && name[n - el - 1] == '.' && strncmp(name + n - el, *e, el) == 0)
			return 1;
	}
	return 0;
}
