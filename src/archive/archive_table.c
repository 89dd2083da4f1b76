/* An archive's member table (archive_table.h): the pass that reads it, the order of its entries
 * and the lookup by path. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "archive_table.h"
#include "tracemount/compress.h"
#include "tracemount/diag.h"
#include "tracemount/format.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/tar.h"
#include "tracemount/util.h"

/* Paths in component order: '/' sorts before every other byte, so a folder's entries follow
 * it without a gap. */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int ca = *a == '/' ? 1 : *a ? (unsigned char)*a + 1 : 0;
		int cb = *b == '/' ? 1 : *b ? (unsigned char)*b + 1 : 0;
		if (ca != cb || !ca)
			return ca - cb;
	}
}

/* Whether path lies below folder dir ("" is the root). */
static bool is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return n == 0 ? *path != '\0' : strncmp(path, dir, n) == 0 && path[n] == '/';
}

struct builder {
	struct tm_arc_table *t;
	uint32_t cap_entries, cap_runs;
	uint64_t cap_strings;
	/* the latest entry of each path so far, in archive order: what a hard link names (open
	 * addressing; a slot holds an entry's index + 1, 0 when free) */
	uint32_t *slots;
	uint32_t n_slots, n_used;
	struct tm_diag *diag;
	int err;
};

static uint64_t add_string(struct builder *b, const char *s)
{
	struct tm_arc_table *t = b->t;
	size_t n = strlen(s) + 1;
	if (t->strings_len + n > b->cap_strings) {
		uint64_t cap = b->cap_strings ? b->cap_strings * 2 : 4096;
		while (cap < t->strings_len + n)
			cap *= 2;
		char *grown = realloc(t->strings, cap);
		if (!grown) {
			b->err = -ENOMEM;
			return TM_ARC_NONE;
		}
		t->strings = grown;
		b->cap_strings = cap;
	}
	memcpy(t->strings + t->strings_len, s, n);
	t->strings_len += n;
	return t->strings_len - n;
}

static struct tm_arc_entry *add_entry(struct builder *b)
{
	struct tm_arc_table *t = b->t;
	if (t->n_entries == UINT32_MAX - 1) {
		b->err = -EFBIG;
		return NULL;
	}
	if (t->n_entries == b->cap_entries) {
		uint32_t cap = b->cap_entries ? b->cap_entries * 2 : 64;
		struct tm_arc_entry *grown = realloc(t->entries, cap * sizeof(*grown));
		if (!grown) {
			b->err = -ENOMEM;
			return NULL;
		}
		t->entries = grown;
		b->cap_entries = cap;
	}
	struct tm_arc_entry *e = &t->entries[t->n_entries++];
	*e = (struct tm_arc_entry){.path = TM_ARC_NONE, .link = TM_ARC_NONE, .format = TM_ARC_NONE};
	return e;
}

