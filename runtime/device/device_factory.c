/* Device factories, device lists, and the factory registry with TensorFlow's priority rules. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/log.h"
#include "../core/options_internal.h"
#include "../core/refcount.h"
#include "../core/status_internal.h"
#include "device_internal.h"
#include "runtime_internal.h"
#include "tfdev/device_factory.h"

/* ---- device lists ---- */
struct tfd_device_list {
  tfd_device **items;
  size_t size, cap;
};

tfd_device_list *tfd_device_list_new(void) { return calloc(1, sizeof(tfd_device_list)); }

void tfd_device_list_free(tfd_device_list *l) {
  if (!l) return;
  for (size_t i = 0; i < l->size; i++) tfd_device_unref(l->items[i]);
  free(l->items);
  free(l);
}

size_t tfd_device_list_size(const tfd_device_list *l) { return l->size; }
tfd_device *tfd_device_list_get(const tfd_device_list *l, size_t i) { return i < l->size ? l->items[i] : NULL; }

tfd_code tfd_device_list_push(tfd_device_list *l, tfd_device *d, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_list_push", "l", l) || tfd_arg_required(status, "tfd_device_list_push", "d", d))
    return TFD_INVALID_ARGUMENT;
  if (l->size == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4;
    tfd_device **items = realloc(l->items, cap * sizeof *items);
    if (!items) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory growing a device list");
    l->items = items;
    l->cap = cap;
  }
  l->items[l->size++] = tfd_device_ref(d);
  return TFD_OK;
}

/* Moves every device of src to the end of dst; src ends empty. */
static tfd_code list_append_all(tfd_device_list *dst, tfd_device_list *src, tfd_status *status) {
  for (size_t i = 0; i < src->size; i++)
    if (tfd_device_list_push(dst, src->items[i], status) != TFD_OK) return TFD_RESOURCE_EXHAUSTED;
  return TFD_OK;
}

/* ---- factories ---- */
struct tfd_device_factory {
  tfd_refcount refs;
  const tfd_device_factory_ops *ops;
  void *self;
};

static tfd_device_factory *make_device_factory(const tfd_device_factory_ops *ops, void *self, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_factory_new", "ops", ops) ||
      tfd_arg_required(status, "tfd_device_factory_new", "ops->create_devices", (const void *)(uintptr_t)ops->create_devices))
    return NULL;
  tfd_device_factory *f = calloc(1, sizeof *f);
  if (!f) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating a device factory");
    return NULL;
  }
  tfd_refcount_init(&f->refs);
  f->ops = ops;
  f->self = self;
  return f;
}

tfd_code tfd_device_factory_new(const tfd_device_factory_ops *ops, void *self, tfd_device_factory **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_device_factory_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_device_factory(ops, self, &local);
  return tfd_status_move(status, &local);
}

tfd_device_factory *tfd_device_factory_ref(tfd_device_factory *f) {
  if (f) tfd_refcount_inc(&f->refs);
  return f;
}

void tfd_device_factory_unref(tfd_device_factory *f) {
  if (!f || !tfd_refcount_dec(&f->refs)) return;
  if (f->ops->destroy) f->ops->destroy(f->self);
  free(f);
}

const char *tfd_device_factory_name(const tfd_device_factory *f) {
  const char *n = f->ops->instance_name ? f->ops->instance_name(f->self) : NULL;
  return n ? n : f->ops->name ? f->ops->name : "factory";
}

void *tfd_device_factory_self(const tfd_device_factory *f, const tfd_device_factory_ops *ops) {
  return f && f->ops == ops ? f->self : NULL;
}

tfd_code tfd_device_factory_create_devices(tfd_device_factory *f, void *host_ctx, const tfd_session_options *options,
                                           const char *name_prefix, tfd_device_list *out, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_device_factory_create_devices";
  if (tfd_arg_required(status, fn, "f", f) || tfd_arg_required(status, fn, "name_prefix", name_prefix) ||
      tfd_arg_required(status, fn, "out", out))
    return TFD_INVALID_ARGUMENT;
  tfd_session_options *defaults = NULL;
  if (!options) options = defaults = tfd_session_options_new();
  tfd_code code = options ? f->ops->create_devices(f->self, host_ctx, options, name_prefix, out, status)
                          : tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory");
  tfd_session_options_free(defaults);
  return code;
}

/* ---- registries ---- */
typedef struct entry {
  char *type;
  int priority;
  tfd_device_factory *factory;
} entry;

