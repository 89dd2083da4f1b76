/* The contract between the core and a trace format: one const struct tm_format per format,
 * listed once in src/core/registry.c. This header is the reference for every field and every
 * operation, as fuse.h is for struct fuse_operations; doc/adding-a-format.md is the recipe
 * that fills them in.
 *
 * The core reads a trace as a stream of records. A format decodes bytes into fixed-stride
 * record structs that begin with struct tm_record, classifies each record, renders its lines
 * in each view, and computes its statistics. Everything a view shows is derived from those
 * records, so the index pass and a later read of one chunk decode with the same code and agree.
 *
 * Who calls what, and when:
 *   - Detection (registry.c, through context.c) calls name_bid, and content_bid when the name
 *     leaves the answer open, for each file of a folder listed or looked up in the mount, each
 *     file -o prefetch and `tracemount index` walk, and each path given to cat and ls.
 *   - The view table (view.c) is made from the fields when a trace is first seen: which views
 *     exist and their paths. No operation is called for it.
 *   - The index pass (index_build.c) runs once per trace and version of its content, when a
 *     record view's size or bytes are first needed (or by -o prefetch or `tracemount index`),
 *     and keeps its result in memory and in an index file: state_init, then decode over the
 *     whole trace in order; for each batch of records it sizes every record view (fixed_len,
 *     flag_len, measure). The format's statistics are a product (derive.h), built by the same
 *     pipeline when stats.json or a table view is first needed (or with the record index by
 *     -o prefetch and `tracemount index`): stats_init, stats_update and instruction per batch,
 *     then stats_finish, tables_finish and stats_free. Neither renders anything.
 *   - A read of a record view (trace.c, reader.c) decodes one chunk again from the state saved
 *     at its start, with diag NULL, and renders the view's records of that chunk (render).
 *   - Virtual traces (virtual.c) call the virtual_* operations at listings, lookups and opens
 *     of the mount, for -o prefetch, and for cat and ls.
 *
 * Threads: the daemon serves FUSE requests on several threads, renders ahead on one more and
 * with -o prefetch indexes on another; `tracemount index -j N` runs N index passes at once.
 * Any operation may run at the same time as any other, on other traces and (decode, fixed_len,
 * measure, render) on other chunks of the same trace: keep nothing in mutable static or global
 * storage, and work only on what the call is given. A trace has one index pass at a time, and
 * a pass calls its operations in the order above, on one thread.
 *
 * Memory: the table and all it points to are const and live as long as the program. The core
 * owns every buffer it passes (input bytes, records, decoder state, statistics state, streams),
 * valid for the call only unless said otherwise; an operation frees only what it allocated
 * itself, where its field says how. Errors are negative errno values.
 *
 * An index file records the layout of the format's index (record_size, state_size,
 * chunk_records, classes, tags, view paths...) and the build of tracemount that wrote it: a file
 * of another layout or build is not used, so a changed format never reads an old index. */
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

/* Common head of every decoded record: the first member of the format's record struct. decode
 * sets every field of every record it writes (the records' memory is not zeroed).
 *
 * Flags: head.flags is the format's own, and the core reads it in two ways only:
 *   - tags: bit b, where b < n_tags and tags[b] is not NULL, puts the record in the tag class
 *     tags[b] (its class/TAG views and its count in stats.json's classes);
 *   - sizes: in a view whose render ops have a flag_len, a record of a class of fixed length
 *     produces flag_len[b] bytes more (or fewer) for each bit b it has set.
 * Any other bit is private, a mark decode leaves for the format's renderers (TT6's "preceded by
 * a record of another class", which its class streams turn into a position record). Each flag_len
 * array is read at every bit that decode sets, whatever the class: give it an entry for every
 * such bit (TM_FLAG_BITS entries cover all). */
struct tm_record {
	/* Offset of the record's bytes from c->raw of the chunk it is seen in. decode sets it
	 * relative to in->buf (which is c->raw in the index pass); for a read the core adds the
	 * offset of in->buf in the chunk. */
	uint32_t raw_rel;
	/* Number of trace bytes the record came from. The raw copies (class/CLASS.EXT without
	 * class_stream, group views) copy these bytes. */
	uint32_t raw_len;
	/* Index into tm_format.classes, below n_classes: a record of another class fails the
	 * index pass with -EPROTO. */
	uint8_t cls;
	/* With tm_format.group_view: the record's group (processor), below TM_MAX_GROUPS to be in
	 * a group view (255: in none). Without: set it to 0; the core ignores it. */
	uint8_t group;
	uint16_t flags; /* the format's own (above) */
};

