/* What the fuzz targets do with a trace: read every view as the mount does, and check what
 * the reads promise. */
#ifndef TM_FUZZ_READ_VIEWS_H
#define TM_FUZZ_READ_VIEWS_H

#include <stddef.h>
#include <stdint.h>

struct tm_format;
struct tm_open_trace;

/* The format an input names: its first bytes, up to a NUL, are a format's name ("byu\0..."),
 * so that a corpus file keeps its format whatever the registry's order. Sets *used to the
 * bytes of the name and its NUL. NULL: the input names no format. */
const struct tm_format *fuzz_format_of(const uint8_t *data, size_t size, size_t *used);

/* Reads every view of the open trace ot that exists whole, in reads of step bytes, through one
 * buffer (a gzip input may decompress to far more than memory should hold). strict: every read must
 * succeed, the reads must add up to the view's size, and the bytes at the middle, read first, must
 * come again in order; else (an index from a damaged file may promise what the trace does not give)
 * a failed read ends the view, and only reads past the view's size are wrong. A broken promise
 * aborts, so the fuzzer reports it. */
void fuzz_read_views(const struct tm_open_trace *ot, size_t step, int strict);

#endif