struct tfd_factory_registry {
  entry *entries; /* sorted: priority descending, then type */
  size_t size, cap;
  tfd_runtime *runtime; /* see runtime_internal.h */
  bool owns_runtime;
  /* How to hold the runtime, given by runtime.c: the registry sits below the runtime and calls it
   * only through these. */
  tfd_runtime *(*runtime_ref)(tfd_runtime *);
  void (*runtime_unref)(tfd_runtime *);
  /* The built-in registry (builtin_factories.c) takes plug-ins' factories while others copy it. */
  bool shared;
  pthread_mutex_t mu; /* held by copy and register_shared when shared */
};

void tfd_factory_registry_set_runtime(tfd_factory_registry *r, tfd_runtime *rt, bool owned,
                                      tfd_runtime *(*ref)(tfd_runtime *), void (*unref)(tfd_runtime *)) {
  if (r->owns_runtime) r->runtime_unref(r->runtime);
  r->runtime = owned && rt ? ref(rt) : rt;
  r->owns_runtime = owned && rt;
  r->runtime_ref = ref;
  r->runtime_unref = unref;
}

tfd_runtime *tfd_factory_registry_runtime(const tfd_factory_registry *r) { return r ? r->runtime : NULL; }

tfd_factory_registry *tfd_factory_registry_new(void) { return calloc(1, sizeof(tfd_factory_registry)); }

tfd_factory_registry *tfd_factory_registry_new_shared(void) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  if (r) {
    r->shared = true;
    pthread_mutex_init(&r->mu, NULL);
  }
  return r;
}

tfd_code tfd_factory_registry_register_shared(tfd_factory_registry *r, const char *device_type, tfd_device_factory *f,
                                              int priority, tfd_status *status) {
  if (r->shared) pthread_mutex_lock(&r->mu);
  tfd_code code = tfd_factory_registry_register(r, device_type, f, priority, status);
  if (r->shared) pthread_mutex_unlock(&r->mu);
  return code;
}

void tfd_factory_registry_free(tfd_factory_registry *r) {
  if (!r) return;
  for (size_t i = 0; i < r->size; i++) {
    free(r->entries[i].type);
    tfd_device_factory_unref(r->entries[i].factory);
  }
  free(r->entries);
  if (r->owns_runtime) r->runtime_unref(r->runtime);
  if (r->shared) pthread_mutex_destroy(&r->mu);
  free(r);
}

static int entry_cmp(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  return strcmp(x->type, y->type);
}

static entry *find_entry(const tfd_factory_registry *r, const char *type) {
  for (size_t i = 0; i < r->size; i++)
    if (strcmp(r->entries[i].type, type) == 0) return &r->entries[i];
  return NULL;
}

static bool valid_type_name(const char *t) {
  tfd_parsed_name p;
  char local[TFD_DEVICE_NAME_MAX + 8];
  if (!t || !*t || strlen(t) >= TFD_NAME_PART_MAX) return false;
  /* A type name is whatever ParseLocalName accepts before ":0". */
  strcpy(local, t);
  strcat(local, ":0");
  return tfd_device_name_parse_local(local, &p);
}

tfd_code tfd_factory_registry_register(tfd_factory_registry *r, const char *device_type, tfd_device_factory *f,
                                       int priority, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_factory_registry_register";
  if (tfd_arg_required(status, fn, "r", r) || tfd_arg_required(status, fn, "device_type", device_type)) return TFD_INVALID_ARGUMENT;
  if (!f)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%s: f is NULL (no factory given for device type '%s')", fn,
                           device_type);
  if (!valid_type_name(device_type))
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "invalid device type '%s': it must start with a letter and hold only letters, digits and '_'",
                           device_type ? device_type : "(null)");
  entry *e = find_entry(r, device_type);
  if (e) {
    if (priority == e->priority)
      return tfd_status_setf(status, TFD_ALREADY_EXISTS,
                             "Duplicate registration of device factory for type %s with the same priority %d",
                             device_type, priority);
    if (priority < e->priority) return TFD_OK; /* a lower priority never displaces a higher one */
    tfd_device_factory_unref(e->factory);
    e->factory = tfd_device_factory_ref(f);
    e->priority = priority;
  } else {
    if (r->size == r->cap) {
      size_t cap = r->cap ? r->cap * 2 : 8;
      entry *es = realloc(r->entries, cap * sizeof *es);
      if (!es) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory registering a factory");
      r->entries = es;
      r->cap = cap;
    }
    char *type = strdup(device_type);
    if (!type) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory registering a factory");
    r->entries[r->size++] = (entry){type, priority, tfd_device_factory_ref(f)};
  }
  qsort(r->entries, r->size, sizeof *r->entries, entry_cmp);
  return TFD_OK;
}

