/* The checks a mount point passes before tracemount mounts on it. */
#ifndef TRACEMOUNT_MOUNTPOINT_H
#define TRACEMOUNT_MOUNTPOINT_H

#include <stdbool.h>
#include <stddef.h>

/* Checks that mountpoint can take a mount of source: a folder, not below source (the daemon
 * would hang on its own mount), not a dead mount; and, unless over_anything (-o nonempty),
 * empty and not a mount point already. Returns 0, or -errno with a message in err. */
int tm_mountpoint_check(const char *source, const char *mountpoint, bool over_anything, char *err,
			size_t err_len);

#endif
