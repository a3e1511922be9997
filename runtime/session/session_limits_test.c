/* Resource limits: opening and closing sessions again and again leaves threads and memory flat.
 *
 * A host that makes a session per level, per request or per test must not grow. N sessions (default 3,000;
 * TFDEV_SESSION_LOOP overrides it: the probe used 60,000) are opened, given a graph, run and closed,
 * with a partial run and a callable left open on some of them; the thread count must come back to where it
 * was and the resident memory must stay within a small margin of the first warm round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/testing/harness.h"

/* Sanitizers keep freed memory in quarantine: only a plain build measures memory honestly. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INSTRUMENTED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INSTRUMENTED 1
#endif
#endif
#ifndef INSTRUMENTED
#define INSTRUMENTED 0
#endif

/* A field of /proc/self/status ("Threads", "VmRSS"); -1 when unavailable. */
static long proc_status(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0 && line[n] == ':') v = strtol(line + n + 1, NULL, 10);
  fclose(f);
  return v;
}

static int loops(void) {
  const char *env = getenv("TFDEV_SESSION_LOOP");
  int n = env ? atoi(env) : 3000;
  return n > 0 ? n : 3000;
}

static tfd_graph_def *graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tfd_node_def *x = tfd_graph_def_add_node(g, "x", "Placeholder", NULL);
  tfd_attr_value f32 = {.type = TFD_ATTR_TYPE, .dtype = TFD_FLOAT32};
  tfd_node_def_set_attr(x, "dtype", &f32, NULL);
  tfd_node_def *y = tfd_graph_def_add_node(g, "y", "Square", NULL);
  tfd_node_def_add_input(y, "x", NULL);
  tfd_node_def *z = tfd_graph_def_add_node(g, "z", "Neg", NULL);
  tfd_node_def_add_input(z, "y", NULL);
  tfd_node_def_set_device(z, "/device:CPU:1", NULL);
  return g;
}

/* One session's life: create, run across two devices, leave a callable and a partial run open, free. */
static int one_session(const tfd_graph_def *g, const tfd_session_options *o, int i, tfd_status *st) {
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  if (!s || tfd_session_create(s, g, st) != TFD_OK) {
    tfd_session_free(s);
    return 0;
  }
  float v = (float)(i % 10);
  tfd_tensor *x = NULL, *out[1] = {NULL};
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, NULL, 0, &v, 4, &x, st);
  const char *feeds[] = {"x"}, *fetch[] = {"z"};
  int ok = tfd_session_run(s, NULL, feeds, &x, 1, fetch, 1, NULL, 0, out, NULL, st) == TFD_OK &&
           *(const float *)tfd_tensor_const_data(out[0]) == -v * v;
  tfd_tensor_unref(out[0]);
  if (i % 3 == 0) ok = ok && tfd_session_make_callable(s, feeds, 1, fetch, 1, NULL, 0, st) >= 0;
  if (i % 5 == 0) ok = ok && tfd_session_prun_setup(s, feeds, 1, fetch, 1, NULL, 0, st) >= 0;
  tfd_tensor_unref(x);
  tfd_session_free(s); /* closes, cancelling the open partial run */
  return ok;
}

static void test_open_close_loop(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session_options_set_inter_op_threads(o, 2);
  tfd_graph_def *g = graph();
  int n = loops(), good = 0;
  /* Warm up: pools, allocator caches and the allocator's arenas reach their steady size. */
  for (int i = 0; i < 200; i++) good += one_session(g, o, i, st);
  long threads0 = proc_status("Threads"), rss0 = proc_status("VmRSS");
  long peak_threads = threads0;
  for (int i = 0; i < n; i++) {
    good += one_session(g, o, i, st);
    if (i % 500 == 0) {
      long t = proc_status("Threads");
      if (t > peak_threads) peak_threads = t;
    }
  }
  long threads1 = proc_status("Threads"), rss1 = proc_status("VmRSS");
  CHECK_STR(tfd_status_message(st), "");
  CHECK_INT(good, n + 200);
  if (threads0 >= 0) {
    CHECK_INT(threads1, threads0);
    CHECK(peak_threads <= threads0 + 4); /* sessions share the pools: none piles up */
  }
  /* valgrind, like the sanitizers, holds freed blocks back: there it checks leaks itself instead. */
  if (rss0 >= 0 && !INSTRUMENTED && !getenv("TFDEV_UNDER_VALGRIND")) CHECK(rss1 - rss0 < 8 * 1024); /* kB */
  else printf("session loop: resident memory not compared (an instrumented build holds freed memory)\n");
  printf("session loop: %d sessions; threads %ld -> %ld (peak %ld); RSS %ld -> %ld kB\n", n, threads0, threads1,
         peak_threads, rss0, rss1);
  tfd_graph_def_free(g);
  tfd_session_options_free(o);
  tfd_status_free(st);
}

static const tfd_test tests[] = {{"open, run and close sessions: threads and memory stay flat", test_open_close_loop}};
TFD_TEST_MAIN(tests)
