/* The cancellation's contract (cancellation.h): a registration drops its hold on its argument exactly
 * once, whichever way it ends, and a refused one keeps nothing; deregistering never waits, not even
 * from inside a callback of the same cancel (a callback's work may end its own step there); and the
 * caller queue's closing (caller_queue.h): what waits is cancelled, unrun, and later posts are
 * refused. */
#include <pthread.h>
#include <stdatomic.h>

#include "runtime/framework/caller_queue.h"
#include "runtime/framework/cancellation.h"
#include "runtime/testing/harness.h"

typedef struct held {
  atomic_int runs, releases;
  tfd_code code;
  char message[64];
} held;

static void note_run(void *arg, tfd_code code, const char *message) {
  held *h = arg;
  h->code = code;
  snprintf(h->message, sizeof h->message, "%s", message);
  atomic_fetch_add(&h->runs, 1);
}

static void note_release(void *arg) { atomic_fetch_add(&((held *)arg)->releases, 1); }

static void test_release_once_whichever_way(void) {
  tfd_cancellation *c = tfd_cancellation_new();
  CHECK(c != NULL);
  held ran = {0}, removed = {0}, left = {0}, refused = {0}, plain = {0};
  int64_t t_ran = tfd_cancellation_register(c, note_run, note_release, &ran);
  int64_t t_removed = tfd_cancellation_register(c, note_run, note_release, &removed);
  int64_t t_plain = tfd_cancellation_register(c, note_run, NULL, &plain); /* no release: allowed */
  CHECK(t_ran >= 0 && t_removed >= 0 && t_plain >= 0 && t_ran != t_removed && t_removed != t_plain);
  CHECK(tfd_cancellation_deregister(c, t_removed)); /* removed before it ran: released now */
  CHECK_INT(atomic_load(&removed.releases), 1);
  CHECK(!tfd_cancellation_deregister(c, t_removed)); /* twice: nothing more */
  CHECK_INT(atomic_load(&removed.releases), 1);
  CHECK(!tfd_cancellation_is_cancelled(c));
  tfd_cancellation_cancel(c, TFD_CANCELLED, "Run was cancelled.");
  CHECK(tfd_cancellation_is_cancelled(c));
  CHECK_INT(atomic_load(&ran.runs), 1); /* run, then released */
  CHECK_INT(atomic_load(&ran.releases), 1);
  CHECK_INT(atomic_load(&plain.runs), 1);
  CHECK_INT(ran.code, TFD_CANCELLED);
  CHECK_STR(ran.message, "Run was cancelled.");
  CHECK(!tfd_cancellation_deregister(c, t_ran)); /* it ran: false, and no second release */
  CHECK_INT(atomic_load(&ran.releases), 1);
  tfd_cancellation_cancel(c, TFD_DEADLINE_EXCEEDED, "late"); /* the first reason stays */
  CHECK_INT(atomic_load(&ran.runs), 1);
  const char *why = NULL;
  CHECK_INT(tfd_cancellation_reason(c, &why), TFD_CANCELLED);
  CHECK_STR(why, "Run was cancelled.");
  /* Refused once cancelled: never run, and no release (the caller still owns its argument). */
  CHECK_INT(tfd_cancellation_register(c, note_run, note_release, &refused), TFD_CANCEL_ALREADY);
  CHECK_INT(atomic_load(&refused.releases), 0);
  CHECK_INT(atomic_load(&refused.runs), 0);
  CHECK_INT(atomic_load(&removed.runs), 0);
  tfd_cancellation_unref(c);
  /* Still registered when the cancellation goes: released, not run. */
  c = tfd_cancellation_new();
  CHECK(tfd_cancellation_register(c, note_run, note_release, &left) >= 0);
  tfd_cancellation_unref(c);
  CHECK_INT(atomic_load(&left.releases), 1);
  CHECK_INT(atomic_load(&left.runs), 0);
}

/* More registrations than are stored inline: every one runs once and is released once. */
static void test_many_registrations(void) {
  enum { N = 40 };
  tfd_cancellation *c = tfd_cancellation_new();
  held h[N];
  int64_t tokens[N];
  for (int i = 0; i < N; i++) {
    h[i] = (held){0};
    tokens[i] = tfd_cancellation_register(c, note_run, note_release, &h[i]);
    CHECK(tokens[i] >= 0);
  }
  for (int i = 0; i < N; i += 3) CHECK(tfd_cancellation_deregister(c, tokens[i]));
  tfd_cancellation_cancel(c, TFD_DEADLINE_EXCEEDED, "Timed out");
  for (int i = 0; i < N; i++) {
    CHECK_INT(atomic_load(&h[i].releases), 1);
    CHECK_INT(atomic_load(&h[i].runs), i % 3 == 0 ? 0 : 1);
  }
  tfd_cancellation_unref(c);
}

