/* The checks a mount point passes before tracemount mounts on it: see mountpoint.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mountpoint.h"

/* A field of /proc/self/mountinfo with its octal escapes (\040 for a space) undone, in place. */
static void unescape(char *s)
{
	char *out = s;
	for (char *in = s; *in; in++) {
		if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' &&
		    in[3] >= '0' && in[3] <= '7') {
			*out++ = (char)((in[1] - '0') << 6 | (in[2] - '0') << 3 | (in[3] - '0'));
			in += 3;
		} else {
			*out++ = *in;
		}
	}
	*out = '\0';
}

/* The last mount at path (absolute, links resolved): its type and source, into type and what.
 * Returns true if there is one. */
static bool find_mount(const char *path, char *type, size_t type_len, char *what, size_t what_len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER */
		char *save, *field = strtok_r(line, " \n", &save);
		for (int i = 0; field && i < 4; i++)
			field = strtok_r(NULL, " \n", &save);
		if (!field)
			continue;
		unescape(field);
		if (strcmp(field, path) != 0)
			continue;
		while ((field = strtok_r(NULL, " \n", &save)) && strcmp(field, "-") != 0)
			;
		char *fstype = field ? strtok_r(NULL, " \n", &save) : NULL;
		char *source = fstype ? strtok_r(NULL, " \n", &save) : NULL;
		if (!source)
			continue;
		unescape(fstype);
		unescape(source);
		snprintf(type, type_len, "%s", fstype);
		snprintf(what, what_len, "%s", source);
		found = true; /* and go on: the last one is on top */
	}
	free(line);
	fclose(f);
	return found;
}

/* The absolute path of path, links resolved: in full if it can be, else all but its last
 * component, which may be a dead mount that no longer resolves. */
static bool absolute_path(const char *path, char *out, size_t len)
{
	char *real = realpath(path, NULL);
	if (real) {
		bool ok = (size_t)snprintf(out, len, "%s", real) < len;
		free(real);
		return ok;
	}
	char *copy = strdup(path);
	if (!copy)
		return false;
	for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/';)
		copy[--n] = '\0';
	char *slash = strrchr(copy, '/');
	const char *base = slash ? slash + 1 : copy;
	if (slash == copy)
		real = strdup("/");
	else if (slash)
		*slash = '\0', real = realpath(copy, NULL);
	else
		real = realpath(".", NULL);
	bool ok =
	    real && (size_t)snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base) < len;
	free(real);
	free(copy);
	return ok;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether the folder path is below the folder source, walking up through "..": by device and
 * inode, so that links and bind mounts of SOURCE are seen through. */
static bool below(const char *path, const struct stat *source)
{
	struct stat st, up;
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool inside = false;
	while (!inside) {
		int parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = parent;
		if (fd < 0 || fstat(fd, &up) < 0 || same_file(&up, &st))
			break; /* the root */
		inside = same_file(&up, source);
		st = up;
	}
	if (fd >= 0)
		close(fd);
	return inside;
}

static bool is_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return true; /* unreadable: the mount itself will say so */
	struct dirent *e;
	while ((e = readdir(d)) && (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0))
		;
	closedir(d);
	return !e;
}

int tm_mountpoint_check(const char *source, const char *mountpoint, bool over_anything, char *err,
			size_t err_len)
{
	struct stat st, src;
	char abs[PATH_MAX], type[256] = "", what[PATH_MAX] = "";
	bool mounted = absolute_path(mountpoint, abs, sizeof(abs)) &&
		       find_mount(abs, type, sizeof(type), what, sizeof(what));
	/* statfs, not stat: the kernel may answer a stat of a dead FUSE mount from its cache */
	struct statfs fs;
	int e = stat(mountpoint, &st) < 0 || (mounted && statfs(mountpoint, &fs) < 0) ? errno : 0;
	if (e) {
		if (e == ENOTCONN && mounted)
			snprintf(err, err_len,
				 "%s: a %s whose daemon is no longer running (%s) is still "
				 "mounted there: unmount it with fusermount3 -u %s",
				 mountpoint, strcmp(type, "fuse.tracemount") ? type : "tracemount",
				 what, mountpoint);
		else if (e == ENOENT)
			snprintf(err, err_len, "mount point %s does not exist", mountpoint);
		else
			snprintf(err, err_len, "mount point %s: %s", mountpoint, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "mount point %s is not a folder", mountpoint);
		return -ENOTDIR;
	}
	/* A mount point below SOURCE: the daemon would look itself up through its own mount and
	 * wait forever on its own requests. Over SOURCE itself is fine: SOURCE is open already,
	 * and its files are not hidden but shown. */
	if (stat(source, &src) == 0 && S_ISDIR(src.st_mode)) {
		if (below(mountpoint, &src)) {
			snprintf(err, err_len,
				 "%s is inside %s: tracemount would read its own mount and hang; "
				 "choose a mount point outside SOURCE (mounting over SOURCE itself "
				 "works)",
				 mountpoint, source);
			return -ELOOP;
		}
		if (same_file(&st, &src) && !mounted)
			return 0;
	}
	if (over_anything)
		return 0;
	if (mounted) {
		snprintf(err, err_len,
			 "%s is already a mount point (%s %s): unmount it first, or give -o "
			 "nonempty to mount over it",
			 mountpoint, type, what);
		return -EBUSY;
	}
	if (!is_empty(mountpoint)) {
		snprintf(err, err_len,
			 "%s is not empty: the mount would hide its files (give -o nonempty to "
			 "mount over them)",
			 mountpoint);
		return -ENOTEMPTY;
	}
	return 0;
}
