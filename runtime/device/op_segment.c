/* OpSegment: per-session kernel caches kept by each device. */
#include <stdlib.h>

#include "../core/status_internal.h"
#include "op_segment.h"

typedef struct segment_item {
  int holds;
  tfd_strmap kernels; /* node name -> tfd_op_kernel* */
} segment_item;

static void item_free(segment_item *item) {
  size_t it = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(&item->kernels, &it, &k, &v)) ((tfd_op_kernel *)v)->ops->destroy(v);
  tfd_strmap_free(&item->kernels);
  free(item);
}

void tfd_op_segment_init(tfd_op_segment *s) {
  pthread_mutex_init(&s->mu, NULL);
  s->sessions = (tfd_strmap)TFD_STRMAP_INIT;
}

void tfd_op_segment_fini(tfd_op_segment *s) {
  size_t it = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(&s->sessions, &it, &k, &v)) item_free(v);
  tfd_strmap_free(&s->sessions);
  pthread_mutex_destroy(&s->mu);
}

tfd_code tfd_op_segment_add_hold(tfd_op_segment *s, const char *session, tfd_status *status) {
  pthread_mutex_lock(&s->mu);
  segment_item *item = tfd_strmap_get(&s->sessions, session);
  if (!item) {
    item = calloc(1, sizeof *item);
    if (!item || !tfd_strmap_put(&s->sessions, session, item)) {
      free(item);
      pthread_mutex_unlock(&s->mu);
      return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory holding session '%s'", session);
    }
  }
  item->holds++;
  pthread_mutex_unlock(&s->mu);
  return TFD_OK;
}

void tfd_op_segment_remove_hold(tfd_op_segment *s, const char *session) {
  segment_item *dead = NULL;
  pthread_mutex_lock(&s->mu);
  segment_item *item = tfd_strmap_get(&s->sessions, session);
  if (item && --item->holds == 0) dead = tfd_strmap_remove(&s->sessions, session);
  pthread_mutex_unlock(&s->mu);
  if (dead) item_free(dead); /* kernels may be slow to destroy: not under the lock */
}

tfd_code tfd_op_segment_find_or_create(tfd_op_segment *s, const char *session, const char *node,
                                       tfd_create_kernel_fn create, void *arg, tfd_op_kernel **out,
                                       tfd_status *status) {
  *out = NULL;
  pthread_mutex_lock(&s->mu);
  segment_item *item = tfd_strmap_get(&s->sessions, session);
  if (!item) {
    pthread_mutex_unlock(&s->mu);
    return tfd_status_setf(status, TFD_NOT_FOUND, "session '%s' holds no op segment on this device", session);
  }
  tfd_op_kernel *k = tfd_strmap_get(&item->kernels, node);
  pthread_mutex_unlock(&s->mu);
  if (k) {
    *out = k;
    return TFD_OK;
  }
  /* Create outside the lock: kernel construction may be slow or re-enter. */
  tfd_op_kernel *made = create(arg, status);
  if (!made) return tfd_status_code(status) != TFD_OK ? tfd_status_code(status) : TFD_INTERNAL;
  pthread_mutex_lock(&s->mu);
  item = tfd_strmap_get(&s->sessions, session);
  k = item ? tfd_strmap_get(&item->kernels, node) : NULL;
  tfd_code code = TFD_OK;
  if (!item) {
    code = tfd_status_setf(status, TFD_NOT_FOUND, "session '%s' released its op segment", session);
  } else if (!k) {
    if (tfd_strmap_put(&item->kernels, node, made)) {
      k = made;
      made = NULL;
    } else {
      code = tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory caching kernel '%s'", node);
    }
  }
  pthread_mutex_unlock(&s->mu);
  if (made) made->ops->destroy(made); /* lost a race, or failed: drop ours */
  *out = code == TFD_OK ? k : NULL;
  return code;
}

size_t tfd_op_segment_num_kernels(tfd_op_segment *s, const char *session) {
  pthread_mutex_lock(&s->mu);
  segment_item *item = tfd_strmap_get(&s->sessions, session);
  size_t n = item ? item->kernels.size : 0;
  pthread_mutex_unlock(&s->mu);
  return n;
}
