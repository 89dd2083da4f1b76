/* Inside src/archive only: an archive's member table, as built by its pass and as kept in its
 * cache file (integers and one blob of strings, no pointers, so it is written as it is).
 *
 * The entries are the members, less those a later member of the same path replaced, plus the
 * folders their paths imply and the root (""), sorted by path component by component, so
 * that a folder's entries follow it: `after` is the index past them. */
#ifndef TRACEMOUNT_ARCHIVE_TABLE_H
#define TRACEMOUNT_ARCHIVE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/log.h"

struct tm_source;
struct tm_index_store;
struct tm_zindex;

#define TM_ARC_NONE UINT64_MAX /* no string */

struct tm_arc_entry {
	uint64_t offset; /* of its stored data in the (decompressed) archive */
	uint64_t size;	 /* its bytes, holes included */
	int64_t mtime;
	uint64_t path, link, format; /* offsets in strings, or TM_ARC_NONE */
	uint32_t type;		     /* enum tm_member_type: FILE, DIR or SYMLINK (a hard link
					is the file it names, as extraction left it) */
	uint32_t mode;
	uint32_t first_run, n_runs; /* in runs: a sparse member's */
	uint32_t after;		    /* the index past its folder's entries, or past it */
};

struct tm_arc_run {
	uint64_t offset, size; /* of the member */
	uint64_t at;	       /* where its bytes start in the member's stored data */
};

struct tm_arc_table {
	struct tm_arc_entry *entries;
	uint32_t n_entries;
	char *strings;
	uint64_t strings_len;
	struct tm_arc_run *runs;
	uint32_t n_runs;
	char *errors; /* the archive's problems, one per line */
	size_t errors_len;
	struct tm_zindex *z; /* a compressed archive's access points, else NULL */
};

/* The pass: reads the archive file (name: its base name) once, decompressing it on the way
 * when it is compressed, into t. Returns 0 or -errno. */
int tm_arc_table_build(struct tm_source *file, const char *name, struct tm_arc_table *t);

/* The entry at path, or -1. */
int64_t tm_arc_table_find(const struct tm_arc_table *t, const char *path);

/* NULL when t is sound for an archive file of file_size bytes; else why not. */
const char *tm_arc_table_check(const struct tm_arc_table *t, uint64_t file_size);

void tm_arc_table_free(struct tm_arc_table *t);

/* The table of the archive file (path: relative to SOURCE, for the log), from its cache file
 * in store (may be NULL) or built, then stored there. Returns 0 or -errno. */
int tm_arc_table_obtain(struct tm_source *file, const char *path,
			const struct tm_index_store *store, tm_log_fn *log, struct tm_arc_table *t);

#endif
