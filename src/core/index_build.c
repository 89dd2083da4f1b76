/* The index pass: one streaming read of the trace that decodes every record once, records a
 * checkpoint every chunk_records records, sizes every record view and gathers statistics. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/compress.h"
#include "tracemount/derive.h"
#include "tracemount/diag.h"
#include "tracemount/format.h"
#include "tracemount/index.h"
#include "tracemount/source.h"
#include "tracemount/stats_json.h"
#include "tracemount/table.h"
#include "tracemount/view.h"

#define READ_BLOCK	 (256u << 10)  /* bytes read at a time: stays in the L2 cache */
#define MAX_RECORD_BYTES (1024u << 20) /* a record needing more is an error */
#define BATCH_RECORDS	 4096
#define PROGRESS_STEP	 (16u << 20)

_Static_assert(sizeof(((struct tm_record *)0)->flags) * 8 == TM_FLAG_BITS,
	       "a flag bit of a record is one of TM_FLAG_BITS");

struct builder {
	const struct tm_format *fmt;
	const struct tm_view_table *views;
	struct tm_source *src;
	struct tm_index *ix;
	uint64_t rows_cap;
	uint64_t *cur;	    /* the running row: totals so far and the current decoder state */
	uint64_t *boundary; /* the row of a chunk that may start here */
	size_t *fixed;	    /* fixed[v * n_classes + c]: bytes per record, 0 when it varies */
	/* measured[c * n_views ...]: the views whose records of class c are measured one by
	 * one, n_measured[c] of them */
	unsigned *measured, *n_measured;
	const struct tm_view **record_views;
	/* group_col[g]: the column of group g's view (a copy of its records' bytes), or -1 */
	int group_col[TM_MAX_GROUPS];
	bool has_groups;
	/* with tm_format.group_ops: the bytes of a record of class c in a group view, else all 0
	 * (a copy of the record's raw_len bytes) */
	size_t group_fixed[TM_MAX_CLASSES];
	uint64_t tag_count[TM_FLAG_BITS]; /* records by flag bit, for the tags' class counts */
	void *stats;
	/* each deriver's state (NULL for one that does not apply to the trace), the
	 * instructions of one batch (of an instruction trace), and each deriver's object of
	 * stats.json */
	void **derived;
	const struct tm_images *images; /* handed to their init */
	struct tm_insn *insns;
	json_object **derived_json;
	unsigned n_derivers;
	uint32_t want;			       /* the products the pass builds (derive.h) */
	struct tm_diag diag;		       /* the record pass's problems */
	struct tm_diag pdiag[TM_MAX_PRODUCTS]; /* each product's */
	/* read buffer: buf[0] is trace offset buf_off; the decoder is at buf[pos] */
	uint8_t *buf;
	size_t cap, len, pos;
	uint64_t buf_off;
	int eof;
	const atomic_bool *cancel; /* set: the pass stops at its next batch */
};

static bool cancelled(const struct builder *b)
{
	return b->cancel && atomic_load_explicit(b->cancel, memory_order_relaxed);
}

static void *state_of(struct builder *b)
{
	return b->cur + TM_ROW_VIEWS + b->ix->n_views + b->ix->n_classes;
}

static int push_row(struct builder *b, const uint64_t *row)
{
	struct tm_index *ix = b->ix;
	if (ix->n_rows == b->rows_cap) {
		uint64_t cap = b->rows_cap ? b->rows_cap * 2 : 64;
		uint64_t *rows = realloc(ix->rows, cap * ix->row_words * sizeof(uint64_t));
		if (!rows)
			return -ENOMEM;
		ix->rows = rows;
		b->rows_cap = cap;
	}
	memcpy(ix->rows + ix->n_rows * ix->row_words, row, ix->row_words * sizeof(uint64_t));
	ix->n_rows++;
	return 0;
}

