/* Asynchronous runs through the C API (tfd_session_run_async, tfd_session_run_callable_async, tfd_run_*):
 * done called once with the result, outputs, errors identical to the blocking run's, cancelling a step
 * blocked on an empty queue, waits with a timeout and the run's own deadline, freeing a run or the
 * session while a step is in flight, and writing tensors in place (tfd_tensor_copy_from, _fill) while
 * a step holds them. The threaded cases run under TSan and ASan in CI. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/testing/graph_builder.h"
#include "runtime/testing/harness.h"

static float at(const tfd_tensor *t, int i) { return ((const float *)tfd_tensor_const_data(t))[i]; }

/* x -> y = -x (on CPU:1 when two devices, so the step has two partitions); a queue q whose dequeue
 * `take` blocks until something is enqueued; `wait_then_neg` = -x once take has run. */
static tfd_session *new_session(int cpus, tfd_status *st) {
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tfd_node_def *y = tg_node(g, "y", "Neg", "x", NULL, NULL);
  if (cpus > 1) tfd_node_def_set_device(y, "/device:CPU:1", st);
  tg_set_types(tg_node(g, "q", "FIFOQueueV2", NULL, NULL, NULL), "component_types", TFD_FLOAT32);
  tg_set_types(tg_node(g, "take", "QueueDequeueV2", "q", NULL, NULL), "component_types", TFD_FLOAT32);
  tfd_node_def *w = tg_node(g, "wait_then_neg", "Neg", "x", NULL, NULL);
  tfd_node_def_add_input(w, "^take", NULL);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_device_count(o, "CPU", cpus, st);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK(s != NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  return s;
}

/* What done saw: how often it ran, and the status it was given. */
typedef struct done_log {
  atomic_int calls;
  tfd_code code;
  char message[256];
} done_log;

static void log_done(void *arg, const tfd_status *st) {
  done_log *d = arg;
  d->code = tfd_status_code(st);
  snprintf(d->message, sizeof d->message, "%s", tfd_status_message(st));
  atomic_fetch_add(&d->calls, 1);
}

static void nap_ms(int ms) {
  struct timespec t = {0, (long)ms * 1000000L};
  nanosleep(&t, NULL);
}

static void test_outputs_and_done(void) {
  for (int cpus = 1; cpus <= 2; cpus++) {
    tfd_status *st = tfd_status_new();
    tfd_session *s = new_session(cpus, st);
    float xv[] = {1, -2, 3};
    tfd_tensor *x = tg_vec(xv, 3);
    const char *feed = "x", *fetches[] = {"y", "x"};
    done_log d = {0};
    tfd_run_metadata *meta = tfd_run_metadata_new();
    tfd_run_options ro = {.trace = true};
    tfd_run *r = NULL;
    tfd_session_run_async(s, &ro, &feed, &x, 1, fetches, 2, NULL, 0, meta, log_done, &d, &r, st);
    CHECK(r != NULL);
    tfd_tensor_unref(x); /* the run holds its feeds */
    CHECK_INT(tfd_run_num_outputs(r), 2);
    CHECK(tfd_run_wait(r, -1, st));
    CHECK_INT(tfd_status_code(st), TFD_OK);
    CHECK(tfd_run_ready(r));
    CHECK_INT(atomic_load(&d.calls), 1); /* wait returns once done has returned */
    CHECK_INT(d.code, TFD_OK);
    CHECK(tfd_run_metadata_step_id(meta) > 0);
    CHECK(tfd_run_metadata_num_devices(meta) == cpus);
    tfd_tensor *out[2] = {NULL, NULL};
    CHECK_INT(tfd_run_take_outputs(r, out, st), TFD_OK);
    CHECK(out[0] && at(out[0], 0) == -1 && at(out[0], 1) == 2 && at(out[0], 2) == -3);
    CHECK(out[1] && at(out[1], 2) == 3);
    CHECK_INT(tfd_run_take_outputs(r, out, st), TFD_FAILED_PRECONDITION);
    CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "already taken");
    tfd_run_free(r);
    CHECK_INT(atomic_load(&d.calls), 1);
    tfd_tensor_unref(out[0]);
    tfd_tensor_unref(out[1]);
    tfd_run_metadata_free(meta);
    tfd_session_free(s);
    tfd_status_free(st);
  }
}

