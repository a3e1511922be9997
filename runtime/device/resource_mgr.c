/* ResourceMgr: containers of named, reference-counted resources on a device. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "../core/strmap.h"
#include "tfdev/resource_mgr.h"

struct tfd_resource {
  tfd_refcount refs;
  char *type_name;
  void *data;
  void (*destroy)(void *data);
};

struct tfd_resource_mgr {
  pthread_mutex_t mu;
  char *default_container;
  tfd_strmap containers; /* name -> tfd_strmap* of "type\x1fname" -> tfd_resource* */
};

static tfd_resource *make_resource(const char *type_name, void *data, void (*destroy)(void *data), tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_resource_new", "type_name", type_name)) return NULL;
  tfd_resource *r = calloc(1, sizeof *r);
  if (r) r->type_name = strdup(type_name ? type_name : "");
  if (!r || !r->type_name) {
    free(r);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating a resource");
    return NULL;
  }
  tfd_refcount_init(&r->refs);
  r->data = data;
  r->destroy = destroy;
  return r;
}

tfd_code tfd_resource_new(const char *type_name, void *data, void (*destroy)(void *data), tfd_resource **out,
                          tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_resource_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_resource(type_name, data, destroy, &local);
  return tfd_status_move(status, &local);
}

static void tensor_unref_fn(void *t) { tfd_tensor_unref(t); }

static tfd_resource *make_tensor_resource(tfd_tensor *t, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_resource_new", "t", t)) return NULL;
  tfd_resource *r = NULL;
  tfd_resource_new("Tensor", t, tensor_unref_fn, &r, status);
  if (r) tfd_tensor_ref(t);
  return r;
}

tfd_code tfd_tensor_resource_new(tfd_tensor *t, tfd_resource **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_tensor_resource_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_tensor_resource(t, &local);
  return tfd_status_move(status, &local);
}

tfd_resource *tfd_resource_ref(tfd_resource *r) {
  if (r) tfd_refcount_inc(&r->refs);
  return r;
}

void tfd_resource_unref(tfd_resource *r) {
  if (!r || !tfd_refcount_dec(&r->refs)) return;
  if (r->destroy) r->destroy(r->data);
  free(r->type_name);
  free(r);
}

const char *tfd_resource_type_name(const tfd_resource *r) { return r->type_name; }
void *tfd_resource_data(const tfd_resource *r) { return r->data; }
tfd_tensor *tfd_resource_tensor(const tfd_resource *r) {
  return strcmp(r->type_name, "Tensor") == 0 ? r->data : NULL;
}

tfd_resource_mgr *tfd_resource_mgr_new(const char *default_container) {
  tfd_resource_mgr *rm = calloc(1, sizeof *rm);
  if (!rm) return NULL;
  rm->default_container = strdup(default_container && *default_container ? default_container : "localhost");
  if (!rm->default_container) {
    free(rm);
    return NULL;
  }
  pthread_mutex_init(&rm->mu, NULL);
  return rm;
}

static void container_free(tfd_strmap *c) {
  size_t it = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(c, &it, &k, &v)) tfd_resource_unref(v);
  tfd_strmap_free(c);
  free(c);
}

void tfd_resource_mgr_free(tfd_resource_mgr *rm) {
  if (!rm) return;
  size_t it = 0;
  const char *k;
  void *v;
  while (tfd_strmap_next(&rm->containers, &it, &k, &v)) container_free(v);
  tfd_strmap_free(&rm->containers);
  pthread_mutex_destroy(&rm->mu);
  free(rm->default_container);
  free(rm);
}

const char *tfd_resource_mgr_default_container(const tfd_resource_mgr *rm) { return rm->default_container; }

static const char *container_name(const tfd_resource_mgr *rm, const char *c) {
  return c && *c ? c : rm->default_container;
}

/* Resources are keyed by type and name together, as in TensorFlow. */
static void make_key(char *buf, size_t cap, const char *type, const char *name) {
  snprintf(buf, cap, "%s\x1f%s", type, name);
}

tfd_code tfd_resource_mgr_create(tfd_resource_mgr *rm, const char *container, const char *name, tfd_resource *r,
                                 tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_resource_mgr_create";
  if (tfd_arg_required(status, fn, "rm", rm) || tfd_arg_required(status, fn, "name", name) ||
      tfd_arg_required(status, fn, "r", r))
    return TFD_INVALID_ARGUMENT;
  if (!*name) return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "resource name must not be empty");
  container = container_name(rm, container);
  size_t cap = strlen(r->type_name) + strlen(name) + 2;
  char *key = malloc(cap);
  if (!key) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating resource '%s'", name);
  make_key(key, cap, r->type_name, name);
  tfd_code code = TFD_OK;
  pthread_mutex_lock(&rm->mu);
  tfd_strmap *c = tfd_strmap_get(&rm->containers, container);
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c || !tfd_strmap_put(&rm->containers, container, c)) {
      free(c);
      code = tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating container '%s'", container);
      goto done;
    }
  }
  if (tfd_strmap_get(c, key)) {
    code = tfd_status_setf(status, TFD_ALREADY_EXISTS, "resource %s/%s of type %s already exists", container, name,
                           r->type_name);
  } else if (!tfd_strmap_put(c, key, r)) {
    code = tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating resource '%s'", name);
  } else {
    tfd_resource_ref(r);
  }
