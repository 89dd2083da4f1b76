/* Finding and indexing the traces under a path: see walk.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemount/derive.h"
#include "tracemount/context.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/walk.h"

typedef int (*walk_fn)(void *arg, const char *path, const struct tm_format *fmt,
		       const struct stat *st, int err);

static int by_entry_name(const void *a, const void *b)
{
	return strcmp((*(struct dirent *const *)a)->d_name, (*(struct dirent *const *)b)->d_name);
}

static int walk_dir(struct tm_context *ctx, int dirfd, char *path, size_t len, walk_fn fn,
		    void *arg)
{
	int fd = dirfd == AT_FDCWD ? open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				   : tm_open_beneath(dirfd, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fn(arg, path, NULL, NULL, dirfd == AT_FDCWD ? -errno : fd);
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return fn(arg, path, NULL, NULL, -errno);
	}
	/* sorted, so that runs and their output are reproducible */
	struct dirent **names = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct dirent **grown = realloc(names, cap * sizeof(*names));
			if (!grown) {
				r = -ENOMEM;
				break;
			}
			names = grown;
		}
		size_t sz = offsetof(struct dirent, d_name) + strlen(e->d_name) + 1;
		if (!(names[n] = malloc(sz > sizeof(*e) ? sz : sizeof(*e)))) {
			r = -ENOMEM;
			break;
		}
		memcpy(names[n++], e, sz);
	}
	closedir(d);
	if (!r && n) /* qsort takes no NULL array, even empty */
		qsort(names, n, sizeof(*names), by_entry_name);
	/* below ".", children are "a", not "./a": the paths the mount uses */
	size_t at = len == 1 && path[0] == '.' ? 0 : len + 1;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(names[i]->d_name);
		if (!r && at + nl + 1 > PATH_MAX) /* named by its folder */
			r = fn(arg, path, NULL, NULL, -ENAMETOOLONG);
		else if (!r) {
			char saved = path[len];
			if (at)
				path[len] = '/';
			memcpy(path + at, names[i]->d_name, nl + 1);
			r = tm_walk(ctx, dirfd, path, fn, arg);
			path[len] = saved;
			if (!at)
				memcpy(path, ".", 2);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int tm_walk(struct tm_context *ctx, int dirfd, const char *path, walk_fn fn, void *arg)
{
	char buf[PATH_MAX];
	struct stat st;
	size_t len = strlen(path);
	if (len >= sizeof(buf))
		return fn(arg, path, NULL, NULL, -ENAMETOOLONG);
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	if (tm_is_mount_of(dirfd, buf, tm_context_own_device(ctx)))
		return 0; /* the mount itself, seen below SOURCE */
	if (fstatat(dirfd, buf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fn(arg, buf, NULL, NULL, -errno);
	if (S_ISDIR(st.st_mode))
		return walk_dir(ctx, dirfd, buf, len, fn, arg);
	if (!S_ISREG(st.st_mode))
		return 0;
	const struct tm_format *fmt = tm_context_detect(ctx, dirfd, buf);
	return fmt ? fn(arg, buf, fmt, &st, 0) : 0;
}

int tm_index_one(struct tm_context *ctx, int dirfd, const char *path, const struct tm_format *fmt,
		 const struct stat *st, bool records_first, _Atomic(struct tm_trace *) *held)
{
	struct tm_trace *t;
	struct tm_source src;
	struct tm_open_trace ot;
	int err = tm_context_trace_of(ctx, path, fmt, st, &t);
	if (err)
		return err;
	if (held)
		atomic_store(held, t);
	if ((err = tm_source_open(dirfd, path, &src)) == 0) {
		tm_trace_open(&ot, t, &src);
		err = records_first ? tm_trace_index(&ot) : 0;
		err = err ? err : tm_trace_products(&ot, TM_PRODUCTS_ALL);
		tm_trace_close(&ot);
		tm_source_close(&src);
	}
	if (held)
		atomic_store(held, NULL);
	tm_trace_put(t);
	return err;
}
