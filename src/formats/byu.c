/* BYU Pentium address traces (specs/001_56d74c835ee11964.txt).
 *
 *   byte  0      4     5        6
 *         +------+-----+--------+
 *         | addr | be  | control|   addr: 32-bit physical address, big-endian
 *         +------+-----+--------+   be: byte enables, bit clear = byte requested
 *                                   control >> 4: bus cycle type; low 4 bits unused
 *
 * A trailing partial record is reported, not decoded. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/diag.h"
#include "tracemount/footprint.h"
#include "tracemount/format.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

#define BYU_RECORD_LEN 6

enum byu_class {
	BYU_INVALID,
	BYU_INT_ACK,
	BYU_SPECIAL,
	BYU_IO_READ,
	BYU_IO_WRITE,
	BYU_I_FETCH,
	BYU_NC_I_FETCH,
	BYU_D_READ,
	BYU_NC_D_READ,
	BYU_WRITE_BACK,
	BYU_D_WRITE,
	BYU_N_CLASSES
};

static const char *const byu_classes[BYU_N_CLASSES] = {
    "invalid",	  "int_ack", "special",	  "io_read",	"io_write", "i_fetch",
    "nc_i_fetch", "d_read",  "nc_d_read", "write_back", "d_write",
};

/* The reference decoder's names, which dump.txt reproduces, each followed by its line's
 * newline and padded to 16 bytes, so that a line ends with one fixed-size copy. */
#define OP_NAME(s)                                                                                 \
	{                                                                                          \
		s "\n", sizeof(s) - 1                                                              \
	}
static const struct {
	char name[16];
	uint8_t len; /* without the newline */
} byu_ops[BYU_N_CLASSES] = {
    OP_NAME("INVALID"),	  OP_NAME("INT_ACK"),	 OP_NAME("SPECIAL"),	OP_NAME("IO_READ"),
    OP_NAME("IO_WRITE"),  OP_NAME("I_FETCH"),	 OP_NAME("NC_I_FETCH"), OP_NAME("D_READ"),
    OP_NAME("NC_D_READ"), OP_NAME("WRITE_BACK"), OP_NAME("D_WRITE"),
};

static const uint8_t byu_class_of_control[16] = {
    BYU_INVALID, BYU_INT_ACK,	BYU_INVALID,	BYU_SPECIAL,	BYU_INVALID, BYU_IO_READ,
    BYU_INVALID, BYU_IO_WRITE,	BYU_I_FETCH,	BYU_NC_I_FETCH, BYU_INVALID, BYU_INVALID,
    BYU_D_READ,	 BYU_NC_D_READ, BYU_WRITE_BACK, BYU_D_WRITE,
};

#define CLASS_BIT(c) (1ull << (c))
#define BYU_FETCHES  (CLASS_BIT(BYU_I_FETCH) | CLASS_BIT(BYU_NC_I_FETCH))
#define BYU_READS    (CLASS_BIT(BYU_D_READ) | CLASS_BIT(BYU_NC_D_READ))
#define BYU_WRITES   (CLASS_BIT(BYU_D_WRITE) | CLASS_BIT(BYU_WRITE_BACK))
#define BYU_MEMORY   (BYU_FETCHES | BYU_READS | BYU_WRITES)

struct byu_record {
	struct tm_record head;
	uint32_t addr;
	uint8_t be;
	uint8_t control;
};

static const char *const byu_extensions[] = {"byu", NULL};

/* Six-byte records carry no magic, so any bytes are a BYU trace and the name is the only
 * evidence there can be: 95 on a .byu name, as high as any magic number's content bid (an
 * equal name bid wins), and just below byu12's content bid (96), which takes a .byu file
 * whose records are 12-byte BYU. So detection reads the head of each .byu file. */
static int byu_name_bid(const char *name)
{
	return tm_name_has_extension(name, byu_extensions) ? 95 : 0;
}

static int byu_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
		      size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct byu_record *r = recs;
	size_t n = in->len / BYU_RECORD_LEN;
	(void)state;

	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = in->buf + i * BYU_RECORD_LEN;
		r[i].head.raw_rel = (uint32_t)(i * BYU_RECORD_LEN);
		r[i].head.raw_len = BYU_RECORD_LEN;
		r[i].head.cls = byu_class_of_control[p[5] >> 4];
		r[i].head.flags = 0;
		r[i].head.group = 0;
		r[i].addr = tm_be32(p);
		r[i].be = p[4];
		r[i].control = p[5];
	}
	*n_out = n;
	*used = n * BYU_RECORD_LEN;
	if (n == max)
		return 0;
	if (!in->at_eof)
		return -EAGAIN;
	size_t rest = in->len - *used;
	if (rest) {
		tm_diag_truncated(diag, in->raw_off + *used,
				  "trailing partial record: %zu of %d bytes, not decoded", rest,
				  BYU_RECORD_LEN);
		*used += rest;
	}
	return 0;
}

