/* The tests' one model of BYU, written from the spec (specs/001_56d74c835ee11964.txt) and
 * doc/views.md, never from src/formats/byu.c: the op table, the reference decoder's dump line,
 * the expected bytes of every view of a BYU trace, errors.txt and stats.json. The unit tests
 * link it (byu_ref.c); the integration tests run it as tests/tools/byu_model. It calls no
 * product code: the two helpers at the end, which use the product's table, live in
 * byu_fixture.c. */
#ifndef TM_TEST_BYU_REF_H
#define TM_TEST_BYU_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemount/format.h"

extern const struct tm_format tm_format_byu;

#define BYU_REF_LEN 6

/* The spec's op[16], indexed by control >> 4. */
extern const char *const byu_ref_op[16];

/* What the decoder writes per record. byu.c keeps the struct private; test_byu checks that
 * this copy has the format's record_size and agrees with the dump line. */
struct byu_ref_decoded {
	struct tm_record head;
	uint32_t addr;
	uint8_t be;
	uint8_t control;
};

void byu_ref_put(uint8_t *out, uint32_t addr, uint8_t be, uint8_t control);
uint32_t byu_ref_addr(const uint8_t *rec);

/* The class name (lower-case op name) of a control byte, written to buf (>= 16 bytes). */
const char *byu_ref_class_name(uint8_t control, char *buf);
/* The classes in doc/views.md's order (the op table's names, first appearance), lower case. */
#define BYU_REF_N_CLASSES 11
const char *byu_ref_class(unsigned i);
/* Dinero label: 2 instruction fetch, 0 data read, 1 data write (write-backs are writes); -1
 * for bus cycles that are not memory references. */
int byu_ref_din_label(uint8_t control);

/* "%08x %02x %s\n" of the spec's decoder; returns the length. */
size_t byu_ref_dump_line(const uint8_t *rec, char *out);

/* The views of a trace named name ("prog.v2.byu": convert/prog.v2.din), as the mount lists
 * them; *n set to their count. The caller frees the array and its strings. */
char **byu_ref_view_paths(const char *name, size_t *n);

enum byu_ref_kind { BYU_REF_RAW, BYU_REF_DUMP, BYU_REF_CLASS_TXT, BYU_REF_CLASS_BIN, BYU_REF_DIN };

/* A record view of the BYU view table, understood from its path alone. */
struct byu_ref_view {
	enum byu_ref_kind kind;
	unsigned nibbles; /* BYU_REF_CLASS_*: bit n set when control >> 4 == n belongs */
};

/* Returns 0, or -1 for a path that is not a BYU record view or raw. */
int byu_ref_view_parse(const char *path, struct byu_ref_view *v);
/* Bytes record rec contributes to view v; written to out unless out is NULL. */
size_t byu_ref_view_render(const struct byu_ref_view *v, const uint8_t *rec, char *out);
/* The expected content of view path (a record view, raw or errors.txt) over a whole trace
 * (trailing partial bytes are no record). Aborts on an unknown path. The caller frees. */
char *byu_ref_view(const char *path, const uint8_t *data, size_t len, size_t *out_len);

/* Whether a trace of that many records is flagged as probably not a 6-byte BYU trace. */
int byu_ref_flagged(uint64_t records, uint64_t invalid);

/* stats.json of a trace (doc/views.md), by record. */
struct byu_ref_stats {
	uint64_t bytes, records, errors;
	int truncated;
	uint64_t classes[BYU_REF_N_CLASSES]; /* by byu_ref_class order */
	uint64_t memory_references, byte_enables[256];
	int have_addresses;
	uint32_t address_min, address_max;
	uint64_t distinct_lines_64b, distinct_pages_4k, bytes_requested;
	uint64_t din_fetches, din_reads, din_writes;
	double invalid_fraction;
	int probably_not_byu;
	/* stats.json's "plots" (doc/plots.md): the slices of the trace the plots show, and the
	 * distinct pages of the fetches (code) and of the reads and writes (data) */
	uint64_t plot_slices, plot_slice_records, code_pages_4k, data_pages_4k;
};

void byu_ref_stats(const uint8_t *data, size_t len, struct byu_ref_stats *s);
/* The expected stats.json of a trace whose file is named source (a plain name: no escapes). */
void byu_ref_stats_json(const struct byu_ref_stats *s, const char *source, FILE *out);

uint64_t byu_ref_rand(uint64_t *state);
/* n pseudo-random records, then `trailing` stray bytes. INT_ACK records appear only where
 * i % rare_mod == 7 (never when rare_mod is 0), so class/int_ack views have empty chunks. */
uint8_t *byu_ref_gen(size_t n, size_t trailing, uint64_t seed, size_t rare_mod);

/* BYU with decoder state: the state counts records from BYU_REF_COUNT_BASE, and each record's
 * address is replaced by that count, so a chunk decoded from a wrong checkpoint shows wrong
 * addresses. Its dump line for record i is the spec's line with address BASE + i. */
#define BYU_REF_COUNT_BASE 1000u

/* byu_fixture.c: the product's side. Index of the control byte's class name in
 * tm_format_byu.classes, or -1; and the counting format, which wraps the product's decoder. */
int byu_ref_class_index(uint8_t control);
const struct tm_format *byu_ref_counting(void);

#endif
