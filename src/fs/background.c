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
#include "tracemount/registry.h"
#include "tracemount/sum.h"
#include "tracemount/trace.h"
#include "tracemount/walk.h"

struct found {
	char *path;
	const struct tm_format *fmt;
	struct stat st;
	bool is_sum; /* a sum of spixcounts files (sum.h) */
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
	l->items[l->n].is_sum = false;
	l->items[l->n++].st = *st;
	return 0;
}

/* Indexes the sum at path, found again: its members may have changed since the walk. */
static int index_sum(struct tm_fs *fs, const char *path, const struct tm_format *fmt)
{
	struct tm_sum *sum;
	struct tm_trace *t;
	struct tm_source src;
	const struct tm_index *ix;
	int err = tm_sum_find(fs->ctx, fs->root_fd, path, &sum);
	if (err)
		return err;
	if ((err = tm_context_trace_of(fs->ctx, path, fmt, &sum->st, &t)) == 0) {
		if ((err = tm_sum_source_open(fs->root_fd, sum, &src)) == 0) {
			err = tm_trace_index(t, &src, &ix);
			tm_source_close(&src);
		}
		tm_context_trace_put(fs->ctx, t);
	}
	tm_sums_free(sum, 1);
	return err;
}

/* The sums of the folders holding two or more spixcounts files found, as more traces. */
static int add_sums(struct found_list *l)
{
	const struct tm_format *spix = tm_format_find("spixcounts");
	size_t n_files = l->n;
	for (size_t i = 0; i < n_files; i++) {
		if (l->items[i].fmt != spix)
			continue;
		char *slash = strrchr(l->items[i].path, '/');
		size_t dir_len = slash ? (size_t)(slash - l->items[i].path) : 0;
		unsigned in_dir = 0, first = 1;
		for (size_t j = 0; j < n_files; j++) {
			const char *p = l->items[j].path, *s = strrchr(p, '/');
			if (l->items[j].fmt != spix || (s ? (size_t)(s - p) : 0) != dir_len ||
			    strncmp(p, l->items[i].path, dir_len) != 0)
				continue;
			first &= j >= i; /* the folder's first file stands for it */
			in_dir++;
		}
		if (in_dir < 2 || !first)
			continue;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", dir_len ? (int)dir_len : 1,
			 dir_len ? l->items[i].path : ".");
		struct tm_sum *sums;
		int n = tm_sums_of(l->fs->ctx, l->fs->root_fd, dir, &sums);
		for (int k = 0; k < n; k++) {
			char path[PATH_MAX + sizeof(sums[k].name)];
			snprintf(path, sizeof(path), "%s%s%s", dir_len ? dir : "",
				 dir_len ? "/" : "", sums[k].name);
			int err = add_found(l, path, spix, &sums[k].st, 0);
			if (err) {
				tm_sums_free(sums, n);
				return err;
			}
			l->items[l->n - 1].is_sum = true;
		}
		if (n > 0)
			tm_sums_free(sums, n);
	}
	return 0;
}

static void *indexer(void *arg)
{
	struct tm_fs *fs = arg;
	struct found_list l = {.fs = fs};
	if (tm_walk(fs->ctx, fs->root_fd, fs->single ? fs->single : ".", add_found, &l) < 0 ||
	    add_sums(&l) < 0)
		tm_fs_log(fs, LOG_ERR, "prefetch: out of memory: %zu traces found", l.n);
	atomic_store(&fs->prefetch_total, (unsigned)l.n);
	atomic_store(&fs->prefetch_walked, true);
	tm_fs_log(fs, LOG_INFO, "prefetch: %zu traces to index", l.n);
	for (size_t i = 0; i < l.n && !atomic_load(&fs->stop_indexing); i++) {
		struct found *f = &l.items[i];
		int err = f->is_sum
			      ? index_sum(fs, f->path, f->fmt)
			      : tm_index_one(fs->ctx, fs->root_fd, f->path, f->fmt, &f->st, NULL);
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
