/* Program images (derive.h's struct tm_image): which files a trace's derivers get, and their
 * identity, which keys the trace's index (index_file.h), so that another image gives other
 * views and the same one the same index file. The core never reads an image's content but
 * to hash it; the derivers that read images say which files they take (their image_suffix
 * and image_check). doc/calls.md, "Symbols", gives the rules to users:
 *
 *   - the images of every rule (-o image=GLOB:FILE[@OFFSET], or a command's --image
 *     FILE[@OFFSET], which matches every trace) whose glob matches the trace's path, in the
 *     order the rules were given;
 *   - when no rule matches, the first file found beside the trace under the names
 *     tm_image_beside_name gives, for each deriver's image_suffix: one image, at offset 0. */
#ifndef TRACEMOUNT_IMAGES_H
#define TRACEMOUNT_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemount/derive.h"

/* One -o image= or --image. */
struct tm_image_rule {
	char *glob; /* NULL: every trace */
	char *path; /* the file, as the user gave it (made absolute by the context) */
	uint64_t offset;
};

/* Parses "GLOB:FILE[@OFFSET]" (with_glob) or "FILE[@OFFSET]" into rule, allocating its glob
 * and path. GLOB ends at the first ':'. An '@' followed by a digit starts OFFSET, decimal or
 * 0x hex, which must then be a whole number below 2^64 and end the spec; an '@' followed by
 * anything else is part of FILE (so a FILE that ends in "@DIGITS" is given as FILE@0).
 * Returns 0, -EINVAL with why in why (in words a user understands), or -ENOMEM. */
int tm_image_rule_parse(const char *spec, bool with_glob, struct tm_image_rule *rule, char *why,
			size_t why_len);
void tm_image_rule_free(struct tm_image_rule *rule);

/* Whether glob matches the trace at path (relative to the mount's SOURCE): a glob with a '/'
 * matches the whole path, '/' only by '/' (fnmatch's FNM_PATHNAME), one without matches the
 * base name; NULL matches every path. The rule of -o format= too. */
bool tm_image_glob_match(const char *glob, const char *path);

/* The i-th name (from 0) under which an image with suffix (".sym") is looked for beside the
 * trace named name (a base name): name + suffix, then name cut before each '.', '-' or '_',
 * from the last, + suffix ("prog-run2.log": prog-run2.log.sym, prog-run2.sym, prog.sym). Cuts
 * that leave nothing are skipped. Writes it to buf; returns false when there is no i-th name
 * or it does not fit. */
bool tm_image_beside_name(const char *name, const char *suffix, unsigned i, char *buf, size_t len);

/* The images of one trace, open (tm_images_open), and the identity that keys its index. */
struct tm_image_set {
	struct tm_image *image;
	char **names; /* image[k].name's storage */
	size_t n;
	uint64_t identity; /* 0 when n is 0 */
};

/* The images of the trace at path (relative to dirfd, the folder of the traces' paths, or
 * AT_FDCWD), by rules[0 .. n_rules) or else beside it (looked up with tm_lstat_beneath and
 * opened with tm_open_beneath: never through a symbolic link, nor out of dirfd), into set. An
 * image that cannot be opened is in the set with its error; a file found beside the trace that
 * is a symbolic link, with -ELOOP. Returns 0 or -ENOMEM (set then empty). */
int tm_images_open(const struct tm_image_rule *rules, size_t n_rules, int dirfd, const char *path,
		   struct tm_image_set *set);
void tm_images_close(struct tm_image_set *set);

/* The identity of set's images as they are now: for each, in order, its name, offset and
 * error, and for an open one its size, modification time and a hash of its bytes (all of
 * them up to 4 MiB, else the first and last 64 KiB, as a trace's key). Not its inode: index
 * files may be shared by machines. Never 0 for a set with images. */
uint64_t tm_images_identity(const struct tm_image_set *set);

/* The images as derivers take them. */
static inline struct tm_images tm_images_of(const struct tm_image_set *set)
{
	return (struct tm_images){.image = set->image, .n = set->n};
}

/* Opens the image a rule names (an absolute path), without blocking on a FIFO, and checks it
 * is a regular file that every deriver with image_check accepts. Returns 0, or -errno with
 * why in why. */
int tm_image_check(const struct tm_image_rule *rule, char *why, size_t why_len);

#endif
