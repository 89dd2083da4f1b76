/* The traces of one mount, found by path in a hash table, and format detection. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "tracemount/chunk_cache.h"
#include "tracemount/context.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/readahead.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"

int tm_context_new(size_t memory, struct tm_context **out)
{
	struct tm_context *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->table_size = 256;
	ctx->table = calloc(ctx->table_size, sizeof(*ctx->table));
	if (!ctx->table || tm_chunk_cache_new(memory, &ctx->cache) < 0 ||
	    tm_readahead_new(&ctx->readahead) < 0) {
		tm_chunk_cache_free(ctx->cache);
		free(ctx->table);
		free(ctx);
		return -ENOMEM;
	}
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->next_uid = 1;
	*out = ctx;
	return 0;
}

static void trace_free(struct tm_trace *t)
{
	tm_index_free(t->index);
	tm_view_table_free(&t->views);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->changed);
	free(t->path);
	free(t);
}

void tm_context_free(struct tm_context *ctx)
{
	if (!ctx)
		return;
	tm_readahead_free(ctx->readahead); /* first: its worker uses the cache and the traces */
	for (size_t i = 0; i < ctx->table_size; i++) {
		while (ctx->table[i]) {
			struct tm_trace *t = ctx->table[i];
			ctx->table[i] = t->hash_next;
			trace_free(t);
		}
	}
	for (unsigned i = 0; i < ctx->n_overrides; i++)
		free(ctx->overrides[i].glob);
	free(ctx->overrides);
	free(ctx->table);
	if (ctx->store)
		tm_index_store_close(ctx->store);
	free(ctx->store);
	free(ctx->root_path);
	tm_chunk_cache_free(ctx->cache);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

int tm_context_set_store(struct tm_context *ctx, const char *dir, bool parents, char *err,
			 size_t err_len)
{
	struct tm_index_store *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	int r = tm_index_store_open(s, dir, parents, err, err_len);
	if (r < 0) {
		free(s);
		return r;
	}
	ctx->store = s;
	return 0;
}

void tm_context_log(struct tm_context *ctx, int priority, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	if (!ctx->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ctx->log(priority, line);
}

int tm_context_add_override(struct tm_context *ctx, const char *spec)
{
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || !colon[1])
		return -EINVAL;
	const struct tm_format *fmt = tm_format_find(colon + 1);
	if (!fmt)
		return -ENOENT;
	struct tm_override *o = realloc(ctx->overrides, (ctx->n_overrides + 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	ctx->overrides = o;
	o[ctx->n_overrides].glob = strndup(spec, (size_t)(colon - spec));
	if (!o[ctx->n_overrides].glob)
		return -ENOMEM;
	o[ctx->n_overrides++].fmt = fmt;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static const struct tm_format *find_override(struct tm_context *ctx, const char *path)
{
	const char *name = base_name(path);
	for (unsigned i = 0; i < ctx->n_overrides; i++) {
		const char *glob = ctx->overrides[i].glob;
		int by_path = strchr(glob, '/') != NULL;
		if (fnmatch(glob, by_path ? path : name, by_path ? FNM_PATHNAME : 0) == 0)
			return ctx->overrides[i].fmt;
	}
	return NULL;
}

const struct tm_format *tm_context_detect_head(struct tm_context *ctx, const char *path,
					       const uint8_t *head, size_t head_len)
{
	const struct tm_format *fmt = find_override(ctx, path);
	return fmt ? fmt : tm_format_detect(base_name(path), head, head_len);
}

const struct tm_format *tm_context_detect(struct tm_context *ctx, int dirfd, const char *path)
{
	const struct tm_format *fmt = find_override(ctx, path);
	if (fmt)
		return fmt;
	/* the name alone decides most files: a listing then opens none of them */
	if (!tm_format_detect_needs_head(base_name(path)))
		return tm_format_detect(base_name(path), NULL, 0);

	uint8_t head[TM_PROBE_HEAD_LEN];
	ssize_t n = -1;
	int fd = tm_open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK);
	if (fd >= 0) {
		n = pread(fd, head, sizeof(head), 0);
		close(fd);
	}
	return tm_format_detect(base_name(path), n > 0 ? head : NULL, n > 0 ? (size_t)n : 0);
}

static size_t hash_path(const char *s, size_t table_size)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return (size_t)h & (table_size - 1);
}

static int table_grow(struct tm_context *ctx)
{
	size_t n = ctx->table_size * 2;
	struct tm_trace **table = calloc(n, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->table_size; i++) {
		while (ctx->table[i]) {
			struct tm_trace *t = ctx->table[i];
			ctx->table[i] = t->hash_next;
			size_t h = hash_path(t->path, n);
			t->hash_next = table[h];
			table[h] = t;
		}
	}
	free(ctx->table);
	ctx->table = table;
	ctx->table_size = n;
	return 0;
}

static struct tm_trace *trace_new(struct tm_context *ctx, const char *path,
				  const struct tm_format *fmt)
{
	struct tm_trace *t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path)) ||
	    tm_view_table_init(&t->views, fmt, base_name(path)) < 0) {
		if (t)
			free(t->path);
		free(t);
		return NULL;
	}
	t->fmt = fmt;
	t->ctx = ctx;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->changed, NULL);
	return t;
}

