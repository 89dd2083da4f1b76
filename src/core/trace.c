/* A trace's index, built once, and its chunks, decoded on demand. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "tracemount/chunk_cache.h"
#include "tracemount/context.h"
#include "tracemount/gzip.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"

/* Seconds between two progress lines of an index pass in the log. */
#define PROGRESS_LOG_SECONDS 2.0

struct build {
	struct tm_trace *t;
	struct tm_source *scan; /* of a gzip trace: progress counts compressed bytes */
	double start, next_log; /* monotonic seconds */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* n bytes for the log, in the unit of the larger size of (bytes below 1 MB, MB above, whole
 * from 10 MB on), without the unit; unit_of gives it. */
static void size_text(char *buf, size_t len, uint64_t n, uint64_t of)
{
	if (of < 1000000)
		snprintf(buf, len, "%" PRIu64, n);
	else
		snprintf(buf, len, "%.*f", of < 10000000 ? 1 : 0, (double)n / 1e6);
}

static const char *unit_of(uint64_t of)
{
	return of < 1000000 ? "bytes" : "MB";
}

static int build_progress(void *arg, uint64_t done, uint64_t total)
{
	struct build *b = arg;
	struct tm_context *ctx = b->t->ctx;
	if (b->scan)
		done = tm_gz_scan_position(b->scan);
	pthread_mutex_lock(&b->t->lock);
	b->t->progress_done = done;
	b->t->progress_total = total;
	pthread_mutex_unlock(&b->t->lock);
	/* the clock read at the builder's progress steps only, not per record */
	if (ctx && ctx->log && done < total && now_seconds() >= b->next_log) {
		char a[32], z[32];
		size_text(a, sizeof(a), done, total);
		size_text(z, sizeof(z), total, total);
		tm_context_log(ctx, LOG_INFO, "%s: indexing, %u%% (%s of %s %s)", b->t->path,
			       (unsigned)(done * 100 / total), a, z, unit_of(total));
		b->next_log = now_seconds() + PROGRESS_LOG_SECONDS;
	}
	return ctx && atomic_load(&ctx->stopping); /* unmounting: give up */
}

bool tm_trace_is_gzip(const struct tm_trace *t, struct tm_source *src)
{
	uint8_t head[TM_PROBE_HEAD_LEN];
	ssize_t n = tm_source_read(src, head, sizeof(head), 0);
	const char *slash = strrchr(t->path, '/');
	return n > 0 && tm_gz_detect(slash ? slash + 1 : t->path, head, (size_t)n);
}

/* stats.json's "source": the file's own name, escaped (tm_escape_name), the same whatever
 * the path it is reached by, in a mount or by tracemount cat. */
static char *source_name(const struct tm_trace *t)
{
	const char *slash = strrchr(t->path, '/');
	return tm_escape_name(slash ? slash + 1 : t->path);
}

/* One pass over the trace's bytes, decompressed on the way when they are gzip. */
static int build_pass(struct build *b, struct tm_source *src, const char *name,
		      struct tm_index **out)
{
	struct tm_trace *t = b->t;
	struct tm_source scan;
	if (!tm_trace_is_gzip(t, src))
		return tm_index_build(t->fmt, &t->views, src, name, build_progress, b, out);

