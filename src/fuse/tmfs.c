/* FUSE operations: each one translates to the FUSE-free tree in src/fs/. */
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "tracemount/fs.h"
#include "tmfs_ops.h"

static struct tm_fs *fs_of(void)
{
	return fuse_get_context()->private_data;
}

static struct tm_fs_file *file_of(const struct fuse_file_info *fi)
{
	return (struct tm_fs_file *)(uintptr_t)fi->fh;
}

static void *tmfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* a view's cached pages go when its attributes, refreshed after attr_timeout, show
	 * that the trace changed (another modification time or size) */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	cfg->kernel_cache = 1; /* views of an unchanged trace never change */
	cfg->nullpath_ok = 0;
	return fs_of();
}

static int tmfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	if (fi && fi->fh) /* the kernel checking an open file's size before a read */
		return tm_fs_fgetattr(fs_of(), file_of(fi), st);
	return tm_fs_getattr(fs_of(), path, st);
}

static int tmfs_readlink(const char *path, char *buf, size_t size)
{
	return tm_fs_readlink(fs_of(), path, buf, size);
}

/* A folder's entries, listed once when the kernel reads it from its start and handed out from
 * the offset it asks for: libfuse (3.14) passes a listing's attributes to the kernel only for
 * entries given with their offset, not for a listing it buffers itself. */
struct listing {
	struct entry {
		char *name;
		struct stat st;
		bool attrs; /* st holds its attributes, else only its type */
	} * entries;
	size_t n, cap;
	int err;
};

static int list_entry(void *p, const char *name, mode_t type, const struct stat *attrs)
{
	struct listing *l = p;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct entry *grown = realloc(l->entries, cap * sizeof(*grown));
		if (!grown)
			return l->err = -ENOMEM;
		l->entries = grown;
		l->cap = cap;
	}
	struct entry *e = &l->entries[l->n];
	if (!(e->name = strdup(name)))
		return l->err = -ENOMEM;
	e->st = attrs ? *attrs : (struct stat){.st_mode = type};
	e->attrs = attrs != NULL;
	l->n++;
	return 0;
}

/* Empties l of its entries, keeping their array. */
static void listing_clear(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->entries[i].name);
	l->n = 0;
	l->err = 0;
}

/* The listing lives from opendir to releasedir: libfuse keeps the handle opendir sets, and
 * hands readdir a copy of it. */
static int tmfs_opendir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct listing *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	fi->fh = (uint64_t)(uintptr_t)l;
	return 0;
}

static int tmfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct listing *l = (struct listing *)(uintptr_t)fi->fh;
	if (off == 0) { /* from the start: listed anew (a rewinddir) */
		listing_clear(l);
		int err = tm_fs_readdir(fs_of(), path, list_entry, l);
		if (err || l->err) {
			err = err ? err : l->err;
			listing_clear(l);
			return err;
		}
	}
	bool plus = flags & FUSE_READDIR_PLUS;
	for (size_t i = (size_t)off; i < l->n; i++) {
		const struct entry *e = &l->entries[i];
		if (filler(buf, e->name, &e->st, (off_t)i + 1,
			   plus && e->attrs ? FUSE_FILL_DIR_PLUS : 0))
			break; /* the kernel's buffer is full: it asks again from here */
	}
	return 0;
}

static int tmfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct listing *l = (struct listing *)(uintptr_t)fi->fh;
	listing_clear(l);
	free(l->entries);
	free(l);
	return 0;
}

static int tmfs_open(const char *path, struct fuse_file_info *fi)
{
	struct tm_fs_file *f;
	int err = tm_fs_open(fs_of(), path, fi->flags, &f);
	if (err)
		return err;
	fi->fh = (uint64_t)(uintptr_t)f;
	/* built now: the size a stat gave before (0) goes, so that the next stat is exact. The
	 * kernel takes the notice without waiting for a request: no deadlock with this open. */
	if (f->sized_at_open)
		fuse_invalidate_path(fuse_get_context()->fuse, path);
	if (f->uncached)
		fi->direct_io = 1;
	else
		fi->keep_cache = 1;
	return 0;
}

static int tmfs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	ssize_t n = tm_fs_read(fs_of(), file_of(fi), buf, size, off);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

static int tmfs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	tm_fs_release(fs_of(), file_of(fi));
	return 0;
}

static int tmfs_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	return tm_fs_statfs(fs_of(), st);
}

bool tm_fuse_request_abandoned(void *arg)
{
	const struct tm_fuse_watch *w = arg;
	struct statx stx;
	if (!fuse_get_context()) /* a thread that serves no request (-o prefetch's) */
		return false;
	if (fuse_interrupted() || fuse_session_exited(fuse_get_session(w->fuse)))
		return true;
	/* a lazy unmount tells the daemon nothing until the last user leaves: the mount point
	 * shows another device once detached (asked without a request to the mount) */
	return w->dev && statx(AT_FDCWD, w->mountpoint, AT_STATX_DONT_SYNC, 0, &stx) == 0 &&
	       makedev(stx.stx_dev_major, stx.stx_dev_minor) != w->dev;
}

/* No operation changes the tree: the mount is always read-only (mount.c adds -o ro last), so
 * the kernel answers EROFS to mknod, mkdir, unlink, rmdir, symlink, rename, link, chmod, chown,
 * truncate, utimens, setxattr, removexattr and creation without asking the daemon, and sends
 * only opens for reading (tm_fs_open checks O_ACCMODE all the same), so no write or fallocate
 * can follow. Were root to remount it read-write, those calls would fail as not implemented. */
const struct fuse_operations tm_fuse_operations = {
    .init = tmfs_init,
    .getattr = tmfs_getattr,
    .readlink = tmfs_readlink,
    .opendir = tmfs_opendir,
    .readdir = tmfs_readdir,
    .releasedir = tmfs_releasedir,
    .open = tmfs_open,
    .read = tmfs_read,
    .release = tmfs_release,
    .statfs = tmfs_statfs,
};
