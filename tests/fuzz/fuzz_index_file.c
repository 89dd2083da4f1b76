/* Fuzz target for the index-file reader: an index file that passes the checksums must never
 * make the daemon read outside its buffers, hang or crash, whatever its fields say.
 *
 * Input: a format's name and a NUL ("tt6\0"); then a byte whose bit 0, when set, leaves the
 * damaged file's checksums as they are (else they are made valid again, so that the fuzzer
 * reaches the checks behind them); 2 bytes (little-endian), the length L of the trace that
 * follows; the rest is a list of 5-byte patches, each a 32-bit little-endian offset (modulo
 * the file's size) and a byte XORed there. The trace is indexed and its index file written
 * to a cache folder, with every product; the patches damage that file; a second context, as
 * a second mount would, reads the file (or refuses it and indexes again) and every view is
 * read whole; before that, the folder's list (tm_index_store_list) reads the damaged file's
 * header. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read_views.h"
#include "reseal.h"
#include "tracemount/context.h"
#include "tracemount/derive.h"
#include "tracemount/index_file.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMORY (1u << 20)
#define STEP   (64u << 10)

static char dir[] = "/tmp/tm-fuzz-index.XXXXXX";
static char trace_path[64], cache_path[64];

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, n) != (ssize_t)n || close(fd) < 0)
		abort();
}

/* TM_FUZZ_LOG=1 shows why files were refused, to see how deep the inputs reach. */
static void log_stderr(int priority, const char *line)
{
	(void)priority;
	fprintf(stderr, "%s\n", line);
}

/* Indexes the trace in a new context over the cache folder and reads it whole. */
static void mount_once(const struct tm_format *fmt, struct tm_source *src, int read)
{
	struct tm_context *ctx;
	struct tm_trace *t;
	struct tm_open_trace ot;
	char err[256];
	if (tm_context_new(MEMORY, &ctx) < 0 ||
	    tm_context_set_store(ctx, cache_path, true, err, sizeof(err)) < 0 ||
	    tm_context_trace(ctx, "trace", fmt, &t) < 0)
		abort();
	if (getenv("TM_FUZZ_LOG"))
		tm_context_set_log(ctx, log_stderr);
	tm_trace_open(&ot, t, src);
	tm_trace_put(t); /* ot holds it */
	if (read)
		fuzz_read_views(&ot, STEP, 0);
	else /* every product, so that the file holds their parts for the patches to damage */
		(void)tm_trace_products(&ot, TM_PRODUCTS_ALL);
	tm_trace_close(&ot);
	tm_context_free(ctx);
}

static int list_one(void *arg, const struct tm_index_file_info *info)
{
	size_t *n = arg;
	*n += strlen(info->format) + strlen(info->trace) + (info->problem != NULL);
	return 0;
}

/* Lists the cache folder, as tracemount index --list does. */
static void list_folder(void)
{
	struct tm_index_store s;
	char err[256];
	size_t n = 0;
	if (tm_index_store_open(&s, cache_path, true, err, sizeof(err)) < 0)
		abort();
	(void)tm_index_store_list(&s, list_one, &n);
	tm_index_store_close(&s);
}

/* Applies the patches to the index file at path. */
static void damage(const char *path, const uint8_t *patches, size_t n, int reseal)
{
	struct stat st;
	if (stat(path, &st) < 0 || st.st_size == 0)
		return;
	size_t len = (size_t)st.st_size;
	uint8_t *file = malloc(len);
	int fd = open(path, O_RDONLY);
	if (!file || fd < 0 || pread(fd, file, len, 0) != (ssize_t)len)
		abort();
	close(fd);
	for (size_t i = 0; i + 5 <= n; i += 5) {
		uint32_t off;
		memcpy(&off, patches + i, 4);
		file[off % len] ^= patches[i + 4];
	}
	if (reseal)
		index_file_reseal(file, len);
	write_file(path, file, len);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool started;
	if (!started) {
		started = true;
		if (!mkdtemp(dir))
			abort();
		snprintf(trace_path, sizeof(trace_path), "%s/trace", dir);
		snprintf(cache_path, sizeof(cache_path), "%s/cache", dir);
	}
	size_t used;
	const struct tm_format *fmt = fuzz_format_of(data, size, &used);
	if (!fmt || size - used < 3)
		return 0;
	data += used;
	size -= used;
	size_t len = (size_t)data[1] | (size_t)data[2] << 8;
	if (len > size - 3)
		len = size - 3;
	write_file(trace_path, data + 3, len);
	struct tm_source src;
	struct tm_trace_key key;
	char name[32], path[128];
	if (tm_source_open(AT_FDCWD, trace_path, &src) < 0 || tm_trace_key_of(&src, &key) < 0)
		abort();
	tm_index_file_name(fmt, &key, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", cache_path, name);
	mount_once(fmt, &src, 0);
	damage(path, data + 3 + len, size - 3 - len, !(data[0] & 1));
	list_folder();
	mount_once(fmt, &src, 1);
	unlink(path); /* the next input's trace has another key */
	tm_source_close(&src);
	return 0;
}
