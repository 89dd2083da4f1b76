/* Index files in the cache folder: see index_file.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <zlib.h>

#include "tracemount/build_id.h"
#include "tracemount/format.h"
#include "tracemount/compress.h"
#include "tracemount/derive.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/table.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

#include "index_store.h"

#define MAGIC "TMINDEX\n"

/* Written as it is: the files are for machines of one byte order (the magic number below
 * tells the others apart). A file is this header, then its body: the trace's path
 * (trace_len bytes, no NUL), the rows, the record pass's errors, the products built, the
 * table views, the access points, their windows and the CRC-32s of the decompressed pieces.
 * stats.json and errors.txt are not stored: they are composed from the parts when read. */
struct file_header {
	char magic[8];
	uint32_t version, header_size;
	uint64_t byte_order; /* 0x0102030405060708 */
	char format[32];
	char build[TM_BUILD_KEY_LEN]; /* tm_build_key() of the build that wrote it */
	struct tm_trace_key key;
	uint64_t layout; /* fingerprint of the format's records and views */
	uint32_t n_views, n_classes, state_words, row_words;
	uint64_t n_rows, raw_size, record_n_errors, record_n_notes;
	uint64_t tags[TM_FLAG_BITS];
	uint32_t truncated, codec; /* codec: compress.h's id, 0 for none */
	uint64_t record_errors_len;
	uint32_t products, pad;	       /* the products built, bit p: their part follows */
	uint64_t products_len;	       /* per product: 5 words (PRODUCT_WORDS), its JSON, errors */
	uint64_t n_tables, tables_len; /* the tables not empty, each: slot, length, pieces, bytes */
	uint64_t gz_points, gz_windows_len, gz_in_size, gz_out_size, gz_pieces;
	uint64_t trace_len;
	uint64_t body_len;
	uint32_t body_crc, header_crc;
};

/* A product's words in its part: streams, problems, notes, JSON bytes, errors bytes. */
#define PRODUCT_WORDS 5
/* A table's words before its pieces' ends: slot, length, pieces, compressed bytes. */
#define TABLE_WORDS 4

static uint32_t crc(const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc32_z(0, NULL, 0), p, n);
}

int tm_trace_key_of(struct tm_source *src, struct tm_trace_key *key)
{
	struct stat st;
	memset(key, 0, sizeof(*key));
	if (src->ops->identity) {
		struct timespec mtime;
		src->ops->identity(src, &key->size, &mtime);
		key->mtime_sec = mtime.tv_sec;
		key->mtime_nsec = mtime.tv_nsec;
	} else {
		if (fstat(src->fd, &st) < 0)
			return -errno;
		key->size = (uint64_t)st.st_size;
		key->mtime_sec = st.st_mtim.tv_sec;
		key->mtime_nsec = st.st_mtim.tv_nsec;
	}
	uint8_t *buf = malloc(TM_KEY_BLOCK);
	if (!buf)
		return -ENOMEM;
	uint64_t ends[2] = {0, key->size > TM_KEY_BLOCK ? key->size - TM_KEY_BLOCK : 0};
	uint32_t sums[2];
	int err = 0;
	for (int i = 0; i < 2 && !err; i++) {
		ssize_t n = tm_source_read(src, buf, TM_KEY_BLOCK, ends[i]);
		if (n < 0)
			err = (int)n;
		else
			sums[i] = crc(buf, (size_t)n);
	}
	free(buf);
	if (!err)
		key->hash = (uint64_t)sums[0] << 32 | sums[1];
	return err;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return s ? tm_fnv1a(h, s, strlen(s) + 1) : tm_fnv1a(h, "", 1);
}

/* What an index of fmt looks like, whatever the trace's name: a file written by a version of
 * tracemount whose format has other records, classes or views is foreign. */
