/* The virtual SUM traces of folders of spixcounts files (sum.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemount/context.h"
#include "tracemount/diag.h"
#include "tracemount/registry.h"
#include "tracemount/source.h"
#include "tracemount/spix.h"
#include "tracemount/sum.h"

#define SUM_EXT ".spixcounts"

bool tm_sum_name(const char *name)
{
	size_t n = strlen(name), e = strlen(SUM_EXT);
	return n >= 3 + e && strncmp(name, "SUM", 3) == 0 && strcmp(name + n - e, SUM_EXT) == 0;
}

/* A member: a whole spixcounts file, its header and attributes. */
struct member {
	char *path;
	uint32_t tsize, tsum, nbb;
	struct stat st;
};

/* Whether the file at path is a whole spixcounts file, detected as detection does it, from
 * the same read of its head: then its header and attributes are in m. */
static bool read_member(struct tm_context *ctx, int dirfd, const char *path, struct member *m)
{
	struct tm_source src;
	uint8_t head[TM_PROBE_HEAD_LEN];
	if (tm_source_open(dirfd, path, &src) < 0)
		return false;
	ssize_t n = tm_source_read(&src, head, sizeof(head), 0);
	bool ok = n >= (ssize_t)TM_SPIX_HEADER && fstat(src.fd, &m->st) == 0;
	tm_source_close(&src);
	if (!ok)
		return false;
	bool be = head[0] == 0x62;
	if (tm_context_detect_head(ctx, path, head, (size_t)n) != tm_format_find("spixcounts") ||
	    tm_spix_word(head, be) != TM_SPIX_MAGIC) /* a gzip one is not summed */
		return false;
	m->tsize = tm_spix_word(head + 4, be);
	m->tsum = tm_spix_word(head + 8, be);
	m->nbb = tm_spix_word(head + 12, be);
	return (uint64_t)m->st.st_size == tm_spix_file_size(m->nbb);
}

static int by_program_then_path(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->tsize != y->tsize)
		return x->tsize < y->tsize ? -1 : 1;
	if (x->tsum != y->tsum)
		return x->tsum < y->tsum ? -1 : 1;
	if (x->nbb != y->nbb)
		return x->nbb < y->nbb ? -1 : 1;
	return strcmp(x->path, y->path);
}

static bool same_program(const struct member *a, const struct member *b)
{
	return a->tsize == b->tsize && a->tsum == b->tsum && a->nbb == b->nbb;
}

