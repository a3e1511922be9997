/* Log lines for what a user may want to know but that is not an error: a backend that did not
 * load, a device that fell back. Written to stderr as "tfdev <level>: message" when the level is at
 * or above the threshold, TFDEV_LOG ("debug", "info", "warning" or "error"; default "warning"),
 * read once per process; or, on a thread working for a runtime with a host logger (see
 * tfd_log_use), to that logger at its level. */
#ifndef TFDEV_RUNTIME_LOG_H
#define TFDEV_RUNTIME_LOG_H

#include <stdbool.h>

#include "tfdev/runtime.h" /* tfd_log_level, tfd_host_logger */

/* Routes this thread's lines to `logger` (NULL: stderr) until the next call; returns the previous
 * one, for the caller to put back. Public entry points of a runtime's sessions set it. */
const tfd_host_logger *tfd_log_use(const tfd_host_logger *logger);
/* TFDEV_LOG's level ("warning" when unset or unknown). */
tfd_log_level tfd_log_env_level(void);

/* Whether a line of this level would be written. */
bool tfd_log_enabled(tfd_log_level level);
void tfd_log(tfd_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