/* Records decoded from one contiguous run of trace bytes, as the operations that take records
 * see them. In the index pass a batch: up to a few thousand records, possibly none, never
 * across a chunk's boundary. At a read a whole chunk: chunk_records records (fewer in the
 * last). Record i's bytes are raw + tm_chunk_rec(c, i)->raw_rel, raw_len of them. Neighbours
 * of a record are not reliably there: an operation on record i reads record i only. */
struct tm_chunk {
	uint64_t first_record; /* record number of records[0], from 0 at the trace's start */
	uint64_t raw_off;      /* trace offset of raw[0] (of the decompressed bytes, if gzip) */
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

/* How a record view turns records into bytes: the length of each record's bytes, known
 * without rendering, and the bytes. A view shows the records of the classes in its mask (a tag
 * view: those with the tag's flag; a group view: those of the group), in trace order.
 *
 * A record's length in a view is fixed_len(cls) plus flag_len[b] for each bit b of its flags
 * when fixed_len(cls) is not 0, else measure()'s. The index pass adds up these lengths into
 * each chunk's offset in each view; a read renders the chunk and checks every record's count
 * and the chunk's total against them, failing with -EIO where they differ. So all four depend
 * on record i alone (its struct, its bytes, its number c->first_record + i), never on its
 * neighbours, a decoder state or the moment, and may run on several threads at once. */
struct tm_render_ops {
	/* Bytes every record of class cls (below n_classes) produces, or 0 when it varies (then
	 * measure() is called per record). Optional: NULL is 0 for every class, except in the raw
	 * copies, where it is raw_record_len. Called for every view and class when an index
	 * pass starts and when a chunk is rendered: a constant table. Lets the index pass size
	 * a view from counts of classes, without a call per record. */
	size_t (*fixed_len)(unsigned cls);
	/* With fixed_len: flag_len[b] bytes (may be negative) are added to the fixed length of
	 * a record whose head.flags has bit b set; an entry for every bit decode sets (see
	 * struct tm_record). NULL: none. Lets the index size a view from counts of classes and
	 * flags, without a call per record. */
	const int16_t *flag_len;
	/* Bytes record i of c produces. Required. Called by the index pass for every record of
	 * a class whose fixed_len is 0, and for every record a tag view shows (the tag views are
	 * always measured); at a read for the records of a class whose fixed_len is 0. A
	 * measured class costs a call per record per view: keep it to arithmetic on the record,
	 * no formatting. */
	size_t (*measure)(const struct tm_chunk *c, size_t i);
	/* Writes record i of c to out and returns the count, which must be the record's length
	 * above. Required. Called only at reads, for each record of the chunk that the view
	 * shows, in order. out has room for that length and TM_RENDER_SLACK bytes more, so a
	 * fixed-width store may overrun the record's end (the next record overwrites it). */
	size_t (*render)(const struct tm_chunk *c, size_t i, char *out);
};

/* A record view a format adds to the generic ones (raw, dump.txt, stats.json, errors.txt,
 * class/), listed after them; read in chunks like dump.txt. */
struct tm_view_desc {
	/* Relative to the trace folder, '/' making folders ("convert/%s.din"). "%s", at most
	 * once and the only '%', is replaced by the trace's stem: its name less ".gz" and its last
	 * extension, cut (with a hash) so that the name fits NAME_MAX. Must not be any other
	 * view's path: nothing checks. */
	const char *path;
	uint64_t class_mask;		 /* bit c set: records of class c contribute */
	const struct tm_render_ops *ops; /* measure and render required */
};

/* Bytes in one buffer. Not used by the core: a helper type of the formats' own code
 * (spixcounts_sum.c builds SUM.spixcounts in one). */
struct tm_blob {
	uint8_t *data; /* malloc'ed; freed by whoever holds the blob */
	size_t len;
};

/* An executed instruction, as tm_format.instruction gives it to the derivers (derive.h). */
enum tm_flow {
	TM_FLOW_NONE,	   /* falls through, or the format cannot tell */
	TM_FLOW_JUMP,	   /* always leaves the straight line: b, call, return, indirect */
	TM_FLOW_TAKEN,	   /* a conditional branch, taken */
	TM_FLOW_NOT_TAKEN, /* a conditional branch, not taken */
	TM_FLOW_COND,	   /* a conditional branch, taken when the next instruction of its
			      processor is not at pc + size */
};

/* What an instruction does to calls (calls/, doc/calls.md), as the format's instruction set
 * says; the flow says whether it was taken. The values are those of src/calls' enum
 * tm_call_kind. */
enum tm_insn_call {
	TM_INSN_PLAIN,	  /* no transfer, or the format cannot tell */
	TM_INSN_CALL,	  /* branch and link: bl, blr, blx, jal, call */
	TM_INSN_RETURN,	  /* may return: ret, blr (PowerPC), bx lr, pop {pc}, jr $ra */
	TM_INSN_TRANSFER, /* any other jump, taken or not: b, br, bctr, conditional branches */
};

/* Bits of tm_insn.known: which of its optional fields the trace gives. A zeroed tm_insn
 * knows none of them. */
enum {
	TM_INSN_HAS_SP = 1,	/* sp */
	TM_INSN_HAS_TIME = 2,	/* time */
	TM_INSN_HAS_TARGET = 4, /* target */
	TM_INSN_HAS_RETURN = 8, /* return_pc */
};

struct tm_insn {
	uint64_t pc;	    /* address of the instruction (Thumb: without bit 0) */
	uint64_t sp;	    /* with TM_INSN_HAS_SP: the stack pointer before the instruction */
	uint64_t time;	    /* with TM_INSN_HAS_TIME: when it ran, in the trace's unit (ticks,
			       cycles), not decreasing along a stream */
	uint64_t target;    /* with TM_INSN_HAS_TARGET: where a taken transfer goes */
	uint64_t return_pc; /* with TM_INSN_HAS_RETURN: a call's return address, when it is not
			       pc + size (a delay slot's) */
	uint32_t size;	    /* bytes */
	uint8_t flow;	    /* enum tm_flow */
	uint8_t call;	    /* enum tm_insn_call; a failed condition's call or return is
			       TM_INSN_PLAIN where the format can tell */
	uint8_t known;	    /* TM_INSN_HAS_* bits */
	uint8_t stream;	    /* the processor, below TM_MAX_GROUPS (spix/ counts a higher one as
			       TM_MAX_GROUPS - 1): each follows its own PCs */
	bool more;	    /* a further part (micro-op) of the stream's last instruction, which
			       only adds its flow (and its call kind, when the first part had
			       none) */
};

/* A memory access of a record, as tm_format.accesses gives it (plots/, doc/plots.md). */
enum tm_access_kind {
	TM_ACCESS_FETCH, /* an instruction fetch: code */
	TM_ACCESS_READ,	 /* a data read (a load, an I/O read) */
	TM_ACCESS_WRITE, /* a data write (a store, a write-back) */
};

#define TM_MAX_ACCESSES 4 /* entries tm_format.accesses may fill for one record */

struct tm_access {
	uint64_t addr; /* the first byte's address, as the trace gives it (virtual or physical) */
	uint8_t kind;  /* enum tm_access_kind */
};

/* Input of one decode call. */
struct tm_decode_in {
	/* Bytes from the decoder's position on, valid during the call only. In the index pass
	 * the rest of a read of the trace (reads of 256 KiB, and more for a record that needs
	 * it); at a read the rest of one chunk's bytes, exactly up to its end. */
	const uint8_t *buf;
	size_t len;	  /* may be 0 */
	uint64_t raw_off; /* trace offset of buf[0], for messages only (tm_diag_at) */
	/* Nothing follows buf[len - 1]: in the index pass, the trace's end is in buf; at a
	 * read, the chunk is the trace's last. Else more bytes follow, which this call may not
	 * see. */
	bool at_eof;
};

/* A virtual trace: one that a folder shows and that is no file of it, made by a format from
 * the folder's files of that format (tm_format.virtual_list), which fills it in. */
struct tm_virtual {
	char name[64];	/* its name in the folder, NUL-terminated; a valid file name */
	struct stat st; /* its attributes as a file: owner, permissions, times (its version) */
	void *priv;	/* the format's: what virtual_open needs; freed by virtual_free */
};

struct tm_format {
	/* --- Identity. Shown by --help and .tracemount/formats, in the registry's order. --- */