static int add_runs(struct builder *b, const struct tm_tar_member *m, struct tm_arc_entry *e)
{
	struct tm_arc_table *t = b->t;
	if (m->n_runs > UINT32_MAX - t->n_runs)
		return -EFBIG;
	if (t->n_runs + m->n_runs > b->cap_runs) {
		uint32_t cap = b->cap_runs ? b->cap_runs : 16;
		while (cap < t->n_runs + m->n_runs)
			cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
		struct tm_arc_run *grown = realloc(t->runs, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->runs = grown;
		b->cap_runs = cap;
	}
	e->first_run = t->n_runs;
	e->n_runs = m->n_runs;
	uint64_t at = 0;
	for (uint32_t i = 0; i < m->n_runs; i++) {
		t->runs[t->n_runs++] = (struct tm_arc_run){m->runs[i].offset, m->runs[i].size, at};
		at += m->runs[i].size;
	}
	return 0;
}

/* The slot of path among the latest entries: the one holding it, or the free one it would
 * take. */
static uint32_t *slot_of(const struct builder *b, const char *path)
{
	uint32_t mask = b->n_slots - 1;
	uint64_t h = tm_fnv1a(TM_FNV_START, path, strlen(path));
	for (uint32_t i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		uint32_t *slot = &b->slots[i];
		if (!*slot || strcmp(b->t->strings + b->t->entries[*slot - 1].path, path) == 0)
			return slot;
	}
}

/* Makes entry i the latest of its path. */
static int remember(struct builder *b, uint32_t i)
{
	if (2 * (b->n_used + 1) > b->n_slots) { /* at most half full */
		uint32_t n = b->n_slots ? 2 * b->n_slots : 256;
		uint32_t *old = b->slots, old_n = b->n_slots;
		if (!(b->slots = calloc(n, sizeof(*b->slots)))) {
			b->slots = old;
			return -ENOMEM;
		}
		b->n_slots = n;
		for (uint32_t k = 0; k < old_n; k++)
			if (old[k])
				*slot_of(b, b->t->strings + b->t->entries[old[k] - 1].path) =
				    old[k];
		free(old);
	}
	uint32_t *slot = slot_of(b, b->t->strings + b->t->entries[i].path);
	b->n_used += !*slot;
	*slot = i + 1;
	return 0;
}

/* A hard link gets the bytes of the latest file of its target's path before it, as extraction
 * links it to what is there then (a later member of that path does not change it). Returns
 * false when there is none. */
static bool link_to(struct builder *b, struct tm_arc_entry *e, const char *target)
{
	uint32_t *slot = b->n_slots ? slot_of(b, target) : NULL;
	if (!slot || !*slot || b->t->entries[*slot - 1].type != TM_MEMBER_FILE)
		return false;
	const struct tm_arc_entry *to = &b->t->entries[*slot - 1];
	e->type = TM_MEMBER_FILE;
	e->offset = to->offset;
	e->size = to->size;
	e->mtime = to->mtime; /* one inode: its time and mode */
	e->mode = to->mode;
	e->format = to->format;
	e->first_run = to->first_run;
	e->n_runs = to->n_runs;
	return true;
}

/* One member from the tar reader: its entry, and its format from its name and head. */
static int collect(void *arg, const struct tm_tar_member *m)
{
	struct builder *b = arg;
	struct tm_arc_entry *e = add_entry(b);
	if (!e)
		return b->err;
	e->type = m->type;
	e->offset = m->offset;
	e->size = m->size;
	e->mtime = m->mtime;
	e->mode = m->mode;
	e->path = add_string(b, m->path);
	if (m->type == TM_MEMBER_SYMLINK)
		e->link = add_string(b, m->link);
	if (m->type == TM_MEMBER_HARDLINK && !link_to(b, e, m->link)) {
		tm_diag_at(b->diag, m->header,
			   "tar: %s: a hard link to %s, no file before it in the archive: left out",
			   m->path, m->link);
		b->t->n_entries--;
		return b->err;
	}
	if (m->type == TM_MEMBER_FILE) {
		const struct tm_format *fmt =
		    tm_format_detect(tm_base_name(m->path), m->head, m->head_len);
		if (fmt)
			e->format = add_string(b, fmt->name);
	}
	if (!b->err && m->runs)
		b->err = add_runs(b, m, e);
	if (!b->err)
		b->err = remember(b, b->t->n_entries - 1);
	return b->err;
}

/* Orders entry indexes by path, and one path's entries by index: archive order. */
static int by_path(const void *pa, const void *pb, void *arg)
{
	const struct tm_arc_table *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = path_cmp(t->strings + t->entries[a].path, t->strings + t->entries[b].path);
	return c ? c : a < b ? -1 : a > b;
}

/* Sorts the entries by path, keeping of each path the last in the archive (entries are
 * added in archive order). */
static int sort_entries(struct builder *b)
{
	struct tm_arc_table *t = b->t;
	uint32_t n = t->n_entries, kept = 0;
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	struct tm_arc_entry *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!order || !sorted) {
		free(order);
		free(sorted);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_path, t);
	for (uint32_t i = 0; i < n; i++) {
		const struct tm_arc_entry *e = &t->entries[order[i]];
		if (kept && strcmp(t->strings + sorted[kept - 1].path, t->strings + e->path) == 0)
			kept--; /* a later member of the same path replaces it */
		sorted[kept++] = *e;
	}
	free(order);
	free(t->entries);
	t->entries = sorted;
	t->n_entries = kept;
	b->cap_entries = n ? n : 1;
	return 0;
}

