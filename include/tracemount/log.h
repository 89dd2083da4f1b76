/* Lines for the log: where problems and progress go, one line with a syslog priority each. */
#ifndef TRACEMOUNT_LOG_H
#define TRACEMOUNT_LOG_H

/* Where lines go: stderr, syslog or a test's buffer. */
typedef void tm_log_fn(int priority, const char *line);

/* Formats one line, escapes it as tm_escape_name escapes a name (so a name's newline or
 * bytes that are not UTF-8 cannot forge or garble a line) and sends it to sink; a NULL sink
 * drops it. */
void tm_log(tm_log_fn *sink, int priority, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
