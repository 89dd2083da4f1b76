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

#include "tracemount/derive.h"
#include "tracemount/format.h"

struct tm_zindex;
struct tm_table;
struct tm_source;
struct tm_view_table;

/* One product of an index (derive.h): what its pass made, kept once built and never changed. */
struct tm_index_product {
	char *json;   /* its object of stats.json, as plain JSON text; NUL-terminated */
	char *errors; /* its lines of errors.txt */
	size_t errors_len;
	uint64_t n_errors, n_notes; /* counted in errors */
	uint64_t streams;	    /* a deriver's: the streams whose per-stream views exist */
};

/* An index: the record part, built by the record pass, then the products, each added once by
 * a pass of its own (or with the record part by one pass doing both). A reader that saw a
 * product built (under its trace's lock: tm_trace_products) reads its parts without a lock:
 * they never change again, and the parts of other products are other memory. */
struct tm_index {
	const struct tm_format *fmt;
	/* --- The record part. --- */
	uint32_t n_views, n_classes, state_words, row_words;
	uint64_t n_rows; /* chunks + 1 */
	uint64_t *rows;
	uint64_t raw_size;	     /* trace bytes covered */
	uint64_t tags[TM_FLAG_BITS]; /* records with each tag's flag bit (tm_format.tags) */
	bool truncated;		     /* the trace ends inside a record */
	char *record_errors;	     /* errors.txt's lines of the record pass */
	size_t record_errors_len;
	uint64_t record_n_errors, record_n_notes;
	/* A compressed trace's access points (trace offsets are then decompressed ones), or NULL */
	struct tm_zindex *z;
	char *source; /* stats.json's "source" */

	/* --- The products. --- */
	uint32_t all_products; /* the trace's (tm_products_of) */
	uint32_t products;     /* those built, bit p for product[p] */
	struct tm_index_product product[TM_MAX_PRODUCTS];
	/* The table views' bytes, by table number (tm_view_table_of): a product's are filled when
	 * it is built. NULL until one is; n_tables entries then. */
	struct tm_table *tables;
	uint32_t n_tables;
	/* Problems and notes in errors.txt so far: the record pass's and the products built. */
	uint64_t n_errors, n_notes;
	/* Once every product is built: stats.json (ends in a newline) and errors.txt, composed
	 * from the parts (tm_index_compose); NULL before. */
	char *stats_json;
	size_t stats_len;
	char *errors_txt;
	size_t errors_len;
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

/* One streaming pass over src, building every product with the record part. source_name goes
 * into stats.json. Returns 0 or -errno (an I/O error or no memory; problems in the data are
 * reported in errors.txt instead). */
int tm_index_build(const struct tm_format *fmt, const struct tm_view_table *views,
		   struct tm_source *src, const char *source_name, tm_progress_fn progress,
		   void *progress_arg, struct tm_index **out);

/* What a pass builds, beyond the record part it always makes. */
struct tm_index_pass {
	uint32_t products;		/* products to build (derive.h), of those the trace has */
	const struct tm_images *images; /* for the derivers of an instruction trace; NULL: none */
	tm_progress_fn progress;	/* NULL: none */
	void *progress_arg;
	const atomic_bool *cancel; /* once set, the pass stops within a batch of records, with
				      -ECANCELED and nothing kept; NULL: never */
};

/* The same, building the products asked for. */
struct tm_images;
int tm_index_build_pass(const struct tm_format *fmt, const struct tm_view_table *views,
			struct tm_source *src, const char *source_name,
			const struct tm_index_pass *pass, struct tm_index **out);

/* Moves the products of from (an index of the same bytes, built by a later pass) that ix has
 * not into ix, and composes stats.json and errors.txt once ix has them all. Returns 0,
 * -ESTALE when from's records differ from ix's (the trace changed), or -ENOMEM. */
int tm_index_adopt(struct tm_index *ix, struct tm_index *from);

/* stats.json and errors.txt from ix's parts, once every product is built (else nothing to
 * do). Returns 0, -EBADMSG when a product's JSON does not parse, or -ENOMEM. */
int tm_index_compose(struct tm_index *ix);

/* How stats.json is written (json-c's flags). */
#define TM_STATS_JSON_FLAGS                                                                        \
	(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Sets stats.json's "source" (an index read from a file was built for another path), composing
 * stats.json again when it is. Returns 0, -EBADMSG when a product's JSON does not parse, or
 * -ENOMEM. */
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
