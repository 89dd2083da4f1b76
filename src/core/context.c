/* The traces of one mount, found by path in a hash table, what they share, and format
 * detection. The traces' own life is trace.c's: see context.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "detect_memo.h"
#include "trace_env.h"
#include "tracemount/compress.h"
#include "tracemount/chunk_cache.h"
#include "tracemount/context.h"
#include "tracemount/images.h"
#include "tracemount/index_file.h"
#include "tracemount/log.h"
#include "tracemount/readahead.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"

struct tm_override {
	char *glob; /* matched against the base name, or the relative path if it has a '/' */
	const struct tm_format *fmt;
};

/* One trace of the table, on which the table holds a reference. */
struct entry {
	struct tm_trace *trace;
	struct entry *next;
};

/* A trace file a listing showed, whose trace may not exist yet: the status counts it. */
struct seen {
	struct seen *next;
	const struct tm_format *fmt; /* NULL until known (the head not read) */
	char path[];
};

struct tm_context {
	struct tm_trace_env env;	/* what the traces share: trace_env.h */
	struct tm_readahead *readahead; /* renders ahead of streaming readers */
	struct tm_override *overrides;
	unsigned n_overrides;
	dev_t own_device; /* the mount's own: never entered below SOURCE */
	struct tm_detect_memo *memo;

	pthread_mutex_t lock; /* guards the table */
	struct entry **table;
	size_t table_size, n_traces;
	struct seen **seen; /* also guarded by lock: a hash table of seen_size buckets, or NULL */
	size_t seen_size, n_seen;
	uint64_t next_owner;
};

int tm_context_new(size_t memory, struct tm_context **out)
{
	struct tm_context *ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->table_size = 256;
	ctx->table = calloc(ctx->table_size, sizeof(*ctx->table));
	if (!ctx->table || tm_chunk_cache_new(memory, &ctx->env.cache) < 0 ||
	    tm_readahead_new(&ctx->readahead) < 0 || tm_detect_memo_new(&ctx->memo) < 0) {
		tm_readahead_free(ctx->readahead);
		tm_chunk_cache_free(ctx->env.cache);
		free(ctx->table);
		free(ctx);
		return -ENOMEM;
	}
	ctx->env.ctx = ctx;
	ctx->env.root_fd = -1;
	pthread_mutex_init(&ctx->env.passes_lock, NULL);
	pthread_cond_init(&ctx->env.passes_over, NULL);
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->next_owner = 1;
	*out = ctx;
	return 0;
}

void tm_context_free(struct tm_context *ctx)
{
	if (!ctx)
		return;
	tm_context_stop(ctx);		   /* first: a pass holds its trace and writes its file */
	tm_readahead_free(ctx->readahead); /* then: its jobs hold traces and use the cache */
	tm_detect_memo_free(ctx->memo);
	for (size_t i = 0; i < ctx->table_size; i++) {
		while (ctx->table[i]) {
			struct entry *e = ctx->table[i];
			ctx->table[i] = e->next;
			tm_trace_put(e->trace);
			free(e);
		}
	}
	for (unsigned i = 0; i < ctx->n_overrides; i++)
		free(ctx->overrides[i].glob);
	free(ctx->overrides);
	for (size_t i = 0; i < ctx->env.n_image_rules; i++)
		tm_image_rule_free(&ctx->env.image_rules[i]);
	free(ctx->env.image_rules);
	if (ctx->env.root_fd >= 0)
		close(ctx->env.root_fd);
	free(ctx->table);
	for (size_t i = 0; i < ctx->seen_size; i++)
		while (ctx->seen[i]) {
			struct seen *sn = ctx->seen[i];
			ctx->seen[i] = sn->next;
			free(sn);
		}
	free(ctx->seen);
	if (ctx->env.store)
		tm_index_store_close(ctx->env.store);
	free(ctx->env.store);
	free(ctx->env.root_path);
	tm_chunk_cache_free(ctx->env.cache);
	pthread_mutex_destroy(&ctx->env.passes_lock);
	pthread_cond_destroy(&ctx->env.passes_over);
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
	if (ctx->env.store) {
		tm_index_store_close(ctx->env.store);
		free(ctx->env.store);
	}
	ctx->env.store = s;
	return 0;
}

