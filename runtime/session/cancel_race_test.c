/* Cancelling a step as it ends, by every path a host has: tfd_run_cancel and tfd_run_free on one
 * thread right after tfd_session_run_async, a cancel from another thread, tfd_session_close with
 * runs pending, and the session factory's reset racing runs. The steps cross two devices, so each
 * has a rendezvous for the cancellation to abort while the step may be freeing it. Every run that
 * ends must end with its value or CANCELLED and the message its path gives, nothing else.
 * A kernel that runs on the caller's thread pending when its session closes fails unrun. Iterations: 20,000 for the one-thread case (TFDEV_STRESS_ITERS x 20; CI's valgrind run uses
 * fewer), the others in proportion. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static int iterations(void) {
  const char *env = getenv("TFDEV_STRESS_ITERS");
  int n = env ? atoi(env) : 1000;
  return 20 * (n > 0 ? n : 1000);
}

/* a (fed) -> c = a * a on CPU:0 -> d = c + a on CPU:1: every step has a Send/Recv pair. */
static tfd_session *two_device_session(void) {
  tfd_status *st = tfd_status_new();
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session_options_set_inter_op_threads(o, 2);
  tfd_session *s = tfd_session_new(o, NULL, NULL, st); /* recorded by the default session factory */
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "a", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "c", "Mul", "a", "a", "/device:CPU:0");
  tg_node(g, "d", "AddV2", "c", "a", "/device:CPU:1");
  CHECK(s != NULL);
  if (s) CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_graph_def_free(g);
  tfd_session_options_free(o);
  tfd_status_free(st);
  return s;
}

static tfd_run *start(tfd_session *s, float x, tfd_status *st) {
  tfd_tensor *a = tg_scalar(x);
  const char *feed = "a", *fetch = "d";
  tfd_run *r = tfd_session_run_async(s, NULL, &feed, &a, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, st);
  tfd_tensor_unref(a);
  return r;
}

/* Waits for r and checks it ended with x * x + x, or CANCELLED saying `why`; counts what it saw. */
typedef struct outcome {
  int ok, cancelled, bad;
  char last_bad[256];
} outcome;

