/* Derivers: views that traces get whatever their format, derived from the executed
 * instructions its format's instruction operation yields (format.h) or, for a deriver with
 * add_records, from the records of every trace. spix/ (basic-block counts,
 * src/spix/spix_derive.c) is one of the first kind, plots/ (src/plots/plots_derive.c) of the
 * second.
 *
 * A deriver is one const table of operations, listed once in src/core/derivers.c; the core
 * names none. For each trace it applies to (tm_deriver_applies: every trace for a deriver
 * with add_records, else those of a format with an instruction operation):
 *   - the view table (view.c) adds every deriver's views, in list order, after the format's
 *     own table views: table views (TM_VIEW_TABLE), rendered whole when the index pass is
 *     over and kept, deflated, in the index and its file; then its per-stream views for each
 *     stream below TM_MAX_STREAM_VIEWS (view.h);
 *   - each deriver is a product (below): the pass that builds it (index_build.c, when a file
 *     of its own is first opened or stat'ed, or with every product by -o prefetch and
 *     `tracemount index`) allocates its state, calls init with the trace's program images,
 *     then feeds add the instructions (or add_records the records) of every batch of records,
 *     in trace order, and at its end asks streams which streams get views and calls finish,
 *     which writes the views and the deriver's object of stats.json;
 *   - .tracemount/formats lists the views with the format's (meta.c).
 *
 * Per-stream views (a processor's own calls/cpu/N/...) exist only for the streams a deriver
 * shows: the index keeps its mask with its product (tm_index_product.streams) and fills the
 * tables of those streams only. The mount hides the others, and a folder holding only
 * per-stream views that none shows.
 * Adding a deriver: one file with its table, one line in derivers.c, one meson line. */
#ifndef TRACEMOUNT_DERIVE_H
#define TRACEMOUNT_DERIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemount/format.h"

struct json_object;
struct tm_diag;

/* A program image of a trace: a file that describes the code the trace ran (the names and
 * extents of its functions), named by the user (-o image=, --image) or found beside the trace
 * (images.h gives the rules). The core opens it and keys the trace's index by its identity
 * (a hash of its bytes among others), but never interprets it: a deriver that knows its form
 * does. */
struct tm_image {
	/* Open for reading, or -1 when it could not be opened. Read it with pread (or a library
	 * that does): the core reads it too, before the pass and after, to hash it. Valid until
	 * the deriver's free; the core closes it. */
	int fd;
	int error;	  /* fd -1: why, a -errno (-ELOOP: a symbolic link, not followed) */
	const char *name; /* for messages: the path the user gave, or the name beside the trace */
	uint64_t offset;  /* the load offset, added (modulo 2^64) to every address of the image */
	bool given;	  /* named by the user, rather than found beside the trace */
};

/* The program images of one trace, in order (the user's in the order given); n may be 0. */
struct tm_images {
	const struct tm_image *image;
	size_t n;
};

