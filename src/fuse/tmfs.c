/* FUSE operations: each one translates to the FUSE-free tree in src/fs/. */
#include <errno.h>
#include <fuse.h>
#include <stdint.h>
#include <string.h>

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

struct fill_arg {
	void *buf;
	fuse_fill_dir_t filler;
};

static int fill_entry(void *p, const char *name, mode_t type)
{
	struct fill_arg *a = p;
	struct stat st = {.st_mode = type};
	return a->filler(a->buf, name, &st, 0, 0);
}

static int tmfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct fill_arg a = {buf, filler};
	(void)off;
	(void)fi;
	(void)flags;
	return tm_fs_readdir(fs_of(), path, fill_entry, &a);
}

static int tmfs_open(const char *path, struct fuse_file_info *fi)
{
	struct tm_fs_file *f;
	int err = tm_fs_open(fs_of(), path, fi->flags, &f);
	if (err)
		return err;
	fi->fh = (uint64_t)(uintptr_t)f;
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

/* Everything that would change the tree fails: the mount is read-only. */
static int rofs_path(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	return -EROFS;
}
static int rofs_mknod(const char *p, mode_t m, dev_t d)
{
	(void)d;
	return rofs_path(p, m);
}
static int rofs_unlink(const char *p)
{
	return rofs_path(p, 0);
}
static int rofs_two(const char *a, const char *b)
{
	(void)b;
	return rofs_path(a, 0);
}
static int rofs_rename(const char *a, const char *b, unsigned int flags)
{
	(void)flags;
	return rofs_two(a, b);
}
static int rofs_chmod(const char *p, mode_t m, struct fuse_file_info *fi)
{
	(void)fi;
	return rofs_path(p, m);
}
static int rofs_chown(const char *p, uid_t u, gid_t g, struct fuse_file_info *fi)
{
	(void)u;
	(void)g;
	(void)fi;
	return rofs_path(p, 0);
}
static int rofs_truncate(const char *p, off_t size, struct fuse_file_info *fi)
{
	(void)size;
	(void)fi;
	return rofs_path(p, 0);
}
static int rofs_write(const char *p, const char *buf, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	(void)buf;
	(void)size;
	(void)off;
	(void)fi;
	return rofs_path(p, 0);
}
static int rofs_create(const char *p, mode_t m, struct fuse_file_info *fi)
{
	(void)fi;
	return rofs_path(p, m);
}
static int rofs_utimens(const char *p, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)tv;
	(void)fi;
	return rofs_path(p, 0);
}
static int rofs_setxattr(const char *p, const char *name, const char *value, size_t size, int flags)
{
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	return rofs_path(p, 0);
}
static int rofs_removexattr(const char *p, const char *name)
{
	(void)name;
	return rofs_path(p, 0);
}
static int rofs_fallocate(const char *p, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	(void)off;
	(void)len;
	(void)fi;
	return rofs_path(p, (mode_t)mode);
}

const struct fuse_operations tm_fuse_operations = {
    .init = tmfs_init,
    .getattr = tmfs_getattr,
    .readlink = tmfs_readlink,
    .readdir = tmfs_readdir,
    .open = tmfs_open,
    .read = tmfs_read,
    .release = tmfs_release,
    .statfs = tmfs_statfs,
    .mknod = rofs_mknod,
    .mkdir = rofs_path,
    .unlink = rofs_unlink,
    .rmdir = rofs_unlink,
    .symlink = rofs_two,
    .rename = rofs_rename,
    .link = rofs_two,
    .chmod = rofs_chmod,
    .chown = rofs_chown,
    .truncate = rofs_truncate,
    .write = rofs_write,
    .create = rofs_create,
    .utimens = rofs_utimens,
    .setxattr = rofs_setxattr,
    .removexattr = rofs_removexattr,
    .fallocate = rofs_fallocate,
};
