/* BYU 12-byte address traces, "p2AddrTr" (byutr.h), little-endian:
 *
 *   byte  0         4         5      6      7      8         12
 *         +---------+---------+------+------+------+---------+
 *         | address | reqtype | size | attr | proc | time    |
 *         +---------+---------+------+------+------+---------+
 *   address: u32, physical   reqtype: request code (below)   size: bytes (0 for a reply)
 *   attr: attributes         proc: processor                 time: u32, not monotonic
 *
 * reqtype: 0x00 instruction fetch, 0x01 memory read, 0x02 memory read-invalidate, 0x03 memory
 * write; 0x10 I/O read, 0x11 I/O write; 0x20 deferred reply, 0x21 interrupt acknowledge, 0x22
 * central agent response, 0x23 branch trace message; 0x31 shutdown, 0x32 flush, 0x33 halt,
 * 0x34 sync, 0x35 flush acknowledge, 0x36 stop-clock acknowledge, 0x37 SMI acknowledge; any
 * other code is invalid, reported and decoded as class invalid.
 *
 * The size of a file cannot tell these from 6-byte BYU traces (byu.c), which .byu files
 * usually hold: a .byu or .tr file is read as 12-byte records when its head read as 6-byte
 * records is nearly all INVALID and read as 12-byte records is plausible (content bid). A
 * trailing partial record is reported, not decoded. cpu/N.txt shows the dump lines of
 * processor N (the proc byte) for N below 64 (group_ops). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "tracemount/diag.h"
#include "tracemount/footprint.h"
#include "tracemount/format.h"
#include "tracemount/registry.h"
#include "tracemount/stats_json.h"
#include "tracemount/util.h"
#include "tracemount/view.h"

#define BYU12_RECORD_LEN 12

enum byu12_class {
	B12_INVALID,
	B12_I_FETCH,
	B12_D_READ,
	B12_D_READ_INV,
	B12_D_WRITE,
	B12_IO_READ,
	B12_IO_WRITE,
	B12_DEFERRED_REPLY,
	B12_INT_ACK,
	B12_CENTRAL_AGENT,
	B12_BRANCH_TRACE,
	B12_SHUTDOWN,
	B12_FLUSH,
	B12_HALT,
	B12_SYNC,
	B12_FLUSH_ACK,
	B12_STOP_CLOCK_ACK,
	B12_SMI_ACK,
	B12_N_CLASSES
};

static const char *const byu12_classes[B12_N_CLASSES] = {
    "invalid",	"i_fetch",	  "d_read",  "d_read_inv",    "d_write",	"io_read",
    "io_write", "deferred_reply", "int_ack", "central_agent", "branch_trace",	"shutdown",
    "flush",	"halt",		  "sync",    "flush_ack",     "stop_clock_ack", "smi_ack",
};

/* dump.txt's operation names, each followed by the line's newline and padded to 16 bytes, so
 * that a line ends with one fixed-size copy. */
#define OP_NAME(s)                                                                                 \
	{                                                                                          \
		s "\n", sizeof(s) - 1                                                              \
	}
static const struct {
	char name[16];
	uint8_t len; /* without the newline */
} byu12_ops[B12_N_CLASSES] = {
    OP_NAME("INVALID"),	      OP_NAME("I_FETCH"),	 OP_NAME("D_READ"),
    OP_NAME("D_READ_INV"),    OP_NAME("D_WRITE"),	 OP_NAME("IO_READ"),
    OP_NAME("IO_WRITE"),      OP_NAME("DEFERRED_REPLY"), OP_NAME("INT_ACK"),
    OP_NAME("CENTRAL_AGENT"), OP_NAME("BRANCH_TRACE"),	 OP_NAME("SHUTDOWN"),
    OP_NAME("FLUSH"),	      OP_NAME("HALT"),		 OP_NAME("SYNC"),
    OP_NAME("FLUSH_ACK"),     OP_NAME("STOP_CLOCK_ACK"), OP_NAME("SMI_ACK"),
};

static unsigned byu12_class_of(uint8_t reqtype)
{
	switch (reqtype) {
	case 0x00: return B12_I_FETCH;
	case 0x01: return B12_D_READ;
	case 0x02: return B12_D_READ_INV;
	case 0x03: return B12_D_WRITE;
	case 0x10: return B12_IO_READ;
	case 0x11: return B12_IO_WRITE;
	case 0x20: return B12_DEFERRED_REPLY;
	case 0x21: return B12_INT_ACK;
	case 0x22: return B12_CENTRAL_AGENT;
	case 0x23: return B12_BRANCH_TRACE;
	case 0x31: return B12_SHUTDOWN;
	case 0x32: return B12_FLUSH;
	case 0x33: return B12_HALT;
	case 0x34: return B12_SYNC;
	case 0x35: return B12_FLUSH_ACK;
	case 0x36: return B12_STOP_CLOCK_ACK;
	case 0x37: return B12_SMI_ACK;
	default: return B12_INVALID;
	}
}

