/* Archives (archive.h): the set a mount keeps, the pass that builds an archive's member table,
 * lookups and listings in it, and the sources that read its members. Its cache file is
 * archive_file.c's. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "archive_table.h"
#include "tracemount/archive.h"
#include "tracemount/chunk_cache.h"
#include "tracemount/compress.h"
#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/format.h"
#include "tracemount/log.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"

enum arc_state { ARC_NEW, ARC_BUILDING, ARC_READY };

struct tm_archive {
	atomic_uint refs;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	enum arc_state state;
	char *path; /* relative to the set's folder */
	struct stat st;
	struct tm_file_identity id; /* of st: what tells the file's versions apart */
	struct tm_context *ctx;
	uint64_t owner;	       /* the chunk cache's key of its pieces */
	struct tm_source file; /* the archive's bytes */
	struct tm_arc_table t;
	const struct tm_format **fmts; /* of each entry, by its name in t */
};

struct set_entry {
	struct tm_archive *a;
	struct set_entry *next;
};

struct tm_archives {
	struct tm_context *ctx;
	pthread_mutex_t lock;
	struct set_entry *list;
};

int tm_archives_new(struct tm_context *ctx, struct tm_archives **out)
{
	struct tm_archives *set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->ctx = ctx;
	pthread_mutex_init(&set->lock, NULL);
	*out = set;
	return 0;
}

void tm_archives_free(struct tm_archives *set)
{
	if (!set)
		return;
	for (struct set_entry *e = set->list, *next; e; e = next) {
		next = e->next;
		tm_archive_put(e->a);
		free(e);
	}
	pthread_mutex_destroy(&set->lock);
	free(set);
}

bool tm_archive_name(const char *name)
{
	static const char *const whole[] = {".tar", ".tgz", ".txz", ".tzst"};
	size_t len = strlen(name) - tm_codec_suffix_len(name);
	for (size_t i = 0; i < ARRAY_SIZE(whole); i++) {
		size_t n = strlen(whole[i]);
		bool codec_whole = i > 0;
		size_t at = codec_whole ? strlen(name) : len;
		if (at > n && strncmp(name + at - n, whole[i], n) == 0)
			return true;
	}
	return false;
}

bool tm_archive_head(const char *name, const uint8_t *head, size_t len)
{
	uint8_t block[TM_TAR_BLOCK];
	return tm_codec_head(name, head, len, block, sizeof(block)) == sizeof(block) &&
	       tm_tar_is_header(block);
}

void tm_archive_hold(struct tm_archive *a)
{
	atomic_fetch_add(&a->refs, 1);
}

void tm_archive_put(struct tm_archive *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	tm_chunk_cache_forget(tm_context_cache(a->ctx), a->owner);
	tm_arc_table_free(&a->t);
	free(a->fmts);
	if (a->file.ops)
		tm_source_close(&a->file);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->changed);
	free(a->path);
	free(a);
}

const struct stat *tm_archive_stat(const struct tm_archive *a)
{
	return &a->st;
}

/* The set's archive at path, a new one when there is none or its file changed; a reference
 * for the caller. */
static int set_find(struct tm_archives *set, const char *path, const struct stat *st,
		    struct tm_archive **out)
{
	int err = 0;
	pthread_mutex_lock(&set->lock);
	struct set_entry **link = &set->list, *e;
	for (; (e = *link); link = &e->next)
		if (strcmp(e->a->path, path) == 0)
			break;
	if (e &&
	    !tm_file_identity_same(&e->a->id, st)) { /* changed: its holders keep the old one */
		*link = e->next;
		tm_archive_put(e->a);
		free(e);
		e = NULL;
	}
	if (!e) {
		struct tm_archive *a = calloc(1, sizeof(*a));
		e = calloc(1, sizeof(*e));
		if (!a || !e || !(a->path = strdup(path))) {
			free(a);
			free(e);
			err = -ENOMEM;
			goto out;
		}
		atomic_init(&a->refs, 1);
		pthread_mutex_init(&a->lock, NULL);
		pthread_cond_init(&a->changed, NULL);
		a->st = *st;
		tm_file_identity_of(st, &a->id);
		a->ctx = set->ctx;
		a->owner = tm_context_new_owner(set->ctx);
		e->a = a;
		e->next = set->list;
		set->list = e;
	}
	tm_archive_hold(e->a);
	*out = e->a;
out:
	pthread_mutex_unlock(&set->lock);
	return err;
}

