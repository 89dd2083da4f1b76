/* The point table of a compressed trace: spans, and the pieces readers take them in. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "tracemount/compress.h"
#include "crc.h"

/* Decoders parked where a piece ended, for the next piece of their span: a reader that goes
 * on through a long span continues one instead of decompressing the span from its point
 * again. Few, since each holds a codec's whole window (up to 64 MiB for xz -9). */
#define PARKED 4

struct decoder {
	void *dec;   /* the codec's */
	uint64_t at; /* span offset of its next byte */
	bool spent;  /* it failed past the bytes it gave: they are right, the next are not */
};

static struct parked {
	uint64_t serial; /* of the point table; 0: a free slot */
	uint64_t span;
	uint64_t used; /* when it was parked, for eviction */
	struct decoder d;
	const struct tm_codec *codec;
} parked[PARKED];
static uint64_t parked_clock;
static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;

/* Takes out the decoder parked furthest into span k of ix not past skip, if any. */
static struct decoder unpark(const struct tm_zindex *ix, uint64_t k, uint64_t skip)
{
	struct parked *best = NULL;
	struct decoder d = {0};
	pthread_mutex_lock(&parked_lock);
	for (struct parked *p = parked; p < parked + PARKED; p++)
		if (p->serial == ix->serial && p->span == k && p->d.at <= skip &&
		    (!best || p->d.at > best->d.at))
			best = p;
	if (best) {
		d = best->d;
		*best = (struct parked){0};
	}
	pthread_mutex_unlock(&parked_lock);
	return d;
}

/* Parks d in span k of ix, in place of the oldest if all are taken. */
static void park(const struct tm_zindex *ix, uint64_t k, struct decoder d)
{
	struct parked *slot = parked, old;
	pthread_mutex_lock(&parked_lock);
	for (struct parked *p = parked; p < parked + PARKED; p++)
		if (!p->serial || (slot->serial && p->used < slot->used))
			slot = p;
	old = *slot;
	*slot = (struct parked){ix->serial, k, ++parked_clock, d, ix->codec};
	pthread_mutex_unlock(&parked_lock);
	if (old.serial)
		old.codec->close(old.d.dec);
}

/* Frees the decoders parked in ix's spans. */
static void forget(const struct tm_zindex *ix)
{
	for (;;) {
		struct parked gone = {0};
		pthread_mutex_lock(&parked_lock);
		for (struct parked *p = parked; p < parked + PARKED && !gone.serial; p++)
			if (p->serial == ix->serial) {
				gone = *p;
				*p = (struct parked){0};
			}
		pthread_mutex_unlock(&parked_lock);
		if (!gone.serial)
			return;
		gone.codec->close(gone.d.dec);
	}
}

/* Reads exactly cap bytes from d into out, or fails: a short read means the data ends before
 * the index says it does. */
static int read_exactly(const struct tm_codec *c, struct decoder *d, struct tm_source *file,
			uint8_t *out, size_t cap, char *why, size_t why_len)
{
	size_t got = 0;
	if (d->spent)
		return -EIO;
	int err = c->read(d->dec, file, out, cap, &got, why, why_len);
	d->at += got;
	if (err && got == cap) {
		d->spent = true; /* the error is the next bytes': they are not asked for here */
		err = 0;
	} else if (!err && got < cap) {
		if (why)
			snprintf(why, why_len, "%s: the data ends %zu bytes early", c->name,
				 cap - got);
		err = -EIO;
	}
	return err;
}

/* Decompresses the bytes [skip, skip + want) of span k into out, with d's decoder or a new
 * one, which it leaves in d (or NULL when it failed). */
static int decompress_range(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			    uint64_t skip, size_t want, uint8_t *out, struct decoder *d, char *why,
			    size_t why_len)
{
	const struct tm_codec *c = ix->codec;
	int err = 0;
	if (!d->dec) {
		d->at = 0;
		if ((err = c->open_span(file, ix, k, &d->dec)) < 0)
			return err;
	}
	uint8_t scratch[16384]; /* the bytes before the range, decompressed and dropped */
	while (!err && d->at < skip) {
		uint64_t n = skip - d->at;
		err = read_exactly(c, d, file, scratch, n < sizeof(scratch) ? n : sizeof(scratch),
				   why, why_len);
	}
	if (!err)
		err = read_exactly(c, d, file, out, want, why, why_len);
	/* finished even when spent: the read that gave the span's last bytes may have met the
	 * failed check that covers them (xz reads a block's check with its last bytes) */
	if (!err && c->finish && d->at == ix->points[k + 1].out - ix->points[k].out)
		err = c->finish(d->dec, file, ix, k, why, why_len);
	if (err) {
		c->close(d->dec);
		d->dec = NULL;
	}
	return err;
}

/* Whether piece p's bytes, decompressed into out, are those the index pass saw: 0, or -EIO
 * with the reason in why. */
