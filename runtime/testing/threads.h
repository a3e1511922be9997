/* How many threads this test process has, for tests that check who starts threads. */
#ifndef TFDEV_TESTING_THREADS_H
#define TFDEV_TESTING_THREADS_H

#include <dirent.h>
#include <time.h>

/* Entries in /proc/self/task, or -1 when it cannot be read. */
static inline int tfd_test_read_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

/* The process's threads once the count holds still for 20 ms (2 s at most), or -1 as above. A thread
 * that pthread_join has returned for (an earlier test's pool) can stay listed in /proc for a moment,
 * since the kernel wakes the joiner before it reaps the thread: a single read can count it. */
static inline int tfd_test_count_threads(void) {
  int n = tfd_test_read_threads();
  for (int i = 0; i < 100 && n >= 0; i++) {
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    int m = tfd_test_read_threads();
    if (m == n) break;
    n = m;
  }
  return n;
}

#endif
