/* Log lines for what a user may want to know but that is not an error: a backend that did not
 * load, a device that fell back. Written to stderr as "tfdev <level>: message" when the level is at
 * or above the threshold, TFDEV_LOG ("debug", "info", "warning" or "error"; default "warning"),
 * read once per process. */
#ifndef TFDEV_RUNTIME_LOG_H
#define TFDEV_RUNTIME_LOG_H

#include <stdbool.h>

typedef enum tfd_log_level { TFD_LOG_DEBUG, TFD_LOG_INFO, TFD_LOG_WARNING, TFD_LOG_ERROR } tfd_log_level;

/* Whether a line of this level would be written. */
bool tfd_log_enabled(tfd_log_level level);
void tfd_log(tfd_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
