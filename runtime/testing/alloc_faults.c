/* Allocation-failure injection for the out-of-memory sweep (scripts/oom-sweep).
 *
 * Linked only into the sweep's targets (tfdev_oom, oom_target), whose link wraps the C allocator
 * (-Wl,--wrap=malloc,...): every allocation that tfdev's own code makes passes through here, and
 * cJSON's and protobuf-c's too (their hooks are routed here at start-up), while Lua's, libc's
 * internals' and the math libraries' do not. That is what a failed allocation can reach that tfdev
 * must answer for.
 *
 *   TFDEV_FAIL_ALLOC=N    the N-th counted allocation fails (returns NULL, errno ENOMEM), once;
 *                         every other one succeeds. 0 or unset: none fails, they are only counted.
 *   TFDEV_FAIL_ALLOC_TRACE=1  prints the stack of the failed allocation (for triage).
 *
 * At exit one line goes to standard error: "alloc-faults: <count> allocations[, failed #N]", from
 * which the sweep learns how many points a target has and whether the point it asked for was
 * reached. The counter is process-wide state, which is why this file is test-only. */
#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "alloc_faults.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* Present in sanitizer builds: a symbolised stack. */
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));

static atomic_llong counted;
static atomic_bool failed;
static atomic_llong fail_at; /* from TFDEV_FAIL_ALLOC before main; tfd_alloc_faults_fail_at after */
static bool trace;

static void trace_failure(long long n) {
  char line[96];
  int len = snprintf(line, sizeof line, "alloc-faults: failing allocation #%lld here:\n", n);
  if (write(2, line, (size_t)len) < 0) return;
  if (__sanitizer_print_stack_trace) {
    __sanitizer_print_stack_trace();
  } else {
    void *frames[48];
    backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
  }
}

/* Whether this allocation is the one to fail. */
static bool fail_now(void) {
  long long n = atomic_fetch_add(&counted, 1) + 1;
  if (n != atomic_load_explicit(&fail_at, memory_order_relaxed)) return false;
  atomic_store(&failed, true);
  if (trace) trace_failure(n);
  errno = ENOMEM;
  return true;
}

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fail_now() ? NULL : __real_calloc(n, size); }
/* realloc(p, 0) frees on glibc and cannot fail in a way a caller must handle: not counted. */
void *__wrap_realloc(void *p, size_t n) { return n && fail_now() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t align, size_t n) { return fail_now() ? NULL : __real_aligned_alloc(align, n); }
int __wrap_posix_memalign(void **p, size_t align, size_t n) { return fail_now() ? ENOMEM : __real_posix_memalign(p, align, n); }
char *__wrap_strdup(const char *s) { return fail_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return fail_now() ? NULL : __real_strndup(s, n); }

static void report(void) {
  char line[96];
  int len = atomic_load(&failed)
                ? snprintf(line, sizeof line, "alloc-faults: %lld allocations, failed #%lld\n", atomic_load(&counted),
                           atomic_load(&fail_at))
                : snprintf(line, sizeof line, "alloc-faults: %lld allocations\n", atomic_load(&counted));
  if (write(2, line, (size_t)len) < 0) return;
}

long long tfd_alloc_faults_count(void) { return atomic_load(&counted); }

void tfd_alloc_faults_fail_at(long long n) {
  atomic_store(&failed, false);
  atomic_store(&fail_at, n);
}

bool tfd_alloc_faults_failed(void) { return atomic_load(&failed); }

static void *json_malloc(size_t n) { return __wrap_malloc(n); }

__attribute__((constructor)) static void alloc_faults_init(void) {
  const char *v = getenv("TFDEV_FAIL_ALLOC");
  atomic_store(&fail_at, v ? strtoll(v, NULL, 10) : 0);
  const char *t = getenv("TFDEV_FAIL_ALLOC_TRACE");
  trace = t && *t && strcmp(t, "0") != 0;
  /* cJSON allocates through hooks of its own: route them through the counter. */
  cJSON_InitHooks(&(cJSON_Hooks){json_malloc, free});
  atexit(report);
}
