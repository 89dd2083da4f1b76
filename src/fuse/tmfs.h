/* The FUSE front end: the operations table and the mount command. */
#ifndef TRACEMOUNT_TMFS_H
#define TRACEMOUNT_TMFS_H

/* Runs `tracemount [options] SOURCE MOUNTPOINT`; returns the exit status (0, 1, or 2). */
int tm_mount_main(int argc, char **argv);

/* Prints libfuse's options (tracemount --help-fuse). */
void tm_mount_help(void);

/* The version of libfuse in use. */
const char *tm_mount_libfuse_version(void);

#endif
