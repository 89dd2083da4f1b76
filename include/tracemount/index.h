/* The chunk index of one trace: a sparse table of restart points built by one streaming pass.
 *
 * Row r describes the start of chunk r; one last row holds the totals. Rows contain no
 * pointers, only 64-bit words, so the table can be written to a file as it is:
 *
 *   word 0            trace offset of the chunk's first record
 *   word 1            number of the chunk's first record
 *   words 2..         byte offset of every record view at that point (n_views words)
 *   then              records of every class before that point (n_classes words)
 *   then              the decoder state restarting there (state_words words)
 *
 * A read at view offset o finds by binary search the last row whose view offset is <= o and
 * decodes that one chunk. The pass also produces stats.json and errors.txt. */
#ifndef TRACEMOUNT_INDEX_H
#define TRACEMOUNT_INDEX_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

struct tm_zindex;
struct tm_table;
struct tm_source;
struct tm_view_table;

struct tm_index {
	uint32_t n_views, n_classes, state_words, row_words;
	uint64_t n_rows; /* chunks + 1 */
	uint64_t *rows;
	uint64_t raw_size; /* trace bytes covered */
	uint64_t n_errors; /* problems in errors.txt */
	uint64_t n_notes;  /* notes in errors.txt (diag.h) */
	bool truncated;	   /* the trace ends inside a record */
	char *stats_json;  /* stats.json, ends in a newline */
	size_t stats_len;
	char *errors_txt; /* errors.txt */
	size_t errors_len;
	struct tm_table *tables; /* the table views' bytes, by table number (table.h,
				    tm_view_table_of) */
	uint32_t n_tables;
	uint64_t streams; /* the streams whose per-stream views exist (derive.h), bit s for s */
	/* A compressed trace's access points (trace offsets are then decompressed ones), or NULL */
	struct tm_zindex *z;
};

enum { TM_ROW_RAW_OFF = 0, TM_ROW_RECORD = 1, TM_ROW_VIEWS = 2 };

static inline const uint64_t *tm_index_row(const struct tm_index *ix, uint64_t r)
{
	return ix->rows + r * ix->row_words;
}
static inline uint64_t tm_index_chunks(const struct tm_index *ix)
{
	return ix->n_rows - 1;
}
static inline uint64_t tm_index_view_off(const struct tm_index *ix, uint64_t r, unsigned v)
{
	return tm_index_row(ix, r)[TM_ROW_VIEWS + v];
}
static inline uint64_t tm_index_view_size(const struct tm_index *ix, unsigned v)
{
	return tm_index_view_off(ix, ix->n_rows - 1, v);
}
static inline uint64_t tm_index_records(const struct tm_index *ix)
{
	return tm_index_row(ix, ix->n_rows - 1)[TM_ROW_RECORD];
}
static inline uint64_t tm_index_class_count(const struct tm_index *ix, uint64_t r, unsigned c)
{
	return tm_index_row(ix, r)[TM_ROW_VIEWS + ix->n_views + c];
}
static inline const void *tm_index_state(const struct tm_index *ix, uint64_t r)
{
	return tm_index_row(ix, r) + TM_ROW_VIEWS + ix->n_views + ix->n_classes;
}

/* Progress of an index pass: called now and then with the trace bytes done. A non-zero
 * return stops the pass, which then fails with -ECANCELED. */
typedef int (*tm_progress_fn)(void *arg, uint64_t done, uint64_t total);

/* One streaming pass over src. source_name goes into stats.json. Returns 0 or -errno (an
 * I/O error or no memory; problems in the data are reported in errors.txt instead). */
int tm_index_build(const struct tm_format *fmt, const struct tm_view_table *views,
		   struct tm_source *src, const char *source_name, tm_progress_fn progress,
		   void *progress_arg, struct tm_index **out);
/* The same, handing images (NULL: none) to the derivers of an instruction trace (derive.h),
 * and stopping within a batch of records once *cancel (NULL: never) is set, with -ECANCELED
 * and nothing kept. */
struct tm_images;
int tm_index_build_images(const struct tm_format *fmt, const struct tm_view_table *views,
			  struct tm_source *src, const char *source_name,
			  const struct tm_images *images, tm_progress_fn progress,
			  void *progress_arg, const atomic_bool *cancel, struct tm_index **out);

/* How stats.json is written (json-c's flags). */
#define TM_STATS_JSON_FLAGS                                                                        \
	(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Sets stats.json's "source" (an index read from a file was built for another path). Returns
 * 0, -EBADMSG when stats.json does not parse, or -ENOMEM. */
int tm_index_set_source(struct tm_index *ix, const char *source);

/* The chunk holding byte off of record view v: the last row whose offset is <= off.
 * Returns 0, or -ERANGE when off is at or past the view's end. */
int tm_index_find(const struct tm_index *ix, unsigned v, uint64_t off, uint64_t *chunk);

/* Most bytes one record renders to in any view (a text line is at most 4 KiB and its dump
 * adds fixed fields): a bound that an index read from a file must respect. */
#define TM_RECORD_BYTES_MAX (64u << 10)

/* Whether ix, read from a file, is consistent with itself, with a chunk of at most
 * chunk_records records and a trace of trace_size bytes: NULL when it is, else what is wrong.
 * Rows, counts and access points must be in order and inside the trace, so that no read
 * through ix leaves its buffers (the bytes it promises are checked when rendered). */
const char *tm_index_check(const struct tm_index *ix, unsigned chunk_records, uint64_t trace_size);

/* Bytes the index occupies in memory, for status and budgets. */
size_t tm_index_mem(const struct tm_index *ix);

void tm_index_free(struct tm_index *ix);

#endif
