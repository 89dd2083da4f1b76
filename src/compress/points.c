/* The point table of a compressed trace: spans, and the pieces readers take them in. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "tracemount/compress.h"

/* Decoders parked where a piece ended, for the next piece of their span: a reader that goes
 * on through a long span continues one instead of decompressing the span from its point
 * again. Few, since each holds a codec's whole window (up to 64 MiB for xz -9). */
#define PARKED 4

static struct parked {
	uint64_t serial;   /* of the point table; 0: a free slot */
	uint64_t span, at; /* where the decoder stands: span offset at */
	uint64_t used;	   /* when it was parked, for eviction */
	void *state;
	const struct tm_codec *codec;
} parked[PARKED];
static uint64_t parked_clock;
static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;

/* Takes out the decoder parked furthest into span k of ix not past skip, or NULL. */
static void *unpark(const struct tm_zindex *ix, uint64_t k, uint64_t skip)
{
	struct parked *best = NULL;
	void *state = NULL;
	pthread_mutex_lock(&parked_lock);
	for (struct parked *p = parked; p < parked + PARKED; p++)
		if (p->serial == ix->serial && p->span == k && p->at <= skip &&
		    (!best || p->at > best->at))
			best = p;
	if (best) {
		state = best->state;
		*best = (struct parked){0};
	}
	pthread_mutex_unlock(&parked_lock);
	return state;
}

/* Parks state at span offset at of span k of ix, in place of the oldest if all are taken. */
static void park(const struct tm_zindex *ix, uint64_t k, uint64_t at, void *state)
{
	struct parked *slot = parked, old = {0};
	pthread_mutex_lock(&parked_lock);
	for (struct parked *p = parked; p < parked + PARKED; p++)
		if (!p->serial || (slot->serial && p->used < slot->used))
			slot = p;
	old = *slot;
	*slot = (struct parked){ix->serial, k, at, ++parked_clock, state, ix->codec};
	pthread_mutex_unlock(&parked_lock);
	if (old.serial)
		old.codec->resume_free(old.state);
}

/* Frees the decoders parked in ix's spans. */
static void forget(const struct tm_zindex *ix)
{
	for (;;) {
		struct parked gone = {0};
		pthread_mutex_lock(&parked_lock);
		for (struct parked *p = parked; p < parked + PARKED && !gone.serial; p++)
			if (p->serial && p->serial == ix->serial) {
				gone = *p;
				*p = (struct parked){0};
			}
		pthread_mutex_unlock(&parked_lock);
		if (!gone.serial)
			return;
		gone.codec->resume_free(gone.state);
	}
}

int tm_z_decompress_piece(struct tm_source *file, const struct tm_zindex *ix, uint64_t p,
			  uint8_t *out, char *why, size_t why_len)
{
	uint64_t k = tm_zindex_span_of_piece(ix, p), start = tm_zindex_piece_start(ix, p);
	uint64_t skip = start - ix->points[k].out;
	size_t want = (size_t)(tm_zindex_piece_start(ix, p + 1) - start);
	const struct tm_codec *c = ix->codec;
	void *state = c->resume_free ? unpark(ix, k, skip) : NULL;
	int err = c->decompress_range(file, ix, k, skip, want, out, &state, why, why_len);
	if (!state)
		return err;
	if (!err && start + want < ix->points[k + 1].out)
		park(ix, k, skip + want, state);
	else
		c->resume_free(state);
	return err;
}

int tm_z_decompress_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			 uint8_t *out, char *why, size_t why_len)
{
	void *state = NULL;
	int err = ix->codec->decompress_range(file, ix, k, 0,
					      (size_t)(ix->points[k + 1].out - ix->points[k].out),
					      out, &state, why, why_len);
	if (state)
		ix->codec->resume_free(state);
	return err;
}

void tm_zindex_free(struct tm_zindex *ix)
{
	if (!ix)
		return;
	if (ix->serial && ix->codec && ix->codec->resume_free)
		forget(ix);
	free(ix->points);
	free(ix->windows);
	free(ix->first_piece);
	free(ix);
}

size_t tm_zindex_mem(const struct tm_zindex *ix)
{
	return sizeof(*ix) + (ix->n_points + 1) * (sizeof(*ix->points) + sizeof(uint64_t)) +
	       ix->windows_len;
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
