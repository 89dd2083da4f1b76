/* Gzip access points: detection, and decompressing one span from its point. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tracemount/gzip.h"

#define WINDOW_BYTES (32u << 10)
#define INPUT_BLOCK  (64u << 10)

bool tm_gz_detect(const char *name, const uint8_t *head, size_t head_len)
{
	if (head_len < 10 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 || head[3] & 0xe0)
		return false;
	size_t n = strlen(name);
	if (n > 3 && strcmp(name + n - 3, ".gz") == 0)
		return true;
	uint8_t probe[64];
	return tm_gz_inflate_head(head, head_len, probe, sizeof(probe)) > 0;
}

size_t tm_gz_inflate_head(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap)
{
	z_stream z = {0};
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return 0;
	z.next_in = (Bytef *)head;
	z.avail_in = (uInt)head_len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	/* a head cut from a longer stream ends early: what inflated before is kept */
	while (z.avail_out && inflate(&z, Z_SYNC_FLUSH) == Z_OK)
		;
	size_t n = cap - z.avail_out;
	inflateEnd(&z);
	return n;
}

void tm_gz_index_free(struct tm_gz_index *ix)
{
	if (!ix)
		return;
	free(ix->points);
	free(ix->windows);
	free(ix->first_piece);
	free(ix);
}

size_t tm_gz_index_mem(const struct tm_gz_index *ix)
{
	return sizeof(*ix) + (ix->n_points + 1) * (sizeof(*ix->points) + sizeof(uint64_t)) +
	       ix->windows_len;
}

