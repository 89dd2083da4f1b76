/* Reading a view: locate the chunk through the index, render it once, copy from it. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/chunk_cache.h"
#include "tracemount/context.h"
#include "tracemount/format.h"
#include "tracemount/compress.h"
#include "tracemount/index.h"
#include "tracemount/readahead.h"
#include "tracemount/reader.h"
#include "tracemount/source.h"
#include "tracemount/table.h"
#include "tracemount/trace.h"

static const struct tm_view *view_of(const struct tm_reader *r)
{
	return tm_trace_view(r->ot.trace, r->view);
}

static struct tm_chunk_cache *cache_of(const struct tm_reader *r)
{
	return tm_context_cache(tm_trace_context(r->ot.trace));
}

/* Whether table view v exists in ot's index, once its product is built: a per-stream view
 * exists for the streams its product shows. */
static bool table_shown(const struct tm_open_trace *ot, const struct tm_view *v)
{
	return v->group < 0 ||
	       (v->group < 64 && ot->index->product[v->product].streams >> v->group & 1);
}

int tm_reader_open(struct tm_reader *r, const struct tm_open_trace *ot, unsigned view)
{
	memset(r, 0, sizeof(*r));
	if (!tm_trace_view(ot->trace, view))
		return -ENOENT;
	tm_trace_open(&r->ot, ot->trace, ot->src);
	r->ot.index = ot->index;
	r->view = view;
	const struct tm_view *v = view_of(r);
	int err = 0;
	/* a plain trace's raw bytes need no index; a compressed trace's size and spans do */
	if (!r->ot.index && (v->kind != TM_VIEW_RAW || tm_trace_is_compressed(&r->ot)))
		err = tm_trace_index(&r->ot);
	if (!err && v->products) /* a product's file: built first (derive.h) */
		err = tm_trace_products(&r->ot, v->products);
	if (!err && v->kind == TM_VIEW_TABLE && !table_shown(&r->ot, v))
		err = -ENOENT; /* a stream the trace does not show */
	if (err)
		tm_trace_close(&r->ot); /* a failed open holds nothing */
	return err;
}

void tm_reader_close(struct tm_reader *r)
{
	tm_trace_close(&r->ot);
	memset(r, 0, sizeof(*r));
}

uint64_t tm_reader_size(const struct tm_reader *r)
{
	const struct tm_view *v = view_of(r);
	const struct tm_index *ix = r->ot.index;
	switch (v->kind) {
	case TM_VIEW_RAW: return ix && ix->z ? ix->z->out_size : r->ot.src->size;
	case TM_VIEW_STATS: return ix->stats_len;
	case TM_VIEW_ERRORS: return ix->errors_len;
	case TM_VIEW_RECORDS: return tm_index_view_size(ix, v->column);
	case TM_VIEW_TABLE:
		return ix->tables ? ix->tables[tm_view_table_of(tm_trace_views(r->ot.trace), v)].len
				  : 0;
	}
	return 0;
}

int tm_view_size(const struct tm_open_trace *ot, unsigned view, uint64_t *size)
{
	struct tm_reader r;
	int err = tm_reader_open(&r, ot, view);
	if (!err)
		*size = tm_reader_size(&r);
	tm_reader_close(&r);
	return err;
}

int tm_view_exists(const struct tm_open_trace *ot, unsigned view)
{
	uint64_t size;
	const struct tm_view *v = tm_trace_view(ot->trace, view);
	if (!v)
		return 0;
	if (v->group < 0 && !v->hide_empty)
		return 1;
	int err = tm_view_size(ot, view, &size);
	if (v->kind == TM_VIEW_TABLE && err == -ENOENT) /* a stream the index does not show */
		return 0;
	if (v->kind == TM_VIEW_TABLE && !v->hide_empty) /* a per-stream view, even if empty */
		return err < 0 ? err : 1;
	return err < 0 ? err : size > 0;
}

struct render_load {
	const struct tm_reader *r;
	uint64_t chunk;
};

