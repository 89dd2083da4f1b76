/* The index pass over a gzip file: one thread inflates into a ring of blocks and records
 * access points while the index pass decodes the blocks before it, on the other core. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tracemount/diag.h"
#include "tracemount/gzip.h"

#define BLOCK_BYTES (256u << 10)
#define RING	    8
#define INPUT_BYTES (256u << 10)
#define WINDOW_MAX  (32u << 10)

struct scan {
	struct tm_source *file;
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

	/* the inflating thread's side; read by others once it has finished */
	z_stream z;
	int z_ready;
	z_stream deflater; /* compresses windows */
	int deflater_ready;
	uint8_t *input;
	_Atomic uint64_t in_pos; /* compressed bytes consumed */
	uint64_t out_pos;
	struct tm_gz_index *ix;
	uint64_t points_cap;
	size_t windows_cap;
	/* what ended the data early, if anything: the longest, a corrupt member's, is 110 bytes
	 * and zlib's message (under 50) */
	char problem[200];
};

static struct scan *scan_of(struct tm_source *s)
{
	return s->priv;
}

static int add_point(struct scan *sc, uint64_t in, unsigned bits, unsigned flags)
{
	struct tm_gz_index *ix = sc->ix;
	if (ix->n_points + 1 >= sc->points_cap) {
		uint64_t cap = sc->points_cap ? sc->points_cap * 2 : 256;
		struct tm_gz_point *p = realloc(ix->points, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ix->points = p;
		sc->points_cap = cap;
	}
	struct tm_gz_point *p = &ix->points[ix->n_points];
	memset(p, 0, sizeof(*p));
	p->out = sc->out_pos;
	p->in = in;
	p->bits = (uint8_t)bits;
	p->flags = (uint8_t)flags;
	p->window_off = ix->windows_len;
	if (!(flags & TM_GZ_MEMBER)) {
		uint8_t window[WINDOW_MAX];
		uInt len = 0;
		if (inflateGetDictionary(&sc->z, window, &len) != Z_OK)
			return -EIO;
		size_t bound = deflateBound(&sc->deflater, len);
		if (ix->windows_len + bound > sc->windows_cap) {
			size_t cap = sc->windows_cap * 2 + bound;
			uint8_t *w = realloc(ix->windows, cap);
			if (!w)
				return -ENOMEM;
			ix->windows = w;
			sc->windows_cap = cap;
		}
		deflateReset(&sc->deflater);
		sc->deflater.next_in = window;
		sc->deflater.avail_in = len;
		sc->deflater.next_out = ix->windows + ix->windows_len;
		sc->deflater.avail_out = (uInt)bound;
		if (deflate(&sc->deflater, Z_FINISH) != Z_STREAM_END)
			return -EIO;
		p->window_len = (uint32_t)(bound - sc->deflater.avail_out);
		ix->windows_len += p->window_len;
	}
	ix->n_points++;
	return 0;
}

/* The next empty block, waiting while the ring is full. NULL when the reader has gone. */
static uint8_t *empty_block(struct scan *sc)
{
	pthread_mutex_lock(&sc->lock);
	while (sc->count == RING && !sc->stop)
		pthread_cond_wait(&sc->drained, &sc->lock);
	uint8_t *b = sc->stop ? NULL : sc->blocks[(sc->head + sc->count) % RING];
	pthread_mutex_unlock(&sc->lock);
	return b;
}

static void publish(struct scan *sc, size_t len)
{
	pthread_mutex_lock(&sc->lock);
	sc->fill[(sc->head + sc->count) % RING] = len;
	sc->count++;
	pthread_cond_signal(&sc->filled);
	pthread_mutex_unlock(&sc->lock);
}

/* Refills the input; returns bytes read, 0 at the end, or -errno. */
static ssize_t read_input(struct scan *sc)
{
	uint64_t at = sc->in_pos + sc->z.avail_in;
	ssize_t n = tm_source_read(sc->file, sc->input, INPUT_BYTES, at);
	if (n > 0) {
		sc->z.next_in = sc->input;
		sc->z.avail_in = (uInt)n;
	}
	return n;
}

/* Whether another gzip member follows the one that just ended. */
static int next_member(struct scan *sc, uint64_t *in)
{
	if (sc->z.avail_in < 2) {
		/* keep the odd byte: move it to the front and read after it */
		uint8_t first = sc->z.avail_in ? sc->z.next_in[0] : 0;
		size_t kept = sc->z.avail_in;
		ssize_t n = tm_source_read(sc->file, sc->input + kept, INPUT_BYTES - kept,
					   sc->in_pos + kept);
		if (n < 0)
			return (int)n;
		sc->input[0] = first;
		sc->z.next_in = sc->input;
		sc->z.avail_in = (uInt)(kept + (size_t)n);
	}
	*in = sc->in_pos;
	if (!sc->z.avail_in)
		return 0; /* the clean end */
	if (sc->z.avail_in >= 2 && sc->z.next_in[0] == 0x1f && sc->z.next_in[1] == 0x8b)
		return 1;
	snprintf(sc->problem, sizeof(sc->problem),
		 "gzip: data after the last member at compressed byte %" PRIu64 " ignored", *in);
	return 0;
}

static int inflate_all(struct scan *sc)
{
	uint64_t last_point = 0;
	int err = add_point(sc, 0, 0, TM_GZ_MEMBER);
	uint8_t *block = NULL;
	size_t block_len = 0;

	while (!err) {
		if (!block && !(block = empty_block(sc)))
			return 0; /* the reader stopped early */
		if (!sc->z.avail_in) {
			ssize_t n = read_input(sc);
			if (n < 0)
				return (int)n;
			if (n == 0) {
				snprintf(sc->problem, sizeof(sc->problem),
					 "gzip: truncated: the compressed data ends inside a "
					 "member at compressed byte %" PRIu64,
					 sc->in_pos);
				break;
			}
		}
		uInt avail_in = sc->z.avail_in;
		sc->z.next_out = block + block_len;
		sc->z.avail_out = (uInt)(BLOCK_BYTES - block_len);
		int ret = inflate(&sc->z, Z_BLOCK);
		size_t made = BLOCK_BYTES - block_len - sc->z.avail_out;
		block_len += made;
		sc->out_pos += made;
		sc->in_pos += avail_in - sc->z.avail_in;
		if (block_len == BLOCK_BYTES) {
			publish(sc, block_len);
			block = NULL;
			block_len = 0;
		}
		if (ret == Z_STREAM_END) {
			uint64_t in = 0;
			int more = next_member(sc, &in);
			if (more <= 0) {
				err = more;
				break;
			}
			inflateReset(&sc->z);
			/* a member's start needs no window: a point there is nearly free */
			if (sc->out_pos - last_point >= TM_GZ_SPAN / 4) {
				err = add_point(sc, in, 0, TM_GZ_MEMBER);
				last_point = sc->out_pos;
			}
		} else if (ret == Z_OK || ret == Z_BUF_ERROR) {
			int boundary = (sc->z.data_type & 128) && !(sc->z.data_type & 64);
			if (boundary && sc->out_pos - last_point >= TM_GZ_SPAN) {
				err = add_point(sc, sc->in_pos, (unsigned)sc->z.data_type & 7, 0);
				last_point = sc->out_pos;
			}
		} else {
			/* a failed check comes after the member's data: some of it is wrong */
			const char *msg = sc->z.msg ? sc->z.msg : "inflate failed";
			int check = strstr(msg, "check") != NULL;
			snprintf(sc->problem, sizeof(sc->problem),
				 "gzip: corrupt data at compressed byte %" PRIu64 " (%s%s)",
				 sc->in_pos, msg,
				 check ? ": the member's bytes before it are not all right" : "");
			break;
		}
	}
	if (block_len)
		publish(sc, block_len);
	return err;
}

static void *scan_thread(void *arg)
{
	struct scan *sc = arg;
	int err = inflate_all(sc);
	pthread_mutex_lock(&sc->lock);
	sc->err = err;
	sc->done = 1;
	pthread_cond_signal(&sc->filled);
	pthread_mutex_unlock(&sc->lock);
	return NULL;
}

static ssize_t scan_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	struct scan *sc = scan_of(s);
	size_t done = 0;
	if (off != sc->read_pos)
		return -ESPIPE;
	while (done < len) {
		pthread_mutex_lock(&sc->lock);
		while (!sc->count && !sc->done)
			pthread_cond_wait(&sc->filled, &sc->lock);
		int err = sc->err;
		unsigned count = sc->count, head = sc->head;
		pthread_mutex_unlock(&sc->lock);
		if (!count) {
			if (err)
				return err;
			break; /* the end of the data */
		}
		/* the inflating thread leaves filled blocks alone */
		size_t n = sc->fill[head] - sc->block_pos;
		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, sc->blocks[head] + sc->block_pos, n);
		done += n;
		sc->block_pos += n;
		if (sc->block_pos == sc->fill[head]) {
			sc->block_pos = 0;
			pthread_mutex_lock(&sc->lock);
			sc->head = (sc->head + 1) % RING;
			sc->count--;
			pthread_cond_signal(&sc->drained);
			pthread_mutex_unlock(&sc->lock);
		}
	}
	sc->read_pos += done;
	return (ssize_t)done;
}