static uint64_t layout_of(const struct tm_format *fmt, const struct tm_view_table *views)
{
	uint64_t h = fnv_str(TM_FNV_START, fmt->name);
	uint64_t sizes[] = {
	    TM_INDEX_FILE_VERSION, fmt->record_size, fmt->state_size,	     fmt->chunk_records,
	    fmt->n_classes,	   fmt->n_tags,	     fmt->n_extra_views,     fmt->common_classes,
	    views->n_record_views, views->n_tables,  views->n_stream_tables,
	};
	h = tm_fnv1a(h, sizes, sizeof(sizes));
	for (unsigned c = 0; c < fmt->n_classes; c++)
		h = fnv_str(h, fmt->classes[c]);
	for (unsigned b = 0; b < fmt->n_tags; b++)
		h = fnv_str(h, fmt->tags[b]);
	for (unsigned i = 0; i < fmt->n_extra_views; i++) {
		h = fnv_str(h, fmt->extra_views[i].path);
		h = tm_fnv1a(h, &fmt->extra_views[i].class_mask, sizeof(uint64_t));
	}
	for (unsigned k = 0; k < fmt->n_table_views; k++)
		h = fnv_str(h, fmt->table_views[k]);
	h = fnv_str(h, fmt->class_ext);
	return fnv_str(h, fmt->group_view);
}

void tm_index_file_name(const struct tm_format *fmt, const struct tm_trace_key *key, char *buf,
			size_t len)
{
	uint64_t h = tm_fnv1a(TM_FNV_START, fmt->name, strlen(fmt->name) + 1);
	h = tm_fnv1a(h, key, sizeof(*key));
	snprintf(buf, len, "%016" PRIx64 ".tmi", h);
}

static size_t rows_bytes(const struct file_header *h)
{
	return (size_t)(h->n_rows * h->row_words * sizeof(uint64_t));
}

static size_t points_bytes(const struct file_header *h)
{
	return h->codec ? (size_t)(h->gz_points + 1) * sizeof(struct tm_zpoint) : 0;
}

static size_t piece_crcs_bytes(const struct file_header *h)
{
	return h->codec ? (size_t)h->gz_pieces * sizeof(uint32_t) : 0;
}

static bool table_empty(const struct tm_table *t)
{
	return !t->len && !t->n_pieces;
}

/* The table views' part of a file: for each table not empty, its slot, its length, its number
 * of pieces and their compressed length, the pieces' ends, then the pieces (table.h). */
static uint8_t *tables_part(const struct tm_index *ix, uint64_t *len, uint64_t *count)
{
	uint64_t n = 0;
	*count = 0;
	for (uint32_t k = 0; ix->tables && k < ix->n_tables; k++) {
		const struct tm_table *t = &ix->tables[k];
		if (table_empty(t))
			continue;
		n +=
		    TABLE_WORDS * sizeof(uint64_t) +
		    (t->n_pieces ? (t->n_pieces + 1) * sizeof(uint64_t) + t->ends[t->n_pieces] : 0);
		++*count;
	}
	uint8_t *p = malloc(n + 1), *at = p;
	for (uint32_t k = 0; p && ix->tables && k < ix->n_tables; k++) {
		const struct tm_table *t = &ix->tables[k];
		if (table_empty(t))
			continue;
		uint64_t z_len = t->n_pieces ? t->ends[t->n_pieces] : 0;
		uint64_t head[TABLE_WORDS] = {k, t->len, t->n_pieces, z_len};
		memcpy(at, head, sizeof(head));
		at += sizeof(head);
		if (!t->n_pieces)
			continue;
		memcpy(at, t->ends, (t->n_pieces + 1) * sizeof(uint64_t));
		at += (t->n_pieces + 1) * sizeof(uint64_t);
		memcpy(at, t->z, z_len);
		at += z_len;
	}
	*len = n;
	return p;
}

/* The products' part: for each product built, in order, its words and texts. */
static uint8_t *products_part(const struct tm_index *ix, uint64_t *len)
{
	uint64_t n = 0;
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		if (ix->products >> p & 1)
			n += PRODUCT_WORDS * sizeof(uint64_t) + strlen(ix->product[p].json) +
			     ix->product[p].errors_len;
	uint8_t *part = malloc(n + 1), *at = part;
	for (unsigned p = 0; part && p < TM_MAX_PRODUCTS; p++) {
		const struct tm_index_product *pr = &ix->product[p];
		if (!(ix->products >> p & 1))
			continue;
		uint64_t words[PRODUCT_WORDS] = {pr->streams, pr->n_errors, pr->n_notes,
						 strlen(pr->json), pr->errors_len};
		memcpy(at, words, sizeof(words));
		memcpy(at + sizeof(words), pr->json, words[3]);
		memcpy(at + sizeof(words) + words[3], pr->errors, words[4]);
		at += sizeof(words) + words[3] + words[4];
	}
	*len = n;
	return part;
}

