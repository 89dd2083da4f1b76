/* The index pass over a compressed file: a thread runs the codec's scan op, which fills a
 * ring of blocks that the pass reads in order as a source, and builds the point table. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/diag.h"
#include "crc.h"
#include "scan.h"

#define BLOCK_BYTES (256u << 10)
#define RING	    8

struct tm_zscan_ring {
	const struct tm_codec *codec;
	pthread_t thread;
	int started;

	pthread_mutex_t lock; /* guards the ring's counters and the flags below */
	pthread_cond_t filled, drained;
	uint8_t *blocks[RING];
	size_t fill[RING];
	unsigned head, count; /* the oldest filled block, and how many there are */
	int done, stop;
	int err; /* an I/O error or no memory: the pass fails */

	/* the reader's side */
	uint64_t read_pos;
	size_t block_pos;

	/* the decompressing thread's side; read by others once it has finished */
	uint8_t *block; /* being filled, or NULL */
	size_t block_len;
	struct tm_zindex *ix;
	uint64_t points_cap, last_point;
	size_t windows_cap;
	/* the piece being checksummed: its start and its CRC so far; the array's room */
	uint64_t piece_start, crcs_cap;
	uint32_t piece_crc;
	int crc_err; /* -ENOMEM: a CRC could not be kept */
};

struct scan {
	struct tm_zscan pub;
	struct tm_zscan_ring ring;
	char said[400]; /* tm_z_scan_say's */
};

static struct scan *scan_of(struct tm_source *s)
{
	return s->priv;
}

uint64_t tm_zscan_since_point(const struct tm_zscan *sc)
{
	return sc->out_pos - sc->ring->last_point;
}

