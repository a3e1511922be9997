/* The event manager against a fake stream whose work a test completes by hand: callbacks run only
 * once the stream passed them, in order, from the polling thread; 10,000 steps leave nothing
 * behind; a failed stream still releases what waited on it; free waits for every callback. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "gpu/event_mgr.h"
#include "runtime/testing/harness.h"

/* A stream: work items are numbered as they are queued; `completed` of them are done. */
typedef struct fake_stream {
  atomic_long queued, completed;
  atomic_bool failed;
} fake_stream;

typedef struct fake_event {
  fake_stream *stream;
  long seq; /* completes when the stream completed more than seq items */
} fake_event;

typedef struct fake_ctx {
  atomic_int live_events, creates;
  atomic_bool refuse;
} fake_ctx;

static void *fe_create(void *ctx) {
  fake_ctx *c = ctx;
  if (atomic_load(&c->refuse)) return NULL;
  atomic_fetch_add(&c->live_events, 1);
  atomic_fetch_add(&c->creates, 1);
  return calloc(1, sizeof(fake_event));
}

static tfd_code fe_record(void *ctx, void *event, void *stream, tfd_status *st) {
  (void)ctx, (void)st;
  fake_event *e = event;
  e->stream = stream;
  e->seq = atomic_fetch_add(&e->stream->queued, 1);
  return TFD_OK;
}

static int fe_query(void *ctx, void *event) {
  (void)ctx;
  fake_event *e = event;
  if (atomic_load(&e->stream->failed)) return -1;
  return atomic_load(&e->stream->completed) > e->seq ? 1 : 0;
}

static void fe_destroy(void *ctx, void *event) {
  fake_ctx *c = ctx;
  atomic_fetch_sub(&c->live_events, 1);
  free(event);
}

static tfd_event_mgr *new_mgr(fake_ctx *c) {
  tfd_event_provider p = {c, fe_create, fe_record, fe_query, fe_destroy};
  return tfd_event_mgr_new(&p, 5, NULL);
}

typedef struct run_log {
  pthread_t thread;
  int order[64];
  int next;    /* written by the polling thread only */
  atomic_int n; /* published after order and thread: read it first */
} run_log;

typedef struct note {
  run_log *log;
  int id;
} note;

static void note_run(void *arg) {
  note *n = arg;
  n->log->order[n->log->next++] = n->id;
  n->log->thread = pthread_self();
  atomic_fetch_add_explicit(&n->log->n, 1, memory_order_release);
}

static void sleep_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static void test_callbacks_wait_for_the_stream(void) {
  fake_ctx c = {0};
  fake_stream s = {0};
  tfd_event_mgr *m = new_mgr(&c);
  CHECK(m != NULL);
  run_log log = {0};
  note notes[3] = {{&log, 0}, {&log, 1}, {&log, 2}};
  for (int i = 0; i < 3; i++) CHECK_INT(tfd_event_mgr_then_execute(m, &s, note_run, &notes[i], NULL), TFD_OK);
  sleep_ms(20);
  CHECK_INT(atomic_load(&log.n), 0); /* nothing completed: nothing ran */
  CHECK_INT((int)tfd_event_mgr_pending(m), 3);
  atomic_store(&s.completed, 2); /* the first two items are done */
  for (int t = 0; t < 2000 && atomic_load(&log.n) < 2; t++) sleep_ms(1);
  sleep_ms(10);
  CHECK_INT(atomic_load(&log.n), 2);
  CHECK(log.order[0] == 0 && log.order[1] == 1);
  CHECK(!pthread_equal(log.thread, pthread_self())); /* on the polling thread */
  atomic_store(&s.completed, 3);
  tfd_event_mgr_free(m); /* waits for the last one */
  CHECK_INT(atomic_load(&log.n), 3);
  CHECK_INT(log.order[2], 2);
  CHECK_INT(atomic_load(&c.live_events), 0);
}

/* 10,000 steps, each holding a reference the callback releases: none is left, events are reused. */
typedef struct ref {
  atomic_int *live;
} ref;

static void release(void *arg) {
  ref *r = arg;
  atomic_fetch_sub(r->live, 1);
  free(r);
}