/* The body's length as the header's sizes give it. */
static uint64_t body_bytes(const struct file_header *h)
{
	return h->trace_len + rows_bytes(h) + h->record_errors_len + h->products_len +
	       h->tables_len + points_bytes(h) + h->gz_windows_len + piece_crcs_bytes(h);
}

static void fill_header(struct file_header *h, const struct tm_format *fmt,
			const struct tm_view_table *views, const struct tm_trace_key *key,
			const struct tm_index *ix, uint64_t trace_len)
{
	memcpy(h->magic, MAGIC, 8);
	h->version = TM_INDEX_FILE_VERSION;
	h->header_size = sizeof(*h);
	h->byte_order = 0x0102030405060708ull;
	snprintf(h->format, sizeof(h->format), "%s", fmt->name);
	snprintf(h->build, sizeof(h->build), "%s", tm_build_key());
	h->key = *key;
	h->layout = layout_of(fmt, views);
	h->n_views = ix->n_views;
	h->n_classes = ix->n_classes;
	h->state_words = ix->state_words;
	h->row_words = ix->row_words;
	h->n_rows = ix->n_rows;
	h->raw_size = ix->raw_size;
	h->record_n_errors = ix->record_n_errors;
	h->record_n_notes = ix->record_n_notes;
	memcpy(h->tags, ix->tags, sizeof(h->tags));
	h->truncated = ix->truncated;
	h->record_errors_len = ix->record_errors_len;
	h->products = ix->products;
	if (ix->z) {
		h->codec = ix->z->codec->id;
		h->gz_points = ix->z->n_points;
		h->gz_windows_len = ix->z->windows_len;
		h->gz_in_size = ix->z->in_size;
		h->gz_out_size = ix->z->out_size;
		h->gz_pieces = ix->z->n_piece_crcs;
	}
	h->trace_len = trace_len;
	h->body_len = body_bytes(h);
}

int tm_index_file_store_trace(const struct tm_index_store *s, const struct tm_format *fmt,
			      const struct tm_view_table *views, const struct tm_trace_key *key,
			      const struct tm_index *ix, const char *trace)
{
	struct file_header h = {0};
	char name[32];
	size_t trace_len = trace ? strlen(trace) : 0;
	if (trace_len >= PATH_MAX)
		trace_len = 0; /* no path a reader could hold: unknown */
	uint8_t *tables = tables_part(ix, &h.tables_len, &h.n_tables);
	uint8_t *products = products_part(ix, &h.products_len);
	int err = -ENOMEM;
	if (!tables || !products)
		goto out;
	fill_header(&h, fmt, views, key, ix, trace_len);
	const struct {
		const void *p;
		size_t n;
	} parts[] = {
	    {trace, trace_len},
	    {ix->rows, rows_bytes(&h)},
	    {ix->record_errors, h.record_errors_len},
	    {products, h.products_len},
	    {tables, h.tables_len},
	    {ix->z ? ix->z->points : NULL, points_bytes(&h)},
	    {ix->z ? ix->z->windows : NULL, h.gz_windows_len},
	    {ix->z ? ix->z->piece_crcs : NULL, piece_crcs_bytes(&h)},
	};
	uLong sum = crc32_z(0, NULL, 0);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		if (parts[i].n)
			sum = crc32_z(sum, parts[i].p, parts[i].n);
	h.body_crc = (uint32_t)sum;
	h.header_crc = crc(&h, sizeof(h));

	tm_index_file_name(fmt, key, name, sizeof(name));
	struct iovec iov[ARRAY_SIZE(parts) + 1] = {{&h, sizeof(h)}};
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		iov[i + 1] = (struct iovec){(void *)parts[i].p, parts[i].n};
	err = tm_index_store_write(s, name, iov, ARRAY_SIZE(iov));
out:
	free(tables);
	free(products);
	return err;
}

