/* Archives: a tar file under SOURCE, plain or compressed (compress.h), shown as a folder of its
 * members, each member that is a trace shown as its trace folder.
 *
 * Nothing is unpacked. One streaming pass over the archive (decompressing it, and recording
 * its access points, when it is compressed) reads its headers (tar.h) and the head of each
 * member, and makes the member table: every member's path, type, size, times, where its
 * bytes are in the archive, and the format its head and name give. The table and the access
 * points are kept in the cache folder (index_file.h) beside the traces' index files, keyed by
 * the archive's content, so a later mount reads them instead. A member's bytes are then read
 * through a source (source.h) that copies them from the archive, decompressing one piece of
 * it (TM_Z_PIECE bytes at most, through the context's chunk cache) when it is compressed: a
 * member trace indexes, decodes and renders from it as a trace file does from its file. */
#ifndef TRACEMOUNT_ARCHIVE_H
#define TRACEMOUNT_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tracemount/tar.h"

struct tm_context;
struct tm_format;
struct tm_source;

/* One archive: its member table and access points once built. Opaque, reference counted. */
struct tm_archive;

/* The archives a mount has seen, by path. Thread-safe. */
struct tm_archives;

int tm_archives_new(struct tm_context *ctx, struct tm_archives **out);
/* Drops the set's references; holders keep theirs. */
void tm_archives_free(struct tm_archives *set);

/* Whether a file named name is an archive by its name alone: ".tar", ".tgz", ".txz", ".tzst",
 * or ".tar" followed by a codec's suffix. */
bool tm_archive_name(const char *name);

/* Whether a file named name whose head (first bytes) is head[0..len) is an archive by its
 * content: a tar header, once decompressed. */
bool tm_archive_head(const char *name, const uint8_t *head, size_t len);

/* The archive at path below dirfd, whose attributes are st (lstat), with its member table
 * built or read from the cache folder (the first caller builds it, others wait; a failed build
 * is not kept). An archive whose file changed since it was seen is made again. Returns 0 with
 * a reference for the caller (tm_archive_put), or -errno. */
int tm_archives_get(struct tm_archives *set, int dirfd, const char *path, const struct stat *st,
		    struct tm_archive **out);

void tm_archive_hold(struct tm_archive *a);
void tm_archive_put(struct tm_archive *a);

/* The archive file's attributes when it was seen. */
const struct stat *tm_archive_stat(const struct tm_archive *a);

/* One entry of an archive: a member, or a folder that only members' paths imply. */
struct tm_archive_entry {
	const char *path; /* in the archive; "" for its root */
	const char *name; /* the last component of path */
	enum tm_member_type type;
	uint64_t size;	  /* FILE: its bytes */
	int64_t mtime;	  /* seconds since the epoch */
	uint32_t mode;	  /* permission bits */
	const char *link; /* SYMLINK: its target */
	/* FILE (a hard link too, given the bytes of the file it names): the format its name and
	 * head give, NULL for none */
	const struct tm_format *fmt;
	uint32_t id; /* for tm_archive_open */
};

/* The entry at path ("" or "dir/name"). Returns 0 or -ENOENT. */
int tm_archive_lookup(const struct tm_archive *a, const char *path, struct tm_archive_entry *e);

/* Calls fn for each entry of folder dir of the archive, in path order. Stops when fn returns
 * non-zero and returns that; else 0, or -ENOTDIR when dir is no folder. */
int tm_archive_list(const struct tm_archive *a, const char *dir,
		    int (*fn)(void *arg, const struct tm_archive_entry *e), void *arg);

/* What the pass found wrong (the headers' problems, then the decompression's), one line
 * each, in *len bytes; "" when nothing. */
const char *tm_archive_errors(const struct tm_archive *a, size_t *len);

/* Opens the bytes of file entry id into out: reads copy them from the archive (holes of a
 * sparse member read as zeros). out->fd is the archive's, for tm_trace_unchanged; closing
 * out leaves it open. Returns 0 or -errno. */
int tm_archive_open(struct tm_archive *a, uint32_t id, struct tm_source *out);

#endif