/* Renders one chunk of the reader's record view into c->bytes. */
static int load_rendered(void *arg, struct tm_cached_chunk *out)
{
	const struct render_load *a = arg;
	const struct tm_reader *r = a->r;
	const struct tm_view *v = view_of(r);
	const struct tm_index *ix = r->ot.index;
	const struct tm_format *fmt = tm_trace_format(r->ot.trace);
	uint64_t start = tm_index_view_off(ix, a->chunk, v->column);
	uint64_t size = tm_index_view_off(ix, a->chunk + 1, v->column) - start;
	struct tm_cached_chunk *cc;

	if (size > SIZE_MAX / 2)
		return -EFBIG;
	if (!(out->bytes = tm_cached_chunk_malloc(out, size + TM_RENDER_SLACK)))
		return -ENOMEM;
	int err = tm_trace_chunk(&r->ot, a->chunk, &cc);
	if (err)
		return err;
	const struct tm_chunk *c = &cc->chunk;
	size_t len = 0, fixed[TM_MAX_CLASSES];
	for (unsigned k = 0; k < TM_MAX_CLASSES; k++) /* spares a measure() per record */
		fixed[k] = k < fmt->n_classes ? tm_view_fixed_len(fmt, v, k) : 0;
	err = -EIO; /* a view whose records render to other than their indexed size */
	for (size_t i = 0; i < c->n_records; i++) {
		if (!tm_view_shows(v, tm_chunk_rec(c, i))) /* classes checked by index pass */
			continue;
		size_t n = tm_view_record_len(v, fixed, c, i);
		if (n > size - len)
			goto out;
		if (v->ops->render(c, i, out->bytes + len) != n)
			goto out;
		len += n;
	}
	if (len != size)
		goto out;
	out->len = len;
	err = 0;
out:
	tm_trace_chunk_release(&r->ot, cc);
	return err;
}

/* A reader's view in chunks: a record view's index chunks, a compressed trace's pieces for raw, or
 * a table view's pieces. */
static bool is_raw(const struct tm_reader *r)
{
	return view_of(r)->kind == TM_VIEW_RAW;
}

static const struct tm_table *table_of(const struct tm_reader *r)
{
	return view_of(r)->kind == TM_VIEW_TABLE
		   ? &r->ot.index->tables[tm_view_table_of(tm_trace_views(r->ot.trace), view_of(r))]
		   : NULL;
}

static uint64_t n_chunks(const struct tm_reader *r)
{
	if (table_of(r))
		return table_of(r)->n_pieces;
	return is_raw(r) ? tm_zindex_n_pieces(r->ot.index->z) : tm_index_chunks(r->ot.index);
}

static uint64_t chunk_start(const struct tm_reader *r, uint64_t k)
{
	if (table_of(r))
		return k * TM_TABLE_PIECE;
	return is_raw(r) ? tm_zindex_piece_start(r->ot.index->z, k)
			 : tm_index_view_off(r->ot.index, k, view_of(r)->column);
}

static int find_chunk(const struct tm_reader *r, uint64_t off, uint64_t *k)
{
	const struct tm_table *t = table_of(r);
	if (t) {
		*k = off / TM_TABLE_PIECE;
		return off < t->len ? 0 : -ERANGE;
	}
	if (!is_raw(r))
		return tm_index_find(r->ot.index, view_of(r)->column, off, k);
	if (off >= r->ot.index->z->out_size)
		return -ERANGE;
	*k = tm_zindex_piece_of(r->ot.index->z, off);
	return 0;
}

/* Inflates one piece of the reader's table view into c->bytes. */
static int inflate_table_piece(void *arg, struct tm_cached_chunk *c)
{
	const struct render_load *a = arg;
	const struct tm_table *t = table_of(a->r);
	size_t len = tm_table_piece_len(t, a->chunk);
	if (!(c->bytes = tm_cached_chunk_malloc(c, len)))
		return -ENOMEM;
	c->len = len;
	return tm_table_inflate(t, a->chunk, (uint8_t *)c->bytes);
}

/* Chunk k of r's view, from the cache, rendered (or inflated, or decompressed) if absent. */
static int view_chunk(const struct tm_reader *r, uint64_t k, struct tm_cached_chunk **out)
{
	if (is_raw(r))
		return tm_trace_piece(&r->ot, k, out);
	struct render_load arg = {r, k};
	return tm_chunk_cache_load(cache_of(r),
				   tm_cache_owner(tm_trace_owner(r->ot.trace), r->view), k,
				   table_of(r) ? inflate_table_piece : load_rendered, &arg, out);
}

static ssize_t read_memory(const char *data, size_t data_len, void *out, size_t size, uint64_t off)
{
	if (off >= data_len)
		return 0;
	if (size > data_len - off)
		size = data_len - (size_t)off;
	memcpy(out, data + off, size);
	return (ssize_t)size;
}

int tm_reader_render(const struct tm_reader *r, uint64_t chunk)
{
	struct tm_cached_chunk *cc;
	int err = view_chunk(r, chunk, &cc);
	if (!err)
		tm_chunk_cache_release(cache_of(r), cc);
	return err;
}

/* A read-ahead request's own reader: a copy of the streaming one, with its own handle on the
 * source and a reference on the trace, so that it outlives the reader's file. */