/* dump.txt: "%08x %02x %s\n" as the reference decoder prints it. */
static size_t byu_dump_fixed_len(unsigned cls)
{
	return 8 + 1 + 2 + 1 + byu_ops[cls].len + 1;
}

static size_t byu_dump_measure(const struct tm_chunk *c, size_t i)
{
	return byu_dump_fixed_len(tm_chunk_rec(c, i)->cls);
}

static size_t byu_dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct byu_record *r = (const struct byu_record *)tm_chunk_rec(c, i);
	char *p = tm_put_hex32(out, r->addr);
	*p++ = ' ';
	p = tm_put_hex8(p, r->be);
	*p++ = ' ';
	memcpy(p, byu_ops[r->head.cls].name, 16); /* may overrun into TM_RENDER_SLACK */
	return (size_t)(p - out) + byu_ops[r->head.cls].len + 1;
}

static const struct tm_render_ops byu_dump_ops = {
    .fixed_len = byu_dump_fixed_len,
    .measure = byu_dump_measure,
    .render = byu_dump_render,
};

/* convert/NAME.din: "LABEL ADDRESS" with 0 read, 1 write, 2 fetch; write-backs are writes.
 * The class mask leaves out cycles that are not memory references. */
#define DIN_LINE_LEN 11 /* "2 0000abcd\n" */

static size_t byu_din_fixed_len(unsigned cls)
{
	(void)cls;
	return DIN_LINE_LEN;
}

static size_t byu_din_measure(const struct tm_chunk *c, size_t i)
{
	(void)c;
	(void)i;
	return DIN_LINE_LEN;
}

static size_t byu_din_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct byu_record *r = (const struct byu_record *)tm_chunk_rec(c, i);
	uint64_t bit = CLASS_BIT(r->head.cls);
	out[0] = bit & BYU_FETCHES ? '2' : bit & BYU_READS ? '0' : '1';
	out[1] = ' ';
	tm_put_hex32(out + 2, r->addr);
	out[10] = '\n';
	return DIN_LINE_LEN;
}

static const struct tm_render_ops byu_din_ops = {
    .fixed_len = byu_din_fixed_len,
    .measure = byu_din_measure,
    .render = byu_din_render,
};

static const struct tm_view_desc byu_extra_views[] = {
    {.path = "convert/%s.din", .class_mask = BYU_MEMORY, .ops = &byu_din_ops},
};

/* Statistics over memory references (fetches, reads, writes, write-backs); I/O and other
 * bus cycles carry port numbers or nothing, not memory addresses. */
struct byu_stats {
	uint64_t hist[BYU_N_CLASSES][256]; /* records by class and byte enables */
	uint32_t addr_min, addr_max;
	uint64_t last_line;	   /* the most recent line, to skip repeated inserts */
	struct tm_footprint lines; /* 64-byte lines; its 64-bit words are 4 KiB pages */
};

/* Bytes a byte-enable value requests: its clear bits. */
static unsigned bytes_requested(unsigned be)
{
	unsigned set = be - ((be >> 1) & 0x55u);
	set = (set & 0x33u) + ((set >> 2) & 0x33u);
	return 8 - ((set + (set >> 4)) & 0x0fu);
}

static int byu_stats_init(void *p)
{
	struct byu_stats *s = p;
	s->addr_min = UINT32_MAX;
	s->last_line = UINT64_MAX;
	tm_footprint_init(&s->lines);
	return 0;
}

/* One histogram increment per record; every count is derived from it at the end. */
static void byu_stats_update(void *p, const struct tm_chunk *c)
{
	struct byu_stats *s = p;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct byu_record *r = (const struct byu_record *)tm_chunk_rec(c, i);
		s->hist[r->head.cls][r->be]++;
		if (!(BYU_MEMORY & CLASS_BIT(r->head.cls)))
			continue;
		if (r->addr < s->addr_min)
			s->addr_min = r->addr;
		if (r->addr > s->addr_max)
			s->addr_max = r->addr;
		uint64_t line = r->addr >> 6;
		if (line == s->last_line)
			continue;
		s->last_line = line;
		tm_footprint_add(&s->lines, line);
	}
}

/* A fraction with six significant digits, not json-c's seventeen. */
static json_object *fraction(double v)
{
	char buf[sizeof("-1.23457e-308")]; /* the longest "%.6g" */
	snprintf(buf, sizeof(buf), "%.6g", v);
	return json_object_new_double_s(v, buf);
}

