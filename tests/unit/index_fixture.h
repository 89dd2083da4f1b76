/* Shared by the index-file tests (test_index_file.c: the file; test_index_store.c: the cache
 * folder): a private folder, a BYU trace indexed in it, and a damaged file. */
#ifndef TM_TEST_INDEX_FIXTURE_H
#define TM_TEST_INDEX_FIXTURE_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/index.h"
#include "tracemount/index_file.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"
#include "tracemount/view.h"

extern char ix_dir[];		/* the private folder, made by ix_run */
extern char ix_trace_path[256]; /* the trace of the last ix_setup */
extern char ix_cache[256];	/* its cache folder */

struct ix_fixture {
	const struct tm_format *fmt;
	struct tm_view_table views;
	struct tm_source src;
	struct tm_trace_key key;
	struct tm_index *ix;
	struct tm_index_store store;
};

/* A BYU trace of n records in ix_trace_path, gzip-compressed when gz, indexed, and the cache
 * folder ix_cache opened. */
void ix_setup(struct ix_fixture *f, size_t n, int gz);
void ix_teardown(struct ix_fixture *f);

/* The path of f's index file in ix_cache. */
void ix_file_path(const struct ix_fixture *f, char *buf, size_t len);

/* XORs the byte at off of path with xor_mask; flips a bit near the file's end. */
void ix_patch(const char *path, long off, uint8_t xor_mask);
void ix_flip_body(const char *path);

/* Makes the index file at path one of another build of tracemount, its checksums made
 * valid again. */
void ix_another_build(const char *path);

/* Runs the tests in a suite called name, in a private folder ix_dir removed after. Returns
 * main's exit status. */
int ix_run(const char *name, const TTest *const *tests, size_t n);

#endif
