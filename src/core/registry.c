/* The one list of formats. Adding a format: one file in src/formats/, one line here. */
#include <string.h>

#include "tracemount/registry.h"

extern const struct tm_format tm_format_byu;
extern const struct tm_format tm_format_tt6;
extern const struct tm_format tm_format_tt6e;

const struct tm_format *const tm_formats[] = {
    &tm_format_byu,
    &tm_format_tt6,
    &tm_format_tt6e,
    NULL,
};

const struct tm_format *tm_format_find(const char *name)
{
	for (const struct tm_format *const *f = tm_formats; *f; f++)
		if (strcmp((*f)->name, name) == 0)
			return *f;
	return NULL;
}

const struct tm_format *tm_format_detect(const char *name, const uint8_t *head, size_t head_len)
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
