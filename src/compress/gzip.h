/* What gzip's two span readers share: zlib's (gzip.c) and ISA-L's (gzip_isal.c), which the
 * codec uses where the build found ISA-L. */
#ifndef TRACEMOUNT_COMPRESS_GZIP_H
#define TRACEMOUNT_COMPRESS_GZIP_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/compress.h"

#define TM_GZ_WINDOW_BYTES (32u << 10)
#define TM_GZ_INPUT_BLOCK  (64u << 10)
#define TM_GZ_TRAILER	   8u

/* Inflates point p's stored window into window (TM_GZ_WINDOW_BYTES); its length in *len.
 * Returns 0 or -EIO. */
int tm_gz_point_window(const struct tm_zindex *ix, const struct tm_zpoint *p, uint8_t *window,
		       size_t *len);

/* The p->bits bits of the byte before p->in that the point's block starts with, as the low
 * bits of *value. Returns 0 or -errno. */
int tm_gz_point_bits(struct tm_source *file, const struct tm_zpoint *p, unsigned *value);

int tm_gz_isal_open_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			 void **dec);
int tm_gz_isal_read(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
		    char *why, size_t why_len);
void tm_gz_isal_close(void *dec);

#endif