int tm_context_set_root(struct tm_context *ctx, const char *root)
{
	char *copy = root ? strdup(root) : NULL;
	if (root && !copy)
		return -ENOMEM;
	free(ctx->env.root_path);
	ctx->env.root_path = copy;
	if (ctx->env.root_fd >= 0)
		close(ctx->env.root_fd);
	/* where images beside the traces are looked for; without it, none are */
	ctx->env.root_fd = root ? open(root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	return 0;
}

int tm_context_add_image(struct tm_context *ctx, const char *spec, bool with_glob, char *why,
			 size_t why_len)
{
	struct tm_image_rule rule;
	int err = tm_image_rule_parse(spec, with_glob, &rule, why, why_len);
	if (err == -ENOMEM)
		snprintf(why, why_len, "out of memory");
	if (err)
		return err;
	/* absolute, as given (a link is followed when the image is read): the daemon changes
	 * its folder */
	char cwd[PATH_MAX], *abs = NULL;
	if (rule.path[0] != '/') {
		if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, rule.path) < 0) {
			tm_image_rule_free(&rule);
			snprintf(why, why_len, "%s", strerror(errno ? errno : ENOMEM));
			return -ENOMEM;
		}
		free(rule.path);
		rule.path = abs;
	}
	struct tm_image_rule *rules =
	    (err = tm_image_check(&rule, why, why_len)) == 0
		? realloc(ctx->env.image_rules, (ctx->env.n_image_rules + 1) * sizeof(*rules))
		: NULL;
	if (!err && !rules) {
		snprintf(why, why_len, "out of memory");
		err = -ENOMEM;
	}
	if (err) {
		tm_image_rule_free(&rule);
		return err;
	}
	ctx->env.image_rules = rules;
	rules[ctx->env.n_image_rules++] = rule;
	return 0;
}

void tm_context_set_force_rebuild(struct tm_context *ctx, bool force)
{
	ctx->env.force_rebuild = force;
}

void tm_context_set_log(struct tm_context *ctx, tm_log_fn *log)
{
	ctx->env.log = log;
}

void tm_context_set_own_device(struct tm_context *ctx, dev_t dev)
{
	ctx->own_device = dev;
}

dev_t tm_context_own_device(const struct tm_context *ctx)
{
	return ctx->own_device;
}

tm_log_fn *tm_context_logger(const struct tm_context *ctx)
{
	return ctx->env.log;
}

void tm_context_set_abandoned(struct tm_context *ctx, bool (*abandoned)(void *arg), void *arg)
{
	ctx->env.abandoned = abandoned;
	ctx->env.abandoned_arg = arg;
}

void tm_context_stop(struct tm_context *ctx)
{
	tm_trace_env_stop(&ctx->env);
	tm_trace_env_drain(&ctx->env);
}

bool tm_context_passes_running(struct tm_context *ctx)
{
	pthread_mutex_lock(&ctx->env.passes_lock);
	bool running = ctx->env.passes != NULL;
	pthread_mutex_unlock(&ctx->env.passes_lock);
	return running;
}

struct tm_chunk_cache *tm_context_cache(const struct tm_context *ctx)
{
	return ctx->env.cache;
}

const struct tm_index_store *tm_context_store(const struct tm_context *ctx)
{
	return ctx->env.store;
}

uint64_t tm_context_new_owner(struct tm_context *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	uint64_t owner = ctx->next_owner++;
	pthread_mutex_unlock(&ctx->lock);
	return owner;
}

struct tm_readahead *tm_context_readahead(const struct tm_context *ctx)
{
	return ctx->readahead;
}

