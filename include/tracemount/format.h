/* A trace format: one const table of operations per format, registered in registry.c.
 *
 * The core reads a trace as a stream of records. A format decodes bytes into fixed-stride
 * record structs that begin with struct tm_record, classifies each record, renders its dump
 * line, and computes its statistics. Everything a view shows is derived from those records,
 * so the index pass and a later read of one chunk decode with the same code and agree. */
#ifndef TRACEMOUNT_FORMAT_H
#define TRACEMOUNT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

struct json_object;
struct tm_diag;
struct tm_source;

#define TM_MAX_CLASSES	32
#define TM_FLAG_BITS	16 /* of tm_record.flags: entries of a flag_len, and the most tags */
#define TM_MAX_GROUPS	64 /* group views of a trace (QEMU4V's cpu/N.txt) */
#define TM_RENDER_SLACK 32 /* bytes a renderer may write past its record's end */

/* Common head of every decoded record. */
struct tm_record {
	uint32_t raw_rel; /* offset of the record's bytes from its chunk's first byte */
	uint32_t raw_len; /* number of trace bytes the record came from */
	uint8_t cls;	  /* index into tm_format.classes */
	uint8_t group;	  /* with tm_format.group_view: the group (processor) of the record */
	uint16_t flags;	  /* the format's own */
};

/* Records decoded from one contiguous run of trace bytes. */
struct tm_chunk {
	uint64_t first_record; /* record number of records[0] */
	uint64_t raw_off;      /* trace offset of raw[0] */
	const uint8_t *raw;    /* the trace bytes the records came from */
	size_t raw_len;
	void *records; /* n_records structs of record_size bytes */
	size_t n_records;
	size_t record_size;
};

static inline const struct tm_record *tm_chunk_rec(const struct tm_chunk *c, size_t i)
{
	return (const struct tm_record *)((const char *)c->records + i * c->record_size);
}

/* How a record view turns records into bytes. render() must write exactly measure() bytes;
 * the core checks the total of every rendered chunk against the index. */
struct tm_render_ops {
	/* Bytes every record of class cls produces, or 0 when it varies (then measure() is
	 * called per record). Optional. Lets the index pass size a view from class counts. */
	size_t (*fixed_len)(unsigned cls);
	/* With fixed_len: flag_len[b] bytes (may be negative) are added to the fixed length of
	 * a record whose head.flags has bit b set. NULL: none. Lets the index size a view from
	 * counts of classes and flags, without a call per record. */
	const int16_t *flag_len;
	/* Bytes record i of c produces. */
	size_t (*measure)(const struct tm_chunk *c, size_t i);
	/* Writes record i of c to out, which has room for measure() bytes and TM_RENDER_SLACK
	 * more (so fixed-width stores may overrun the record); returns measure()'s count. */
	size_t (*render)(const struct tm_chunk *c, size_t i, char *out);
};

/* A view a format adds to the generic ones (raw, dump.txt, stats.json, errors.txt, class/). */
struct tm_view_desc {
	const char *path;    /* relative to the trace folder; "%s" is replaced by the stem */
	uint64_t class_mask; /* bit c set: records of class c contribute */
	const struct tm_render_ops *ops;
};

/* Bytes of a view rendered whole (a table view), or of a file form. */
struct tm_blob {
	uint8_t *data; /* malloc'ed */
	size_t len;
};

/* An executed instruction, as the derivers take it (derive.h). */
enum tm_flow {
	TM_FLOW_NONE,	   /* falls through, or the format cannot tell */
	TM_FLOW_JUMP,	   /* always leaves the straight line: b, call, return, indirect */
	TM_FLOW_TAKEN,	   /* a conditional branch, taken */
	TM_FLOW_NOT_TAKEN, /* a conditional branch, not taken */
	TM_FLOW_COND,	   /* a conditional branch, taken when the next instruction of its
			      processor is not at pc + size */
};

struct tm_insn {
	uint64_t pc;
	uint32_t size;	/* bytes */
	uint8_t flow;	/* enum tm_flow */
	uint8_t stream; /* the processor, below TM_MAX_GROUPS: each follows its own PCs */
	bool more;	/* a further part (micro-op) of the stream's last instruction, which
			   only adds its flow */
};

