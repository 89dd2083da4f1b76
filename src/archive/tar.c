/* The tar reader (tar.h): headers block by block, the extended headers that precede a member
 * gathered into its description, its data skipped (or read through, in order, from a
 * decompressing scan) after its head is kept for detection. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracemount/diag.h"
#include "tracemount/source.h"
#include "tracemount/tar.h"

#define EXT_MAX	 (1u << 20) /* bytes of a long name or pax header kept; longer: skipped */
#define RUNS_MAX (1u << 20) /* runs of one sparse member */
#define SKIP_BUF (64u << 10)

/* Header fields: offsets and lengths (POSIX ustar, GNU's old sparse header). */
enum {
	H_NAME = 0,
	H_MODE = 100,
	H_UID = 108,
	H_GID = 116,
	H_SIZE = 124,
	H_MTIME = 136,
	H_CHKSUM = 148,
	H_TYPE = 156,
	H_LINK = 157,
	H_MAGIC = 257,
	H_VERSION = 263,
	H_PREFIX = 345,
	H_GNU_SPARSE = 386,
	H_GNU_EXTENDED = 482,
	H_GNU_REALSIZE = 483,
	SPARSE_ENTRY = 24, /* offset[12], numbytes[12] */
	EXT_ENTRIES = 21,
	EXT_EXTENDED = 504,
};

/* What the headers before a member said of it; reset after each member but the globals. */
struct pending {
	char *long_name, *long_link; /* 'L', 'K' */
	char *pax_path, *pax_link, *sparse_name;
	bool has_size, has_mtime, has_uid, has_gid, has_realsize;
	uint64_t size, realsize, uid, gid;
	int64_t mtime;
	unsigned sparse_major, sparse_minor;
	bool pax_sparse; /* GNU.sparse.* seen */
	struct tm_sparse_run *runs;
	uint32_t n_runs, cap_runs;
	bool runs_bad;		 /* a map that does not parse or would not fit */
	uint64_t pending_offset; /* pax 0.0: GNU.sparse.offset waiting for its numbytes */
	bool has_pending_offset;
};

struct reader {
	struct tm_source *in;
	const struct tm_tar_options *opt;
	struct tm_diag *diag;
	uint64_t pos; /* offset of the next byte to read */
	uint8_t *skip;
	uint8_t *head;
	struct pending p, global;
};

bool tm_tar_is_header(const uint8_t *b)
{
	unsigned sum = 0;
	int ssum = 0;
	bool zero = true;
	for (unsigned i = 0; i < TM_TAR_BLOCK; i++) {
		uint8_t c = i >= H_CHKSUM && i < H_CHKSUM + 8 ? ' ' : b[i];
		zero = zero && b[i] == 0;
		sum += c;
		ssum += (signed char)c;
	}
	if (zero)
		return false;
	/* the stored sum: octal digits, leading spaces, then a NUL or space */
	unsigned long stored = 0;
	int i = 0, digits = 0;
	while (i < 8 && b[H_CHKSUM + i] == ' ')
		i++;
	for (; i < 8 && b[H_CHKSUM + i] >= '0' && b[H_CHKSUM + i] <= '7'; i++, digits++)
		stored = stored * 8 + (unsigned long)(b[H_CHKSUM + i] - '0');
	if (!digits || (i < 8 && b[H_CHKSUM + i] != ' ' && b[H_CHKSUM + i] != '\0'))
		return false;
	return stored == sum || (long)stored == ssum; /* old tars summed signed bytes */
}

/* A numeric field: octal digits (leading spaces, ending at a NUL or space), or base-256 when
 * its first byte has its high bit set. Returns false when it is neither. */
static bool number(const uint8_t *f, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (f[0] & 0x80) {
		if (f[0] == 0xff)
			return false; /* negative: no size or time of ours */
		v = f[0] & 0x3f;
		for (size_t i = 1; i < len; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | f[i];
		}
		*out = v;
		return true;
	}
	size_t i = 0;
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 61)
			return false;
		v = v * 8 + (uint64_t)(f[i] - '0');
	}
	if (i < len && f[i] != ' ' && f[i] != '\0')
		return false;
	*out = v;
	return true;
}

/* A time field: a number, or a negative one in base-256 (two's complement, first byte 0xff),
 * as GNU tar writes times before 1970. */
