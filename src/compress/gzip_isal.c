/* gzip's span reader on ISA-L's igzip, which inflates two to three times faster than zlib
 * here: the same points and windows as zlib's reader (gzip.c), the same bytes out. */
#include <errno.h>
#include <inttypes.h>
#include <isa-l/igzip_lib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "gzip.h"

/* A decoder of one span, as in gzip.c: inside a member entered in raw mode, the member's
 * trailer is stepped over by hand, since raw deflate knows nothing of it. */
struct isal_dec {
	struct inflate_state s;
	uint64_t in_off; /* the next compressed byte to read */
	size_t trailer;	 /* trailer bytes still to step over */
	bool raw;
	uint8_t in[TM_GZ_INPUT_BLOCK];
};

void tm_gz_isal_close(void *dec)
{
	free(dec);
}

int tm_gz_isal_open_span(struct tm_source *file, const struct tm_zindex *ix, uint64_t k, void **dec)
{
	const struct tm_zpoint *p = &ix->points[k];
	struct isal_dec *d = malloc(sizeof(*d));
	if (!d)
		return -ENOMEM;
	isal_inflate_init(&d->s);
	d->in_off = p->in;
	d->trailer = 0;
	d->raw = !(p->flags & TM_GZ_MEMBER);
	d->s.crc_flag = d->raw ? ISAL_DEFLATE : ISAL_GZIP;
	int err = 0;
	if (d->raw && p->window_len) {
		uint8_t window[TM_GZ_WINDOW_BYTES];
		size_t len;
		err = tm_gz_point_window(ix, p, window, &len);
		if (!err && isal_inflate_set_dict(&d->s, window, (uint32_t)len) != ISAL_DECOMP_OK)
			err = -EIO;
	}
	if (!err && d->raw && p->bits) { /* the block starts inside the byte before `in` */
		unsigned value;
		err = tm_gz_point_bits(file, p, &value);
		d->s.read_in = value;
		d->s.read_in_length = p->bits;
	}
	if (err) {
		free(d);
		return err;
	}
	*dec = d;
	return 0;
}

static const char *isal_error(int ret)
{
	switch (ret) {
	case ISAL_INVALID_BLOCK: return "invalid block";
	case ISAL_INVALID_SYMBOL: return "invalid code";
	case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER: return "incorrect header";
	case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
	default: return "inflate failed";
	}
}

/* The member ended: a raw one's trailer is partly in the bit buffer already (whole bytes
 * after the final block's padding), the rest still to step over; the next member, if the
 * reader wants more, starts with its header. */
static void next_member(struct isal_dec *d)
{
	if (d->raw)
		d->trailer = TM_GZ_TRAILER - (size_t)d->s.read_in_length / 8;
	uint8_t *next_in = d->s.next_in;
	uint32_t avail_in = d->s.avail_in;
	isal_inflate_reset(&d->s);
	d->s.next_in = next_in;
	d->s.avail_in = avail_in;
	d->s.crc_flag = ISAL_GZIP;
	d->raw = false;
}

int tm_gz_isal_read(void *dec, struct tm_source *file, uint8_t *out, size_t cap, size_t *got,
		    char *why, size_t why_len)
{
	struct isal_dec *d = dec;
	struct inflate_state *s = &d->s;
	size_t done = 0;
	int err = 0;
	while (!err && done < cap) {
		if (!s->avail_in) {
			ssize_t n = tm_source_read(file, d->in, sizeof(d->in), d->in_off);
			if (n <= 0) {
				err = n < 0 ? (int)n : -EIO;
				if (!n && why)
					snprintf(why, why_len, "the file ends at %" PRIu64,
						 d->in_off);
				break;
			}
			d->in_off += (uint64_t)n;
			s->next_in = d->in;
			s->avail_in = (uint32_t)n;
		}
		if (d->trailer) {
			size_t skip = d->trailer < s->avail_in ? d->trailer : s->avail_in;
			s->next_in += skip;
			s->avail_in -= (uint32_t)skip;
			d->trailer -= skip;
			continue;
		}
		const uint8_t *in_before = s->next_in;
		s->next_out = out + done;
		s->avail_out = (uint32_t)(cap - done > UINT32_MAX ? UINT32_MAX : cap - done);
		uint32_t room = s->avail_out;
		int ret = isal_inflate(s);
		size_t made = room - s->avail_out;
		done += made;
		if (ret != ISAL_DECOMP_OK) {
			err = -EIO;
			if (why)
				snprintf(why, why_len, "ISA-L: %s, in the bytes before %" PRIu64,
					 isal_error(ret), d->in_off);
		} else if (s->block_state == ISAL_BLOCK_FINISH) {
			next_member(d);
		} else if (!made && s->avail_in && s->next_in == in_before) {
			err = -EIO; /* no progress with input to spare */
			if (why)
				snprintf(why, why_len,
					 "ISA-L: no progress, in the bytes before %" PRIu64,
					 d->in_off);
		}
	}
	*got = done;
	return err;
}