struct ahead {
	struct tm_reader reader;
	struct tm_source src;
};

static int ahead_render(void *arg, uint64_t chunk)
{
	return tm_reader_render(&((struct ahead *)arg)->reader, chunk);
}

static void ahead_release(void *arg)
{
	struct ahead *a = arg;
	tm_trace_close(&a->reader.ot);
	tm_source_close(&a->src);
	free(a);
}

static void request_ahead(const struct tm_reader *r, uint64_t first, uint64_t last)
{
	struct ahead *a = calloc(1, sizeof(*a));
	if (!a || tm_source_dup(r->ot.src, &a->src) < 0) {
		free(a);
		return;
	}
	/* field by field: r->next_off is another thread's atomic */
	tm_trace_open(&a->reader.ot, r->ot.trace, &a->src);
	a->reader.ot.index = r->ot.index;
	a->reader.view = r->view;
	struct tm_readahead_job job = {ahead_render, ahead_release, a, first, last};
	tm_readahead_request(tm_context_readahead(tm_trace_context(r->ot.trace)), &job);
}

/* A read that starts where the last one ended streams: have the chunks that the next read of
 * the same size will need, and at least the next two, rendered ahead on the read-ahead
 * thread, unless they are there. */
static void read_ahead(struct tm_reader *r, uint64_t off, uint64_t end, uint64_t last_chunk)
{
	uint64_t expected = atomic_exchange(&r->next_off, end), last = 0;
	if (off != expected || last_chunk + 1 >= n_chunks(r))
		return;
	uint64_t ahead = end + (end - off), size = tm_reader_size(r);
	/* at least two chunks ahead: the reader renders the next one while the worker renders
	 * the one after, so both cores decode */
	if (find_chunk(r, ahead < size ? ahead : size - 1, &last) < 0 || last < last_chunk + 2)
		last = last_chunk + 2;
	if (last >= n_chunks(r))
		last = n_chunks(r) - 1;
	uint64_t owner =
	    tm_cache_owner(tm_trace_owner(r->ot.trace), is_raw(r) ? TM_RAW_VIEW : r->view);
	if (!tm_chunk_cache_contains(cache_of(r), owner, last))
		request_ahead(r, last_chunk + 1, last);
}

/* Reads a view made of cached chunks: a record view, or a compressed trace's raw bytes. */
static ssize_t read_chunks(struct tm_reader *r, char *out, size_t size, uint64_t off)
{
	uint64_t chunk = 0;
	size_t done = 0;

	while (done < size) {
		struct tm_cached_chunk *cc;
		if (find_chunk(r, off + done, &chunk) < 0)
			break; /* end of the view */
		int err = view_chunk(r, chunk, &cc);
		if (err)
			return err; /* a short count would read as the view's end */
		size_t in = (size_t)(off + done - chunk_start(r, chunk)), n = cc->len - in;
		if (n > size - done)
			n = size - done;
		memcpy(out + done, cc->bytes + in, n);
		done += n;
		tm_chunk_cache_release(cache_of(r), cc);
	}
	if (done)
		read_ahead(r, off, off + done, chunk);
	return (ssize_t)done;
}

/* Reads a plain trace's own bytes, as they were when the view was opened. */
static ssize_t read_plain(struct tm_reader *r, void *out, size_t size, uint64_t off)
{
	struct tm_source *src = r->ot.src;
	if (off >= src->size)
		return 0;
	if (size > src->size - off)
		size = (size_t)(src->size - off);
	ssize_t n = tm_source_read(src, out, size, off);
	if (n >= 0 && ((size_t)n != size || !tm_trace_unchanged(&r->ot)))
		return -EIO; /* cut or rewritten since it was opened: not its bytes */
	return n;
}

ssize_t tm_reader_read(struct tm_reader *r, void *out, size_t size, uint64_t off)
{
	const struct tm_view *v = view_of(r);
	switch (v->kind) {
	case TM_VIEW_RAW:
		if (r->ot.index && r->ot.index->z)
			return read_chunks(r, out, size, off);
		return read_plain(r, out, size, off);
	case TM_VIEW_STATS:
		return read_memory(r->ot.index->stats_json, r->ot.index->stats_len, out, size, off);
	case TM_VIEW_ERRORS:
		return read_memory(r->ot.index->errors_txt, r->ot.index->errors_len, out, size,
				   off);
	case TM_VIEW_RECORDS: return read_chunks(r, out, size, off);
	case TM_VIEW_TABLE: return read_chunks(r, out, size, off);
	}
	return -EINVAL;
}