/* Input of one decode call. */
struct tm_decode_in {
	const uint8_t *buf; /* bytes from the decoder's position on */
	size_t len;
	uint64_t raw_off; /* trace offset of buf[0], for messages */
	bool at_eof;	  /* nothing follows buf[len - 1] */
};

/* A virtual trace: one that a folder shows and that is no file of it, made by a format from
 * the folder's files of that format (tm_format.virtual_list). */
struct tm_virtual {
	char name[64];	/* its name in the folder */
	struct stat st; /* its attributes as a file: owner, permissions, times (its version) */
	void *priv;	/* the format's: what virtual_open needs; freed by virtual_free */
};

struct tm_format {
	const char *name;	 /* short, lower case: "byu"; also the format= override name */
	const char *description; /* one line for .tracemount/formats and --help */
	const char *recognition; /* how it is recognised, for .tracemount/formats */
	const char *const *extensions; /* name endings that are evidence, NULL-terminated */
	const char *const *classes;    /* class names, lower case; classes[cls] */
	unsigned n_classes;
	const char *class_ext; /* extension of class/CLASS.EXT streams; NULL: no binary streams */
	/* Classes whose records open every class stream (TT6's INITIAL_PC) and have no class/
	 * files of their own. */
	uint64_t common_classes;
	/* Renders class/CLASS.EXT records; NULL: the record's own bytes (tm_raw_copy_ops). */
	const struct tm_render_ops *class_stream;
	/* Classes that overlap the exclusive ones above (CIS501's loads, taken, flags_read...):
	 * flag bit b of a record's head.flags puts it in the class named tags[b] (a NULL entry
	 * keeps the bit private). Each tag gets class/TAG.txt and class/TAG.EXT as a class does,
	 * and a count in stats.json's classes. */
	const char *const *tags;
	unsigned n_tags; /* entries in tags, at most 16 */
	/* Records fall into groups by head.group (QEMU4V's processors): group g < TM_MAX_GROUPS
	 * gets the view group_view ("cpu/%u.txt"), the trace bytes of its records, shown only
	 * when it has records. NULL: no groups. */
	const char *group_view;

	size_t record_size;	 /* stride of decoded records, >= sizeof(struct tm_record) */
	size_t state_size;	 /* decoder state kept in each checkpoint (a multiple of 8) */
	size_t stats_size;	 /* private statistics state allocated by the core */
	size_t chunk_records;	 /* records between checkpoints */
	uint32_t raw_record_len; /* bytes per record when fixed, else 0 */

	/* Detection (tm_format_detect, registry.h): each format bids its confidence, 0 to 100,
	 * that a file is in it, and the highest bid above 0 wins. Names are weak evidence (50),
	 * magic numbers and plausible first records strong (90 and up). Bidding has two rounds,
	 * so that a file is opened only when its content could change the answer:
	 *   1. every format bids on the name (name_bid);
	 *   2. only if some format's content_bid_max exceeds the best bid of round 1, the file's
	 *      head is read and the formats with a content_bid bid again on it, their content bid
	 *      replacing their name bid; the others keep their name bid.
	 * So a name bid at least as high as every content_bid_max is final without any I/O, and
	 * a content bid beats a name bid only by exceeding it. An unreadable or empty file is
	 * decided by round 1. A tie goes to the format listed first in the registry. */

	/* Bid on the file's base name alone, without I/O: name is the name without ".gz" for a
	 * gzip trace. Called for every file of every folder listed. NULL: bids 0. */
	int (*name_bid)(const char *name);
	/* Bid on the file's content: head holds its first head_len bytes (1 to
	 * TM_PROBE_HEAD_LEN; decompressed for a gzip trace, so possibly cut mid-line), never
	 * NULL; name as for name_bid, which the bid may weigh too (a name with content that
	 * contradicts it may bid lower than name_bid). Called only in round 2. NULL: the
	 * format is recognised by its name alone. */
	int (*content_bid)(const char *name, const uint8_t *head, size_t head_len);
	/* The highest bid content_bid can return (a higher one counts as this): what decides
	 * whether round 2 is worth a read. Keep it at the bid of the strongest evidence. */
	int content_bid_max;

