#ifndef TRACEMOUNT_TMFS_OPS_H
#define TRACEMOUNT_TMFS_OPS_H

#include <fuse.h>
#include <stdbool.h>
#include <sys/types.h>

extern const struct fuse_operations tm_fuse_operations;

/* What tells that the requests of a mount are no longer wanted. */
struct tm_fuse_watch {
	struct fuse *fuse;
	const char *mountpoint; /* absolute */
	dev_t dev;		/* the mount's own device; 0: not known */
};

/* Whether the request the calling thread serves is no longer wanted (tm_context_set_abandoned;
 * arg a struct tm_fuse_watch): the kernel interrupted it (its caller got a signal or was
 * killed), the session ends (SIGTERM, SIGINT, SIGHUP), or the mount was detached
 * (fusermount3 -uz). */
bool tm_fuse_request_abandoned(void *arg);

#endif