void tm_context_counts(const struct tm_context *ctx, struct tm_index_counts *out)
{
	out->built = atomic_load(&ctx->env.n_built);
	out->loaded = atomic_load(&ctx->env.n_loaded);
	out->completed = atomic_load(&ctx->env.n_completed);
	out->refused = atomic_load(&ctx->env.n_refused);
	out->stale = atomic_load(&ctx->env.n_stale);
	out->failed = atomic_load(&ctx->env.n_failed);
	out->unstored = atomic_load(&ctx->env.n_unstored);
	out->store_errno = atomic_load(&ctx->env.store_errno);
}

unsigned tm_context_override_count(const struct tm_context *ctx)
{
	return ctx->n_overrides;
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

static const struct tm_format *find_override(struct tm_context *ctx, const char *path)
{
	for (unsigned i = 0; i < ctx->n_overrides; i++)
		if (tm_image_glob_match(ctx->overrides[i].glob, path))
			return ctx->overrides[i].fmt;
	return NULL;
}

const struct tm_format *tm_context_override(struct tm_context *ctx, const char *path)
{
	return find_override(ctx, path);
}

const struct tm_format *tm_context_detect_head(struct tm_context *ctx, const char *path,
					       const uint8_t *head, size_t head_len)
{
	const struct tm_format *fmt = find_override(ctx, path);
	return fmt ? fmt : tm_format_detect(tm_base_name(path), head, head_len);
}

const struct tm_format *tm_context_detect(struct tm_context *ctx, int dirfd, const char *path)
{
	return tm_context_detect_also(ctx, dirfd, path, NULL, NULL, NULL);
}

const struct tm_format *
tm_context_detect_also(struct tm_context *ctx, int dirfd, const char *path, const struct stat *st,
		       bool (*also)(const char *name, const uint8_t *head, size_t len),
		       bool *matched)
{
	const struct tm_format *fmt = find_override(ctx, path);
	if (matched)
		*matched = false;
	if (fmt)
		return fmt;
	/* the name alone decides most files: a listing then opens none of them */
	if (!tm_format_detect_needs_head(tm_base_name(path)))
		return tm_format_detect(tm_base_name(path), NULL, 0);
	struct tm_detect_result r = {.also = also};
	if (st && tm_detect_memo_find(ctx->memo, path, st, &r)) {
		if (matched)
			*matched = r.matched;
		return r.fmt;
	}

	uint8_t *head = NULL;
	ssize_t n = -1;
	int fd = tm_open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK);
	if (fd >= 0) {
		n = tm_probe_head(fd, tm_base_name(path), &head);
		close(fd);
	}
	r.fmt = tm_format_detect(tm_base_name(path), n > 0 ? head : NULL, n > 0 ? (size_t)n : 0);
	if (!r.fmt && also && n > 0)
		r.matched = also(tm_base_name(path), head, (size_t)n);
	free(head);
	if (st && n >= 0) /* a file that could not be read is tried again */
		tm_detect_memo_store(ctx->memo, path, st, &r);
	if (matched)
		*matched = r.matched;
	return r.fmt;
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
	struct entry **table = calloc(n, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->table_size; i++) {
		while (ctx->table[i]) {
			struct entry *e = ctx->table[i];
			ctx->table[i] = e->next;
			size_t h = hash_path(tm_trace_path(e->trace), n);
			e->next = table[h];
			table[h] = e;
		}
	}
	free(ctx->table);
	ctx->table = table;
	ctx->table_size = n;
	return 0;
}

/* The table's link to the trace at path: where it is, or where it would go. Under the lock. */
static struct entry **find_slot(struct tm_context *ctx, const char *path)
{
	struct entry **p = &ctx->table[hash_path(path, ctx->table_size)];
	while (*p && strcmp(tm_trace_path((*p)->trace), path) != 0)
		p = &(*p)->next;
	return p;
}

/* A new trace at *p, where find_slot left it. Under the lock. */
static int add_trace(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
		     const struct stat *st, bool replaced, struct entry **p)
{
	struct entry *e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	int err = tm_trace_new(&ctx->env, ctx->next_owner, path, fmt, st, replaced, &e->trace);
	if (err) {
		free(e);
		return err;
	}
	ctx->next_owner++;
	e->next = *p;
	*p = e;
	ctx->n_traces++;
	return 0;
}

