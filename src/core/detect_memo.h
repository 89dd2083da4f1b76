/* What detection found for each file whose head it read, kept by path with the file's
 * attributes, so that the many lookups of one trace (a listing, then every view's) read its
 * head once: an entry holds while the file's device, inode, size, modification and change
 * times stay the same. */
#ifndef TRACEMOUNT_CORE_DETECT_MEMO_H
#define TRACEMOUNT_CORE_DETECT_MEMO_H

#include <stdbool.h>
#include <sys/stat.h>

#include "tracemount/format.h"

struct tm_detect_memo;

/* What detection gave a file: its format (NULL: none), and, when none, what the `also` test
 * said of its head (context.h). */
struct tm_detect_result {
	const struct tm_format *fmt;
	bool (*also)(const char *name, const uint8_t *head, size_t len);
	bool matched;
};

int tm_detect_memo_new(struct tm_detect_memo **out);
void tm_detect_memo_free(struct tm_detect_memo *m);

/* Whether the memo holds path with the attributes st and the same `also` test: then *r is
 * what detection found. Thread-safe. */
bool tm_detect_memo_find(struct tm_detect_memo *m, const char *path, const struct stat *st,
			 struct tm_detect_result *r);

/* Remembers r for path with the attributes st, replacing what was there; forgets everything
 * first when the memo is full. Thread-safe; without memory, remembers nothing. */
void tm_detect_memo_store(struct tm_detect_memo *m, const char *path, const struct stat *st,
			  const struct tm_detect_result *r);

#endif