int64_t tm_arc_table_find(const struct tm_arc_table *t, const char *path)
{
	uint32_t lo = 0, hi = t->n_entries;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = path_cmp(t->strings + t->entries[mid].path, path);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Adds the folders the entries' paths imply and the root, then sorts again. */
static int add_folders(struct builder *b)
{
	struct tm_arc_table *t = b->t;
	uint32_t n = t->n_entries;
	char dir[PATH_MAX];
	if (tm_arc_table_find(t, "") < 0) {
		struct tm_arc_entry *root = add_entry(b);
		if (!root)
			return b->err;
		root->type = TM_MEMBER_DIR;
		root->mode = 0555;
		root->path = add_string(b, "");
	}
	for (uint32_t i = 0; i < n && !b->err; i++) {
		const char *path = t->strings + t->entries[i].path;
		int64_t mtime = t->entries[i].mtime;
		for (const char *slash = strchr(path, '/'); slash; slash = strchr(slash + 1, '/')) {
			size_t len = (size_t)(slash - path);
			memcpy(dir, path, len);
			dir[len] = '\0';
			if (tm_arc_table_find(t, dir) >= 0)
				continue;
			/* not among the sorted ones: added at the end, found again by the
			 * second sort, where duplicates of each other collapse */
			struct tm_arc_entry *d = add_entry(b);
			if (!d)
				return b->err;
			d->type = TM_MEMBER_DIR;
			d->mode = 0555;
			d->mtime = mtime;
			d->path = add_string(b, dir);
		}
	}
	return b->err ? b->err : sort_entries(b);
}

/* Drops what cannot be shown, the entries below a member that is no folder; then sets each
 * entry's after. */
static int settle(struct builder *b)
{
	struct tm_arc_table *t = b->t;
	uint32_t kept = 0;
	for (uint32_t i = 0; i < t->n_entries; i++) {
		struct tm_arc_entry *e = &t->entries[i];
		const char *path = t->strings + e->path;
		if (e->type != TM_MEMBER_DIR) {
			uint32_t j = i + 1;
			while (j < t->n_entries && is_under(t->strings + t->entries[j].path, path))
				j++;
			if (j > i + 1)
				tm_diag_note(b->diag,
					     "tar: %s: %u entries below it, which is no folder: "
					     "left out",
					     path, j - i - 1);
			t->entries[kept++] = *e;
			i = j - 1;
			continue;
		}
		t->entries[kept++] = *e;
	}
	t->n_entries = kept;
	/* after: the entries of a folder follow it */
	uint32_t *open = malloc((t->n_entries + 1) * sizeof(*open));
	if (!open)
		return -ENOMEM;
	uint32_t depth = 0;
	for (uint32_t i = 0; i < t->n_entries; i++) {
		const char *path = t->strings + t->entries[i].path;
		while (depth && !is_under(path, t->strings + t->entries[open[depth - 1]].path))
			t->entries[open[--depth]].after = i;
		t->entries[i].after = i + 1;
		if (t->entries[i].type == TM_MEMBER_DIR)
			open[depth++] = i;
	}
	while (depth)
		t->entries[open[--depth]].after = t->n_entries;
	free(open);
	return 0;
}

static size_t head_more(const char *name, const uint8_t *head, size_t len)
{
	return tm_codec_probe_len(name, head, len);
}

/* Reads the decompressing scan to its end, so that its access points cover the data. */
static int drain(struct tm_source *scan, uint64_t from)
{
	size_t len = 64u << 10;
	uint8_t *sink = malloc(len);
	ssize_t n = sink ? 1 : -ENOMEM;
	while (n > 0 && (n = tm_source_read(scan, sink, len, from)) > 0)
		from += (uint64_t)n;
	free(sink);
	return n < 0 ? (int)n : 0;
}

/* The pass over the archive's data in: its members, ordered and settled. */
static int read_members(struct builder *b, struct tm_source *in, bool sequential)
{
	struct tm_tar_options opt = {
	    .head_min = TM_PROBE_HEAD_LEN,
	    .head_max = tm_codec_probe_max(),
	    .head_more = head_more,
	    .sequential = sequential,
	};
	uint64_t end;
	int err = tm_tar_read(in, &opt, collect, b, b->diag, &end);
	if (!err && sequential)
		err = drain(in, end);
	if (!err)
		err = sort_entries(b);
	if (!err)
		err = add_folders(b);
	if (!err)
		err = settle(b);
	return err;
}

int tm_arc_table_build(struct tm_source *file, const char *name, struct tm_arc_table *t)
{
	struct tm_diag diag;
	struct builder b = {.t = t, .diag = &diag};
	uint8_t head[TM_PROBE_HEAD_LEN];
	memset(t, 0, sizeof(*t));
	tm_diag_init(&diag);
	ssize_t n = tm_source_read(file, head, sizeof(head), 0);
	const struct tm_codec *codec = n > 0 ? tm_codec_detect(name, head, (size_t)n) : NULL;
	int err = n < 0 ? (int)n : 0;
	if (!err && !codec)
		err = read_members(&b, file, false);
	else if (!err) {
		struct tm_source scan;
		if ((err = tm_z_scan_open_spaced(codec, file, TM_Z_ARCHIVE_SPAN, &scan)) == 0) {
			err = read_members(&b, &scan, true);
			if (!err)
				err = tm_z_scan_finish(&scan, &t->z);
			if (!err && scan.ops->report)
				scan.ops->report(&scan, &diag);
			tm_source_close(&scan);
		}
		if (!err)
			err = tm_zindex_pieces(t->z);
	}
	if (!err)
		err = tm_diag_finish(&diag);
	if (!err) {
		t->errors = diag.text;
		t->errors_len = diag.len;
		diag.text = NULL;
	}
	tm_diag_free(&diag);
	free(b.slots);
	if (err)
		tm_arc_table_free(t);
	return err;
}

void tm_arc_table_free(struct tm_arc_table *t)
{
	free(t->entries);
	free(t->strings);
	free(t->runs);
	free(t->errors);
	tm_zindex_free(t->z);
	memset(t, 0, sizeof(*t));
}

static bool string_ok(const struct tm_arc_table *t, uint64_t at, bool optional)
{
	return at == TM_ARC_NONE ? optional : at < t->strings_len;
}

const char *tm_arc_table_check(const struct tm_arc_table *t, uint64_t file_size)
{
	uint64_t data_size = t->z ? t->z->out_size : file_size;
	if (!t->n_entries || !t->strings_len || t->strings[t->strings_len - 1] != '\0')
		return "no entries";
	for (uint32_t i = 0; i < t->n_entries; i++) {
		const struct tm_arc_entry *e = &t->entries[i];
		if (!string_ok(t, e->path, false) || !string_ok(t, e->link, true) ||
		    !string_ok(t, e->format, true))
			return "a string out of place";
		if (e->type > TM_MEMBER_SYMLINK || e->after <= i || e->after > t->n_entries ||
		    (e->after > i + 1 && e->type != TM_MEMBER_DIR))
			return "an entry out of place";
		if (e->type == TM_MEMBER_SYMLINK && e->link == TM_ARC_NONE)
			return "a link without its target";
		if (i && path_cmp(t->strings + t->entries[i - 1].path, t->strings + e->path) >= 0)
			return "entries out of order";
		if (e->n_runs > t->n_runs || e->first_run > t->n_runs - e->n_runs)
			return "runs out of place";
		uint64_t stored = e->n_runs ? 0 : e->size;
		for (uint32_t k = 0; k < e->n_runs; k++) {
			const struct tm_arc_run *r = &t->runs[e->first_run + k];
			if (r->size > e->size || r->offset > e->size - r->size || r->at != stored)
				return "runs out of place";
			stored += r->size;
		}
		if (e->type == TM_MEMBER_FILE &&
		    (e->offset > data_size || stored > data_size - e->offset))
			return "member data past the archive's end";
	}
	if (path_cmp(t->strings + t->entries[0].path, "") != 0)
		return "no root";
	return t->z ? tm_zindex_check(t->z, file_size) : NULL;
}
