/* What the unit tests of the formats share: reading files and real traces, and reading views
 * of a trace through the core in process, as the mount does. */
#ifndef TM_TEST_VIEW_CHECK_H
#define TM_TEST_VIEW_CHECK_H

#include <stddef.h>

#include "mem_source.h"
#include "tracemount/context.h"
#include "tracemount/format.h"
#include "tracemount/trace.h"

/* The whole of a file, NUL-terminated. */
char *read_file(const char *path, size_t *len);

/* A trace of ../shared/realtraces (TM_REALTRACES), "cis501/gcc-1K.trace"; a .gz is
 * decompressed. NULL, with a SKIP line on stdout, where the file is absent: the caller skips
 * what needs it. */
char *read_realtrace(const char *relpath, size_t *len);

struct mounted {
	struct tm_context *ctx;
	struct tm_trace *t; /* a reference */
	struct mem_source src;
	struct tm_open_trace ot; /* of t and src */
};

/* A trace named name of format f holding data[0, len). */
void mount_trace(struct mounted *m, const char *name, const struct tm_format *f, const void *data,
		 size_t len);
void unmount_trace(struct mounted *m);

/* The whole of view path, NUL-terminated, read in 1 MiB requests. */
char *read_view(struct mounted *m, const char *path, size_t *len);

/* Fails, showing where two texts first differ, unless they are equal. */
void expect_same_text(const char *what, const char *want, size_t want_len, const char *got,
		      size_t got_len);

/* The tests' Python model of a format (TM_MODELS/MODEL, tests/integration/FORMAT_expect.py, run
 * with TM_PYTHON): `MODEL expect TRACE OUT STEM ARGS...` on data saved as a trace named name
 * (STEM: name less its extension). Returns a temporary folder holding OUT; the unit tests
 * compare the product's views with the files the model writes there, as the integration
 * tests do. */
char *model_expect(const char *model, const char *name, const void *data, size_t len,
		   const char *args);
/* `MODEL CMD FILE` on data saved as a file named name: its standard output, NUL-terminated
 * (the model must succeed). */
char *model_run(const char *model, const char *cmd, const char *name, const void *data, size_t len);
/* OUT/rel, the whole file, NUL-terminated. */
char *model_file(const char *dir, const char *rel, size_t *len);
/* Removes the folder. */
void model_free(char *dir);

#endif
