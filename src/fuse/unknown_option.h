/* libfuse's word on options it does not know, said in tracemount's words. */
#ifndef TRACEMOUNT_UNKNOWN_OPTION_H
#define TRACEMOUNT_UNKNOWN_OPTION_H

#include <stdbool.h>

/* Keeps what libfuse logs from now on instead of printing it. */
void tm_unknown_option_listen(void);

/* Stops keeping libfuse's log. When failed, says what was kept: each option libfuse did not
 * know as "tracemount: unknown option -o NAME (nearest: -o OTHER; see tracemount --help)",
 * anything else as libfuse wrote it. */
void tm_unknown_option_report(bool failed);

#endif