/* The state, initialised, of each deriver that applies to the trace (NULL for the others). */
static int derivers_setup(struct builder *b)
{
	while (tm_derivers[b->n_derivers])
		b->n_derivers++;
	b->derived = calloc(b->n_derivers + 1, sizeof(*b->derived));
	b->derived_json = calloc(b->n_derivers + 1, sizeof(*b->derived_json));
	bool insns = false; /* whether a deriver of instructions is built */
	for (unsigned k = 0; k < b->n_derivers; k++)
		insns |= (b->want & TM_PRODUCT_DERIVER(k)) && !tm_derivers[k]->add_records;
	if (insns && b->fmt->instruction)
		b->insns = malloc(BATCH_RECORDS * sizeof(*b->insns));
	if (!b->derived || !b->derived_json || (insns && b->fmt->instruction && !b->insns))
		return -ENOMEM;
	for (unsigned k = 0; k < b->n_derivers; k++) {
		const struct tm_deriver *d = tm_derivers[k];
		if (!tm_deriver_applies(d, b->fmt) || !(b->want & TM_PRODUCT_DERIVER(k)))
			continue;
		if (!(b->derived[k] = calloc(1, d->state_size + 1)))
			return -ENOMEM;
		int err = d->init ? d->init(b->derived[k], b->images, &b->pdiag[1 + k]) : 0;
		if (err)
			return err;
	}
	return 0;
}

static void derivers_free(struct builder *b)
{
	for (unsigned k = 0; b->derived && k < b->n_derivers; k++) {
		if (b->derived[k] && tm_derivers[k]->free)
			tm_derivers[k]->free(b->derived[k]);
		free(b->derived[k]);
	}
	for (unsigned k = 0; b->derived_json && k < b->n_derivers; k++)
		json_object_put(b->derived_json[k]);
	free(b->derived);
	free(b->derived_json);
	free(b->insns);
}

static int setup(struct builder *b)
{
	const struct tm_format *fmt = b->fmt;
	struct tm_index *ix = b->ix;
	unsigned nv = b->views->n_record_views, nc = fmt->n_classes;

	ix->n_views = nv;
	ix->n_classes = nc;
	ix->state_words = (uint32_t)((fmt->state_size + 7) / 8);
	ix->row_words = TM_ROW_VIEWS + nv + nc + ix->state_words;
	b->cur = calloc(ix->row_words, sizeof(uint64_t));
	b->boundary = calloc(ix->row_words, sizeof(uint64_t));
	b->fixed = calloc((size_t)nv * nc + 1, sizeof(size_t));
	b->measured = calloc((size_t)nv * nc + 1, sizeof(unsigned));
	b->n_measured = calloc(nc + 1, sizeof(unsigned));
	b->record_views = calloc(nv + 1, sizeof(*b->record_views));
	b->stats = calloc(1, fmt->stats_size + 1);
	b->cap = READ_BLOCK;
	b->buf = malloc(b->cap);
	if (!b->cur || !b->boundary || !b->fixed || !b->measured || !b->n_measured ||
	    !b->record_views || !b->stats || !b->buf)
		return -ENOMEM;
	for (unsigned g = 0; g < TM_MAX_GROUPS; g++)
		b->group_col[g] = -1;
	for (unsigned i = 0; i < b->views->n_views; i++) {
		const struct tm_view *v = &b->views->views[i];
		if (v->kind != TM_VIEW_RECORDS)
			continue;
		b->record_views[v->column] = v;
		if (v->group >= 0) { /* one view per group: sized by one lookup per record */
			if (v->group >= TM_MAX_GROUPS || (v->ops != &tm_raw_copy_ops &&
							  (!v->ops->fixed_len || v->ops->flag_len)))
				return -EINVAL;
			for (unsigned c = 0; v->ops != &tm_raw_copy_ops && c < nc; c++)
				if (!(b->group_fixed[c] = v->ops->fixed_len(c)))
					return -EINVAL;
			b->group_col[v->group] = (int)v->column;
			b->has_groups = true;
			continue;
		}
		for (unsigned c = 0; c < nc; c++) {
			/* a tag's view holds some records of each class: measured one by one */
			size_t len = v->flag_mask ? 0 : tm_view_fixed_len(fmt, v, c);
			b->fixed[v->column * nc + c] = len;
			if (!len && v->class_mask >> c & 1)
				b->measured[c * nv + b->n_measured[c]++] = v->column;
		}
	}
	int err = derivers_setup(b);
	if (err)
		return err;
	if (fmt->state_init)
		fmt->state_init(state_of(b));
	if (fmt->stats_init && b->want & TM_PRODUCT_STATS)
		return fmt->stats_init(b->stats);
	return 0;
}

