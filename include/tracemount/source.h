/* Access to a trace's bytes: a plain file read at any offset, a decompressing scan read in
 * order (compress.h), or a member of an archive (archive.h). */
#ifndef TRACEMOUNT_SOURCE_H
#define TRACEMOUNT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>
#include <time.h>

struct stat;

struct tm_source;
struct tm_diag;

struct tm_source_ops {
	/* Reads up to len bytes at off; returns the count (short only at the end) or -errno. */
	ssize_t (*read)(struct tm_source *s, void *buf, size_t len, uint64_t off);
	void (*close)(struct tm_source *s);
	/* Opens a second, independent handle on the same bytes into out. Optional: without it
	 * nothing reads the source in the background. Returns 0 or -errno. */
	int (*dup)(const struct tm_source *s, struct tm_source *out);
	/* Reports problems of the bytes beneath the trace (a corrupt gzip stream) once they
	 * have been read to their end. Optional. */
	void (*report)(struct tm_source *s, struct tm_diag *diag);
	/* The size and modification time that key the bytes in the cache folder
	 * (index_file.h), when they are not those of the file fd: a member of an archive, whose
	 * fd is the archive's. Optional. */
	void (*identity)(struct tm_source *s, uint64_t *size, struct timespec *mtime);
};

struct tm_source {
	const struct tm_source_ops *ops;
	uint64_t size; /* bytes of trace data (of a gzip scan: compressed bytes) */
	int fd;
	void *priv; /* a source's own state */
};

/* Opens path below the folder dirfd with open(2) flags (O_CLOEXEC added): no component may
 * be a symbolic link or lead out of dirfd, even if the tree changes during the lookup
 * (openat2's RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS; a path that would leave gives -ENOENT).
 * With AT_FDCWD, a user's own path: an ordinary open. Returns a descriptor or -errno. */
int tm_open_beneath(int dirfd, const char *path, int flags);

/* What tm_open_beneath does where openat2 is missing (before Linux 5.6, or under valgrind):
 * opens one component at a time with O_NOFOLLOW. Returns a descriptor or -errno (a symbolic
 * link on the way: -ELOOP at the end, -ENOTDIR before). Public for its test. */
int tm_open_walk(int dirfd, const char *path, int flags);

/* lstat(2) of path below the folder dirfd, with no symbolic link followed on the way (see
 * tm_open_beneath); the last component, a link or not, is what is described. Returns 0 or
 * -errno. */
int tm_lstat_beneath(int dirfd, const char *path, struct stat *st);

/* Whether path below the folder dirfd lies on device dev: the mount's own file system, whose
 * root shows below SOURCE through a bind mount or mount propagation, where a lookup would
 * wait on the mount itself and a walk would never end. Told by statx with
 * AT_STATX_DONT_SYNC and no attribute asked for, which sends that file system no request.
 * dev 0: never. */
bool tm_is_mount_of(int dirfd, const char *path, dev_t dev);

/* Opens the regular file at path below dirfd (see tm_open_beneath); anything else is -EINVAL.
 * Returns 0 or -errno; on success the caller must tm_source_close(). */
int tm_source_open(int dirfd, const char *path, struct tm_source *s);

/* Reads exactly len bytes unless the end comes first; returns the count or -errno. */
ssize_t tm_source_read(struct tm_source *s, void *buf, size_t len, uint64_t off);
void tm_source_close(struct tm_source *s);

/* A second handle on s, for background work that may outlive s. Returns 0, or -ENOTSUP when
 * the source cannot be duplicated, or -errno. */
int tm_source_dup(const struct tm_source *s, struct tm_source *out);

#endif
