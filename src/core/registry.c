/* The one list of formats. Adding a format: one file in src/formats/, one line here. */
#include <limits.h>
#include <string.h>

#include "tracemount/gzip.h"
#include "tracemount/registry.h"

extern const struct tm_format tm_format_byu;
extern const struct tm_format tm_format_tt6;
extern const struct tm_format tm_format_tt6e;
extern const struct tm_format tm_format_cis501;
extern const struct tm_format tm_format_tarmac;
extern const struct tm_format tm_format_qemu4v;
extern const struct tm_format tm_format_full;
extern const struct tm_format tm_format_spixcounts;

const struct tm_format *const tm_formats[] = {
    &tm_format_byu,    /* BYU Pentium bus traces, 6-byte records */
    &tm_format_tt6,    /* PowerPC TT6 (Amber) */
    &tm_format_tt6e,   /* PowerPC TT6E */
    &tm_format_cis501, /* Penn CIS501 x86 micro-op text */
    &tm_format_tarmac, /* ARM Tarmac text */
    &tm_format_qemu4v, /* QEMU4V text (Tarmac syntax) */
    /* last: the fuzz corpora pick a format by its place in this list */
    &tm_format_full,	   /* PowerPC FULL: registers per instruction */
    &tm_format_spixcounts, /* SpixTools basic-block counts */
    NULL,
};

const struct tm_format *tm_format_find(const char *name)
{
	for (const struct tm_format *const *f = tm_formats; *f; f++)
		if (strcmp((*f)->name, name) == 0)
			return *f;
	return NULL;
}

static const struct tm_format *probe_all(const char *name, const uint8_t *head, size_t head_len)
{
	const struct tm_format *best = NULL;
	int best_score = 0;
	for (const struct tm_format *const *f = tm_formats; *f; f++) {
		int score = (*f)->probe(name, head, head_len);
		if (score > best_score) {
			best = *f;
			best_score = score;
		}
	}
	return best;
}

/* A gzip trace is recognised by the name without ".gz" and its decompressed head. */
const struct tm_format *tm_format_detect(const char *name, const uint8_t *head, size_t head_len)
{
	uint8_t inflated[TM_PROBE_HEAD_LEN];
	char stem[NAME_MAX + 1];
	size_t n = strlen(name);
	if (head && tm_gz_detect(name, head, head_len)) {
		head_len = tm_gz_inflate_head(head, head_len, inflated, sizeof(inflated));
		head = inflated;
	}
	if (n > 3 && n <= NAME_MAX && strcmp(name + n - 3, ".gz") == 0) {
		memcpy(stem, name, n - 3);
		stem[n - 3] = '\0';
		name = stem;
	}
	return probe_all(name, head, head_len);
}

int tm_format_detect_needs_head(void)
{
	for (const struct tm_format *const *f = tm_formats; *f; f++)
		if ((*f)->probe_needs_head)
			return 1;
	return 0;
}

int tm_name_has_extension(const char *name, const char *const *extensions)
{
	size_t n = strlen(name);
	for (const char *const *e = extensions; e && *e; e++) {
		size_t el = strlen(*e);
		if (n > el && name[n - el - 1] == '.' && strncmp(name + n - el, *e, el) == 0)
			return 1;
	}
	return 0;
}
