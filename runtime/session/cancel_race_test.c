/* Cancelling a step as it ends (issue 25): tfd_run_cancel and tfd_run_free on one thread and from another,
 * close racing pending runs, blocking runs and partial runs, the session factory's reset racing runs, and
 * close with a kernel still waiting to run on the caller's thread. Each run must end with its value or
 * CANCELLED with the canceller's message, and nothing may touch what the ended step freed (CI runs this
 * under ASan and TSan).
 *
 * Iterations scale with TFDEV_STRESS_ITERS (default 1,000; valgrind's run sets 100): the one-thread and
 * other-thread cancels run 20 x that (20,000), the rounds of closes with 4 runs pending 1/2 x, of
 * closes racing blocking and partial runs, of resets and of closes with caller-thread kernels pending
 * 1/4 x. Cancels and closes come after delays spread over the step's measured length, so they land
 * before, during and just after its end in every build. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static int scale(void) {
  const char *env = getenv("TFDEV_STRESS_ITERS");
  int n = env ? atoi(env) : 1000;
  return n > 0 ? n : 1000;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Busy for ns nanoseconds: a sleep would wake far too late. */
static void spin_ns(double ns) {
  double until = now_s() + ns / 1e9;
  while (now_s() < until) {
  }
}

/* The i-th of a spread of delays over [0, 1.5 x span): the cancels land all over a step's life and just
 * past its end, whatever the build's speed (sanitizers slow a step tenfold). */
static double delay_ns(int i, double span_ns) {
  unsigned h = (unsigned)i * 2654435761u;
  return (double)(h >> 22) / 1024.0 * 1.5 * span_ns;
}

/* How long (ns) a two-partition async run takes from run_async to its end on s: the median of 31. */
static double step_ns(tfd_session *s) {
  double t[31];
  const char *feed = "x", *fetch = "y";
  tfd_tensor *in = tg_scalar(1);
  for (int i = 0; i < 31; i++) {
    double t0 = now_s();
    tfd_run *r = NULL;
    tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &r, NULL);
    if (r) tfd_run_wait(r, -1, NULL);
    t[i] = (now_s() - t0) * 1e9;
    tfd_run_free(r);
  }
  tfd_tensor_unref(in);
  for (int i = 1; i < 31; i++) /* insertion sort */
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      double v = t[j];
      t[j] = t[j - 1];
      t[j - 1] = v;
    }
  return t[15];
}

static float value(const tfd_tensor *t) { return *(const float *)tfd_tensor_const_data(t); }

/* x on CPU:0 -> n = -x on CPU:1 -> y = n on CPU:0: two partitions exchanging tensors both ways, so every
 * step has a rendezvous the cancellation aborts, and its last _Recv comes just before its end. */
static tfd_graph_def *two_partition_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, "/device:CPU:0"), "dtype", TFD_FLOAT32);
  tg_node(g, "n", "Neg", "x", NULL, "/device:CPU:1");
  tg_node(g, "y", "Identity", "n", NULL, "/device:CPU:0");
  return g;
}

static tfd_session *new_session(tfd_runtime *rt, const tfd_graph_def *g, tfd_status *st) {
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", 2, st);
  tfd_session *s = NULL;
  if (rt) tfd_runtime_session_new(rt, o, NULL, &s, st);
  else tfd_session_new(o, NULL, NULL, &s, st);
  tfd_session_options_free(o);
  if (s && g && tfd_session_create(s, g, st) != TFD_OK) {
    tfd_session_free(s);
    return NULL;
  }
  return s;
}

/* What done saw. */
typedef struct outcome {
  atomic_int calls;
  tfd_code code;
  char message[160];
} outcome;

static void note_done(void *arg, const tfd_status *st) {
  outcome *o = arg;
  o->code = tfd_status_code(st);
  snprintf(o->message, sizeof o->message, "%s", tfd_status_message(st));
  atomic_fetch_add(&o->calls, 1);
}