struct tm_deriver {
	/* Short, lower case ("spix"): the key of the deriver's object in stats.json, which
	 * follows the format's own object, in list order. */
	const char *name;
	/* Its views, relative to the trace folder, "%s" standing for the trace's stem
	 * ("spix/%s.spixcounts"); out[k] of finish is views[k]. The core keeps a trace's table
	 * views within TM_MAX_TABLES (view.h), the format's included. */
	const char *const *views;
	/* The entries of views and of finish's out (a view table's n_views, view.h, counts all
	 * the views of a trace). */
	unsigned n_outputs;
	/* Its per-stream views, relative to the trace folder, one "%u" standing for the stream
	 * (tm_insn.stream) and no "%s" ("calls/cpu/%u/tree.txt"); n_stream_outputs of them.
	 * Optional (NULL, 0). */
	const char *const *stream_views;
	unsigned n_stream_outputs;
	/* Views that exist only when not empty, bit k for views[k] (hide_empty_streams: for
	 * stream_views[k]): those the trace may have nothing for (a time where the trace gives
	 * none), so that a folder does not list an empty file. Listing their folder then takes
	 * the index. Optional (0: every view exists, empty or not). */
	uint64_t hide_empty, hide_empty_streams;
	/* Bytes of private state, allocated and zeroed by the core for one index pass. */
	size_t state_size;
	/* Sets the state up before the first add, with the trace's program images (never NULL;
	 * images->n may be 0), valid until free. An image it cannot use is no failure: it says
	 * so in diag (errors.txt) and does without. Optional. Returns 0 or -errno, which fails
	 * the index pass. */
	int (*init)(void *state, const struct tm_images *images, struct tm_diag *diag);
	/* Takes insn[0 .. n): the executed instructions of one batch of records (up to a few
	 * thousand), in trace order; n may be 0. Called once per batch, after the format's
	 * stats_update. It cannot fail: keep a failure (no memory) in the state for finish. */
	void (*add)(void *state, const struct tm_insn *insn, size_t n);
	/* Instead of add (set one of the two): takes c, one batch of records of a trace of
	 * format fmt (possibly none), every batch of the pass in trace order, after the
	 * format's stats_update. With it the deriver applies to the traces of every format,
	 * whatever operations their format has: it reads what a record says through the
	 * format's table (head.cls, fmt->classes, fmt->accesses, fmt->instruction), on record i
	 * alone. It cannot fail: keep a failure in the state for finish. Keep it cheap: it runs
	 * for every record of every trace. */
	void (*add_records)(void *state, const struct tm_format *fmt, const struct tm_chunk *c);
	/* Once the pass is over, before finish: the streams whose per-stream views exist, bit s
	 * for stream s, below TM_MAX_STREAM_VIEWS only (a higher bit fails the pass with
	 * -EINVAL). Required with stream_views; the same answer every time. */
	uint64_t (*streams)(const void *state);
	/* Once the pass is over, after the format's stats_finish and tables_finish: writes
	 * views[k] to the stream out[k], then for the j-th stream (from 0, in increasing order)
	 * of those streams answered, stream_views[k] to out[n_outputs + j * n_stream_outputs + k]
	 * (a write error shows as -EIO or -ENOMEM in the return), adds the deriver's figures to
	 * obj (its stats.json object, empty on entry), and reports whole-trace findings to diag.
	 * A view it cannot render (the trace runs more code than it holds) is left empty, said
	 * in errors.txt and in obj. Returns 0, or -errno, which fails the index pass. */
	int (*finish)(void *state, FILE *const *out, struct json_object *obj, struct tm_diag *diag);
	/* Frees what the state holds, not the state itself. Called once for every state the
	 * core allocated, whether or not init succeeded and finish was called: it must accept a
	 * zeroed state. Optional. */
	void (*free)(void *state);

	/* Program images: the file-name suffix of those it reads (".sym"), which the core looks
	 * for beside each trace (images.h), or NULL. */
	const char *image_suffix;
	/* Whether the image open at fd (read it with pread) is one it can use: 0, or -errno
	 * with why in why. The mount and the commands refuse an image the user names when a
	 * deriver with this operation refuses it. Optional. */
	int (*image_check)(int fd, char *why, size_t why_len);
};

/* Every deriver, NULL-terminated, in the order of their views and stats.json objects. */
extern const struct tm_deriver *const tm_derivers[];

/* Whether traces of fmt get deriver d's views: every trace for a deriver of records, those
 * of a format that yields instructions for a deriver of instructions. */
static inline bool tm_deriver_applies(const struct tm_deriver *d, const struct tm_format *fmt)
{
	return d->add_records != NULL || fmt->instruction != NULL;
}

/* Whether traces of fmt get the views of the derivers of instructions (and so read program
 * images): those of a format that yields instructions. */
static inline bool tm_derivers_apply(const struct tm_format *fmt)
{
	return fmt->instruction != NULL;
}

/* Products: what an index holds beyond its records, each built by a pass of its own when a file
 * of its own is first opened (or with every other by -o prefetch and `tracemount index`), and
 * kept in the index file once built (doc/architecture.md, "Products"). Bit 0 is the format's
 * statistics (stats_update, stats_finish, its table views); bit 1 + k is deriver k of
 * tm_derivers (its views, its object of stats.json). stats.json, errors.txt and report.html
 * take every product of their trace. */
#define TM_PRODUCT_STATS      1u
#define TM_PRODUCT_DERIVER(k) (2u << (k))
#define TM_MAX_PRODUCTS	      8		 /* the format's statistics and 7 derivers */
#define TM_PRODUCTS_ALL	      UINT32_MAX /* every product a trace has */

/* The products of a trace of fmt: its statistics, and the derivers that apply to it. */
uint32_t tm_products_of(const struct tm_format *fmt);

/* The names of the products in mask, for the log ("stats,calls": the format's statistics and
 * the derivers' names):
 * written to buf (len bytes), returned. */
const char *tm_products_name(uint32_t mask, char *buf, size_t len);

/* The number of views the derivers add to a trace of fmt, per-stream views not counted. */
unsigned tm_derived_views(const struct tm_format *fmt);

/* The number of per-stream views the derivers add to a trace of fmt for one stream. */
unsigned tm_derived_stream_views(const struct tm_format *fmt);

#endif
