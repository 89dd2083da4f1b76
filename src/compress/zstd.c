/* zstd (libzstd): a file is a series of independent frames, so a point is a frame's start.
 * The streaming decoder stops consuming at a frame's end, which is how the frames are found. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "tracemount/compress.h"
#include "scan.h"

#define INPUT_BYTES (128u << 10)

/* Whether p starts a frame: a zstd frame's magic or a skippable frame's. */
static bool frame_magic(const uint8_t *p)
{
	uint32_t m =
	    (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return m == ZSTD_MAGICNUMBER ||
	       (m & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}

struct zstd_walk {
	struct tm_source *file;
	ZSTD_DCtx *d;
	uint8_t in[INPUT_BYTES];
	size_t in_len, in_pos;
	uint64_t in_off; /* compressed offset of in[0] */
	bool mid_frame;	 /* the decoder has begun a frame it has not ended */
	char why[160];
};

static uint64_t consumed(const struct zstd_walk *w)
{
	return w->in_off + w->in_pos;
}

static int walk_init(struct zstd_walk *w, struct tm_source *file, uint64_t at)
{
	w->file = file;
	w->in_len = w->in_pos = 0;
	w->in_off = at;
	w->mid_frame = false;
	w->why[0] = '\0';
	return (w->d = ZSTD_createDCtx()) ? 0 : -ENOMEM;
}

/* Refills the input when it is used up. Returns the bytes available, or -errno. */
static ssize_t fill(struct zstd_walk *w)
{
	if (w->in_pos < w->in_len)
		return (ssize_t)(w->in_len - w->in_pos);
	w->in_off += w->in_len;
	w->in_pos = w->in_len = 0;
	ssize_t n = tm_source_read(w->file, w->in, INPUT_BYTES, w->in_off);
	if (n > 0)
		w->in_len = (size_t)n;
	return n;
}

static int bad(struct zstd_walk *w, const char *what)
{
	snprintf(w->why, sizeof(w->why), "zstd: %s at compressed byte %" PRIu64, what, consumed(w));
	return -EBADMSG;
}

/* Whether another frame follows the one that ended: 1 yes, 0 the clean end (why set for
 * trailing bytes that start no frame), or -errno. */
static int next_frame(struct zstd_walk *w)
{
	ssize_t n = fill(w);
	if (n <= 0)
		return (int)n;
	if (n < 4) { /* a magic number split by the refill */
		uint8_t rest[4];
		memcpy(rest, w->in + w->in_pos, (size_t)n);
		ssize_t more =
		    tm_source_read(w->file, rest + n, 4 - (size_t)n, consumed(w) + (uint64_t)n);
		if (more < 0)
			return (int)more;
		if (n + more == 4 && frame_magic(rest))
			return 1;
	} else if (frame_magic(w->in + w->in_pos)) {
		return 1;
	}
	snprintf(w->why, sizeof(w->why),
		 "zstd: data after the last frame at compressed byte %" PRIu64 " ignored",
		 consumed(w));
	return 0;
}

/* Decodes into out[0..cap): *got bytes. Returns 1 when a frame ended, 0 when out is full,
 * 2 at the clean end of the data, -EBADMSG (why says it) or -errno. */
static int decode(struct zstd_walk *w, uint8_t *out, size_t cap, size_t *got)
{
	ZSTD_outBuffer o = {out, cap, 0};
	int r = 0;
	while (o.pos < o.size) {
		if (!w->mid_frame) {
			int more = next_frame(w);
			if (more <= 0) {
				r = more < 0 ? more : 2;
				break;
			}
		}
		ssize_t n = fill(w);
		if (n < 0) {
			r = (int)n;
			break;
		}
		if (n == 0) {
			r = bad(w, "truncated: the data ends inside a frame");
			break;
		}
		ZSTD_inBuffer i = {w->in, w->in_len, w->in_pos};
		size_t ret = ZSTD_decompressStream(w->d, &o, &i);
		w->in_pos = i.pos;
		if (ZSTD_isError(ret)) {
			char what[120];
			snprintf(what, sizeof(what), "corrupt data (%s)", ZSTD_getErrorName(ret));
			r = bad(w, what);
			break;
		}
		w->mid_frame = ret != 0;
		if (!ret) {
			r = 1;
			break;
		}
	}
	*got = o.pos;
	return r;
}

static int zstd_scan(struct tm_zscan *sc)
{
	struct zstd_walk *w = malloc(sizeof(*w));
	if (!w || walk_init(w, sc->file, 0) < 0) {
		free(w);
		return -ENOMEM;
	}
	int err = tm_zscan_add_point(sc, 0, 0, 0, 0, NULL, 0);
	uint64_t points = 1;
	while (!err) {
		uint8_t *out;
		size_t room, got = 0;
		if (tm_zscan_room(sc, &out, &room))
			break; /* the reader stopped early */
		int r = decode(w, out, room, &got);
		sc->in_pos = consumed(w);
		tm_zscan_commit(sc, got);
		if (r < 0 || r == 2) {
			err = r == 2 ? 0 : r;
			break;
		}
		/* a frame's start: a point when a quarter span has passed */
		if (r == 1 && tm_zscan_since_point(sc) >= sc->span / 4) {
			int more = next_frame(w);
			if (more == 1) {
				err = tm_zscan_add_point(sc, consumed(w), 0, 0, 0, NULL, 0);
				points++;
			}
		}
	}
	if (err == -EBADMSG || (!err && w->why[0])) {
		snprintf(sc->problem, sizeof(sc->problem), "%s", w->why);
		err = 0;
	}
	if (!err && points == 1 && sc->out_pos > TM_Z_PIECE)
		snprintf(sc->note, sizeof(sc->note),
			 "zstd: one frame: random reads decode from the start; recompress with "
			 "`pzstd`");
	ZSTD_freeDCtx(w->d);
	free(w);
	return err;
}

/* The reader's side: a walker opened at a frame's start. */
static int zstd_open_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k,
			  void **dec)
{
	struct zstd_walk *w = malloc(sizeof(*w));
	if (!w || walk_init(w, file, ix->points[k].in) < 0) {
		free(w);
		return -ENOMEM;
	}
	*dec = w;
	return 0;
}

static int zstd_read(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
		     char *why, size_t why_len)
{
	struct zstd_walk *w = dec;
	int r = 0;
	w->file = file;
	*got = 0;
	while (*got < cap && r >= 0 && r != 2) { /* 2: the end of the data */
		size_t n = 0;
		r = decode(w, out + *got, cap - *got, &n);
		*got += n;
	}
	if (r >= 0)
		return 0;
	if (why)
		snprintf(why, why_len, "%s", w->why);
	return r == -EBADMSG ? -EIO : r;
}

static void zstd_close(void *dec)
{
	struct zstd_walk *w = dec;
	ZSTD_freeDCtx(w->d);
	free(w);
}

static bool zstd_detect(const char *name, const uint8_t *head, size_t head_len)
{
	if (head_len < 4 || !frame_magic(head))
		return false;
	size_t n = strlen(name);
	return (n > 4 && strcmp(name + n - 4, ".zst") == 0) ||
	       ZSTD_getFrameContentSize(head, head_len) != ZSTD_CONTENTSIZE_ERROR;
}

static size_t zstd_head(const uint8_t *head, size_t head_len, uint8_t *out, size_t cap)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();
	if (!d)
		return 0;
	ZSTD_inBuffer i = {head, head_len, 0};
	ZSTD_outBuffer o = {out, cap, 0};
	/* a head cut from a longer file ends early: what decoded before is kept */
	while (o.pos < o.size && i.pos < i.size) {
		size_t before = i.pos + o.pos;
		if (ZSTD_isError(ZSTD_decompressStream(d, &o, &i)) || i.pos + o.pos == before)
			break;
	}
	ZSTD_freeDCtx(d);
	return o.pos;
}

const struct tm_codec tm_codec_zstd = {
    .name = "zstd",
    .suffix = ".zst",
    .id = 3,
    .probe_len = 132u << 10, /* a frame header and a whole block of 128 KiB */
    .detect = zstd_detect,
    .decompress_head = zstd_head,
    .scan = zstd_scan,
    .open_span = zstd_open_span,
    .read = zstd_read,
    .close = zstd_close,
};
