/* The one list of formats, and detection by their bids. Adding a format: one file in
 * src/formats/, one line in TM_FORMAT_LIST here, one line in meson.build. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tracemount/compress.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"

/* One line per format, in the order of the lists shown (--help, .tracemount/formats); of two
 * equal bids for a file the format listed first wins (format.h), and the order means nothing
 * else: everything else finds a format by its name (-o format=, index files, the fuzz corpora,
 * whose inputs start with it), so a new format may go anywhere. FORMAT(x) stands for the
 * table tm_format_x of src/formats/. */
#define TM_FORMAT_LIST(FORMAT)                                                                     \
	FORMAT(byu)	   /* BYU Pentium bus traces, 6-byte records */                            \
	FORMAT(byu12)	   /* BYU 12-byte "p2AddrTr" traces */                                     \
	FORMAT(tt6)	   /* PowerPC TT6 (Amber) */                                               \
	FORMAT(tt6e)	   /* PowerPC TT6E */                                                      \
	FORMAT(cis501)	   /* Penn CIS501 x86 micro-op text */                                     \
	FORMAT(tarmac)	   /* ARM Tarmac text */                                                   \
	FORMAT(qemu4v)	   /* QEMU4V text (Tarmac syntax) */                                       \
	FORMAT(full)	   /* PowerPC FULL: registers per instruction */                           \
	FORMAT(spixcounts) /* SpixTools basic-block counts */

#define DECLARE_FORMAT(x) extern const struct tm_format tm_format_##x;
#define LIST_FORMAT(x)	  &tm_format_##x,

TM_FORMAT_LIST(DECLARE_FORMAT)

const struct tm_format *const tm_formats[] = {TM_FORMAT_LIST(LIST_FORMAT) NULL};

const struct tm_format *tm_format_find(const char *name)
{
	for (const struct tm_format *const *f = tm_formats; *f; f++)
		if (strcmp((*f)->name, name) == 0)
			return *f;
	return NULL;
}

void tm_format_suggest(const char *name, char *buf, size_t len)
{
	const char *names[64] = {NULL};
	size_t n = 0, used = (size_t)snprintf(buf, len, "the formats:");
	for (const struct tm_format *const *f = tm_formats; *f && n + 1 < ARRAY_SIZE(names); f++) {
		names[n++] = (*f)->name;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s %s", n > 1 ? "," : "",
						 (*f)->name);
	}
	const char *nearest = tm_nearest(name, names);
	if (nearest && used < len)
		snprintf(buf + used, len - used, "; nearest: %s", nearest);
}

int tm_format_bid(const struct tm_format *f, const char *name, const uint8_t *head, size_t head_len)
{
	int bid;
	if (head && head_len && f->content_bid) {
		bid = f->content_bid(name, head, head_len);
		if (bid > f->content_bid_max)
			bid = f->content_bid_max;
	} else {
		bid = f->name_bid ? f->name_bid(name) : 0;
	}
	return bid < 0 ? 0 : bid > 100 ? 100 : bid;
}

/* One round: head NULL is round 1. A content bid beats an equal name bid only by exceeding it,
 * so that round 2 keeps what round 1 found whenever round 1 alone would have been final. */
static const struct tm_format *best_bidder(const struct tm_format *const *formats, const char *name,
					   const uint8_t *head, size_t head_len, int *best_bid)
{
	const struct tm_format *best = NULL;
	bool best_by_content = false;
	*best_bid = 0;
	for (const struct tm_format *const *f = formats; *f; f++) {
		bool by_content = head && head_len && (*f)->content_bid;
		int bid = tm_format_bid(*f, name, head, head_len);
		if (bid > *best_bid ||
		    (best && bid == *best_bid && best_by_content && !by_content)) {
			best = *f;
			*best_bid = bid;
			best_by_content = by_content;
		}
	}
	return best;
}

static bool content_could_exceed(const struct tm_format *const *formats, int name_bid)
{
	for (const struct tm_format *const *f = formats; *f; f++)
		if ((*f)->content_bid && (*f)->content_bid_max > name_bid)
			return true;
	return false;
}

bool tm_formats_need_head(const struct tm_format *const *formats, const char *name)
{
	char stem[NAME_MAX + 1];
	int bid;
	best_bidder(formats, tm_codec_strip(name, stem), NULL, 0, &bid);
	return content_could_exceed(formats, bid);
}

bool tm_formats_trace_by_name(const struct tm_format *const *formats, const char *name)
{
	char stem[NAME_MAX + 1];
	int bid;
	const struct tm_format *first =
	    best_bidder(formats, tm_codec_strip(name, stem), NULL, 0, &bid);
	if (!first)
		return false;
	if (!content_could_exceed(formats, bid))
		return true; /* round 1 is final */
	if (first->content_bid || first->virtual_list)
		return false;
	for (const struct tm_format *const *f = formats; *f; f++)
		if ((*f)->content_bid && (*f)->content_bid_max > bid && (*f)->virtual_list)
			return false;
	return true;
}

const struct tm_format *tm_formats_detect(const struct tm_format *const *formats, const char *name,
					  const uint8_t *head, size_t head_len)
{
	uint8_t decompressed[TM_PROBE_HEAD_LEN];
	char stem[NAME_MAX + 1];
	const char *stem_name = tm_codec_strip(name, stem);
	int bid;
	const struct tm_format *by_name = best_bidder(formats, stem_name, NULL, 0, &bid);
	if (!head || !head_len || !content_could_exceed(formats, bid))
		return by_name;
	/* a compressed trace is recognised by its decompressed head */
	head_len = tm_codec_head(name, head, head_len, decompressed, sizeof(decompressed));
	head = decompressed;
	if (!head_len)
		return by_name;
	return best_bidder(formats, stem_name, head, head_len, &bid);
}

bool tm_format_detect_needs_head(const char *name)
{
	return tm_formats_need_head(tm_formats, name);
}

bool tm_format_trace_by_name(const char *name)
{
	return tm_formats_trace_by_name(tm_formats, name);
}

const struct tm_format *tm_format_detect(const char *name, const uint8_t *head, size_t head_len)
{
	return tm_formats_detect(tm_formats, name, head, head_len);
}
