/* The stderr logger (see log.h). Its threshold is read once, thread-safely, from TFDEV_LOG. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tfd_log_level threshold = TFD_LOG_WARNING;
static pthread_once_t threshold_once = PTHREAD_ONCE_INIT;
static const char *const level_names[] = {"debug", "info", "warning", "error"};

static void read_threshold(void) {
  const char *v = getenv("TFDEV_LOG");
  for (int i = 0; v && i < 4; i++)
    if (strcmp(v, level_names[i]) == 0) threshold = (tfd_log_level)i;
}

bool tfd_log_enabled(tfd_log_level level) {
  pthread_once(&threshold_once, read_threshold);
  return level >= threshold;
}

void tfd_log(tfd_log_level level, const char *fmt, ...) {
  if (!tfd_log_enabled(level)) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "tfdev %s: %s\n", level_names[level], line); /* one call: lines from threads do not mix */
}
