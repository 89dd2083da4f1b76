/* An archive's cache file: its member table and access points kept beside the traces' index
 * files, named after the archive's content key, written by tm_index_store_write and checked in
 * every field when read back: one that does not check out is rebuilt, never trusted. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>

#include <zlib.h>

#include "archive_table.h"
#include "tracemount/build_id.h"
#include "tracemount/compress.h"
#include "tracemount/index_file.h"
#include "tracemount/source.h"
#include "tracemount/util.h"

#define MAGIC	"TMARCHV\n"
#define VERSION 2

/* Written as it is, then its body: entries, strings, runs, errors, points, windows, the
 * pieces' CRC-32s. */
struct arc_header {
	char magic[8];
	uint32_t version, header_size;
	uint64_t byte_order; /* 0x0102030405060708 */
	char build[TM_BUILD_KEY_LEN];
	struct tm_trace_key key;
	uint64_t n_entries, strings_len, n_runs, errors_len;
	uint32_t codec, pad;
	uint64_t n_points, windows_len, in_size, out_size, n_piece_crcs;
	uint64_t body_len;
	uint32_t body_crc, header_crc;
};

static uint32_t crc_of(const void *p, size_t n)
{
	return (uint32_t)crc32_z(crc32_z(0, NULL, 0), p, n);
}

static void file_name(const struct tm_trace_key *key, char *buf, size_t len)
{
	uint64_t h = tm_fnv1a(TM_FNV_START, "tar archive", 12);
	h = tm_fnv1a(h, key, sizeof(*key));
	snprintf(buf, len, "%016" PRIx64 ".tma", h);
}

static size_t points_len(const struct tm_zindex *z)
{
	return z ? (size_t)(z->n_points + 1) * sizeof(*z->points) : 0;
}

static int write_file(const struct tm_index_store *s, const struct tm_trace_key *key,
		      const struct tm_arc_table *t)
{
	struct arc_header h = {
	    .magic = MAGIC,
	    .version = VERSION,
	    .header_size = sizeof(h),
	    .byte_order = 0x0102030405060708ull,
	    .key = *key,
	    .n_entries = t->n_entries,
	    .strings_len = t->strings_len,
	    .n_runs = t->n_runs,
	    .errors_len = t->errors_len,
	};
	snprintf(h.build, sizeof(h.build), "%s", tm_build_key());
	if (t->z) {
		h.codec = t->z->codec->id;
		h.n_points = t->z->n_points;
		h.windows_len = t->z->windows_len;
		h.in_size = t->z->in_size;
		h.out_size = t->z->out_size;
		h.n_piece_crcs = t->z->n_piece_crcs;
	}
	struct iovec parts[] = {
	    {&h, sizeof(h)},
	    {t->entries, t->n_entries * sizeof(*t->entries)},
	    {t->strings, t->strings_len},
	    {t->runs, t->n_runs * sizeof(*t->runs)},
	    {t->errors, t->errors_len},
	    {t->z ? t->z->points : NULL, points_len(t->z)},
	    {t->z ? t->z->windows : NULL, t->z ? t->z->windows_len : 0},
	    {t->z ? t->z->piece_crcs : NULL, t->z ? t->z->n_piece_crcs * sizeof(uint32_t) : 0},
	};
	uLong sum = crc32_z(0, NULL, 0);
	for (size_t i = 1; i < ARRAY_SIZE(parts); i++) {
		if (parts[i].iov_len)
			sum = crc32_z(sum, parts[i].iov_base, parts[i].iov_len);
		h.body_len += parts[i].iov_len;
	}
	h.body_crc = (uint32_t)sum;
	h.header_crc = crc_of(&h, sizeof(h));
	char name[32];
	file_name(key, name, sizeof(name));
	return tm_index_store_write(s, name, parts, ARRAY_SIZE(parts));
}

/* Takes n bytes from *p into a new allocation (at least one byte, so none is NULL). */
static void *take(const uint8_t **p, uint64_t n)
{
	void *out = malloc(n ? (size_t)n : 1);
	if (out) {
		memcpy(out, *p, (size_t)n);
		*p += n;
	}
	return out;
}

/* The table in data[0..len), for key and a file of file_size bytes: 0, -ESTALE (another build
 * wrote it), -EBADMSG (refused: why in *bad), or -ENOMEM. */