int tm_index_file_store(const struct tm_index_store *s, const struct tm_format *fmt,
			const struct tm_view_table *views, const struct tm_trace_key *key,
			const struct tm_index *ix)
{
	return tm_index_file_store_trace(s, fmt, views, key, ix, NULL);
}

/* The header's own fields: NULL when it is a sound header of this build's, else why not.
 * *stale is set when it is sound but was written by another build. */
static const char *check_frame(const struct file_header *h, bool *stale)
{
	struct file_header copy = *h;
	copy.header_crc = 0;
	*stale = false;
	if (memcmp(h->magic, MAGIC, 8) != 0)
		return "not an index file";
	if (h->byte_order != 0x0102030405060708ull)
		return "written on a machine of another byte order";
	if (h->version != TM_INDEX_FILE_VERSION || h->header_size != sizeof(*h)) {
		*stale = true;
		return "written by another build (index file format version differs)";
	}
	if (crc(&copy, sizeof(copy)) != h->header_crc)
		return "header checksum mismatch";
	if (memchr(h->format, '\0', sizeof(h->format)) == NULL)
		return "malformed format name";
	if (memchr(h->build, '\0', sizeof(h->build)) == NULL)
		return "malformed build key";
	if (strcmp(h->build, tm_build_key()) != 0) {
		*stale = true;
		return "written by another build";
	}
	return NULL;
}

/* The header's fields against what this trace and format expect; NULL when all agree. *stale
 * is set when the file is sound but was written by another build. */
static const char *check_header(const struct file_header *h, const struct tm_format *fmt,
				const struct tm_view_table *views, const struct tm_trace_key *key,
				uint64_t file_size, bool *stale)
{
	const char *bad = check_frame(h, stale);
	if (bad)
		return bad;
	if (strcmp(h->format, fmt->name) != 0)
		return "written for another format";
	if (memcmp(&h->key, key, sizeof(*key)) != 0)
		return "written for other content";
	if (h->layout != layout_of(fmt, views))
		return "written for another layout of the format's views";
	if (h->n_views != views->n_record_views || h->n_classes != fmt->n_classes ||
	    h->state_words != (fmt->state_size + 7) / 8 ||
	    h->row_words != TM_ROW_VIEWS + h->n_views + h->n_classes + h->state_words)
		return "row layout differs";
	if (h->codec && !tm_codec_by_id(h->codec))
		return "written for an unknown compression";
	if (!h->n_rows || h->n_rows > file_size / 8 || h->gz_points > file_size ||
	    h->record_errors_len > file_size || h->products_len > file_size ||
	    h->gz_windows_len > file_size || h->gz_pieces > file_size ||
	    h->tables_len > file_size || h->trace_len >= PATH_MAX)
		return "sizes out of range";
	if (h->products & ~tm_products_of(fmt) || h->n_tables > tm_view_table_slots(views))
		return "products or table views out of range";
	uint64_t body = body_bytes(h);
	if (body != h->body_len || file_size != sizeof(*h) + body)
		return "truncated or overlong";
	return NULL;
}

/* One table view from *p, which it advances, with *left bytes of the part left, into its slot
 * of ix. Returns 0, -EBADMSG with what is wrong in *bad, or -ENOMEM. */
static int take_table(struct tm_index *ix, const uint8_t **p, uint64_t *left, const char **bad)
{
	uint64_t head[TABLE_WORDS];
	*bad = "table views do not fit their part";
	if (*left < sizeof(head))
		return -EBADMSG;
	memcpy(head, *p, sizeof(head));
	*p += sizeof(head);
	*left -= sizeof(head);
	if (head[0] >= ix->n_tables || ix->tables[head[0]].len || ix->tables[head[0]].n_pieces) {
		*bad = "table views out of range";
		return -EBADMSG;
	}
	struct tm_table *t = &ix->tables[head[0]];
	t->len = head[1];
	t->n_pieces = head[2];
	if (t->n_pieces && (t->n_pieces >= *left / sizeof(uint64_t) ||
			    head[3] > *left - (t->n_pieces + 1) * sizeof(uint64_t)))
		return -EBADMSG;
	if (t->n_pieces) {
		size_t ends = (t->n_pieces + 1) * sizeof(uint64_t);
		if (!(t->ends = malloc(ends)) || !(t->z = malloc(head[3] + 1))) {
			*bad = NULL;
			return -ENOMEM;
		}
		memcpy(t->ends, *p, ends);
		memcpy(t->z, *p + ends, head[3]);
		*p += ends + head[3];
		*left -= ends + head[3];
	}
	*bad = tm_table_check(t, head[3]);
	return *bad ? -EBADMSG : 0;
}

