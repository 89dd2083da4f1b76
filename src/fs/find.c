/* Finding every trace under SOURCE, for -o prefetch and .tracemount/report.html: the files
 * tm_walk finds, then the virtual traces of their folders. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/format.h"
#include "tracemount/fs.h"
#include "tracemount/virtual.h"
#include "tracemount/walk.h"

struct found_list {
	struct tm_fs *fs;
	struct tm_fs_found *items;
	size_t n, cap;
	void (*unread)(void *arg, const char *path, int err);
	void *arg;
};

static int add_found(void *arg, const char *path, const struct tm_format *fmt,
		     const struct stat *st, int err)
{
	struct found_list *l = arg;
	if (atomic_load(&l->fs->stop_indexing))
		return 1;
	if (!fmt) {
		if (l->unread)
			l->unread(l->arg, path, err);
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct tm_fs_found *items = realloc(l->items, cap * sizeof(*items));
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

int tm_fs_find_traces(struct tm_fs *fs, void (*unread)(void *arg, const char *path, int err),
		      void *arg, struct tm_fs_found **found, size_t *n)
{
	struct found_list l = {.fs = fs, .unread = unread, .arg = arg};
	int err = tm_walk(fs->ctx, fs->root_fd, fs->single ? fs->single : ".", add_found, &l);
	if (err >= 0)
		err = add_virtuals(&l);
	*found = l.items;
	*n = l.n;
	return err < 0 ? err : 0;
}

void tm_fs_found_free(struct tm_fs_found *found, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(found[i].path);
	free(found);
}
