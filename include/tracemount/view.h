/* The views of one trace: the files of its folder, instantiated from its format's table.
 *
 * Every format gets raw, dump.txt, stats.json, errors.txt, class/CLASS.txt and, when it has
 * a class extension, class/CLASS.EXT; then its extra views, group views and table views; then,
 * for an instruction trace, the derivers' views (derive.h). Record views are numbered in the
 * order the index stores their offsets. */
#ifndef TRACEMOUNT_VIEW_H
#define TRACEMOUNT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

enum tm_view_kind {
	TM_VIEW_RAW,	 /* the trace's own bytes */
	TM_VIEW_RECORDS, /* bytes rendered from records, located through the index */
	TM_VIEW_STATS,	 /* stats.json, produced by the index pass */
	TM_VIEW_ERRORS,	 /* errors.txt, produced by the index pass */
	TM_VIEW_TABLE,	 /* bytes rendered whole by the index pass: the format's table views,
			    the derivers' views */
};

struct tm_view {
	char *path;			 /* relative to the trace folder: "class/d_read.txt" */
	const struct tm_render_ops *ops; /* record views */
	uint64_t class_mask;		 /* record views: classes whose records it shows */
	enum tm_view_kind kind;
	int group;	    /* record views: -1, or the one group shown (its view exists only
			       when it has records); table views: -1, or the stream of a
			       per-stream view (it exists only when the index shows the
			       stream) */
	unsigned column;    /* record views: index column; table views: table, or a
			       per-stream view's place among a stream's */
	uint16_t flag_mask; /* record views: unless 0, of the classes' records only those
			       with one of these flags (a tag's class) */
	bool hide_empty;    /* table views: it exists only when not empty, which takes the
			       index (a deriver's view it may leave empty: derive.h) */
	uint8_t product;    /* table views: the product that makes it (derive.h), p of
			       TM_PRODUCT bit 1 << p */
	uint32_t products;  /* the products its bytes take: 0 for raw and the record views,
			       every product of the trace for stats.json and errors.txt */
};

/* views[TM_RAW_VIEW] of every trace is raw. */
#define TM_RAW_VIEW 0

/* Table views of a trace, per-stream ones apart: spix/'s 2 and calls/' 6, and room. */
#define TM_MAX_TABLES 16
/* Streams (processors) that may have per-stream views (derive.h): 0 to 15. Each costs the view
 * table n_stream_tables entries whether the trace has it or not, and an index the tables of
 * the streams it shows only. */
#define TM_MAX_STREAM_VIEWS 16

struct tm_view_table {
	struct tm_view *views;
	unsigned n_views;
	unsigned n_record_views;
	unsigned n_tables;	  /* table views: the format's, then the derivers' (derive.h);
				     TM_MAX_TABLES at most; per-stream views apart */
	unsigned n_stream_tables; /* the derivers' per-stream views of one stream */
	char *stem;		  /* the trace's name less its extensions, for "%s" in view paths */
	char *stream_paths;	  /* the per-stream views' paths, in one block */
};

/* Builds the views of a trace of format fmt named name (its base name): per-stream views after
 * all others, by stream, each stream's in the derivers' order. Returns 0 or -ENOMEM. */
int tm_view_table_init(struct tm_view_table *t, const struct tm_format *fmt, const char *name);
void tm_view_table_free(struct tm_view_table *t);

/* Index of the view at path, or -ENOENT. */
int tm_view_table_find(const struct tm_view_table *t, const char *path);

/* Whether path ("class") is a folder of views. */
int tm_view_table_is_dir(const struct tm_view_table *t, const char *path);

/* Calls fn once for each entry directly inside folder dir ("" for the trace folder), with
 * is_dir set for subfolders, else view the view's index. Stops and returns fn's value when it
 * is non-zero. Group views are listed whether or not they have records. */
int tm_view_table_list(const struct tm_view_table *t, const char *dir,
		       int (*fn)(void *arg, const char *name, int is_dir, unsigned view),
		       void *arg);

/* Bytes every record of class cls produces in record view v, or 0 when it varies: the view's
 * fixed_len, or for a copy of the trace's own bytes the format's fixed record length. The
 * index pass sizes views by counting with it; rendering spares a measure() per record. */
size_t tm_view_fixed_len(const struct tm_format *fmt, const struct tm_view *v, unsigned cls);

/* The tables of an index: the format's and derivers' table views, then n_stream_tables for
 * each stream below TM_MAX_STREAM_VIEWS, whether shown or not. */
static inline unsigned tm_view_table_slots(const struct tm_view_table *t)
{
	return t->n_tables + TM_MAX_STREAM_VIEWS * t->n_stream_tables;
}

/* The table holding table view v: its own, or its stream's place among the per-stream tables.
 * Whether a per-stream view exists is its product's (tm_index_product.streams). */
static inline unsigned tm_view_table_of(const struct tm_view_table *t, const struct tm_view *v)
{
	if (v->group < 0)
		return v->column;
	return t->n_tables + (unsigned)v->group * t->n_stream_tables + v->column;
}

/* Whether record view v shows record r. */
static inline int tm_view_shows(const struct tm_view *v, const struct tm_record *r)
{
	return (v->class_mask >> r->cls & 1) && (!v->flag_mask || (r->flags & v->flag_mask)) &&
	       (v->group < 0 || r->group == v->group);
}

/* Bytes record i of c produces in view v, where fixed[cls] is tm_view_fixed_len's answer. */
static inline size_t tm_view_record_len(const struct tm_view *v, const size_t *fixed,
					const struct tm_chunk *c, size_t i)
{
	const struct tm_record *r = tm_chunk_rec(c, i);
	size_t n = fixed[r->cls];
	if (!n)
		return v->ops->measure(c, i);
	for (unsigned flags = r->flags; flags && v->ops->flag_len; flags &= flags - 1)
		n += (size_t)(ptrdiff_t)v->ops->flag_len[__builtin_ctz(flags)];
	return n;
}

/* The stem of a trace file name: without ".gz", then without its last extension. */
char *tm_trace_stem(const char *name);

/* Render ops shared by every format: the record's own trace bytes, for class/CLASS.EXT. */
extern const struct tm_render_ops tm_raw_copy_ops;

/* stats.json's "din" object: the lines of convert/NAME.din by label, as a Dinero IV run on it
 * counts them (doc/views.md says what each format writes); NULL for no memory. */
struct json_object *tm_din_stats(uint64_t fetches, uint64_t reads, uint64_t writes);

#endif