static int64_t time_field(const uint8_t *f, size_t len)
{
	uint64_t v = 0;
	if (f[0] != 0xff)
		return number(f, len, &v) && v <= INT64_MAX ? (int64_t)v : 0;
	for (size_t i = 0; i < len; i++)
		v = v << 8 | f[i];
	return (int64_t)v; /* the sign bits fill the word from the left */
}

int tm_tar_normalise(const char *path, char *out, size_t size)
{
	size_t len = 0;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0)
			break;
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -EINVAL;
		if (n > NAME_MAX)
			return -ENAMETOOLONG; /* no file system shows such a name */
		if (!(n == 1 && p[0] == '.')) {
			if (len + !!len + n + 1 > size)
				return -EINVAL;
			if (len)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	if (size)
		out[len] = '\0';
	return (int)len;
}

/* Reads exactly len bytes at the reader's position. Returns the count (short: the end), or
 * -errno. */
static ssize_t take(struct reader *r, void *buf, size_t len)
{
	ssize_t n = tm_source_read(r->in, buf, len, r->pos);
	if (n > 0)
		r->pos += (uint64_t)n;
	return n;
}

/* Moves past len bytes: reads them through when the source reads in order only. Returns the
 * bytes passed (fewer: the end), or -errno. */
static int64_t pass(struct reader *r, uint64_t len)
{
	if (!r->opt->sequential) {
		uint64_t left = r->in->size > r->pos ? r->in->size - r->pos : 0;
		uint64_t n = len < left ? len : left;
		r->pos += n;
		return (int64_t)n;
	}
	uint64_t done = 0;
	while (done < len) {
		size_t want = len - done < SKIP_BUF ? (size_t)(len - done) : SKIP_BUF;
		ssize_t n = take(r, r->skip, want);
		if (n < 0)
			return n;
		done += (uint64_t)n;
		if ((size_t)n < want)
			break;
	}
	return (int64_t)done;
}

static uint64_t padded(uint64_t n)
{
	return (n + TM_TAR_BLOCK - 1) / TM_TAR_BLOCK * TM_TAR_BLOCK;
}

static void pending_clear(struct pending *p)
{
	free(p->long_name);
	free(p->long_link);
	free(p->pax_path);
	free(p->pax_link);
	free(p->sparse_name);
	free(p->runs);
	memset(p, 0, sizeof(*p));
}

static int add_run(struct pending *p, uint64_t offset, uint64_t size)
{
	if (p->n_runs == RUNS_MAX) {
		p->runs_bad = true;
		return 0;
	}
	if (p->n_runs == p->cap_runs) {
		uint32_t cap = p->cap_runs ? p->cap_runs * 2 : 8;
		struct tm_sparse_run *runs = realloc(p->runs, cap * sizeof(*runs));
		if (!runs)
			return -ENOMEM;
		p->runs = runs;
		p->cap_runs = cap;
	}
	p->runs[p->n_runs++] = (struct tm_sparse_run){offset, size};
	return 0;
}

/* Reads an extended header's data (a long name, pax records) of size bytes whole into a
 * string, or passes it when longer than EXT_MAX (*out NULL). Returns 0, 1 when the archive
 * ends inside it, or -errno. */
static int take_ext(struct reader *r, uint64_t size, char **out)
{
	*out = NULL;
	if (size > EXT_MAX) {
		int64_t n = pass(r, padded(size));
		return n < 0 ? (int)n : (uint64_t)n < padded(size);
	}
	char *s = malloc(padded(size) + 1);
	if (!s)
		return -ENOMEM;
	ssize_t n = take(r, s, padded(size));
	if (n < 0 || (uint64_t)n < padded(size)) {
		free(s);
		return n < 0 ? (int)n : 1;
	}
	s[size] = '\0';
	*out = s;
	return 0;
}

static bool decimal(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return i > 0 && (i == len || s[i] == '.'); /* mtime may have a fraction */
}

/* Whether a decimal "N.F" has a fraction other than zero: a time before 1970 is then in the
 * second before its whole part (extraction floors it). */
static int fraction(const char *s, size_t len)
{
	const char *dot = memchr(s, '.', len);
	for (const char *c = dot ? dot + 1 : s + len; c < s + len; c++)
		if (*c >= '1' && *c <= '9')
			return 1;
	return 0;
}

static int set_string(char **field, const char *value, size_t len)
{
	free(*field);
	if (!(*field = strndup(value, len)))
		return -ENOMEM;
	return 0;
}

