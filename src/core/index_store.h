/* Between index_store.c and index_file.c only: the cache folder's calls the index files use. */
#ifndef TRACEMOUNT_CORE_INDEX_STORE_H
#define TRACEMOUNT_CORE_INDEX_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct tm_index_store;

/* The folder's descriptor: the folder at its path, opened again if it was deleted. */
int tm_index_store_fd(const struct tm_index_store *s);

/* Opens the file name of the folder dirfd for reading, without blocking on what is no regular
 * file (a FIFO, a device), and checks it is a regular file of this user's that others cannot
 * write, of least bytes. Returns the fd, with *bad set when the file is refused; -ENOENT; or
 * the -errno of a system error. */
int tm_index_store_open_file(int dirfd, const char *name, size_t least, struct stat *st,
			     const char **bad);

/* Reads n bytes of fd at off. Returns 0, 1 when the file ends first, or -errno. */
int tm_index_store_read_at(int fd, void *p, size_t n, uint64_t off);

/* Writes the message into err (len bytes) and returns code. */
int tm_index_store_say(char *err, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
