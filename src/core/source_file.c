/* A trace stored as a plain file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tracemount/source.h"

static ssize_t file_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	ssize_t n;
	do
		n = pread(s->fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static void file_close(struct tm_source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static int file_dup(const struct tm_source *s, struct tm_source *out)
{
	int fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	*out = *s;
	out->fd = fd;
	return 0;
}

static const struct tm_source_ops file_ops = {
    .read = file_read,
    .close = file_close,
    .dup = file_dup,
};

/* Each component is opened with O_NOFOLLOW relative to the folder before it, so that a
 * symbolic link swapped in for a folder on the path is refused, not followed. */
int tm_open_walk(int dirfd, const char *path, int flags)
{
	char comp[NAME_MAX + 1];
	int cur = dirfd, fd;
	for (;;) {
		const char *slash = strchr(path, '/');
		size_t len = slash ? (size_t)(slash - path) : strlen(path);
		fd = -ENOENT; /* "", "..": no way up (tm paths are normalised anyway) */
		if (len && len <= NAME_MAX && !(len == 2 && path[0] == '.' && path[1] == '.')) {
			memcpy(comp, path, len);
			comp[len] = '\0';
			int how = slash ? O_PATH | O_DIRECTORY : flags | O_NOCTTY;
			fd = openat(cur, comp, how | O_NOFOLLOW | O_CLOEXEC);
			fd = fd < 0 ? -errno : fd;
		}
		if (cur != dirfd)
			close(cur);
		if (fd < 0 || !slash)
			return fd;
		cur = fd;
		path = slash + 1;
	}
}

int tm_open_beneath(int dirfd, const char *path, int flags)
{
	if (dirfd == AT_FDCWD) {
		int fd = openat(dirfd, path, flags | O_CLOEXEC | O_NOCTTY);
		return fd < 0 ? -errno : fd;
	}
	/* openat2 refuses flags that O_PATH ignores */
	int extra = flags & O_PATH ? O_CLOEXEC : O_CLOEXEC | O_NOCTTY;
	struct open_how how = {
	    .flags = (uint64_t)(flags | extra),
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;
	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN); /* a rename raced the lookup: look again */
	if (fd < 0)
		fd = errno == ENOSYS ? tm_open_walk(dirfd, path, flags) : -errno;
	return fd == -EXDEV || fd == -ELOOP ? -ENOENT : (int)fd;
}

bool tm_is_mount_of(int dirfd, const char *path, dev_t dev)
{
	struct statx stx;
	return dev != 0 &&
	       statx(dirfd, path, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, 0, &stx) == 0 &&
	       makedev(stx.stx_dev_major, stx.stx_dev_minor) == dev;
}

int tm_lstat_beneath(int dirfd, const char *path, struct stat *st)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return fstatat(dirfd, path, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	char parent[PATH_MAX];
	size_t len = (size_t)(slash - path);
	if (len >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, path, len);
	parent[len] = '\0';
	int fd = tm_open_beneath(dirfd, parent, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	int err = fstatat(fd, slash + 1, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	close(fd);
	return err;
}

int tm_source_open(int dirfd, const char *path, struct tm_source *s)
{
	struct stat st;
	/* O_NONBLOCK: a fifo swapped in for a trace must not block a thread forever */
	int fd = tm_open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	s->ops = &file_ops;
	s->fd = fd;
	s->size = (uint64_t)st.st_size;
	return 0;
}

ssize_t tm_source_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = s->ops->read(s, (char *)buf + done, len - done, off + done);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

void tm_source_close(struct tm_source *s)
{
	if (s->ops)
		s->ops->close(s);
	s->ops = NULL;
}

int tm_source_dup(const struct tm_source *s, struct tm_source *out)
{
	if (!s->ops || !s->ops->dup)
		return -ENOTSUP;
	return s->ops->dup(s, out);
}