static int grow_points(struct tm_zscan_ring *r, uint64_t need)
{
	if (need <= r->points_cap)
		return 0;
	uint64_t cap = r->points_cap ? r->points_cap * 2 : 256;
	struct tm_zpoint *p = realloc(r->ix->points, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	r->ix->points = p;
	r->points_cap = cap;
	return 0;
}

/* Ends the piece being checksummed at out_pos, when it has bytes: a piece ends where the
 * next starts, TM_Z_PIECE bytes into its span or at the next point (tm_zindex_pieces). */
static void end_piece(struct tm_zscan_ring *r, uint64_t out_pos)
{
	struct tm_zindex *ix = r->ix;
	if (out_pos == r->piece_start)
		return;
	if (ix->n_piece_crcs == r->crcs_cap) {
		uint64_t cap = r->crcs_cap ? r->crcs_cap * 2 : 256;
		uint32_t *c = realloc(ix->piece_crcs, cap * sizeof(*c));
		if (!c) {
			r->crc_err = -ENOMEM;
			return;
		}
		ix->piece_crcs = c;
		r->crcs_cap = cap;
	}
	ix->piece_crcs[ix->n_piece_crcs++] = r->piece_crc;
	r->piece_start = out_pos;
	r->piece_crc = 0;
}

/* Checksums the n bytes at p, which start at decompressed offset at, piece by piece. */
static void checksum(struct tm_zscan_ring *r, uint64_t at, const uint8_t *p, size_t n)
{
	while (n) {
		uint64_t end = r->piece_start + TM_Z_PIECE;
		size_t take = end - at < n ? (size_t)(end - at) : n;
		r->piece_crc = tm_zcrc(r->piece_crc, p, take);
		p += take;
		n -= take;
		at += take;
		if (at == end)
			end_piece(r, end);
	}
}

int tm_zscan_add_point(struct tm_zscan *sc, uint64_t in, unsigned bits, unsigned flags,
		       unsigned check, const uint8_t *window, size_t window_len)
{
	struct tm_zscan_ring *r = sc->ring;
	struct tm_zindex *ix = r->ix;
	end_piece(r, sc->out_pos);
	if (grow_points(r, ix->n_points + 2) < 0)
		return -ENOMEM;
	if (ix->windows_len + window_len > r->windows_cap) {
		size_t cap = r->windows_cap * 2 + window_len;
		uint8_t *w = realloc(ix->windows, cap);
		if (!w)
			return -ENOMEM;
		ix->windows = w;
		r->windows_cap = cap;
	}
	if (window_len)
		memcpy(ix->windows + ix->windows_len, window, window_len);
	ix->points[ix->n_points++] = (struct tm_zpoint){
	    .out = sc->out_pos,
	    .in = in,
	    .window_off = ix->windows_len,
	    .window_len = (uint32_t)window_len,
	    .bits = (uint8_t)bits,
	    .flags = (uint8_t)flags,
	    .check = (uint16_t)check,
	};
	ix->windows_len += window_len;
	r->last_point = sc->out_pos;
	return 0;
}

int tm_zscan_room(struct tm_zscan *sc, uint8_t **out, size_t *room)
{
	struct tm_zscan_ring *r = sc->ring;
	if (!r->block) {
		pthread_mutex_lock(&r->lock);
		while (r->count == RING && !r->stop)
			pthread_cond_wait(&r->drained, &r->lock);
		r->block = r->stop ? NULL : r->blocks[(r->head + r->count) % RING];
		pthread_mutex_unlock(&r->lock);
		if (!r->block)
			return 1;
		r->block_len = 0;
	}
	*out = r->block + r->block_len;
	*room = BLOCK_BYTES - r->block_len;
	return 0;
}

static void publish(struct tm_zscan_ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->fill[(r->head + r->count) % RING] = r->block_len;
	r->count++;
	pthread_cond_signal(&r->filled);
	pthread_mutex_unlock(&r->lock);
	r->block = NULL;
}

void tm_zscan_commit(struct tm_zscan *sc, size_t made)
{
	struct tm_zscan_ring *r = sc->ring;
	checksum(r, sc->out_pos, r->block + r->block_len, made);
	r->block_len += made;
	sc->out_pos += made;
	if (r->block_len == BLOCK_BYTES)
		publish(r);
}

static void *scan_thread(void *arg)
{
	struct scan *s = arg;
	struct tm_zscan_ring *r = &s->ring;
	int err = r->codec->scan(&s->pub);
	if (r->block && r->block_len)
		publish(r);
	pthread_mutex_lock(&r->lock);
	r->err = err;
	r->done = 1;
	pthread_cond_signal(&r->filled);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static ssize_t scan_read(struct tm_source *src, void *buf, size_t len, uint64_t off)
{
	struct tm_zscan_ring *r = &scan_of(src)->ring;
	size_t done = 0;
	if (off != r->read_pos)
		return -ESPIPE;
	while (done < len) {
		pthread_mutex_lock(&r->lock);
		while (!r->count && !r->done)
			pthread_cond_wait(&r->filled, &r->lock);
		int err = r->err;
		unsigned count = r->count, head = r->head;
		pthread_mutex_unlock(&r->lock);
		if (!count) {
			if (err)
				return err;
			break; /* the end of the data */
		}
		/* the decompressing thread leaves filled blocks alone */
		size_t n = r->fill[head] - r->block_pos;
		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, r->blocks[head] + r->block_pos, n);
		done += n;
		r->block_pos += n;
		if (r->block_pos == r->fill[head]) {
			r->block_pos = 0;
			pthread_mutex_lock(&r->lock);
			r->head = (r->head + 1) % RING;
			r->count--;
			pthread_cond_signal(&r->drained);
			pthread_mutex_unlock(&r->lock);
		}
	}
	r->read_pos += done;
	return (ssize_t)done;
}

static void scan_stop(struct tm_zscan_ring *r)
{
	if (!r->started)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_signal(&r->drained);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	r->started = 0;
}

static void scan_close(struct tm_source *src)
{
	struct scan *s = scan_of(src);
	if (!s)
		return;
	struct tm_zscan_ring *r = &s->ring;
	scan_stop(r);
	for (unsigned i = 0; i < RING; i++)
		free(r->blocks[i]);
	tm_zindex_free(r->ix);
	pthread_cond_destroy(&r->filled);
	pthread_cond_destroy(&r->drained);
	pthread_mutex_destroy(&r->lock);
	free(s);
	src->priv = NULL;
}

static void scan_report(struct tm_source *src, struct tm_diag *diag)
{
	struct tm_zscan *sc = &scan_of(src)->pub;
	if (scan_of(src)->said[0])
		tm_diag_note(diag, "%s", scan_of(src)->said);
	if (sc->problem[0])
		tm_diag_note(diag, "%s; the decompressed trace ends at byte %" PRIu64, sc->problem,
			     sc->out_pos);
	if (sc->note[0])
		tm_diag_hint(diag, "%s", sc->note);
}

static const struct tm_source_ops scan_ops = {
    .read = scan_read,
    .close = scan_close,
    .report = scan_report,
};

int tm_z_scan_open(const struct tm_codec *c, struct tm_source *file, struct tm_source *out)
{
	return tm_z_scan_open_spaced(c, file, TM_Z_SPAN, out);
}

int tm_z_scan_open_spaced(const struct tm_codec *c, struct tm_source *file, uint64_t span,
			  struct tm_source *out)
{
	struct scan *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	struct tm_zscan_ring *r = &s->ring;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->filled, NULL);
	pthread_cond_init(&r->drained, NULL);
	*out = (struct tm_source){.ops = &scan_ops, .size = file->size, .fd = -1, .priv = s};
	s->pub.file = file;
	s->pub.span = span;
	s->pub.ring = r;
	r->codec = c;
	int err = -ENOMEM;
	for (unsigned i = 0; i < RING; i++)
		if (!(r->blocks[i] = malloc(BLOCK_BYTES)))
			goto fail;
	if (!(r->ix = calloc(1, sizeof(*r->ix))))
		goto fail;
	r->ix->codec = c;
	if ((err = -pthread_create(&r->thread, NULL, scan_thread, s)) < 0)
		goto fail;
	r->started = 1;
	return 0;
fail:
	scan_close(out);
	return err;
}

void tm_z_scan_say(struct tm_source *src, const char *line)
{
	snprintf(scan_of(src)->said, sizeof(scan_of(src)->said), "%s", line);
}

uint64_t tm_z_scan_position(struct tm_source *src)
{
	return atomic_load(&scan_of(src)->pub.in_pos);
}

int tm_z_scan_finish(struct tm_source *src, struct tm_zindex **out)
{
	struct scan *s = scan_of(src);
	struct tm_zscan_ring *r = &s->ring;
	scan_stop(r);
	if (r->err)
		return r->err;
	struct tm_zindex *ix = r->ix;
	if (grow_points(r, ix->n_points + 1) < 0)
		return -ENOMEM;
	/* the end of the last span */
	ix->points[ix->n_points] = (struct tm_zpoint){
	    .out = s->pub.out_pos,
	    .in = atomic_load(&s->pub.in_pos),
	    .flags = s->pub.problem[0] ? TM_Z_ENDS_EARLY : 0,
	};
	ix->in_size = atomic_load(&s->pub.in_pos);
	ix->out_size = s->pub.out_pos;
	end_piece(r, ix->out_size);
	if (r->crc_err || tm_zindex_pieces(ix) < 0)
		return -ENOMEM;
	*out = ix;
	r->ix = NULL;
	return 0;
}