	/* Short, lower case, unique, under 32 bytes: "byu". Required. It names the format
	 * everywhere: -o format=GLOB:NAME, cat/ls --format and index --format, stats.json's
	 * "format" and the key of the format's own object there, index files, .tracemount/status
	 * and the fuzz corpora, whose inputs start with it ("byu\0"). */
	const char *name;
	/* One line, for .tracemount/formats and --help. Required. */
	const char *description;
	/* How it is recognised, in words, for .tracemount/formats and --help ("extension
	 * .byu"). Required; keep it true to the bids below. */
	const char *recognition;
	/* Name endings that are evidence, without the dot, NULL-terminated ({"byu", NULL}). The
	 * core never reads it: the format's bids do, usually through tm_name_has_extension
	 * (registry.h). */
	const char *const *extensions;

	/* --- Classes: every record is in exactly one. --- */

	/* Class names, classes[cls]: lower case, distinct, valid file names (each gets
	 * class/NAME.txt, and class/NAME.EXT with class_ext), and keys of stats.json's
	 * "classes", which counts them. At most TM_MAX_CLASSES: an index pass of a format with
	 * more fails with -EINVAL. Required (at least one). */
	const char *const *classes;
	unsigned n_classes;
	/* Extension of the class/CLASS.EXT streams, which hold the class's records in the
	 * format's own encoding; NULL: no such streams. Set it only when each stream is a valid
	 * trace of the format that decodes to exactly class/CLASS.txt. */
	const char *class_ext;
	/* Bit c set: the records of class c open every class view (class/CLASS.txt and .EXT,
	 * whose masks add these bits) and class c has no class/ files: for a record every file
	 * of the format starts with (TT6's INITIAL_PC). 0: none. */
	uint64_t common_classes;
	/* Renders class/CLASS.EXT records, for a format whose records cannot simply be
	 * concatenated (TT6 writes a position record before some); NULL: the record's own bytes
	 * (tm_raw_copy_ops, view.h). */
	const struct tm_render_ops *class_stream;
	/* Classes that overlap the exclusive ones above (CIS501's loads, taken, flags_read...):
	 * flag bit b of a record's head.flags puts it in the class named tags[b] (a NULL entry
	 * keeps the bit private). Each tag gets class/TAG.txt and class/TAG.EXT as a class does,
	 * measured record by record in the index pass, and a count in stats.json's classes. Only
	 * with dump. NULL and 0: none. */
	const char *const *tags;
	unsigned n_tags; /* entries in tags, at most TM_FLAG_BITS (more: the index pass fails,
			    -EINVAL) */
	/* Records fall into groups by head.group (QEMU4V's processors): group g < TM_MAX_GROUPS
	 * gets the view group_view, a pattern with one "%u" for g ("cpu/%u.txt"): the trace bytes
	 * of its records (or group_ops' rendering of them), shown only when it has records (so a
	 * listing of cpu/ needs the index).
	 * NULL: no groups. */
	const char *group_view;
	/* Renders the group views, for a format whose records are not text lines (byu12's
	 * cpu/N.txt shows its dump lines): measure and render, and a fixed_len that is not 0 for
	 * any class (the index pass sizes a group view from each record's class; no flag_len).
	 * NULL: the records' own bytes (tm_raw_copy_ops, view.h). */
	const struct tm_render_ops *group_ops;