/* Tallies of what runs ended with; anything else is counted as bad and its first instance kept. */
typedef struct tally {
  int ok, cancelled, bad;
  char first_bad[256];
} tally;

static void bad(tally *t, const char *what, tfd_code code, const char *message) {
  if (!t->bad++)
    snprintf(t->first_bad, sizeof t->first_bad, "%s: %s: %s", what, tfd_code_name(code), message ? message : "");
}

/* A run's end: OK (then `out`, when given, must be -x) or CANCELLED with `why`. */
static void judge(tally *t, const char *what, tfd_code code, const char *message, const tfd_tensor *out, float x,
                  const char *why) {
  if (code == TFD_OK && (!out || value(out) == -x)) t->ok++;
  else if (code == TFD_CANCELLED && message && strstr(message, why)) t->cancelled++;
  else bad(t, what, code, message);
}

static void report(const char *name, const tally *t, double seconds) {
  printf("%s: %d ok, %d cancelled, %d bad (%.2f s)\n", name, t->ok, t->cancelled, t->bad, seconds);
  if (t->bad) fprintf(stderr, "%s: first bad outcome: %s\n", name, t->first_bad);
}

/* The one-thread program: run_async, then tfd_run_cancel and tfd_run_free while the step may be
 * ending. Before the fix the cancel's callback aborted the rendezvous the ending step had just freed. */
