/* The commands that need no mount. Each returns an exit status: 0, 1 (error) or 2 (usage). */
#ifndef TRACEMOUNT_COMMANDS_H
#define TRACEMOUNT_COMMANDS_H

int tm_cmd_cat(int argc, char **argv);
int tm_cmd_ls(int argc, char **argv);
int tm_cmd_index(int argc, char **argv);

#endif