/* A callback that, as a rendezvous abort ending its step does, deregisters on the cancelling thread:
 * its own token (running: false) and another not yet run (already taken by this cancel: false). */
typedef struct reentrant {
  tfd_cancellation *c;
  int64_t tokens[2];
  int returns[2];
} reentrant;

static void deregister_inside(void *arg, tfd_code code, const char *message) {
  (void)code, (void)message;
  reentrant *r = arg;
  for (int i = 0; i < 2; i++) r->returns[i] = tfd_cancellation_deregister(r->c, r->tokens[i]);
}

static void test_deregister_inside_a_callback_does_not_wait(void) {
  reentrant r = {tfd_cancellation_new(), {-1, -1}, {-1, -1}};
  held other = {0};
  r.tokens[0] = tfd_cancellation_register(r.c, deregister_inside, NULL, &r);
  r.tokens[1] = tfd_cancellation_register(r.c, note_run, note_release, &other);
  tfd_cancellation_cancel(r.c, TFD_CANCELLED, "Session has been closed."); /* returns: nothing waited */
  CHECK_INT(r.returns[0], 0);
  CHECK_INT(r.returns[1], 0);
  CHECK_INT(atomic_load(&other.runs), 1); /* taken by the cancel before the callbacks ran */
  CHECK_INT(atomic_load(&other.releases), 1);
  tfd_cancellation_unref(r.c);
}

/* ---- the caller queue ---- */
typedef struct item_log {
  atomic_int ran, cancelled;
} item_log;

static void item_run(void *arg) { atomic_fetch_add(&((item_log *)arg)->ran, 1); }
static void item_cancel(void *arg) { atomic_fetch_add(&((item_log *)arg)->cancelled, 1); }

static void test_caller_queue_close(void) {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  tfd_caller_queue q;
  tfd_caller_queue_init(&q, &mu, &cv);
  item_log drained = {0}, waiting = {0}, later = {0};
  CHECK_INT(tfd_caller_queue_post(&q, item_run, item_cancel, &drained), TFD_OK);
  pthread_mutex_lock(&mu);
  CHECK(tfd_caller_queue_pending_locked(&q));
  tfd_caller_queue_drain_locked(&q); /* the waiter runs it */
  CHECK(!tfd_caller_queue_pending_locked(&q));
  pthread_mutex_unlock(&mu);
  CHECK_INT(atomic_load(&drained.ran), 1);
  CHECK_INT(tfd_caller_queue_post(&q, item_run, item_cancel, &waiting), TFD_OK);
  CHECK_INT(tfd_caller_queue_post(&q, item_run, item_cancel, &waiting), TFD_OK);
  pthread_mutex_lock(&mu);
  caller_item *items = tfd_caller_queue_close_locked(&q);
  CHECK(!tfd_caller_queue_pending_locked(&q)); /* nothing left for a waiter */
  caller_item *again = tfd_caller_queue_close_locked(&q); /* closing twice hands back nothing */
  pthread_mutex_unlock(&mu);
  CHECK(again == NULL);
  tfd_caller_queue_cancel_items(items);
  CHECK_INT(atomic_load(&waiting.cancelled), 2); /* cancelled unrun */
  CHECK_INT(atomic_load(&waiting.ran), 0);
  CHECK_INT(tfd_caller_queue_post(&q, item_run, item_cancel, &later), TFD_CANCELLED); /* refused */
  CHECK_INT(atomic_load(&later.ran) + atomic_load(&later.cancelled), 0);
  CHECK_INT(atomic_load(&drained.cancelled), 0);
}

static const tfd_test tests[] = {
    {"a registration's release runs exactly once, whichever way it ends", test_release_once_whichever_way},
    {"registrations beyond the inline ones run and are released once", test_many_registrations},
    {"deregistering from inside a callback of the same cancel does not wait",
     test_deregister_inside_a_callback_does_not_wait},
    {"a closed caller queue cancels what waits, unrun, and refuses later posts", test_caller_queue_close},
};
TFD_TEST_MAIN(tests)
