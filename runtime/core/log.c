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
static _Thread_local const tfd_host_logger *thread_logger;

const tfd_host_logger *tfd_log_use(const tfd_host_logger *logger) {
  const tfd_host_logger *prev = thread_logger;
  thread_logger = logger;
  return prev;
}

static void read_threshold(void) {
  const char *v = getenv("TFDEV_LOG");
  for (int i = 0; v && i < 4; i++)
    if (strcmp(v, level_names[i]) == 0) threshold = (tfd_log_level)i;
}

tfd_log_level tfd_log_env_level(void) {
  pthread_once(&threshold_once, read_threshold);
  return threshold;
}

bool tfd_log_enabled(tfd_log_level level) {
  if (thread_logger) return level >= thread_logger->level;
  return level >= tfd_log_env_level();
}

void tfd_log(tfd_log_level level, const char *fmt, ...) {
  if (!tfd_log_enabled(level)) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (thread_logger) thread_logger->log(thread_logger->ctx, level, line);
  else fprintf(stderr, "tfdev %s: %s\n", level_names[level], line); /* one call: lines from threads do not mix */
}
