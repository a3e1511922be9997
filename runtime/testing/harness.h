/* A minimal C test harness: CHECK macros that count failures, and a main that runs the tests.
 *
 * Each *_test.c defines `static const tfd_test tests[]` and ends with
 * TFD_TEST_MAIN(tests). A failed check prints file:line and the values. */
#ifndef TFDEV_TESTING_HARNESS_H
#define TFDEV_TESTING_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfdev/tfdev.h"
#include "test_tensor.h" /* tfd_test_tensor */

typedef struct tfd_test {
  const char *name;
  void (*fn)(void);
} tfd_test;

static int tfd_test_failed_checks;

#define CHECK(cond)                                                                  \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);       \
      tfd_test_failed_checks++;                                                      \
    }                                                                                \
  } while (0)

#define CHECK_INT(a, b)                                                                                    \
  do {                                                                                                     \
    long long a_ = (long long)(a), b_ = (long long)(b);                                                    \
    if (a_ != b_) {                                                                                        \
      fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, a_, b_);       \
      tfd_test_failed_checks++;                                                                            \
    }                                                                                                      \
  } while (0)

#define CHECK_STR(a, b)                                                                                    \
  do {                                                                                                     \
    const char *a_ = (a), *b_ = (b);                                                                       \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                               \
      fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b,            \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                                     \
      tfd_test_failed_checks++;                                                                            \
    }                                                                                                      \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                        \
  do {                                                                                                     \
    const char *h_ = (hay), *n_ = (needle);                                                                \
    if (!h_ || !strstr(h_, n_)) {                                                                          \
      fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, h_ ? h_ : "(null)",   \
              n_);                                                                                         \
      tfd_test_failed_checks++;                                                                            \
    }                                                                                                      \
  } while (0)

/* Checks a call failed with `code` and a message containing `fragment`. */
#define CHECK_STATUS(st, code, fragment)                 \
  do {                                                   \
    CHECK_STR(tfd_code_name(tfd_status_code(st)), tfd_code_name(code)); \
    CHECK_CONTAINS(tfd_status_message(st), fragment);    \
    tfd_status_reset(st);                                \
  } while (0)

/* Exit status ctest reads as "skipped" (set as the test's SKIP_RETURN_CODE). */
#define TFD_TEST_SKIPPED 77

/* TFD_TEST_MAIN for tests that need hardware: when skip_reason() returns a reason, prints
 * "SKIP <reason>" and exits TFD_TEST_SKIPPED without running any test. */
#define TFD_TEST_MAIN_UNLESS(tests, skip_reason)                                          \
  static int tfd_run_all(void);                                                           \
  int main(void) {                                                                        \
    const char *why = skip_reason();                                                      \
    if (why) {                                                                            \
      printf("SKIP %s\n", why);                                                           \
      return TFD_TEST_SKIPPED;                                                            \
    }                                                                                     \
    return tfd_run_all();                                                                 \
  }                                                                                       \
  TFD_TEST_RUN_ALL(tests, static int tfd_run_all)

#define TFD_TEST_MAIN(tests) TFD_TEST_RUN_ALL(tests, int main)

/* Log lines kept for a test's checks: a tfd_host_logger with tfd_test_keep_line as its log and one
 * of these as its ctx appends each line, newline-ended, as much as fits. Unlocked: for a logger that
 * only the test's own thread uses (tfd_log_use). */
typedef struct tfd_test_lines {
  char text[4096];
} tfd_test_lines;

static inline void tfd_test_keep_line(void *ctx, tfd_log_level level, const char *message) {
  (void)level;
  tfd_test_lines *k = ctx;
  size_t n = strlen(k->text);
  snprintf(k->text + n, sizeof k->text - n, "%s\n", message);
}

/* TFDEV_TEST_ONLY=N runs only the Nth test (from 1): a GPU fault poisons the whole process, so the
 * GPU suite can run each test in a process of its own. */
#define TFD_TEST_RUN_ALL(tests, signature)                                                \
  signature(void) {                                                                       \
    int failed_tests = 0, n = (int)(sizeof(tests) / sizeof(tests[0])), ran = 0;           \
    const char *only_ = getenv("TFDEV_TEST_ONLY");                                        \
    int only = only_ ? atoi(only_) : 0;                                                   \
    for (int i = 0; i < n; i++) {                                                         \
      if (only && i + 1 != only) continue;                                                \
      ran++;                                                                              \
      int before = tfd_test_failed_checks;                                                \
      tests[i].fn();                                                                      \
      int bad = tfd_test_failed_checks != before;                                         \
      failed_tests += bad;                                                                \
      printf("%s %s\n", bad ? "FAIL" : "ok  ", tests[i].name);                            \
      fflush(stdout); /* in order with the failures' stderr lines when both go to one file */ \
    }                                                                                     \
    printf("%d passed, %d failed\n", ran - failed_tests, failed_tests);                   \
    return failed_tests ? 1 : 0;                                                          \
  }

#endif