	/* --- Sizes. --- */

	/* Stride of decoded records, >= sizeof(struct tm_record): sizeof the format's record
	 * struct. Every cached chunk holds chunk_records of them, within -o memory=: keep it
	 * small. */
	size_t record_size;
	/* Bytes of decoder state, a multiple of 8 (the core keeps it in 64-bit words, aligned).
	 * Saved in every checkpoint row of the index and its file and copied back for each chunk
	 * read, by another process or machine too: plain data, no pointers, and small. 0: the
	 * decoder has no state. */
	size_t state_size;
	/* Bytes of the statistics state, which the core allocates zeroed for each index pass
	 * and frees after stats_free. 0: none. */
	size_t stats_size;
	/* Records per chunk, > 0: the unit of random access (a read decodes and renders one
	 * chunk), of the chunk cache, and of the index (a row per chunk). Larger chunks make a
	 * smaller index and a slower first read at a random offset. BYU's 16384 are 96 KiB. */
	size_t chunk_records;
	/* Bytes per record when every record has the same length, else 0. The raw copies'
	 * fixed_len: lets the index pass size class/CLASS.EXT and group views from counts. */
	uint32_t raw_record_len;

	/* --- Detection (tm_format_detect, registry.h). ---
	 *
	 * Each format bids its confidence, 0 to 100, that a file is in it, and the highest bid
	 * above 0 wins; a negative bid counts as 0, one above 100 as 100. Names are weak evidence
	 * (50), magic numbers and plausible first records strong (90 and up); a name that is the
	 * only evidence there can be may bid 100 (BYU's). Bidding has two rounds, so that a file
	 * is opened only when its content could change the answer:
	 *   1. every format bids on the name (name_bid). The core asks this round alone by
	 *      passing a NULL head (registry.h), and its answer stands when the head cannot be
	 *      read, is empty, or is a gzip head that inflates to nothing;
	 *   2. only if some format's content_bid_max exceeds the best bid of round 1, the file's
	 *      head is read and the formats with a content_bid bid again on it, their content bid
	 *      replacing their name bid; the others keep their name bid.
	 * So a name bid at least as high as every content_bid_max is final without any I/O, and
	 * a content bid beats a name bid only by exceeding it (an equal name bid wins). Between
	 * equal bids of the same kind the format listed first in the registry wins. An
	 * -o format=GLOB:NAME (or --format) that matches the file decides before any bid.
	 *
	 * Both bids are called many times for the same file, from any thread: pure, cheap
	 * functions of their arguments, with no I/O. */

