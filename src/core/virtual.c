/* Virtual traces of folders: the formats' hooks called for a folder (virtual.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemount/context.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/virtual.h"

void tm_virtual_count(struct tm_virtual_census *c, const struct tm_format *fmt)
{
	if (!fmt || !fmt->virtual_list)
		return;
	for (unsigned k = 0; k < TM_VIRTUAL_MAX_FORMATS; k++) {
		if (!c->fmt[k])
			c->fmt[k] = fmt;
		if (c->fmt[k] == fmt) {
			c->n_files[k]++;
			return;
		}
	}
}

void tm_virtual_free(const struct tm_format *fmt, struct tm_virtual *v, unsigned n)
{
	for (unsigned k = 0; v && k < n; k++)
		fmt->virtual_free(v[k].priv);
	free(v);
}

static void free_paths(char **paths, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		free(paths[k]);
	free(paths);
}

/* Whether entry e of folder d is a regular file. */
static bool is_regular(DIR *d, const struct dirent *e)
{
	struct stat st;
	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_REG;
	return fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* The paths of the regular files of folder dir that ctx detects as fmt, in the folder's
 * order, into *out (free_paths). Returns their count or -errno. */
static int files_of(struct tm_context *ctx, int dirfd, const char *dir, const struct tm_format *fmt,
		    char ***out)
{
	bool here = strcmp(dir, ".") == 0;
	/* a descriptor of its own: a dup would share (and move) the folder's offset */
	int fd = here ? openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		      : tm_open_beneath(dirfd, dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return here ? -errno : fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	char **paths = NULL;
	unsigned n = 0, cap = 0;
	int err = 0;
	for (struct dirent *e; !err && (e = readdir(d));) {
		char path[PATH_MAX];
		if (!is_regular(d, e))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		const char *rel = here ? e->d_name : path;
		if (tm_context_detect(ctx, dirfd, rel) != fmt)
			continue;
		if (n == cap) {
			char **bigger = realloc(paths, (cap = cap ? 2 * cap : 8) * sizeof(*paths));
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			paths = bigger;
		}
		if (!(paths[n] = strdup(rel)))
			err = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	if (err) {
		free_paths(paths, n);
		return err;
	}
	*out = paths;
	return (int)n;
}

/* The virtual traces fmt makes of folder dir: their count, the array in *out. */
static int virtuals_of(struct tm_context *ctx, int dirfd, const char *dir,
		       const struct tm_format *fmt, struct tm_virtual **out)
{
	char **files = NULL;
	int n = files_of(ctx, dirfd, dir, fmt, &files);
	if (n < 0)
		return n;
	*out = NULL;
	int n_virtual = (unsigned)n >= fmt->virtual_min_files
			    ? fmt->virtual_list(dirfd, dir, files, (unsigned)n, out)
			    : 0;
	free_paths(files, (unsigned)n);
	return n_virtual;
}

int tm_virtual_each(struct tm_context *ctx, int dirfd, const char *dir,
		    const struct tm_virtual_census *c,
		    int (*fn)(void *arg, const struct tm_format *fmt, const struct tm_virtual *v),
		    void *arg)
{
	int ret = 0;
	for (unsigned k = 0; k < TM_VIRTUAL_MAX_FORMATS && c->fmt[k] && !ret; k++) {
		const struct tm_format *fmt = c->fmt[k];
		struct tm_virtual *v;
		if (c->n_files[k] < fmt->virtual_min_files)
			continue;
		int n = virtuals_of(ctx, dirfd, dir, fmt, &v);
		if (n < 0)
			return n;
		for (int i = 0; i < n && !ret; i++)
			ret = fn(arg, fmt, &v[i]);
		tm_virtual_free(fmt, v, (unsigned)n);
	}
	return ret;
}

int tm_virtual_find(struct tm_context *ctx, int dirfd, const char *path,
		    const struct tm_format **fmt, struct tm_virtual **out)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	for (const struct tm_format *const *f = tm_formats; *f; f++) {
		struct tm_virtual *v;
		if (!(*f)->virtual_name || !(*f)->virtual_name(name))
			continue;
		int n = virtuals_of(ctx, dirfd, dir, *f, &v);
		if (n < 0)
			return n;
		for (int k = 0; k < n; k++) {
			if (strcmp(v[k].name, name) != 0)
				continue;
			struct tm_virtual *one = malloc(sizeof(*one));
			if (!one) {
				tm_virtual_free(*f, v, (unsigned)n);
				return -ENOMEM;
			}
			*one = v[k];
			v[k] = v[n - 1]; /* the found one leaves the array */
			tm_virtual_free(*f, v, (unsigned)n - 1);
			*fmt = *f;
			*out = one;
			return 0;
		}
		tm_virtual_free(*f, v, (unsigned)n);
	}
	return -ENOENT;
}
