/* `tracemount [options] SOURCE MOUNTPOINT`: option parsing, then libfuse's loop. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>

#include "tracemount/context.h"
#include "tracemount/fs.h"
#include "tracemount/index_file.h"
#include "tracemount/log.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"
#include "mountpoint.h"
#include "tmfs.h"
#include "tmfs_ops.h"
#include "unknown_option.h"

/* Views are immutable while their trace is: cache names for a minute and keep the pages
 * (kernel_cache), but ask for attributes again after a second, so that a trace that changed
 * shows its new sizes (and drops its pages) at the next stat; look up missing names every
 * time so that new files show at once. */
#define DEFAULT_OPTIONS                                                                            \
	"-odefault_permissions,ro,auto_unmount,subtype=tracemount,attr_timeout=1,entry_timeout="   \
	"60,negative_"                                                                             \
	"timeout=0"

struct mount_opts {
	char *source;
	char *mountpoint; /* a copy: libfuse parses its own */
	char *cache;
	char *memory;
	int prefetch;
	int nonempty; /* mount over a folder's files or another mount */
	char **formats;
	unsigned n_formats;
	char **images; /* -o image=, in order */
	unsigned n_images;
	int bad;
};

enum { KEY_FORMAT, KEY_IMAGE, KEY_UMASK };

static const struct fuse_opt mount_specs[] = {
    {"cache=%s", offsetof(struct mount_opts, cache), 0},
    {"memory=%s", offsetof(struct mount_opts, memory), 0},
    {"prefetch", offsetof(struct mount_opts, prefetch), 1},
    {"nonempty", offsetof(struct mount_opts, nonempty), 1},
    FUSE_OPT_KEY("format=", KEY_FORMAT),
    FUSE_OPT_KEY("image=", KEY_IMAGE),
    FUSE_OPT_KEY("umask=", KEY_UMASK),
    FUSE_OPT_END,
};

/* Appends a copy of value to the list *list of *n: 0, or -1 (no memory) with o->bad set. */
static int keep(char ***list, unsigned *n, const char *value, struct mount_opts *o)
{
	char **l = realloc(*list, (*n + 1) * sizeof(*l));
	if (l)
		*list = l; /* before anything else can fail: the old array is gone */
	if (!l || !(l[*n] = strdup(value))) {
		o->bad = 1;
		return -1;
	}
	(*n)++;
	return 0;
}

/* -o umask=: passed on to libfuse with the write bits added, so that the mount, which is
 * read-only, never shows a w whatever the user's umask says. */
static int pass_umask(const char *value, struct fuse_args *outargs, struct mount_opts *o)
{
	char *end, arg[32];
	unsigned long umask = strtoul(value, &end, 8);
	if (!*value || *end || umask > 0777) {
		fprintf(stderr, "tracemount: -o umask=%s: not an octal mode (such as 022)\n",
			value);
		o->bad = 1;
		return -1;
	}
	snprintf(arg, sizeof(arg), "-oumask=0%lo", umask | 0222);
	return fuse_opt_add_arg(outargs, arg);
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct mount_opts *o = data;
	if (key == FUSE_OPT_KEY_NONOPT && !o->source) {
		o->source = strdup(arg);
		return 0;
	}
	if (key == FUSE_OPT_KEY_NONOPT && !o->mountpoint)
		o->mountpoint = strdup(arg);
	if (key == KEY_FORMAT)
		return keep(&o->formats, &o->n_formats, arg + strlen("format="), o);
	if (key == KEY_IMAGE)
		return keep(&o->images, &o->n_images, arg + strlen("image="), o);
	if (key == KEY_UMASK)
		return pass_umask(arg + strlen("umask="), outargs, o);
	return 1;
}

static void free_opts(struct mount_opts *o)
{
	for (unsigned i = 0; i < o->n_formats; i++)
		free(o->formats[i]);
	free(o->formats);
	for (unsigned i = 0; i < o->n_images; i++)
		free(o->images[i]);
	free(o->images);
	free(o->source);
	free(o->mountpoint);
	free(o->cache);
	free(o->memory);
}

/* Applies -o image= to ctx: each image is read now, so that a mistake stops the mount.
 * Returns 0 or an exit status. */
static int add_images(struct mount_opts *o, struct tm_context *ctx)
{
	char why[PATH_MAX + 256];
	for (unsigned i = 0; i < o->n_images; i++) {
		if (tm_context_add_image(ctx, o->images[i], true, why, sizeof(why)) == 0)
			continue;
		fprintf(stderr, "tracemount: -o image=%s: %s\n", o->images[i], why);
		return 1;
	}
	return 0;
}

static void say_unknown_format(const char *spec)
{
	char hint[1024];
	const char *name = strrchr(spec, ':') + 1; /* tm_context_add_override found the ':' */
	tm_format_suggest(name, hint, sizeof(hint));
	fprintf(stderr, "tracemount: -o format=%s: no format %s (%s)\n", spec, name, hint);
}

/* Applies tracemount's -o memory, -o format and -o image to a new context; returns 0 or an
 * exit status. */
