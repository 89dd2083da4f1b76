/* The commands that need no mount. Each returns an exit status: 0, 1 (error) or 2 (usage).
 * Each takes -h/--help (its usage and options on standard output, exit 0); every message it
 * writes starts "tracemount CMD: ". */
#ifndef TRACEMOUNT_COMMANDS_H
#define TRACEMOUNT_COMMANDS_H

#include <stdbool.h>
#include <stdio.h>

struct tm_context;

int tm_cmd_cat(int argc, char **argv);
int tm_cmd_ls(int argc, char **argv);
int tm_cmd_index(int argc, char **argv);

/* Through the mount's tree (fs_cmd.c): `tracemount ls FOLDER`, the names the root of a mount
 * of FOLDER shows, sorted, a folder's ending in "/"; `tracemount cat TRACE report.html`, the
 * trace's page as a mount of TRACE shows it (format: --format's NAME, or NULL). Each returns
 * an exit status, the message written. */
int tm_cli_ls_folder(struct tm_context *ctx, const char *path);
int tm_cli_cat_report(struct tm_context *ctx, const char *path, const char *format);

/* What the commands share (commands.c). cmd is the command's name, "cat", "ls" or "index". */

/* Reports the option getopt_long just refused (it returned '?' or ':', with opterr 0). */
void tm_cli_bad_option(const char *cmd, int c, char *const *argv);

/* Applies --format GLOB:NAME as -o format= does (tm_context_add_override). Returns 0 or an exit
 * status, the message written. */
int tm_cli_add_format(struct tm_context *ctx, const char *cmd, const char *spec);

/* Applies --image IMAGE[@OFFSET] to every trace of ctx, or with_glob GLOB:IMAGE[@OFFSET] to
 * those matching GLOB, as -o image= does (tm_context_add_image): the image is read now.
 * Returns 0 or an exit status (1), the message written. */
int tm_cli_add_image(struct tm_context *ctx, const char *cmd, const char *spec, bool with_glob);

/* Gives ctx the cache folder of index files: cache is --cache's argument, or NULL for the
 * default folder (made with its parents). A folder the user named must open; when the default
 * one cannot, ctx indexes in memory after one warning. Returns 0 or an exit status. */
int tm_cli_use_cache(struct tm_context *ctx, const char *cmd, const char *cache);

/* Sends ctx's warnings (an index file refused, one that cannot be written) to stderr. */
void tm_cli_log_warnings(struct tm_context *ctx, const char *cmd);

/* The formats, one per line, for a command's --help. */
void tm_cli_print_formats(FILE *out);

/* bytes as "12.3 KiB" (powers of 1024: B, KiB, MiB, GiB, TiB), in buf. */
void tm_cli_human_size(char *buf, size_t len, double bytes);

#endif
