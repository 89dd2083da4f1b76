/* gzip: detection, the index pass's inflating body, and decompressing a span from its point,
 * whose window (the 32 KiB of output before it) the pass stored deflated. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gzip.h"
#include "scan.h"

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

/* The index pass's side. */
/* The share of the decompressed bytes that windows may take, in thousandths: where windows
 * compress poorly (binary traces), points are spaced wider than the span so that the index
 * stays under 1% of the trace (issue budget), whatever the data. */
#define WINDOW_BUDGET_PERMILLE 5

struct gz_scan {
	struct tm_zscan *sc;
	z_stream z;
	z_stream deflater; /* compresses windows */
	uint8_t *input;
	uint64_t windows, window_bytes; /* the windows stored so far, and their bytes */
};

/* Decompressed bytes between points that need a window: the span, or more where the windows
 * so far compressed so poorly that their share would pass the budget. */
static uint64_t window_spacing(const struct gz_scan *g)
{
	if (!g->windows)
		return g->sc->span;
	uint64_t need = g->window_bytes * 1000 / WINDOW_BUDGET_PERMILLE / g->windows;
	return need > g->sc->span ? need : g->sc->span;
}

/* Adds a point at the current output: a member start needs no window, a point inside a
 * member the 32 KiB before it, compressed fast (they cost the pass time; the table is
 * small). */
static int add_point(struct gz_scan *g, uint64_t in, unsigned bits, unsigned flags)
{
	if (flags & TM_GZ_MEMBER)
		return tm_zscan_add_point(g->sc, in, bits, flags, 0, NULL, 0);
	uint8_t window[TM_GZ_WINDOW_BYTES], packed[TM_GZ_WINDOW_BYTES + 1024];
	uInt len = 0;
	if (inflateGetDictionary(&g->z, window, &len) != Z_OK)
		return -EIO;
	deflateReset(&g->deflater);
	g->deflater.next_in = window;
	g->deflater.avail_in = len;
	g->deflater.next_out = packed;
	g->deflater.avail_out = sizeof(packed);
	if (deflate(&g->deflater, Z_FINISH) != Z_STREAM_END)
		return -EIO;
	size_t packed_len = sizeof(packed) - g->deflater.avail_out;
	g->windows++;
	g->window_bytes += packed_len;
	return tm_zscan_add_point(g->sc, in, bits, flags, 0, packed, packed_len);
}

/* Refills the input; returns bytes read, 0 at the end, or -errno. */
static ssize_t read_input(struct gz_scan *g)
{
	uint64_t at = g->sc->in_pos + g->z.avail_in;
	ssize_t n = tm_source_read(g->sc->file, g->input, TM_ZSCAN_INPUT, at);
	if (n > 0) {
		g->z.next_in = g->input;
		g->z.avail_in = (uInt)n;
	}
	return n;
}

/* Whether another gzip member follows the one that just ended. */
static int next_member(struct gz_scan *g, uint64_t *in)
{
	struct tm_zscan *sc = g->sc;
	if (g->z.avail_in < 2) {
		/* keep the odd byte: move it to the front and read after it */
		uint8_t first = g->z.avail_in ? g->z.next_in[0] : 0;
		size_t kept = g->z.avail_in;
		ssize_t n = tm_source_read(sc->file, g->input + kept, TM_ZSCAN_INPUT - kept,
					   sc->in_pos + kept);
		if (n < 0)
			return (int)n;
		g->input[0] = first;
		g->z.next_in = g->input;
		g->z.avail_in = (uInt)(kept + (size_t)n);
	}
	*in = sc->in_pos;
	if (!g->z.avail_in)
		return 0; /* the clean end */
	if (g->z.avail_in >= 2 && g->z.next_in[0] == 0x1f && g->z.next_in[1] == 0x8b)
		return 1;
	snprintf(sc->problem, sizeof(sc->problem),
		 "gzip: data after the last member at compressed byte %" PRIu64 " ignored", *in);
	return 0;
}