/* Errors before the step starts come back from the call, with the blocking run's code and text; errors
 * while it runs come through done, wait and take_outputs, also as the blocking run says them. */
static void test_errors_match_the_blocking_run(void) {
  tfd_status *st = tfd_status_new(), *want = tfd_status_new();
  tfd_session *s = new_session(1, st);
  const char *bad = "nope", *feed = "x", *y = "y";
  tfd_tensor *out = NULL;
  done_log d = {0};
  CHECK(tfd_session_run(s, NULL, NULL, NULL, 0, &bad, 1, NULL, 0, &out, NULL, want) != TFD_OK);
  CHECK(tfd_session_run_async(s, NULL, NULL, NULL, 0, &bad, 1, NULL, 0, NULL, log_done, &d, &(tfd_run *){NULL}, st) != TFD_OK);
  CHECK_INT(tfd_status_code(st), tfd_status_code(want));
  CHECK_STR(tfd_status_message(st), tfd_status_message(want));
  tfd_status_reset(st);
  tfd_status_reset(want);
  /* A feed of the wrong dtype is refused before the step starts. */
  int32_t iv = 1;
  tfd_tensor *xi = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, NULL, 0, &iv, 4, &xi, NULL);
  CHECK(tfd_session_run(s, NULL, &feed, &xi, 1, &y, 1, NULL, 0, &out, NULL, want) == TFD_INVALID_ARGUMENT);
  CHECK(tfd_session_run_async(s, NULL, &feed, &xi, 1, &y, 1, NULL, 0, NULL, log_done, &d, &(tfd_run *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, tfd_status_message(want));
  tfd_status_reset(want);
  tfd_tensor_unref(xi);
  /* An unfed placeholder fails in its kernel, while the step runs. */
  CHECK(tfd_session_run(s, NULL, NULL, NULL, 0, &y, 1, NULL, 0, &out, NULL, want) == TFD_INVALID_ARGUMENT);
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, NULL, NULL, 0, &y, 1, NULL, 0, NULL, log_done, &d, &r, st);
  CHECK(r != NULL);
  CHECK(tfd_run_wait(r, -1, st));
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "You must feed a value for placeholder tensor 'x'");
  CHECK_INT(tfd_run_take_outputs(r, &out, st), TFD_INVALID_ARGUMENT);
  CHECK_STR(tfd_status_message(st), tfd_status_message(want));
  tfd_status_reset(st);
  CHECK_INT(atomic_load(&d.calls), 1); /* only the run that started called done */
  CHECK_INT(d.code, TFD_INVALID_ARGUMENT);
  CHECK_STR(d.message, tfd_status_message(want));
  tfd_run_free(r);
  /* A released callable. */
  int64_t h = tfd_session_make_callable(s, &feed, 1, &y, 1, NULL, 0, st);
  CHECK(h >= 0);
  CHECK_INT(tfd_session_release_callable(s, h, st), TFD_OK);
  tfd_tensor *x = tg_vec((float[]){1}, 1);
  CHECK(tfd_session_run_callable_async(s, h, NULL, &x, NULL, NULL, NULL, &(tfd_run *){NULL}, st) != TFD_OK);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "No such callable handle");
  tfd_tensor_unref(x);
  tfd_session_free(s);
  tfd_status_free(want);
  tfd_status_free(st);
}

/* A step blocked on an empty queue: waits with a timeout return false, its feed cannot be written,
 * cancel wakes it with CANCELLED. */
