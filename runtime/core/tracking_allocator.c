/* The tracking allocator (tracking_allocator.h): forwards every call to the allocator it wraps and
 * counts what passes, under its own lock because tensors it made may be freed on any thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "allocator_internal.h"
#include "tracking_allocator.h"

typedef struct tracker {
  tfd_allocator base;
  tfd_allocator *inner;
  pthread_mutex_t mu;
  int64_t total, peak, live;
  bool keep_records;
  tfd_alloc_record *records;
  int num_records, cap_records;
} tracker;

static int64_t now_micros(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* Called with mu held. A record that does not fit (out of memory) is dropped: the sizes stay right. */
static void add_record(tracker *t, int64_t bytes) {
  if (!t->keep_records) return;
  if (t->num_records == t->cap_records) {
    int cap = t->cap_records ? 2 * t->cap_records : 4;
    tfd_alloc_record *grown = realloc(t->records, (size_t)cap * sizeof *grown);
    if (!grown) return;
    t->records = grown;
    t->cap_records = cap;
  }
  t->records[t->num_records++] = (tfd_alloc_record){now_micros(), bytes};
}

static void *tracker_allocate(tfd_allocator *a, size_t alignment, size_t size, tfd_status *st) {
  tracker *t = (tracker *)a;
  void *p = tfd_allocator_allocate(t->inner, alignment, size, st);
  if (!p) return NULL;
  tfd_allocator_ref(a); /* the buffer comes back through us */
  pthread_mutex_lock(&t->mu);
  t->total += (int64_t)size;
  t->live += (int64_t)size;
  if (t->live > t->peak) t->peak = t->live;
  add_record(t, (int64_t)size);
  pthread_mutex_unlock(&t->mu);
  return p;
}

static void tracker_deallocate(tfd_allocator *a, void *ptr, size_t size) {
  tracker *t = (tracker *)a;
  tfd_allocator_deallocate(t->inner, ptr, size);
  pthread_mutex_lock(&t->mu);
  t->live -= (int64_t)size;
  add_record(t, -(int64_t)size);
  pthread_mutex_unlock(&t->mu);
  tfd_allocator_unref(a);
}

static void tracker_get_stats(const tfd_allocator *a, tfd_allocator_stats *out) {
  tfd_allocator_get_stats(((const tracker *)a)->inner, out);
}

static void tracker_destroy(tfd_allocator *a) {
  tracker *t = (tracker *)a;
  tfd_allocator_unref(t->inner);
  pthread_mutex_destroy(&t->mu);
  free(t->records);
  tfd_allocator_fini(a);
  free(t);
}

static const tfd_allocator_ops tracker_ops = {tracker_allocate, tracker_deallocate, tracker_get_stats, tracker_destroy,
                                              NULL};

/* Device memory moves through the wrapped allocator, which knows its memory. */
static tfd_code tracker_to_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, tfd_status *st) {
  tfd_allocator *in = ((tracker *)a)->inner;
  return in->device_memory->to_host(in, dst, src, bytes, st);
}

static tfd_code tracker_from_host(tfd_allocator *a, void *dst, const void *src, size_t bytes, void (*release)(void *),
                                  void *release_arg, tfd_status *st) {
  tfd_allocator *in = ((tracker *)a)->inner;
  return in->device_memory->from_host(in, dst, src, bytes, release, release_arg, st);
}

static const tfd_device_memory_ops tracker_memory_ops = {tracker_to_host, tracker_from_host};

tfd_allocator *tfd_tracking_allocator_new(tfd_allocator *inner, bool records) {
  tracker *t = calloc(1, sizeof *t);
  if (!t || !tfd_allocator_init(&t->base, &tracker_ops, tfd_allocator_name(inner))) {
    free(t);
    return NULL;
  }
  t->inner = tfd_allocator_ref(inner);
  if (inner->device_memory) t->base.device_memory = &tracker_memory_ops;
  pthread_mutex_init(&t->mu, NULL);
  t->keep_records = records;
  return &t->base;
}

bool tfd_allocator_is_tracking(const tfd_allocator *a) { return a && a->ops == &tracker_ops; }

void tfd_tracking_allocator_sizes(tfd_allocator *a, int64_t *total, int64_t *peak, int64_t *live) {
  tracker *t = (tracker *)a;
  pthread_mutex_lock(&t->mu);
  *total = t->total;
  *peak = t->peak;
  *live = t->live;
  pthread_mutex_unlock(&t->mu);
}

tfd_alloc_record *tfd_tracking_allocator_records(tfd_allocator *a, int *n) {
  tracker *t = (tracker *)a;
  pthread_mutex_lock(&t->mu);
  tfd_alloc_record *copy = t->num_records ? malloc((size_t)t->num_records * sizeof *copy) : NULL;
  *n = copy ? t->num_records : 0;
  if (copy) memcpy(copy, t->records, (size_t)t->num_records * sizeof *copy);
  pthread_mutex_unlock(&t->mu);
  return copy;
}