#define CLASS_BIT(c) (1ull << (c))
#define B12_FETCHES  CLASS_BIT(B12_I_FETCH)
#define B12_READS    (CLASS_BIT(B12_D_READ) | CLASS_BIT(B12_D_READ_INV))
#define B12_WRITES   CLASS_BIT(B12_D_WRITE)
#define B12_MEMORY   (B12_FETCHES | B12_READS | B12_WRITES)
#define B12_MAX_SIZE 64 /* a plausible request's bytes, at most: a cache line */
#define B12_PROCS    256

struct byu12_record {
	struct tm_record head;
	uint32_t addr;
	uint32_t time;
	uint8_t reqtype;
	uint8_t size;
	uint8_t attr;
	uint8_t proc;
};

static const char *const byu12_extensions[] = {"byu12", "tr", "byu", NULL};
static const char *const byu12_own_extensions[] = {"byu12", NULL};
static const char *const byu12_probe_extensions[] = {"tr", "byu", NULL};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* .byu12 is this format's own name, final. .tr is only a hint that the content must confirm
 * (other tools name traces so), and .byu is 6-byte BYU's name, which only the content can
 * overturn: neither bids by name, so an empty or unreadable .tr file is no trace. */
static int byu12_name_bid(const char *name)
{
	return tm_name_has_extension(name, byu12_own_extensions) ? 100 : 0;
}

/* The content bid of a .tr or .byu file, 96: above BYU's .byu name bid (95), which only
 * such a head overturns: whether its head, read as 6-byte BYU records, is
 * nearly all INVALID (control >> 4 in {0, 2, 4, 6, 10, 11}) and, read as 12-byte records,
 * has only known request types, sizes of at most a cache line, and memory requests of at
 * least a byte (a head of zeros reads as neither). At least 4 whole 12-byte records are
 * needed: less is no evidence. */
static int byu12_content_bid(const char *name, const uint8_t *head, size_t head_len)
{
	static const uint16_t byu6_invalid =
	    1u << 0 | 1u << 2 | 1u << 4 | 1u << 6 | 1u << 10 | 1u << 11;
	size_t n12 = head_len / BYU12_RECORD_LEN, n6 = n12 * 2, invalid6 = 0;

	if (!tm_name_has_extension(name, byu12_probe_extensions) || n12 < 4)
		return 0;
	for (size_t i = 0; i < n12; i++) {
		const uint8_t *p = head + i * BYU12_RECORD_LEN;
		unsigned cls = byu12_class_of(p[4]);
		/* a memory request moves bytes: zeros (a fetch of none) are no evidence */
		if (cls == B12_INVALID || p[5] > B12_MAX_SIZE ||
		    ((CLASS_BIT(cls) & B12_MEMORY) && !p[5]))
			return 0;
	}
	for (size_t i = 0; i < n6; i++)
		invalid6 += byu6_invalid >> (head[i * 6 + 5] >> 4) & 1;
	return invalid6 * 10 >= n6 * 9 ? 96 : 0;
}

static int byu12_decode(void *state, const struct tm_decode_in *in, void *recs, size_t max,
			size_t *n_out, size_t *used, struct tm_diag *diag)
{
	struct byu12_record *r = recs;
	size_t n = in->len / BYU12_RECORD_LEN;
	(void)state;

	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = in->buf + i * BYU12_RECORD_LEN;
		unsigned cls = byu12_class_of(p[4]);
		r[i].head.raw_rel = (uint32_t)(i * BYU12_RECORD_LEN);
		r[i].head.raw_len = BYU12_RECORD_LEN;
		r[i].head.cls = (uint8_t)cls;
		r[i].head.flags = 0;
		r[i].head.group = p[7] < TM_MAX_GROUPS ? p[7] : 255;
		r[i].addr = le32(p);
		r[i].reqtype = p[4];
		r[i].size = p[5];
		r[i].attr = p[6];
		r[i].proc = p[7];
		r[i].time = le32(p + 8);
		if (cls == B12_INVALID)
			tm_diag_at(diag, in->raw_off + i * BYU12_RECORD_LEN,
				   "invalid request type 0x%02x", p[4]);
	}
	*n_out = n;
	*used = n * BYU12_RECORD_LEN;
	if (n == max)
		return 0;
	if (!in->at_eof)
		return -EAGAIN;
	size_t rest = in->len - *used;
	if (rest) {
		tm_diag_truncated(diag, in->raw_off + *used,
				  "trailing partial record: %zu of %d bytes, not decoded", rest,
				  BYU12_RECORD_LEN);
		*used += rest;
	}
	return 0;
}

