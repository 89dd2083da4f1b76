/* The formats tracemount knows, in one ordered table, and how a file is recognised. */
#ifndef TRACEMOUNT_REGISTRY_H
#define TRACEMOUNT_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

#define TM_PROBE_HEAD_LEN 4096

/* NULL-terminated list of every format. */
extern const struct tm_format *const tm_formats[];

const struct tm_format *tm_format_find(const char *name);

/* The format with the highest probe score above zero for a file, or NULL. head may be NULL
 * when the caller has not read the file; formats that need content then score on the name. */
const struct tm_format *tm_format_detect(const char *name, const uint8_t *head, size_t head_len);

/* Whether any format looks at content, i.e. whether detection needs the file's head. */
int tm_format_detect_needs_head(void);

/* Whether name ends in "." plus one of extensions. */
int tm_name_has_extension(const char *name, const char *const *extensions);

#endif
