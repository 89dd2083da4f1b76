/* Index files: a trace's index kept in the cache folder, so that a later mount, another
 * daemon or another machine sharing the folder reads it instead of decoding the trace.
 *
 * One file per trace and format, named after the trace's content key (size, modification
 * time, a hash of its first and last 64 KiB) and the format, so that the same trace under
 * another path or mount shares it. A file holds a header (magic, version, format, the build
 * key of the code that wrote it (build_id.h), the content key, a fingerprint of the format's
 * record and view layout, sizes, checksums), the absolute path of the trace it was built from
 * (for `tracemount index --list` and `--prune`), and the index as it is in memory: rows,
 * stats.json, errors.txt, a compressed trace's access points, the table views' bytes
 * (deflated). Files are written to a temporary name and renamed; one that does not check out
 * in every field is rebuilt, never trusted. */
#ifndef TRACEMOUNT_INDEX_FILE_H
#define TRACEMOUNT_INDEX_FILE_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct tm_format;
struct tm_index;
struct tm_source;
struct tm_view_table;
struct iovec;

#define TM_INDEX_FILE_VERSION 8
#define TM_KEY_BLOCK	      (64u << 10) /* bytes hashed at each end of the trace */
/* A temporary file older than this whose lock is free is a dead writer's, removed when the
 * folder is opened: index files are written in seconds. */
#define TM_STALE_TMP_SECONDS 600

/* What identifies a trace's content, and what else its views depend on. */
struct tm_trace_key {
	uint64_t size;
	int64_t mtime_sec, mtime_nsec;
	uint64_t hash; /* of the first and last TM_KEY_BLOCK bytes */
	/* the identity of the program images its derivers were given (images.h), 0 for none:
	 * another image, or another load offset, gives another index file */
	uint64_t images;
};

/* The key of the file src reads (its raw bytes, compressed or not), without images. Returns 0
 * or -errno. */
int tm_trace_key_of(struct tm_source *src, struct tm_trace_key *key);

/* A cache folder, shared by the threads of a mount: loads and stores may run on many at once.
 * A folder deleted (and maybe made again) while it is open is opened again by its path before
 * the next load or store, created (its last component only) if it is missing. */
struct tm_index_store {
	int dirfd;	      /* the folder as opened last: read it under lock */
	char *dir;	      /* its absolute path */
	pthread_mutex_t lock; /* guards dirfd and old_fds */
	int *old_fds; /* of folders deleted since: open until close, another thread may use one */
	size_t n_old_fds;
};

/* Opens the cache folder dir, creating it (0700) when it is missing: dir itself only, or its
 * missing parents too when parents is true (for the default folder, ~/.cache/tracemount; a
 * folder the user names is never made with parents: a typo would build a tree). Removes the
 * temporary files of writers that died (their lock free, older than TM_STALE_TMP_SECONDS).
 * Returns 0, or -errno
 * with a message in err. */
int tm_index_store_open(struct tm_index_store *s, const char *dir, bool parents, char *err,
			size_t err_len);
void tm_index_store_close(struct tm_index_store *s);

/* The default cache folder: $XDG_CACHE_HOME/tracemount, else ~/.cache/tracemount, in buf.
 * Returns 0, or -ENOENT when neither variable is set. */
int tm_index_store_default(char *buf, size_t len);

/* Reads the index of the trace with key and views of format fmt. Returns 0, -ENOENT when
 * there is no file, -ESTALE when the file was written by another build (out of date),
 * -EBADMSG when it was refused (its content does not check out, or it is not a regular file
 * of this user's that others cannot write: a FIFO or a device is never read, so a lookup
 * never blocks on one), or the -errno of a system error while reading it (EMFILE, ENOMEM,
 * EIO...); with the reason in why. After any of them the caller rebuilds, and a store
 * replaces the file. */
int tm_index_file_load(const struct tm_index_store *s, const struct tm_format *fmt,
		       const struct tm_view_table *views, const struct tm_trace_key *key,
		       struct tm_index **out, char *why, size_t why_len);