/* GNU.sparse.map: "offset,size,offset,size...". */
static int parse_map(struct pending *p, const char *v, size_t len)
{
	const char *end = v + len;
	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *c2 = comma ? memchr(comma + 1, ',', (size_t)(end - comma - 1)) : NULL;
		uint64_t off, size;
		if (!comma || !decimal(v, (size_t)(comma - v), &off) ||
		    !decimal(comma + 1, (size_t)((c2 ? c2 : end) - comma - 1), &size)) {
			p->runs_bad = true;
			return 0;
		}
		int err = add_run(p, off, size);
		if (err)
			return err;
		v = c2 ? c2 + 1 : end;
	}
	return 0;
}

/* One pax record "key=value" of a member's (or the global) pending description. */
static int pax_record(struct pending *p, const char *key, size_t klen, const char *v, size_t vlen)
{
#define IS(k) (klen == sizeof(k) - 1 && memcmp(key, k, klen) == 0)
	uint64_t n;
	if (IS("path"))
		return set_string(&p->pax_path, v, vlen);
	if (IS("linkpath"))
		return set_string(&p->pax_link, v, vlen);
	if (IS("GNU.sparse.name"))
		return set_string(&p->sparse_name, v, vlen);
	if (IS("size") && decimal(v, vlen, &n))
		p->size = n, p->has_size = true;
	else if (IS("mtime") && vlen && v[0] == '-' && decimal(v + 1, vlen - 1, &n) &&
		 n < INT64_MAX)
		p->mtime = -(int64_t)n - fraction(v, vlen), p->has_mtime = true;
	else if (IS("mtime") && decimal(v, vlen, &n) && n <= INT64_MAX)
		p->mtime = (int64_t)n, p->has_mtime = true;
	else if (IS("uid") && decimal(v, vlen, &n))
		p->uid = n, p->has_uid = true;
	else if (IS("gid") && decimal(v, vlen, &n))
		p->gid = n, p->has_gid = true;
	else if ((IS("GNU.sparse.realsize") || IS("GNU.sparse.size")) && decimal(v, vlen, &n))
		p->realsize = n, p->has_realsize = true, p->pax_sparse = true;
	else if (IS("GNU.sparse.major") && decimal(v, vlen, &n))
		p->sparse_major = (unsigned)n, p->pax_sparse = true;
	else if (IS("GNU.sparse.minor") && decimal(v, vlen, &n))
		p->sparse_minor = (unsigned)n, p->pax_sparse = true;
	else if (IS("GNU.sparse.map")) {
		p->pax_sparse = true;
		return parse_map(p, v, vlen);
	} else if (IS("GNU.sparse.offset") && decimal(v, vlen, &n)) {
		p->pending_offset = n, p->has_pending_offset = true, p->pax_sparse = true;
	} else if (IS("GNU.sparse.numbytes") && decimal(v, vlen, &n)) {
		if (!p->has_pending_offset)
			p->runs_bad = true;
		p->has_pending_offset = false;
		return add_run(p, p->pending_offset, n);
	}
	return 0;
#undef IS
}

/* Pax records "LEN key=value\n" of text[0..len). Returns 0, 1 when malformed, or -errno. */
static int pax_records(struct pending *p, const char *text, size_t len)
{
	size_t at = 0;
	while (at < len && text[at]) {
		uint64_t rec = 0;
		size_t i = at;
		while (i < len && text[i] >= '0' && text[i] <= '9' && rec < len)
			rec = rec * 10 + (uint64_t)(text[i++] - '0');
		if (i == at || i >= len || text[i] != ' ' || rec > len - at || rec < 5 ||
		    text[at + rec - 1] != '\n')
			return 1;
		const char *kv = text + i + 1, *end = text + at + rec - 1;
		const char *eq = memchr(kv, '=', (size_t)(end - kv));
		if (!eq)
			return 1;
		int err = pax_record(p, kv, (size_t)(eq - kv), eq + 1, (size_t)(end - eq - 1));
		if (err)
			return err;
		at += rec;
	}
	return 0;
}

