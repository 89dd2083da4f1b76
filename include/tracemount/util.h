/* Small helpers shared by the formats and the front ends. */
#ifndef TRACEMOUNT_UTIL_H
#define TRACEMOUNT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define TM_VERSION "0.1.0"

extern const char tm_hex_digits[16];

/* Writes v as exactly `digits` lower-case hex digits (most significant first). */
static inline char *tm_put_hex(char *out, uint64_t v, unsigned digits)
{
	for (unsigned i = digits; i > 0; i--) {
		out[i - 1] = tm_hex_digits[v & 0xf];
		v >>= 4;
	}
	return out + digits;
}

static inline uint32_t tm_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Parses a size such as "64M", "1G", "4096" (suffixes K, M, G, T, powers of 1024).
 * Returns 0 or -EINVAL. */
int tm_parse_size(const char *s, uint64_t *out);

#endif
