/* The cache folder (index_file.h's tm_index_store): opening it, its files written atomically
 * and read back with the checks every file of it gets. What index_file.c and the other files
 * of the folder (archive.h's) share. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "index_store.h"
#include "tracemount/index_file.h"

int tm_index_store_default(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && *xdg == '/')
		snprintf(buf, len, "%s/tracemount", xdg);
	else if (home && *home)
		snprintf(buf, len, "%s/.cache/tracemount", home);
	else
		return -ENOENT;
	return 0;
}

int tm_index_store_say(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

/* mkdir -p, each new folder 0700. */
static int make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = '\0';
		int r = mkdir(path, 0700);
		*p = c;
		if (r < 0 && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
	}
}

/* The folder dir is in, as dir names it ("." for a bare name), in buf. */
static void parent_of(const char *dir, char *buf, size_t len)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	while (n && dir[n - 1] != '/')
		n--;
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (!n)
		snprintf(buf, len, ".");
	else
		snprintf(buf, len, "%.*s", (int)n, dir);
}

/* Creates the folder dir (as the user named it: shown in err) if it is missing, its parents
 * too when parents is true, and opens it at path (dir made absolute), checking it is the
 * user's. Returns the fd, or -errno with a message in err. */
static int open_folder(const char *dir, const char *path, bool parents, char *err, size_t err_len)
{
	struct stat st;
	char *copy = strdup(path);
	int r = !copy					   ? -ENOMEM
		: parents				   ? make_dirs(copy)
		: mkdir(path, 0700) < 0 && errno != EEXIST ? -errno
							   : 0;
	free(copy);
	if (r == -ENOENT && !parents) {
		char up[PATH_MAX];
		parent_of(dir, up, sizeof(up));
		return tm_index_store_say(
		    err, err_len, r,
		    "cache folder %s: %s does not exist (only the last folder of a cache "
		    "path is created)",
		    dir, up);
	}
	if (r < 0)
		return tm_index_store_say(err, err_len, r, "cache folder %s: %s", dir,
					  strerror(-r));
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return tm_index_store_say(err, err_len, r, "cache folder %s: %s", dir,
					  strerror(-r));
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return tm_index_store_say(err, err_len, -EPERM,
					  "cache folder %s belongs to uid %u, not to this user",
					  dir, (unsigned)st.st_uid);
	}
	/* A folder made here is 0700; one that was there keeps its mode, whatever it is: its
	 * owner chose it, and each index file is 0600 on its own. */
	return fd;
}

/* A writer's temporary file: ".NAME.tmi.PID.X" (an index file's) or ".NAME.tma.PID.X" (an
 * archive's table), NAME 16 hex digits. */
static bool is_temporary(const char *name)
{
	if (name[0] != '.')
		return false;
	for (int i = 1; i <= 16; i++)
		if (!strchr("0123456789abcdef", name[i]) || !name[i])
			return false;
	return (strncmp(name + 17, ".tmi.", 5) == 0 || strncmp(name + 17, ".tma.", 5) == 0) &&
	       name[22];
}

/* Whether the writer of the temporary file name is gone: it holds the file's lock while it
 * writes (tm_index_store_write), and the lock goes with the process, on this machine or on
 * another sharing the folder. Where the folder takes no lock, by age. Sets *st. */
static bool writer_gone(int dirfd, const char *name, struct stat *st)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	bool gone;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		gone = true;
	else
		gone = errno != EWOULDBLOCK && st->st_mtime < time(NULL) - TM_STALE_TMP_SECONDS;
	close(fd); /* and the lock taken */
	return gone;
}

/* Calls fn for each temporary file of the folder; stops at fn's first non-zero. */
static int each_temporary(int dirfd, int (*fn)(void *arg, int dirfd, const char *name), void *arg)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	struct dirent *e;
	int r = 0;
	while (!r && (e = readdir(d)))
		if (is_temporary(e->d_name))
			r = fn(arg, dirfd, e->d_name);
	closedir(d);
	return r;
}