/* The table views from their part of a body, into slots tm_view_table_slots(views) of ix.
 * Returns 0, -EBADMSG with what is wrong in *bad, or -ENOMEM. */
static int take_tables(const struct file_header *h, const struct tm_view_table *views,
		       const uint8_t *p, struct tm_index *ix, const char **bad)
{
	uint64_t left = h->tables_len;
	*bad = NULL;
	if (!h->products && !h->n_tables && !left)
		return 0; /* no product built: no tables yet */
	ix->n_tables = tm_view_table_slots(views);
	if (!(ix->tables = calloc(ix->n_tables + 1, sizeof(*ix->tables))))
		return -ENOMEM;
	for (uint64_t k = 0; k < h->n_tables; k++) {
		int err = take_table(ix, &p, &left, bad);
		if (err)
			return err;
	}
	if (left)
		*bad = "table views do not fit their part";
	return left ? -EBADMSG : 0;
}

/* The products from their part of a body. Returns 0, -EBADMSG with what is wrong in *bad, or
 * -ENOMEM. */
static int take_products(const struct file_header *h, const uint8_t *p, struct tm_index *ix,
			 const char **bad)
{
	uint64_t left = h->products_len;
	for (unsigned k = 0; k < TM_MAX_PRODUCTS; k++) {
		struct tm_index_product *pr = &ix->product[k];
		uint64_t w[PRODUCT_WORDS];
		if (!(h->products >> k & 1))
			continue;
		*bad = "products do not fit their part";
		if (left < sizeof(w))
			return -EBADMSG;
		memcpy(w, p, sizeof(w));
		if (w[3] > left - sizeof(w) || w[4] > left - sizeof(w) - w[3] ||
		    (TM_MAX_STREAM_VIEWS < 64 && w[0] >> TM_MAX_STREAM_VIEWS))
			return -EBADMSG;
		*bad = NULL;
		if (!(pr->json = malloc(w[3] + 1)) || !(pr->errors = malloc(w[4] + 1)))
			return -ENOMEM;
		memcpy(pr->json, p + sizeof(w), w[3]);
		memcpy(pr->errors, p + sizeof(w) + w[3], w[4]);
		pr->json[w[3]] = pr->errors[w[4]] = '\0';
		pr->streams = w[0];
		pr->n_errors = w[1];
		pr->n_notes = w[2];
		pr->errors_len = w[4];
		ix->n_errors += w[1];
		ix->n_notes += w[2];
		p += sizeof(w) + w[3] + w[4];
		left -= sizeof(w) + w[3] + w[4];
	}
	*bad = left ? "products do not fit their part" : NULL;
	ix->products = h->products;
	return left ? -EBADMSG : 0;
}

/* The record part's fields from a checked header. */
static void take_record_fields(const struct file_header *h, const struct tm_format *fmt,
			       struct tm_index *ix)
{
	ix->fmt = fmt;
	ix->all_products = tm_products_of(fmt);
	ix->n_views = h->n_views;
	ix->n_classes = h->n_classes;
	ix->state_words = h->state_words;
	ix->row_words = h->row_words;
	ix->n_rows = h->n_rows;
	ix->raw_size = h->raw_size;
	ix->record_n_errors = ix->n_errors = h->record_n_errors;
	ix->record_n_notes = ix->n_notes = h->record_n_notes;
	memcpy(ix->tags, h->tags, sizeof(ix->tags));
	ix->truncated = h->truncated != 0;
	ix->record_errors_len = h->record_errors_len;
}

