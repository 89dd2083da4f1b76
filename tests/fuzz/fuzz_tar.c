/* Fuzz target for the tar reader (src/archive/tar.c) and the member table built from it
 * (src/archive/archive_table.c): whatever the bytes, the reader must never read outside its
 * buffers, hang or crash, must give the same members, problems and end whether it reads the
 * archive seekable or sequential (as from a decompressing scan), and every member it gives must
 * be sound: a normalised path (no "/" at either end, no empty, "." or ".." component, none
 * longer than NAME_MAX), a hard link's normalised target, its data inside the archive, a cut
 * member's size its stored bytes, a sparse member's runs in order, apart, inside it and adding
 * up to its stored bytes, its head no longer than asked. The member table built from the same
 * bytes (as a plain archive, or compressed when they are gzip, xz or zstd data) must pass the
 * check a cache file's table must pass (tm_arc_table_check), and every entry must be found by
 * its path.
 *
 * Input: a byte whose bits pick the head's lengths (bit 0: head_more asks for more; bits 1-2:
 * head_min 0, 512, 4096 or 1), then the archive. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_table.h"
#include "mem_source.h"
#include "tracemount/diag.h"
#include "tracemount/source.h"
#include "tracemount/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

/* What a pass gave: a running hash of every member's fields, and the count. */
struct pass {
	uint64_t hash;
	unsigned n;
	size_t in_size;
	const struct tm_tar_options *opt;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void check_path(const char *what, const char *p, bool may_be_empty)
{
	size_t n = strlen(p);
	if (!n) {
		if (!may_be_empty)
			FAIL("%s: empty", what);
		return;
	}
	if (p[0] == '/' || p[n - 1] == '/' || strstr(p, "//"))
		FAIL("%s \"%s\": not normalised", what, p);
	for (const char *c = p; c;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			FAIL("%s \"%s\": a \".\" or \"..\" component", what, p);
		if (len > NAME_MAX)
			FAIL("%s \"%s\": a component longer than NAME_MAX", what, p);
		c = slash ? slash + 1 : NULL;
	}
}

static size_t more(const char *name, const uint8_t *head, size_t len)
{
	(void)head;
	return strlen(name) % 3 ? len * 4 : 0;
}

static int member(void *arg, const struct tm_tar_member *m)
{
	struct pass *ps = arg;
	check_path("path", m->path, m->type == TM_MEMBER_DIR);
	if (m->type > TM_MEMBER_HARDLINK)
		FAIL("%s: type %d", m->path, (int)m->type);
	if (m->type == TM_MEMBER_HARDLINK) {
		if (!m->link)
			FAIL("%s: a hard link without its target", m->path);
		check_path("hard link target", m->link, false);
	}
	if (m->type == TM_MEMBER_SYMLINK && !m->link)
		FAIL("%s: a symbolic link without its target", m->path);
	if (m->offset > ps->in_size || m->stored > ps->in_size - m->offset)
		FAIL("%s: data at %llu, %llu bytes, past the archive's %zu", m->path,
		     (unsigned long long)m->offset, (unsigned long long)m->stored, ps->in_size);
	if (m->header > m->offset)
		FAIL("%s: header at %llu after its data at %llu", m->path,
		     (unsigned long long)m->header, (unsigned long long)m->offset);
	if (m->type == TM_MEMBER_FILE && !m->runs && m->size != m->stored)
		FAIL("%s: size %llu, %llu bytes stored", m->path, (unsigned long long)m->size,
		     (unsigned long long)m->stored);
	if (m->runs) {
		uint64_t end = 0, total = 0;
		for (uint32_t i = 0; i < m->n_runs; i++) {
			const struct tm_sparse_run *r = &m->runs[i];
			if (r->offset < end || r->size > m->size || r->offset > m->size - r->size)
				FAIL("%s: run %u (%llu, %llu) out of place (size %llu)", m->path, i,
				     (unsigned long long)r->offset, (unsigned long long)r->size,
				     (unsigned long long)m->size);
			end = r->offset + r->size;
			total += r->size;
		}
		if (total != m->stored)
			FAIL("%s: runs of %llu bytes, %llu stored", m->path,
			     (unsigned long long)total, (unsigned long long)m->stored);
	}
	if (m->head_len > ps->opt->head_max || m->head_len > m->size)
		FAIL("%s: a head of %zu bytes", m->path, m->head_len);
	if (m->head_len && !m->head)
		FAIL("%s: no head", m->path);
	/* everything the member says, for the other pass */
	uint64_t h = ps->hash;
	h = mix(h, m->path, strlen(m->path) + 1);
	if (m->link)
		h = mix(h, m->link, strlen(m->link) + 1);
	uint64_t fields[] = {m->type,	m->header, m->offset,	       m->size,
			     m->stored, m->cut,	   (uint64_t)m->mtime, m->mode,
			     m->uid,	m->gid,	   m->n_runs};
	h = mix(h, fields, sizeof(fields));
	if (m->runs)
		h = mix(h, m->runs, m->n_runs * sizeof(*m->runs));
	if (m->head_len)
		h = mix(h, m->head, m->head_len);
	ps->hash = h;
	ps->n++;
	return 0;
}

/* One pass; its diagnostics' text and end folded into the hash. */
static struct pass read_pass(const uint8_t *data, size_t size, struct tm_tar_options *opt,
			     bool sequential)
{
	struct mem_source src;
	struct tm_diag diag;
	uint64_t end = 0;
	struct pass ps = {.hash = 0xcbf29ce484222325ull, .in_size = size, .opt = opt};
	mem_source_init(&src, data, size);
	tm_diag_init(&diag);
	opt->sequential = sequential;
	int err = tm_tar_read(&src.src, opt, member, &ps, &diag, &end);
	if (err)
		FAIL("tm_tar_read: %d", err);
	if (end > size)
		FAIL("end %llu past the archive's %zu bytes", (unsigned long long)end, size);
	ps.hash = mix(ps.hash, &end, sizeof(end));
	ps.hash = mix(ps.hash, diag.text ? diag.text : "", diag.len);
	ps.hash = mix(ps.hash, &diag.truncated, sizeof(diag.truncated));
	tm_diag_free(&diag);
	mem_source_free(&src);
	return ps;
}

static void table(const uint8_t *data, size_t size)
{
	struct mem_source src;
	struct tm_arc_table t;
	mem_source_init(&src, data, size);
	int err = tm_arc_table_build(&src.src, "fuzz.tar", &t);
	if (err == 0) {
		const char *bad = tm_arc_table_check(&t, size);
		if (bad)
			FAIL("a built table fails its check: %s", bad);
		for (uint32_t i = 0; i < t.n_entries; i++)
			if (tm_arc_table_find(&t, t.strings + t.entries[i].path) != (int64_t)i)
				FAIL("entry %u (%s) not found by its path", i,
				     t.strings + t.entries[i].path);
		tm_arc_table_free(&t);
	}
	mem_source_free(&src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t mins[] = {0, 512, 4096, 1};
	if (size < 1)
		return 0;
	struct tm_tar_options opt = {
	    .head_min = mins[(data[0] >> 1) & 3],
	    .head_max = 8192,
	    .head_more = data[0] & 1 ? more : NULL,
	};
	data++, size--;
	struct pass seek = read_pass(data, size, &opt, false);
	struct pass seq = read_pass(data, size, &opt, true);
	if (seek.n != seq.n || seek.hash != seq.hash)
		FAIL("seekable and sequential passes differ: %u and %u members", seek.n, seq.n);
	table(data, size);
	return 0;
}