/* The spixcounts files of a folder, sorted by program then path. */
static int list_members(struct tm_context *ctx, int dirfd, const char *dir, struct member **out,
			size_t *n_out)
{
	bool here = strcmp(dir, ".") == 0;
	/* a descriptor of its own: a dup would share (and move) the folder's offset */
	int fd = here ? openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		      : tm_open_beneath(dirfd, dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return here ? -errno : fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	struct member *m = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	for (struct dirent *e; !err && (e = readdir(d));) {
		char path[PATH_MAX];
		if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		const char *rel = here ? e->d_name : path;
		if (n == cap) {
			struct member *bigger = realloc(m, (cap = cap ? 2 * cap : 8) * sizeof(*m));
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			m = bigger;
		}
		if (!read_member(ctx, dirfd, rel, &m[n]))
			continue;
		if (!(m[n].path = strdup(rel)))
			err = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	if (!err)
		qsort(m, n, sizeof(*m), by_program_then_path);
	*out = m;
	*n_out = n;
	return err;
}

/* The attributes of a sum of members m[0 .. n), in folder dir. */
static void sum_attrs(int dirfd, const char *dir, const struct member *m, size_t n, struct stat *st)
{
	struct stat folder;
	*st = m[0].st;
	mode_t perm = 07777;
	bool one_uid = true, one_gid = true;
	for (size_t k = 0; k < n; k++) {
		perm &= m[k].st.st_mode;
		one_uid &= m[k].st.st_uid == m[0].st.st_uid;
		one_gid &= m[k].st.st_gid == m[0].st.st_gid;
		if (m[k].st.st_mtim.tv_sec > st->st_mtim.tv_sec ||
		    (m[k].st.st_mtim.tv_sec == st->st_mtim.tv_sec &&
		     m[k].st.st_mtim.tv_nsec > st->st_mtim.tv_nsec))
			st->st_mtim = m[k].st.st_mtim;
	}
	/* owners differ: only what all may read */
	mode_t others = perm & 07;
	if (!one_uid)
		perm = (perm & ~(mode_t)0700) | (perm & others << 6);
	if (!one_gid)
		perm = (perm & ~(mode_t)070) | (perm & others << 3);
	/* members added or removed change the folder, hence the sum's identity */
	if (tm_lstat_beneath(dirfd, dir, &folder) == 0 &&
	    (folder.st_mtim.tv_sec > st->st_mtim.tv_sec ||
	     (folder.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	      folder.st_mtim.tv_nsec > st->st_mtim.tv_nsec)))
		st->st_mtim = folder.st_mtim;
	st->st_mode = S_IFREG | (perm & 0777);
	st->st_ino = 0;
	st->st_nlink = 1;
}

/* Whether a file in the folder has the sum's name, and so hides it. */
static bool hidden(int dirfd, const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return tm_lstat_beneath(dirfd, path, &st) == 0;
}

void tm_sums_free(struct tm_sum *sums, int n)
{
	for (int k = 0; sums && k < n; k++) {
		for (unsigned i = 0; i < sums[k].n_members; i++)
			free(sums[k].members[i]);
		free(sums[k].members);
	}
	free(sums);
}

/* The end of the group of members of one program that starts at m[i]. */
static size_t group_end(const struct member *m, size_t n, size_t i)
{
	size_t j = i;
	while (j < n && same_program(&m[i], &m[j]))
		j++;
	return j;
}

int tm_sums_of(struct tm_context *ctx, int dirfd, const char *dir, struct tm_sum **out)
{
	struct member *m = NULL;
	size_t n = 0, groups = 0;
	int err = list_members(ctx, dirfd, dir, &m, &n), n_sums = 0;
	struct tm_sum *sums = NULL;
	for (size_t i = 0, j; !err && i < n; i = j) {
		j = group_end(m, n, i);
		groups += j - i >= 2;
	}
	if (!err && groups && !(sums = calloc(groups, sizeof(*sums))))
		err = -ENOMEM;
	for (size_t i = 0, j; !err && i < n; i = j) {
		j = group_end(m, n, i);
		if (j - i < 2)
			continue;
		struct tm_sum *s = &sums[n_sums];
		if (groups == 1)
			snprintf(s->name, sizeof(s->name), "SUM" SUM_EXT);
		else
			snprintf(s->name, sizeof(s->name), "SUM.%" PRIu32 ".%08" PRIx32 SUM_EXT,
				 m[i].tsize, m[i].tsum);
		if (hidden(dirfd, dir, s->name))
			continue;
		s->tsize = m[i].tsize;
		s->tsum = m[i].tsum;
		s->nbb = m[i].nbb;
		sum_attrs(dirfd, dir, m + i, j - i, &s->st);
		if (!(s->members = calloc(j - i, sizeof(char *)))) {
			err = -ENOMEM;
			break;
		}
		n_sums++;
		for (size_t k = i; k < j; k++) { /* the paths move to the sum */
			s->members[s->n_members++] = m[k].path;
			m[k].path = NULL;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
	if (err) {
		tm_sums_free(sums, n_sums);
		return err;
	}
	*out = sums;
	return n_sums;
}

int tm_sum_find(struct tm_context *ctx, int dirfd, const char *path, struct tm_sum **out)
{
	struct tm_sum *sums;
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	if (!tm_sum_name(name))
		return -ENOENT;
	if (!slash)
		strcpy(dir, ".");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	int n = tm_sums_of(ctx, dirfd, *dir ? dir : "/", &sums);
	if (n < 0)
		return n;
	for (int k = 0; k < n; k++) {
		if (strcmp(sums[k].name, name) != 0)
			continue;
		struct tm_sum *one = malloc(sizeof(*one));
		if (!one)
			break;
		*one = sums[k];
		sums[k] = sums[n - 1]; /* the found one leaves the array */
		tm_sums_free(sums, n - 1);
		*out = one;
		return 0;
	}
	tm_sums_free(sums, n);
	return -ENOENT;
}

/* The source: its members, and once first read, the sum's bytes and what went wrong making
 * them. Reads of one open file may run in parallel: the first builds the sum under the lock. */
struct sum_bytes {
	pthread_mutex_t lock;
	int dirfd;
	char **members;
	unsigned n_members;
	bool built;
	int err;
	struct tm_blob bytes;
	char problem[160];
	uint64_t n_problems;
};

/* Reads and parses one member. */
static int load_member(int dirfd, const char *path, struct tm_spix_table *t)
{
	struct tm_source src;
	char why[128];
	int err = tm_source_open(dirfd, path, &src);
	if (err)
		return err;
	uint8_t *buf = malloc(src.size + 1);
	ssize_t got = buf ? tm_source_read(&src, buf, src.size, 0) : -ENOMEM;
	tm_source_close(&src);
	err = got < 0 ? (int)got : tm_spix_parse(buf, (size_t)got, t, why, sizeof(why));
	free(buf);
	return err == -EBADMSG ? -EIO : err; /* changed since it was listed */
}

/* The file form of a sum, in memory. */
static int write_sum(const struct tm_spix_table *sum, struct tm_blob *out)
{
	char *bytes = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&bytes, &len);
	if (!f)
		return -ENOMEM;
	int err = tm_spix_write(sum, f);
	if (fclose(f) != 0 && !err)
		err = -ENOMEM;
	if (err) {
		free(bytes);
		return err;
	}
	out->data = (uint8_t *)bytes;
	out->len = len;
	return 0;
}

/* The members' sum, as sadd makes it, in the first member's byte order. */
static int build(struct sum_bytes *b)
{
	struct tm_spix_table sum = {0}, one = {0};
	int err = load_member(b->dirfd, b->members[0], &sum);
	for (unsigned k = 1; !err && k < b->n_members; k++) {
		if ((err = load_member(b->dirfd, b->members[k], &one)) < 0)
			break;
		if (one.nbb != sum.nbb)
			err = -EIO;
		else
			b->n_problems += tm_spix_add(&sum, &one, b->n_problems ? NULL : b->problem,
						     b->n_problems ? 0 : sizeof(b->problem));
		tm_spix_table_free(&one);
	}
	if (!err)
		err = write_sum(&sum, &b->bytes);
	tm_spix_table_free(&sum);
	return err;
}

static ssize_t sum_read(struct tm_source *s, void *buf, size_t len, uint64_t off)
{
	struct sum_bytes *b = s->priv;
	pthread_mutex_lock(&b->lock);
	if (!b->built) {
		b->err = build(b);
		b->built = true;
	}
	pthread_mutex_unlock(&b->lock);
	if (b->err)
		return b->err;
	if (off >= b->bytes.len)
		return 0;
	if (len > b->bytes.len - off)
		len = b->bytes.len - (size_t)off;
	memcpy(buf, b->bytes.data + off, len);
	return (ssize_t)len;
}

static void sum_close(struct tm_source *s)
{
	struct sum_bytes *b = s->priv;
	if (!b)
		return;
	for (unsigned k = 0; k < b->n_members; k++)
		free(b->members[k]);
	free(b->members);
	free(b->bytes.data);
	pthread_mutex_destroy(&b->lock);
	free(b);
	s->priv = NULL;
}

static void sum_report(struct tm_source *s, struct tm_diag *diag)
{
	const struct sum_bytes *b = s->priv;
	if (b->n_problems)
		tm_diag_note(diag,
			     "sadd: %s (%" PRIu64
			     " such problems in all; sadd would stop at the first)",
			     b->problem, b->n_problems);
}

static const struct tm_source_ops sum_ops = {
    .read = sum_read,
    .close = sum_close,
    .report = sum_report,
};

int tm_sum_source_open(int dirfd, const struct tm_sum *s, struct tm_source *out)
{
	struct sum_bytes *b = calloc(1, sizeof(*b));
	if (!b || !(b->members = calloc(s->n_members, sizeof(char *)))) {
		free(b);
		return -ENOMEM;
	}
	memset(out, 0, sizeof(*out));
	out->ops = &sum_ops;
	out->fd = -1;
	out->size = tm_spix_file_size(s->nbb);
	out->priv = b;
	pthread_mutex_init(&b->lock, NULL);
	b->dirfd = dirfd;
	for (; b->n_members < s->n_members; b->n_members++)
		if (!(b->members[b->n_members] = strdup(s->members[b->n_members]))) {
			sum_close(out);
			return -ENOMEM;
		}
	return 0;
}