/* dump.txt: "ADDRESS REQTYPE SIZE ATTR PROC TIME NAME\n", "%08x %02x %02x %02x %02x %08x %s\n":
 * a length that depends on the class only. */
#define DUMP_FIXED 30 /* "00000000 00 00 00 00 00000000 " */

static size_t byu12_dump_fixed_len(unsigned cls)
{
	return DUMP_FIXED + byu12_ops[cls].len + 1;
}

static size_t byu12_dump_measure(const struct tm_chunk *c, size_t i)
{
	return byu12_dump_fixed_len(tm_chunk_rec(c, i)->cls);
}

static size_t byu12_dump_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct byu12_record *r = (const struct byu12_record *)tm_chunk_rec(c, i);
	char *p = tm_put_hex32(out, r->addr);
	*p++ = ' ';
	p = tm_put_hex8(p, r->reqtype);
	*p++ = ' ';
	p = tm_put_hex8(p, r->size);
	*p++ = ' ';
	p = tm_put_hex8(p, r->attr);
	*p++ = ' ';
	p = tm_put_hex8(p, r->proc);
	*p++ = ' ';
	p = tm_put_hex32(p, r->time);
	*p++ = ' ';
	memcpy(p, byu12_ops[r->head.cls].name, 16); /* may overrun into TM_RENDER_SLACK */
	return (size_t)(p - out) + byu12_ops[r->head.cls].len + 1;
}

static const struct tm_render_ops byu12_dump_ops = {
    .fixed_len = byu12_dump_fixed_len,
    .measure = byu12_dump_measure,
    .render = byu12_dump_render,
};

/* convert/NAME.din: "LABEL ADDRESS" with 0 read (and read-invalidate), 1 write, 2 fetch. */
#define DIN_LINE_LEN 11 /* "2 0000abcd\n" */

static size_t byu12_din_fixed_len(unsigned cls)
{
	(void)cls;
	return DIN_LINE_LEN;
}

static size_t byu12_din_measure(const struct tm_chunk *c, size_t i)
{
	(void)c;
	(void)i;
	return DIN_LINE_LEN;
}

static size_t byu12_din_render(const struct tm_chunk *c, size_t i, char *out)
{
	const struct byu12_record *r = (const struct byu12_record *)tm_chunk_rec(c, i);
	uint64_t bit = CLASS_BIT(r->head.cls);
	out[0] = bit & B12_FETCHES ? '2' : bit & B12_READS ? '0' : '1';
	out[1] = ' ';
	tm_put_hex32(out + 2, r->addr);
	out[10] = '\n';
	return DIN_LINE_LEN;
}

static const struct tm_render_ops byu12_din_ops = {
    .fixed_len = byu12_din_fixed_len,
    .measure = byu12_din_measure,
    .render = byu12_din_render,
};

static const struct tm_view_desc byu12_extra_views[] = {
    {.path = "convert/%s.din", .class_mask = B12_MEMORY, .ops = &byu12_din_ops},
};

/* Statistics: counts by processor and time over every record; addresses, bytes and the
 * footprint over memory references (fetches, reads, read-invalidates, writes). */
struct byu12_stats {
	uint64_t procs[B12_PROCS];
	uint64_t din[3]; /* fetches, reads, writes */
	uint64_t requested, time_decreases, records;
	uint32_t addr_min, addr_max, time_min, time_max, last_time;
	uint64_t last_line;	   /* the most recent line, to skip repeated inserts */
	struct tm_footprint lines; /* 64-byte lines; its 64-bit words are 4 KiB pages */
};

static int byu12_stats_init(void *p)
{
	struct byu12_stats *s = p;
	s->addr_min = UINT32_MAX;
	s->time_min = UINT32_MAX;
	s->last_line = UINT64_MAX;
	tm_footprint_init(&s->lines);
	return 0;
}

