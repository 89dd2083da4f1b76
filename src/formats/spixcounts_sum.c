/* The sums of a folder's spixcounts files, shown as its virtual traces (spixcounts.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spixcounts.h"
#include "tracemount/diag.h"
#include "tracemount/source.h"
#include "spix/spix.h"

#define SUM_EXT ".spixcounts"

bool spix_sum_name(const char *name)
{
	size_t n = strlen(name), e = strlen(SUM_EXT);
	return n >= 3 + e && strncmp(name, "SUM", 3) == 0 && strcmp(name + n - e, SUM_EXT) == 0;
}

/* A member: a whole spixcounts file, its header and attributes. */
struct member {
	char *path; /* the caller's */
	struct tm_spix_header h;
	struct stat st;
};

/* A sum, as a virtual trace's priv: its members' paths, sorted. */
struct sum {
	char **members;
	unsigned n_members;
	uint32_t nbb;
};

/* Whether the file at path is a whole spixcounts file, not compressed: then its header and
 * attributes are in m. */
static bool read_member(int dirfd, char *path, struct member *m)
{
	struct tm_source src;
	uint8_t head[TM_SPIX_HEADER];
	if (tm_source_open(dirfd, path, &src) < 0)
		return false;
	ssize_t n = tm_source_read(&src, head, sizeof(head), 0);
	bool ok = n == (ssize_t)sizeof(head) && fstat(src.fd, &m->st) == 0;
	tm_source_close(&src);
	m->path = path;
	return ok && tm_spix_header(head, sizeof(head), &m->h) &&
	       (uint64_t)m->st.st_size == tm_spix_file_size(m->h.nbb);
}

static int by_program_then_path(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	if (x->h.tsize != y->h.tsize)
		return x->h.tsize < y->h.tsize ? -1 : 1;
	if (x->h.tsum != y->h.tsum)
		return x->h.tsum < y->h.tsum ? -1 : 1;
	if (x->h.nbb != y->h.nbb)
		return x->h.nbb < y->h.nbb ? -1 : 1;
	return strcmp(x->path, y->path);
}

