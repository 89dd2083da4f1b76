/* -o prefetch: every trace under SOURCE indexed in the background after mounting, so that
 * the first reads find their indexes ready (and, with a cache folder, the index files). The
 * traces are found first, so that .tracemount/status can say how many are left. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "tracemount/fs.h"
#include "tracemount/walk.h"

struct found {
	char *path;
	const struct tm_format *fmt;
	struct stat st;
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
		tm_fs_log(l->fs, LOG_WARNING, "prefetch: %s: %s", path, strerror(-err));
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
	l->items[l->n++].st = *st;
	return 0;
}

static void *indexer(void *arg)
{
	struct tm_fs *fs = arg;
	struct found_list l = {.fs = fs};
	if (tm_walk(fs->ctx, fs->root_fd, fs->single ? fs->single : ".", add_found, &l) < 0)
		tm_fs_log(fs, LOG_ERR, "prefetch: out of memory: %zu traces found", l.n);
	atomic_store(&fs->prefetch_total, (unsigned)l.n);
	atomic_store(&fs->prefetch_walked, true);
	tm_fs_log(fs, LOG_INFO, "prefetch: %zu traces to index", l.n);
	for (size_t i = 0; i < l.n && !atomic_load(&fs->stop_indexing); i++) {
		struct found *f = &l.items[i];
		int err = tm_index_one(fs->ctx, fs->root_fd, f->path, f->fmt, &f->st, NULL);
		if (err) {
			tm_fs_log(fs, LOG_ERR, "prefetch: %s: indexing failed: %s", f->path,
				  strerror(-err));
			atomic_fetch_add(&fs->prefetch_failed, 1);
		}
		atomic_fetch_add(&fs->prefetch_done, 1);
	}
	if (!atomic_load(&fs->stop_indexing))
		tm_fs_log(fs, LOG_INFO, "prefetch: done, %zu traces", l.n);
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