static json_object *hex_string(uint64_t v)
{
	char buf[sizeof("0x") + 16]; /* up to 16 digits */
	snprintf(buf, sizeof(buf), "0x%08" PRIx64, v);
	return json_object_new_string(buf);
}

static int byu_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	struct byu_stats *s = p;
	uint64_t records = 0, invalid = 0, mem_refs = 0, requested = 0, din[3] = {0};
	json_object *be = json_object_new_object();
	int err = 0;
	for (unsigned v = 0; v < ARRAY_SIZE(s->hist[0]); v++) {
		uint64_t n = 0;
		for (unsigned k = 0; k < BYU_N_CLASSES; k++) {
			n += s->hist[k][v];
			if (BYU_MEMORY & CLASS_BIT(k)) {
				/* the din's labels: 2 fetch, 0 read, 1 write (byu_din_render) */
				din[BYU_FETCHES & CLASS_BIT(k) ? 0
				    : BYU_READS & CLASS_BIT(k) ? 1
							       : 2] += s->hist[k][v];
				mem_refs += s->hist[k][v];
				requested += s->hist[k][v] * bytes_requested(v);
			}
		}
		records += n;
		invalid += s->hist[BYU_INVALID][v];
		char key[3] = {tm_hex_pairs[v][0], tm_hex_pairs[v][1], 0};
		if (n)
			tm_json_add_int(be, key, n, &err);
	}
	tm_json_add_int(obj, "memory_references", mem_refs, &err);
	tm_json_add(obj, "byte_enables", be, &err);
	tm_json_add_or_null(obj, "address_min", mem_refs, hex_string(s->addr_min), &err);
	tm_json_add_or_null(obj, "address_max", mem_refs, hex_string(s->addr_max), &err);
	tm_json_add_int(obj, "distinct_lines_64b", tm_footprint_count(&s->lines), &err);
	tm_json_add_int(obj, "distinct_pages_4k", tm_footprint_count_groups64(&s->lines), &err);
	tm_json_add_int(obj, "bytes_requested", requested, &err);
	tm_json_add(obj, "din", tm_din_stats(din[0], din[1], din[2]), &err);
	tm_json_add(obj, "invalid_fraction",
		    fraction(records ? (double)invalid / (double)records : 0), &err);
	/* Real 12-byte BYU files read as 6-byte records decode almost entirely as INVALID. */
	int suspect = records >= 64 && invalid * 10 >= records * 9;
	tm_json_add(obj, "probably_not_byu", json_object_new_boolean(suspect), &err);
	if (suspect)
		tm_diag_note(diag,
			     "%" PRIu64 " of %" PRIu64 " records are INVALID: probably not a "
			     "6-byte BYU trace (a 12-byte BYU trace, or another format?)",
			     invalid, records);
	if (s->lines.err)
		tm_diag_note(diag,
			     "out of memory counting distinct lines: counts are lower bounds");
	return err;
}

static void byu_stats_free(void *p)
{
	struct byu_stats *s = p;
	tm_footprint_free(&s->lines);
}

/* A memory reference's address (the din conversion's three kinds); I/O ports are no memory. */
static unsigned byu_accesses(const struct tm_chunk *c, size_t i, struct tm_access *out)
{
	const struct byu_record *r = (const struct byu_record *)tm_chunk_rec(c, i);
	uint64_t bit = CLASS_BIT(r->head.cls);
	if (!(BYU_MEMORY & bit))
		return 0;
	out[0] = (struct tm_access){
	    .addr = r->addr,
	    .kind = bit & BYU_FETCHES ? TM_ACCESS_FETCH
		    : bit & BYU_READS ? TM_ACCESS_READ
				      : TM_ACCESS_WRITE,
	};
	return 1;
}

const struct tm_format tm_format_byu = {
    .name = "byu",
    .description = "BYU Pentium address trace, 6-byte records",
    .recognition = "extension .byu (unless its head reads as 12-byte BYU: byu12)",
    .extensions = byu_extensions,
    .classes = byu_classes,
    .n_classes = BYU_N_CLASSES,
    .class_ext = "byu",
    .record_size = sizeof(struct byu_record),
    .chunk_records = 16384,
    .raw_record_len = BYU_RECORD_LEN,
    .name_bid = byu_name_bid,
    .decode = byu_decode,
    .dump = &byu_dump_ops,
    .stats_size = sizeof(struct byu_stats),
    .stats_init = byu_stats_init,
    .stats_update = byu_stats_update,
    .stats_finish = byu_stats_finish,
    .stats_free = byu_stats_free,
    .extra_views = byu_extra_views,
    .n_extra_views = ARRAY_SIZE(byu_extra_views),
    .accesses = byu_accesses,
};
