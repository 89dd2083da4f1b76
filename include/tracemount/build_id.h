/* The identity of this build: what an index file records of the code that wrote it.
 *
 * Index files keep rendered bytes (stats.json, errors.txt, table views) and the offsets of
 * every view's chunks, so one written by other code may disagree with what this build renders.
 * The identity changes whenever any source file changes (scripts/build-id hashes them all at
 * build time) or the libraries whose output reaches a view (Capstone's disassembly, json-c's
 * number printing) are another version, so no stale file is ever trusted. */
#ifndef TRACEMOUNT_BUILD_ID_H
#define TRACEMOUNT_BUILD_ID_H

#include <stddef.h>

/* "VERSION+src.HASH": the version and a hash of the sources, written by scripts/build-id. */
extern const char tm_build_id[];

/* tm_build_id and the versions of the libraries in use at run time, as one line such as
 * "0.1.0+src.0123456789abcdef capstone-4.0 json-c-0.16": what index files are keyed by. */
const char *tm_build_key(void);
/* Room for a build key, its NUL included: its field in an index file's header (a key uses
 * about 60). */
#define TM_BUILD_KEY_LEN 128

/* The versions of the libraries the core runs with, "zlib 1.2.13, json-c 0.16, Capstone
 * 4.0", in buf. */
void tm_library_versions(char *buf, size_t len);

#endif