/* Resolves each entry's format by name: formats of another build are none. */
static int resolve_formats(struct tm_archive *a)
{
	const struct tm_arc_table *t = &a->t;
	if (!(a->fmts = calloc(t->n_entries ? t->n_entries : 1, sizeof(*a->fmts))))
		return -ENOMEM;
	for (uint32_t i = 0; i < t->n_entries; i++)
		if (t->entries[i].format != TM_ARC_NONE)
			a->fmts[i] = tm_format_find(t->strings + t->entries[i].format);
	return 0;
}

/* Builds or loads the member table: the first caller does, others wait for it. */
static int ready(struct tm_archive *a, int dirfd)
{
	pthread_mutex_lock(&a->lock);
	while (a->state == ARC_BUILDING)
		pthread_cond_wait(&a->changed, &a->lock);
	if (a->state == ARC_READY) {
		pthread_mutex_unlock(&a->lock);
		return 0;
	}
	a->state = ARC_BUILDING;
	pthread_mutex_unlock(&a->lock);

	tm_log_fn *log = tm_context_logger(a->ctx);
	int err = a->file.ops ? 0 : tm_source_open(dirfd, a->path, &a->file);
	if (!err)
		err = tm_arc_table_obtain(&a->file, a->path, tm_context_store(a->ctx), log, &a->t);
	if (!err && (err = resolve_formats(a)) < 0)
		tm_arc_table_free(&a->t);
	if (err)
		tm_log(log, LOG_ERR, "%s: cannot read the archive: %s", a->path, strerror(-err));

	pthread_mutex_lock(&a->lock);
	a->state = err ? ARC_NEW : ARC_READY; /* a failed build is not kept */
	pthread_cond_broadcast(&a->changed);
	pthread_mutex_unlock(&a->lock);
	return err;
}

int tm_archives_get(struct tm_archives *set, int dirfd, const char *path, const struct stat *st,
		    struct tm_archive **out)
{
	struct tm_archive *a;
	int err = set_find(set, path, st, &a);
	if (err)
		return err;
	if ((err = ready(a, dirfd)) < 0) {
		tm_archive_put(a);
		return err;
	}
	*out = a;
	return 0;
}

const char *tm_archive_errors(const struct tm_archive *a, size_t *len)
{
	*len = a->t.errors_len;
	return a->t.errors ? a->t.errors : "";
}

static void fill_entry(const struct tm_archive *a, uint32_t i, struct tm_archive_entry *out)
{
	const struct tm_arc_table *t = &a->t;
	const struct tm_arc_entry *e = &t->entries[i];
	const char *path = t->strings + e->path;
	*out = (struct tm_archive_entry){
	    .path = path,
	    .name = tm_base_name(path),
	    .type = (enum tm_member_type)e->type,
	    .size = e->size,
	    .mtime = e->mtime,
	    .mode = e->mode,
	    .link = e->link != TM_ARC_NONE ? t->strings + e->link : NULL,
	    .fmt = a->fmts[i],
	    .id = i,
	};
	if (out->type != TM_MEMBER_FILE)
		return;
	/* -o format= overrides by the member's path in the mount */
	char full[PATH_MAX];
	if (snprintf(full, sizeof(full), "%s/%s", a->path, path) < (int)sizeof(full)) {
		const struct tm_format *o = tm_context_override(a->ctx, full);
		if (o)
			out->fmt = o;
	}
}

int tm_archive_lookup(const struct tm_archive *a, const char *path, struct tm_archive_entry *e)
{
	int64_t i = tm_arc_table_find(&a->t, path);
	if (i < 0)
		return -ENOENT;
	fill_entry(a, (uint32_t)i, e);
	return 0;
}