done:
  pthread_mutex_unlock(&rm->mu);
  free(key);
  return code;
}

/* Finds (and, if `remove`, takes out) a resource; returns it referenced. */
static tfd_resource *find(tfd_resource_mgr *rm, const char *container, const char *type, const char *name, bool remove,
                          tfd_status *status) {
  container = container_name(rm, container);
  size_t cap = strlen(type) + strlen(name ? name : "") + 2;
  char *key = malloc(cap);
  if (!key) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory looking up a resource");
    return NULL;
  }
  make_key(key, cap, type, name ? name : "");
  pthread_mutex_lock(&rm->mu);
  tfd_strmap *c = tfd_strmap_get(&rm->containers, container);
  tfd_resource *r = c ? (remove ? tfd_strmap_remove(c, key) : tfd_resource_ref(tfd_strmap_get(c, key))) : NULL;
  pthread_mutex_unlock(&rm->mu);
  free(key);
  if (!r)
    tfd_status_setf(status, TFD_NOT_FOUND, "resource %s/%s of type %s does not exist%s", container, name ? name : "",
                    type, c ? "" : " (no such container)");
  return r;
}

tfd_resource *tfd_resource_mgr_lookup(tfd_resource_mgr *rm, const char *container, const char *type_name,
                                      const char *name, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_resource_mgr_lookup";
  if (tfd_arg_required(status, fn, "rm", rm) || tfd_arg_required(status, fn, "type_name", type_name) ||
      tfd_arg_required(status, fn, "name", name))
    return NULL;
  return find(rm, container, type_name, name, false, status);
}

tfd_code tfd_resource_mgr_delete(tfd_resource_mgr *rm, const char *container, const char *type_name,
                                 const char *name, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_resource_mgr_delete";
  if (tfd_arg_required(status, fn, "rm", rm) || tfd_arg_required(status, fn, "type_name", type_name) ||
      tfd_arg_required(status, fn, "name", name))
    return TFD_INVALID_ARGUMENT;
  tfd_resource *r = find(rm, container, type_name, name, true, status);
  if (!r) return tfd_status_code(status) != TFD_OK ? tfd_status_code(status) : TFD_NOT_FOUND;
  tfd_resource_unref(r);
  return TFD_OK;
}

tfd_code tfd_resource_mgr_cleanup(tfd_resource_mgr *rm, const char *container, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_resource_mgr_cleanup", "rm", rm)) return TFD_INVALID_ARGUMENT;
  pthread_mutex_lock(&rm->mu);
  tfd_strmap *c = tfd_strmap_remove(&rm->containers, container_name(rm, container));
  pthread_mutex_unlock(&rm->mu);
  if (c) container_free(c); /* resource destructors run outside the lock */
  return TFD_OK;
}

size_t tfd_resource_mgr_num_containers(tfd_resource_mgr *rm) {
  pthread_mutex_lock(&rm->mu);
  size_t n = rm->containers.size;
  pthread_mutex_unlock(&rm->mu);
  return n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **tfd_resource_mgr_container_names(tfd_resource_mgr *rm) {
  size_t it = 0, n = 0, bytes = 0;
  const char *k;
  void *v;
  pthread_mutex_lock(&rm->mu);
  while (tfd_strmap_next(&rm->containers, &it, &k, &v)) {
    n++;
    bytes += strlen(k) + 1;
  }
  /* Pointers first, then the strings they point at, in one block. */
  char **names = malloc((n + 1) * sizeof *names + bytes);
  if (names) {
    char *p = (char *)(names + n + 1);
    size_t i = 0;
    it = 0;
    while (tfd_strmap_next(&rm->containers, &it, &k, &v)) {
      names[i++] = strcpy(p, k);
      p += strlen(k) + 1;
    }
    names[n] = NULL;
    qsort(names, n, sizeof *names, cmp_str);
  }
  pthread_mutex_unlock(&rm->mu);
  return names;
}

size_t tfd_resource_mgr_container_size(tfd_resource_mgr *rm, const char *container) {
  pthread_mutex_lock(&rm->mu);
  tfd_strmap *c = tfd_strmap_get(&rm->containers, container_name(rm, container));
  size_t n = c ? c->size : 0;
  pthread_mutex_unlock(&rm->mu);
  return n;
}
