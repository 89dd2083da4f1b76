/* Small helpers shared by the formats and the front ends. */
#ifndef TRACEMOUNT_UTIL_H
#define TRACEMOUNT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Elements of array a (an array, not a pointer: -Wsizeof-pointer-div, in -Wall, rejects one). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern const char tm_hex_digits[16];
extern const char tm_hex_pairs[256][2]; /* "00" .. "ff" */

#define TM_FNV_START 0xcbf29ce484222325ull

/* h, the FNV-1a hash so far (TM_FNV_START to begin), extended by p[0 .. n): the project's one
 * hash of keys and identities (index files, program images). */
static inline uint64_t tm_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* The last component of a path ("b" of "a/b"). */
static inline const char *tm_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Writes v as exactly `digits` lower-case hex digits (most significant first). */
static inline char *tm_put_hex(char *out, uint64_t v, unsigned digits)
{
	for (unsigned i = digits; i > 0; i--) {
		out[i - 1] = tm_hex_digits[v & 0xf];
		v >>= 4;
	}
	return out + digits;
}

/* The number of lower-case hex digits of v without leading zeros (1 for 0). */
static inline unsigned tm_hex_len(uint64_t v)
{
	return v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
}

/* Writes v as exactly 8 lower-case hex digits: the hot path of address columns. */
static inline char *tm_put_hex32(char *out, uint32_t v)
{
	for (int i = 3; i >= 0; i--) {
		out[2 * i] = tm_hex_pairs[v & 0xff][0];
		out[2 * i + 1] = tm_hex_pairs[v & 0xff][1];
		v >>= 8;
	}
	return out + 8;
}

/* Writes v as exactly 2 lower-case hex digits. */
static inline char *tm_put_hex8(char *out, uint8_t v)
{
	out[0] = tm_hex_pairs[v][0];
	out[1] = tm_hex_pairs[v][1];
	return out + 2;
}

/* The number of decimal digits of v. */
static inline unsigned tm_decimal_digits(uint64_t v)
{
	unsigned n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Writes v in decimal, right-aligned in width columns (more when it needs more digits). */
static inline char *tm_put_decimal(char *out, uint64_t v, unsigned width)
{
	unsigned n = tm_decimal_digits(v);
	for (; width > n; width--)
		*out++ = ' ';
	for (unsigned i = n; i > 0; i--) {
		out[i - 1] = (char)('0' + v % 10);
		v /= 10;
	}
	return out + n;
}

static inline uint32_t tm_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A file name as `ls -b` shows it, so that it fits a line of text and a JSON string: a
 * backslash doubled, tab, newline and carriage return as \t, \n, \r, any other control byte
 * and every byte that is not part of a valid UTF-8 sequence as \ooo (three octal digits); the
 * rest, valid UTF-8 included, as it is. Returns a malloc'ed string, or NULL (no memory). */
char *tm_escape_name(const char *name);

/* Whether name ends in "." plus one of extensions (NULL-terminated; NULL: none). The formats'
 * name bids use it; here, not in the registry, so that no format depends on the list of
 * formats. */
int tm_name_has_extension(const char *name, const char *const *extensions);

/* Parses a size such as "64M", "1G", "4096" (suffixes K, M, G, T, powers of 1024).
 * Returns 0 or -EINVAL. */
int tm_parse_size(const char *s, uint64_t *out);

/* The edit distance between a and b: the fewest insertions, deletions and substitutions of one
 * byte that turn a into b. Words longer than 63 bytes count as far from every other. */
unsigned tm_edit_distance(const char *a, const char *b);

/* Of the NULL-terminated candidates, the one nearest to word, for a "did you mean": NULL when
 * even the nearest needs more edits than a third of word's length (at least 1) allows. */
const char *tm_nearest(const char *word, const char *const *candidates);

#endif