/* Moves the undecoded bytes to the front and reads more, growing the buffer when a single
 * record needs more than it holds. */
static int refill(struct builder *b)
{
	if (b->pos == 0 && b->len == b->cap) {
		if (b->cap >= MAX_RECORD_BYTES)
			return -EFBIG;
		uint8_t *buf = realloc(b->buf, b->cap * 2);
		if (!buf)
			return -ENOMEM;
		b->buf = buf;
		b->cap *= 2;
	}
	memmove(b->buf, b->buf + b->pos, b->len - b->pos);
	b->buf_off += b->pos;
	b->len -= b->pos;
	b->pos = 0;
	size_t want = b->cap - b->len;
	ssize_t n = tm_source_read(b->src, b->buf + b->len, want, b->buf_off + b->len);
	if (n < 0)
		return (int)n;
	b->len += (size_t)n;
	b->eof = (size_t)n < want;
	return 0;
}

/* Adds a batch of decoded records to the running row and the statistics. Returns 0, or
 * -EPROTO for a record of a class the format does not have. */
static int account(struct builder *b, const struct tm_chunk *c)
{
	unsigned nc = b->fmt->n_classes, nv = b->ix->n_views;
	uint64_t counts[TM_MAX_CLASSES + 1] = {0}; /* the last counts invalid classes */
	uint64_t flagged[TM_MAX_CLASSES][TM_FLAG_BITS] = {{0}}; /* by class and flag bit */
	uint16_t any_flags = 0;
	uint64_t *view_off = b->cur + TM_ROW_VIEWS, *class_count = view_off + nv;

	for (size_t i = 0; i < c->n_records; i++) {
		const struct tm_record *r = tm_chunk_rec(c, i);
		unsigned k = r->cls < nc ? r->cls : TM_MAX_CLASSES;
		counts[k]++;
		any_flags |= r->flags;
		for (unsigned f = r->flags; f && k < nc; f &= f - 1)
			flagged[k][__builtin_ctz(f)]++;
	}
	if (counts[TM_MAX_CLASSES])
		return -EPROTO; /* a decoder gave a class its format does not have */
	for (size_t i = 0; b->has_groups && i < c->n_records; i++) {
		const struct tm_record *r = tm_chunk_rec(c, i);
		if (r->group < TM_MAX_GROUPS && b->group_col[r->group] >= 0)
			view_off[b->group_col[r->group]] +=
			    b->group_fixed[0] ? b->group_fixed[r->cls] : r->raw_len;
	}
	for (unsigned v = 0; v < nv; v++) {
		const struct tm_view *view = b->record_views[v];
		if (view->group >= 0)
			continue;
		const size_t *fixed = b->fixed + (size_t)v * nc;
		const int16_t *flag_len = view->ops->flag_len;
		for (unsigned k = 0; k < nc; k++) {
			if (!counts[k] || !fixed[k] || !(view->class_mask >> k & 1))
				continue;
			view_off[v] += counts[k] * fixed[k];
			for (unsigned f = any_flags; f && flag_len; f &= f - 1)
				view_off[v] += flagged[k][__builtin_ctz(f)] *
					       (uint64_t)(int64_t)flag_len[__builtin_ctz(f)];
		}
	}
	/* one walk over the records for every view that measures them */
	uint64_t varying = 0;
	for (unsigned k = 0; k < nc; k++)
		if (counts[k] && b->n_measured[k])
			varying |= 1ull << k;
	for (size_t i = 0; varying && i < c->n_records; i++) {
		const struct tm_record *r = tm_chunk_rec(c, i);
		const unsigned *views = b->measured + (size_t)r->cls * nv;
		for (unsigned j = 0; j < b->n_measured[r->cls]; j++) {
			const struct tm_view *view = b->record_views[views[j]];
			if (!view->flag_mask || (r->flags & view->flag_mask))
				view_off[views[j]] += view->ops->measure(c, i);
		}
	}
	for (unsigned f = any_flags; f; f &= f - 1)
		for (unsigned k = 0; k < nc; k++)
			b->tag_count[__builtin_ctz(f)] += flagged[k][__builtin_ctz(f)];
	for (unsigned k = 0; k < nc; k++)
		class_count[k] += counts[k];
	b->cur[TM_ROW_RECORD] += c->n_records;
	b->cur[TM_ROW_RAW_OFF] += c->raw_len;
	if (b->fmt->stats_update && b->want & TM_PRODUCT_STATS)
		b->fmt->stats_update(b->stats, c);
	return 0;
}