	/* Bid on the file's base name alone: name is the name less a final ".gz" (which a
	 * gzip trace keeps in the mount). Called in round 1 for every file of every folder
	 * listed or looked up, by every format. NULL: bids 0. */
	int (*name_bid)(const char *name);
	/* Bid on the file's content: head holds its first head_len bytes, 1 to
	 * TM_PROBE_HEAD_LEN (registry.h), never NULL: decompressed for a gzip trace, and possibly
	 * cut mid-record or mid-line; read none past head_len. name is as for name_bid, which the
	 * bid may weigh too (a name with content that contradicts it may bid lower than
	 * name_bid). Called only in round 2. NULL: the format is recognised by its name alone. */
	int (*content_bid)(const char *name, const uint8_t *head, size_t head_len);
	/* The highest bid content_bid can return (a higher one counts as this): what decides
	 * whether round 2 is worth a read. Keep it at the bid of the strongest evidence. */
	int content_bid_max;

	/* --- Decoding. --- */

	/* Sets up the decoder state at the start of the trace, on state_size zeroed bytes.
	 * Called once per index pass, before the first decode; a read starts from the state
	 * saved in the index instead. Optional (the zeroed state). */
	void (*state_init)(void *state);
	/* Decodes records from in->buf into recs (max records of record_size bytes, not zeroed)
	 * until max records are produced or the bytes run out. Required. Called by the index
	 * pass over the whole trace, in order, and at each read of a chunk not in the cache,
	 * from the state saved at the chunk's start until it has the chunk's records.
	 *
	 * Assumes: state is the state after the last byte consumed before in->buf[0]; max >= 1;
	 * in->len may be 0; diag is NULL at reads (the tm_diag_* functions accept NULL, so call
	 * them regardless), which reports each problem once, in the index pass.
	 *
	 * Guarantees:
	 *   - Sets *n_out (records written) and *used (bytes consumed), in every case, with
	 *     *n_out <= max and *used <= in->len (else the index pass fails with -EPROTO); sets
	 *     every field of each record's head (struct tm_record) and of the record.
	 *   - Consumes whole records only, and leaves state as it stands after the last byte
	 *     consumed: the state saved at a chunk's start is whatever state holds between two
	 *     calls. Bytes may be consumed without a record (TT6 applies a position record to
	 *     its state and emits nothing); they count in *used.
	 *   - No look-ahead: a record's extent and content depend only on its own bytes and the
	 *     state before it, never on bytes past its end, in->len, max or at_eof (except to
	 *     say that a record is cut by the end of the trace). A read gives the decoder exactly
	 *     one chunk's bytes, with at_eof false except for the last chunk, and needs exactly
	 *     the records the index pass found there, else it fails with -EIO.
	 *   - Split independence: the records, their fields and the final state are the same
	 *     whatever the split of the bytes into calls. The index pass splits at its reads,
	 *     at batches of a few thousand records, at chunk boundaries (through max) and after
	 *     each -EAGAIN; a read decodes a chunk in one call, or in as many as -EAGAIN asks.
	 *   - Problems in the data go to diag (tm_diag_at, tm_diag_line, tm_diag_note) and never
	 *     stop decoding: skip, resynchronise, or emit a record flagged or classed as bad.
	 *     Report a problem in the call that consumes its bytes, not in one that returns
	 *     -EAGAIN before them, so that it is reported once whatever the split.
	 *   - At in->at_eof, consumes all that is left: a cut last record is reported with
	 *     tm_diag_truncated (stats.json's "truncated") and consumed. The trace ends when a
	 *     call at at_eof produces and consumes nothing; bytes left then are not in the index.
	 *   - A record needs at most 1 GiB (else the pass fails, -EFBIG), and a chunk's bytes
	 *     stay below 4 GiB (raw_rel is 32-bit; else -EFBIG).
	 *
	 * Returns 0, or -EAGAIN when the next record needs bytes beyond in->len and !at_eof (the
	 * core then calls again from in->buf + *used with more bytes; 0 with nothing produced or
	 * consumed means the same), or another -errno (-ENOMEM), which fails the index pass or
	 * the read. */
	int (*decode)(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		      size_t *n_out, size_t *used, struct tm_diag *diag);