int tm_context_trace_of(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
			const struct stat *st, struct tm_trace **out)
{
	int err = 0;
	bool replaced = false;
	struct tm_trace *old = NULL;
	pthread_mutex_lock(&ctx->lock);
	struct entry **p = find_slot(ctx, path);
	if (*p && st && !tm_trace_same_file((*p)->trace, fmt, st)) {
		struct entry *e = *p;
		tm_log(ctx->env.log, LOG_INFO, "%s changed: indexed anew", path);
		*p = e->next;
		ctx->n_traces--;
		old = e->trace; /* kept until the new one has learnt what it found */
		tm_trace_hold(old);
		tm_trace_retire(e->trace);
		free(e);
		replaced = true;
		p = find_slot(ctx, path); /* *p is now the next entry, another path's */
	}
	if (*p && tm_trace_format((*p)->trace) != fmt) {
		err = -ESTALE; /* same path, now another format: the file was replaced */
		goto out;
	}
	if (!*p) {
		if (ctx->n_traces >= ctx->table_size && (err = table_grow(ctx)) < 0)
			goto out;
		p = find_slot(ctx, path);
		if ((err = add_trace(ctx, path, fmt, st, replaced, p)) < 0)
			goto out;
		if (old)
			tm_trace_changed_inside((*p)->trace, old);
	}
	tm_trace_hold((*p)->trace);
	*out = (*p)->trace;
out:
	pthread_mutex_unlock(&ctx->lock);
	if (old)
		tm_trace_put(old);
	return err;
}

int tm_context_trace(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
		     struct tm_trace **out)
{
	return tm_context_trace_of(ctx, path, fmt, NULL, out);
}

/* Doubles the seen table (from none: 256 buckets). Under the lock. */
static int seen_grow(struct tm_context *ctx)
{
	size_t n = ctx->seen_size ? ctx->seen_size * 2 : 256;
	struct seen **table = calloc(n, sizeof(*table));
	if (!table)
		return -ENOMEM;
	for (size_t i = 0; i < ctx->seen_size; i++)
		while (ctx->seen[i]) {
			struct seen *sn = ctx->seen[i];
			ctx->seen[i] = sn->next;
			size_t h = hash_path(sn->path, n);
			sn->next = table[h];
			table[h] = sn;
		}
	free(ctx->seen);
	ctx->seen = table;
	ctx->seen_size = n;
	return 0;
}

int tm_context_saw(struct tm_context *ctx, const char *path, const struct tm_format *fmt)
{
	int err = 0;
	pthread_mutex_lock(&ctx->lock);
	struct seen *sn = NULL;
	if (ctx->seen)
		for (sn = ctx->seen[hash_path(path, ctx->seen_size)]; sn; sn = sn->next)
			if (strcmp(sn->path, path) == 0)
				break;
	if (sn) {
		sn->fmt = fmt ? fmt : sn->fmt;
	} else if (ctx->n_seen >= ctx->seen_size && (err = seen_grow(ctx)) < 0) {
		/* counted later, by the lookups */
	} else if (!(sn = malloc(sizeof(*sn) + strlen(path) + 1))) {
		err = -ENOMEM;
	} else {
		size_t h = hash_path(path, ctx->seen_size);
		sn->fmt = fmt;
		strcpy(sn->path, path);
		sn->next = ctx->seen[h];
		ctx->seen[h] = sn;
		ctx->n_seen++;
	}
	pthread_mutex_unlock(&ctx->lock);
	return err;
}

int tm_context_progress_of(struct tm_context *ctx, const char *path, const struct tm_format *fmt,
			   const struct stat *st, struct tm_trace_progress *out)
{
	int err = -ENOENT;
	pthread_mutex_lock(&ctx->lock);
	struct entry *e = *find_slot(ctx, path);
	if (e && tm_trace_same_file(e->trace, fmt, st)) {
		tm_trace_progress(e->trace, out);
		err = 0;
	}
	pthread_mutex_unlock(&ctx->lock);
	return err;
}