uint64_t tm_gz_span_of(const struct tm_gz_index *ix, uint64_t off)
{
	uint64_t lo = 0, hi = ix->n_points; /* points[lo].out <= off < points[hi].out */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (ix->points[mid].out <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Inflates point p's stored window into the dictionary of z. */
static int set_window(z_stream *z, const struct tm_gz_index *ix, const struct tm_gz_point *p)
{
	uint8_t window[WINDOW_BYTES];
	z_stream w = {0};
	if (inflateInit2(&w, -15) != Z_OK)
		return -ENOMEM;
	w.next_in = ix->windows + p->window_off;
	w.avail_in = p->window_len;
	w.next_out = window;
	w.avail_out = sizeof(window);
	int ret = inflate(&w, Z_FINISH);
	size_t len = sizeof(window) - w.avail_out;
	inflateEnd(&w);
	if (ret != Z_STREAM_END)
		return -EIO;
	return inflateSetDictionary(z, window, (uInt)len) == Z_OK ? 0 : -EIO;
}

/* Sets z up to decompress from point p on: a new member reads its gzip header; inside a
 * member, a raw deflate stream starts with the point's leftover bits and window. */
static int start_at(z_stream *z, struct tm_source *file, const struct tm_gz_index *ix,
		    const struct tm_gz_point *p)
{
	if (p->flags & TM_GZ_MEMBER)
		return inflateInit2(z, 15 + 16) == Z_OK ? 0 : -ENOMEM;
	if (inflateInit2(z, -15) != Z_OK)
		return -ENOMEM;
	if (p->bits) {
		uint8_t byte;
		ssize_t n = tm_source_read(file, &byte, 1, p->in - 1);
		if (n != 1)
			return n < 0 ? (int)n : -EIO;
		inflatePrime(z, p->bits, byte >> (8 - p->bits));
	}
	return p->window_len ? set_window(z, ix, p) : 0;
}

int tm_gz_index_pieces(struct tm_gz_index *ix)
{
	free(ix->first_piece);
	if (!(ix->first_piece = malloc((ix->n_points + 1) * sizeof(*ix->first_piece))))
		return -ENOMEM;
	ix->first_piece[0] = 0;
	for (uint64_t k = 0; k < ix->n_points; k++) {
		uint64_t len = ix->points[k + 1].out - ix->points[k].out;
		ix->first_piece[k + 1] = ix->first_piece[k] + (len + TM_GZ_PIECE - 1) / TM_GZ_PIECE;
	}
	return 0;
}

uint64_t tm_gz_n_pieces(const struct tm_gz_index *ix)
{
	return ix->first_piece[ix->n_points];
}

uint64_t tm_gz_piece_of(const struct tm_gz_index *ix, uint64_t off)
{
	uint64_t k = tm_gz_span_of(ix, off);
	return ix->first_piece[k] + (off - ix->points[k].out) / TM_GZ_PIECE;
}

/* The span holding piece p. */
static uint64_t span_of_piece(const struct tm_gz_index *ix, uint64_t p)
{
	uint64_t lo = 0, hi = ix->n_points; /* first_piece[lo] <= p < first_piece[hi] */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (ix->first_piece[mid] <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t tm_gz_piece_start(const struct tm_gz_index *ix, uint64_t p)
{
	if (p >= tm_gz_n_pieces(ix))
		return ix->out_size;
	uint64_t k = span_of_piece(ix, p);
	return ix->points[k].out + (p - ix->first_piece[k]) * TM_GZ_PIECE;
}

/* Decompresses the bytes [skip, skip + want) of span k into out: those before are inflated
 * into a scratch buffer and dropped. */
static int inflate_range(struct tm_source *file, const struct tm_gz_index *ix, uint64_t k,
			 uint64_t skip, size_t want, uint8_t *out, char *why, size_t why_len)
{
	const struct tm_gz_point *p = &ix->points[k];
	size_t done = 0, trailer = 0;
	bool raw = !(p->flags & TM_GZ_MEMBER);
	uint64_t in_off = p->in;
	uint8_t *in = malloc(INPUT_BLOCK), *scratch = skip ? malloc(INPUT_BLOCK) : NULL;
	z_stream z = {0};
	int err = in && (scratch || !skip) ? start_at(&z, file, ix, p) : -ENOMEM;

	while (!err && done < want) {
		if (!z.avail_in) {
			ssize_t n = tm_source_read(file, in, INPUT_BLOCK, in_off);
			if (n <= 0) {
				err = n < 0 ? (int)n : -EIO;
				if (!n && why)
					snprintf(why, why_len, "the file ends at %" PRIu64, in_off);
				break;
			}
			in_off += (uint64_t)n;
			z.next_in = in;
			z.avail_in = (uInt)n;
		}
		if (trailer) { /* the trailer of a member entered in raw mode */
			size_t s = trailer < z.avail_in ? trailer : z.avail_in;
			z.next_in += s;
			z.avail_in -= (uInt)s;
			trailer -= s;
			continue;
		}
		size_t room =
		    skip ? (skip < INPUT_BLOCK ? (size_t)skip : INPUT_BLOCK) : want - done;
		z.next_out = skip ? scratch : out + done;
		z.avail_out = (uInt)room;
		int ret = inflate(&z, Z_NO_FLUSH);
		size_t got = room - z.avail_out;
		if (skip)
			skip -= got;
		else
			done += got;
		if (ret == Z_STREAM_END) {
			/* the next member: a raw stream has not read this one's 8-byte trailer */
			if (raw)
				trailer = 8;
			raw = false;
			if (inflateReset2(&z, 15 + 16) != Z_OK)
				err = -EIO;
		} else if (ret != Z_OK && ret != Z_BUF_ERROR && (skip || done < want)) {
			err = ret == Z_MEM_ERROR ? -ENOMEM : -EIO;
		} else if (ret == Z_BUF_ERROR && !got && z.avail_in) {
			err = -EIO; /* no progress with input to spare */
		}
		if (err && why)
			snprintf(why, why_len, "zlib: %s, in the bytes before %" PRIu64,
				 z.msg ? z.msg : zError(ret), in_off);
	}
	inflateEnd(&z);
	free(in);
	free(scratch);
	return err;
}

int tm_gz_inflate_piece(struct tm_source *file, const struct tm_gz_index *ix, uint64_t p,
			uint8_t *out, char *why, size_t why_len)
{
	uint64_t k = span_of_piece(ix, p), start = tm_gz_piece_start(ix, p);
	size_t len = (size_t)(tm_gz_piece_start(ix, p + 1) - start);
	return inflate_range(file, ix, k, start - ix->points[k].out, len, out, why, why_len);
}

int tm_gz_inflate_span(struct tm_source *file, const struct tm_gz_index *ix, uint64_t k,
		       uint8_t *out, char *why, size_t why_len)
{
	return inflate_range(file, ix, k, 0, (size_t)(ix->points[k + 1].out - ix->points[k].out),
			     out, why, why_len);
}
