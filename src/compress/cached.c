/* A compressed file's decompressed bytes read through the chunk cache, piece by piece
 * (compress.h): what a compressed trace and a compressed archive share. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "tracemount/chunk_cache.h"
#include "tracemount/compress.h"

struct piece_load {
	const struct tm_zcached *zc;
	uint64_t piece;
};

/* Decompresses one piece into c->bytes. */
static int decompress_piece(void *arg, struct tm_cached_chunk *c)
{
	const struct piece_load *a = arg;
	const struct tm_zindex *z = a->zc->z;
	size_t size =
	    (size_t)(tm_zindex_piece_start(z, a->piece + 1) - tm_zindex_piece_start(z, a->piece));
	if (!(c->bytes = tm_cached_chunk_malloc(c, size)))
		return -ENOMEM;
	c->len = size;
	char why[192] = "";
	int err =
	    tm_z_decompress_piece(a->zc->file, z, a->piece, (uint8_t *)c->bytes, why, sizeof(why));
	if (err && *why) { /* the index pass saw it whole: the file changed since */
		uint64_t off = tm_zindex_piece_start(z, a->piece);
		tm_log(a->zc->log, LOG_ERR, "%s: decompressing from offset %" PRIu64 ": %s",
		       a->zc->path, off, why);
		if (a->zc->changed)
			a->zc->changed(a->zc->arg, off, why);
	}
	return err;
}

int tm_zcached_piece(const struct tm_zcached *zc, uint64_t piece, struct tm_cached_chunk **out)
{
	struct piece_load arg = {zc, piece};
	return tm_chunk_cache_load(zc->cache, zc->owner, piece, decompress_piece, &arg, out);
}

ssize_t tm_zcached_read(const struct tm_zcached *zc, void *buf, size_t len, uint64_t off)
{
	const struct tm_zindex *z = zc->z;
	size_t done = 0;
	while (done < len && off + done < z->out_size) {
		uint64_t k = tm_zindex_piece_of(z, off + done);
		struct tm_cached_chunk *piece;
		int err = tm_zcached_piece(zc, k, &piece);
		if (err)
			return err;
		size_t in = (size_t)(off + done - tm_zindex_piece_start(z, k));
		size_t n = piece->len - in < len - done ? piece->len - in : len - done;
		memcpy((char *)buf + done, piece->bytes + in, n);
		done += n;
		tm_chunk_cache_release(zc->cache, piece);
	}
	return (ssize_t)done;
}
