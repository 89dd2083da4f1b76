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

#include "tracemount/archive.h"
#include "tracemount/context.h"
#include "tracemount/derive.h"
#include "tracemount/fs.h"
#include "tracemount/log.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/util.h"
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
	if (n->arc)
		return tm_archive_open(n->arc, n->member, src);
	if (!n->virt)
		return tm_source_open(fs->root_fd, n->src, src);
	return n->fmt->virtual_open(fs->root_fd, n->virt, src);
}

/* Whether view v of n's trace exists (a group view needs records, a view hidden when empty
 * its size: both the index). */
static int view_exists(struct tm_fs *fs, const struct tm_node *n, unsigned v)
{
	struct tm_source src;
	struct tm_open_trace ot;
	const struct tm_view *view = tm_trace_view(n->trace, v);
	if (view->group < 0 && !view->hide_empty)
		return 1;
	int err = tm_fs_node_source(fs, n, &src);
	if (err)
		return err;
	tm_trace_open(&ot, n->trace, &src);
	err = tm_view_exists(&ot, v);
	tm_trace_close(&ot);
	tm_source_close(&src);
	if (err < 0 && err != -EINTR && err != -ECANCELED) /* those two: the reader left */
		tm_log(tm_context_logger(fs->ctx), LOG_ERR, "%s: indexing failed: %s", n->src,
		       strerror(-err));
	return err;
}

/* Whether folder dir of n's trace shows: at once when it holds a view other than a per-stream
 * one or one hidden when empty (cpu/ of group views too: listed before the index), else when
 * the index shows one of the streams of its per-stream views (derive.h), which all exist
 * together but for those hidden when empty, or one of those is not empty. */
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
		if (v->kind != TM_VIEW_TABLE || (v->group < 0 && !v->hide_empty))
			return 1;
		if (!v->hide_empty && tried >> v->group & 1)
			continue;
		if (!v->hide_empty)
			tried |= 1ull << v->group;
		exists = view_exists(fs, n, i);
	}
	return exists;
}

/* A trace's format, where its name made it a trace but left the format to its head
 * (kind_of_file): read as the trace's folder is entered, not when a listing shows it. */