/* Feeds a batch of decoded records to the derivers: their records, or the instructions they
 * executed. */
static void feed_derivers(struct builder *b, const struct tm_chunk *c)
{
	size_t n = 0;
	for (size_t i = 0; b->insns && i < c->n_records; i++)
		n += b->fmt->instruction(c, i, &b->insns[n]);
	for (unsigned k = 0; k < b->n_derivers; k++) {
		const struct tm_deriver *d = tm_derivers[k];
		if (!b->derived[k])
			continue;
		if (d->add_records)
			d->add_records(b->derived[k], b->fmt, c);
		else
			d->add(b->derived[k], b->insns, n);
	}
}

/* The pass runs on three threads: a decoder thread runs the format's decode into a ring of
 * batches (the records, a copy of the bytes they came from, and the decoder's state where a
 * chunk starts), which the pass's own thread accounts in order (account: sizes and
 * statistics) while a deriver thread feeds the same batches, in order, to the derivers. They
 * share nothing but the ring, whose slot is free again once both took it: the decoder owns
 * the read buffer, the source and the decoder's state, the accounting thread the row and the
 * format's statistics, the deriver thread the derivers' states. */
#define RING_SLOTS 4

struct batch {
	void *recs;
	uint8_t *raw; /* a copy of the bytes the records were decoded from */
	size_t raw_cap, n, used;
	uint64_t raw_off, first_record;
	bool chunk_start; /* the first batch of a chunk: state is the decoder's before it */
	uint64_t *state;
};

struct ring {
	struct builder *b;
	pthread_mutex_t lock;
	pthread_cond_t filled, emptied;
	struct batch slot[RING_SLOTS];
	uint64_t made, taken, derived; /* batches made, accounted, derived: under the lock */
	bool done, stop;	       /* the decoder ended; the accounting thread gave up */
	int err;	 /* how the decoder ended: 0 at the end of the trace, or -errno */
	uint64_t *state; /* the decoder's running state */
	size_t state_bytes;
};

/* The next free slot, or NULL when the accounting thread stopped. */
static struct batch *free_slot(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	while (r->made - (r->taken < r->derived ? r->taken : r->derived) == RING_SLOTS && !r->stop)
		pthread_cond_wait(&r->emptied, &r->lock);
	struct batch *s = r->stop ? NULL : &r->slot[r->made % RING_SLOTS];
	pthread_mutex_unlock(&r->lock);
	return s;
}

