/* What a path of the mount is (a node) and its entries; a node's attributes are file.c's.
 *
 * A path is walked one component at a time with fstatat(AT_SYMLINK_NOFOLLOW) below the
 * SOURCE folder's descriptor: a symbolic link ends the walk (the kernel resolves links
 * itself, through readlink), so no lookup leaves SOURCE. The first regular file recognised
 * as a trace turns the rest of the path into a view path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/log.h"
#include "tracemount/trace.h"
#include "tracemount/virtual.h"

/* Copies the next component of *p into comp and advances *p past it and its slashes. */
static int next_component(const char **p, char *comp, size_t size)
{
	const char *s = *p, *end = strchr(s, '/');
	size_t len = end ? (size_t)(end - s) : strlen(s);
	if (len == 0 || len >= size)
		return -ENAMETOOLONG;
	memcpy(comp, s, len);
	comp[len] = '\0';
	if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
		return -ENOENT;
	s += len;
	while (*s == '/')
		s++;
	*p = s;
	return 0;
}

static int resolve_meta(const char *rest, struct tm_node *n)
{
	if (!*rest) {
		n->kind = TM_NODE_META_DIR;
		return 0;
	}
	for (int i = 0; i < TM_META_N; i++) {
		if (strcmp(rest, tm_meta_names[i]) == 0) {
			n->kind = TM_NODE_META;
			n->meta = (enum tm_meta_file)i;
			return 0;
		}
	}
	return -ENOENT;
}

int tm_fs_node_source(struct tm_fs *fs, const struct tm_node *n, struct tm_source *src)
{
	if (!n->virt)
		return tm_source_open(fs->root_fd, n->src, src);
	return n->fmt->virtual_open(fs->root_fd, n->virt, src);
}

/* Whether view v of n's trace exists (a group view needs records, so the index). */
static int view_exists(struct tm_fs *fs, const struct tm_node *n, unsigned v)
{
	struct tm_source src;
	struct tm_open_trace ot;
	if (tm_trace_view(n->trace, v)->group < 0)
		return 1;
	int err = tm_fs_node_source(fs, n, &src);
	if (err)
		return err;
	tm_trace_open(&ot, n->trace, &src);
	err = tm_view_exists(&ot, v);
	tm_trace_close(&ot);
	tm_source_close(&src);
	if (err < 0)
		tm_log(tm_context_logger(fs->ctx), LOG_ERR, "%s: indexing failed: %s", n->src,
		       strerror(-err));
	return err;
}

/* Whether folder dir of n's trace shows: at once when it holds a view other than a per-stream
 * one (cpu/ of group views too: listed before the index), else when the index shows one of
 * the streams of its per-stream views (derive.h), which all exist together. */
static int dir_exists(struct tm_fs *fs, const struct tm_node *n, const char *dir)
{
	const struct tm_view_table *t = tm_trace_views(n->trace);
	size_t len = strlen(dir);
	uint64_t tried = 0;
	int exists = 0;
	for (unsigned i = 0; i < t->n_views && !exists; i++) {
		const struct tm_view *v = &t->views[i];
		if (strncmp(v->path, dir, len) != 0 || v->path[len] != '/')
			continue;
		if (v->kind != TM_VIEW_TABLE || v->group < 0)
			return 1;
		if (tried >> v->group & 1)
			continue;
		tried |= 1ull << v->group;
		exists = view_exists(fs, n, i);
	}
	return exists;
}