static int make_context(struct mount_opts *o, struct tm_context **ctx)
{
	uint64_t memory = TM_DEFAULT_MEMORY;
	if (o->memory && tm_parse_size(o->memory, &memory) < 0) {
		fprintf(stderr, "tracemount: -o memory=%s: not a size (such as 64M)\n", o->memory);
		return 2;
	}
	if (memory < TM_MIN_MEMORY) {
		fprintf(stderr,
			"tracemount: -o memory=%s: below the smallest budget, 1M (a compressed "
			"trace's decoded span must fit)\n",
			o->memory);
		return 2;
	}
	if (tm_context_new((size_t)memory, ctx) < 0) {
		fprintf(stderr, "tracemount: out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < o->n_formats; i++) {
		int err = tm_context_add_override(*ctx, o->formats[i]);
		if (err == -EINVAL)
			fprintf(stderr, "tracemount: -o format=%s: expected GLOB:NAME\n",
				o->formats[i]);
		else if (err == -ENOENT)
			say_unknown_format(o->formats[i]);
		if (err) {
			tm_context_free(*ctx);
			*ctx = NULL;
			return err == -ENOMEM ? 1 : 2;
		}
	}
	int status = add_images(o, *ctx);
	if (status) {
		tm_context_free(*ctx);
		*ctx = NULL;
	}
	return status;
}

/* Opens the cache folder of -o cache, or the default one (without which a mount still works,
 * with its indexes in memory). Returns 0 or an exit status. */
static int open_cache(struct mount_opts *o, struct tm_context *ctx)
{
	char dir[PATH_MAX], err_msg[PATH_MAX + 256];
	const char *cache = o->cache;
	if (!cache && tm_index_store_default(dir, sizeof(dir)) == 0)
		cache = dir;
	if (!cache) {
		fprintf(stderr, "tracemount: warning: no cache folder (neither XDG_CACHE_HOME nor "
				"HOME is set): indexes live in memory only (give -o cache=DIR)\n");
		return 0;
	}
	if (strcmp(cache, "none") == 0 ||
	    tm_context_set_store(ctx, cache, !o->cache, err_msg, sizeof(err_msg)) == 0)
		return 0;
	if (o->cache) {
		fprintf(stderr, "tracemount: -o cache: %s\n", err_msg);
		return 1;
	}
	fprintf(stderr,
		"tracemount: warning: %s; index files are not kept, indexes live in memory only "
		"(give -o cache=DIR)\n",
		err_msg);
	return 0;
}

/* The mount table records SOURCE as an absolute path (links resolved): the path given may be
 * relative to a folder that means nothing to whoever reads /proc/mounts. */
static int add_default_options(struct fuse_args *args, const char *given)
{
	char *fsname = NULL, *real = realpath(given, NULL);
	const char *source = real ? real : given;
	size_t len = strlen("-o") + strlen("fsname=tracemount:") + 2 * strlen(source) + 1;
	char *opt = malloc(len);
	if (!opt) {
		free(real);
		return -1;
	}
	snprintf(opt, len, "fsname=tracemount:%s", source);
	free(real);
	int err = fuse_opt_add_opt_escaped(&fsname, opt);
	free(opt);
	if (err)
		return err;
	size_t n = strlen(fsname) + 3;
	char *dash_o = malloc(n);
	if (!dash_o) {
		free(fsname);
		return -1;
	}
	snprintf(dash_o, n, "-o%s", fsname);
	free(fsname);
	err = fuse_opt_insert_arg(args, 1, DEFAULT_OPTIONS);
	if (!err)
		err = fuse_opt_insert_arg(args, 2, dash_o);
	/* last, so that a user's -o rw, suid or dev (mount.fuse3 passes dev,suid) cannot undo
	 * them: a read-only view of a folder is no place for privilege */
	if (!err)
		err = fuse_opt_add_arg(args, "-oro,nosuid,nodev");
	free(dash_o);
	return err;
}

/* -f: problems go to standard error; in the background, to syslog. */
static void log_stderr(int priority, const char *line)
{
	(void)priority;
	fprintf(stderr, "tracemount: %s\n", line);
}

static void log_syslog(int priority, const char *line)
{
	syslog(priority, "%s", line);
}

static int run_loop(struct fuse *fuse, const struct fuse_cmdline_opts *cmd)
{
	if (cmd->singlethread)
		return fuse_loop(fuse);
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)cmd->clone_fd);
	if (cmd->max_idle_threads != UINT_MAX) /* UINT_MAX: not given, libfuse's default */
		fuse_loop_cfg_set_idle_threads(cfg, cmd->max_idle_threads);
	if (cmd->max_threads != UINT_MAX)
		fuse_loop_cfg_set_max_threads(cfg, cmd->max_threads);
	int ret = fuse_loop_mt(fuse, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

const char *tm_mount_libfuse_version(void)
{
	return fuse_pkgversion();
}

void tm_mount_help(void)
{
	printf("\nFUSE options:\n");
	fuse_cmdline_help();
	fuse_lib_help(&(struct fuse_args)FUSE_ARGS_INIT(0, NULL));
}

/* The device of the file system just mounted at mountpoint, asking it nothing (its loop is
 * not serving yet), or 0 when it cannot be told. */
static dev_t mount_device(const char *mountpoint)
{
	struct statx stx;
	if (statx(AT_FDCWD, mountpoint, AT_STATX_DONT_SYNC, 0, &stx) < 0)
		return 0;
	return makedev(stx.stx_dev_major, stx.stx_dev_minor);
}

/* fuse_new, an option it does not know said in tracemount's words (unknown_option.h). */
static struct fuse *new_fuse(struct fuse_args *args, struct tm_fs *fs)
{
	tm_unknown_option_listen();
	struct fuse *fuse = fuse_new(args, &tm_fuse_operations, sizeof(tm_fuse_operations), fs);
	tm_unknown_option_report(!fuse);
	return fuse;
}

/* Serves the mounted filesystem until it is stopped: 0 when that was asked for (a signal, an
 * unmount), 1 on an error. */
static int serve(struct fuse *fuse, const struct fuse_cmdline_opts *cmd, struct tm_fs *fs,
		 bool prefetch)
{
	struct tm_context *ctx = fs->ctx;
	if (fuse_daemonize(cmd->foreground) != 0 ||
	    fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		return 1;
	if (!cmd->foreground)
		openlog("tracemount", LOG_PID, LOG_DAEMON);
	tm_context_set_log(ctx, cmd->foreground ? log_stderr : log_syslog);
	if (prefetch && tm_fs_prefetch_all(fs) < 0)
		tm_log(tm_context_logger(ctx), LOG_ERR,
		       "-o prefetch: cannot start indexing in the background");
	/* The loop returns the number of the signal that stopped it (SIGTERM, SIGINT, SIGHUP):
	 * a stop that was asked for, not a failure, which is a negative errno. */
	int loop = run_loop(fuse, cmd);
	if (loop < 0) /* say why the exit status is 1: libfuse's reasons are not all logged */
		tm_log(tm_context_logger(ctx), LOG_ERR, "the FUSE session ended on error %d: %s",
		       loop, strerror(-loop));
	fuse_remove_signal_handlers(fuse_get_session(fuse));
	return loop < 0 ? 1 : 0;
}

int tm_mount_main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = {0};
	struct mount_opts o = {0};
	struct tm_context *ctx = NULL;
	struct tm_fs fs = {.root_fd = -1};
	struct fuse *fuse = NULL;
	struct tm_fuse_watch watch; /* for the passes' waiters, until the context is freed */
	/* the longest message names three paths (tm_mountpoint_check's for a dead mount) */
	char err_msg[3 * PATH_MAX + 256];
	int status = 2;

	if (fuse_opt_parse(&args, &o, mount_specs, opt_proc) < 0 || o.bad)
		goto out_usage;
	if (!o.source || !o.mountpoint) {
		fprintf(stderr,
			"tracemount: %s is missing (usage: tracemount [options] SOURCE "
			"MOUNTPOINT; see tracemount --help)\n",
			o.source ? "MOUNTPOINT" : "SOURCE");
		goto out;
	}
	struct stat st; /* libfuse would call a missing mount point a usage error */
	if (stat(o.mountpoint, &st) < 0 &&
	    tm_mountpoint_check(o.source, o.mountpoint, o.nonempty, err_msg, sizeof(err_msg)) < 0) {
		fprintf(stderr, "tracemount: %s\n", err_msg);
		status = 1;
		goto out;
	}
	if (fuse_parse_cmdline(&args, &cmd) < 0 || !cmd.mountpoint)
		goto out_usage;
	if (add_default_options(&args, o.source) < 0)
		goto out;
	/* fuse_new fails on options it does not know, and says which: usage errors first */
	if (!(fuse = new_fuse(&args, &fs)))
		goto out; /* status 2, the option named */
	if ((status = make_context(&o, &ctx)) != 0)
		goto out_destroy;
	status = 1;
	if (tm_fs_init(&fs, ctx, o.source, err_msg, sizeof(err_msg)) < 0 ||
	    tm_mountpoint_check(o.source, o.mountpoint, o.nonempty, err_msg, sizeof(err_msg)) < 0) {
		fprintf(stderr, "tracemount: %s\n", err_msg);
		goto out_destroy;
	}
	if (open_cache(&o, ctx) != 0)
		goto out_destroy;
	if (fuse_mount(fuse, cmd.mountpoint) != 0)
		goto out_destroy;
	/* before any thread serves or walks: below SOURCE the mount is never entered */
	tm_context_set_own_device(ctx, mount_device(cmd.mountpoint));
	watch = (struct tm_fuse_watch){fuse, cmd.mountpoint, tm_context_own_device(ctx)};
	tm_context_set_abandoned(ctx, tm_fuse_request_abandoned, &watch);
	status = serve(fuse, &cmd, &fs, o.prefetch);
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
	goto out;
out_usage:
	fprintf(stderr, "tracemount: see tracemount --help for the options\n");
	status = 2;
out:
	tm_fs_destroy(&fs);
	tm_context_free(ctx);
	free(cmd.mountpoint);
	free_opts(&o);
	fuse_opt_free_args(&args);
	return status;
}