static int publish(struct ring *r, struct batch *s, const struct tm_decode_in *in, size_t n,
		   size_t used, uint64_t first_record, bool chunk_start)
{
	if (used > s->raw_cap) {
		uint8_t *raw = realloc(s->raw, used);
		if (!raw)
			return -ENOMEM;
		s->raw = raw;
		s->raw_cap = used;
	}
	memcpy(s->raw, in->buf, used);
	s->n = n;
	s->used = used;
	s->raw_off = in->raw_off;
	s->first_record = first_record;
	s->chunk_start = chunk_start;
	pthread_mutex_lock(&r->lock);
	r->made++;
	pthread_cond_broadcast(&r->filled);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static void *decoder_thread(void *arg)
{
	struct ring *r = arg;
	struct builder *b = r->b;
	const struct tm_format *fmt = b->fmt;
	size_t in_chunk = 0;
	uint64_t records = 0;
	int err = 0;

	while (!err) {
		struct batch *s = free_slot(r);
		if (!s)
			break;
		if (cancelled(b)) {
			err = -ECANCELED;
			break;
		}
		/* at a chunk boundary the state before the batch is kept, for the chunk's row,
		 * which the accounting thread writes once a record shows that the chunk exists */
		bool boundary = in_chunk == fmt->chunk_records;
		if (boundary)
			memcpy(s->state, r->state, r->state_bytes);
		struct tm_decode_in in = {
		    .buf = b->buf + b->pos,
		    .len = b->len - b->pos,
		    .raw_off = b->buf_off + b->pos,
		    .at_eof = b->eof,
		};
		size_t max = fmt->chunk_records - (boundary ? 0 : in_chunk), n = 0, used = 0;
		if (max > BATCH_RECORDS)
			max = BATCH_RECORDS;
		int ret = fmt->decode(r->state, &in, s->recs, max, &n, &used, &b->diag);
		if (ret < 0 && ret != -EAGAIN) {
			err = ret;
			break;
		}
		if (used > in.len || n > max) {
			err = -EPROTO; /* the decoder broke its contract */
			break;
		}
		if (boundary && n)
			in_chunk = 0;
		if (n || used) {
			err = publish(r, s, &in, n, used, records, boundary && n);
			b->pos += used;
			in_chunk += n;
			records += n;
			continue;
		}
		if (b->eof)
			break; /* nothing more will come */
		err = refill(b);
	}
	pthread_mutex_lock(&r->lock);
	r->done = true;
	r->err = err;
	pthread_cond_broadcast(&r->filled);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* The next batch in order of a consumer whose count is *taken, or NULL once the decoder ended
 * and every batch was taken, or the accounting thread stopped. */
static struct batch *next_batch(struct ring *r, const uint64_t *taken)
{
	pthread_mutex_lock(&r->lock);
	while (*taken == r->made && !r->done && !r->stop)
		pthread_cond_wait(&r->filled, &r->lock);
	struct batch *s = *taken == r->made || r->stop ? NULL : &r->slot[*taken % RING_SLOTS];
	pthread_mutex_unlock(&r->lock);
	return s;
}

static void batch_done(struct ring *r, uint64_t *taken)
{
	pthread_mutex_lock(&r->lock);
	(*taken)++;
	pthread_cond_signal(&r->emptied);
	pthread_mutex_unlock(&r->lock);
}

/* The records of batch s, and their bytes, as the chunk account and the derivers take. */
static struct tm_chunk chunk_of(const struct builder *b, const struct batch *s)
{
	return (struct tm_chunk){
	    .first_record = s->first_record,
	    .raw_off = s->raw_off,
	    .raw = s->raw,
	    .raw_len = s->used,
	    .records = s->recs,
	    .n_records = s->n,
	    .record_size = b->fmt->record_size,
	};
}

static void *deriver_thread(void *arg)
{
	struct ring *r = arg;
	struct builder *b = r->b;
	struct batch *s;
	while ((s = next_batch(r, &r->derived))) {
		struct tm_chunk c = chunk_of(b, s);
		feed_derivers(b, &c);
		batch_done(r, &r->derived);
	}
	return NULL;
}

static int ring_init(struct ring *r, struct builder *b)
{
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->filled, NULL);
	pthread_cond_init(&r->emptied, NULL);
	r->b = b;
	r->state_bytes = b->ix->state_words * sizeof(uint64_t);
	if (!(r->state = malloc(r->state_bytes + 1)))
		return -ENOMEM;
	memcpy(r->state, state_of(b), r->state_bytes);
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		struct batch *s = &r->slot[i];
		if (!(s->recs = malloc(BATCH_RECORDS * b->fmt->record_size)) ||
		    !(s->state = malloc(r->state_bytes + 1)))
			return -ENOMEM;
	}
	return 0;
}

static void ring_free(struct ring *r)
{
	for (unsigned i = 0; i < RING_SLOTS; i++) {
		free(r->slot[i].recs);
		free(r->slot[i].raw);
		free(r->slot[i].state);
	}
	free(r->state);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->filled);
	pthread_cond_destroy(&r->emptied);
}