/* Inside a trace: rest names a view or a folder of views. */
static int resolve_view(struct tm_fs *fs, const char *rest, struct tm_node *n)
{
	if (!*rest) {
		n->kind = TM_NODE_TRACE;
		return 0;
	}
	if (strlen(rest) >= sizeof(n->sub))
		return -ENAMETOOLONG;
	strcpy(n->sub, rest);
	size_t len = strlen(n->sub);
	while (len && n->sub[len - 1] == '/')
		n->sub[--len] = '\0';
	int err = tm_context_trace_of(fs->ctx, n->src, n->fmt, &n->st, &n->trace);
	if (err)
		return err;
	if (strcmp(n->sub, TM_TRACE_REPORT) == 0) {
		n->kind = TM_NODE_REPORT;
		return 0;
	}
	int v = tm_view_table_find(tm_trace_views(n->trace), n->sub);
	if (v >= 0 && (err = view_exists(fs, n, (unsigned)v)) > 0) {
		n->kind = TM_NODE_VIEW;
		n->view = v;
		return 0;
	}
	if (v >= 0) {
		tm_node_put(n);
		return err ? err : -ENOENT;
	}
	if (tm_view_table_is_dir(tm_trace_views(n->trace), n->sub) &&
	    (err = dir_exists(fs, n, n->sub)) > 0) {
		n->kind = TM_NODE_VIEW_DIR;
		return 0;
	}
	tm_node_put(n);
	return err < 0 ? err : -ENOENT;
}

/* n->src names no file: it may be a virtual trace of its folder. */
static int resolve_virtual(struct tm_fs *fs, const char *rest, struct tm_node *n)
{
	int err = tm_virtual_find(fs->ctx, fs->root_fd, n->src, &n->fmt, &n->virt);
	if (err)
		return err;
	n->st = n->virt->st;
	if ((err = resolve_view(fs, rest, n)) < 0)
		tm_node_put(n); /* a failed lookup holds nothing */
	return err;
}

/* Walks path below SOURCE one folder descriptor at a time (walk_path does the work). */
static int walk_path(struct tm_fs *fs, const char *path, struct tm_node *n, int *dirfd);

int tm_fs_resolve(struct tm_fs *fs, const char *path, struct tm_node *n)
{
	int dirfd = fs->root_fd;
	int err = walk_path(fs, path, n, &dirfd);
	if (dirfd != fs->root_fd)
		close(dirfd);
	return err;
}

/* Each component is looked up with fstatat(AT_SYMLINK_NOFOLLOW) in the folder before it, held
 * open (O_PATH | O_NOFOLLOW): a folder swapped for a symbolic link while the walk goes on is
 * never followed, so no attribute from outside SOURCE is ever seen. */
