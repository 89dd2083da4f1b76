/* A trace's life (new, references, retire), its index, built once, and its chunks, decoded on
 * demand. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>

#include "trace_env.h"
#include "tracemount/chunk_cache.h"
#include "tracemount/derive.h"
#include "tracemount/compress.h"
#include "tracemount/images.h"
#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/log.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"

/* Seconds between two progress lines of an index pass in the log. */
#define PROGRESS_LOG_SECONDS 2.0

struct tm_trace {
	uint64_t owner; /* unique within its context: the chunk cache's key */
	char *path;	/* relative to the source root */
	const struct tm_format *fmt;
	struct tm_view_table views;
	struct tm_trace_env *env; /* its context's, which outlives it */
	/* The file as it was when the trace was first seen (has_identity: made with its
	 * attributes): an index is built only from those bytes, and a chunk read after the file
	 * changed fails with EIO rather than mix old and new. */
	bool has_identity;
	struct tm_file_identity id;
	bool replaced; /* tm_trace_replaced */
	atomic_uint refs;
	/* a piece no longer decompressed as indexed: the next lookup makes a new trace, whose
	 * index pass reports what `earlier` says (tm_trace_changed_inside) */
	atomic_bool damaged;

	pthread_mutex_t lock;	/* guards everything below */
	pthread_cond_t changed; /* on CLOCK_MONOTONIC: waiters poll their interruption */
	enum tm_trace_state state;
	uint64_t progress_done, progress_total;
	struct tm_index *index;
	int error;	      /* last build's -errno */
	struct tm_pass *pass; /* the pass running (INDEXING), or NULL */
	uint64_t passes_ended;
	struct tm_pass *ppass; /* a pass building products (INDEXED), or NULL */
	uint64_t ppasses_ended;
	int products_error;	/* the last product pass's -errno */
	uint64_t pdone, ptotal; /* its progress */
	bool keyed;		/* key is its index file's (index_name) */
	bool from_file;		/* its index was read from its file, counted so (n_loaded) */
	struct tm_trace_key key;
	char index_name[32]; /* its index file's, once known; "" none */
	char damage[300];    /* what the read that found the damage said */
	char earlier[300];   /* what a damaged trace this one replaces said */
};

/* An index pass, run on a thread of its own so that those who wait for it can leave: each
 * polls its own interruption, and the last to leave cancels the pass. The trace's lock guards
 * waiters; the pass thread frees the pass once it ended (passes_ended counts that). */
struct tm_pass {
	struct tm_trace *t;	    /* a reference of the pass's own */
	uint32_t products;	    /* the products it builds (derive.h) */
	bool record;		    /* it builds the record index (else products only) */
	struct tm_source *src, dup; /* &dup, or the starter's when it cannot be duplicated */
	bool lent;		    /* src is the starter's: it waits for the end */
	unsigned waiters;
	atomic_bool cancel;
	struct tm_pass *next; /* in env->passes, under env->passes_lock */
};

/* How often a waiter asks whether its caller still wants the index. */
#define WAITER_POLL_NS (50 * 1000 * 1000L)

int tm_trace_new(struct tm_trace_env *env, uint64_t owner, const char *path,
		 const struct tm_format *fmt, const struct stat *st, bool replaced,
		 struct tm_trace **out)
{
	struct tm_trace *t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path)) ||
	    tm_view_table_init(&t->views, fmt, tm_base_name(path)) < 0) {
		if (t)
			free(t->path);
		free(t);
		return -ENOMEM;
	}
	t->owner = owner;
	t->fmt = fmt;
	t->env = env;
	t->replaced = replaced;
	if (st) {
		t->has_identity = true;
		tm_file_identity_of(st, &t->id);
	}
	atomic_init(&t->refs, 1);
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->changed, &attr);
	pthread_condattr_destroy(&attr);
	*out = t;
	return 0;
}

void tm_trace_hold(struct tm_trace *t)
{
	atomic_fetch_add(&t->refs, 1);
}

void tm_trace_put(struct tm_trace *t)
{
	if (atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	tm_index_free(t->index);
	tm_view_table_free(&t->views);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->changed);
	free(t->path);
	free(t);
}

void tm_trace_retire(struct tm_trace *t)
{
	tm_chunk_cache_forget(t->env->cache, t->owner);
	tm_trace_put(t);
}