/* A line of the status: a trace of the table, or one only a listing has seen (trace NULL). */
struct status_item {
	const char *path;
	struct tm_trace *trace;
	const struct tm_format *fmt; /* of a trace seen only; NULL: not known yet */
};

static int cmp_item(const void *a, const void *b)
{
	return strcmp(((const struct status_item *)a)->path, ((const struct status_item *)b)->path);
}

/* Every trace of the table and every trace seen by a listing only, sorted by path. Under the
 * lock. Returns NULL without memory. */
static struct status_item *status_items(struct tm_context *ctx, size_t *n)
{
	struct status_item *all = malloc((ctx->n_traces + ctx->n_seen + 1) * sizeof(*all));
	*n = 0;
	if (!all)
		return NULL;
	for (size_t i = 0; i < ctx->table_size; i++)
		for (struct entry *e = ctx->table[i]; e; e = e->next)
			all[(*n)++] = (struct status_item){tm_trace_path(e->trace), e->trace, NULL};
	for (size_t i = 0; i < ctx->seen_size; i++)
		for (struct seen *s = ctx->seen[i]; s; s = s->next)
			if (!*find_slot(ctx, s->path))
				all[(*n)++] = (struct status_item){s->path, NULL, s->fmt};
	qsort(all, *n, sizeof(*all), cmp_item);
	return all;
}

struct status_sums {
	uint64_t problems, with_problems, notes, with_notes;
};

static void put_item(FILE *f, const struct status_item *it, struct status_sums *sums)
{
	char line[4 * PATH_MAX + 512]; /* a path escaped (4 bytes a byte at most), the rest */
	if (!it->trace) {
		char *path = tm_escape_name(it->path);
		fprintf(f, "%s\t%s\tnot indexed\t-\t-\n", path ? path : "?",
			it->fmt ? it->fmt->name : "-");
		free(path);
		return;
	}
	struct tm_trace_progress p;
	tm_trace_progress(it->trace, &p);
	sums->problems += p.problems;
	sums->with_problems += p.problems != 0;
	sums->notes += p.notes;
	sums->with_notes += p.notes != 0;
	if (tm_trace_status(it->trace, line, sizeof(line)) >= 0)
		fprintf(f, "%s\n", line);
}

int tm_context_status(struct tm_context *ctx, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);
	if (!f)
		return -ENOMEM;
	fputs("path\tformat\tstate\trecords\tindex_bytes\n", f);
	pthread_mutex_lock(&ctx->lock);
	size_t n;
	struct status_item *all = status_items(ctx, &n);
	struct status_sums sums = {0};
	for (size_t i = 0; i < n; i++)
		put_item(f, &all[i], &sums);
	struct tm_index_counts c;
	tm_context_counts(ctx, &c);
	fprintf(
	    f,
	    "# %zu trace%s; indexes: %" PRIu64 " built, %" PRIu64 " read from index files, %" PRIu64
	    " index files refused, %" PRIu64 " index files out of date, %" PRIu64
	    " builds failed; %" PRIu64 " problem%s in the errors.txt of %" PRIu64
	    " trace%s, %" PRIu64 " note%s in %" PRIu64 " trace%s; cache %s\n",
	    n, n == 1 ? "" : "s", c.built, c.loaded, c.refused, c.stale, c.failed, sums.problems,
	    sums.problems == 1 ? "" : "s", sums.with_problems, sums.with_problems == 1 ? "" : "s",
	    sums.notes, sums.notes == 1 ? "" : "s", sums.with_notes,
	    sums.with_notes == 1 ? "" : "s", ctx->env.store ? ctx->env.store->dir : "none");
	if (c.store_errno)
		fprintf(
		    f, "# index files not written in %s: %s (%" PRIu64 " indexes in memory only)\n",
		    ctx->env.store->dir, strerror(c.store_errno), c.unstored);
	pthread_mutex_unlock(&ctx->lock);
	int err = all ? 0 : -ENOMEM;
	free(all);
	if (fclose(f) || err) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}
