/* The CRC-32 that checks a piece's decompressed bytes against the index pass's (compress.h):
 * gzip's CRC-32, by ISA-L where the build has it (several times faster than zlib's), else
 * by zlib; the two give the same value. */
#ifndef TRACEMOUNT_COMPRESS_CRC_H
#define TRACEMOUNT_COMPRESS_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef TM_HAVE_ISAL
#include <isa-l/crc.h>
#else
#include <zlib.h>
#endif

/* crc continued over n bytes at p; 0 starts one. */
static inline uint32_t tm_zcrc(uint32_t crc, const uint8_t *p, size_t n)
{
#ifdef TM_HAVE_ISAL
	return crc32_gzip_refl(crc, p, n);
#else
	return (uint32_t)crc32_z(crc, p, n);
#endif
}

#endif