static int check_piece(const struct tm_zindex *ix, uint64_t p, const uint8_t *out, char *why,
		       size_t why_len)
{
	uint64_t start = tm_zindex_piece_start(ix, p);
	size_t len = (size_t)(tm_zindex_piece_start(ix, p + 1) - start);
	uint32_t crc = tm_zcrc(0, out, len);
	if (crc == ix->piece_crcs[p])
		return 0;
	if (why)
		snprintf(why, why_len,
			 "%s: the %zu bytes decompressed from offset %" PRIu64
			 " have CRC-32 %08" PRIx32 ", not the index pass's %08" PRIx32
			 ": the compressed bytes changed since the trace was indexed",
			 ix->codec->name, len, start, crc, ix->piece_crcs[p]);
	return -EIO;
}

int tm_z_decompress_piece(struct tm_source *file, const struct tm_zindex *ix, uint64_t p,
			  uint8_t *out, char *why, size_t why_len)
{
	uint64_t k = tm_zindex_span_of_piece(ix, p), start = tm_zindex_piece_start(ix, p);
	uint64_t skip = start - ix->points[k].out;
	size_t want = (size_t)(tm_zindex_piece_start(ix, p + 1) - start);
	struct decoder d = unpark(ix, k, skip);
	int err = decompress_range(file, ix, k, skip, want, out, &d, why, why_len);
	if (!err)
		err = check_piece(ix, p, out, why, why_len);
	if (!d.dec)
		return err;
	if (err) /* its state came from bytes that are not the indexed ones */
		ix->codec->close(d.dec);
	else if (start + want < ix->points[k + 1].out && !d.spent)
		park(ix, k, d);
	else
		ix->codec->close(d.dec);
	return err;
}

int tm_z_decompress_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			 uint8_t *out, char *why, size_t why_len)
{
	struct decoder d = {0};
	int err =
	    decompress_range(file, ix, k, 0, (size_t)(ix->points[k + 1].out - ix->points[k].out),
			     out, &d, why, why_len);
	if (d.dec)
		ix->codec->close(d.dec);
	for (uint64_t p = ix->first_piece[k]; !err && p < ix->first_piece[k + 1]; p++)
		err = check_piece(ix, p, out + (tm_zindex_piece_start(ix, p) - ix->points[k].out),
				  why, why_len);
	return err;
}

void tm_zindex_free(struct tm_zindex *ix)
{
	if (!ix)
		return;
	if (ix->serial)
		forget(ix);
	free(ix->points);
	free(ix->windows);
	free(ix->first_piece);
	free(ix->piece_crcs);
	free(ix);
}

size_t tm_zindex_mem(const struct tm_zindex *ix)
{
	return sizeof(*ix) + (ix->n_points + 1) * (sizeof(*ix->points) + sizeof(uint64_t)) +
	       ix->windows_len + ix->n_piece_crcs * sizeof(*ix->piece_crcs);
}

uint64_t tm_zindex_span_of(const struct tm_zindex *ix, uint64_t off)
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

int tm_zindex_pieces(struct tm_zindex *ix)
{
	static _Atomic uint64_t serials;
	free(ix->first_piece);
	if (!(ix->first_piece = malloc((ix->n_points + 1) * sizeof(*ix->first_piece))))
		return -ENOMEM;
	ix->first_piece[0] = 0;
	for (uint64_t k = 0; k < ix->n_points; k++) {
		uint64_t len = ix->points[k + 1].out - ix->points[k].out;
		ix->first_piece[k + 1] = ix->first_piece[k] + (len + TM_Z_PIECE - 1) / TM_Z_PIECE;
	}
	ix->serial = atomic_fetch_add(&serials, 1) + 1;
	return 0;
}

uint64_t tm_zindex_n_pieces(const struct tm_zindex *ix)
{
	return ix->first_piece[ix->n_points];
}

uint64_t tm_zindex_piece_of(const struct tm_zindex *ix, uint64_t off)
{
	uint64_t k = tm_zindex_span_of(ix, off);
	return ix->first_piece[k] + (off - ix->points[k].out) / TM_Z_PIECE;
}

/* The span holding piece p. */
uint64_t tm_zindex_span_of_piece(const struct tm_zindex *ix, uint64_t p)
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

uint64_t tm_zindex_piece_start(const struct tm_zindex *ix, uint64_t p)
{
	if (p >= tm_zindex_n_pieces(ix))
		return ix->out_size;
	uint64_t k = tm_zindex_span_of_piece(ix, p);
	return ix->points[k].out + (p - ix->first_piece[k]) * TM_Z_PIECE;
}

const char *tm_zindex_check(const struct tm_zindex *z, uint64_t file_size)
{
	if (!z->n_points || z->points[0].out != 0 || z->points[z->n_points].out != z->out_size)
		return "access points do not cover the data";
	uint64_t pieces = 0;
	for (uint64_t k = 0; k <= z->n_points; k++) {
		const struct tm_zpoint *p = &z->points[k];
		if (p->in > z->in_size || p->bits > 7 || p->window_off > z->windows_len ||
		    p->window_len > z->windows_len - p->window_off ||
		    (k && (p->out < p[-1].out || p->in < p[-1].in)))
			return "access points out of order";
		if (k)
			pieces += (p->out - p[-1].out + TM_Z_PIECE - 1) / TM_Z_PIECE;
	}
	if (pieces != z->n_piece_crcs)
		return "piece checksums do not match the access points";
	return z->in_size > file_size ? "compressed data past the file's end" : NULL;
}