static int walk_path(struct tm_fs *fs, const char *path, struct tm_node *n, int *dirfd)
{
	char comp[NAME_MAX + 1];
	size_t src_len = 0;
	int err;

	memset(n, 0, sizeof(*n));
	n->view = -1;
	while (*path == '/')
		path++;
	if (!*path) {
		n->kind = TM_NODE_DIR;
		strcpy(n->src, ".");
		return fstat(fs->root_fd, &n->st) < 0 ? -errno : 0;
	}
	for (int depth = 0; *path; depth++) {
		if ((err = next_component(&path, comp, sizeof(comp))) < 0)
			return err;
		if (depth == 0 && strcmp(comp, TM_META_DIR) == 0)
			return resolve_meta(path, n);
		if (depth == 0 && fs->single && strcmp(comp, fs->single) != 0)
			return -ENOENT;
		size_t cl = strlen(comp);
		if (src_len + cl + 2 > sizeof(n->src))
			return -ENAMETOOLONG;
		if (src_len)
			n->src[src_len++] = '/';
		memcpy(n->src + src_len, comp, cl + 1);
		src_len += cl;
		if (tm_is_mount_of(*dirfd, comp, tm_context_own_device(fs->ctx)))
			return -ENOENT; /* the mount itself, seen below SOURCE */
		if (fstatat(*dirfd, comp, &n->st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? resolve_virtual(fs, path, n) : -errno;

		if (S_ISDIR(n->st.st_mode)) {
			n->kind = TM_NODE_DIR;
			if (!*path)
				break;
			int next =
			    openat(*dirfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0)
				return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
			if (*dirfd != fs->root_fd)
				close(*dirfd);
			*dirfd = next;
			continue;
		}
		if (S_ISLNK(n->st.st_mode)) {
			n->kind = TM_NODE_LINK;
			return *path ? -ENOTDIR : 0;
		}
		if (!S_ISREG(n->st.st_mode))
			return -ENOENT; /* devices, fifos and sockets are not shown */
		n->fmt = tm_context_detect(fs->ctx, fs->root_fd, n->src);
		if (n->fmt)
			return resolve_view(fs, path, n);
		n->kind = TM_NODE_FILE;
		return *path ? -ENOTDIR : 0;
	}
	return 0;
}

void tm_node_put(struct tm_node *n)
{
	if (n->trace)
		tm_trace_put(n->trace);
	n->trace = NULL;
	if (n->virt)
		tm_virtual_free(n->fmt, n->virt, 1);
	n->virt = NULL;
}

void tm_fs_view_stat(const struct stat *trace, uint64_t size, struct stat *st)
{
	*st = *trace;
	st->st_mode = S_IFREG | (trace->st_mode & 0444);
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
}

void tm_fs_source_stat(struct stat *st)
{
	st->st_mode &= ~(mode_t)(0222 | S_ISUID | S_ISGID | S_ISVTX);
}

int tm_fs_readlink(struct tm_fs *fs, const char *path, char *buf, size_t size)
{
	struct tm_node n;
	int err = tm_fs_resolve(fs, path, &n);
	if (err)
		return err;
	tm_node_put(&n);
	if (n.kind != TM_NODE_LINK)
		return -EINVAL;
	if (size == 0)
		return -EINVAL;
	/* read the link from its folder, opened beneath SOURCE, so no swapped folder leads out */
	const char *slash = strrchr(n.src, '/'), *name = slash ? slash + 1 : n.src;
	int dirfd = fs->root_fd;
	if (slash) {
		char parent[PATH_MAX];
		memcpy(parent, n.src, (size_t)(slash - n.src));
		parent[slash - n.src] = '\0';
		if ((dirfd = tm_open_beneath(fs->root_fd, parent, O_PATH | O_DIRECTORY)) < 0)
			return dirfd;
	}
	ssize_t len = readlinkat(dirfd, name, buf, size - 1);
	err = len < 0 ? -errno : 0;
	if (dirfd != fs->root_fd)
		close(dirfd);
	if (err)
		return err;
	buf[len] = '\0';
	return 0;
}

struct list_views_arg {
	int (*fill)(void *arg, const char *name, mode_t type);
	void *arg;
	struct tm_fs *fs;
	const struct tm_node *n;
	int err;
};

static int list_view(void *p, const char *name, int is_dir, unsigned view)
{
	struct list_views_arg *a = p;
	int exists;
	if (is_dir) {
		char dir[PATH_MAX];
		const char *in = a->n->kind == TM_NODE_TRACE ? "" : a->n->sub;
		if (snprintf(dir, sizeof(dir), "%s%s%s", in, *in ? "/" : "", name) >=
		    (int)sizeof(dir))
			return 0;
		exists = dir_exists(a->fs, a->n, dir);
	} else {
		exists = view_exists(a->fs, a->n, view);
	}
	if (exists < 0)
		return a->err = exists;
	if (!exists)
		return 0;
	return a->fill(a->arg, name, is_dir ? S_IFDIR : S_IFREG);
}

struct fill_arg {
	int (*fill)(void *arg, const char *name, mode_t type);
	void *arg;
};

static int fill_virtual(void *p, const struct tm_format *fmt, const struct tm_virtual *v)
{
	const struct fill_arg *a = p;
	(void)fmt;
	return a->fill(a->arg, v->name, S_IFDIR);
}

/* The entries of a source folder, with traces shown as folders. */
static int list_source_dir(struct tm_fs *fs, const struct tm_node *n,
			   int (*fill)(void *arg, const char *name, mode_t type), void *arg)
{
	char child[PATH_MAX];
	int is_root = strcmp(n->src, ".") == 0;
	int fd = tm_open_beneath(fs->root_fd, n->src, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	int err = 0;
	struct tm_virtual_census census = {0};
	struct dirent *e;
	while (!err && (errno = 0, e = readdir(d))) {
		const char *name = e->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (is_root && strcmp(name, TM_META_DIR) == 0)
			continue; /* the virtual folder takes its place */
		if (snprintf(child, sizeof(child), "%s/%s", n->src, name) >= (int)sizeof(child))
			continue;
		const char *rel = is_root ? name : child;
		unsigned char type = e->d_type;
		if ((type == DT_DIR || type == DT_UNKNOWN) &&
		    tm_is_mount_of(dirfd(d), name, tm_context_own_device(fs->ctx)))
			continue; /* the mount itself, seen below SOURCE */
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode)   ? DT_DIR
			       : S_ISLNK(st.st_mode) ? DT_LNK
			       : S_ISREG(st.st_mode) ? DT_REG
						     : DT_UNKNOWN;
		}
		if (type == DT_DIR)
			err = fill(arg, name, S_IFDIR);
		else if (type == DT_LNK)
			err = fill(arg, name, S_IFLNK);
		else if (type == DT_REG) {
			const struct tm_format *fmt = tm_context_detect(fs->ctx, fs->root_fd, rel);
			tm_virtual_count(&census, fmt);
			err = fill(arg, name, fmt ? S_IFDIR : S_IFREG);
		}
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	if (err)
		return err > 0 ? 0 : err;
	/* only folders with enough files of a format that makes virtual traces are read again */
	struct fill_arg fa = {fill, arg};
	err = tm_virtual_each(fs->ctx, fs->root_fd, n->src, &census, fill_virtual, &fa);
	return err > 0 ? 0 : err;
}

int tm_fs_readdir(struct tm_fs *fs, const char *path,
		  int (*fill)(void *arg, const char *name, mode_t type), void *arg)
{
	struct tm_node n;
	int err = tm_fs_resolve(fs, path, &n);
	if (err)
		return err;
	struct list_views_arg la = {fill, arg, fs, &n, 0};
	int is_root = n.kind == TM_NODE_DIR && strcmp(n.src, ".") == 0;

	if (n.kind == TM_NODE_TRACE)
		err = tm_context_trace_of(fs->ctx, n.src, n.fmt, &n.st, &n.trace);
	if (err)
		goto out;
	if (fill(arg, ".", S_IFDIR) || fill(arg, "..", S_IFDIR))
		goto out;
	if (is_root && fill(arg, TM_META_DIR, S_IFDIR))
		goto out;
	switch (n.kind) {
	case TM_NODE_DIR:
		if (is_root && fs->single)
			fill(arg, fs->single, S_IFDIR);
		else
			err = list_source_dir(fs, &n, fill, arg);
		break;
	case TM_NODE_TRACE:
	case TM_NODE_VIEW_DIR:
		if (tm_view_table_list(tm_trace_views(n.trace),
				       n.kind == TM_NODE_TRACE ? "" : n.sub, list_view, &la) == 0 &&
		    n.kind == TM_NODE_TRACE)
			fill(arg, TM_TRACE_REPORT, S_IFREG);
		err = la.err;
		break;
	case TM_NODE_META_DIR:
		for (int i = 0; i < TM_META_N; i++)
			if (fill(arg, tm_meta_names[i], S_IFREG))
				break;
		break;
	default: err = -ENOTDIR;
	}
out:
	tm_node_put(&n);
	return err;
}

int tm_fs_statfs(struct tm_fs *fs, struct statvfs *st)
{
	if (fstatvfs(fs->root_fd, st) < 0)
		return -errno;
	st->f_flag |= ST_RDONLY;
	return 0;
}
