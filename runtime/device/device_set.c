/* DeviceSet: the devices a graph may use, with a full+legacy name map and a client device. */
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "tfdev/device_set.h"

struct tfd_device_set {
  tfd_device **devices; /* one reference each */
  size_t size, cap;
  tfd_strmap by_name; /* full and legacy names -> device */
  tfd_device *client;
};

tfd_device_set *tfd_device_set_new(void) { return calloc(1, sizeof(tfd_device_set)); }

void tfd_device_set_free(tfd_device_set *s) {
  if (!s) return;
  for (size_t i = 0; i < s->size; i++) tfd_device_unref(s->devices[i]);
  free(s->devices);
  tfd_strmap_free(&s->by_name);
  free(s);
}

tfd_code tfd_device_set_add(tfd_device_set *s, tfd_device *d, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_set_add", "s", s) || tfd_arg_required(status, "tfd_device_set_add", "d", d))
    return TFD_INVALID_ARGUMENT;
  char full[TFD_DEVICE_NAME_MAX], legacy[TFD_DEVICE_NAME_MAX];
  const tfd_parsed_name *p = tfd_device_parsed_name(d);
  tfd_device_name_full(p, full, NULL);
  tfd_device_name_legacy(p, legacy, NULL);
  if (tfd_strmap_get(&s->by_name, full))
    return tfd_status_setf(status, TFD_ALREADY_EXISTS, "device set already holds a device named '%s'", full);
  if (s->size == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 4;
    tfd_device **ds = realloc(s->devices, cap * sizeof *ds);
    if (!ds) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding '%s'", full);
    s->devices = ds;
    s->cap = cap;
  }
  if (!tfd_strmap_put(&s->by_name, full, d) || !tfd_strmap_put(&s->by_name, legacy, d)) {
    tfd_strmap_remove(&s->by_name, full);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding '%s'", full);
  }
  s->devices[s->size++] = tfd_device_ref(d);
  return TFD_OK;
}

size_t tfd_device_set_size(const tfd_device_set *s) { return s->size; }
tfd_device *tfd_device_set_get(const tfd_device_set *s, size_t i) { return i < s->size ? s->devices[i] : NULL; }

tfd_device *tfd_device_set_find_by_name(const tfd_device_set *s, const char *name) {
  return name ? tfd_strmap_get(&s->by_name, name) : NULL;
}

size_t tfd_device_set_find_matching(const tfd_device_set *s, const tfd_parsed_name *spec, tfd_device **out,
                                    size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < s->size; i++) {
    if (!tfd_device_name_is_specification(spec, tfd_device_parsed_name(s->devices[i]))) continue;
    if (n < cap) out[n] = s->devices[i];
    n++;
  }
  return n;
}

typedef struct typed {
  const char *type;
  int priority;
} typed;

static int typed_cmp(const void *a, const void *b) {
  const typed *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  return strcmp(x->type, y->type);
}

size_t tfd_device_set_prioritized_types(const tfd_device_set *s, const tfd_factory_registry *registry,
                                        const char **out, size_t cap) {
  typed *ts = malloc((s->size ? s->size : 1) * sizeof *ts);
  if (!ts) return 0;
  size_t n = 0;
  for (size_t i = 0; i < s->size; i++) {
    const char *t = tfd_device_type(s->devices[i]);
    bool seen = false;
    for (size_t j = 0; j < n && !seen; j++) seen = strcmp(ts[j].type, t) == 0;
    if (!seen) ts[n++] = (typed){t, registry ? tfd_factory_registry_priority(registry, t) : -1};
  }
  qsort(ts, n, sizeof *ts, typed_cmp);
  for (size_t i = 0; i < n && i < cap; i++) out[i] = ts[i].type;
  free(ts);
  return n;
}

tfd_device *tfd_device_set_client_device(const tfd_device_set *s) { return s->client; }

tfd_code tfd_device_set_set_client_device(tfd_device_set *s, tfd_device *d, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_set_set_client_device", "s", s) ||
      tfd_arg_required(status, "tfd_device_set_set_client_device", "d", d))
    return TFD_INVALID_ARGUMENT;
  for (size_t i = 0; i < s->size; i++) {
    if (s->devices[i] == d) {
      s->client = d;
      return TFD_OK;
    }
  }
  return tfd_status_setf(status, TFD_NOT_FOUND, "client device '%s' is not in the device set",
                         d ? tfd_device_name(d) : "(null)");
}
