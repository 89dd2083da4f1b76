/* The tests' one model of BYU 12-byte ("p2AddrTr") traces, written from the format's facts
 * (byutr.h: little-endian {u32 address; u8 reqtype; u8 size; u8 attr; u8 proc; u32 time}, the
 * request codes) and doc/views.md, never from src/formats/byu12.c: the request table, the
 * dump line, the expected bytes of every view, errors.txt and stats.json. The unit test links
 * it (byu12_ref.c); the integration test runs it as tests/tools/byu12_model. It calls no
 * product code. */
#ifndef TM_TEST_BYU12_REF_H
#define TM_TEST_BYU12_REF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BYU12_REF_LEN 12

/* One record's fields. */
struct byu12_ref_rec {
	uint32_t addr, time;
	uint8_t reqtype, size, attr, proc;
};

void byu12_ref_put(uint8_t *out, const struct byu12_ref_rec *r);
void byu12_ref_get(const uint8_t *p, struct byu12_ref_rec *r);

/* The classes in doc/views.md's order: invalid, then the request types by code. */
#define BYU12_REF_N_CLASSES 18
const char *byu12_ref_class(unsigned i);
/* The class of a request type (0: invalid), and the request codes of the 17 known ones. */
unsigned byu12_ref_class_of(uint8_t reqtype);
extern const uint8_t byu12_ref_known[17];
/* The dump line's name: the class name in upper case, written to buf (>= 24 bytes). */
const char *byu12_ref_op(uint8_t reqtype, char *buf);
/* Dinero label: 2 fetch, 0 read and read-invalidate, 1 write; -1 for the others. */
int byu12_ref_din_label(uint8_t reqtype);

/* "%08x %02x %02x %02x %02x %08x %s\n": address, reqtype, size, attr, proc, time, name. */
size_t byu12_ref_dump_line(const uint8_t *rec, char *out);

/* The views of a trace named name with content data, as the mount lists them (cpu/N.txt,
 * the dump lines of processor N, for each N below 64 with records); *n set to their count.
 * The caller frees. */
char **byu12_ref_view_paths(const char *name, const uint8_t *data, size_t len, size_t *n);

/* The expected content of view path (a record view, raw or errors.txt) of the trace named
 * name. Aborts on an unknown path. The caller frees. */
char *byu12_ref_view(const char *path, const char *name, const uint8_t *data, size_t len,
		     size_t *out_len);
/* Bytes record rec contributes to view path (not raw, stats.json or errors.txt); written to
 * out unless out is NULL. -1 for an unknown path. */
long byu12_ref_view_render(const char *path, const uint8_t *rec, char *out);

struct byu12_ref_stats {
	uint64_t bytes, records, errors;
	int truncated;
	uint64_t classes[BYU12_REF_N_CLASSES];
	uint64_t memory_references, processors[256];
	int have_addresses;
	uint32_t address_min, address_max, time_min, time_max;
	uint64_t time_decreases, distinct_lines_64b, distinct_pages_4k, bytes_requested;
	uint64_t din_fetches, din_reads, din_writes;
	uint64_t plot_slices, plot_slice_records, code_pages_4k, data_pages_4k;
};

/* Statistics of a trace named name (the name counts for errors: the .byu note). */
void byu12_ref_stats(const char *name, const uint8_t *data, size_t len, struct byu12_ref_stats *s);
/* stats.json of a trace whose file is named source (a plain name: no escapes). */
void byu12_ref_stats_json(const struct byu12_ref_stats *s, const char *source, FILE *out);

/* Whether a head of a file named name is plausible 12-byte BYU and nearly all INVALID as
 * 6-byte BYU (doc/formats.md): the content detection's rule. */
int byu12_ref_plausible(const char *name, const uint8_t *head, size_t len);

#endif