static void byu12_stats_update(void *p, const struct tm_chunk *c)
{
	struct byu12_stats *s = p;
	for (size_t i = 0; i < c->n_records; i++) {
		const struct byu12_record *r = (const struct byu12_record *)tm_chunk_rec(c, i);
		uint64_t bit = CLASS_BIT(r->head.cls);
		s->procs[r->proc]++;
		if (s->records && r->time < s->last_time)
			s->time_decreases++;
		s->last_time = r->time;
		s->records++;
		if (r->time < s->time_min)
			s->time_min = r->time;
		if (r->time > s->time_max)
			s->time_max = r->time;
		if (!(B12_MEMORY & bit))
			continue;
		s->din[bit & B12_FETCHES ? 0 : bit & B12_READS ? 1 : 2]++;
		s->requested += r->size;
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

static json_object *hex_string(uint32_t v)
{
	char buf[sizeof("0x12345678")];
	snprintf(buf, sizeof(buf), "0x%08" PRIx32, v);
	return json_object_new_string(buf);
}

static int byu12_stats_finish(void *p, json_object *obj, struct tm_diag *diag)
{
	struct byu12_stats *s = p;
	uint64_t mem_refs = s->din[0] + s->din[1] + s->din[2];
	json_object *procs = json_object_new_object();
	int err = 0;
	for (unsigned k = 0; k < B12_PROCS; k++) {
		char key[4];
		snprintf(key, sizeof(key), "%u", k);
		if (s->procs[k])
			tm_json_add_int(procs, key, s->procs[k], &err);
	}
	tm_json_add_int(obj, "memory_references", mem_refs, &err);
	tm_json_add(obj, "processors", procs, &err);
	tm_json_add_or_null(obj, "address_min", mem_refs, hex_string(s->addr_min), &err);
	tm_json_add_or_null(obj, "address_max", mem_refs, hex_string(s->addr_max), &err);
	tm_json_add_or_null(obj, "time_min", s->records, json_object_new_int64(s->time_min), &err);
	tm_json_add_or_null(obj, "time_max", s->records, json_object_new_int64(s->time_max), &err);
	tm_json_add_int(obj, "time_decreases", s->time_decreases, &err);
	tm_json_add_int(obj, "distinct_lines_64b", tm_footprint_count(&s->lines), &err);
	tm_json_add_int(obj, "distinct_pages_4k", tm_footprint_count_groups64(&s->lines), &err);
	tm_json_add_int(obj, "bytes_requested", s->requested, &err);
	tm_json_add(obj, "din", tm_din_stats(s->din[0], s->din[1], s->din[2]), &err);
	if (s->lines.err)
		tm_diag_note(diag,
			     "out of memory counting distinct lines: counts are lower bounds");
	return err;
}

static void byu12_stats_free(void *p)
{
	struct byu12_stats *s = p;
	tm_footprint_free(&s->lines);
}

/* A file named as a 6-byte BYU trace that detection read as 12-byte records. */
static void byu12_name_finish(const char *name, struct tm_diag *diag)
{
	static const char *const byu6[] = {"byu", NULL};
	if (tm_name_has_extension(name, byu6))
		tm_diag_note(diag, "named .byu, but its records are 12-byte BYU (p2AddrTr): "
				   "decoded as byu12");
}

static unsigned byu12_accesses(const struct tm_chunk *c, size_t i, struct tm_access *out)
{
	const struct byu12_record *r = (const struct byu12_record *)tm_chunk_rec(c, i);
	uint64_t bit = CLASS_BIT(r->head.cls);
	if (!(B12_MEMORY & bit))
		return 0;
	out[0] = (struct tm_access){
	    .addr = r->addr,
	    .kind = bit & B12_FETCHES ? TM_ACCESS_FETCH
		    : bit & B12_READS ? TM_ACCESS_READ
				      : TM_ACCESS_WRITE,
	};
	return 1;
}

const struct tm_format tm_format_byu12 = {
    .name = "byu12",
    .description = "BYU 12-byte address trace (p2AddrTr), little-endian",
    .recognition = "extension .byu12; .tr or .byu whose head is plausible 12-byte records and "
		   "nearly all INVALID 6-byte ones",
    .extensions = byu12_extensions,
    .classes = byu12_classes,
    .n_classes = B12_N_CLASSES,
    .class_ext = "byu12",
    .group_view = "cpu/%u.txt",
    .group_ops = &byu12_dump_ops,
    .record_size = sizeof(struct byu12_record),
    .chunk_records = 8192,
    .raw_record_len = BYU12_RECORD_LEN,
    .name_bid = byu12_name_bid,
    .content_bid = byu12_content_bid,
    .content_bid_max = 96,
    .decode = byu12_decode,
    .dump = &byu12_dump_ops,
    .stats_size = sizeof(struct byu12_stats),
    .stats_init = byu12_stats_init,
    .stats_update = byu12_stats_update,
    .stats_finish = byu12_stats_finish,
    .stats_free = byu12_stats_free,
    .name_finish = byu12_name_finish,
    .extra_views = byu12_extra_views,
    .n_extra_views = ARRAY_SIZE(byu12_extra_views),
    .accesses = byu12_accesses,
};