	int err = tm_gz_scan_open(src, &scan);
	if (err)
		return err;
	b->scan = &scan;
	err = tm_index_build(t->fmt, &t->views, &scan, name, build_progress, b, out);
	if (!err && (err = tm_gz_scan_finish(&scan, &(*out)->gz)) < 0) {
		tm_index_free(*out);
		*out = NULL;
	}
	b->scan = NULL;
	tm_source_close(&scan);
	return err;
}

/* build_pass, said in the log: its start, its progress every few seconds, its end. */
static int build_index(struct tm_trace *t, struct tm_source *src, const char *name,
		       struct tm_index **out)
{
	struct tm_context *ctx = t->ctx;
	struct build b = {.t = t};
	char size[32];
	if (ctx && ctx->log) {
		b.start = now_seconds();
		b.next_log = b.start + PROGRESS_LOG_SECONDS;
		size_text(size, sizeof(size), src->size, src->size);
		tm_context_log(ctx, LOG_INFO, "%s: indexing, %s %s", t->path, size,
			       unit_of(src->size));
	}
	int err = build_pass(&b, src, name, out);
	if (ctx && ctx->log) {
		double took = now_seconds() - b.start;
		if (err)
			tm_context_log(ctx, LOG_INFO, "%s: indexing failed after %.1f s: %s",
				       t->path, took, strerror(-err));
		else
			tm_context_log(ctx, LOG_INFO, "%s: indexed in %.1f s", t->path, took);
	}
	return err;
}

void tm_file_identity_of(const struct stat *st, struct tm_file_identity *id)
{
	*id = (struct tm_file_identity){
	    .dev = st->st_dev,
	    .ino = st->st_ino,
	    .size = (uint64_t)st->st_size,
	    .mtime = st->st_mtim,
	    .ctime = st->st_ctim,
	    .mode = st->st_mode,
	    .uid = st->st_uid,
	    .gid = st->st_gid,
	    .nlink = st->st_nlink,
	};
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool tm_file_identity_same(const struct tm_file_identity *id, const struct stat *st)
{
	return id->dev == st->st_dev && id->ino == st->st_ino &&
	       id->size == (uint64_t)st->st_size && same_time(id->mtime, st->st_mtim) &&
	       same_time(id->ctime, st->st_ctim);
}

bool tm_file_identity_same_bytes(const struct tm_file_identity *id, const struct stat *st)
{
	if (id->dev != st->st_dev || id->ino != st->st_ino || id->size != (uint64_t)st->st_size ||
	    !same_time(id->mtime, st->st_mtim))
		return false;
	if (same_time(id->ctime, st->st_ctim))
		return true;
	/* the inode changed: only its links, owner or mode may explain it */
	return id->nlink != st->st_nlink || id->mode != st->st_mode || id->uid != st->st_uid ||
	       id->gid != st->st_gid;
}

bool tm_trace_unchanged(const struct tm_trace *t, struct tm_source *src)
{
	struct stat st;
	if (!t->has_identity || src->fd < 0)
		return true; /* a source without a file (a sum) does not change */
	return fstat(src->fd, &st) == 0 && tm_file_identity_same_bytes(&t->id, &st);
}

static void count(struct tm_context *ctx, uint64_t *counter)
{
	pthread_mutex_lock(&ctx->lock);
	(*counter)++;
	pthread_mutex_unlock(&ctx->lock);
}

/* The trace's absolute path, recorded in its index file for `tracemount index --list` and
 * `--prune`: under the context's root (a mount's SOURCE folder), else resolved from the
 * current folder (`tracemount index`). "" when it cannot be told. */
static void trace_path_of(const struct tm_trace *t, char *buf, size_t len)
{
	const char *root = t->ctx->root_path, *rel = t->path;
	buf[0] = '\0';
	if (!root) {
		char real[PATH_MAX];
		if (realpath(t->path, real))
			snprintf(buf, len, "%s", real);
		return;
	}
	size_t n = strlen(root);
	while (n && root[n - 1] == '/')
		n--;
	while (*rel == '/')
		rel++;
	if (!strcmp(rel, ".") || !*rel) /* the root itself: a single-trace mount's file */
		rel = NULL;
	int w = rel ? snprintf(buf, len, "%.*s/%s", (int)n, root, rel)
		    : snprintf(buf, len, "%.*s", (int)(n ? n : 1), n ? root : "/");
	if (w < 0 || (size_t)w >= len)
		buf[0] = '\0';
}

/* The index from the cache folder's index file, else built and written there. */
static int obtain_index(struct tm_trace *t, struct tm_source *src, const char *name,
			struct tm_index **out)
{
	struct tm_context *ctx = t->ctx;
	const struct tm_index_store *store = ctx ? ctx->store : NULL;
	struct tm_trace_key key;
	char why[256];
	if (!tm_trace_unchanged(t, src))
		return -ESTALE; /* replaced since it was seen: the next lookup sees the new one */
	bool keyed = store && tm_trace_key_of(src, &key) == 0;
	/* A file that changed while mounted is read again, whatever its index file says: the
	 * content key does not see a rewrite of its middle with its modification time put back,
	 * which the mount noticed by the inode change time. */
	if (keyed && !t->replaced && !ctx->force_rebuild) {
		int err = tm_index_file_load(store, t->fmt, &t->views, &key, out, why, sizeof(why));
		if (!err && (err = tm_index_set_source(*out, name)) < 0) {
			tm_index_free(*out);
			*out = NULL;
			snprintf(why, sizeof(why), "%s",
				 err == -EBADMSG ? "its stats.json does not parse"
						 : strerror(-err));
		}
		if (!err) {
			t->from_file = true;
			count(ctx, &ctx->n_loaded);
			return 0;
		}
		if (err == -ESTALE) {
			count(ctx, &ctx->n_stale);
			tm_context_log(ctx, LOG_NOTICE,
				       "%s: index file out of date, %s: indexing again", t->path,
				       why);
		} else if (err == -EBADMSG) {
			count(ctx, &ctx->n_refused);
			tm_context_log(ctx, LOG_WARNING,
				       "%s: index file refused (%s): indexing again", t->path, why);
		} else if (err != -ENOENT) { /* the system's trouble, not the file's */
			tm_context_log(ctx, LOG_WARNING,
				       "%s: cannot read its index file in %s: %s: indexing again",
				       t->path, store->dir, strerror(-err));
		}
	}
	int err = build_index(t, src, name, out);
	if (ctx)
		count(ctx, err ? &ctx->n_failed : &ctx->n_built);
	if (err || !keyed)
		return err;
	struct tm_trace_key after;
	if (tm_trace_key_of(src, &after) < 0 || memcmp(&after, &key, sizeof(key)) != 0)
		return 0; /* it changed while it was read: no file for an index of mixed bytes */
	char path[PATH_MAX];
	trace_path_of(t, path, sizeof(path));
	int stored = tm_index_file_store_trace(store, t->fmt, &t->views, &key, *out, path);
	if (stored < 0)
		tm_context_log(ctx, LOG_WARNING, "%s: cannot write its index file in %s: %s",
			       t->path, store->dir, strerror(-stored));
	return 0;
}

int tm_trace_index(struct tm_trace *t, struct tm_source *src, const struct tm_index **out)
{
	int err;

	int waited = 0;
	pthread_mutex_lock(&t->lock);
	while (t->state == TM_TRACE_INDEXING) {
		pthread_cond_wait(&t->changed, &t->lock);
		waited = 1;
	}
	if (t->state == TM_TRACE_INDEXED || (waited && t->state == TM_TRACE_FAILED)) {
		/* those who waited for a build share its outcome; a later call retries */
		err = t->error;
		if (!err)
			*out = t->index;
		pthread_mutex_unlock(&t->lock);
		return err;
	}
	t->state = TM_TRACE_INDEXING;
	t->progress_done = 0;
	t->progress_total = src->size;
	pthread_mutex_unlock(&t->lock);

	struct tm_index *ix = NULL;
	char *name = source_name(t);
	err = name ? obtain_index(t, src, name, &ix) : -ENOMEM;
	free(name);

	pthread_mutex_lock(&t->lock);
	t->error = err;
	if (err) {
		t->state = TM_TRACE_FAILED;
	} else {
		t->state = TM_TRACE_INDEXED;
		t->index = ix;
		*out = ix;
	}
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->lock);
	return err;
}

struct piece_load {
	struct tm_trace *trace;
	struct tm_source *src;
	const struct tm_gz_index *gz;
	uint64_t piece;
};

/* Decompresses one piece of a gzip trace into c->bytes. */
static int load_piece(void *arg, struct tm_cached_chunk *c)
{
	const struct piece_load *a = arg;
	size_t size =
	    (size_t)(tm_gz_piece_start(a->gz, a->piece + 1) - tm_gz_piece_start(a->gz, a->piece));
	if (!(c->bytes = malloc(size ? size : 1)))
		return -ENOMEM;
	c->mem = sizeof(*c) + size;
	c->len = size;
	char why[192] = "";
	int err =
	    tm_gz_inflate_piece(a->src, a->gz, a->piece, (uint8_t *)c->bytes, why, sizeof(why));
	if (err && *why) /* the index pass saw it whole: the file changed since */
		tm_context_log(a->trace->ctx, LOG_ERR,
			       "%s: decompressing from offset %" PRIu64 ": %s", a->trace->path,
			       tm_gz_piece_start(a->gz, a->piece), why);
	return err;
}

int tm_trace_piece(struct tm_context *ctx, struct tm_trace *t, const struct tm_index *ix,
		   struct tm_source *src, uint64_t piece, struct tm_cached_chunk **out)
{
	struct piece_load arg = {t, src, ix->gz, piece};
	return tm_chunk_cache_load(ctx->cache, tm_cache_owner(t->uid, TM_RAW_VIEW), piece,
				   load_piece, &arg, out);
}

ssize_t tm_trace_read(struct tm_context *ctx, struct tm_trace *t, const struct tm_index *ix,
		      struct tm_source *src, void *buf, size_t len, uint64_t off)
{
	if (!ix || !ix->gz)
		return tm_source_read(src, buf, len, off);
	size_t done = 0;
	while (done < len && off + done < ix->gz->out_size) {
		uint64_t k = tm_gz_piece_of(ix->gz, off + done);
		struct tm_cached_chunk *piece;
		int err = tm_trace_piece(ctx, t, ix, src, k, &piece);
		if (err)
			return err;
		size_t in = (size_t)(off + done - tm_gz_piece_start(ix->gz, k)),
		       n = piece->len - in;
		if (n > len - done)
			n = len - done;
		memcpy((char *)buf + done, piece->bytes + in, n);
		done += n;
		tm_chunk_cache_release(ctx->cache, piece);
	}
	return (ssize_t)done;
}

struct chunk_load {
	struct tm_context *ctx;
	struct tm_trace *t;
	const struct tm_index *ix;
	struct tm_source *src;
	uint64_t chunk;
};

/* Decodes a chunk from the trace bytes into c, restarting from its checkpoint. */
static int decode_chunk(void *arg, struct tm_cached_chunk *c)
{
	const struct chunk_load *a = arg;
	const struct tm_format *fmt = a->t->fmt;
	const struct tm_index *ix = a->ix;
	const uint64_t *row = tm_index_row(ix, a->chunk), *next = tm_index_row(ix, a->chunk + 1);
	uint64_t raw_off = row[TM_ROW_RAW_OFF], raw_end = next[TM_ROW_RAW_OFF];
	uint64_t expected = next[TM_ROW_RECORD] - row[TM_ROW_RECORD];
	uint64_t state[ix->state_words + 1];

	if (tm_cached_chunk_alloc(c, raw_end - raw_off, expected, fmt->record_size) < 0)
		return -ENOMEM;
	ssize_t got = tm_trace_read(a->ctx, a->t, ix, a->src, (void *)c->chunk.raw,
				    c->chunk.raw_len, raw_off);
	if (got < 0)
		return (int)got;
	if ((size_t)got != c->chunk.raw_len || !tm_trace_unchanged(a->t, a->src))
		return -EIO; /* the trace changed since it was indexed: old bytes or none */
	memcpy(state, tm_index_state(ix, a->chunk), ix->state_words * sizeof(uint64_t));

	size_t pos = 0, n_total = 0;
	while (n_total < expected) {
		struct tm_decode_in in = {
		    .buf = c->chunk.raw + pos,
		    .len = c->chunk.raw_len - pos,
		    .raw_off = raw_off + pos,
		    .at_eof = raw_end == ix->raw_size,
		};
		size_t n = 0, used = 0;
		char *recs = (char *)c->chunk.records + n_total * fmt->record_size;
		int r = fmt->decode(state, &in, recs, expected - n_total, &n, &used, NULL);
		if (r < 0 && r != -EAGAIN)
			return r;
		if (!n && !used)
			break;
		for (size_t i = 0; i < n; i++) /* make raw_rel relative to the chunk */
			((struct tm_record *)(recs + i * fmt->record_size))->raw_rel +=
			    (uint32_t)pos;
		pos += used;
		n_total += n;
	}
	if (n_total != expected)
		return -EIO; /* the bytes no longer decode as indexed */
	c->chunk.first_record = row[TM_ROW_RECORD];
	c->chunk.raw_off = raw_off;
	c->chunk.n_records = n_total;
	return 0;
}

int tm_trace_chunk(struct tm_context *ctx, struct tm_trace *t, const struct tm_index *ix,
		   struct tm_source *src, uint64_t chunk, struct tm_cached_chunk **out)
{
	struct chunk_load arg = {ctx, t, ix, src, chunk};
	return tm_chunk_cache_load(ctx->cache, t->uid, chunk, decode_chunk, &arg, out);
}

void tm_trace_chunk_release(struct tm_context *ctx, struct tm_cached_chunk *c)
{
	tm_chunk_cache_release(ctx->cache, c);
}

int tm_trace_status(struct tm_trace *t, char *buf, size_t len)
{
	char state[128];

	pthread_mutex_lock(&t->lock);
	switch (t->state) {
	case TM_TRACE_NEW: snprintf(state, sizeof(state), "not indexed\t-\t-"); break;
	case TM_TRACE_INDEXING:
		snprintf(state, sizeof(state), "indexing %u%%\t-\t-",
			 t->progress_total ? (unsigned)(t->progress_done * 100 / t->progress_total)
					   : 0);
		break;
	case TM_TRACE_INDEXED:
		snprintf(state, sizeof(state), "indexed\t%" PRIu64 "\t%zu",
			 tm_index_records(t->index), tm_index_mem(t->index));
		break;
	case TM_TRACE_FAILED:
		snprintf(state, sizeof(state), "error: %s\t-\t-", strerror(-t->error));
		break;
	}
	pthread_mutex_unlock(&t->lock);
	char *path = tm_escape_name(t->path);
	int n = snprintf(buf, len, "%s\t%s\t%s", path ? path : "?", t->fmt->name, state);
	free(path);
	return n;
}