typedef struct completer {
  fake_stream *s;
  atomic_bool stop;
} completer;

static void *complete_loop(void *arg) { /* the "GPU": completes whatever was queued, in bursts */
  completer *c = arg;
  while (!atomic_load(&c->stop)) {
    atomic_store(&c->s->completed, atomic_load(&c->s->queued));
    struct timespec ts = {0, 50000};
    nanosleep(&ts, NULL);
  }
  atomic_store(&c->s->completed, atomic_load(&c->s->queued));
  return NULL;
}

static void test_many_steps_leave_nothing(void) {
  fake_ctx c = {0};
  fake_stream s = {0};
  tfd_event_mgr *m = new_mgr(&c);
  atomic_int live = 0;
  completer comp = {&s, false};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, complete_loop, &comp) == 0);
  int steps = getenv("TFDEV_UNDER_VALGRIND") ? 1000 : 10000;
  for (int i = 0; i < steps; i++) {
    ref *r = malloc(sizeof *r);
    r->live = &live;
    atomic_fetch_add(&live, 1);
    CHECK_INT(tfd_event_mgr_then_execute(m, &s, release, r, NULL), TFD_OK);
  }
  atomic_store(&comp.stop, true);
  pthread_join(t, NULL);
  while (tfd_event_mgr_pending(m) > 0) sleep_ms(1);
  CHECK_INT(atomic_load(&live), 0);
  /* one step at a time now: each reuses a spent event, none is created */
  int created = atomic_load(&c.creates);
  for (int i = 0; i < 100; i++) {
    ref *r = malloc(sizeof *r);
    r->live = &live;
    atomic_fetch_add(&live, 1);
    CHECK_INT(tfd_event_mgr_then_execute(m, &s, release, r, NULL), TFD_OK);
    atomic_store(&s.completed, atomic_load(&s.queued));
    while (tfd_event_mgr_pending(m) > 0) sleep_ms(1);
  }
  CHECK_INT(atomic_load(&c.creates), created);
  tfd_event_mgr_free(m);
  CHECK_INT(atomic_load(&live), 0);
  CHECK_INT(atomic_load(&c.live_events), 0);
}

static void test_failures_and_refusals(void) {
  fake_ctx c = {0};
  fake_stream s = {0};
  tfd_event_mgr *m = new_mgr(&c);
  atomic_int live = 1;
  ref *r = malloc(sizeof *r);
  r->live = &live;
  CHECK_INT(tfd_event_mgr_then_execute(m, &s, release, r, NULL), TFD_OK);
  atomic_store(&s.failed, true); /* the stream dies: the reference is still released */
  for (int t = 0; t < 2000 && atomic_load(&live); t++) sleep_ms(1);
  CHECK_INT(atomic_load(&live), 0);
  CHECK_INT((int)tfd_event_mgr_failures(m), 1);
  atomic_store(&s.failed, false);
  atomic_store(&c.refuse, true); /* no event to be had (and none spare after the failure? one is) */
  tfd_status *st = tfd_status_new();
  run_log log = {0};
  note n1 = {&log, 1}, n2 = {&log, 2};
  CHECK_INT(tfd_event_mgr_then_execute(m, &s, note_run, &n1, st), TFD_OK); /* the recycled event */
  CHECK_INT(tfd_event_mgr_then_execute(m, &s, note_run, &n2, st), TFD_RESOURCE_EXHAUSTED);
  CHECK_CONTAINS(tfd_status_message(st), "queuing a callback");
  atomic_store(&s.completed, atomic_load(&s.queued));
  tfd_event_mgr_free(m);
  CHECK_INT(atomic_load(&log.n), 1); /* the refused callback never ran: its caller still owns it */
  CHECK_INT(atomic_load(&c.live_events), 0);
  tfd_event_provider bad = {0};
  CHECK(tfd_event_mgr_new(&bad, 5, st) == NULL);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "needs create, record, query and destroy");
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"callbacks wait for the stream", test_callbacks_wait_for_the_stream},
    {"many steps leave nothing", test_many_steps_leave_nothing},
    {"failures and refusals", test_failures_and_refusals},
};

TFD_TEST_MAIN(tests)