static int remove_if_gone(void *arg, int dirfd, const char *name)
{
	struct stat st;
	(void)arg;
	if (writer_gone(dirfd, name, &st) && st.st_mtime < time(NULL) - TM_STALE_TMP_SECONDS)
		unlinkat(dirfd, name, 0);
	return 0;
}

/* Removes the temporary files of writers that died while writing, once they are old too: a
 * folder shared by machines may take locks on one machine only, and a live writer's file is
 * seconds old. Best effort: a file left is only space. (--prune takes the lock's word.) */
static void remove_stale(int dirfd)
{
	each_temporary(dirfd, remove_if_gone, NULL);
}

struct temporaries {
	int (*fn)(void *arg, const struct tm_index_temporary *t);
	void *arg;
};

static int tell_temporary(void *arg, int dirfd, const char *name)
{
	struct temporaries *ts = arg;
	struct tm_index_temporary t = {0};
	struct stat st = {0};
	snprintf(t.name, sizeof(t.name), "%s", name);
	t.writer_gone = writer_gone(dirfd, name, &st);
	if (!S_ISREG(st.st_mode) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* gone meanwhile: its writer renamed it */
	t.size = (uint64_t)st.st_size;
	t.written = st.st_mtim;
	return ts->fn(ts->arg, &t);
}

int tm_index_store_temporaries(const struct tm_index_store *s,
			       int (*fn)(void *arg, const struct tm_index_temporary *t), void *arg)
{
	struct temporaries ts = {fn, arg};
	return each_temporary(tm_index_store_fd(s), tell_temporary, &ts);
}

int tm_index_store_remove_temporary(const struct tm_index_store *s, const char *name)
{
	struct stat st;
	int dirfd = tm_index_store_fd(s);
	if (!is_temporary(name) || strchr(name, '/'))
		return -EINVAL;
	if (!writer_gone(dirfd, name, &st))
		return -EBUSY;
	return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
}

int tm_index_store_open(struct tm_index_store *s, const char *dir, bool parents, char *err,
			size_t err_len)
{
	char cwd[PATH_MAX];
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	if (!*dir) /* not the current folder: a value left out by mistake */
		return tm_index_store_say(
		    err, err_len, -EINVAL,
		    "cache folder '': an empty name (name a folder, or none)");
	/* absolute: the folder is opened again by its path when it is deleted, after the daemon
	 * changed its current folder */
	if (dir[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return tm_index_store_say(err, err_len, -errno, "cache folder %s: %s", dir,
					  strerror(errno));
	if ((dir[0] == '/' ? !(s->dir = strdup(dir)) : asprintf(&s->dir, "%s/%s", cwd, dir) < 0)) {
		s->dir = NULL;
		return tm_index_store_say(err, err_len, -ENOMEM, "out of memory");
	}
	int fd = open_folder(dir, s->dir, parents, err, err_len);
	if (fd < 0) {
		free(s->dir);
		s->dir = NULL;
		return fd;
	}
	s->dirfd = fd;
	pthread_mutex_init(&s->lock, NULL);
	remove_stale(fd);
	return 0;
}

void tm_index_store_close(struct tm_index_store *s)
{
	if (!s->dir)
		return; /* never opened, or closed */
	close(s->dirfd);
	for (size_t i = 0; i < s->n_old_fds; i++)
		close(s->old_fds[i]);
	free(s->old_fds);
	free(s->dir);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
}

/* The folder's fd for one load or store: when the folder was deleted since it was opened
 * (an operator cleared the cache, maybe making it again), the folder at its path, opened
 * again. The fd it replaces stays open until the store closes: another thread may be using
 * it. A folder that cannot be opened again leaves the deleted one, where loads find nothing
 * and stores fail, until a later call succeeds. */
int tm_index_store_fd(const struct tm_index_store *cs)
{
	/* a const store's fd is state, not content: loads and stores take it const */
	struct tm_index_store *s = (struct tm_index_store *)cs;
	struct stat st;
	char err[PATH_MAX + 128];
	pthread_mutex_lock(&s->lock);
	int fd = s->dirfd;
	if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
		int *old = realloc(s->old_fds, (s->n_old_fds + 1) * sizeof(*old));
		int fresh = old ? open_folder(s->dir, s->dir, false, err, sizeof(err)) : -ENOMEM;
		if (old)
			s->old_fds = old;
		if (fresh >= 0) {
			old[s->n_old_fds++] = fd;
			s->dirfd = fd = fresh;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return fd;
}

static int write_all(int fd, const void *p, size_t n)
{
	for (const char *b = p; n;) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int tm_index_store_write(const struct tm_index_store *s, const char *name,
			 const struct iovec *parts, size_t n)
{
	static atomic_uint serial;
	char tmp[NAME_MAX + 1];
	int dirfd = tm_index_store_fd(s); /* one folder for the file and its rename */
	int fd = -1;
	/* a name of its own per writer: daemons and machines share the folder. The process id
	 * alone is not enough: containers on several machines (a Kubernetes indexed Job, Slurm
	 * array tasks in containers) often run with the same one, so the clock, a counter and
	 * the stack's address are mixed in, and a name taken (O_EXCL) is tried again with another
	 * rather than failing the store. */
	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t mix = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		mix ^= (uint64_t)(uintptr_t)&tmp << 16 ^ (uint64_t)random() << 32 ^
		       (uint64_t)atomic_fetch_add(&serial, 1) * 0x9e3779b97f4a7c15ull;
		snprintf(tmp, sizeof(tmp), ".%.200s.%ld.%" PRIx64, name, (long)getpid(), mix);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	/* held until the rename: a prune tells a live writer's file by it (writer_gone) */
	(void)flock(fd, LOCK_EX | LOCK_NB);
	int err = 0;
	for (size_t i = 0; i < n && !err; i++)
		if (parts[i].iov_len)
			err = write_all(fd, parts[i].iov_base, parts[i].iov_len);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

/* Reads n bytes at off. Returns 0, 1 when the file ends first, or -errno. */
int tm_index_store_read_at(int fd, void *p, size_t n, uint64_t off)
{
	for (char *b = p; n;) {
		ssize_t r = pread(fd, b, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 1;
		b += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Opens the index file name in the folder dirfd for reading, without blocking on what is no
 * regular file (a FIFO, a device), and checks it is a regular file of this user's that
 * others cannot write. Returns the fd, with *bad set when the file is refused; -ENOENT; or
 * the -errno of a system error. */
int tm_index_store_open_file(int dirfd, const char *name, size_t least, struct stat *st,
			     const char **bad)
{
	*bad = NULL;
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		switch (errno) {
		case ELOOP: *bad = "a symbolic link"; return -EBADMSG;
		case ENXIO:
		case ENODEV: *bad = "not a regular file"; return -EBADMSG;
		case EACCES:
		case EPERM: *bad = "not readable"; return -EBADMSG;
		default: return -errno;
		}
	}
	if (fstat(fd, st) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode))
		*bad = "not a regular file";
	else if (st->st_uid != geteuid())
		*bad = "owned by another user";
	else if (st->st_mode & 022)
		*bad = "writable by others";
	else if ((uint64_t)st->st_size < least)
		*bad = "truncated or overlong";
	/* reads wait again: a file system of the network may honour O_NONBLOCK */
	else if (fcntl(fd, F_SETFL, 0) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int tm_index_store_read(const struct tm_index_store *s, const char *name, size_t least,
			uint8_t **data, size_t *len, const char **bad)
{
	struct stat st;
	*data = NULL;
	int fd = tm_index_store_open_file(tm_index_store_fd(s), name, least, &st, bad);
	if (fd < 0 || *bad) {
		if (fd >= 0)
			close(fd);
		return fd < 0 && !*bad ? fd : -EBADMSG;
	}
	int err = 0;
	if ((uint64_t)st.st_size > SIZE_MAX - 1) {
		*bad = "truncated or overlong";
		err = -EBADMSG;
	} else if (!(*data = malloc((size_t)st.st_size + 1))) {
		err = -ENOMEM;
	} else if ((err = tm_index_store_read_at(fd, *data, (size_t)st.st_size, 0)) == 1) {
		*bad = "truncated or overlong";
		err = -EBADMSG;
	}
	close(fd);
	if (err) {
		free(*data);
		*data = NULL;
	}
	*len = (size_t)st.st_size;
	return err;
}