static int inflate_all(struct gz_scan *g)
{
	struct tm_zscan *sc = g->sc;
	int err = add_point(g, 0, 0, TM_GZ_MEMBER);

	while (!err) {
		uint8_t *out;
		size_t room;
		if (tm_zscan_room(sc, &out, &room))
			return 0; /* the reader stopped early */
		if (!g->z.avail_in) {
			ssize_t n = read_input(g);
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
		uInt avail_in = g->z.avail_in;
		g->z.next_out = out;
		g->z.avail_out = (uInt)room;
		int ret = inflate(&g->z, Z_BLOCK);
		sc->in_pos += avail_in - g->z.avail_in;
		tm_zscan_commit(sc, room - g->z.avail_out);
		if (ret == Z_STREAM_END) {
			uint64_t in = 0;
			int more = next_member(g, &in);
			if (more <= 0) {
				err = more;
				break;
			}
			inflateReset(&g->z);
			/* a member's start needs no window: a point there is nearly free */
			if (tm_zscan_since_point(sc) >= sc->span / 4)
				err = add_point(g, in, 0, TM_GZ_MEMBER);
		} else if (ret == Z_OK || ret == Z_BUF_ERROR) {
			int boundary = (g->z.data_type & 128) && !(g->z.data_type & 64);
			if (boundary && tm_zscan_since_point(sc) >= window_spacing(g))
				err = add_point(g, sc->in_pos, (unsigned)g->z.data_type & 7, 0);
		} else {
			/* a failed check comes after the member's data: some of it is wrong */
			const char *msg = g->z.msg ? g->z.msg : "inflate failed";
			int check = strstr(msg, "check") != NULL;
			snprintf(sc->problem, sizeof(sc->problem),
				 "gzip: corrupt data at compressed byte %" PRIu64 " (%s%s)",
				 sc->in_pos, msg,
				 check ? ": the member's bytes before it are not all right" : "");
			break;
		}
	}
	return err;
}

static int gz_scan(struct tm_zscan *sc)
{
	struct gz_scan g = {.sc = sc};
	int err = -ENOMEM;
	if (!(g.input = malloc(TM_ZSCAN_INPUT)))
		return -ENOMEM;
	if (inflateInit2(&g.z, 15 + 16) != Z_OK)
		goto out;
	if (deflateInit2(&g.deflater, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		inflateEnd(&g.z);
		goto out;
	}
	err = inflate_all(&g);
	inflateEnd(&g.z);
	deflateEnd(&g.deflater);
out:
	free(g.input);
	return err;
}

/* The reader's side. */

int tm_gz_point_window(const struct tm_zindex *ix, const struct tm_zpoint *p, uint8_t *window,
		       size_t *len)
{
	z_stream w = {0};
	if (inflateInit2(&w, -15) != Z_OK)
		return -ENOMEM;
	w.next_in = ix->windows + p->window_off;
	w.avail_in = p->window_len;
	w.next_out = window;
	w.avail_out = TM_GZ_WINDOW_BYTES;
	int ret = inflate(&w, Z_FINISH);
	*len = TM_GZ_WINDOW_BYTES - w.avail_out;
	inflateEnd(&w);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

int tm_gz_point_bits(struct tm_source *file, const struct tm_zpoint *p, unsigned *value)
{
	uint8_t byte;
	ssize_t n = tm_source_read(file, &byte, 1, p->in - 1);
	if (n != 1)
		return n < 0 ? (int)n : -EIO;
	*value = byte >> (8 - p->bits);
	return 0;
}

/* Sets z up to decompress from point p on: a new member reads its gzip header; inside a
 * member, a raw deflate stream starts with the point's leftover bits and window. */
static int start_at(z_stream *z, struct tm_source *file, const struct tm_zindex *ix,
		    const struct tm_zpoint *p)
{
	if (p->flags & TM_GZ_MEMBER)
		return inflateInit2(z, 15 + 16) == Z_OK ? 0 : -ENOMEM;
	if (inflateInit2(z, -15) != Z_OK)
		return -ENOMEM;
	if (p->bits) {
		unsigned value;
		int err = tm_gz_point_bits(file, p, &value);
		if (err)
			return err;
		inflatePrime(z, p->bits, (int)value);
	}
	if (!p->window_len)
		return 0;
	uint8_t window[TM_GZ_WINDOW_BYTES];
	size_t len;
	int err = tm_gz_point_window(ix, p, window, &len);
	if (err)
		return err;
	return inflateSetDictionary(z, window, (uInt)len) == Z_OK ? 0 : -EIO;
}

/* A decoder of one span: the point's stream, and a member's trailer to step over when the
 * span started inside a member (raw deflate knows nothing of it). */
struct gz_dec {
	z_stream z;
	uint64_t in_off; /* the next compressed byte to read */
	size_t trailer;
	bool raw;
	uint8_t in[TM_GZ_INPUT_BLOCK];
};

static void gz_close(void *dec)
{
	struct gz_dec *g = dec;
	inflateEnd(&g->z);
	free(g);
}

static int gz_open_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k, void **dec)
{
	const struct tm_zpoint *p = &ix->points[k];
	struct gz_dec *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->raw = !(p->flags & TM_GZ_MEMBER);
	g->in_off = p->in;
	int err = start_at(&g->z, file, ix, p);
	if (err) {
		gz_close(g);
		return err;
	}
	*dec = g;
	return 0;
}

static int gz_read(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
		   char *why, size_t why_len)
{
	struct gz_dec *g = dec;
	z_stream *z = &g->z;
	size_t done = 0;
	int err = 0;
	while (!err && done < cap) {
		if (!z->avail_in) {
			ssize_t n = tm_source_read(file, g->in, TM_GZ_INPUT_BLOCK, g->in_off);
			if (n <= 0) {
				err = n < 0 ? (int)n : -EIO;
				if (!n && why)
					snprintf(why, why_len, "the file ends at %" PRIu64,
						 g->in_off);
				break;
			}
			g->in_off += (uint64_t)n;
			z->next_in = g->in;
			z->avail_in = (uInt)n;
		}
		if (g->trailer) { /* the trailer of a member entered in raw mode */
			size_t s = g->trailer < z->avail_in ? g->trailer : z->avail_in;
			z->next_in += s;
			z->avail_in -= (uInt)s;
			g->trailer -= s;
			continue;
		}
		z->next_out = out + done;
		z->avail_out = (uInt)(cap - done);
		int ret = inflate(z, Z_NO_FLUSH);
		size_t made = cap - done - z->avail_out;
		done += made;
		if (ret == Z_STREAM_END) {
			/* the next member: a raw stream has not read this one's trailer */
			if (g->raw)
				g->trailer = TM_GZ_TRAILER;
			g->raw = false;
			if (inflateReset2(z, 15 + 16) != Z_OK)
				err = -EIO;
		} else if (ret != Z_OK && ret != Z_BUF_ERROR) {
			err = ret == Z_MEM_ERROR ? -ENOMEM : -EIO;
		} else if (ret == Z_BUF_ERROR && !made && z->avail_in) {
			err = -EIO; /* no progress with input to spare */
		}
		if (err && why)
			snprintf(why, why_len, "zlib: %s, in the bytes before %" PRIu64,
				 z->msg ? z->msg : zError(ret), g->in_off);
	}
	*got = done;
	return err;
}

#ifdef TM_HAVE_ISAL
/* The span decoder: ISA-L's, except in a last span whose data ends early (cut or corrupt):
 * input that stops inside a deflate block leaves ISA-L holding back its last symbols, where
 * zlib, like the index pass, decodes every one whose bits are there. */
struct gz_span {
	void *dec;
	bool isal;
};

static int gz_span_open(struct tm_source *file, const struct tm_zindex *ix, uint64_t k, void **dec)
{
	struct gz_span *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->isal = !(k + 1 == ix->n_points && ix->points[k + 1].flags & TM_Z_ENDS_EARLY);
	int err = s->isal ? tm_gz_isal_open_span(file, ix, k, &s->dec)
			  : gz_open_span(file, ix, k, &s->dec);
	if (err) {
		free(s);
		return err;
	}
	*dec = s;
	return 0;
}

static int gz_span_read(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
			char *why, size_t why_len)
{
	struct gz_span *s = dec;
	return s->isal ? tm_gz_isal_read(s->dec, file, out, cap, got, why, why_len)
		       : gz_read(s->dec, file, out, cap, got, why, why_len);
}

static void gz_span_close(void *dec)
{
	struct gz_span *s = dec;
	if (s->isal)
		tm_gz_isal_close(s->dec);
	else
		gz_close(s->dec);
	free(s);
}
#else
#define gz_span_open  gz_open_span
#define gz_span_read  gz_read
#define gz_span_close gz_close
#endif

const struct tm_codec tm_codec_gzip = {
    .name = "gzip",
    .suffix = ".gz",
    .id = 1,
    .probe_len = 4096,
    .detect = tm_gz_detect,
    .decompress_head = tm_gz_inflate_head,
    .scan = gz_scan,
    .open_span = gz_span_open,
    .read = gz_span_read,
    .close = gz_span_close,
};