/* Takes t out of the table; it is freed at its last put. Under the lock. */
static void retire(struct tm_context *ctx, struct tm_trace *t)
{
	struct tm_trace **p = &ctx->table[hash_path(t->path, ctx->table_size)];
	while (*p != t)
		p = &(*p)->hash_next;
	*p = t->hash_next;
	ctx->n_traces--;
	t->retired = true;
	tm_chunk_cache_forget(ctx->cache, t->uid);
	if (!t->refs)
		trace_free(t);
}

int tm_context_trace_of(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
			const struct stat *st, struct tm_trace **out)
{
	int err = 0;
	pthread_mutex_lock(&ctx->lock);
	size_t h = hash_path(path, ctx->table_size);
	struct tm_trace *t = ctx->table[h];
	while (t && strcmp(t->path, path) != 0)
		t = t->hash_next;
	bool replaced = false;
	if (t && st && (t->fmt != fmt || !t->has_identity || !tm_file_identity_same(&t->id, st))) {
		tm_context_log(ctx, LOG_INFO, "%s changed: indexed anew", path);
		retire(ctx, t);
		t = NULL;
		replaced = true;
	}
	if (t && t->fmt != fmt) {
		err = -ESTALE; /* same path, now another format: the file was replaced */
		goto out;
	}
	if (!t) {
		if (ctx->n_traces >= ctx->table_size && table_grow(ctx) < 0) {
			err = -ENOMEM;
			goto out;
		}
		if (!(t = trace_new(ctx, path, fmt))) {
			err = -ENOMEM;
			goto out;
		}
		t->replaced = replaced;
		if (st) {
			t->has_identity = true;
			tm_file_identity_of(st, &t->id);
		}
		t->uid = ctx->next_uid++;
		h = hash_path(path, ctx->table_size);
		t->hash_next = ctx->table[h];
		ctx->table[h] = t;
		ctx->n_traces++;
	}
	t->refs++;
	*out = t;
out:
	pthread_mutex_unlock(&ctx->lock);
	return err;
}

int tm_context_trace(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
		     struct tm_trace **out)
{
	return tm_context_trace_of(ctx, path, fmt, NULL, out);
}

void tm_context_trace_put(struct tm_context *ctx, struct tm_trace *t)
{
	pthread_mutex_lock(&ctx->lock);
	if (!--t->refs && t->retired)
		trace_free(t);
	pthread_mutex_unlock(&ctx->lock);
}

void tm_context_trace_hold(struct tm_context *ctx, struct tm_trace *t)
{
	pthread_mutex_lock(&ctx->lock);
	t->refs++;
	pthread_mutex_unlock(&ctx->lock);
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp((*(struct tm_trace *const *)a)->path, (*(struct tm_trace *const *)b)->path);
}

int tm_context_status(struct tm_context *ctx, char **text, size_t *len)
{
	int err = -ENOMEM;
	char *buf = NULL;
	size_t used = 0, cap = 0;

	pthread_mutex_lock(&ctx->lock);
	struct tm_trace **all = malloc((ctx->n_traces + 1) * sizeof(*all));
	if (!all)
		goto out;
	size_t n = 0;
	for (size_t i = 0; i < ctx->table_size; i++)
		for (struct tm_trace *t = ctx->table[i]; t; t = t->hash_next)
			all[n++] = t;
	qsort(all, n, sizeof(*all), cmp_path);
	uint64_t problems = 0, with_problems = 0;
	for (size_t i = 0; i < n; i++) {
		char line[4 * PATH_MAX +
			  512]; /* a path escaped (4 bytes a byte at most), the rest */
		pthread_mutex_lock(&all[i]->lock);
		if (all[i]->state == TM_TRACE_INDEXED && all[i]->index->n_errors) {
			problems += all[i]->index->n_errors;
			with_problems++;
		}
		pthread_mutex_unlock(&all[i]->lock);
		int l = tm_trace_status(all[i], line, sizeof(line) - 1);
		if (l < 0)
			continue;
		if ((size_t)l > sizeof(line) - 2)
			l = sizeof(line) - 2;
		line[l++] = '\n';
		if (used + (size_t)l > cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			while (ncap < used + (size_t)l)
				ncap *= 2;
			char *nb = realloc(buf, ncap);
			if (!nb)
				goto out;
			buf = nb;
			cap = ncap;
		}
		memcpy(buf + used, line, (size_t)l);
		used += (size_t)l;
	}
	char summary[512];
	int l =
	    snprintf(summary, sizeof(summary),
		     "# %zu traces; indexes: %" PRIu64 " built, %" PRIu64
		     " read from index files, %" PRIu64 " index files refused, %" PRIu64
		     " index files out of date, %" PRIu64 " builds failed; %" PRIu64
		     " problems in the errors.txt of %" PRIu64 " traces; cache %s\n",
		     n, ctx->n_built, ctx->n_loaded, ctx->n_refused, ctx->n_stale, ctx->n_failed,
		     problems, with_problems, ctx->store ? ctx->store->dir : "none");
	char *nb = realloc(buf, used + (size_t)l + 1);
	if (!nb)
		goto out;
	buf = nb;
	memcpy(buf + used, summary, (size_t)l);
	used += (size_t)l;
	*text = buf;
	*len = used;
	buf = NULL;
	err = 0;
out:
	pthread_mutex_unlock(&ctx->lock);
	free(all);
	free(buf);
	return err;
}