static int account_all(struct builder *b, struct ring *r, tm_progress_fn progress,
		       void *progress_arg)
{
	uint64_t chunk_start = 0, next_progress = PROGRESS_STEP;
	int err = 0;
	struct batch *s;
	while (!err && (s = next_batch(r, &r->taken))) {
		if (cancelled(b)) {
			err = -ECANCELED;
			break;
		}
		if (s->chunk_start) {
			memcpy(b->boundary, b->cur, b->ix->row_words * sizeof(uint64_t));
			memcpy(b->boundary + (b->ix->row_words - b->ix->state_words), s->state,
			       r->state_bytes);
			if ((err = push_row(b, b->boundary)) < 0)
				break;
			chunk_start = b->boundary[TM_ROW_RAW_OFF];
		}
		struct tm_chunk c = chunk_of(b, s);
		if ((err = account(b, &c)) < 0)
			break;
		batch_done(r, &r->taken);
		if (b->cur[TM_ROW_RAW_OFF] - chunk_start > UINT32_MAX)
			err = -EFBIG; /* records locate their bytes by a 32-bit chunk offset */
		else if (progress && b->cur[TM_ROW_RAW_OFF] >= next_progress) {
			if (progress(progress_arg, b->cur[TM_ROW_RAW_OFF], b->src->size))
				err = -ECANCELED;
			next_progress = b->cur[TM_ROW_RAW_OFF] + PROGRESS_STEP;
		}
	}
	return err;
}

/* Ends the pass early: the decoder and the deriver thread stop at their next batch. */
static void stop_ring(struct ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->emptied);
	pthread_cond_broadcast(&r->filled);
	pthread_mutex_unlock(&r->lock);
}

static int decode_all(struct builder *b, tm_progress_fn progress, void *progress_arg)
{
	struct ring r = {0};
	pthread_t decoder, deriver;
	int err = push_row(b, b->cur);
	if (err)
		return err;
	if (!(err = ring_init(&r, b)))
		err = -pthread_create(&deriver, NULL, deriver_thread, &r);
	if (err) {
		ring_free(&r);
		return err;
	}
	if ((err = -pthread_create(&decoder, NULL, decoder_thread, &r)) == 0) {
		if ((err = account_all(b, &r, progress, progress_arg)) < 0)
			stop_ring(&r);
		pthread_join(decoder, NULL);
	} else {
		stop_ring(&r);
	}
	pthread_join(deriver, NULL); /* it takes every batch, unless stopped */
	if (!err)
		err = r.err;
	if (!err) /* the last row holds the decoder's state at the end */
		memcpy(state_of(b), r.state, r.state_bytes);
	ring_free(&r);
	return err;
}

/* The table views of the products built, each written through a stream that deflates it in
 * pieces (table.h): writers[k] for table k, made here for the tables of product p. */
static int product_writers(struct builder *b, FILE **writers, unsigned first, unsigned n)
{
	for (unsigned k = first; k < first + n; k++)
		if (!(writers[k] = tm_table_writer(&b->ix->tables[k])))
			return -ENOMEM;
	return 0;
}

/* Deriver k's views: its own, at tables own.., then those of each stream it shows, at
 * per_stream.. of the stream's tables. */
static int deriver_finish(struct builder *b, unsigned k, FILE **writers, unsigned own,
			  unsigned per_stream)
{
	const struct tm_deriver *d = tm_derivers[k];
	const struct tm_view_table *vt = b->views;
	struct tm_index_product *p = &b->ix->product[1 + k];
	FILE *out[TM_MAX_TABLES + TM_MAX_STREAM_VIEWS * TM_MAX_TABLES];
	unsigned n = 0;
	p->streams = d->n_stream_outputs ? d->streams(b->derived[k]) : 0;
	if (TM_MAX_STREAM_VIEWS < 64 && p->streams >> TM_MAX_STREAM_VIEWS)
		return -EINVAL; /* the deriver broke its contract */
	if (d->n_outputs > TM_MAX_TABLES || d->n_stream_outputs > TM_MAX_TABLES)
		return -EINVAL;
	int err = product_writers(b, writers, own, d->n_outputs);
	for (unsigned i = 0; i < d->n_outputs; i++)
		out[n++] = writers[own + i];
	for (unsigned s = 0; s < TM_MAX_STREAM_VIEWS && !err; s++) {
		if (!(p->streams >> s & 1))
			continue;
		unsigned at = vt->n_tables + s * vt->n_stream_tables + per_stream;
		err = product_writers(b, writers, at, d->n_stream_outputs);
		for (unsigned i = 0; i < d->n_stream_outputs; i++)
			out[n++] = writers[at + i];
	}
	if (!err && !(b->derived_json[k] = json_object_new_object()))
		err = -ENOMEM;
	return err ? err : d->finish(b->derived[k], out, b->derived_json[k], &b->pdiag[1 + k]);
}