static void test_cancel_a_blocked_step(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(1, st);
  const char *w = "wait_then_neg", *feed = "x";
  float xv[] = {1, 2};
  tfd_tensor *x = tg_vec(xv, 2);
  done_log d = {0};
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, &feed, &x, 1, &w, 1, NULL, 0, NULL, log_done, &d, &r, st);
  CHECK(r != NULL);
  CHECK_INT(tfd_tensor_fill(x, &(float){9}, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "tensor is in use by a running step");
  CHECK(at(x, 0) == 1);
  CHECK(!tfd_run_ready(r));
  CHECK(!tfd_run_wait(r, 30, st)); /* still blocked: false, status untouched */
  CHECK_INT(tfd_status_code(st), TFD_OK);
  tfd_tensor *out = NULL;
  CHECK_INT(tfd_run_take_outputs(r, &out, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "has not ended");
  CHECK_INT(atomic_load(&d.calls), 0);
  tfd_run_cancel(r);
  CHECK(tfd_run_wait(r, -1, st));
  CHECK_STATUS(st, TFD_CANCELLED, "Run was cancelled.");
  CHECK_INT(atomic_load(&d.calls), 1);
  CHECK_INT(d.code, TFD_CANCELLED);
  tfd_run_cancel(r); /* after the end: nothing changes */
  CHECK(tfd_run_wait(r, 0, st));
  CHECK_STATUS(st, TFD_CANCELLED, "Run was cancelled.");
  tfd_run_free(r);
  CHECK_INT(tfd_tensor_fill(x, &(float){-2}, st), TFD_OK); /* the step let go of it */
  /* The session is still usable. */
  const char *y = "y";
  out = NULL;
  CHECK_INT(tfd_session_run(s, NULL, &feed, &x, 1, &y, 1, NULL, 0, &out, NULL, st), TFD_OK);
  CHECK(out && at(out, 0) == 2 && at(out, 1) == 2);
  tfd_tensor_unref(out);
  tfd_tensor_unref(x);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* The run's own timeout ends a blocked step with DEADLINE_EXCEEDED, in the blocking run's words. */
static void test_run_deadline(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(1, st);
  const char *take = "take";
  tfd_run_options ro = {.timeout_ms = 40};
  done_log d = {0};
  tfd_run *r = NULL;
  tfd_session_run_async(s, &ro, NULL, NULL, 0, &take, 1, NULL, 0, NULL, log_done, &d, &r, st);
  CHECK(r != NULL);
  CHECK(!tfd_run_wait(r, 5, st)); /* the wait's own timeout, before the run's */
  CHECK(tfd_run_wait(r, 10000, st));
  CHECK_STATUS(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (40 ms)");
  CHECK_INT(atomic_load(&d.calls), 1);
  tfd_run_free(r);
  /* Polled: ready() past the deadline cancels it too. */
  tfd_session_run_async(s, &ro, NULL, NULL, 0, &take, 1, NULL, 0, NULL, NULL, NULL, &r, st);
  CHECK(r != NULL);
  nap_ms(60);
  for (int i = 0; i < 2000 && !tfd_run_ready(r); i++) nap_ms(1);
  CHECK(tfd_run_wait(r, 0, st));
  CHECK_STATUS(st, TFD_DEADLINE_EXCEEDED, "Timed out waiting for the step (40 ms)");
  tfd_run_free(r);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* Freeing a run in flight cancels it and waits: done has run when free returns. */
static void test_free_while_in_flight(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(2, st);
  const char *take = "take";
  done_log d = {0};
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, NULL, NULL, 0, &take, 1, NULL, 0, NULL, log_done, &d, &r, st);
  CHECK(r != NULL);
  nap_ms(10);
  tfd_run_free(r);
  CHECK_INT(atomic_load(&d.calls), 1);
  CHECK_INT(d.code, TFD_CANCELLED);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* Closing and freeing the session cancels runs in flight and waits for them; the handles stay valid. */
static void test_session_free_while_in_flight(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(2, st);
  const char *take = "take", *feed = "x", *w = "wait_then_neg";
  float xv = 1;
  tfd_tensor *x = tg_vec(&xv, 1);
  done_log d1 = {0}, d2 = {0};
  tfd_run *r1 = NULL;
  tfd_session_run_async(s, NULL, NULL, NULL, 0, &take, 1, NULL, 0, NULL, log_done, &d1, &r1, st);
  tfd_run *r2 = NULL;
  tfd_session_run_async(s, NULL, &feed, &x, 1, &w, 1, NULL, 0, NULL, log_done, &d2, &r2, st);
  CHECK(r1 && r2);
  nap_ms(10);
  tfd_session_free(s);
  CHECK_INT(atomic_load(&d1.calls), 1);
  CHECK_INT(atomic_load(&d2.calls), 1);
  CHECK(tfd_run_ready(r1) && tfd_run_ready(r2));
  CHECK(tfd_run_wait(r2, 0, st));
  CHECK_STATUS(st, TFD_CANCELLED, "Session has been closed.");
  CHECK_STR(d1.message, "Session has been closed.");
  tfd_run_free(r1);
  tfd_run_free(r2);
  /* The feed is the caller's alone again: the ended step let go of it. */
  CHECK_INT(tfd_tensor_fill(x, &(float){5}, st), TFD_OK);
  CHECK(at(x, 0) == 5);
  tfd_tensor_unref(x);
  tfd_status_free(st);
}

/* Short runs ending while the session is freed, so that the last run out leaves the session while
 * close() waits for it: each run ends once, with its result or CANCELLED, and under TSan and ASan
 * nothing reads the session after close() has let it go. (CI's TSan once caught a leaving run that
 * read the session after its decrement had let close() through; that interleaving is rare, and this
 * test did not reproduce it in 3,000 rounds: tfd_ds_leave now rules it out by construction.) */
static void test_session_free_as_runs_end(void) {
  tfd_status *st = tfd_status_new();
  const char *feed = "x", *y = "y";
  float xv = 2;
  tfd_tensor *x = tg_vec(&xv, 1);
  for (int round = 0; round < 100; round++) {
    tfd_session *s = new_session(1, st);
    enum { RUNS = 4 };
    done_log d[RUNS];
    tfd_run *r[RUNS];
    memset(d, 0, sizeof d);
    for (int i = 0; i < RUNS; i++) {
      tfd_session_run_async(s, NULL, &feed, &x, 1, &y, 1, NULL, 0, NULL, log_done, &d[i], &r[i], st);
      CHECK(r[i] != NULL);
    }
    if (round % 2) nap_ms(0); /* the runs end before, during or after the free */
    tfd_session_free(s);
    for (int i = 0; i < RUNS; i++) {
      CHECK_INT(atomic_load(&d[i].calls), 1);
      CHECK(d[i].code == TFD_OK || d[i].code == TFD_CANCELLED);
      tfd_run_free(r[i]);
    }
  }
  tfd_tensor_unref(x);
  tfd_status_free(st);
}

/* A callable started asynchronously, a step per "frame" consuming the previous one, the feed written
 * in place each time (refused while a step holds it). */
static void test_callable_frame_loop(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(1, st);
  const char *feed = "x", *y = "y";
  int64_t h = tfd_session_make_callable(s, &feed, 1, &y, 1, NULL, 0, st);
  CHECK(h >= 0);
  float zero[2] = {0, 0};
  tfd_tensor *in[2] = {tg_vec(zero, 2), tg_vec(zero, 2)}; /* double-buffered: one in flight, one written */
  tfd_run *prev = NULL;
  int consumed = 0;
  for (int frame = 0; frame < 50; frame++) {
    tfd_tensor *x = in[frame % 2];
    float v[2] = {(float)frame, (float)(2 * frame)};
    CHECK_INT(tfd_tensor_copy_from_bytes(x, v, sizeof v, st), TFD_OK);
    tfd_run *r = NULL;
    tfd_session_run_callable_async(s, h, NULL, &x, NULL, NULL, NULL, &r, st);
    CHECK(r != NULL);
    if (!r) break;
    /* While r holds x, x cannot change (the step may have ended already: then the write is allowed). */
    if (tfd_tensor_copy_from_bytes(x, v, sizeof v, st) != TFD_OK) CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "in use by a running step");
    if (prev) {
      CHECK(tfd_run_wait(prev, -1, st));
      tfd_tensor *out = NULL;
      CHECK_INT(tfd_run_take_outputs(prev, &out, st), TFD_OK);
      CHECK(out && at(out, 0) == -(float)(frame - 1) && at(out, 1) == -(float)(2 * (frame - 1)));
      tfd_tensor_unref(out);
      tfd_run_free(prev);
      consumed++;
    }
    prev = r;
  }
  tfd_run_free(prev); /* done or cancelled: either way it ends here */
  CHECK_INT(consumed, 49);
  tfd_tensor_unref(in[0]);
  tfd_tensor_unref(in[1]);
  tfd_session_free(s);
  tfd_status_free(st);
}

/* done may free its own run and start another run of the session. */
typedef struct chain {
  tfd_session *s;
  _Atomic(tfd_run *) run;
  tfd_run *next;
  atomic_int calls;
} chain;

static void chain_done(void *arg, const tfd_status *status) {
  (void)status;
  chain *c = arg;
  tfd_run *mine;
  while (!(mine = atomic_load(&c->run))) { /* the starter stores it right after the call returns */
  }
  const char *take = "take";
  tfd_status *st = tfd_status_new();
  tfd_session_run_async(c->s, NULL, NULL, NULL, 0, &take, 1, NULL, 0, NULL, NULL, NULL, &c->next, st);
  tfd_status_free(st);
  tfd_run_free(mine); /* from its own done: does not wait for itself */
  atomic_fetch_add(&c->calls, 1);
}

static void test_done_frees_its_run_and_starts_another(void) {
  tfd_status *st = tfd_status_new();
  tfd_session *s = new_session(1, st);
  const char *feed = "x", *y = "y";
  tfd_tensor *x = tg_vec((float[]){3}, 1);
  chain c = {.s = s};
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, &feed, &x, 1, &y, 1, NULL, 0, NULL, chain_done, &c, &r, st);
  CHECK(r != NULL);
  atomic_store(&c.run, r);
  for (int i = 0; i < 5000 && atomic_load(&c.calls) == 0; i++) nap_ms(1);
  CHECK_INT(atomic_load(&c.calls), 1);
  CHECK(c.next != NULL);
  tfd_session_free(s); /* cancels the blocked second run */
  CHECK(c.next && tfd_run_ready(c.next));
  tfd_run_free(c.next);
  tfd_tensor_unref(x);
  tfd_status_free(st);
}

/* A synchronous session has no pool: the step runs inside the call, done on the caller's thread. */
typedef struct thread_log {
  pthread_t caller;
  atomic_int on_caller, calls;
} thread_log;

static void note_thread(void *arg, const tfd_status *st) {
  thread_log *t = arg;
  CHECK_INT(tfd_status_code(st), TFD_OK);
  if (pthread_equal(pthread_self(), t->caller)) atomic_fetch_add(&t->on_caller, 1);
  atomic_fetch_add(&t->calls, 1);
}

static void test_synchronous_session(void) {
  tfd_status *st = tfd_status_new();
  tfd_graph_def *g = tfd_graph_def_new();
  tg_set_type(tg_node(g, "x", "Placeholder", NULL, NULL, NULL), "dtype", TFD_FLOAT32);
  tg_node(g, "y", "Neg", "x", NULL, NULL);
  tfd_session_options *o = tfd_session_options_new();
  tfd_session_options_set_inter_op_threads(o, -1);
  tfd_session *s = NULL;
  tfd_session_new(o, NULL, NULL, &s, st);
  CHECK(s != NULL);
  CHECK_INT(tfd_session_create(s, g, st), TFD_OK);
  const char *feed = "x", *y = "y";
  tfd_tensor *x = tg_vec((float[]){4}, 1), *out = NULL;
  thread_log t = {.caller = pthread_self()};
  tfd_run *r = NULL;
  tfd_session_run_async(s, NULL, &feed, &x, 1, &y, 1, NULL, 0, NULL, note_thread, &t, &r, st);
  CHECK(r != NULL);
  CHECK_INT(atomic_load(&t.calls), 1); /* already ended */
  CHECK_INT(atomic_load(&t.on_caller), 1);
  CHECK(tfd_run_ready(r));
  CHECK_INT(tfd_run_take_outputs(r, &out, st), TFD_OK);
  CHECK(out && at(out, 0) == -4);
  tfd_tensor_unref(out);
  tfd_run_free(r);
  tfd_tensor_unref(x);
  tfd_session_free(s);
  tfd_session_options_free(o);
  tfd_graph_def_free(g);
  tfd_status_free(st);
}

/* In-place writes: values, and what they refuse. */
static void test_copy_from_and_fill(void) {
  tfd_status *st = tfd_status_new();
  int64_t d23[] = {2, 3}, d6[] = {6};
  tfd_tensor *a = NULL;
  tfd_tensor_new(NULL, TFD_FLOAT32, d23, 2, &a, st);
  float v[6] = {1, 2, 3, 4, 5, 6};
  tfd_tensor *b = NULL;
  tfd_tensor_from_bytes(NULL, TFD_FLOAT32, d6, 1, v, sizeof v, &b, st);
  CHECK_INT(tfd_tensor_copy_from(a, b, st), TFD_OK); /* shapes may differ, counts may not */
  CHECK(at(a, 5) == 6);
  CHECK_INT(tfd_tensor_fill(a, &(float){-1.5f}, st), TFD_OK);
  for (int i = 0; i < 6; i++) CHECK(at(a, i) == -1.5f);
  int64_t i3 = 3;
  int32_t iv[3] = {1, 2, 3};
  tfd_tensor *c = NULL;
  tfd_tensor_from_bytes(NULL, TFD_INT32, &i3, 1, iv, sizeof iv, &c, st);
  CHECK_INT(tfd_tensor_copy_from(a, c, st), TFD_INVALID_ARGUMENT);
  CHECK_CONTAINS(tfd_status_message(st), "float32 [2,3]");
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "int32 [3]");
  CHECK_INT(tfd_tensor_copy_from_bytes(a, v, 8, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "8 bytes");
  CHECK_INT(tfd_tensor_fill(c, &(int32_t){7}, st), TFD_OK);
  CHECK(((const int32_t *)tfd_tensor_const_data(c))[2] == 7);
  /* A view shares the buffer: neither may be written. */
  tfd_tensor *row = NULL;
  tfd_tensor_slice(a, 1, &row, st);
  CHECK_INT(tfd_tensor_fill(a, &(float){0}, st), TFD_FAILED_PRECONDITION);
  CHECK_STATUS(st, TFD_FAILED_PRECONDITION, "shares its buffer");
  CHECK_INT(tfd_tensor_fill(row, &(float){0}, st), TFD_FAILED_PRECONDITION);
  tfd_status_reset(st);
  tfd_tensor_unref(row);
  CHECK_INT(tfd_tensor_fill(a, &(float){0}, st), TFD_OK);
  /* A second reference to the tensor itself. */
  tfd_tensor_ref(b);
  CHECK_INT(tfd_tensor_copy_from(b, a, st), TFD_FAILED_PRECONDITION);
  tfd_status_reset(st);
  tfd_tensor_unref(b);
  tfd_tensor_unref(a);
  tfd_tensor_unref(b);
  tfd_tensor_unref(c);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"outputs, metadata and done, one and two partitions", test_outputs_and_done},
    {"errors match the blocking run", test_errors_match_the_blocking_run},
    {"cancel a step blocked on an empty queue", test_cancel_a_blocked_step},
    {"the run's deadline", test_run_deadline},
    {"free a run in flight", test_free_while_in_flight},
    {"free the session with runs in flight", test_session_free_while_in_flight},
    {"free the session as short runs end", test_session_free_as_runs_end},
    {"a callable in a frame loop, feeds written in place", test_callable_frame_loop},
    {"done frees its run and starts another", test_done_frees_its_run_and_starts_another},
    {"a synchronous session runs the step inside the call", test_synchronous_session},
    {"copy_from and fill", test_copy_from_and_fill},
};
TFD_TEST_MAIN(tests)