tfd_device_factory *tfd_factory_registry_get(const tfd_factory_registry *r, const char *device_type) {
  entry *e = find_entry(r, device_type ? device_type : "");
  return e ? e->factory : NULL;
}

int tfd_factory_registry_priority(const tfd_factory_registry *r, const char *device_type) {
  entry *e = find_entry(r, device_type ? device_type : "");
  return e ? e->priority : -1;
}

size_t tfd_factory_registry_size(const tfd_factory_registry *r) { return r->size; }

void tfd_factory_registry_entry(const tfd_factory_registry *r, size_t i, const char **device_type, int *priority,
                                tfd_device_factory **factory) {
  if (device_type) *device_type = r->entries[i].type;
  if (priority) *priority = r->entries[i].priority;
  if (factory) *factory = r->entries[i].factory;
}

tfd_factory_registry *tfd_factory_registry_copy(const tfd_factory_registry *src) {
  tfd_factory_registry *r = tfd_factory_registry_new();
  if (!r) return NULL;
  bool shared = src->shared; /* a plug-in may be adding to it */
  if (shared) pthread_mutex_lock((pthread_mutex_t *)&src->mu);
  bool ok = true;
  for (size_t i = 0; i < src->size && ok; i++) {
    const entry *e = &src->entries[i];
    ok = tfd_factory_registry_register(r, e->type, e->factory, e->priority, NULL) == TFD_OK;
  }
  if (shared) pthread_mutex_unlock((pthread_mutex_t *)&src->mu);
  if (!ok) {
    tfd_factory_registry_free(r);
    return NULL;
  }
  if (src->runtime) tfd_factory_registry_set_runtime(r, src->runtime, true, src->runtime_ref, src->runtime_unref);
  return r;
}

/* Runs one factory into `out`, adding the type and factory name to errors. */
static tfd_code run_factory(const char *type, tfd_device_factory *f, void *host_ctx,
                            const tfd_session_options *options, const char *prefix, tfd_device_list *out,
                            tfd_status *status) {
  tfd_code code = tfd_device_factory_create_devices(f, host_ctx, options, prefix, out, status);
  if (code != TFD_OK) {
    if (tfd_status_code(status) == TFD_OK) tfd_status_setf(status, code, "failed");
    tfd_status_prefixf(status, "device factory '%s' for type %s: ", tfd_device_factory_name(f), type);
  }
  return code;
}

/* A device_count entry for a type no factory here makes is a typo ("gpu", "CPUS"), refused with the
 * types there are, where TensorFlow ignores it. GPU is always accepted: a script that turns GPUs off
 * (GPU = 0) or asks for one runs unchanged on a build or machine without them. */
static tfd_code check_device_counts(const tfd_factory_registry *r, const tfd_session_options *options,
                                    tfd_status *status) {
  for (size_t i = 0; i < tfd_session_options_num_device_counts(options); i++) {
    const char *type;
    int n;
    tfd_session_options_device_count_at(options, i, &type, &n);
    if (strcmp(type, "GPU") == 0 || find_entry(r, type)) continue;
    char known[256] = "";
    for (size_t e = 0; e < r->size; e++) {
      size_t used = strlen(known);
      snprintf(known + used, sizeof known - used, "%s%s", e ? ", " : "", r->entries[e].type);
    }
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "device_count names device type '%s', which no registered device factory makes "
                           "(device types: %s)",
                           type, known);
  }
  return TFD_OK;
}