int tm_archive_list(const struct tm_archive *a, const char *dir,
		    int (*fn)(void *arg, const struct tm_archive_entry *e), void *arg)
{
	const struct tm_arc_table *t = &a->t;
	int64_t d = tm_arc_table_find(t, dir);
	if (d < 0)
		return -ENOENT;
	if (t->entries[d].type != TM_MEMBER_DIR)
		return -ENOTDIR;
	for (uint32_t i = (uint32_t)d + 1; i < t->entries[d].after; i = t->entries[i].after) {
		struct tm_archive_entry e;
		fill_entry(a, i, &e);
		int err = fn(arg, &e);
		if (err)
			return err;
	}
	return 0;
}

/* Reading members. */

/* Reads len bytes of the archive's data (decompressed) at off. Returns the count or -errno. */
static ssize_t archive_read(struct tm_archive *a, void *buf, size_t len, uint64_t off)
{
	if (!a->t.z)
		return tm_source_read(&a->file, buf, len, off);
	struct tm_zcached zc = {
	    .cache = tm_context_cache(a->ctx),
	    .owner = a->owner,
	    .file = &a->file,
	    .z = a->t.z,
	    .log = tm_context_logger(a->ctx),
	    .path = a->path,
	};
	return tm_zcached_read(&zc, buf, len, off);
}

struct member_source {
	struct tm_archive *a;
	uint32_t id;
};

/* The run of a sparse member holding off, or the first after it (n_runs: none). */
static uint32_t run_at(const struct tm_arc_table *t, const struct tm_arc_entry *e, uint64_t off)
{
	uint32_t lo = 0, hi = e->n_runs;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct tm_arc_run *r = &t->runs[e->first_run + mid];
		if (r->offset + r->size <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static ssize_t member_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	const struct member_source *m = s->priv;
	const struct tm_arc_table *t = &m->a->t;
	const struct tm_arc_entry *e = &t->entries[m->id];
	if (off >= e->size)
		return 0;
	if (len > e->size - off)
		len = (size_t)(e->size - off);
	if (!e->n_runs)
		return archive_read(m->a, buf, len, e->offset + off);
	size_t done = 0;
	for (uint32_t k = run_at(t, e, off); done < len;) {
		uint64_t at = off + done;
		const struct tm_arc_run *r = k < e->n_runs ? &t->runs[e->first_run + k] : NULL;
		if (!r || at < r->offset) { /* a hole */
			uint64_t hole = (r ? r->offset : e->size) - at;
			size_t n = hole < len - done ? (size_t)hole : len - done;
			memset((char *)buf + done, 0, n);
			done += n;
			continue;
		}
		uint64_t in = at - r->offset, left = r->size - in;
		size_t n = left < len - done ? (size_t)left : len - done;
		ssize_t got = archive_read(m->a, (char *)buf + done, n, e->offset + r->at + in);
		if (got < 0)
			return got;
		done += (size_t)got;
		if ((size_t)got < n)
			break;
		k++;
	}
	return (ssize_t)done;
}

static void member_close(struct tm_source *s)
{
	struct member_source *m = s->priv;
	tm_archive_put(m->a);
	free(m);
}

static int member_dup(const struct tm_source *s, struct tm_source *out)
{
	const struct member_source *m = s->priv;
	return tm_archive_open(m->a, m->id, out);
}

static void member_identity(struct tm_source *s, uint64_t *size, struct timespec *mtime)
{
	const struct member_source *m = s->priv;
	const struct tm_arc_entry *e = &m->a->t.entries[m->id];
	*size = e->size;
	*mtime = (struct timespec){.tv_sec = (time_t)e->mtime};
}

static const struct tm_source_ops member_ops = {
    .read = member_read,
    .close = member_close,
    .dup = member_dup,
    .identity = member_identity,
};

int tm_archive_open(struct tm_archive *a, uint32_t id, struct tm_source *out)
{
	if (id >= a->t.n_entries || a->t.entries[id].type != TM_MEMBER_FILE)
		return -EINVAL;
	struct member_source *m = malloc(sizeof(*m));
	if (!m)
		return -ENOMEM;
	tm_archive_hold(a);
	*m = (struct member_source){a, id};
	*out = (struct tm_source){
	    .ops = &member_ops, .size = a->t.entries[id].size, .fd = a->file.fd, .priv = m};
	return 0;
}