/* Writes ix to its file, atomically. Returns 0 or -errno. */
int tm_index_file_store(const struct tm_index_store *s, const struct tm_format *fmt,
			const struct tm_view_table *views, const struct tm_trace_key *key,
			const struct tm_index *ix);

/* The same, recording the absolute path of the trace in the file (NULL: unknown), for
 * tm_index_store_list. */
int tm_index_file_store_trace(const struct tm_index_store *s, const struct tm_format *fmt,
			      const struct tm_view_table *views, const struct tm_trace_key *key,
			      const struct tm_index *ix, const char *trace);

/* What an index file says of itself, for `tracemount index --list` and `--prune`. */
struct tm_index_file_info {
	char name[32];	      /* its name in the cache folder */
	char format[32];      /* the format it was built for, "" if unreadable */
	char trace[PATH_MAX]; /* the absolute path of the trace it was built from, "" if unknown */
	struct tm_trace_key key; /* of that trace when the file was written */
	uint64_t size;		 /* of the file, in bytes */
	struct timespec written; /* the file's modification time */
	/* NULL when this build would use the file for a trace with this key; else why not:
	 * "out of date" (another build wrote it), or why it was refused */
	const char *problem;
};

/* Calls fn for every index file in the folder (not for temporary files), in name order.
 * Stops when fn returns non-zero and returns that; else 0 or -errno. A file is judged by its
 * header and its size, not its body (reading every body would be slow): one whose body is
 * damaged is listed without a problem and refused when it is loaded. Names longer than
 * info.name holds are no index file of ours and are left out. */
int tm_index_store_list(struct tm_index_store *s,
			int (*fn)(void *arg, const struct tm_index_file_info *info), void *arg);

/* Removes the index file name (a name of tm_index_store_list's, "*.tmi") from the folder.
 * Returns 0, -EINVAL for a name that is not an index file's, or -errno. */
int tm_index_store_remove(struct tm_index_store *s, const char *name);

/* A writer's temporary file in the cache folder (".NAME.tmi.PID.X", ".NAME.tma.PID.X"). */
struct tm_index_temporary {
	char name[NAME_MAX + 1];
	uint64_t size;		 /* in bytes */
	struct timespec written; /* its modification time */
	/* its writer is no longer writing it: the process died (or, where the folder takes no
	 * lock, the file is older than TM_STALE_TMP_SECONDS) */
	bool writer_gone;
};

/* Calls fn for every temporary file of the folder, in directory order. Stops when fn returns
 * non-zero and returns that; else 0 or -errno. */
int tm_index_store_temporaries(const struct tm_index_store *s,
			       int (*fn)(void *arg, const struct tm_index_temporary *t), void *arg);

/* Removes the temporary file name when its writer is gone. Returns 0, -EBUSY while its
 * writer is writing it, -EINVAL for a name that is no temporary file's, or -errno. */
int tm_index_store_remove_temporary(const struct tm_index_store *s, const char *name);

/* Writes the n parts, one after the other, as the file name of the cache folder, atomically
 * (a temporary file renamed). For other files kept beside the index files (archive.h).
 * Returns 0 or -errno. */
int tm_index_store_write(const struct tm_index_store *s, const char *name,
			 const struct iovec *parts, size_t n);

/* Reads the whole file name of the cache folder into *data (free it; a NUL follows its *len
 * bytes), refusing it as index files are refused (-EBADMSG, with the reason in *bad): what is
 * not a regular file of this user's that others cannot write, or shorter than least bytes.
 * Returns 0, -ENOENT, -EBADMSG, or -errno. */
int tm_index_store_read(const struct tm_index_store *s, const char *name, size_t least,
			uint8_t **data, size_t *len, const char **bad);

/* The file name for a trace, "0123456789abcdef.tmi", in buf (at least 24 bytes). */
void tm_index_file_name(const struct tm_format *fmt, const struct tm_trace_key *key, char *buf,
			size_t len);

#endif