/* A compressed trace's access points from their part of a body. */
static int take_points(const struct file_header *h, const uint8_t *p, struct tm_index *ix)
{
	struct tm_zindex *gz = calloc(1, sizeof(*gz));
	if (!gz || !(gz->points = malloc(points_bytes(h))) ||
	    !(gz->windows = malloc(h->gz_windows_len + 1)) ||
	    !(gz->piece_crcs = malloc(piece_crcs_bytes(h) + 1))) {
		tm_zindex_free(gz);
		return -ENOMEM;
	}
	ix->z = gz;
	gz->codec = tm_codec_by_id(h->codec);
	memcpy(gz->points, p, points_bytes(h));
	memcpy(gz->windows, p + points_bytes(h), h->gz_windows_len);
	memcpy(gz->piece_crcs, p + points_bytes(h) + h->gz_windows_len, piece_crcs_bytes(h));
	gz->n_piece_crcs = h->gz_pieces;
	gz->n_points = h->gz_points;
	gz->windows_len = h->gz_windows_len;
	gz->in_size = h->gz_in_size;
	gz->out_size = h->gz_out_size;
	return 0;
}

/* Splits a checked body into ix's parts. Returns 0, -EBADMSG with what is wrong in *bad, or
 * -ENOMEM. */
static int take_body(const struct file_header *h, const struct tm_format *fmt,
		     const struct tm_view_table *views, const uint8_t *body, struct tm_index *ix,
		     const char **bad)
{
	take_record_fields(h, fmt, ix);
	size_t n_rows = rows_bytes(h);
	if (!(ix->rows = malloc(n_rows)) || !(ix->record_errors = malloc(h->record_errors_len + 1)))
		return -ENOMEM;
	memcpy(ix->rows, body, n_rows);
	memcpy(ix->record_errors, body + n_rows, h->record_errors_len);
	ix->record_errors[h->record_errors_len] = '\0'; /* sized texts, terminated for safety */
	const uint8_t *p = body + n_rows + h->record_errors_len;
	int err = take_products(h, p, ix, bad);
	p += h->products_len;
	if (!err)
		err = take_tables(h, views, p, ix, bad);
	p += h->tables_len;
	return err || !h->codec ? err : take_points(h, p, ix);
}

int tm_index_file_load(const struct tm_index_store *s, const struct tm_format *fmt,
		       const struct tm_view_table *views, const struct tm_trace_key *key,
		       struct tm_index **out, char *why, size_t why_len)
{
	char name[32];
	struct stat st;
	struct file_header h;
	uint8_t *body = NULL;
	struct tm_index *ix = NULL;
	const char *bad = NULL;
	bool stale = false;
	int err = 0;
	tm_index_file_name(fmt, key, name, sizeof(name));
	int fd = tm_index_store_open_file(tm_index_store_fd(s), name, sizeof(struct file_header),
					  &st, &bad);
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd < 0 && !bad)
		return tm_index_store_say(why, why_len, fd, "%s", strerror(-fd));
	if (bad)
		goto out;
	if ((err = tm_index_store_read_at(fd, &h, sizeof(h), 0)) != 0)
		goto out;
	if ((bad = check_header(&h, fmt, views, key, (uint64_t)st.st_size, &stale)))
		goto out;
	err = -ENOMEM;
	if (!(body = malloc(h.body_len + 1)) || !(ix = calloc(1, sizeof(*ix))))
		goto out;
	if ((err = tm_index_store_read_at(fd, body, h.body_len, sizeof(h))) != 0)
		goto out;
	if (crc(body, h.body_len) != h.body_crc) {
		bad = "body checksum mismatch";
		goto out;
	}
	if (memchr(body, '\0', h.trace_len)) {
		bad = "malformed trace path";
		goto out;
	}
	if ((err = take_body(&h, fmt, views, body + h.trace_len, ix, &bad)) == -EBADMSG) {
		err = 0;
	} else if (!err) {
		bad = tm_index_check(ix, fmt->chunk_records, key->size);
	}
	if (!err && !bad && ix->z)
		err = tm_zindex_pieces(ix->z);
	if (!err && !bad && (err = tm_index_compose(ix)) == -EBADMSG) {
		err = 0;
		bad = "a product's JSON does not parse";
	}
	if (!err && !bad) {
		*out = ix;
		ix = NULL;
	}