	/* --- Views. --- */

	/* The dump.txt line of a record; class/CLASS.txt and class/TAG.txt show the same lines.
	 * NULL: the format's records only feed its statistics and table views, and it has no
	 * dump.txt or class/ views of records (a table view may be named dump.txt). */
	const struct tm_render_ops *dump;

	/* --- Statistics, for stats.json: all optional, in one index pass's order. --- */

	/* Sets up stats (stats_size zeroed bytes) after state_init. Returns 0 or -errno, which
	 * fails the index pass (stats_free is still called). */
	int (*stats_init)(void *stats);
	/* Takes one batch of records, every batch of the pass in trace order; c may hold no
	 * records (a call that consumed bytes only, or none). Cannot fail: keep a failure (no
	 * memory) in stats and report it in stats_finish. */
	void (*stats_update)(void *stats, const struct tm_chunk *c);
	/* Once decoding reached the trace's end without error: adds the format's keys to obj,
	 * an empty object that stats.json shows under the format's name after the common keys
	 * (format, source, bytes, records, classes, errors, truncated), which the core writes;
	 * obj owns what is added to it. Reports whole-trace findings to diag (tm_diag_note),
	 * which go to errors.txt and its count. Returns 0 or -errno, which fails the pass. */
	int (*stats_finish)(void *stats, struct json_object *obj, struct tm_diag *diag);
	/* Whole-trace findings about the file's name against its content, which no other
	 * operation sees (a .byu name on 12-byte BYU records): name is the trace file's base
	 * name, escaped as stats.json's "source" shows it, less a compression suffix (".gz",
	 * ".xz", ".zst"), as name_bid sees it. Called once per pass, after stats_finish; reports
	 * to diag (tm_diag_note). The index is kept by content, so a copy of the same bytes and
	 * times under another name may show the note of the name that was indexed first.
	 * Optional. */
	void (*name_finish)(const char *name, struct tm_diag *diag);
	/* Frees what stats holds, not stats itself. Called once per pass whenever stats was
	 * allocated, also when stats_init failed or was never called: accept a zeroed state. */
	void (*stats_free)(void *stats);

	/* The format's own record views (conversions), after the class views. n_extra_views is
	 * the number of entries in extra_views. */
	const struct tm_view_desc *extra_views;
	unsigned n_extra_views;

	/* Views rendered whole when the index pass is over and kept in the index, deflated in
	 * pieces (table.h; spixcounts' summary.txt): paths as in extra_views. tables_finish
	 * writes table_views[k] to the stream out[k] from the statistics, after stats_finish
	 * and before stats_free, once per pass, when n_table_views > 0; the streams are the
	 * core's: write, never close or seek. A table it cannot render is left empty, the reason
	 * reported by stats_finish (tables_finish has no diag). Returns 0 or -errno (a failed
	 * write included), which fails the pass. With the derivers' views, at most TM_MAX_TABLES
	 * (view.h) table views a trace, else the pass fails with -EINVAL. Optional. */
	const char *const *table_views;
	unsigned n_table_views;
	int (*tables_finish)(void *stats, FILE *const *out);