/* The table views of the products the pass builds: the format's (its statistics'), then each
 * deriver's and its per-stream views, at their fixed places (tm_view_table_of). */
static int tables(struct builder *b)
{
	struct tm_index *ix = b->ix;
	const struct tm_view_table *vt = b->views;
	unsigned own = b->fmt->n_table_views, n = tm_view_table_slots(vt);
	if (vt->n_tables > TM_MAX_TABLES || vt->n_stream_tables > TM_MAX_TABLES)
		return -EINVAL;
	FILE **writers = calloc(n + 1, sizeof(*writers));
	if (!writers || (n && !(ix->tables = calloc(n, sizeof(*ix->tables))))) {
		free(writers);
		return -ENOMEM;
	}
	ix->n_tables = n;
	int err = 0;
	if (b->want & TM_PRODUCT_STATS && own && b->fmt->tables_finish &&
	    !(err = product_writers(b, writers, 0, own)))
		err = b->fmt->tables_finish(b->stats, writers);
	unsigned first = own, per_stream = 0;
	for (unsigned k = 0; k < b->n_derivers && !err; k++) {
		const struct tm_deriver *d = tm_derivers[k];
		if (!tm_deriver_applies(d, b->fmt))
			continue;
		if (b->derived[k])
			err = deriver_finish(b, k, writers, first, per_stream);
		first += d->n_outputs;
		per_stream += d->n_stream_outputs;
	}
	for (unsigned k = 0; k < n; k++) {
		int closed = writers[k] ? tm_table_finish(&ix->tables[k], writers[k]) : 0;
		err = err ? err : closed;
	}
	free(writers);
	return err;
}

/* obj as plain JSON text, taken by the product (obj is released). */
static int product_json(struct tm_index_product *p, json_object *obj)
{
	const char *text = obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN) : NULL;
	p->json = text ? strdup(text) : NULL;
	json_object_put(obj);
	return p->json ? 0 : -ENOMEM;
}

/* Product p's lines of errors.txt and its counts, from its diag. */
static int product_errors(struct tm_index_product *p, struct tm_diag *d)
{
	int err = tm_diag_finish(d);
	if (err)
		return err;
	p->errors = d->text ? d->text : strdup("");
	p->errors_len = d->len;
	p->n_errors = d->count;
	p->n_notes = d->notes;
	d->text = NULL;
	return p->errors ? 0 : -ENOMEM;
}

/* The products the pass built: their tables, their objects of stats.json, their errors. */
static int finish_products(struct builder *b)
{
	struct tm_index *ix = b->ix;
	int err = 0;
	if (!b->want)
		return 0; /* a record pass: no tables yet */
	if (b->want & TM_PRODUCT_STATS) {
		json_object *own = json_object_new_object();
		if (!own)
			return -ENOMEM;
		if (b->fmt->stats_finish &&
		    (err = b->fmt->stats_finish(b->stats, own, &b->pdiag[0])) < 0) {
			json_object_put(own);
			return err;
		}
		if ((err = product_json(&ix->product[0], own)) < 0)
			return err;
	}
	if ((err = tables(b)) < 0)
		return err;
	for (unsigned k = 0; k < b->n_derivers && !err; k++)
		if (b->derived[k]) {
			err = product_json(&ix->product[1 + k], b->derived_json[k]);
			b->derived_json[k] = NULL;
		}
	for (unsigned p = 0; p < TM_MAX_PRODUCTS && !err; p++)
		if (b->want >> p & 1) {
			err = product_errors(&ix->product[p], &b->pdiag[p]);
			ix->n_errors += ix->product[p].n_errors;
			ix->n_notes += ix->product[p].n_notes;
		}
	if (!err)
		ix->products = b->want;
	return err;
}