static int parse(const uint8_t *data, size_t len, const struct tm_trace_key *key,
		 uint64_t file_size, struct tm_arc_table *t, const char **bad)
{
	struct arc_header h;
	*bad = NULL;
	memset(t, 0, sizeof(*t));
	if (len < sizeof(h))
		return *bad = "truncated or overlong", -EBADMSG;
	memcpy(&h, data, sizeof(h));
	uint32_t header_crc = h.header_crc;
	h.header_crc = 0;
	if (memcmp(h.magic, MAGIC, 8) != 0 || h.byte_order != 0x0102030405060708ull ||
	    h.header_size != sizeof(h) || crc_of(&h, sizeof(h)) != header_crc)
		return *bad = "not an archive file of this machine's", -EBADMSG;
	if (h.version != VERSION || strncmp(h.build, tm_build_key(), sizeof(h.build)) != 0)
		return *bad = "out of date", -ESTALE;
	if (memcmp(&h.key, key, sizeof(*key)) != 0)
		return *bad = "another archive's", -EBADMSG;
	/* the sizes, before any is multiplied */
	if (h.n_entries > UINT32_MAX || h.n_runs > UINT32_MAX || h.n_points > (1ull << 40) ||
	    h.strings_len > len || h.errors_len > len || h.windows_len > len ||
	    h.n_piece_crcs > len || (h.codec && !tm_codec_by_id(h.codec)))
		return *bad = "sizes out of range", -EBADMSG;
	struct tm_zindex z0 = {.n_points = h.n_points};
	uint64_t body = h.n_entries * sizeof(*t->entries) + h.strings_len +
			h.n_runs * sizeof(*t->runs) + h.errors_len +
			(h.codec ? points_len(&z0) + h.windows_len + h.n_piece_crcs * 4 : 0);
	if (body != h.body_len || len - sizeof(h) != body)
		return *bad = "truncated or overlong", -EBADMSG;
	const uint8_t *p = data + sizeof(h);
	if (crc_of(p, body) != h.body_crc)
		return *bad = "body checksum mismatch", -EBADMSG;
	t->n_entries = (uint32_t)h.n_entries;
	t->strings_len = h.strings_len;
	t->n_runs = (uint32_t)h.n_runs;
	t->errors_len = h.errors_len;
	if (!(t->entries = take(&p, h.n_entries * sizeof(*t->entries))) ||
	    !(t->strings = take(&p, h.strings_len)) ||
	    !(t->runs = take(&p, h.n_runs * sizeof(*t->runs))) ||
	    !(t->errors = malloc(h.errors_len + 1)))
		goto no_memory;
	memcpy(t->errors, p, h.errors_len); /* a text: NUL-terminated */
	t->errors[h.errors_len] = '\0';
	p += h.errors_len;
	if (h.codec) {
		struct tm_zindex *z = calloc(1, sizeof(*z));
		if (!z)
			goto no_memory;
		t->z = z;
		z->codec = tm_codec_by_id(h.codec);
		z->n_points = h.n_points;
		z->windows_len = h.windows_len;
		z->in_size = h.in_size;
		z->out_size = h.out_size;
		z->n_piece_crcs = h.n_piece_crcs;
		if (!(z->points = take(&p, points_len(z))) ||
		    !(z->windows = take(&p, h.windows_len)) ||
		    !(z->piece_crcs = take(&p, h.n_piece_crcs * sizeof(uint32_t))))
			goto no_memory;
	}
	if ((*bad = tm_arc_table_check(t, file_size))) {
		tm_arc_table_free(t);
		return -EBADMSG;
	}
	if (t->z && tm_zindex_pieces(t->z) < 0)
		goto no_memory;
	return 0;
no_memory:
	tm_arc_table_free(t);
	return -ENOMEM;
}

int tm_arc_table_obtain(struct tm_source *file, const char *path,
			const struct tm_index_store *store, tm_log_fn *log, struct tm_arc_table *t)
{
	struct tm_trace_key key;
	char name[32];
	bool keyed = store && tm_trace_key_of(file, &key) == 0;
	if (keyed) {
		uint8_t *data;
		size_t len;
		const char *bad = NULL;
		file_name(&key, name, sizeof(name));
		int err = tm_index_store_read(store, name, 0, &data, &len, &bad);
		if (!err) {
			err = parse(data, len, &key, file->size, t, &bad);
			free(data);
		}
		if (!err)
			return 0;
		if (err == -EBADMSG)
			tm_log(log, LOG_WARNING, "%s: archive file refused (%s): reading it again",
			       path, bad);
		else if (err == -ESTALE)
			tm_log(log, LOG_NOTICE, "%s: archive file out of date: reading it again",
			       path);
	}
	struct timespec start, end;
	clock_gettime(CLOCK_MONOTONIC, &start);
	tm_log(log, LOG_INFO, "%s: reading the archive's members", path);
	int err = tm_arc_table_build(file, tm_base_name(path), t);
	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &end);
	tm_log(log, LOG_INFO, "%s: %" PRIu32 " entries read in %.1f s", path, t->n_entries,
	       (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9);
	struct tm_trace_key after;
	if (keyed && tm_trace_key_of(file, &after) == 0 && memcmp(&after, &key, sizeof(key)) == 0) {
		int stored = write_file(store, &key, t);
		if (stored < 0)
			tm_log(log, LOG_WARNING, "%s: cannot write its archive file: %s", path,
			       strerror(-stored));
	}
	return 0;
}
