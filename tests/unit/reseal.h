/* Index files with valid checksums over changed contents: tests and the fuzz target change
 * fields behind the checksums to reach the checks that follow them. */
#ifndef TM_TEST_RESEAL_H
#define TM_TEST_RESEAL_H

#include <stddef.h>
#include <stdint.h>

/* Recomputes the body and header checksums of the index file file[0..len), as written by
 * tm_index_file_store: the header's size is the u32 at offset 12, it ends with the body's
 * CRC-32 and its own (computed with itself zeroed), and the body follows it. Does nothing
 * when len is shorter than the header says. */
void index_file_reseal(uint8_t *file, size_t len);

/* The same on the file at path. Returns 0 or -1. */
int index_file_reseal_path(const char *path);

#endif