/* The record part's totals and its errors (the decoder's, the name's, the source's). */
static int finish_records(struct builder *b, const char *source_name)
{
	const struct tm_format *fmt = b->fmt;
	struct tm_index *ix = b->ix;
	ix->fmt = fmt;
	ix->all_products = tm_products_of(fmt);
	ix->raw_size = b->cur[TM_ROW_RAW_OFF];
	memcpy(ix->tags, b->tag_count, sizeof(ix->tags));
	if (!(ix->source = strdup(source_name)))
		return -ENOMEM;
	if (fmt->name_finish) {
		char stem[NAME_MAX + 1];
		fmt->name_finish(tm_codec_strip(source_name, stem), &b->diag);
	}
	if (b->src->ops->report)
		b->src->ops->report(b->src, &b->diag);
	int err = tm_diag_finish(&b->diag);
	if (err)
		return err;
	ix->record_n_errors = ix->n_errors = b->diag.count;
	ix->record_n_notes = ix->n_notes = b->diag.notes;
	ix->truncated = b->diag.truncated;
	ix->record_errors = b->diag.text ? b->diag.text : strdup("");
	ix->record_errors_len = b->diag.len;
	b->diag.text = NULL;
	return ix->record_errors ? push_row(b, b->cur) : -ENOMEM;
}

int tm_index_build(const struct tm_format *fmt, const struct tm_view_table *views,
		   struct tm_source *src, const char *source_name, tm_progress_fn progress,
		   void *progress_arg, struct tm_index **out)
{
	struct tm_index_pass pass = {
	    .products = tm_products_of(fmt), .progress = progress, .progress_arg = progress_arg};
	return tm_index_build_pass(fmt, views, src, source_name, &pass, out);
}

static void builder_free(struct builder *b)
{
	if (b->fmt->stats_free && b->stats && b->want & TM_PRODUCT_STATS)
		b->fmt->stats_free(b->stats);
	free(b->stats);
	derivers_free(b);
	tm_index_free(b->ix);
	tm_diag_free(&b->diag);
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		tm_diag_free(&b->pdiag[p]);
	free(b->buf);
	free(b->record_views);
	free(b->fixed);
	free(b->measured);
	free(b->n_measured);
	free(b->cur);
	free(b->boundary);
	malloc_trim(0); /* the pass's working memory goes back to the system, not to the heap */
}

int tm_index_build_pass(const struct tm_format *fmt, const struct tm_view_table *views,
			struct tm_source *src, const char *source_name,
			const struct tm_index_pass *pass, struct tm_index **out)
{
	static const struct tm_images none = {0};
	struct builder b = {.fmt = fmt,
			    .views = views,
			    .src = src,
			    .want = pass->products & tm_products_of(fmt),
			    .images = pass->images ? pass->images : &none,
			    .cancel = pass->cancel};
	int err = -ENOMEM;

	if (fmt->n_classes > TM_MAX_CLASSES || fmt->n_tags > TM_FLAG_BITS)
		return -EINVAL;
	tm_diag_init(&b.diag);
	for (unsigned p = 0; p < TM_MAX_PRODUCTS; p++)
		tm_diag_init(&b.pdiag[p]);
	if (!(b.ix = calloc(1, sizeof(*b.ix))))
		goto out;
	if ((err = setup(&b)) < 0)
		goto out;
	if ((err = decode_all(&b, pass->progress, pass->progress_arg)) < 0)
		goto out;
	err = -ECANCELED; /* the tables and statistics of a pass no one waits for are not made */
	if (cancelled(&b) || (err = finish_records(&b, source_name)) < 0 ||
	    (err = finish_products(&b)) < 0 || (err = tm_index_compose(b.ix)) < 0)
		goto out;
	if (pass->progress)
		pass->progress(pass->progress_arg, src->size, src->size);
	*out = b.ix;
	b.ix = NULL;
out:
	builder_free(&b);
	return err;
}
