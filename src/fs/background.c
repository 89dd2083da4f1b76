/* -o prefetch: every trace under SOURCE indexed in the background after mounting, so that
 * the first reads find their indexes ready (and, with a cache folder, the index files). The
 * traces are found first, so that .tracemount/status can say how many are left. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/log.h"
#include "tracemount/trace.h"
#include "tracemount/virtual.h"
#include "tracemount/walk.h"

struct found {
	char *path;
	const struct tm_format *fmt;
	struct stat st;
	bool is_virtual; /* a virtual trace of its folder (virtual.h) */
};

struct found_list {
	struct tm_fs *fs;
	struct found *items;
	size_t n, cap;
};

static int add_found(void *arg, const char *path, const struct tm_format *fmt,
		     const struct stat *st, int err)
{
	struct found_list *l = arg;
	if (atomic_load(&l->fs->stop_indexing))
		return 1;
	if (!fmt) {
		tm_log(tm_context_logger(l->fs->ctx), LOG_WARNING, "prefetch: %s: %s", path,
		       strerror(-err));
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct found *items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			return -ENOMEM;
		l->items = items;
		l->cap = cap;
	}
	if (!(l->items[l->n].path = strdup(path)))
		return -ENOMEM;
	l->items[l->n].fmt = fmt;
	l->items[l->n].is_virtual = false;
	l->items[l->n++].st = *st;
	return 0;
}

/* Indexes the virtual trace at path, found again: its files may have changed since the
 * walk. */
static int index_virtual(struct tm_fs *fs, const char *path)
{
	const struct tm_format *fmt;
	struct tm_virtual *v;
	struct tm_trace *t;
	struct tm_source src;
	struct tm_open_trace ot;
	int err = tm_virtual_find(fs->ctx, fs->root_fd, path, &fmt, &v);
	if (err)
		return err;
	if ((err = tm_context_trace_of(fs->ctx, path, fmt, &v->st, &t)) == 0) {
		if ((err = fmt->virtual_open(fs->root_fd, v, &src)) == 0) {
			tm_trace_open(&ot, t, &src);
			err = tm_trace_index(&ot);
			tm_trace_close(&ot);
			tm_source_close(&src);
		}
		tm_trace_put(t);
	}
	tm_virtual_free(fmt, v, 1);
	return err;
}

/* One folder's virtual traces being added: the list, and the folder's path ("" for the
 * root). */
struct virtual_arg {
	struct found_list *l;
	const char *dir;
};

static int add_virtual(void *arg, const struct tm_format *fmt, const struct tm_virtual *v)
{
	const struct virtual_arg *a = arg;
	char path[PATH_MAX + sizeof(v->name)];
	snprintf(path, sizeof(path), "%s%s%s", a->dir, *a->dir ? "/" : "", v->name);
	int err = add_found(a->l, path, fmt, &v->st, 0);
	if (!err)
		a->l->items[a->l->n - 1].is_virtual = true;
	return err;
}

/* Whether items i and j of l are in the same folder, dir_len bytes of i's path long. */
static bool same_folder(const struct found_list *l, size_t i, size_t j, size_t dir_len)
{
	const char *p = l->items[j].path, *s = strrchr(p, '/');
	return (s ? (size_t)(s - p) : 0) == dir_len && strncmp(p, l->items[i].path, dir_len) == 0;
}

/* The virtual traces of the folders found, as more traces: each folder is asked once, at its
 * first file of a format that makes them, with its files counted by format. */
static int add_virtuals(struct found_list *l)
{
	size_t n_files = l->n;
	for (size_t i = 0; i < n_files; i++) {
		if (!l->items[i].fmt->virtual_list)
			continue;
		char *slash = strrchr(l->items[i].path, '/');
		size_t dir_len = slash ? (size_t)(slash - l->items[i].path) : 0;
		struct tm_virtual_census census = {0};
		bool first = true;
		for (size_t j = 0; j < n_files && first; j++) {
			if (!l->items[j].fmt->virtual_list || !same_folder(l, i, j, dir_len))
				continue;
			first = j >= i; /* the folder's first such file stands for it */
			tm_virtual_count(&census, l->items[j].fmt);
		}
		if (!first)
			continue;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", dir_len ? (int)dir_len : 1,
			 dir_len ? l->items[i].path : ".");
		struct virtual_arg a = {l, dir_len ? dir : ""};
		int err =
		    tm_virtual_each(l->fs->ctx, l->fs->root_fd, dir, &census, add_virtual, &a);
		if (err < 0 && err != -ENOMEM)
			continue; /* the folder cannot be read now: its files are indexed anyway */
		if (err)
			return err;
	}
	return 0;
}

static void *indexer(void *arg)
{
	struct tm_fs *fs = arg;
	struct found_list l = {.fs = fs};
	if (tm_walk(fs->ctx, fs->root_fd, fs->single ? fs->single : ".", add_found, &l) < 0 ||
	    add_virtuals(&l) < 0)
		tm_log(tm_context_logger(fs->ctx), LOG_ERR,
		       "prefetch: out of memory: %zu traces found", l.n);
	atomic_store(&fs->prefetch_total, (unsigned)l.n);
	atomic_store(&fs->prefetch_walked, true);
	tm_log(tm_context_logger(fs->ctx), LOG_INFO, "prefetch: %zu traces to index", l.n);
	for (size_t i = 0; i < l.n && !atomic_load(&fs->stop_indexing); i++) {
		struct found *f = &l.items[i];
		int err = f->is_virtual
			      ? index_virtual(fs, f->path)
			      : tm_index_one(fs->ctx, fs->root_fd, f->path, f->fmt, &f->st, NULL);
		if (err) {
			tm_log(tm_context_logger(fs->ctx), LOG_ERR,
			       "prefetch: %s: indexing failed: %s", f->path, strerror(-err));
			atomic_fetch_add(&fs->prefetch_failed, 1);
		}
		atomic_fetch_add(&fs->prefetch_done, 1);
	}
	if (!atomic_load(&fs->stop_indexing))
		tm_log(tm_context_logger(fs->ctx), LOG_INFO, "prefetch: done, %zu traces", l.n);
	atomic_store(&fs->prefetch_over, true);
	for (size_t i = 0; i < l.n; i++)
		free(l.items[i].path);
	free(l.items);
	return NULL;
}

int tm_fs_prefetch_all(struct tm_fs *fs)
{
	atomic_store(&fs->stop_indexing, false);
	int err = pthread_create(&fs->indexer, NULL, indexer, fs);
	if (err)
		return -err;
	fs->indexing = true;
	return 0;
}

void tm_fs_prefetch_stop(struct tm_fs *fs)
{
	if (!fs->indexing)
		return;
	atomic_store(&fs->stop_indexing, true);
	tm_context_stop(fs->ctx); /* and the build under way */
	pthread_join(fs->indexer, NULL);
	fs->indexing = false;
}

int tm_fs_prefetch_state(struct tm_fs *fs, char *buf, size_t len)
{
	unsigned failed = atomic_load(&fs->prefetch_failed);
	char failures[48] = "";
	if (failed)
		snprintf(failures, sizeof(failures), ", %u failed", failed);
	if (!fs->indexing)
		return snprintf(buf, len, "# prefetch: off\n");
	if (!atomic_load(&fs->prefetch_walked))
		return snprintf(buf, len, "# prefetch: finding the traces\n");
	return snprintf(buf, len, "# prefetch: %u of %u traces, %s%s\n",
			atomic_load(&fs->prefetch_done), atomic_load(&fs->prefetch_total),
			atomic_load(&fs->prefetch_over) ? "done" : "running", failures);
}