bool tm_trace_same_file(const struct tm_trace *t, const struct tm_format *fmt,
			const struct stat *st)
{
	return t->fmt == fmt && t->has_identity && tm_file_identity_same(&t->id, st) &&
	       !atomic_load(&t->damaged);
}

bool tm_trace_changed_inside(struct tm_trace *t, struct tm_trace *old)
{
	if (!atomic_load(&old->damaged))
		return false;
	pthread_mutex_lock(&old->lock);
	char said[sizeof(old->damage)];
	memcpy(said, old->damage, sizeof(said));
	pthread_mutex_unlock(&old->lock);
	pthread_mutex_lock(&t->lock);
	memcpy(t->earlier, said, sizeof(t->earlier));
	pthread_mutex_unlock(&t->lock);
	return true;
}

/* A piece of the trace no longer decompresses as its index says: its bytes changed with
 * its size, time and ends kept, which the content key cannot see. The index file goes, so
 * that no mount trusts it again, and the next lookup indexes the trace anew. */
static void trace_changed(void *arg, uint64_t off, const char *why)
{
	struct tm_trace *t = arg;
	char name[sizeof(t->index_name)];
	pthread_mutex_lock(&t->lock);
	bool first = !t->damage[0];
	if (first)
		snprintf(t->damage, sizeof(t->damage), "decompressing from offset %" PRIu64 ": %s",
			 off, why);
	memcpy(name, t->index_name, sizeof(name));
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->damaged, true);
	if (!first || !name[0] || !t->env->store)
		return;
	int err = tm_index_store_remove(t->env->store, name);
	tm_log(t->env->log, LOG_WARNING,
	       "%s: index file %s%s%s: the trace is indexed anew when next opened", t->path, name,
	       err && err != -ENOENT ? " not removed: " : " removed",
	       err && err != -ENOENT ? strerror(-err) : "");
}

const char *tm_trace_path(const struct tm_trace *t)
{
	return t->path;
}

const struct tm_format *tm_trace_format(const struct tm_trace *t)
{
	return t->fmt;
}

struct tm_context *tm_trace_context(const struct tm_trace *t)
{
	return t->env->ctx;
}

uint64_t tm_trace_owner(const struct tm_trace *t)
{
	return t->owner;
}

const struct tm_view_table *tm_trace_views(const struct tm_trace *t)
{
	return &t->views;
}

const struct tm_view *tm_trace_view(const struct tm_trace *t, unsigned v)
{
	return v < t->views.n_views ? &t->views.views[v] : NULL;
}

bool tm_trace_replaced(const struct tm_trace *t)
{
	return t->replaced;
}

unsigned tm_trace_refs(const struct tm_trace *t)
{
	return atomic_load(&t->refs);
}