/* The runs of GNU's old sparse header: four in the header, 21 in each extension block. */
static int gnu_sparse_runs(struct reader *r, const uint8_t *h, bool *cut)
{
	uint8_t ext[TM_TAR_BLOCK];
	const uint8_t *entries = h + H_GNU_SPARSE;
	unsigned n = 4;
	bool more = h[H_GNU_EXTENDED] != 0;
	for (;;) {
		for (unsigned i = 0; i < n; i++) {
			const uint8_t *e = entries + i * SPARSE_ENTRY;
			uint64_t off, size;
			if (e[0] == 0)
				break;
			if (!number(e, 12, &off) || !number(e + 12, 12, &size)) {
				r->p.runs_bad = true;
				continue;
			}
			int err = add_run(&r->p, off, size);
			if (err)
				return err;
		}
		if (!more)
			return 0;
		ssize_t got = take(r, ext, sizeof(ext));
		if (got < 0)
			return (int)got;
		if ((size_t)got < sizeof(ext)) {
			*cut = true;
			return 0;
		}
		entries = ext;
		n = EXT_ENTRIES;
		more = ext[EXT_EXTENDED] != 0;
	}
}

/* Pax sparse 1.0: the map opens the member's data, decimal lines padded to a block: the count,
 * then offset and size of each run. Reads it; *map_bytes says how much of the data it took.
 * Returns 0, 1 when the archive ends inside it, or -errno. */