static void test_one_thread_cancel_and_free(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = two_partition_graph();
  tfd_session *s = new_session(NULL, g, st);
  CHECK_STR(tfd_status_message(st), "");
  int n = 20 * scale();
  tally t = {0};
  const char *feed = "x", *fetch = "y";
  double span = s ? step_ns(s) : 0, t0 = now_s();
  for (int i = 0; s && i < n; i++) {
    float x = (float)(i % 1000);
    tfd_tensor *in = tg_scalar(x);
    outcome o = {0};
    tfd_run *r = NULL;
    tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, note_done, &o, &r, st);
    tfd_tensor_unref(in);
    if (!r) {
      bad(&t, "run_async", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    switch (i % 4) {
      case 0: /* at once */
        tfd_run_cancel(r);
        tfd_run_free(r);
        break;
      case 1: /* a little later: around the step's end */
        spin_ns(delay_ns(i, span));
        tfd_run_cancel(r);
        tfd_run_free(r);
        break;
      case 2: { /* cancel, then look at the result */
        spin_ns(delay_ns(i, span));
        tfd_run_cancel(r);
        tfd_tensor *out = NULL;
        CHECK(tfd_run_wait(r, -1, st));
        if (tfd_status_code(st) == TFD_OK && tfd_run_take_outputs(r, &out, st) != TFD_OK) out = NULL;
        judge(&t, "cancelled run", tfd_status_code(st), tfd_status_message(st), out, x, "Run was cancelled.");
        tfd_status_reset(st);
        tfd_tensor_unref(out);
        tfd_run_free(r);
        break;
      }
      default: /* freed while running: free cancels it */
        spin_ns(delay_ns(i, span));
        tfd_run_free(r);
    }
    /* tfd_run_free returns after done has: exactly once, with the value's status or the cancel's. */
    if (atomic_load(&o.calls) != 1) bad(&t, "done calls", TFD_INTERNAL, "not exactly once");
    else if (i % 4 != 2) judge(&t, "done", o.code, o.message, NULL, x, "Run was cancelled.");
  }
  printf("one thread: a step takes %.1f us\n", span / 1e3);
  report("one thread: run_async, cancel, free", &t, now_s() - t0);
  CHECK_INT(t.bad, 0);
  CHECK_INT(t.ok + t.cancelled, n);
  CHECK(t.cancelled > 0);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- another thread cancels while the step ends ---- */
typedef struct canceller {
  _Atomic(tfd_run *) slot; /* the run to cancel; set back to NULL once cancelled */
  atomic_bool stop;
  atomic_int round;
  double span_ns;
} canceller;

static void *cancel_loop(void *p) {
  canceller *c = p;
  while (!atomic_load(&c->stop)) {
    tfd_run *r = atomic_load(&c->slot);
    if (!r) {
      sched_yield();
      continue;
    }
    spin_ns(delay_ns(atomic_load(&c->round), c->span_ns));
    tfd_run_cancel(r);
    atomic_store(&c->slot, NULL); /* the owner may free it now */
  }
  return NULL;
}

static void test_cancel_from_another_thread(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = two_partition_graph();
  tfd_session *s = new_session(NULL, g, st);
  CHECK_STR(tfd_status_message(st), "");
  canceller c = {0};
  c.span_ns = s ? step_ns(s) : 0;
  pthread_t th;
  pthread_create(&th, NULL, cancel_loop, &c);
  int n = 20 * scale();
  tally t = {0};
  const char *feed = "x", *fetch = "y";
  double t0 = now_s();
  for (int i = 0; s && i < n; i++) {
    float x = (float)(i % 1000);
    tfd_tensor *in = tg_scalar(x), *out = NULL;
    tfd_run *r = NULL;
    tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &r, st);
    tfd_tensor_unref(in);
    if (!r) {
      bad(&t, "run_async", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    atomic_store(&c.round, i);
    atomic_store(&c.slot, r);
    CHECK(tfd_run_wait(r, -1, st));
    if (tfd_status_code(st) == TFD_OK && tfd_run_take_outputs(r, &out, st) != TFD_OK) out = NULL;
    judge(&t, "run", tfd_status_code(st), tfd_status_message(st), out, x, "Run was cancelled.");
    tfd_status_reset(st);
    tfd_tensor_unref(out);
    while (atomic_load(&c.slot)) sched_yield(); /* the canceller is done with it */
    tfd_run_free(r);
  }
  atomic_store(&c.stop, true);
  pthread_join(th, NULL);
  report("another thread cancels", &t, now_s() - t0);
  CHECK_INT(t.bad, 0);
  CHECK_INT(t.ok + t.cancelled, n);
  tfd_session_free(s);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- close racing pending runs: (session, 4 x run_async, close), as a frame loop's shutdown does ---- */
enum { PENDING = 4 };

static void test_close_races_pending_runs(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = two_partition_graph();
  int rounds = scale() / 2;
  tally t = {0};
  const char *feed = "x", *fetch = "y";
  double span = 0, t0 = now_s();
  for (int i = 0; i < rounds; i++) {
    tfd_session *s = new_session(NULL, g, st);
    if (s && i == 0) span = step_ns(s);
    if (!s) {
      bad(&t, "session", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    tfd_run *r[PENDING];
    outcome o[PENDING];
    float x[PENDING];
    for (int k = 0; k < PENDING; k++) {
      x[k] = (float)(i * PENDING + k);
      tfd_tensor *in = tg_scalar(x[k]);
      atomic_init(&o[k].calls, 0);
      tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, note_done, &o[k], &r[k], st);
      tfd_tensor_unref(in);
      if (!r[k]) {
        bad(&t, "run_async", tfd_status_code(st), tfd_status_message(st));
        tfd_status_reset(st);
      }
    }
    spin_ns(delay_ns(i, span));
    if (i % 2) tfd_session_close(s, st); /* close, then free; or free alone, which closes */
    tfd_session_free(s);                  /* the runs outlive it */
    for (int k = 0; k < PENDING; k++) {
      if (!r[k]) continue;
      tfd_tensor *out = NULL;
      CHECK(tfd_run_wait(r[k], 0, st)); /* close waited for them */
      if (tfd_status_code(st) == TFD_OK && tfd_run_take_outputs(r[k], &out, st) != TFD_OK) out = NULL;
      judge(&t, "run", tfd_status_code(st), tfd_status_message(st), out, x[k], "Session has been closed.");
      tfd_status_reset(st);
      tfd_tensor_unref(out);
      if (atomic_load(&o[k].calls) != 1) bad(&t, "done calls", TFD_INTERNAL, "not exactly once");
      tfd_run_free(r[k]);
    }
  }
  report("close racing 4 pending runs", &t, now_s() - t0);
  CHECK_INT(t.bad, 0);
  CHECK_INT(t.ok + t.cancelled, rounds * PENDING);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- close from another thread racing blocking runs and partial runs ---- */
typedef struct runner {
  tfd_session *s;
  tally t;
  int round;
} runner;

static void *run_until_closed(void *p) {
  runner *w = p;
  tfd_status *st = tfd_status_new();
  const char *feed = "x", *fetch = "y";
  for (int j = 0;; j++) {
    float x = (float)(w->round + j);
    tfd_tensor *in = tg_scalar(x), *out = NULL;
    tfd_code code;
    if (j % 2 == 0) {
      code = tfd_session_run(w->s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, &out, NULL, st);
    } else { /* a partial run: set up, then feed and fetch in one call, which finishes it */
      int64_t h = tfd_session_prun_setup(w->s, &feed, 1, &fetch, 1, NULL, 0, st);
      code = h < 0 ? tfd_status_code(st) : tfd_session_prun(w->s, h, &feed, &in, 1, &fetch, 1, &out, st);
    }
    judge(&w->t, j % 2 ? "partial run" : "run", code, tfd_status_message(st), out, x, "Session has been closed.");
    tfd_status_reset(st);
    tfd_tensor_unref(out);
    tfd_tensor_unref(in);
    if (code != TFD_OK) break; /* closed: every later call would say so too */
  }
  tfd_status_free(st);
  return NULL;
}

static void test_close_races_blocking_and_partial_runs(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = two_partition_graph();
  int rounds = scale() / 4;
  tally t = {0};
  double span = 0, t0 = now_s();
  for (int i = 0; i < rounds; i++) {
    runner w = {new_session(NULL, g, st), {0}, i};
    if (w.s && i == 0) span = step_ns(w.s);
    if (!w.s) {
      bad(&t, "session", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    pthread_t th;
    pthread_create(&th, NULL, run_until_closed, &w);
    spin_ns(delay_ns(i, 8 * span));
    tfd_session_close(w.s, st);
    pthread_join(th, NULL);
    tfd_session_free(w.s);
    t.ok += w.t.ok;
    t.cancelled += w.t.cancelled;
    if (w.t.bad && !t.bad) snprintf(t.first_bad, sizeof t.first_bad, "%s", w.t.first_bad);
    t.bad += w.t.bad;
  }
  report("close racing blocking and partial runs", &t, now_s() - t0);
  CHECK_INT(t.bad, 0);
  CHECK_INT(t.cancelled, rounds); /* each thread's last call */
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- the session factory's reset (closing every session of a runtime) racing runs ---- */
typedef struct resetter {
  tfd_runtime *rt;
  atomic_bool stop;
  int resets, failures;
  double span_ns;
} resetter;

static void *reset_loop(void *p) {
  resetter *z = p;
  tfd_status *st = tfd_status_new();
  for (int i = 0; !atomic_load(&z->stop); i++) {
    spin_ns(delay_ns(i, z->span_ns));
    if (tfd_runtime_session_factory_reset(z->rt, NULL, NULL, 0, st) != TFD_OK) z->failures++;
    tfd_status_reset(st);
    z->resets++;
  }
  tfd_status_free(st);
  return NULL;
}

static void test_factory_reset_races_runs(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = two_partition_graph();
  resetter z = {NULL, false, 0, 0, 0};
  tfd_runtime_new(NULL, &z.rt, st);
  CHECK(z.rt != NULL);
  tfd_session *probe = new_session(NULL, g, st);
  /* A round makes a session and runs 4 steps: resets come every round or so. */
  z.span_ns = probe ? 8 * step_ns(probe) : 0;
  tfd_session_free(probe);
  pthread_t th;
  pthread_create(&th, NULL, reset_loop, &z);
  int rounds = scale() / 4;
  tally t = {0};
  const char *feed = "x", *fetch = "y";
  double t0 = now_s();
  for (int i = 0; z.rt && i < rounds; i++) {
    tfd_session *s = new_session(z.rt, NULL, st);
    if (!s) {
      bad(&t, "session", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    /* A reset may close it at any point from here on: every call then says so. */
    if (tfd_session_create(s, g, st) != TFD_OK) {
      judge(&t, "create", tfd_status_code(st), tfd_status_message(st), NULL, 0, "Session has been closed.");
      tfd_status_reset(st);
      tfd_session_free(s);
      continue;
    }
    tfd_run *r[PENDING];
    float x[PENDING];
    for (int k = 0; k < PENDING; k++) {
      x[k] = (float)(i * PENDING + k);
      tfd_tensor *in = tg_scalar(x[k]);
      tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &r[k], st);
      tfd_tensor_unref(in);
      if (!r[k]) judge(&t, "run_async", tfd_status_code(st), tfd_status_message(st), NULL, 0, "Session has been closed.");
      tfd_status_reset(st);
    }
    for (int k = 0; k < PENDING; k++) {
      if (!r[k]) continue;
      tfd_tensor *out = NULL;
      CHECK(tfd_run_wait(r[k], -1, st));
      if (tfd_status_code(st) == TFD_OK && tfd_run_take_outputs(r[k], &out, st) != TFD_OK) out = NULL;
      judge(&t, "run", tfd_status_code(st), tfd_status_message(st), out, x[k], "Session has been closed.");
      tfd_status_reset(st);
      tfd_tensor_unref(out);
      tfd_run_free(r[k]);
    }
    tfd_session_free(s);
  }
  atomic_store(&z.stop, true);
  pthread_join(th, NULL);
  report("factory reset racing runs", &t, now_s() - t0);
  printf("factory reset racing runs: %d resets\n", z.resets);
  CHECK_INT(t.bad, 0);
  CHECK_INT(z.failures, 0);
  tfd_runtime_unref(z.rt);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* ---- a kernel waiting to run on the caller's thread when the step is cancelled ----
 * An async run's caller-thread kernels run when someone waits on or polls the run. Closing the session
 * (or cancelling the run) with one still queued and nobody waiting hung: close() waited for a step that
 * waited for its caller. Now the queued kernel fails with the cancellation and never runs. */
static atomic_int on_caller_runs;

static void on_caller_identity(void *user, void *state, tfd_kernel_context *c) {
  (void)user, (void)state;
  atomic_fetch_add(&on_caller_runs, 1);
  tfd_kernel_context_set_output(c, 0, tfd_kernel_context_input(c, 0));
}

static tfd_graph_def *caller_kernel_graph(void) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "sq", "Square", "x", NULL, "/device:CPU:1");
  tg_node(g, "w", "CancelRaceOnCaller", "sq", NULL, "/device:CPU:1");
  tg_node(g, "y", "Neg", "w", NULL, "/device:CPU:0");
  return g;
}

typedef struct closer {
  tfd_session *s;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool returned;
} closer;

static void *close_session(void *p) {
  closer *c = p;
  tfd_session_close(c->s, NULL);
  pthread_mutex_lock(&c->mu);
  c->returned = true;
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* Whether `c` returned within 20 s; a hang is reported, not waited out (the thread is then left). */
static bool closed_in_time(closer *c) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 20;
  pthread_mutex_lock(&c->mu);
  while (!c->returned && pthread_cond_timedwait(&c->cv, &c->mu, &until) == 0) {
  }
  bool returned = c->returned;
  pthread_mutex_unlock(&c->mu);
  return returned;
}

static void register_on_caller_op(tfd_status *st) {
  static bool registered;
  if (registered) return;
  tfd_custom_op op = {.name = "CancelRaceOnCaller", .num_inputs = 1, .num_outputs = 1};
  CHECK_INT(tfd_custom_op_register(&op, st), TFD_OK);
  tfd_custom_kernel k = {.op = "CancelRaceOnCaller", .device_type = "CPU", .compute = on_caller_identity,
                         .on_caller_thread = true};
  CHECK_INT(tfd_custom_kernel_register(&k, st), TFD_OK);
  registered = true;
}

static void test_cancel_fails_kernels_waiting_for_the_caller(void) {
  tfd_status *st = tfd_status_new();
  register_on_caller_op(st);
  tfd_graph_def *g = caller_kernel_graph();
  const char *feed = "x", *fetch = "y";
  float xv = 3;
  tfd_tensor *in = tg_scalar(xv);

  /* The run waited on: the kernel runs here, as before. */
  tfd_session *s = new_session(NULL, g, st);
  CHECK_STR(tfd_status_message(st), "");
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &r, st);
  CHECK(r && tfd_run_wait(r, 10000, st));
  CHECK_INT(tfd_status_code(st), TFD_OK);
  CHECK_INT(atomic_load(&on_caller_runs), 1);
  tfd_run_free(r);

  /* Close with the kernel queued and nobody waiting: close returns, the run ends CANCELLED. */
  for (int round = 0; round < 2; round++) {
    atomic_store(&on_caller_runs, 0);
    outcome o = {0};
    tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, note_done, &o, &r, st);
    CHECK(r != NULL);
    if (round == 1) {
      struct timespec nap = {0, 20 * 1000000L}; /* the kernel queued, or about to be */
      nanosleep(&nap, NULL);
    }
    closer c = {s, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
    pthread_t th;
    pthread_create(&th, NULL, close_session, &c);
    if (!closed_in_time(&c)) {
      fprintf(stderr, "tfd_session_close did not return in 20 s with a caller-thread kernel pending\n");
      CHECK(!"close returned");
      exit(1); /* the closing thread is stuck; nothing more can be checked */
    }
    pthread_join(th, NULL);
    CHECK(tfd_run_wait(r, 0, st)); /* close waited for it */
    CHECK_STATUS(st, TFD_CANCELLED, "Session has been closed.");
    CHECK_INT(atomic_load(&o.calls), 1);
    CHECK_INT(o.code, TFD_CANCELLED);
    CHECK_INT(atomic_load(&on_caller_runs), 0); /* failed, never run on the closing thread */
    tfd_run_free(r);
    tfd_session_free(s);
    s = round == 0 ? new_session(NULL, g, st) : NULL;
  }

  /* tfd_run_cancel with the kernel queued: the run ends without anyone draining the queue. */
  s = new_session(NULL, g, st);
  atomic_store(&on_caller_runs, 0);
  outcome o = {0};
  tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, note_done, &o, &r, st);
  CHECK(r != NULL);
  struct timespec nap = {0, 20 * 1000000L};
  nanosleep(&nap, NULL);
  tfd_run_cancel(r);
  for (int i = 0; i < 2000 && atomic_load(&o.calls) == 0; i++) nanosleep(&(struct timespec){0, 10 * 1000000L}, NULL);
  CHECK_INT(atomic_load(&o.calls), 1); /* ended with nobody waiting */
  CHECK(tfd_run_wait(r, 0, st));
  CHECK_STATUS(st, TFD_CANCELLED, "Run was cancelled.");
  CHECK_INT(atomic_load(&on_caller_runs), 0);
  tfd_run_free(r);

  /* Many rounds of (4 runs, close) with the queue drained now and then: each ends OK or CANCELLED. */
  tally t = {0};
  int rounds = scale() / 4;
  double span = 4 * step_ns(s), t0 = now_s();
  for (int i = 0; i < rounds; i++) {
    if (!s) s = new_session(NULL, g, st);
    if (!s) break;
    tfd_run *rs[PENDING];
    for (int j = 0; j < PENDING; j++) {
      tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &rs[j], st);
      if (!rs[j]) bad(&t, "run_async", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
    }
    if (i % 3 == 0 && rs[0]) tfd_run_ready(rs[0]); /* runs what has been queued so far */
    spin_ns(delay_ns(i, span));
    tfd_session_free(s);
    s = NULL;
    for (int j = 0; j < PENDING; j++) {
      if (!rs[j]) continue;
      tfd_tensor *out = NULL;
      CHECK(tfd_run_wait(rs[j], 0, st));
      if (tfd_status_code(st) == TFD_OK && tfd_run_take_outputs(rs[j], &out, st) != TFD_OK) out = NULL;
      judge(&t, "run", tfd_status_code(st), tfd_status_message(st), out, xv * xv, "Session has been closed.");
      tfd_status_reset(st);
      tfd_tensor_unref(out);
      tfd_run_free(rs[j]);
    }
  }
  report("close with caller-thread kernels pending", &t, now_s() - t0);
  CHECK_INT(t.bad, 0);
  tfd_session_free(s);
  tfd_tensor_unref(in);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* A wait after tfd_run_cancel must not run the cancelled step's caller-thread kernels: they failed
 * (or will fail) unrun, whether they were queued before the cancel or come after it. */
static void test_wait_after_cancel_runs_no_kernel(void) {
  tfd_status *st = tfd_status_new();
  register_on_caller_op(st);
  tfd_graph_def *g = caller_kernel_graph();
  tfd_session *s = new_session(NULL, g, st);
  CHECK(s != NULL);
  const char *feed = "x", *fetch = "y";
  tfd_tensor *in = tg_scalar(3);
  double span = 4 * step_ns(s); /* runs the kernel 31 times */
  atomic_store(&on_caller_runs, 0);
  tally t = {0};
  int rounds = scale() / 4;
  double t0 = now_s();
  for (int i = 0; i < rounds; i++) {
    tfd_run *r = NULL;
    tfd_session_run_async(s, NULL, &feed, &in, 1, &fetch, 1, NULL, 0, NULL, NULL, NULL, &r, st);
    if (!r) {
      bad(&t, "run_async", tfd_status_code(st), tfd_status_message(st));
      tfd_status_reset(st);
      continue;
    }
    spin_ns(delay_ns(i, span));
    tfd_run_cancel(r);
    CHECK(tfd_run_wait(r, -1, st));
    judge(&t, "run", tfd_status_code(st) == TFD_OK ? TFD_INTERNAL : tfd_status_code(st), tfd_status_message(st), NULL,
          0, "Run was cancelled.");
    tfd_status_reset(st);
    tfd_run_free(r);
  }
  report("wait after cancel with a caller-thread kernel", &t, now_s() - t0);
  CHECK_INT(t.bad, 0);
  CHECK_INT(atomic_load(&on_caller_runs), 0);
  tfd_session_free(s);
  tfd_tensor_unref(in);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"one thread: run_async then cancel and free while the step ends", test_one_thread_cancel_and_free},
    {"another thread cancels while the step ends", test_cancel_from_another_thread},
    {"close (or free) racing 4 pending async runs", test_close_races_pending_runs},
    {"close racing blocking and partial runs on another thread", test_close_races_blocking_and_partial_runs},
    {"the session factory's reset racing runs", test_factory_reset_races_runs},
    {"cancel and close fail kernels waiting for the caller's thread", test_cancel_fails_kernels_waiting_for_the_caller},
    {"a wait after cancel runs no kernel of the cancelled step", test_wait_after_cancel_runs_no_kernel},
};
TFD_TEST_MAIN(tests)
