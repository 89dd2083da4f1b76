#ifndef TRACEMOUNT_TMFS_OPS_H
#define TRACEMOUNT_TMFS_OPS_H

#include <fuse.h>

extern const struct fuse_operations tm_fuse_operations;

#endif