static void scan_stop(struct scan *sc)
{
	if (!sc->started)
		return;
	pthread_mutex_lock(&sc->lock);
	sc->stop = 1;
	pthread_cond_signal(&sc->drained);
	pthread_mutex_unlock(&sc->lock);
	pthread_join(sc->thread, NULL);
	sc->started = 0;
}

static void scan_close(struct tm_source *s)
{
	struct scan *sc = scan_of(s);
	if (!sc)
		return;
	scan_stop(sc);
	if (sc->z_ready)
		inflateEnd(&sc->z);
	if (sc->deflater_ready)
		deflateEnd(&sc->deflater);
	for (unsigned i = 0; i < RING; i++)
		free(sc->blocks[i]);
	free(sc->input);
	tm_gz_index_free(sc->ix);
	pthread_cond_destroy(&sc->filled);
	pthread_cond_destroy(&sc->drained);
	pthread_mutex_destroy(&sc->lock);
	free(sc);
	s->priv = NULL;
}

static void scan_report(struct tm_source *s, struct tm_diag *diag)
{
	struct scan *sc = scan_of(s);
	if (sc->problem[0])
		tm_diag_note(diag, "%s; the decompressed trace ends at byte %" PRIu64, sc->problem,
			     sc->out_pos);
}

static const struct tm_source_ops scan_ops = {
    .read = scan_read,
    .close = scan_close,
    .report = scan_report,
};