static void settle(tfd_run *r, float x, const char *why, outcome *o) {
  tfd_status *st = tfd_status_new();
  tfd_tensor *out = NULL;
  if (!tfd_run_wait(r, -1, st)) {
    o->bad++;
    snprintf(o->last_bad, sizeof o->last_bad, "wait(-1) returned before the run ended");
  } else if (tfd_status_code(st) == TFD_OK) {
    if (tfd_run_take_outputs(r, &out, st) == TFD_OK && *(const float *)tfd_tensor_const_data(out) == x * x + x) {
      o->ok++;
    } else {
      o->bad++;
      snprintf(o->last_bad, sizeof o->last_bad, "a wrong value: %s", tfd_status_message(st));
    }
  } else if (tfd_status_code(st) == TFD_CANCELLED && strcmp(tfd_status_message(st), why) == 0) {
    o->cancelled++;
  } else {
    o->bad++;
    snprintf(o->last_bad, sizeof o->last_bad, "%s: %s", tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
  }
  tfd_tensor_unref(out);
  tfd_status_free(st);
}

static void report(const char *what, int rounds, const outcome *o) {
  if (o->bad) fprintf(stderr, "%s: %d bad, the last: %s\n", what, o->bad, o->last_bad);
  CHECK_INT(o->bad, 0);
  printf("%s: %d rounds, %d ended with their value, %d cancelled\n", what, rounds, o->ok, o->cancelled);
}

/* One thread, only legal calls: start a run, then cancel and free it (or free it at once, which
 * cancels too, or let it end), while the step may be ending on a pool thread. */
static void test_cancel_and_free_as_the_step_ends(void) {
  tfd_session *s = two_device_session();
  tfd_status *st = tfd_status_new();
  outcome o = {0};
  int n = iterations(), started = 0;
  for (int i = 0; s && i < n; i++) {
    float x = (float)(i % 100);
    tfd_run *r = start(s, x, st);
    if (!r) {
      o.bad++;
      snprintf(o.last_bad, sizeof o.last_bad, "run_async: %s", tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    started++;
    switch (i % 4) {
      case 0: tfd_run_cancel(r); break;
      case 1: tfd_run_cancel(r); settle(r, x, "Run was cancelled.", &o); break;
      case 2: break; /* freed at once: a step still going is cancelled and waited for */
      default: settle(r, x, "Run was cancelled.", &o); break;
    }
    tfd_run_free(r);
  }
  report("cancel and free as the step ends", started, &o);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* Another thread cancels whichever run is current, as a frame loop's UI thread might. */
typedef struct canceller {
  pthread_mutex_t mu;
  tfd_run *current;
  atomic_bool stop;
  int cancels;
} canceller;

static void *cancel_loop(void *p) {
  canceller *c = p;
  while (!atomic_load(&c->stop)) {
    pthread_mutex_lock(&c->mu);
    if (c->current) {
      tfd_run_cancel(c->current);
      c->cancels++;
    }
    pthread_mutex_unlock(&c->mu);
    sched_yield();
  }
  return NULL;
}

static void test_cancel_from_another_thread(void) {
  tfd_session *s = two_device_session();
  tfd_status *st = tfd_status_new();
  canceller c = {PTHREAD_MUTEX_INITIALIZER, NULL, false, 0};
  pthread_t th;
  pthread_create(&th, NULL, cancel_loop, &c);
  outcome o = {0};
  int n = iterations() / 4;
  for (int i = 0; s && i < n; i++) {
    float x = (float)(i % 100);
    tfd_run *r = start(s, x, st);
    if (!r) {
      o.bad++;
      continue;
    }
    pthread_mutex_lock(&c.mu);
    c.current = r;
    pthread_mutex_unlock(&c.mu);
    settle(r, x, "Run was cancelled.", &o);
    pthread_mutex_lock(&c.mu); /* the handle is freed only once the other thread cannot reach it */
    c.current = NULL;
    pthread_mutex_unlock(&c.mu);
    tfd_run_free(r);
  }
  atomic_store(&c.stop, true);
  pthread_join(th, NULL);
  report("cancel from another thread", n, &o);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* A session, four runs, close: each run ends with its value or "Session has been closed.". */
static void test_close_with_runs_pending(void) {
  tfd_status *st = tfd_status_new();
  outcome o = {0};
  int rounds = iterations() / 8;
  for (int i = 0; i < rounds; i++) {
    tfd_session *s = two_device_session();
    if (!s) break;
    tfd_run *r[4];
    for (int k = 0; k < 4; k++) r[k] = start(s, (float)k, st);
    CHECK_INT(tfd_session_close(s, st), TFD_OK);
    for (int k = 0; k < 4; k++) {
      if (r[k]) settle(r[k], (float)k, "Session has been closed.", &o);
      else o.bad++;
      tfd_run_free(r[k]);
    }
    tfd_session_free(s);
  }
  report("close with four runs pending", rounds, &o);
  tfd_status_free(st);
}

/* The default factory's reset closes its sessions while a thread keeps starting runs on one. */
typedef struct runner {
  tfd_session *s;
  int rounds;
  outcome o;
} runner;

static void *run_loop(void *p) {
  runner *w = p;
  tfd_status *st = tfd_status_new();
  for (int i = 0; i < w->rounds; i++) {
    tfd_run *r = start(w->s, 2, st);
    if (!r) { /* the reset closed the session: the rest of its runs are refused */
      if (tfd_status_code(st) != TFD_CANCELLED) w->o.bad++;
      tfd_status_reset(st);
      break;
    }
    settle(r, 2, "Session has been closed.", &w->o);
    tfd_run_free(r);
  }
  tfd_status_free(st);
  return NULL;
}

static void test_factory_reset_races_runs(void) {
  tfd_status *st = tfd_status_new();
  int rounds = iterations() / 100;
  outcome all = {0};
  for (int i = 0; i < rounds; i++) {
    runner w = {two_device_session(), 50, {0}};
    pthread_t th;
    pthread_create(&th, NULL, run_loop, &w);
    struct timespec pause = {0, (long)(i % 5) * 20000};
    nanosleep(&pause, NULL);
    CHECK_INT(tfd_session_factory_reset(NULL, NULL, NULL, 0, st), TFD_OK);
    pthread_join(th, NULL);
    all.ok += w.o.ok, all.cancelled += w.o.cancelled, all.bad += w.o.bad;
    if (w.o.bad) snprintf(all.last_bad, sizeof all.last_bad, "%s", w.o.last_bad);
    tfd_session_free(w.s);
  }
  report("factory reset racing runs", rounds, &all);
  tfd_status_free(st);
}

/* A kernel that runs on the caller's thread (as Lua kernels do): an asynchronous step with it pending
 * in the caller queue, which only the thread waiting on the run drains. close() must not wait for a
 * wait that never comes: the kernel fails unrun and the run ends CANCELLED. */
static atomic_int caller_copies; /* how many times the caller-thread kernel ran */

static void copy_input(void *user, void *state, tfd_kernel_context *c) {
  (void)user, (void)state;
  atomic_fetch_add(&caller_copies, 1);
  tfd_kernel_context_set_output(c, 0, tfd_kernel_context_input(c, 0));
}

static void register_caller_copy(tfd_status *st) {
  static bool registered;
  if (!registered) {
    tfd_custom_op op = {.name = "CallerCopy", .num_inputs = 1, .num_outputs = 1};
    tfd_custom_kernel k = {.op = "CallerCopy", .device_type = "CPU", .compute = copy_input, .on_caller_thread = true};
    CHECK_INT(tfd_custom_op_register(&op, st), TFD_OK);
    CHECK_INT(tfd_custom_kernel_register(&k, st), TFD_OK);
    registered = true;
  }
}

static void test_close_with_a_caller_thread_kernel_pending(void) {
  tfd_status *st = tfd_status_new();
  register_caller_copy(st);
  alarm(60); /* the starting code waited in close() for ever */
  int rounds = iterations() / 100;
  outcome o = {0};
  for (int i = 0; i < rounds; i++) {
    tfd_session *s = tfd_session_new(NULL, NULL, NULL, st);
    tfd_graph_def *g = tfd_graph_def_new();
    tg_set_type(tg_node(g, "a", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
    tg_node(g, "c", "CallerCopy", "a", NULL, NULL);
    CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
    tfd_tensor *a = tg_scalar(5);
    const char *feed = "a", *fetch = "c";
    tfd_run *r = tfd_session_run_async(s, NULL, &feed, &a, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, st);
    CHECK(r != NULL);
    CHECK_INT(tfd_session_close(s, st), TFD_OK);
    if (r && tfd_run_wait(r, -1, st) && tfd_status_code(st) == TFD_CANCELLED &&
        strcmp(tfd_status_message(st), "Session has been closed.") == 0)
      o.cancelled++;
    else
      o.bad++, snprintf(o.last_bad, sizeof o.last_bad, "%s: %s", tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
    tfd_status_reset(st);
    tfd_run_free(r);
    tfd_tensor_unref(a);
    tfd_graph_def_free(g);
    tfd_session_free(s);
  }
  alarm(0);
  report("close with a caller-thread kernel pending", rounds, &o);
  tfd_status_free(st);
}

/* Cancelling an asynchronous run fails its caller-thread kernels unrun, whether they wait in its
 * queue or come later: whoever would run them may never wait (a Lua future collected), and a later
 * wait must not run work of a cancelled step. */
static void test_cancel_with_a_caller_thread_kernel_pending(void) {
  tfd_status *st = tfd_status_new();
  register_caller_copy(st);
  tfd_session *s = tfd_session_new(NULL, NULL, NULL, st);
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "a", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "c", "CallerCopy", "a", NULL, NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_tensor *a = tg_scalar(5);
  const char *feed = "a", *fetch = "c";
  int rounds = iterations() / 100;
  outcome o = {0};
  atomic_store(&caller_copies, 0);
  for (int i = 0; i < rounds; i++) {
    tfd_run *r = tfd_session_run_async(s, NULL, &feed, &a, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, st);
    CHECK(r != NULL);
    if (!r) break;
    if (i % 2) usleep((useconds_t)(i % 7) * 10); /* sometimes after the kernel is queued */
    tfd_run_cancel(r);
    if (tfd_run_wait(r, -1, st) && tfd_status_code(st) == TFD_CANCELLED &&
        strcmp(tfd_status_message(st), "Run was cancelled.") == 0)
      o.cancelled++;
    else
      o.bad++, snprintf(o.last_bad, sizeof o.last_bad, "%s: %s", tfd_code_name(tfd_status_code(st)), tfd_status_message(st));
    tfd_status_reset(st);
    tfd_run_free(r);
  }
  CHECK_INT(atomic_load(&caller_copies), 0);
  /* The session still runs the kernel for a run nobody cancels. */
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_session_run(s, NULL, &feed, &a, 1, &fetch, 1, NULL, 0, &out, NULL, st), TFD_OK);
  CHECK(out && *(const float *)tfd_tensor_data(out) == 5.0f);
  CHECK_INT(atomic_load(&caller_copies), 1);
  tfd_tensor_unref(out);
  tfd_tensor_unref(a);
  tfd_graph_def_free(g);
  tfd_session_free(s);
  report("cancel with a caller-thread kernel pending", rounds, &o);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"close with a caller-thread kernel pending", test_close_with_a_caller_thread_kernel_pending},
    {"cancel with a caller-thread kernel pending", test_cancel_with_a_caller_thread_kernel_pending},
    {"cancel and free as the step ends", test_cancel_and_free_as_the_step_ends},
    {"cancel from another thread", test_cancel_from_another_thread},
    {"close with runs pending", test_close_with_runs_pending},
    {"factory reset racing runs", test_factory_reset_races_runs},
};

TFD_TEST_MAIN(tests)