struct build {
	struct tm_trace *t;
	uint32_t products;		/* to build */
	bool record;			/* a record pass (else a product pass) */
	const struct tm_images *images; /* for the derivers */
	struct tm_source *scan;	   /* of a compressed trace: progress counts compressed bytes */
	const atomic_bool *cancel; /* the pass's: no one waits for it any more */
	double start, next_log;	   /* monotonic seconds */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define MIB (1024.0 * 1024.0)

/* n bytes for the log, in the unit of the larger size of (bytes below 1 MiB, MiB above, whole
 * from 10 MiB on), without the unit; unit_of gives it. */
static void size_text(char *buf, size_t len, uint64_t n, uint64_t of)
{
	if (of < MIB)
		snprintf(buf, len, "%" PRIu64, n);
	else
		snprintf(buf, len, "%.*f", of < 10 * MIB ? 1 : 0, (double)n / MIB);
}

static const char *unit_of(uint64_t of)
{
	return of < MIB ? "bytes" : "MiB";
}

static int build_progress(void *arg, uint64_t done, uint64_t total)
{
	struct build *b = arg;
	const struct tm_trace_env *env = b->t->env;
	if (b->scan)
		done = tm_z_scan_position(b->scan);
	pthread_mutex_lock(&b->t->lock);
	*(b->record ? &b->t->progress_done : &b->t->pdone) = done;
	*(b->record ? &b->t->progress_total : &b->t->ptotal) = total;
	pthread_mutex_unlock(&b->t->lock);
	/* the clock read at the builder's progress steps only, not per record */
	if (env->log && done < total && now_seconds() >= b->next_log) {
		char a[32], z[32];
		size_text(a, sizeof(a), done, total);
		size_text(z, sizeof(z), total, total);
		tm_log(env->log, LOG_INFO, "%s: %s, %u%% (%s of %s %s)", b->t->path,
		       b->record ? "indexing" : "building", (unsigned)(done * 100 / total), a, z,
		       unit_of(total));
		b->next_log = now_seconds() + PROGRESS_LOG_SECONDS;
	}
	return atomic_load(&env->stopping) || atomic_load(b->cancel); /* give up */
}

static const struct tm_codec *codec_of(const struct tm_trace *t, struct tm_source *src)
{
	uint8_t head[TM_PROBE_HEAD_LEN];
	ssize_t n = tm_source_read(src, head, sizeof(head), 0);
	return n > 0 ? tm_codec_detect(tm_base_name(t->path), head, (size_t)n) : NULL;
}

bool tm_trace_is_compressed(const struct tm_open_trace *ot)
{
	return codec_of(ot->trace, ot->src) != NULL;
}

/* stats.json's "source": the file's own name, escaped (tm_escape_name), the same whatever
 * the path it is reached by, in a mount or by tracemount cat. */
static char *source_name(const struct tm_trace *t)
{
	return tm_escape_name(tm_base_name(t->path));
}

/* One pass over the trace's bytes, decompressed on the way when they are compressed. */
static int build_pass(struct build *b, struct tm_source *src, const char *name,
		      struct tm_index **out)
{
	struct tm_trace *t = b->t;
	struct tm_source scan;
	const struct tm_codec *codec = codec_of(t, src);
	struct tm_index_pass pass = {.products = b->products,
				     .images = b->images,
				     .progress = build_progress,
				     .progress_arg = b,
				     .cancel = b->cancel};
	if (!codec)
		return tm_index_build_pass(t->fmt, &t->views, src, name, &pass, out);