int tm_gz_scan_open(struct tm_source *file, struct tm_source *out)
{
	struct scan *sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	pthread_mutex_init(&sc->lock, NULL);
	pthread_cond_init(&sc->filled, NULL);
	pthread_cond_init(&sc->drained, NULL);
	*out = (struct tm_source){.ops = &scan_ops, .size = file->size, .fd = -1, .priv = sc};
	sc->file = file;
	int err = -ENOMEM;
	for (unsigned i = 0; i < RING; i++)
		if (!(sc->blocks[i] = malloc(BLOCK_BYTES)))
			goto fail;
	if (!(sc->input = malloc(INPUT_BYTES)) || !(sc->ix = calloc(1, sizeof(*sc->ix))))
		goto fail;
	if (inflateInit2(&sc->z, 15 + 16) != Z_OK)
		goto fail;
	sc->z_ready = 1;
	/* windows are compressed fast: they cost the pass time, and the table is small */
	if (deflateInit2(&sc->deflater, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		goto fail;
	sc->deflater_ready = 1;
	if ((err = -pthread_create(&sc->thread, NULL, scan_thread, sc)) < 0)
		goto fail;
	sc->started = 1;
	return 0;
fail:
	scan_close(out);
	return err;
}

uint64_t tm_gz_scan_position(struct tm_source *s)
{
	return atomic_load(&scan_of(s)->in_pos);
}

int tm_gz_scan_finish(struct tm_source *s, struct tm_gz_index **out)
{
	struct scan *sc = scan_of(s);
	scan_stop(sc);
	if (sc->err)
		return sc->err;
	struct tm_gz_index *ix = sc->ix;
	/* the end of the last span */
	if (ix->n_points + 1 > sc->points_cap) {
		struct tm_gz_point *p = realloc(ix->points, (ix->n_points + 1) * sizeof(*p));
		if (!p)
			return -ENOMEM;
		ix->points = p;
	}
	ix->points[ix->n_points] = (struct tm_gz_point){.out = sc->out_pos, .in = sc->in_pos};
	ix->in_size = sc->in_pos;
	ix->out_size = sc->out_pos;
	if (tm_gz_index_pieces(ix) < 0)
		return -ENOMEM;
	*out = ix;
	sc->ix = NULL;
	return 0;
}
