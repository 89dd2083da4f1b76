/* The tar reader: one pass over an archive's bytes (decompressed, when the archive is
 * compressed) that gives each member in turn, as GNU tar, bsdtar and Python's tarfile list them.
 *
 * Understood: ustar and old (v7) headers; GNU long names and link names ('L', 'K'); pax
 * extended headers ('x', and global 'g') for path, linkpath, size, mtime, uid and gid; base-256
 * numbers; sparse members in GNU's old form ('S' with its extension headers) and in pax's 0.0,
 * 0.1 and 1.0 forms; hard links ('1'), symbolic links ('2') and folders ('5'). Devices, FIFOs
 * and the like are skipped, said once each. The archive ends at two zero blocks, at the end of
 * the bytes, or at the first block that is no header (a bad checksum): what comes before is
 * given, and the problem is reported with its byte offset. */
#ifndef TRACEMOUNT_TAR_H
#define TRACEMOUNT_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tm_source;
struct tm_diag;

#define TM_TAR_BLOCK 512u

enum tm_member_type {
	TM_MEMBER_FILE,
	TM_MEMBER_DIR,
	TM_MEMBER_SYMLINK,
	TM_MEMBER_HARDLINK, /* link: the path of the member whose bytes it shares */
};

/* A run of a sparse member's data: size bytes at offset of the member, stored in the archive
 * back to back, in order. */
struct tm_sparse_run {
	uint64_t offset, size;
};

/* One member as the reader gives it; its pointers are valid during the callback only. */
struct tm_tar_member {
	const char *path; /* normalised: no leading "/" or "./", no "//", no trailing "/" */
	const char *link; /* SYMLINK: its target as written; HARDLINK: a normalised path */
	enum tm_member_type type;
	uint64_t header; /* archive offset of its first header block (long names included) */
	uint64_t offset; /* archive offset of its stored data */
	uint64_t size;	 /* bytes of the member (of a sparse member: with its holes) */
	uint64_t stored; /* bytes of data stored in the archive (fewer if it was cut) */
	bool cut;	 /* the archive ends inside its data: stored is what is there */
	int64_t mtime;
	uint32_t mode, uid, gid;
	const struct tm_sparse_run *runs; /* NULL unless sparse */
	uint32_t n_runs;
	/* The first head_len bytes of the member (holes read as zeros), for detection. */
	const uint8_t *head;
	size_t head_len;
};

/* Called for each member, in archive order; a non-zero return stops the pass and is
 * returned. */
typedef int (*tm_tar_member_fn)(void *arg, const struct tm_tar_member *m);

struct tm_tar_options {
	/* Bytes of each file member's head to give (head_len): head_min, or as many as
	 * head_more(name, head, head_min) asks for (optional), at most head_max. */
	size_t head_min, head_max;
	size_t (*head_more)(const char *name, const uint8_t *head, size_t len);
	/* in reads in order only (a decompressing scan): data is read through, never skipped */
	bool sequential;
};

/* Reads the archive in (from offset 0) and calls fn for each member. Problems go to diag as
 * "offset N: ..." entries. Sets *end to the offset after the last block read. Returns 0 (the
 * archive was read to its end, cleanly or not), fn's non-zero return, or -errno (a read
 * error, -ENOMEM). */
int tm_tar_read(struct tm_source *in, const struct tm_tar_options *opt, tm_tar_member_fn fn,
		void *arg, struct tm_diag *diag, uint64_t *end);

/* Whether block (TM_TAR_BLOCK bytes) is a tar header: its checksum holds, and it is not all
 * zeros. For detection by content. */
bool tm_tar_is_header(const uint8_t *block);

/* Normalises a member's path into out (size bytes): drops leading "/" and "./", empty and "."
 * components and a trailing "/". Returns the length, 0 for an empty path (the archive's root),
 * -ENAMETOOLONG for a component longer than NAME_MAX, or -EINVAL for a ".." component or a
 * path that does not fit. */
int tm_tar_normalise(const char *path, char *out, size_t size);

#endif
