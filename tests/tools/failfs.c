/* A read-only FUSE passthrough of a folder whose files can fail with EIO, to give tracemount a
 * source with I/O errors (the machines that run the tests have no device-mapper).
 *
 *   failfs ROOT SWITCH MOUNTPOINT
 *
 * Serves ROOT at MOUNTPOINT in the foreground. A file named eio-N-... fails every read that
 * reaches its byte N or beyond with EIO, but only while the file SWITCH exists, so a test can
 * make a fault appear and heal. Reads bypass the page cache (direct_io): each one reaches
 * failfs, as each would reach a failing disk. Unmount with fusermount3 -u. */
#define FUSE_USE_VERSION 312
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int root_fd = -1;
static const char *switch_path;

/* FUSE paths start with '/'; openat wants them relative to ROOT. */
static const char *rel(const char *path)
{
	return path[1] ? path + 1 : ".";
}

static int fail_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	return fstatat(root_fd, rel(path), st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int fail_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	int fd = openat(root_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	struct dirent *e;
	while ((e = readdir(d)))
		fill(buf, e->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int fail_open(const char *path, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	int fd = openat(root_fd, rel(path), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	fi->direct_io = 1;
	return 0;
}

/* The byte from which reads of PATH fail, or -1: the N of a name eio-N-... . */
static long long fail_from(const char *path)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	if (strncmp(name, "eio-", 4) != 0 || access(switch_path, F_OK) != 0)
		return -1;
	return strtoll(name + 4, NULL, 10);
}

static int fail_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	long long from = fail_from(path);
	if (from >= 0 && (long long)(off + (off_t)size) > from)
		return -EIO;
	ssize_t n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int fail_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

static const struct fuse_operations fail_ops = {
    .getattr = fail_getattr,
    .readdir = fail_readdir,
    .open = fail_open,
    .read = fail_read,
    .release = fail_release,
};

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: failfs ROOT SWITCH MOUNTPOINT\n");
		return 2;
	}
	root_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		fprintf(stderr, "failfs: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	switch_path = argv[2];
	char *fuse_argv[] = {argv[0], "-f", "-o", "ro,default_permissions", argv[3], NULL};
	return fuse_main(5, fuse_argv, &fail_ops, NULL);
}
