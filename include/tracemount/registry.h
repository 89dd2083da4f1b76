/* The formats tracemount knows, in one ordered table, and how a file is recognised. */
#ifndef TRACEMOUNT_REGISTRY_H
#define TRACEMOUNT_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/format.h"

#define TM_PROBE_HEAD_LEN 4096

/* NULL-terminated list of every format. */
extern const struct tm_format *const tm_formats[];

const struct tm_format *tm_format_find(const char *name);

/* For a message about the unknown format name: "the formats: byu, byu12, ...; nearest: byu"
 * (the nearest only when one is near: util.h's tm_nearest), in buf. */
void tm_format_suggest(const char *name, char *buf, size_t len);

/* The format with the highest bid above 0 for a file, by the two rounds of format.h, or NULL.
 * name is the file's base name (".gz" and all); head holds its first head_len bytes as read
 * (a gzip head is decompressed here), or is NULL when the caller has not read them, which
 * leaves round 1's answer. A head given when round 1 is final is not looked at, so callers
 * that read it anyway get the answer of those that do not. */
const struct tm_format *tm_format_detect(const char *name, const uint8_t *head, size_t head_len);

/* Whether detection of a file of this base name needs the file's head: false when round 1 is
 * final, and tm_format_detect(name, NULL, 0) is the answer without any I/O. */
bool tm_format_detect_needs_head(const char *name);

/* Whether a file of this base name is a trace whatever its head says, and counts the same in a
 * folder's census of virtual traces: round 1 is final; or round 1's format bids by name only,
 * so it keeps its bid in round 2 and some format always wins, and none of the formats that may
 * outbid it makes virtual traces. The head may still decide which format: a listing shows such
 * a file as a trace's folder without reading it (`.byu`: BYU, or byu12 when its head says so). */
bool tm_format_trace_by_name(const char *name);

/* The three above over the NULL-terminated list formats instead of tm_formats (for tests). */
const struct tm_format *tm_formats_detect(const struct tm_format *const *formats, const char *name,
					  const uint8_t *head, size_t head_len);
bool tm_formats_need_head(const struct tm_format *const *formats, const char *name);
bool tm_formats_trace_by_name(const struct tm_format *const *formats, const char *name);

/* Format f's bid for a file as detection counts it, 0 to 100: by content when head is given
 * (head_len > 0) and f has a content_bid, capped at its content_bid_max; else by name. */
int tm_format_bid(const struct tm_format *f, const char *name, const uint8_t *head,
		  size_t head_len);

#endif
