/* Program images: the rules that choose a trace's, opening them, their identity (images.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "tracemount/derive.h"
#include "tracemount/images.h"
#include "tracemount/source.h"
#include "tracemount/util.h"

/* Images up to this size are hashed whole; larger ones (debug builds: tens of MB, hashed again
 * for each trace that uses them) at their ends, as traces are: where images usually keep their
 * tables of sections and symbols. */
#define HASH_WHOLE (4u << 20)
#define HASH_END   (64u << 10)

static int say(char *why, size_t len, int code, const char *text, const char *arg)
{
	snprintf(why, len, text, arg);
	return code;
}

/* OFFSET: decimal or 0x hex, nothing after it. */
static bool parse_offset(const char *s, uint64_t *out)
{
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

int tm_image_rule_parse(const char *spec, bool with_glob, struct tm_image_rule *rule, char *why,
			size_t why_len)
{
	memset(rule, 0, sizeof(*rule));
	const char *file = spec;
	if (with_glob) {
		const char *colon = strchr(spec, ':');
		if (!colon)
			return say(why, why_len, -EINVAL, "expected GLOB:FILE[@OFFSET]%s", "");
		if (colon == spec)
			return say(why, why_len, -EINVAL,
				   "no GLOB before ':' (give * for every trace)%s", "");
		file = colon + 1;
		if (!(rule->glob = strndup(spec, (size_t)(colon - spec))))
			return -ENOMEM;
	}
	const char *at = strrchr(file, '@');
	size_t file_len = strlen(file);
	if (at && isdigit((unsigned char)at[1])) {
		if (!parse_offset(at + 1, &rule->offset)) {
			tm_image_rule_free(rule);
			return say(why, why_len, -EINVAL,
				   "OFFSET %s: not a number (decimal, or hex after 0x) below 2^64",
				   at + 1);
		}
		file_len = (size_t)(at - file);
	}
	if (!file_len) {
		tm_image_rule_free(rule);
		return say(why, why_len, -EINVAL, "no FILE%s", with_glob ? " after ':'" : "");
	}
	if (!(rule->path = strndup(file, file_len))) {
		tm_image_rule_free(rule);
		return -ENOMEM;
	}
	return 0;
}

void tm_image_rule_free(struct tm_image_rule *rule)
{
	free(rule->glob);
	free(rule->path);
	rule->glob = rule->path = NULL;
}

bool tm_image_glob_match(const char *glob, const char *path)
{
	if (!glob)
		return true;
	bool by_path = strchr(glob, '/') != NULL;
	return fnmatch(glob, by_path ? path : tm_base_name(path), by_path ? FNM_PATHNAME : 0) == 0;
}

bool tm_image_beside_name(const char *name, const char *suffix, unsigned i, char *buf, size_t len)
{
	size_t stem = strlen(name);
	/* i = 0: the whole name; each further i, cut before the next separator from the right */
	for (unsigned k = 0; k < i; k++) {
		while (stem > 0 && !strchr(".-_", name[stem - 1]))
			stem--;
		if (stem <= 1)
			return false; /* nothing, or a separator alone, left */
		stem--;
		while (stem > 0 && strchr(".-_", name[stem - 1]))
			stem--; /* "a--b": one cut, not an empty piece */
		if (!stem)
			return false;
	}
	int n = snprintf(buf, len, "%.*s%s", (int)stem, name, suffix);
	return n > 0 && (size_t)n < len;
}

struct builder {
	struct tm_image_set *set;
	size_t cap;
};

static int add(struct builder *b, const char *name, int fd, int error, uint64_t offset, bool given)
{
	struct tm_image_set *s = b->set;
	if (s->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4;
		struct tm_image *image = realloc(s->image, cap * sizeof(*image));
		if (image)
			s->image = image;
		char **names = image ? realloc(s->names, cap * sizeof(*names)) : NULL;
		if (names)
			s->names = names;
		if (!image || !names)
			return -ENOMEM;
		b->cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	s->names[s->n] = copy;
	s->image[s->n++] = (struct tm_image){.fd = fd < 0 ? -1 : fd,
					     .error = fd < 0 ? error : 0,
					     .name = copy,
					     .offset = offset,
					     .given = given};
	return 0;
}

/* A regular file's descriptor, opened without blocking on what is none, or -errno. follow:
 * through a symbolic link at its end (the user's own path). */
static int open_regular(int dirfd, const char *path, bool follow)
{
	int fd = tm_open_beneath(dirfd, path, O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	struct stat st;
	if (fd < 0)
		return fd;
	int err = fstat(fd, &st) < 0 ? -errno : !S_ISREG(st.st_mode) ? -EINVAL : 0;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The first file beside the trace at path that tm_image_beside_name names, if any. */
static int add_beside(struct builder *b, int dirfd, const char *path)
{
	const char *name = tm_base_name(path);
	size_t dir_len = (size_t)(name - path);
	char cand[NAME_MAX + 1], full[PATH_MAX];
	struct stat st;
	for (unsigned i = 0;; i++) {
		bool any = false;
		for (const struct tm_deriver *const *d = tm_derivers; *d; d++) {
			const char *suffix = (*d)->image_suffix;
			if (!suffix || !tm_image_beside_name(name, suffix, i, cand, sizeof(cand)))
				continue;
			any = true;
			if (!strcmp(cand, name)) /* the trace itself */
				continue;
			int n = snprintf(full, sizeof(full), "%.*s%s", (int)dir_len, path, cand);
			if (n < 0 || (size_t)n >= sizeof(full) ||
			    tm_lstat_beneath(dirfd, full, &st))
				continue;
			int fd = S_ISLNK(st.st_mode) ? -ELOOP : open_regular(dirfd, full, false);
			return add(b, cand, fd, fd, 0, false);
		}
		if (!any)
			return 0;
	}
}

int tm_images_open(const struct tm_image_rule *rules, size_t n_rules, int dirfd, const char *path,
		   struct tm_image_set *set)
{
	struct builder b = {.set = set};
	int err = 0;
	memset(set, 0, sizeof(*set));
	for (size_t k = 0; k < n_rules && !err; k++) {
		if (!tm_image_glob_match(rules[k].glob, path))
			continue;
		int fd = open_regular(AT_FDCWD, rules[k].path, true);
		err = add(&b, rules[k].path, fd, fd, rules[k].offset, true);
		if (err && fd >= 0)
			close(fd);
	}
	if (!err && !set->n)
		err = add_beside(&b, dirfd, path);
	if (err) {
		tm_images_close(set);
		return err;
	}
	set->identity = tm_images_identity(set);
	return 0;
}

void tm_images_close(struct tm_image_set *set)
{
	for (size_t k = 0; k < set->n; k++) {
		if (set->image[k].fd >= 0)
			close(set->image[k].fd);
		free(set->names[k]);
	}
	free(set->image);
	free(set->names);
	memset(set, 0, sizeof(*set));
}

/* A crc of the bytes of fd (size bytes): all of them, or the ends of a large one. A read
 * error enters the hash as itself. */
static uint64_t content_hash(int fd, uint64_t size)
{
	static const size_t block = 1u << 20;
	uint8_t *buf = malloc(block);
	if (!buf)
		return 0;
	uLong sum = crc32_z(0, NULL, 0);
	uint64_t ranges[2][2] = {{0, size}, {0, 0}};
	if (size > HASH_WHOLE) {
		ranges[0][1] = HASH_END;
		ranges[1][0] = size - HASH_END;
		ranges[1][1] = size;
	}
	for (int r = 0; r < 2; r++) {
		for (uint64_t off = ranges[r][0]; off < ranges[r][1];) {
			size_t want =
			    ranges[r][1] - off < block ? (size_t)(ranges[r][1] - off) : block;
			ssize_t got = pread(fd, buf, want, (off_t)off);
			if (got <= 0) {
				sum =
				    crc32_z(sum, (const uint8_t *)"?", 1); /* short: not the same */
				break;
			}
			sum = crc32_z(sum, buf, (size_t)got);
			off += (uint64_t)got;
		}
	}
	free(buf);
	return (uint64_t)sum;
}

uint64_t tm_images_identity(const struct tm_image_set *set)
{
	if (!set->n)
		return 0;
	uint64_t h = tm_fnv1a(TM_FNV_START, "images", 6);
	for (size_t k = 0; k < set->n; k++) {
		const struct tm_image *im = &set->image[k];
		struct stat st;
		h = tm_fnv1a(h, im->name, strlen(im->name) + 1);
		int64_t fields[5] = {(int64_t)im->offset, im->error, 0, 0, 0};
		if (im->fd >= 0 && fstat(im->fd, &st) == 0) {
			fields[2] = (int64_t)st.st_size;
			fields[3] = st.st_mtim.tv_sec;
			fields[4] = st.st_mtim.tv_nsec;
			uint64_t sum = content_hash(im->fd, (uint64_t)st.st_size);
			h = tm_fnv1a(h, &sum, sizeof(sum));
		}
		h = tm_fnv1a(h, fields, sizeof(fields));
	}
	return h ? h : 1;
}

int tm_image_check(const struct tm_image_rule *rule, char *why, size_t why_len)
{
	int fd = open_regular(AT_FDCWD, rule->path, true);
	if (fd < 0)
		return say(why, why_len, fd, "%s",
			   fd == -EINVAL ? "not a regular file" : strerror(-fd));
	int err = 0;
	for (const struct tm_deriver *const *d = tm_derivers; *d && !err; d++)
		if ((*d)->image_check)
			err = (*d)->image_check(fd, why, why_len);
	close(fd);
	return err;
}