static int pax1_map(struct reader *r, uint64_t data, uint64_t *map_bytes)
{
	char block[TM_TAR_BLOCK + 1];
	char num[32];
	size_t num_len = 0, in_block = TM_TAR_BLOCK;
	uint64_t count = 0, want = 1, got_nums = 0, off = 0;
	*map_bytes = 0;
	while (got_nums < want) {
		if (in_block == TM_TAR_BLOCK) {
			if (*map_bytes + TM_TAR_BLOCK > data) {
				r->p.runs_bad = true;
				return 0;
			}
			ssize_t n = take(r, block, TM_TAR_BLOCK);
			if (n < 0)
				return (int)n;
			if (n < TM_TAR_BLOCK)
				return 1;
			*map_bytes += TM_TAR_BLOCK;
			in_block = 0;
		}
		char c = block[in_block++];
		if (c != '\n') {
			if (c < '0' || c > '9' || num_len + 1 >= sizeof(num)) {
				r->p.runs_bad = true;
				return 0;
			}
			num[num_len++] = c;
			continue;
		}
		uint64_t v;
		if (!decimal(num, num_len, &v)) {
			r->p.runs_bad = true;
			return 0;
		}
		num_len = 0;
		if (got_nums++ == 0) {
			count = v;
			if (count > RUNS_MAX) {
				r->p.runs_bad = true;
				return 0;
			}
			want = 1 + 2 * count;
		} else if (got_nums % 2 == 0) {
			off = v;
		} else {
			int err = add_run(&r->p, off, v);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Whether the runs fit a member of size bytes whose data holds stored bytes: in order, apart,
 * inside it, and adding up to the data. */
static bool runs_fit(const struct pending *p, uint64_t size, uint64_t stored)
{
	uint64_t end = 0, total = 0;
	for (uint32_t i = 0; i < p->n_runs; i++) {
		const struct tm_sparse_run *run = &p->runs[i];
		if (run->offset < end || run->size > size || run->offset > size - run->size)
			return false;
		end = run->offset + run->size;
		total += run->size;
	}
	return total == stored;
}

/* The first bytes of the member whose stored data, stored_len bytes of it, is at data, into
 * r->head: as many as were read (at least head_min when there are), laid out through its runs
 * when it is sparse, up to where the bytes read run out. Returns the count. */
static size_t lay_head(struct reader *r, const struct tm_tar_member *m, const uint8_t *data,
		       size_t stored_len)
{
	if (!m->runs) {
		memcpy(r->head, data, stored_len);
		return stored_len;
	}
	/* holes cost no stored bytes: the head reaches where the bytes read end */
	size_t want = stored_len > r->opt->head_min ? stored_len : r->opt->head_min;
	if (want > r->opt->head_max && want > r->opt->head_min)
		want = r->opt->head_max > r->opt->head_min ? r->opt->head_max : r->opt->head_min;
	uint64_t covered = m->size, from = 0;
	for (uint32_t i = 0; i < m->n_runs; i++) {
		if (from + m->runs[i].size > stored_len) {
			covered = m->runs[i].offset + (stored_len - from);
			break;
		}
		from += m->runs[i].size;
	}
	size_t len = covered < want ? (size_t)covered : want;
	memset(r->head, 0, len);
	from = 0;
	for (uint32_t i = 0; i < m->n_runs && m->runs[i].offset < len; i++) {
		size_t at = (size_t)m->runs[i].offset;
		size_t n = m->runs[i].size < len - at ? (size_t)m->runs[i].size : len - at;
		if (from + n > stored_len)
			n = stored_len > from ? stored_len - (size_t)from : 0;
		memcpy(r->head + at, data + from, n);
		from += m->runs[i].size;
		if (from >= stored_len)
			break;
	}
	return len;
}

/* A sparse member the archive ends inside: it ends where its stored bytes do, with the runs
 * they fill. */
static void cut_runs(struct tm_sparse_run *runs, struct tm_tar_member *m)
{
	uint64_t left = m->stored;
	uint32_t k = 0;
	for (; k < m->n_runs && left >= runs[k].size; k++)
		left -= runs[k].size;
	if (k < m->n_runs && left) {
		runs[k].size = left;
		m->size = runs[k].offset + left;
		m->n_runs = k + 1;
	} else {
		m->size = k ? runs[k - 1].offset + runs[k - 1].size : 0;
		m->n_runs = k;
	}
}

static const char *kind_name(uint8_t type)
{
	switch (type) {
	case '3': return "character device";
	case '4': return "block device";
	case '6': return "FIFO";
	case 'V': return "volume label";
	case 'M': return "multi-volume continuation";
	default: return "member of an unknown type";
	}
}

/* One member whose header h (at offset header) and pending description are read: its data
 * follows. Returns 0, 1 when the archive ends inside it, or fn's return or -errno. */
static int member(struct reader *r, const uint8_t *h, uint64_t header, tm_tar_member_fn fn,
		  void *arg)
{
	struct pending *p = &r->p, *g = &r->global;
	uint8_t type = h[H_TYPE];
	uint64_t size = 0, mode = 0, uid = 0, gid = 0;
	int64_t mtime = time_field(h + H_MTIME, 12);
	char raw[256 + 2], name[PATH_MAX], link[PATH_MAX];
	number(h + H_SIZE, 12, &size);
	number(h + H_MODE, 8, &mode);
	number(h + H_UID, 8, &uid);
	number(h + H_GID, 8, &gid);
	if (g->has_mtime)
		mtime = g->mtime;
	if (g->has_uid)
		uid = g->uid;
	if (g->has_gid)
		gid = g->gid;
	if (p->has_size)
		size = p->size;
	if (p->has_mtime)
		mtime = p->mtime;
	if (p->has_uid)
		uid = p->uid;
	if (p->has_gid)
		gid = p->gid;

	/* the name: pax's, GNU's long one, or the header's (with ustar's prefix) */
	const char *path = p->sparse_name ? p->sparse_name
			   : p->pax_path  ? p->pax_path
			   : p->long_name ? p->long_name
			   : g->pax_path  ? g->pax_path
					  : NULL;
	if (!path) {
		size_t pre =
		    memcmp(h + H_MAGIC, "ustar\0", 6) == 0 ? strnlen((char *)h + H_PREFIX, 155) : 0;
		size_t nl = strnlen((const char *)h + H_NAME, 100);
		memcpy(raw, h + H_PREFIX, pre);
		if (pre)
			raw[pre++] = '/';
		memcpy(raw + pre, h + H_NAME, nl);
		raw[pre + nl] = '\0';
		path = raw;
	}
	const char *target = p->pax_link    ? p->pax_link
			     : p->long_link ? p->long_link
			     : g->pax_link  ? g->pax_link
					    : NULL;
	char link_raw[101];
	if (!target) {
		size_t ll = strnlen((const char *)h + H_LINK, 100);
		memcpy(link_raw, h + H_LINK, ll);
		link_raw[ll] = '\0';
		target = link_raw;
	}
	bool slash = *path && path[strlen(path) - 1] == '/';

	struct tm_tar_member m = {.header = header, .mtime = mtime};
	m.mode = (uint32_t)(mode & 07777);
	m.uid = (uint32_t)uid;
	m.gid = (uint32_t)gid;
	uint64_t data = size; /* bytes stored after the header */
	bool show = true;
	switch (type) {
	case '0':
	case '\0':
	case '7': m.type = slash ? TM_MEMBER_DIR : TM_MEMBER_FILE; break;
	case '1': m.type = TM_MEMBER_HARDLINK; break;
	case '2': m.type = TM_MEMBER_SYMLINK; break;
	case '5':
	case 'D': m.type = TM_MEMBER_DIR; break;
	case 'S': {
		bool cut = false;
		uint64_t real;
		m.type = TM_MEMBER_FILE;
		int err = gnu_sparse_runs(r, h, &cut);
		if (err)
			return err;
		if (cut)
			return 1;
		if (number(h + H_GNU_REALSIZE, 12, &real))
			p->realsize = real, p->has_realsize = true;
		if (!p->n_runs) /* a sparse file with no data at all still has a last run */
			p->runs_bad = !p->has_realsize;
		break;
	}
	default: show = false; break;
	}
	if (type != 'S' && p->pax_sparse && m.type == TM_MEMBER_FILE && p->sparse_major == 1) {
		uint64_t map_bytes;
		int err = pax1_map(r, data, &map_bytes);
		if (err)
			return err;
		data -= map_bytes < data ? map_bytes : data;
	}
	m.offset = r->pos;
	m.size = data;
	bool sparse = (type == 'S' || p->pax_sparse) && m.type == TM_MEMBER_FILE;
	if (sparse) {
		if (!p->has_realsize || p->runs_bad || !runs_fit(p, p->realsize, data)) {
			tm_diag_at(r->diag, header,
				   "tar: %s: a sparse map that does not fit its data: left out",
				   path);
			show = false;
		} else {
			m.size = p->realsize;
			m.runs = p->runs;
			m.n_runs = p->n_runs;
		}
	}
	if (m.type == TM_MEMBER_HARDLINK || m.type == TM_MEMBER_SYMLINK)
		m.size = 0;
	if (!show && !sparse)
		tm_diag_at(r->diag, header, "tar: %s: a %s: left out", path, kind_name(type));
	int len = tm_tar_normalise(path, name, sizeof(name));
	if (len < 0) /* said as written in the lines below */
		snprintf(name, sizeof(name), "%s", path);
	if (show && len == -ENAMETOOLONG) {
		tm_diag_at(r->diag, header, "tar: %s: a name longer than %d bytes: left out", path,
			   NAME_MAX);
		show = false;
	} else if (show && len < 0) {
		tm_diag_at(r->diag, header, "tar: %s: a path with \"..\" or too long: left out",
			   path);
		show = false;
	} else if (show && len == 0 && m.type != TM_MEMBER_DIR) {
		tm_diag_at(r->diag, header, "tar: a member with no name: left out");
		show = false;
	}
	m.path = name;
	if (m.type == TM_MEMBER_HARDLINK) {
		if (tm_tar_normalise(target, link, sizeof(link)) <= 0) {
			tm_diag_at(r->diag, header, "tar: %s: a hard link to \"%s\": left out",
				   name, target);
			show = false;
		}
		m.link = link;
	} else if (m.type == TM_MEMBER_SYMLINK) {
		m.link = target;
	}

	/* the data: its head kept for detection, the rest passed */
	uint64_t start = r->pos, kept = 0;
	if (show && m.type == TM_MEMBER_FILE && r->opt->head_min) {
		size_t want = data < r->opt->head_min ? (size_t)data : r->opt->head_min;
		ssize_t n = take(r, r->skip, want);
		if (n < 0)
			return (int)n;
		kept = (uint64_t)n;
		if (n == (ssize_t)want && r->opt->head_more && kept < data) {
			size_t more = r->opt->head_more(name, r->skip, (size_t)n);
			if (more > r->opt->head_max)
				more = r->opt->head_max;
			if (more > data)
				more = (size_t)data;
			if (more > kept && (n = take(r, r->skip + kept, more - kept)) < 0)
				return (int)n;
			if (more > kept)
				kept += (uint64_t)n;
		}
		m.head = r->head;
		m.head_len = lay_head(r, &m, r->skip, (size_t)kept);
	}
	int64_t passed = pass(r, padded(data) - kept);
	if (passed < 0)
		return (int)passed;
	m.stored = data;
	if (r->pos - start < data) {
		m.stored = r->pos - start;
		m.cut = true;
		tm_diag_truncated(
		    r->diag, start + m.stored,
		    "tar: the archive is cut inside %s: %llu of its %llu bytes are there", name,
		    (unsigned long long)m.stored, (unsigned long long)data);
		if (!m.runs)
			m.size = m.stored;
		else
			cut_runs(p->runs, &m);
	}
	int err = show && (m.type != TM_MEMBER_DIR || len > 0) ? fn(arg, &m) : 0;
	pending_clear(p);
	if (err)
		return err;
	return r->pos - start < padded(data) ? 1 : 0;
}

/* An extended header of type t ('L', 'K', 'x', 'g') and data size. Returns 0, 1 when the
 * archive ends inside it, or -errno. */
static int extended(struct reader *r, uint8_t t, uint64_t size, uint64_t header)
{
	char *text;
	int err = take_ext(r, size, &text);
	if (err)
		return err;
	if (!text) {
		tm_diag_at(r->diag, header, "tar: an extended header of %llu bytes: ignored",
			   (unsigned long long)size);
		return 0;
	}
	if (t == 'L' || t == 'K') {
		char **field = t == 'L' ? &r->p.long_name : &r->p.long_link;
		free(*field);
		*field = text;
		return 0;
	}
	err = pax_records(t == 'g' ? &r->global : &r->p, text, (size_t)size);
	free(text);
	if (err == 1)
		tm_diag_at(r->diag, header, "tar: a malformed pax header: the rest of it ignored");
	return err < 0 ? err : 0;
}

int tm_tar_read(struct tm_source *in, const struct tm_tar_options *opt, tm_tar_member_fn fn,
		void *arg, struct tm_diag *diag, uint64_t *end)
{
	struct reader r = {.in = in, .opt = opt, .diag = diag};
	uint8_t h[TM_TAR_BLOCK];
	int err = 0, zeros = 0;
	uint64_t header = 0; /* of the member whose headers are being read */
	bool in_member = false;
	/* a head holds at least head_min bytes, whatever head_max says */
	size_t head = opt->head_max > opt->head_min ? opt->head_max : opt->head_min;
	r.skip = malloc(SKIP_BUF > head ? SKIP_BUF : head);
	r.head = malloc(head ? head : 1);
	if (!r.skip || !r.head) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		uint64_t at = r.pos;
		ssize_t n = take(&r, h, sizeof(h));
		if (n < 0) {
			err = (int)n;
			break;
		}
		if (n == 0 && !in_member) {
			if (!zeros && at == 0)
				tm_diag_note(diag, "tar: an empty archive");
			else if (!zeros)
				tm_diag_at(
				    diag, at,
				    "tar: the archive ends without its end blocks: it may be cut");
			break;
		}
		if ((size_t)n < sizeof(h) && at == 0) {
			tm_diag_note(diag, "tar: not a tar archive: %zd bytes, less than a header",
				     n);
			break;
		}
		if ((size_t)n < sizeof(h)) {
			tm_diag_truncated(diag, in_member ? header : at,
					  "tar: the archive is cut inside a header");
			break;
		}
		if (!tm_tar_is_header(h)) {
			bool zero = true;
			for (size_t i = 0; i < sizeof(h) && zero; i++)
				zero = h[i] == 0;
			if (zero && !in_member && ++zeros == 2)
				break; /* the end of the archive */
			if (zero && !in_member)
				continue;
			tm_diag_at(
			    diag, at,
			    "tar: not a tar header (bad checksum): the rest of the archive is "
			    "not read");
			break;
		}
		if (zeros) {
			tm_diag_at(diag, at - TM_TAR_BLOCK, "tar: a lone zero block: skipped");
			zeros = 0;
		}
		if (!in_member)
			header = at;
		uint64_t size = 0;
		if (!number(h + H_SIZE, 12, &size)) {
			tm_diag_at(diag, at,
				   "tar: a header with a malformed size: the rest of the archive "
				   "is not read");
			break;
		}
		uint8_t t = h[H_TYPE];
		if (t == 'L' || t == 'K' || t == 'x' || t == 'g') {
			in_member = t != 'g';
			err = extended(&r, t, size, at);
		} else if (t == 'N' || t == 'A' || t == 'E' || t == 'I' || t == 'X') {
			int64_t passed = pass(&r, padded(size)); /* vendor headers: passed */
			err = passed < 0 ? (int)passed : (uint64_t)passed < padded(size);
		} else {
			in_member = false;
			err = member(&r, h, header, fn, arg);
		}
		if (err == 1) {
			if (!diag->truncated)
				tm_diag_truncated(diag, r.pos,
						  "tar: the archive is cut: it ends here");
			err = 0;
			break;
		}
		if (err)
			break;
	}
out:
	pending_clear(&r.p);
	pending_clear(&r.global);
	free(r.skip);
	free(r.head);
	*end = r.pos;
	return err;
}