static bool same_program(const struct member *a, const struct member *b)
{
	return a->h.tsize == b->h.tsize && a->h.tsum == b->h.tsum && a->h.nbb == b->h.nbb;
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

void spix_sum_free(void *priv)
{
	struct sum *s = priv;
	if (!s)
		return;
	for (unsigned i = 0; i < s->n_members; i++)
		free(s->members[i]);
	free(s->members);
	free(s);
}

/* The end of the group of members of one program that starts at m[i]. */
static size_t group_end(const struct member *m, size_t n, size_t i)
{
	size_t j = i;
	while (j < n && same_program(&m[i], &m[j]))
		j++;
	return j;
}

/* The sum of members m[0 .. n), as a virtual trace named name. */
static int make_sum(int dirfd, const char *dir, const struct member *m, size_t n, const char *name,
		    struct tm_virtual *v)
{
	struct sum *s = calloc(1, sizeof(*s));
	if (!s || !(s->members = calloc(n, sizeof(char *)))) {
		free(s);
		return -ENOMEM;
	}
	v->priv = s;
	s->nbb = m[0].h.nbb;
	snprintf(v->name, sizeof(v->name), "%s", name);
	sum_attrs(dirfd, dir, m, n, &v->st);
	for (; s->n_members < n; s->n_members++)
		if (!(s->members[s->n_members] = strdup(m[s->n_members].path)))
			return -ENOMEM;
	return 0;
}

int spix_sum_list(int dirfd, const char *dir, char *const *files, unsigned n_files,
		  struct tm_virtual **out)
{
	struct member *m = calloc(n_files + 1, sizeof(*m));
	size_t n = 0, groups = 0;
	if (!m)
		return -ENOMEM;
	for (unsigned k = 0; k < n_files; k++)
		n += read_member(dirfd, files[k], &m[n]);
	qsort(m, n, sizeof(*m), by_program_then_path);
	for (size_t i = 0, j; i < n; i = j) {
		j = group_end(m, n, i);
		groups += j - i >= 2;
	}
	struct tm_virtual *sums = groups ? calloc(groups, sizeof(*sums)) : NULL;
	int n_sums = 0, err = groups && !sums ? -ENOMEM : 0;
	for (size_t i = 0, j; !err && i < n; i = j) {
		char name[sizeof(sums->name)];
		j = group_end(m, n, i);
		if (j - i < 2)
			continue;
		if (groups == 1)
			snprintf(name, sizeof(name), "SUM" SUM_EXT);
		else
			snprintf(name, sizeof(name), "SUM.%" PRIu32 ".%08" PRIx32 SUM_EXT,
				 m[i].h.tsize, m[i].h.tsum);
		if (hidden(dirfd, dir, name))
			continue;
		err = make_sum(dirfd, dir, m + i, j - i, name, &sums[n_sums]);
		n_sums += sums[n_sums].priv != NULL;
	}
	free(m);
	if (err) {
		for (int k = 0; k < n_sums; k++)
			spix_sum_free(sums[k].priv);
		free(sums);
		return err;
	}
	if (sums)
		*out = sums;
	return n_sums;
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
	char problem[TM_SPIX_WHY_LEN]; /* the first of tm_spix_add's */
	uint64_t n_problems;
	char *failed; /* malloc'ed: why there is no sum, a member that no longer fits */
};

/* Reads and parses one member. Returns 0, -errno, or (-EBADMSG, -EFBIG) what tm_spix_parse
 * returns with the reason in why. */
static int load_member(int dirfd, const char *path, struct tm_spix_table *t, char *why,
		       size_t why_len)
{
	struct tm_source src;
	int err = tm_source_open(dirfd, path, &src);
	if (err)
		return err;
	uint8_t *buf = malloc(src.size + 1);
	ssize_t got = buf ? tm_source_read(&src, buf, src.size, 0) : -ENOMEM;
	tm_source_close(&src);
	err = got < 0 ? (int)got : tm_spix_parse(buf, (size_t)got, t, why, why_len);
	free(buf);
	return err;
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

/* The members' sum, as sadd makes it, in the first member's byte order. A member that no
 * longer parses, or has other blocks, changed since the folder was listed: then there is no
 * sum, and b->failed says why (the sum reads as empty, and errors.txt shows it). */
static int build(struct sum_bytes *b)
{
	struct tm_spix_table sum = {0}, one = {0};
	char why[TM_SPIX_WHY_LEN] = "";
	unsigned k;
	int err = load_member(b->dirfd, b->members[0], &sum, why, sizeof(why));
	for (k = 1; !err && k < b->n_members; k++) {
		err = load_member(b->dirfd, b->members[k], &one, why, sizeof(why));
		if (!err && one.nbb != sum.nbb) {
			snprintf(why, sizeof(why), "%" PRIu32 " blocks, not %" PRIu32 " as %s",
				 one.nbb, sum.nbb, b->members[0]);
			err = -EBADMSG;
		}
		if (!err)
			b->n_problems += tm_spix_add(&sum, &one, b->n_problems ? NULL : b->problem,
						     b->n_problems ? 0 : sizeof(b->problem));
		tm_spix_table_free(&one);
	}
	if (!err)
		err = write_sum(&sum, &b->bytes);
	tm_spix_table_free(&sum);
	if ((err == -EBADMSG || err == -EFBIG) && *why) /* k - 1: the member that failed */
		err = asprintf(&b->failed, "%s: %s%s", b->members[k - 1], why,
			       err == -EBADMSG ? " (changed since the folder was listed)" : "") < 0
			  ? -ENOMEM
			  : 0;
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
	if (off >= b->bytes.len) /* also no sum (b->failed) */
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
	free(b->failed);
	pthread_mutex_destroy(&b->lock);
	free(b);
	s->priv = NULL;
}

static void sum_report(struct tm_source *s, struct tm_diag *diag)
{
	const struct sum_bytes *b = s->priv;
	if (b->failed)
		tm_diag_note(diag, "no sum: %s", b->failed);
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

int spix_sum_open(int dirfd, const struct tm_virtual *v, struct tm_source *out)
{
	const struct sum *s = v->priv;
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
