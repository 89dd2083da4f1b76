/* The compression formats tracemount reads, in one table, and how a file's is told. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemount/registry.h"

#include "tracemount/compress.h"

const struct tm_codec *const tm_codecs[] = {&tm_codec_gzip, &tm_codec_xz, &tm_codec_zstd, NULL};

const struct tm_codec *tm_codec_detect(const char *name, const uint8_t *head, size_t head_len)
{
	for (const struct tm_codec *const *c = tm_codecs; *c; c++)
		if ((*c)->detect(name, head, head_len))
			return *c;
	return NULL;
}

const struct tm_codec *tm_codec_by_id(unsigned id)
{
	for (const struct tm_codec *const *c = tm_codecs; *c; c++)
		if ((*c)->id == id)
			return *c;
	return NULL;
}

size_t tm_codec_suffix_len(const char *name)
{
	size_t n = strlen(name);
	for (const struct tm_codec *const *c = tm_codecs; *c; c++) {
		size_t s = strlen((*c)->suffix);
		if (n > s && strcmp(name + n - s, (*c)->suffix) == 0)
			return s;
	}
	return 0;
}

const char *tm_codec_strip(const char *name, char stem[NAME_MAX + 1])
{
	size_t n = strlen(name), s = tm_codec_suffix_len(name);
	if (!s || n > NAME_MAX)
		return name;
	memcpy(stem, name, n - s);
	stem[n - s] = '\0';
	return stem;
}

size_t tm_codec_probe_max(void)
{
	size_t max = 0;
	for (const struct tm_codec *const *c = tm_codecs; *c; c++)
		if ((*c)->probe_len > max)
			max = (*c)->probe_len;
	return max;
}

size_t tm_codec_probe_len(const char *name, const uint8_t *head, size_t head_len)
{
	const struct tm_codec *c = tm_codec_detect(name, head, head_len);
	return c && c->probe_len > head_len ? c->probe_len : head_len;
}

size_t tm_codec_head(const char *name, const uint8_t *head, size_t head_len, uint8_t *out,
		     size_t cap)
{
	const struct tm_codec *c = tm_codec_detect(name, head, head_len);
	if (c)
		return c->decompress_head(head, head_len, out, cap);
	size_t n = head_len < cap ? head_len : cap;
	memcpy(out, head, n);
	return n;
}

ssize_t tm_probe_head(int fd, const char *name, uint8_t **head)
{
	size_t cap = TM_PROBE_HEAD_LEN;
	uint8_t *buf = malloc(cap);
	ssize_t n = buf ? pread(fd, buf, cap, 0) : -1;
	if (n < 0) {
		free(buf);
		return buf ? -errno : -ENOMEM;
	}
	size_t want = tm_codec_probe_len(name, buf, (size_t)n);
	if (want > (size_t)n && (size_t)n == cap) {
		uint8_t *more = realloc(buf, want);
		if (!more) {
			free(buf);
			return -ENOMEM;
		}
		buf = more;
		ssize_t m = pread(fd, buf + n, want - (size_t)n, n);
		if (m > 0)
			n += m;
	}
	*head = buf;
	return n;
}