	/* Instruction traces: whether record i of c is an instruction the trace fetched
	 * (executed, or condition-failed where the format says so), and which:
	 * fills *out and returns true, or returns false (then *out is ignored). Called by the
	 * index pass only, for every record of every batch in trace order, after stats_update;
	 * depends on record i alone. Setting it gives the trace the views of every deriver
	 * (derive.h: spix/...) and their objects in stats.json. NULL: none. */
	bool (*instruction)(const struct tm_chunk *c, size_t i, struct tm_insn *out);
	/* The memory record i of c touches: fills out[0 .. n) (room for TM_MAX_ACCESSES) in the
	 * order the record gives them and returns n, 0 for a record that touches none. Called by
	 * the derivers of records (plots/: footprint.svg, addresses.svg) for every record of
	 * every batch, in trace order; depends on record i alone, and costs a call per record:
	 * keep it to reading the record's struct. NULL: an executed instruction's pc (from
	 * instruction) is its record's one access, a fetch, and a format without instruction
	 * touches none. */
	unsigned (*accesses)(const struct tm_chunk *c, size_t i, struct tm_access *out);

	/* --- Virtual traces of a folder (virtual.h). ---
	 *
	 * Traces that are no file, which the format makes from its files in one folder, such as
	 * spixcounts' SUM.spixcounts, the sum of the count files of one program. The core finds
	 * the folder's regular files that detection gives the format and asks it what they make;
	 * the mount lists and looks up the result as traces of the folder, -o prefetch indexes
	 * them, and `tracemount cat` and `ls` take their paths. Once open, a virtual trace is a
	 * trace of this format like any other, except that its index stays in memory (a source
	 * without a descriptor has no content key). Nothing is cached between calls: each
	 * listing and lookup asks again. Set the four operations and virtual_min_files together,
	 * or none. All may run on several threads at once. */

	/* Whether name may be one of the format's virtual traces ("SUM.spixcounts"), from the
	 * name alone. Called at every lookup of a name that is no file of its folder, and for
	 * each path cat, ls and -o prefetch take that is no file, before anything is read:
	 * false lets such lookups read nothing. */
	bool (*virtual_name)(const char *name);
	/* The virtual traces that files[0 .. n_files) make: the paths, relative to dirfd, of
	 * the regular files of folder dir ("." or "a/b" below dirfd; with AT_FDCWD a user's
	 * path) that detection gives this format, n_files >= virtual_min_files, in the folder's
	 * order. Called when such a folder is listed, when a name virtual_name accepts is
	 * looked up in it (so at every stat and open of a virtual trace's views: read no more
	 * than the files' heads), and by -o prefetch. A file of the folder with a trace's name
	 * hides that trace: leave it out. Returns the count of traces, with *out a malloc'ed
	 * array of them that the core frees after virtual_free on each priv (for none, *out may
	 * stay NULL), or -errno. */
	int (*virtual_list)(int dirfd, const char *dir, char *const *files, unsigned n_files,
			    struct tm_virtual **out);
	/* Opens the bytes of virtual trace v, made from files below dirfd, as a source
	 * (source.h) whose size is known at once. Called at every open of one of its views, for
	 * its index pass, by -o prefetch and by cat and ls: read nothing before the source's
	 * first read (a stat of an indexed trace's view reads none), and build the bytes then;
	 * the source's report can pass what went wrong building them to errors.txt. dirfd stays
	 * open while out is; v and its priv may not (cat frees them once out is open): copy what
	 * the source needs. Returns 0 or -errno. */
	int (*virtual_open)(int dirfd, const struct tm_virtual *v, struct tm_source *out);
	/* Frees a virtual trace's priv, once for each trace virtual_list returned. */
	void (*virtual_free)(void *priv);
	/* Files of the format a folder must hold to have virtual traces, at least 1: a listing
	 * of a folder with fewer reads nothing more. */
	unsigned virtual_min_files;
};

#endif
