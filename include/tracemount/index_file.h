/* Index files: a trace's index kept in the cache folder, so that a later mount, another
 * daemon or another machine sharing the folder reads it instead of decoding the trace.
 *
 * One file per trace and format, named after the trace's content key (size, modification
 * time, a hash of its first and last 64 KiB) and the format, so that the same trace under
 * another path or mount shares it. A file holds a header (magic, version, format, the build
 * key of the code that wrote it (build_id.h), the content key, a fingerprint of the format's
 * record and view layout, sizes, checksums) and the index as
 * it is in memory: rows, stats.json, errors.txt, the gzip access points, the table views'
 * bytes (deflated). Files are written
 * to a temporary name and renamed; one that does not check out in every field is rebuilt,
 * never trusted. */
#ifndef TRACEMOUNT_INDEX_FILE_H
#define TRACEMOUNT_INDEX_FILE_H

#include <stddef.h>
#include <stdint.h>

struct tm_format;
struct tm_index;
struct tm_source;
struct tm_view_table;

#define TM_INDEX_FILE_VERSION 3
#define TM_KEY_BLOCK	      (64u << 10) /* bytes hashed at each end of the trace */

/* What identifies a trace's content. */
struct tm_trace_key {
	uint64_t size;
	int64_t mtime_sec, mtime_nsec;
	uint64_t hash; /* of the first and last TM_KEY_BLOCK bytes */
};

/* The key of the file src reads (its raw bytes, compressed or not). Returns 0 or -errno. */
int tm_trace_key_of(struct tm_source *src, struct tm_trace_key *key);

/* A cache folder. */
struct tm_index_store {
	int dirfd;
	char *dir;
};

/* Opens (creating it, 0700, with its parents) the cache folder dir. Returns 0, or -errno with
 * a message in err. */
int tm_index_store_open(struct tm_index_store *s, const char *dir, char *err, size_t err_len);
void tm_index_store_close(struct tm_index_store *s);

/* The default cache folder: $XDG_CACHE_HOME/tracemount, else ~/.cache/tracemount, in buf.
 * Returns 0, or -ENOENT when neither variable is set. */
int tm_index_store_default(char *buf, size_t len);

/* Reads the index of the trace with key and views of format fmt. Returns 0, -ENOENT when
 * there is no file, -ESTALE when the file was written by another build (out of date), or
 * another -errno; with the reason the file was refused in why (then the caller rebuilds, and
 * a store replaces the file). */
int tm_index_file_load(const struct tm_index_store *s, const struct tm_format *fmt,
		       const struct tm_view_table *views, const struct tm_trace_key *key,
		       struct tm_index **out, char *why, size_t why_len);

/* Writes ix to its file, atomically. Returns 0 or -errno. */
int tm_index_file_store(const struct tm_index_store *s, const struct tm_format *fmt,
			const struct tm_view_table *views, const struct tm_trace_key *key,
			const struct tm_index *ix);

/* The file name for a trace, "0123456789abcdef.tmi", in buf (at least 24 bytes). */
void tm_index_file_name(const struct tm_format *fmt, const struct tm_trace_key *key, char *buf,
			size_t len);

#endif
