/* tracemount: mount a folder of CPU traces as decoded views, or read one view directly. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "../fuse/tmfs.h"
#include "commands.h"
#include "tracemount/build_id.h"
#include "tracemount/registry.h"
#include "tracemount/util.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: tracemount [options] SOURCE MOUNTPOINT\n"
	    "       tracemount cat [--cache DIR|none] [--format NAME] [--image IMAGE[@OFFSET]]\n"
	    "                      TRACE VIEW\n"
	    "       tracemount ls [--cache DIR|none] [--format NAME] [--image IMAGE[@OFFSET]]\n"
	    "                     TRACE\n"
	    "       tracemount index [--cache DIR] [--force] [--format GLOB:NAME] [-j N]\n"
	    "                        [--shard K/N] PATH...\n"
	    "       tracemount index --list | --prune [--cache DIR]\n"
	    "       tracemount help [COMMAND] | --help | --version\n"
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
	    "    -o cache=DIR|none      folder of index files (default "
	    "$XDG_CACHE_HOME/tracemount,\n"
	    "                           else ~/.cache/tracemount); none: indexes in memory only\n"
	    "    -o prefetch            index every trace in the background after mounting\n"
	    "    -o nonempty            mount over a folder's files, or over another mount\n"
	    "    -f, -d, -s, -o allow_other and the other libfuse options below\n"
	    "\n"
	    "formats:");
	for (const struct tm_format *const *f = tm_formats; *f; f++)
		fprintf(out, "\n    %-22s %s (%s)", (*f)->name, (*f)->description,
			(*f)->recognition);
	fprintf(out, "\n");
}

static int is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
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

int main(int argc, char **argv)
{
	tune_allocator();
	if (argc >= 2 && strcmp(argv[1], "help") == 0) {
		if (argc == 2) {
			usage(stdout);
			tm_mount_help();
			return 0;
		}
		/* `tracemount help cat`: as `tracemount cat --help` */
		char *help_argv[] = {argv[2], "--help", NULL};
		int status = run_command(2, help_argv);
		if (status >= 0)
			return status;
		fprintf(stderr, "tracemount: help: no command '%s' (cat, ls, index)\n", argv[2]);
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
			tm_mount_help();
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
	return tm_mount_main(argc, argv);
}