	/* Sets up the decoder state at the start of the trace. Optional (zeroed state). */
	void (*state_init)(void *state);
	/* Decodes records from in until max records are produced or the bytes run out; sets
	 * *n_out and *used (bytes consumed). Sets raw_rel relative to in->buf. Returns 0, or
	 * -EAGAIN when the next record needs bytes beyond in->len and !in->at_eof. Problems in
	 * the data go to diag (which may be NULL) and never stop decoding. */
	int (*decode)(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		      size_t *n_out, size_t *used, struct tm_diag *diag);

	/* The dump.txt line of a record; class/CLASS.txt shows the same lines. NULL: the format's
	 * records only feed its statistics and table views, and it has no dump.txt or class/
	 * views of records (a table view may be named dump.txt). */
	const struct tm_render_ops *dump;

	/* Statistics for stats.json, fed every chunk of the index pass in order. Optional. */
	int (*stats_init)(void *stats);
	void (*stats_update)(void *stats, const struct tm_chunk *c);
	/* Adds the format's keys to obj and reports whole-trace findings to diag. */
	int (*stats_finish)(void *stats, struct json_object *obj, struct tm_diag *diag);
	void (*stats_free)(void *stats);

	const struct tm_view_desc *extra_views;
	unsigned n_extra_views;

	/* Views rendered whole when the index pass is over and kept in the index, deflated in
	 * pieces (table.h; spixcounts' summary.txt): paths as in extra_views. tables_finish
	 * writes table_views[k] to the stream out[k] from the statistics, after stats_finish;
	 * a table it cannot render (what stats_finish reported) is left empty. Returns 0 or
	 * -errno. Optional. */
	const char *const *table_views;
	unsigned n_table_views;
	int (*tables_finish)(void *stats, FILE *const *out);

	/* Instruction traces: whether record i of c is an executed instruction, and which. The
	 * index pass calls it for every record in trace order and feeds the instructions to
	 * every deriver (derive.h), whose views (spix/...) the trace then has. NULL: none. */
	bool (*instruction)(const struct tm_chunk *c, size_t i, struct tm_insn *out);

	/* Virtual traces of a folder (virtual.h): traces that are no file, which the format
	 * makes from its files in one folder, such as spixcounts' SUM.spixcounts, the sum of the
	 * count files of one program. The core finds the folder's regular files that detection
	 * gives the format and asks it what they make; the mount lists and looks up the result
	 * as traces of the folder, -o prefetch indexes them, and `tracemount cat` and `ls` take
	 * their paths. Once open, a virtual trace is a trace of this format like any other,
	 * except that its index stays in memory (a source without a descriptor has no content
	 * key). Set the four operations and virtual_min_files together, or none. */

	/* Whether name may be one of the format's virtual traces ("SUM.spixcounts"), from the
	 * name alone. Called at every lookup of a name that is no file of its folder, before
	 * anything is read: false lets such lookups read nothing. */
	bool (*virtual_name)(const char *name);
	/* The virtual traces that files[0 .. n_files) make: the paths, relative to dirfd, of
	 * the regular files of folder dir ("." or "a/b" below dirfd; with AT_FDCWD a user's
	 * path) that detection gives this format, n_files >= virtual_min_files. Called when
	 * such a folder is listed, when a name virtual_name accepts is looked up in it (so at
	 * every stat and open of a virtual trace's views: read no more than the files' heads),
	 * and by -o prefetch. A file of the folder with a trace's name hides that trace: leave
	 * it out. Returns the count of traces, with *out a malloc'ed array of them that the
	 * core frees after virtual_free on each priv (for none, *out may stay NULL), or
	 * -errno. */
	int (*virtual_list)(int dirfd, const char *dir, char *const *files, unsigned n_files,
			    struct tm_virtual **out);
	/* Opens the bytes of virtual trace v, made from files below dirfd, as a source
	 * (source.h) whose size is known at once. Called at every open of one of its views and
	 * for its index pass: read nothing before the source's first read (a stat of an indexed
	 * trace's view reads none), and build the bytes then; the source's report can pass what
	 * went wrong building them to errors.txt. dirfd stays open while out is. Returns 0 or
	 * -errno. */
	int (*virtual_open)(int dirfd, const struct tm_virtual *v, struct tm_source *out);
	/* Frees a virtual trace's priv. */
	void (*virtual_free)(void *priv);
	/* Files of the format a folder must hold to have virtual traces, at least 1: a listing
	 * of a folder with fewer reads nothing more. */
	unsigned virtual_min_files;
};

#endif
