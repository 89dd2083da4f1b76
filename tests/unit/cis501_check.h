/* What the CIS501 unit tests share: the record as cis501.h lays it out, the classes and tags,
 * decoding and rendering through the format table, and traces built and read through the
 * core. The expected views of whole traces are the CIS501 model's (cis501_expect.py, run by
 * model_expect). */
#ifndef TM_TEST_CIS501_CHECK_H
#define TM_TEST_CIS501_CHECK_H

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <zlib.h>

#include "mem_source.h"
#include "view_check.h"
#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/index.h"
#include "tracemount/reader.h"
#include "tracemount/registry.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

/* An assertion for hot loops: Check's own record every passing assertion through a pipe. */
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* The record as cis501.h lays it out (checked against record_size). */
struct rec {
	struct tm_record head;
	int32_t uop;
	uint64_t pc, addr, fallthrough, target;
	int64_t imm;
	uint64_t macro;
	int32_t src1, src2, dest;
	uint16_t macro_off, macro_len, micro_off, micro_len;
	uint16_t dump_len, pad;
};

/* doc: the families, then the tags by flag bit */
static const char *const families[] = {
    "move", "arith", "muldiv", "logic",	     "shift", "compare", "cond_branch", "jump",	 "call",
    "ret",  "stack", "string", "float_simd", "nop",   "sync",	 "system",	"other",
};

#define N_FAMILIES (sizeof(families) / sizeof(families[0]))
static const char *const tags[] = {"loads",	"stores",     "branches",   "taken",
				   "not_taken", "flags_read", "flags_write"};
#define N_TAGS (sizeof(tags) / sizeof(tags[0]))
enum {
	T_LOAD = 1,
	T_STORE = 2,
	T_BRANCH = 4,
	T_TAKEN = 8,
	T_NOT_TAKEN = 16,
	T_READ = 32,
	T_WRITE = 64
};

const struct tm_format *fmt(void);

/* A real CIS501 trace (realtraces/cis501/name); NULL where absent (see read_realtrace). */
char *realtrace(const char *name, size_t *len);

/* Decoding through the format table. */

struct decoded {
	struct rec *r; /* raw_rel made relative to the start of the trace */
	size_t n, cap;
	struct tm_diag diag;
	int last_ret;
};

void *new_state(void);

void decoded_init(struct decoded *d);

void decoded_free(struct decoded *d);

/* One decode call on buf[pos, end) with state s; appends the records. Returns bytes used. */
size_t decode_step(void *s, const uint8_t *buf, size_t pos, size_t end, bool at_eof, size_t max,
		   struct decoded *d, bool diag);

/* Decodes the whole of buf in calls of at most max records, from a new state. */
void decode_all(const void *buf, size_t len, size_t max, struct decoded *d);

struct tm_chunk chunk_of(const void *raw, size_t len, const struct decoded *d);

int same_record(const struct rec *a, const struct rec *b);

#define SLACK_MARK '\x7f'

/* Renders record i with ops; checks render() against measure() and the slack. */
char *render_one(const struct tm_render_ops *ops, const struct tm_chunk *c, size_t i, size_t *len);

const struct tm_view_desc *din_view(void);

/* The concatenated output of ops over every record of d. */
char *render_all(const struct tm_render_ops *ops, const void *raw, size_t len,
		 const struct decoded *d, size_t *out_len);

/* A growing text. */
struct text {
	char *b;
	size_t len, cap;
};

void text_add(struct text *t, const char *s, size_t n);

void text_adds(struct text *t, const char *s);

void text_addf(struct text *t, const char *fmt_, ...) __attribute__((format(printf, 2, 3)));

/* Through the core. */

struct built {
	struct mem_source src;
	struct tm_view_table views;
	struct tm_index *ix;
	json_object *root, *own;
};

void build(struct built *b, const void *data, size_t len);

void unbuild(struct built *b);

json_object *get(json_object *o, const char *key);

int64_t get_int(json_object *o, const char *key);

const char *get_str(json_object *o, const char *key);

/* The keys of an object, in order, as "k=v,k=v". */
void object_text(json_object *o, char *out, size_t len);

const char *errors_of(const struct built *b);

/* errors.txt is a sized buffer, not a C string. */
void expect_errors(const struct built *b, const char *want);

/* The table. */

#endif