	int err = tm_z_scan_open(codec, src, &scan);
	if (err)
		return err;
	pthread_mutex_lock(&t->lock);
	if (t->earlier[0]) {
		char line[sizeof(t->earlier) + 64];
		snprintf(line, sizeof(line), "indexed anew: the last index no longer matched: %s",
			 t->earlier);
		tm_z_scan_say(&scan, line);
	}
	pthread_mutex_unlock(&t->lock);
	b->scan = &scan;
	err = tm_index_build_pass(t->fmt, &t->views, &scan, name, &pass, out);
	if (!err && (err = tm_z_scan_finish(&scan, &(*out)->z)) < 0) {
		tm_index_free(*out);
		*out = NULL;
	}
	b->scan = NULL;
	tm_source_close(&scan);
	return err;
}

/* build_pass, said in the log: its start, its progress every few seconds, its end. */
static int build_index(struct build *b, struct tm_source *src, const char *name,
		       struct tm_index **out)
{
	struct tm_trace *t = b->t;
	tm_log_fn *log = t->env->log;
	char size[32], what[96] = "indexing";
	if (!b->record)
		snprintf(what, sizeof(what), "building %s",
			 tm_products_name(b->products, size, sizeof(size)));
	if (log) {
		b->start = now_seconds();
		b->next_log = b->start + PROGRESS_LOG_SECONDS;
		size_text(size, sizeof(size), src->size, src->size);
		tm_log(log, LOG_INFO, "%s: %s, %s %s", t->path, what, size, unit_of(src->size));
	}
	int err = build_pass(b, src, name, out);
	if (log) {
		double took = now_seconds() - b->start;
		if (err == -ECANCELED)
			tm_log(log, LOG_INFO, "%s: %s cancelled after %.1f s: %s", t->path, what,
			       took,
			       atomic_load(&t->env->stopping) ? "the mount goes away"
							      : "no one waits for it any more");
		else if (err)
			tm_log(log, LOG_INFO, "%s: %s failed after %.1f s: %s", t->path, what, took,
			       strerror(-err));
		else if (b->record)
			tm_log(log, LOG_INFO, "%s: indexed in %.1f s", t->path, took);
		else
			tm_log(log, LOG_INFO, "%s: built %s in %.1f s", t->path, what + 9, took);
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

static bool unchanged(const struct tm_trace *t, struct tm_source *src)
{
	struct stat st;
	if (!t->has_identity || src->fd < 0)
		return true; /* a source without a file (a virtual trace) does not change */
	return fstat(src->fd, &st) == 0 && tm_file_identity_same_bytes(&t->id, &st);
}

bool tm_trace_unchanged(const struct tm_open_trace *ot)
{
	return unchanged(ot->trace, ot->src);
}

/* The trace's absolute path, recorded in its index file for `tracemount index --list` and
 * `--prune`: under the context's root (a mount's SOURCE folder), else resolved from the
 * current folder (`tracemount index`). "" when it cannot be told. */
static void trace_path_of(const struct tm_trace *t, char *buf, size_t len)
{
	const char *root = t->env->root_path, *rel = t->path;
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

/* Counts an index file not written, and logs when the cache folder starts or stops taking
 * them, not once per trace: a full or read-only folder would fill the log. */
static void say_stored(struct tm_trace_env *env, int stored, const char *path)
{
	int was = atomic_exchange(&env->store_errno, stored < 0 ? -stored : 0);
	if (stored < 0)
		atomic_fetch_add(&env->n_unstored, 1);
	if (stored < 0 && was != -stored)
		tm_log(
		    env->log, LOG_WARNING,
		    "%s: cannot write its index file in %s: %s (said once, until one is written)",
		    path, env->store->dir, strerror(-stored));
	else if (stored == 0 && was)
		tm_log(env->log, LOG_NOTICE, "index files are written in %s again",
		       env->store->dir);
}

/* Writes ix to t's index file under key, when the trace's bytes and images are still those of
 * key: no file for an index of mixed bytes. */
static void store_index(struct tm_trace *t, struct tm_source *src, const struct tm_trace_key *key,
			const struct tm_image_set *images, const struct tm_index *ix)
{
	struct tm_trace_key after;
	if (tm_trace_key_of(src, &after) < 0)
		return;
	after.images = images->n ? tm_images_identity(images) : 0;
	if (memcmp(&after, key, sizeof(*key)) != 0)
		return;
	char path[PATH_MAX] = "";
	if (!src->ops->identity) /* a member of an archive has no path --prune could check */
		trace_path_of(t, path, sizeof(path));
	int stored = tm_index_file_store_trace(t->env->store, t->fmt, &t->views, key, ix, path);
	say_stored(t->env, stored, t->path);
}

/* The index from the cache folder's index file (with the products it holds), else built with
 * the products b asks for, and written there. */
static int load_index(struct tm_trace *t, const struct tm_trace_key *key, const char *name,
		      struct tm_index **out)
{
	struct tm_trace_env *env = t->env;
	char why[256];
	int err = tm_index_file_load(env->store, t->fmt, &t->views, key, out, why, sizeof(why));
	if (!err && (err = tm_index_set_source(*out, name)) < 0) {
		tm_index_free(*out);
		*out = NULL;
		snprintf(why, sizeof(why), "%s",
			 err == -EBADMSG ? "a product's JSON does not parse" : strerror(-err));
	}
	if (!err)
		atomic_fetch_add(&env->n_loaded, 1);
	else if (err == -ESTALE) {
		atomic_fetch_add(&env->n_stale, 1);
		tm_log(env->log, LOG_NOTICE, "%s: index file out of date, %s: indexing again",
		       t->path, why);
	} else if (err == -EBADMSG) {
		atomic_fetch_add(&env->n_refused, 1);
		tm_log(env->log, LOG_WARNING, "%s: index file refused (%s): indexing again",
		       t->path, why);
	} else if (err != -ENOENT) { /* the system's trouble, not the file's */
		tm_log(env->log, LOG_WARNING,
		       "%s: cannot read its index file in %s: %s: indexing again", t->path,
		       env->store->dir, strerror(-err));
	}
	return err;
}

static int obtain_index_with(struct build *b, struct tm_source *src, const char *name,
			     const struct tm_image_set *images, struct tm_index **out)
{
	struct tm_trace *t = b->t;
	struct tm_trace_env *env = t->env;
	struct tm_trace_key key;
	bool keyed = env->store && tm_trace_key_of(src, &key) == 0;
	if (keyed) { /* the views depend on the images: their identity is part of the key */
		key.images = images->identity;
		pthread_mutex_lock(&t->lock);
		tm_index_file_name(t->fmt, &key, t->index_name, sizeof(t->index_name));
		t->key = key;
		t->keyed = true;
		pthread_mutex_unlock(&t->lock);
	}
	/* A file that changed while mounted is read again, whatever its index file says: the
	 * content key does not see a rewrite of its middle with its modification time put back,
	 * which the mount noticed by the inode change time. */
	if (keyed && !t->replaced && !env->force_rebuild && load_index(t, &key, name, out) == 0) {
		pthread_mutex_lock(&t->lock);
		t->from_file = true;
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	int err = build_index(b, src, name, out);
	if (err != -ECANCELED) /* a cancelled pass is no failure */
		atomic_fetch_add(err ? &env->n_failed : &env->n_built, 1);
	if (!err && keyed)
		store_index(t, src, &key, images, *out);
	return err;
}

/* Builds what pass p asks for: the record index (with products), or products for the index
 * t has, in *out; with the trace's program images, for the derivers. */
static int run_pass(struct tm_pass *p, const char *name, struct tm_image_set *images,
		    struct tm_index **out)
{
	struct tm_trace *t = p->t;
	struct tm_trace_env *env = t->env;
	struct build b = {
	    .t = t, .products = p->products, .record = p->record, .cancel = &p->cancel};
	if (!unchanged(t, p->src))
		return -ESTALE; /* replaced since it was seen: the next lookup sees the new one */
	/* only the derivers read images: other traces look for none */
	int err = tm_derivers_apply(t->fmt)
		      ? tm_images_open(env->image_rules, env->n_image_rules,
				       env->root_path ? env->root_fd : AT_FDCWD, t->path, images)
		      : 0;
	struct tm_images for_derivers = tm_images_of(images);
	b.images = &for_derivers;
	if (err)
		return err;
	return p->record ? obtain_index_with(&b, p->src, name, images, out)
			 : build_index(&b, p->src, name, out);
}

void tm_trace_open(struct tm_open_trace *ot, struct tm_trace *t, struct tm_source *src)
{
	tm_trace_hold(t);
	*ot = (struct tm_open_trace){.trace = t, .src = src};
}

void tm_trace_close(struct tm_open_trace *ot)
{
	if (ot->trace)
		tm_trace_put(ot->trace);
	*ot = (struct tm_open_trace){0};
}

/* The end of a record pass p: its outcome published on its trace, whose waiters wake. A
 * cancelled pass leaves nothing: the trace is "not indexed" again and the next access starts
 * anew. */
static void record_publish(struct tm_pass *p, int err, struct tm_index *ix)
{
	struct tm_trace *t = p->t;
	pthread_mutex_lock(&t->lock);
	t->error = err;
	if (err == -ECANCELED) {
		t->state = TM_TRACE_NEW;
	} else if (err) {
		t->state = TM_TRACE_FAILED;
	} else {
		t->state = TM_TRACE_INDEXED;
		t->index = ix;
	}
	t->pass = NULL;
	t->passes_ended++;
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->lock);
}

/* The end of a product pass p: the products it built join the trace's index (its file
 * written again with them), and its waiters wake. */
static void products_publish(struct tm_pass *p, int err, struct tm_index *built,
			     const struct tm_image_set *images)
{
	struct tm_trace *t = p->t;
	pthread_mutex_lock(&t->lock);
	if (!err)
		err = tm_index_adopt(t->index, built);
	if (!err && t->from_file) { /* its file lacked products, now built */
		t->from_file = false;
		atomic_fetch_add(&t->env->n_completed, 1);
	}
	struct tm_trace_key key = t->key;
	bool keyed = t->keyed && !err && t->env->store;
	pthread_mutex_unlock(&t->lock);
	if (keyed) /* no other product pass runs until this one ends: the index holds still */
		store_index(t, p->src, &key, images, t->index);
	tm_index_free(built);
	pthread_mutex_lock(&t->lock);
	t->products_error = err;
	t->ppass = NULL;
	t->ppasses_ended++;
	pthread_cond_broadcast(&t->changed);
	pthread_mutex_unlock(&t->lock);
}

/* Takes p off its environment's list and frees it: the last thing its thread does, so that
 * tm_trace_env_drain returns only once the pass holds nothing. */
static void pass_unlink(struct tm_trace_env *env, struct tm_pass *p)
{
	pthread_mutex_lock(&env->passes_lock);
	for (struct tm_pass **at = &env->passes; *at; at = &(*at)->next)
		if (*at == p) {
			*at = p->next;
			break;
		}
	free(p);
	pthread_cond_broadcast(&env->passes_over);
	pthread_mutex_unlock(&env->passes_lock);
}

static void *pass_main(void *arg)
{
	struct tm_pass *p = arg;
	struct tm_trace *t = p->t;
	struct tm_trace_env *env = t->env;
	struct tm_index *ix = NULL;
	struct tm_image_set images = {0};
	char *name = source_name(t);
	int err = name ? run_pass(p, name, &images, &ix) : -ENOMEM;
	free(name);
	if (p->record)
		record_publish(p, err, ix);
	else
		products_publish(p, err, ix, &images);
	tm_images_close(&images);
	if (!p->lent)
		tm_source_close(&p->dup);
	tm_trace_put(t);
	pass_unlink(env, p);
	return NULL;
}

/* Starts a pass over src on its own thread, with t locked and no pass of its kind running: the
 * record index and products when t has no index, else products. Its source a duplicate of
 * src, or src itself when that fails (then the caller must wait for its end). Returns 0,
 * -ECANCELED when the context stops, or -errno. */
static int pass_start(struct tm_trace *t, struct tm_source *src, uint32_t products,
		      struct tm_pass **out)
{
	struct tm_trace_env *env = t->env;
	struct tm_pass *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->src = &p->dup;
	/* a virtual trace's bytes, which have no second handle, or no descriptor left: lent */
	if (tm_source_dup(src, &p->dup) < 0) {
		p->src = src;
		p->lent = true;
	}
	int err;
	p->t = t;
	p->products = products;
	p->record = t->state != TM_TRACE_INDEXED;
	atomic_init(&p->cancel, false);
	pthread_mutex_lock(&env->passes_lock);
	if (!(err = atomic_load(&env->stopping) ? -ECANCELED : 0)) {
		pthread_attr_t attr;
		pthread_t thread;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		tm_trace_hold(t);
		if ((err = -pthread_create(&thread, &attr, pass_main, p)) == 0) {
			p->next = env->passes;
			env->passes = p;
		} else {
			tm_trace_put(t); /* not the last: the caller holds one */
		}
		pthread_attr_destroy(&attr);
	}
	pthread_mutex_unlock(&env->passes_lock);
	if (err) {
		if (!p->lent)
			tm_source_close(&p->dup);
		free(p);
		return err;
	}
	if (p->record) {
		t->state = TM_TRACE_INDEXING;
		t->pass = p;
		t->progress_done = 0;
		t->progress_total = src->size;
	} else {
		t->ppass = p;
		t->pdone = 0;
		t->ptotal = src->size;
	}
	*out = p;
	return 0;
}

/* Whether the caller no longer wants the index: asked without the trace's lock, which the
 * environment's callback (a FUSE request's state, a stat of the mount point) has no need
 * of. */
static bool caller_gone(struct tm_trace *t)
{
	struct tm_trace_env *env = t->env;
	if (!env->abandoned)
		return false;
	pthread_mutex_unlock(&t->lock);
	bool gone = env->abandoned(env->abandoned_arg);
	pthread_mutex_lock(&t->lock);
	return gone;
}

/* Waits, with t locked, for the end of pass p (*ended, its kind's count of passes ended,
 * moves then), polling the caller's interruption. A caller that leaves is no longer counted,
 * and the last one cancels the pass; the starter of a pass that borrowed its source (lent)
 * waits for the end all the same. Returns 0 when the pass ended, or -EINTR when the caller
 * left. */
static int pass_wait(struct tm_trace *t, struct tm_pass *p, const uint64_t *ended, bool lent)
{
	uint64_t start = *ended;
	bool left = false;
	p->waiters++;
	while (*ended == start) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += WAITER_POLL_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&t->changed, &t->lock, &until);
		if (left || *ended != start || !caller_gone(t) || *ended != start)
			continue; /* p is freed once the pass ended */
		left = true;
		if (--p->waiters == 0)
			atomic_store(&p->cancel, true);
		if (!lent)
			return -EINTR;
	}
	return left ? -EINTR : 0;
}

/* One step of tm_trace_build with t locked, the record index built: 0 when the products are
 * there, 1 to look again after a pass ended, or -errno. */
static int products_step(struct tm_open_trace *ot, uint32_t want, bool *waited)
{
	struct tm_trace *t = ot->trace;
	ot->index = t->index;
	if ((t->index->products & want) == want)
		return 0;
	if (*waited && !t->ppass && t->products_error)
		return t->products_error; /* those who waited for a pass share its outcome */
	struct tm_pass *p = t->ppass;
	if (p && atomic_load(&p->cancel)) { /* no one waits for it: a new one starts after */
		uint64_t ended = t->ppasses_ended;
		while (t->ppasses_ended == ended)
			pthread_cond_wait(&t->changed, &t->lock);
		return 1;
	}
	bool mine = !p;
	int err = p ? 0 : pass_start(t, ot->src, want & ~t->index->products, &p);
	if (err)
		return err;
	/* a pass for other products is waited for, then ours starts */
	*waited = mine || !(want & ~t->index->products & ~p->products);
	err = pass_wait(t, p, &t->ppasses_ended, mine && p->lent);
	return err < 0 ? err : 1;
}

/* Sets ot->index, building the record index (with the products wanted, when this starts its
 * pass) and then the products still missing. */
static int trace_build(struct tm_open_trace *ot, uint32_t want)
{
	struct tm_trace *t = ot->trace;
	bool waited = false, waited_products = false;
	int err = 0;

	want &= tm_products_of(t->fmt);
	pthread_mutex_lock(&t->lock);
	for (;;) {
		if (t->state == TM_TRACE_INDEXED) {
			if ((err = products_step(ot, want, &waited_products)) <= 0)
				break;
			continue;
		}
		if (waited && t->state != TM_TRACE_INDEXING) {
			err = t->error; /* those who waited for a pass share its outcome */
			break;
		}
		if (t->state == TM_TRACE_INDEXING && atomic_load(&t->pass->cancel)) {
			/* no one waits for it any more: a new pass starts once it ended */
			uint64_t ended = t->passes_ended;
			while (t->passes_ended == ended)
				pthread_cond_wait(&t->changed, &t->lock);
			continue;
		}
		struct tm_pass *mine = NULL;
		if (t->state != TM_TRACE_INDEXING &&
		    (err = pass_start(t, ot->src, want, &mine)) < 0)
			break;
		if ((err = pass_wait(t, t->pass, &t->passes_ended, mine && mine->lent)) < 0)
			break;
		waited = true;
	}
	pthread_mutex_unlock(&t->lock);
	return err;
}

int tm_trace_index(struct tm_open_trace *ot)
{
	return trace_build(ot, 0);
}

int tm_trace_products(struct tm_open_trace *ot, uint32_t products)
{
	return trace_build(ot, products);
}

bool tm_trace_has_products(struct tm_trace *t, uint32_t products)
{
	pthread_mutex_lock(&t->lock);
	products &= tm_products_of(t->fmt);
	bool built = t->index && (t->index->products & products) == products;
	pthread_mutex_unlock(&t->lock);
	return built;
}

void tm_trace_env_stop(struct tm_trace_env *env)
{
	pthread_mutex_lock(&env->passes_lock);
	atomic_store(&env->stopping, true);
	for (struct tm_pass *p = env->passes; p; p = p->next)
		atomic_store(&p->cancel, true);
	pthread_mutex_unlock(&env->passes_lock);
}

void tm_trace_env_drain(struct tm_trace_env *env)
{
	pthread_mutex_lock(&env->passes_lock);
	while (env->passes)
		pthread_cond_wait(&env->passes_over, &env->passes_lock);
	pthread_mutex_unlock(&env->passes_lock);
}

/* The trace's pieces through the context's cache, under its raw view's owner key. */
static struct tm_zcached zcached_of(const struct tm_open_trace *ot)
{
	const struct tm_trace *t = ot->trace;
	return (struct tm_zcached){
	    .cache = t->env->cache,
	    .owner = tm_cache_owner(t->owner, TM_RAW_VIEW),
	    .file = ot->src,
	    .z = ot->index->z,
	    .log = t->env->log,
	    .path = t->path,
	    .changed = trace_changed,
	    .arg = ot->trace,
	};
}

int tm_trace_piece(const struct tm_open_trace *ot, uint64_t piece, struct tm_cached_chunk **out)
{
	struct tm_zcached zc = zcached_of(ot);
	return tm_zcached_piece(&zc, piece, out);
}

ssize_t tm_trace_read(const struct tm_open_trace *ot, void *buf, size_t len, uint64_t off)
{
	const struct tm_index *ix = ot->index;
	if (!ix || !ix->z)
		return tm_source_read(ot->src, buf, len, off);
	struct tm_zcached zc = zcached_of(ot);
	return tm_zcached_read(&zc, buf, len, off);
}

struct chunk_load {
	const struct tm_open_trace *ot;
	uint64_t chunk;
};

/* Decodes a chunk from the trace bytes into c, restarting from its checkpoint. */
static int decode_chunk(void *arg, struct tm_cached_chunk *c)
{
	const struct chunk_load *a = arg;
	const struct tm_format *fmt = a->ot->trace->fmt;
	const struct tm_index *ix = a->ot->index;
	const uint64_t *row = tm_index_row(ix, a->chunk), *next = tm_index_row(ix, a->chunk + 1);
	uint64_t raw_off = row[TM_ROW_RAW_OFF], raw_end = next[TM_ROW_RAW_OFF];
	uint64_t expected = next[TM_ROW_RECORD] - row[TM_ROW_RECORD];
	uint64_t state[ix->state_words + 1];

	if (tm_cached_chunk_alloc(c, raw_end - raw_off, expected, fmt->record_size) < 0)
		return -ENOMEM;
	ssize_t got = tm_trace_read(a->ot, (void *)c->chunk.raw, c->chunk.raw_len, raw_off);
	if (got < 0)
		return (int)got;
	if ((size_t)got != c->chunk.raw_len || !tm_trace_unchanged(a->ot))
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

int tm_trace_chunk(const struct tm_open_trace *ot, uint64_t chunk, struct tm_cached_chunk **out)
{
	struct chunk_load arg = {ot, chunk};
	const struct tm_trace *t = ot->trace;
	return tm_chunk_cache_load(t->env->cache, t->owner, chunk, decode_chunk, &arg, out);
}

void tm_trace_chunk_release(const struct tm_open_trace *ot, struct tm_cached_chunk *c)
{
	tm_chunk_cache_release(ot->trace->env->cache, c);
}

void tm_trace_progress(struct tm_trace *t, struct tm_trace_progress *out)
{
	*out = (struct tm_trace_progress){0};
	pthread_mutex_lock(&t->lock);
	out->state = t->state;
	if (t->state == TM_TRACE_INDEXING) {
		out->done = t->progress_done;
		out->total = t->progress_total;
	} else if (t->state == TM_TRACE_INDEXED) {
		out->records = tm_index_records(t->index);
		out->index_bytes = tm_index_mem(t->index);
		out->problems = t->index->n_errors;
		out->notes = t->index->n_notes;
		out->building = t->ppass ? t->ppass->products : 0;
		out->building_done = t->pdone;
		out->building_total = t->ptotal;
	} else if (t->state == TM_TRACE_FAILED) {
		out->error = t->error;
	}
	pthread_mutex_unlock(&t->lock);
}

int tm_trace_status(struct tm_trace *t, char *buf, size_t len)
{
	char state[128];
	struct tm_trace_progress p;

	tm_trace_progress(t, &p);
	switch (p.state) {
	case TM_TRACE_NEW: snprintf(state, sizeof(state), "not indexed\t-\t-"); break;
	case TM_TRACE_INDEXING:
		snprintf(state, sizeof(state), "indexing %u%%\t-\t-",
			 p.total ? (unsigned)(p.done * 100 / p.total) : 0);
		break;
	case TM_TRACE_INDEXED:
		if (p.building) /* a product pass: its progress, as an index pass's */
			snprintf(
			    state, sizeof(state), "indexed, building %u%%\t%" PRIu64 "\t%" PRIu64,
			    p.building_total ? (unsigned)(p.building_done * 100 / p.building_total)
					     : 0,
			    p.records, p.index_bytes);
		else
			snprintf(state, sizeof(state), "indexed\t%" PRIu64 "\t%" PRIu64, p.records,
				 p.index_bytes);
		break;
	case TM_TRACE_FAILED:
		snprintf(state, sizeof(state), "error: %s\t-\t-", strerror(-p.error));
		break;
	}
	char *path = tm_escape_name(t->path);
	int n = snprintf(buf, len, "%s\t%s\t%s", path ? path : "?", t->fmt->name, state);
	free(path);
	return n;
}