static int settle_format(struct tm_fs *fs, struct tm_node *n)
{
	bool tar;
	if (!n->fmt)
		n->fmt = tm_context_detect_also(fs->ctx, fs->root_fd, n->src, &n->st,
						tm_archive_head, &tar);
	return n->fmt ? 0 : -EIO;
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
	int err = settle_format(fs, n);
	if (!err)
		err = tm_context_trace_of(fs->ctx, n->src, n->fmt, &n->st, &n->trace);
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

/* The attributes of archive entry e: the member's times, size and mode, on the archive file's
 * device, inode and change time (st), which tell the archive's versions apart. */
static void entry_stat(const struct stat *st, const struct tm_archive_entry *e, struct stat *out)
{
	*out = *st;
	out->st_mtim = (struct timespec){.tv_sec = (time_t)e->mtime};
	out->st_atim = out->st_mtim;
	out->st_size = (off_t)e->size;
	out->st_nlink = 1;
	out->st_blocks = (blkcnt_t)((e->size + 511) / 512);
	mode_t perm = (mode_t)e->mode & 0555;
	switch (e->type) {
	case TM_MEMBER_DIR:
		out->st_mode = S_IFDIR | perm | 0500;
		out->st_nlink = 2;
		break;
	case TM_MEMBER_SYMLINK:
		out->st_mode = S_IFLNK | 0777;
		out->st_size = (off_t)strlen(e->link);
		break;
	default: out->st_mode = S_IFREG | perm; break;
	}
}

/* n->src names an archive whose attributes are n->st: rest is a path inside it. */
static int resolve_archive(struct tm_fs *fs, const char *rest, struct tm_node *n)
{
	char comp[NAME_MAX + 1];
	struct tm_archive_entry e;
	int err = tm_archives_get(fs->archives, fs->root_fd, n->src, &n->st, &n->arc);
	if (err)
		return err;
	struct stat archive_st = n->st;
	n->kind = TM_NODE_ARCHIVE;
	n->in_arc[0] = '\0';
	size_t len = 0;
	while (*rest) {
		if ((err = next_component(&rest, comp, sizeof(comp))) < 0)
			goto fail;
		if (len == 0 && strcmp(comp, TM_ARCHIVE_ERRORS) == 0 &&
		    tm_archive_lookup(n->arc, comp, &e) < 0) {
			n->kind = TM_NODE_ARCHIVE_ERRORS;
			err = *rest ? -ENOTDIR : 0;
			goto done;
		}
		size_t cl = strlen(comp);
		if (len + cl + 2 > sizeof(n->in_arc)) {
			err = -ENAMETOOLONG;
			goto fail;
		}
		if (len)
			n->in_arc[len++] = '/';
		memcpy(n->in_arc + len, comp, cl + 1);
		len += cl;
		if ((err = tm_archive_lookup(n->arc, n->in_arc, &e)) < 0)
			goto fail;
		entry_stat(&archive_st, &e, &n->st);
		if (e.type == TM_MEMBER_DIR)
			continue;
		if (e.type == TM_MEMBER_SYMLINK) {
			n->kind = TM_NODE_LINK;
			err = *rest ? -ENOTDIR : 0;
			goto done;
		}
		n->member = e.id;
		if (!e.fmt) {
			n->kind = TM_NODE_FILE;
			err = *rest ? -ENOTDIR : 0;
			goto done;
		}
		/* a trace: its path in the context is the archive's and the member's */
		size_t sl = strlen(n->src);
		if (sl + 1 + len + 1 > sizeof(n->src)) {
			err = -ENAMETOOLONG;
			goto fail;
		}
		n->src[sl] = '/';
		memcpy(n->src + sl + 1, n->in_arc, len + 1);
		n->fmt = e.fmt;
		/* the trace's identity: the archive file's, so a new archive makes new traces */
		n->st.st_dev = archive_st.st_dev;
		n->st.st_ino = archive_st.st_ino;
		n->st.st_size = archive_st.st_size;
		n->st.st_mtim = archive_st.st_mtim;
		n->st.st_ctim = archive_st.st_ctim;
		err = resolve_view(fs, rest, n); /* puts the node when it fails */
		return err;
	}
done:
	if (!err)
		return 0;
fail:
	tm_node_put(n);
	return err;
}

/* What a regular file of SOURCE, whose attributes are st (or NULL), is shown as: an
 * override's trace, an archive by its name, a trace its name or head gives (*fmt; NULL where
 * the name makes it a trace but leaves the format to the head, read only when the trace's folder
 * is entered: a listing opens no file), an archive by its head, or a file. */
static enum tm_node_kind kind_of_file(struct tm_fs *fs, const char *rel, const struct stat *st,
				      const struct tm_format **fmt)
{
	bool tar;
	if ((*fmt = tm_context_override(fs->ctx, rel)))
		return TM_NODE_TRACE;
	if (tm_archive_name(tm_base_name(rel)))
		return TM_NODE_ARCHIVE;
	if (tm_format_detect_needs_head(tm_base_name(rel)) &&
	    tm_format_trace_by_name(tm_base_name(rel)))
		return TM_NODE_TRACE; /* *fmt NULL: settle_format reads the head when needed */
	if ((*fmt = tm_context_detect_also(fs->ctx, fs->root_fd, rel, st, tm_archive_head, &tar)))
		return TM_NODE_TRACE;
	return tar ? TM_NODE_ARCHIVE : TM_NODE_FILE;
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
		enum tm_node_kind kind = kind_of_file(fs, n->src, &n->st, &n->fmt);
		if (kind == TM_NODE_TRACE)
			return resolve_view(fs, path, n);
		if (kind == TM_NODE_ARCHIVE)
			return resolve_archive(fs, path, n);
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
	if (n->arc)
		tm_archive_put(n->arc);
	n->arc = NULL;
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
	if (n.kind != TM_NODE_LINK || size == 0) {
		tm_node_put(&n);
		return -EINVAL;
	}
	if (n.arc) {
		struct tm_archive_entry e;
		err = tm_archive_lookup(n.arc, n.in_arc, &e);
		if (!err)
			snprintf(buf, size, "%s", e.link);
		tm_node_put(&n);
		return err;
	}
	tm_node_put(&n);
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

/* Whether a file that takes products is ready to be sized without building one. */
static bool products_ready(struct tm_trace *t, uint32_t products)
{
	return !products || tm_trace_has_products(t, products);
}

struct list_views_arg {
	tm_fs_fill_fn *fill;
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
	if (!is_dir && !products_ready(a->n->trace, tm_trace_view(a->n->trace, view)->products)) {
		struct stat st;
		tm_fs_view_stat(&a->n->st, 0, &st); /* not built: sized 0 (tm_fs_readdir) */
		return a->fill(a->arg, name, S_IFREG, &st);
	}
	return a->fill(a->arg, name, is_dir ? S_IFDIR : S_IFREG, NULL);
}

struct fill_arg {
	tm_fs_fill_fn *fill;
	void *arg;
};

static int fill_virtual(void *p, const struct tm_format *fmt, const struct tm_virtual *v)
{
	const struct fill_arg *a = p;
	(void)fmt;
	return a->fill(a->arg, v->name, S_IFDIR, NULL);
}

/* The entries of a source folder, with traces shown as folders. */
static int list_source_dir(struct tm_fs *fs, const struct tm_node *n, tm_fs_fill_fn *fill,
			   void *arg)
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
		struct stat st;
		bool have_st = false;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			have_st = true;
			type = S_ISDIR(st.st_mode)   ? DT_DIR
			       : S_ISLNK(st.st_mode) ? DT_LNK
			       : S_ISREG(st.st_mode) ? DT_REG
						     : DT_UNKNOWN;
		}
		if (type == DT_DIR)
			err = fill(arg, name, S_IFDIR, NULL);
		else if (type == DT_LNK)
			err = fill(arg, name, S_IFLNK, NULL);
		else if (type == DT_REG) {
			/* the attributes, where detection may read the head: so that the
			 * lookups of the trace that follow a listing need not read it again */
			if (!have_st && tm_format_detect_needs_head(name) &&
			    !tm_format_trace_by_name(name))
				have_st = fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0;
			const struct tm_format *fmt;
			enum tm_node_kind kind = kind_of_file(fs, rel, have_st ? &st : NULL, &fmt);
			if (kind == TM_NODE_TRACE) /* counted by the status from now on */
				tm_context_saw(fs->ctx, rel, fmt);
			tm_virtual_count(&census, fmt);
			err = fill(arg, name, kind == TM_NODE_FILE ? S_IFREG : S_IFDIR, NULL);
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

static int fill_entry(void *p, const struct tm_archive_entry *e)
{
	const struct fill_arg *a = p;
	mode_t type = e->type == TM_MEMBER_DIR	     ? S_IFDIR
		      : e->type == TM_MEMBER_SYMLINK ? S_IFLNK
		      : e->fmt			     ? S_IFDIR
						     : S_IFREG;
	return a->fill(a->arg, e->name, type, NULL);
}

/* The entries of a folder of an archive, and the root's .errors.txt. */
static int list_archive_dir(const struct tm_node *n, tm_fs_fill_fn *fill, void *arg)
{
	struct fill_arg fa = {fill, arg};
	struct tm_archive_entry e;
	if (!n->in_arc[0] && tm_archive_lookup(n->arc, TM_ARCHIVE_ERRORS, &e) < 0 &&
	    fill(arg, TM_ARCHIVE_ERRORS, S_IFREG, NULL))
		return 0;
	int err = tm_archive_list(n->arc, n->in_arc, fill_entry, &fa);
	return err > 0 ? 0 : err;
}

int tm_fs_readdir(struct tm_fs *fs, const char *path, tm_fs_fill_fn *fill, void *arg)
{
	struct tm_node n;
	int err = tm_fs_resolve(fs, path, &n);
	if (err)
		return err;
	struct list_views_arg la = {fill, arg, fs, &n, 0};
	int is_root = n.kind == TM_NODE_DIR && strcmp(n.src, ".") == 0;

	if (n.kind == TM_NODE_TRACE && (err = settle_format(fs, &n)) == 0)
		err = tm_context_trace_of(fs->ctx, n.src, n.fmt, &n.st, &n.trace);
	if (err)
		goto out;
	if (fill(arg, ".", S_IFDIR, NULL) || fill(arg, "..", S_IFDIR, NULL))
		goto out;
	if (is_root && fill(arg, TM_META_DIR, S_IFDIR, NULL))
		goto out;
	switch (n.kind) {
	case TM_NODE_DIR:
		if (is_root && fs->single)
			fill(arg, fs->single, S_IFDIR, NULL);
		else
			err = list_source_dir(fs, &n, fill, arg);
		break;
	case TM_NODE_TRACE:
	case TM_NODE_VIEW_DIR:
		if (tm_view_table_list(tm_trace_views(n.trace),
				       n.kind == TM_NODE_TRACE ? "" : n.sub, list_view, &la) == 0 &&
		    n.kind == TM_NODE_TRACE) {
			struct stat st;
			tm_fs_view_stat(&n.st, 0, &st); /* sized 0 until built, as a product */
			fill(arg, TM_TRACE_REPORT, S_IFREG,
			     products_ready(n.trace, TM_PRODUCTS_ALL) ? NULL : &st);
		}
		err = la.err;
		break;
	case TM_NODE_ARCHIVE: err = list_archive_dir(&n, fill, arg); break;
	case TM_NODE_META_DIR:
		for (int i = 0; i < TM_META_N; i++)
			if (fill(arg, tm_meta_names[i], S_IFREG, NULL))
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
