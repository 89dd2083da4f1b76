/* Fuzz target for archives: the tar reader and member table on any bytes, and the archive's
 * cache file (HASH.tma) damaged behind valid checksums, must never make the daemon read outside
 * its buffers, hang or crash, whatever the headers or the file's fields say.
 *
 * Input: a byte whose bit 0, when set, leaves the damaged cache file's checksums as they are
 * (else they are made valid again, so that the fuzzer reaches the checks behind them), and
 * whose bit 1 gzips the archive; 2 bytes (little-endian), the length L of the archive that
 * follows; the rest is a list of 5-byte patches, each a 32-bit little-endian offset (modulo the
 * file's size) and a byte XORed there. The archive is read and its cache file written; the
 * patches damage that file; a second context, as a second mount would, reads the file (or
 * refuses it and reads the archive again), then every entry is looked up and every file entry
 * read whole. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "reseal.h"
#include "tracemount/archive.h"
#include "tracemount/context.h"
#include "tracemount/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEMORY (1u << 20)

static char dir[] = "/tmp/tm-fuzz-archive.XXXXXX";
static char cache_path[64];
static int dirfd_;

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || close(fd) < 0)
		abort();
}

static void write_gzip(const char *path, const void *p, size_t n)
{
	gzFile gz = gzopen(path, "wb1");
	if (!gz || (n && gzwrite(gz, p, (unsigned)n) != (int)n) || gzclose(gz) != Z_OK)
		abort();
}

/* Reads the whole file entry e of a. */
static void read_entry(struct tm_archive *a, const struct tm_archive_entry *e)
{
	struct tm_source src;
	uint8_t buf[4096];
	if (tm_archive_open(a, e->id, &src) < 0)
		return;
	for (uint64_t off = 0;;) {
		ssize_t n = tm_source_read(&src, buf, sizeof(buf), off);
		if (n <= 0)
			break;
		off += (uint64_t)n;
	}
	tm_source_close(&src);
}

struct walk {
	struct tm_archive *a;
	int depth;
};

static int visit(void *arg, const struct tm_archive_entry *e)
{
	struct walk *w = arg;
	struct tm_archive_entry again;
	if (tm_archive_lookup(w->a, e->path, &again) < 0)
		abort(); /* a listed entry is found by its path */
	if (e->type == TM_MEMBER_FILE)
		read_entry(w->a, e);
	if (e->type == TM_MEMBER_DIR && w->depth < 64) {
		struct walk inner = {w->a, w->depth + 1};
		(void)tm_archive_list(w->a, e->path, visit, &inner);
	}
	return 0;
}

/* Opens the archive in a new context over the cache folder and walks it whole. */
static void mount_once(const char *name)
{
	struct tm_context *ctx;
	struct tm_archives *set;
	struct tm_archive *a;
	struct stat st;
	char err[256];
	size_t len;
	if (tm_context_new(MEMORY, &ctx) < 0 ||
	    tm_context_set_store(ctx, cache_path, true, err, sizeof(err)) < 0 ||
	    tm_archives_new(ctx, &set) < 0 || fstatat(dirfd_, name, &st, 0) < 0)
		abort();
	if (tm_archives_get(set, dirfd_, name, &st, &a) == 0) {
		struct walk w = {a, 0};
		(void)tm_archive_errors(a, &len);
		(void)tm_archive_list(a, "", visit, &w);
		tm_archive_put(a);
	}
	tm_archives_free(set);
	tm_context_free(ctx);
}

/* Applies the patches to every cache file of the folder. */
static void damage(const uint8_t *patches, size_t n, bool reseal)
{
	DIR *d = opendir(cache_path);
	struct dirent *e;
	char path[512];
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		size_t len = strlen(e->d_name);
		if (len < 4 || strcmp(e->d_name + len - 4, ".tma") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache_path, e->d_name);
		if (stat(path, &st) < 0 || st.st_size == 0)
			continue;
		size_t size = (size_t)st.st_size;
		uint8_t *file = malloc(size);
		int fd = open(path, O_RDONLY);
		if (!file || fd < 0 || pread(fd, file, size, 0) != (ssize_t)size)
			abort();
		close(fd);
		for (size_t i = 0; i + 5 <= n; i += 5) {
			uint32_t off;
			memcpy(&off, patches + i, 4);
			file[off % size] ^= patches[i + 4];
		}
		if (reseal)
			index_file_reseal(file, size);
		write_file(path, file, size);
		free(file);
	}
	closedir(d);
}

static void clear_cache(void)
{
	DIR *d = opendir(cache_path);
	struct dirent *e;
	if (!d)
		return;
	int fd = dirfd(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || e->d_name[1] != '\0')
			unlinkat(fd, e->d_name, 0);
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool started;
	if (!started) {
		started = true;
		if (!mkdtemp(dir) || (dirfd_ = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
			abort();
		snprintf(cache_path, sizeof(cache_path), "%s/cache", dir);
	}
	if (size < 3)
		return 0;
	size_t len = (size_t)data[1] | (size_t)data[2] << 8;
	if (len > size - 3)
		len = size - 3;
	bool gzip = data[0] & 2;
	const char *name = gzip ? "a.tar.gz" : "a.tar";
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlinkat(dirfd_, "a.tar", 0);
	unlinkat(dirfd_, "a.tar.gz", 0);
	if (gzip)
		write_gzip(path, data + 3, len);
	else
		write_file(path, data + 3, len);
	clear_cache();
	mount_once(name);
	damage(data + 3 + len, size - 3 - len, !(data[0] & 1));
	mount_once(name);
	return 0;
}