out:
	if (fd >= 0)
		close(fd);
	free(body);
	tm_index_free(ix);
	if (err == 1) /* the file ended before its size: it shrank as it was read */
		bad = "truncated or overlong";
	if (stale && h.version == TM_INDEX_FILE_VERSION)
		return tm_index_store_say(why, why_len, -ESTALE, "%s (%.*s; this is %s)", bad,
					  (int)sizeof(h.build), h.build, tm_build_key());
	if (bad)
		return tm_index_store_say(why, why_len, stale ? -ESTALE : -EBADMSG, "%s", bad);
	if (err)
		tm_index_store_say(why, why_len, err, "%s", strerror(-err));
	return err;
}

/* What info's file says of itself, from its header and its size (see index_file.h). */
static void describe(int dirfd, struct tm_index_file_info *info)
{
	struct stat st;
	struct file_header h;
	bool stale;
	int fd = tm_index_store_open_file(dirfd, info->name, sizeof(struct file_header), &st,
					  &info->problem);
	if (fd < 0 && !info->problem) {
		info->problem = "cannot be read";
		return;
	}
	if (fd >= 0) {
		info->size = (uint64_t)st.st_size;
		info->written = st.st_mtim;
	}
	if (info->problem)
		goto out;
	int r = tm_index_store_read_at(fd, &h, sizeof(h), 0);
	if (r != 0) {
		info->problem = r == 1 ? "truncated or overlong" : "cannot be read";
		goto out;
	}
	if ((info->problem = check_frame(&h, &stale))) {
		if (stale)
			info->problem = "out of date";
		if (!stale || h.version != TM_INDEX_FILE_VERSION)
			goto out; /* fields of another layout, or of no index file */
	}
	snprintf(info->format, sizeof(info->format), "%s", h.format);
	info->key = h.key;
	if (h.trace_len < PATH_MAX && h.trace_len <= (uint64_t)st.st_size - sizeof(h) &&
	    (r = tm_index_store_read_at(fd, info->trace, h.trace_len, sizeof(h))) == 0 &&
	    !memchr(info->trace, '\0', h.trace_len))
		info->trace[h.trace_len] = '\0';
	else
		info->trace[0] = '\0';
	if (info->problem)
		goto out;
	const struct tm_format *fmt = tm_format_find(h.format);
	const char *slash = strrchr(info->trace, '/');
	struct tm_view_table views;
	if (!fmt)
		info->problem = "written for a format this build does not know";
	else if (tm_view_table_init(&views, fmt, slash ? slash + 1 : "trace") < 0)
		info->problem = "cannot be checked (out of memory)";
	else {
		info->problem = check_header(&h, fmt, &views, &h.key, info->size, &stale);
		tm_view_table_free(&views);
	}
out:
	if (fd >= 0)
		close(fd);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_index_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 4 && n < sizeof(((struct tm_index_file_info *)0)->name) &&
	       !strchr(name, '/') && strcmp(name + n - 4, ".tmi") == 0;
}

int tm_index_store_list(struct tm_index_store *s,
			int (*fn)(void *arg, const struct tm_index_file_info *info), void *arg)
{
	int dirfd = tm_index_store_fd(s);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	struct dirent *e;
	errno = 0;
	while (!err && (e = readdir(d))) {
		if (!is_index_name(e->d_name))
			continue;
		if (n == cap) {
			char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));
			if (!more) {
				err = -ENOMEM;
				break;
			}
			names = more;
		}
		if (!(names[n] = strdup(e->d_name)))
			err = -ENOMEM;
		else
			n++;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	if (!err)
		qsort(names, n, sizeof(*names), by_string);
	struct tm_index_file_info *info = err ? NULL : malloc(sizeof(*info));
	if (!err && !info)
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		memset(info, 0, sizeof(*info));
		snprintf(info->name, sizeof(info->name), "%s", names[i]);
		describe(dirfd, info);
		err = fn(arg, info);
	}
	free(info);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

int tm_index_store_remove(struct tm_index_store *s, const char *name)
{
	if (!is_index_name(name))
		return -EINVAL;
	return unlinkat(tm_index_store_fd(s), name, 0) < 0 ? -errno : 0;
}
