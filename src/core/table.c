/* Table views kept deflated in pieces: see table.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "tracemount/table.h"

/* Level 1: the pieces are deflated once per index pass, on the path of the first stat. */
#define LEVEL 1

static int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Deflates the piece being filled onto z. */
static int seal_piece(struct tm_table *t)
{
	uLong bound = compressBound((uLong)t->piece_len);
	size_t z_len = t->n_pieces ? t->ends[t->n_pieces] : 0;
	if (grow_array((void **)&t->z, &t->z_cap, z_len + bound, 1) < 0 ||
	    grow_array((void **)&t->ends, &t->ends_cap, t->n_pieces + 2, sizeof(*t->ends)) < 0)
		return -ENOMEM;
	uLongf z = bound;
	if (compress2(t->z + z_len, &z, t->piece, (uLong)t->piece_len, LEVEL) != Z_OK)
		return -ENOMEM;
	t->ends[0] = 0;
	t->ends[++t->n_pieces] = z_len + z;
	t->piece_len = 0;
	return 0;
}

static ssize_t table_write(void *cookie, const char *buf, size_t size)
{
	struct tm_table *t = cookie;
	for (size_t done = 0; done < size && !t->err;) {
		size_t n = TM_TABLE_PIECE - t->piece_len;
		if (n > size - done)
			n = size - done;
		if (grow_array((void **)&t->piece, &t->piece_cap, t->piece_len + n, 1) < 0) {
			t->err = -ENOMEM;
			break;
		}
		memcpy(t->piece + t->piece_len, buf + done, n);
		t->piece_len += n;
		t->len += n;
		done += n;
		if (t->piece_len == TM_TABLE_PIECE)
			t->err = seal_piece(t);
	}
	if (t->err) {
		errno = -t->err;
		return -1;
	}
	return (ssize_t)size;
}

FILE *tm_table_writer(struct tm_table *t)
{
	return fopencookie(t, "w", (cookie_io_functions_t){.write = table_write});
}

int tm_table_finish(struct tm_table *t, FILE *f)
{
	if (fclose(f) != 0 && !t->err)
		t->err = -EIO;
	if (!t->err && t->piece_len)
		t->err = seal_piece(t);
	free(t->piece);
	t->piece = NULL;
	t->piece_cap = 0;
	if (!t->err && t->n_pieces) { /* the index keeps it: no room to spare */
		uint8_t *z = realloc(t->z, t->ends[t->n_pieces]);
		t->z = z ? z : t->z;
		t->z_cap = z ? t->ends[t->n_pieces] : t->z_cap;
	}
	return t->err;
}

size_t tm_table_piece_len(const struct tm_table *t, uint64_t k)
{
	uint64_t start = k * TM_TABLE_PIECE;
	return (size_t)(t->len - start < TM_TABLE_PIECE ? t->len - start : TM_TABLE_PIECE);
}

int tm_table_inflate(const struct tm_table *t, uint64_t k, uint8_t *out)
{
	uLongf got = (uLongf)tm_table_piece_len(t, k);
	uLong want = got;
	if (uncompress(out, &got, t->z + t->ends[k], (uLong)(t->ends[k + 1] - t->ends[k])) !=
		Z_OK ||
	    got != want)
		return -EIO;
	return 0;
}

const char *tm_table_check(const struct tm_table *t, uint64_t z_len)
{
	/* no rounding up that could wrap: a length near 2^64 must not count 0 pieces */
	if (t->n_pieces != t->len / TM_TABLE_PIECE + (t->len % TM_TABLE_PIECE != 0))
		return "a table's pieces do not cover its length";
	if (!t->n_pieces)
		return z_len ? "a table's pieces do not cover its bytes" : NULL;
	if (t->ends[0] != 0 || t->ends[t->n_pieces] != z_len)
		return "a table's pieces do not cover its bytes";
	for (uint64_t k = 0; k < t->n_pieces; k++)
		/* deflate shrinks at most about 1032 to 1 */
		if (t->ends[k + 1] <= t->ends[k] ||
		    tm_table_piece_len(t, k) > (t->ends[k + 1] - t->ends[k]) * 1032 + 64)
			return "a table's pieces are out of order";
	return NULL;
}

size_t tm_table_mem(const struct tm_table *t)
{
	return (size_t)(t->n_pieces ? t->ends[t->n_pieces] : 0) +
	       (size_t)(t->n_pieces + 1) * sizeof(*t->ends);
}

void tm_table_free(struct tm_table *t)
{
	free(t->ends);
	free(t->z);
	free(t->piece);
	memset(t, 0, sizeof(*t));
}
