/* Tar archives built block by block in memory, and the tar reader run over them seekable and
 * sequential, for the tar reader's tests (test_tar.c, test_tar_sparse.c). */
#ifndef TM_TEST_TAR_FIXTURE_H
#define TM_TEST_TAR_FIXTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemount/tar.h"

struct arc {
	uint8_t *b;
	size_t len, cap;
};

/* One header's fields; zero values give the defaults. */
struct hs {
	const char *name, *link, *prefix;
	char type;	  /* '\0': '0' */
	uint64_t size;	  /* of the data that follows */
	int64_t mtime;	  /* 0: 1700000000 */
	unsigned mode;	  /* 0: 0644 */
	bool gnu;	  /* GNU's magic "ustar  \0" instead of POSIX's "ustar\0" "00" */
	bool v7;	  /* no magic at all */
	bool b256_size;	  /* the size in base-256 */
	bool b256_mtime;  /* the mtime in base-256 (negative ones always are) */
	bool signed_sum;  /* the checksum as old tars summed: signed bytes */
	uint64_t runs[8]; /* 'S': up to four offset, size pairs */
	unsigned n_runs;
	bool extended; /* 'S': extension blocks follow */
	uint64_t realsize;
};

struct mem {
	char path[PATH_MAX], link[PATH_MAX];
	bool has_link;
	enum tm_member_type type;
	uint64_t header, offset, size, stored;
	bool cut;
	int64_t mtime;
	uint32_t mode, uid, gid;
	uint32_t n_runs;
	bool sparse;
	struct tm_sparse_run runs[64];
	size_t head_len;
	uint8_t head[8192];
};

#define MAX_MEMBERS 64

struct got {
	struct mem m[MAX_MEMBERS];
	int n;
	int stop_after; /* >0: the callback returns 99 after this many */
	int ret;
	uint64_t end;
	char *diag;
	bool truncated;
};

#define ck_line(g, ...)                                                                            \
	do {                                                                                       \
		char want_[1024];                                                                  \
		snprintf(want_, sizeof(want_), __VA_ARGS__);                                       \
		ck_assert_msg(has_line(g, want_), "no line \"%s\" in:\n%s", want_, (g)->diag);     \
	} while (0)

extern const struct tm_tar_options default_opt;

void put(struct arc *a, const void *p, size_t n);
void pad(struct arc *a);
void data(struct arc *a, const void *p, size_t n);
void end_blocks(struct arc *a);
void octal(uint8_t *f, size_t len, uint64_t v);
void base256(uint8_t *f, size_t len, int64_t v);
void seal(uint8_t *h, bool signed_sum);
void header_block(uint8_t *h, const struct hs *s);
void header(struct arc *a, const struct hs *s);
void file(struct arc *a, const char *name, const void *p, size_t n);
void gnu_long(struct arc *a, char type, const char *text);
void pax(struct arc *a, char type, const char *const *kv);
int collect(void *arg, const struct tm_tar_member *m);
struct got *read_one(const uint8_t *b, size_t len, const struct tm_tar_options *opt,
		     bool sequential, int stop_after, int fail);
void got_free(struct got *g);
struct got *read_opt(const struct arc *a, const struct tm_tar_options *opt, int stop_after);
struct got *read_arc(const struct arc *a);
bool has_line(const struct got *g, const char *line);
uint8_t *pattern(size_t n, unsigned seed);

#endif
