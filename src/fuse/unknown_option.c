/* libfuse refuses an option it does not know with "fuse: unknown option(s): `-o a,b --c'", in
 * its words and without a hint. While it parses, its log is kept here; on failure each unknown
 * option is said again with the nearest option tracemount or libfuse knows. */
#include <fuse_log.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracemount/util.h"
#include "unknown_option.h"

static char kept[2048];
static size_t kept_len;

/* The options offered as "nearest": tracemount's, then libfuse's mount and library options.
 * Only hints: libfuse alone decides what it accepts. */
static const char *const known[] = {
    "cache",
    "memory",
    "format",
    "image",
    "prefetch",
    "nonempty",
    "allow_other",
    "allow_root",
    "auto_unmount",
    "default_permissions",
    "fsname",
    "subtype",
    "max_read",
    "blkdev",
    "blksize",
    "kernel_cache",
    "auto_cache",
    "noauto_cache",
    "umask",
    "uid",
    "gid",
    "entry_timeout",
    "negative_timeout",
    "attr_timeout",
    "ac_attr_timeout",
    "noforget",
    "remember",
    "modules",
    "hard_remove",
    "use_ino",
    "readdir_ino",
    "direct_io",
    "intr",
    "intr_signal",
    "max_threads",
    "max_idle_threads",
    "clone_fd",
    "debug",
    "ro",
    "rw",
    "nosuid",
    "suid",
    "nodev",
    "dev",
    "noexec",
    "exec",
    "noatime",
    "atime",
    "sync",
    "async",
    "dirsync",
    NULL,
};

static void keep(enum fuse_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (kept_len + 1 >= sizeof(kept))
		return;
	int n = vsnprintf(kept + kept_len, sizeof(kept) - kept_len, fmt, ap);
	if (n > 0)
		kept_len +=
		    (size_t)n < sizeof(kept) - kept_len ? (size_t)n : sizeof(kept) - 1 - kept_len;
}

void tm_unknown_option_listen(void)
{
	kept_len = 0;
	kept[0] = '\0';
	fuse_set_log_func(keep);
}

/* One option, "-o NAME[=VALUE]" when dash_o, else as given ("--foo"). */
static void say_one(const char *opt, size_t len, int dash_o)
{
	char name[64];
	size_t name_len = strcspn(opt, "=");
	if (name_len > len)
		name_len = len;
	snprintf(name, sizeof(name), "%.*s", (int)name_len, opt);
	const char *nearest = dash_o ? tm_nearest(name, known) : NULL;
	fprintf(stderr, "tracemount: unknown option %s%.*s (", dash_o ? "-o " : "", (int)len, opt);
	if (nearest)
		fprintf(stderr, "nearest: -o %s; ", nearest);
	fprintf(stderr, "see tracemount --help)\n");
}

/* The unknown options between ` and ' in libfuse's message; 0, or -1 when it is not that. */
static int say_unknown(const char *text)
{
	static const char lead[] = "fuse: unknown option(s): `";
	if (strncmp(text, lead, strlen(lead)) != 0)
		return -1;
	const char *p = text + strlen(lead), *end = strstr(p, "'\n");
	if (!end)
		return -1;
	int dash_o = 0;
	while (p < end) {
		size_t len = strcspn(p, " ");
		if (p + len > end)
			len = (size_t)(end - p);
		if (len == 2 && strncmp(p, "-o", 2) == 0) {
			dash_o = 1;
		} else if (dash_o) { /* "a,b": the suboptions libfuse gathered */
			for (const char *q = p; q < p + len;) {
				size_t n = strcspn(q, ",");
				if (q + n > p + len)
					n = (size_t)(p + len - q);
				say_one(q, n, 1);
				q += n + 1;
			}
			dash_o = 0;
		} else {
			say_one(p, len, 0);
		}
		p += len + 1;
	}
	return 0;
}

void tm_unknown_option_report(bool failed)
{
	fuse_set_log_func(NULL);
	if (!failed) {
		fputs(kept, stderr);
		return;
	}
	if (say_unknown(kept) < 0) {
		fputs(kept, stderr);
		fprintf(stderr, "tracemount: see tracemount --help for the options\n");
	}
}
