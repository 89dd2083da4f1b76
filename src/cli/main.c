/* tracemount: mount a folder of CPU traces as decoded views, or read one view directly. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../fuse/tmfs.h"
#include "commands.h"
#include "tracemount/build_id.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tracemount [options] SOURCE MOUNTPOINT\n"
		"       tracemount cat [--cache DIR|none] [--format NAME]\n"
		"                      [--image IMAGE[@OFFSET]] TRACE VIEW\n"
		"       tracemount ls [--cache DIR|none] [--format NAME]\n"
		"                     [--image IMAGE[@OFFSET]] TRACE|FOLDER\n"
		"       tracemount index [--cache DIR] [--force] [--format GLOB:NAME] [-j N]\n"
		"                        [--shard K/N] PATH...\n"
		"       tracemount index --list | --prune [--cache DIR]\n"
		"       tracemount help [COMMAND] | --help | --help-fuse | --version\n"
		"\n"
		"Mounts SOURCE (a folder of traces, or one trace) read-only, nosuid and nodev at\n"
		"MOUNTPOINT, an empty folder outside SOURCE (or SOURCE itself), showing every\n"
		"recognised trace as a folder of decoded views. Unmount with\n"
		"fusermount3 -u MOUNTPOINT. tracemount index builds the index files of the traces\n"
		"under each PATH ahead of time, N at a time.\n"
		"\n"
		"tracemount options:\n"
		"    -o memory=SIZE         budget of the decoded-chunk cache (default 64M)\n"
		"    -o format=GLOB:NAME    treat files matching GLOB as format NAME (repeatable)\n"
		"    -o image=GLOB:IMAGE[@OFFSET]\n"
		"                           program image whose symbols name the functions of\n"
		"                           traces matching GLOB, its addresses moved by OFFSET\n"
		"                           (repeatable; default: an image beside the trace,\n"
		"                           named like it)\n"
		"    -o cache=DIR|none      folder of index files (default\n"
		"                           $XDG_CACHE_HOME/tracemount, else\n"
		"                           ~/.cache/tracemount); none: indexes in memory only\n"
		"    -o prefetch            index every trace in the background after mounting\n"
		"    -o nonempty            mount over a folder's files, or over another mount\n"
		"    -f, -d, -s, -o allow_other, -o umask= and libfuse's other options:\n"
		"                           see tracemount --help-fuse\n"
		"\n");
	tm_cli_print_formats(out);
}

static int is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* libfuse's options, behind tracemount's own: its list is long and wider than 80 columns. */
static void help_fuse(void)
{
	printf("libfuse's options, which tracemount passes on (tracemount adds -o ro, nosuid,\n"
	       "nodev and auto_unmount; -o umask= never shows a write bit):\n");
	tm_mount_help();
}

/* Chunks of a few hundred KiB are allocated and freed at a high rate. By default glibc maps
 * each with mmap and unmaps it on free, so every chunk costs fresh, zeroed pages; on virtual
 * machines those page faults cost more than decoding. Keep freed memory in the heap instead
 * (the chunk cache's budget bounds it), in one arena: with one per thread, freed chunks sit in
 * arenas other threads do not allocate from (measured: 8 readers, 112 MiB against 84 MiB). */
static void tune_allocator(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 16 << 20);
	mallopt(M_ARENA_MAX, 1);
}

static void version(void)
{
	char libs[256];
	tm_library_versions(libs, sizeof(libs));
	printf("tracemount %s\nlibfuse %s, %s\n", TM_VERSION, tm_mount_libfuse_version(), libs);
}

/* The commands that need no mount, each with its own options and --help. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
    {"cat", tm_cmd_cat},
    {"ls", tm_cmd_ls},
    {"index", tm_cmd_index},
};

static int run_command(int argc, char **argv)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(argv[0], commands[i].name) == 0)
			return commands[i].run(argc, argv);
	return -1;
}

static const char *const command_names[] = {"cat", "ls", "index", "help", NULL};

/* A first operand that is a bare word naming nothing was most likely a command mistyped:
 * say so, with the commands, rather than that some mount point does not exist. Returns an
 * exit status, or -1 when word names a file (or could be a path). */
static int no_such_command(const char *word)
{
	struct stat st;
	if (word[0] == '-' || strchr(word, '/') || lstat(word, &st) == 0)
		return -1;
	const char *nearest = tm_nearest(word, command_names);
	if (nearest) {
		fprintf(stderr,
			"tracemount: no command '%s' (the commands: cat, ls, index, help; nearest: "
			"%s), and no source of that name\n",
			word, nearest);
		return 2;
	}
	fprintf(stderr,
		"tracemount: source %s does not exist, and there is no command of that name (the "
		"commands: cat, ls, index, help)\n",
		word);
	return 1;
}

int main(int argc, char **argv)
{
	tune_allocator();
	if (argc >= 2 && strcmp(argv[1], "help") == 0) {
		if (argc == 2 || is_help(argv[2]) || strcmp(argv[2], "help") == 0) {
			usage(stdout);
			return 0;
		}
		/* `tracemount help cat`: as `tracemount cat --help` */
		char *help_argv[] = {argv[2], "--help", NULL};
		int status = run_command(2, help_argv);
		if (status >= 0)
			return status;
		const char *nearest = tm_nearest(argv[2], command_names);
		fprintf(
		    stderr,
		    "tracemount: help: no command '%s' (the commands: cat, ls, index, help%s%s)\n",
		    argv[2], nearest ? "; nearest: " : "", nearest ? nearest : "");
		return 2;
	}
	if (argc >= 2) {
		int status = run_command(argc - 1, argv + 1);
		if (status >= 0)
			return status;
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (is_help(argv[i])) {
			usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--help-fuse") == 0) {
			help_fuse();
			return 0;
		}
		if (strcmp(argv[i], "-V") == 0 || strcmp(argv[i], "--version") == 0) {
			version();
			return 0;
		}
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	int status = no_such_command(argv[1]);
	return status >= 0 ? status : tm_mount_main(argc, argv);
}