tfd_code tfd_factory_registry_add_devices(const tfd_factory_registry *r, const tfd_session_options *options,
                                          const char *name_prefix, void *host_ctx, tfd_device_list *out,
                                          tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_factory_registry_add_devices";
  if (tfd_arg_required(status, fn, "r", r) || tfd_arg_required(status, fn, "name_prefix", name_prefix) ||
      tfd_arg_required(status, fn, "out", out))
    return TFD_INVALID_ARGUMENT;
  if (check_device_counts(r, options, status) != TFD_OK) return TFD_INVALID_ARGUMENT;
  tfd_device_factory *cpu = tfd_factory_registry_get(r, "CPU");
  if (!cpu)
    return tfd_status_setf(status, TFD_NOT_FOUND,
                           "CPU Factory not registered: a CPU device factory is required to add devices");
  /* Snapshot the entries: a factory written in Lua may register others while we run. */
  size_t n = r->size;
  entry *snap = malloc((n ? n : 1) * sizeof *snap);
  tfd_device_list *made = tfd_device_list_new();
  if (!snap || !made) {
    free(snap);
    tfd_device_list_free(made);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding devices");
  }
  /* Own copies of the type names too: a factory may reset or free r while we run. */
  size_t copied = 0;
  for (; copied < n; copied++) {
    snap[copied] = r->entries[copied];
    if (!(snap[copied].type = strdup(r->entries[copied].type))) break;
    tfd_device_factory_ref(snap[copied].factory);
  }
  if (copied < n) {
    for (size_t i = 0; i < copied; i++) {
      free(snap[i].type);
      tfd_device_factory_unref(snap[i].factory);
    }
    free(snap);
    tfd_device_list_free(made);
    return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding devices");
  }
  /* A runtime's registry tells its factories whose devices they make. */
  tfd_session_options *with_rt = r->runtime ? (options ? tfd_session_options_copy(options) : tfd_session_options_new()) : NULL;
  if (with_rt) {
    tfd_session_options_set_runtime(with_rt, r->runtime);
    options = with_rt;
  }
  tfd_device_factory_ref(cpu);
  tfd_code code = r->runtime && !with_rt ? tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory adding devices")
                                         : run_factory("CPU", cpu, host_ctx, options, name_prefix, made, status);
  if (code == TFD_OK && made->size == 0)
    code = tfd_status_setf(status, TFD_NOT_FOUND, "No CPU devices are available in this process");
  for (size_t i = 0; i < n && code == TFD_OK; i++)
    if (snap[i].factory != cpu)
      code = run_factory(snap[i].type, snap[i].factory, host_ctx, options, name_prefix, made, status);
  if (code == TFD_OK) code = list_append_all(out, made, status);
  tfd_device_factory_unref(cpu);
  for (size_t i = 0; i < n; i++) {
    free(snap[i].type);
    tfd_device_factory_unref(snap[i].factory);
  }
  free(snap);
  tfd_device_list_free(made);
  tfd_session_options_free(with_rt);
  return code;
}

static tfd_device *registry_new_device(const tfd_factory_registry *r, const char *device_type,
                                            const tfd_session_options *options, const char *name_prefix,
                                            void *host_ctx, tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_factory_registry_new_device";
  if (tfd_arg_required(status, fn, "r", r) || tfd_arg_required(status, fn, "device_type", device_type) ||
      tfd_arg_required(status, fn, "name_prefix", name_prefix))
    return NULL;
  tfd_device_factory *f = tfd_factory_registry_get(r, device_type);
  if (!f) {
    tfd_status_setf(status, TFD_NOT_FOUND, "no device factory registered for device type '%s'",
                    device_type ? device_type : "(null)");
    return NULL;
  }
  tfd_session_options *opts = options ? tfd_session_options_copy(options) : tfd_session_options_new();
  tfd_device_list *made = tfd_device_list_new();
  tfd_device *d = NULL;
  if (!opts || !made) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating a device");
  } else if (tfd_session_options_set_device_count(opts, device_type, 1, status) == TFD_OK) {
    if (r->runtime) tfd_session_options_set_runtime(opts, r->runtime);
    tfd_device_factory_ref(f);
    if (run_factory(device_type, f, host_ctx, opts, name_prefix, made, status) == TFD_OK) {
      if (made->size == 0)
        tfd_status_setf(status, TFD_NOT_FOUND, "device factory '%s' for type %s created no device",
                        tfd_device_factory_name(f), device_type);
      else
        d = tfd_device_ref(made->items[0]);
    }
    tfd_device_factory_unref(f);
  }
  tfd_device_list_free(made);
  tfd_session_options_free(opts);
  return d;
}

tfd_code tfd_factory_registry_new_device(const tfd_factory_registry *r, const char *device_type,
                                         const tfd_session_options *options, const char *name_prefix, void *host_ctx,
                                         tfd_device **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_factory_registry_new_device", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = registry_new_device(r, device_type, options, name_prefix, host_ctx, &local);
  return tfd_status_move(status, &local);
}
