/* The kernel registry: which kernel each (op, device type) pair has, built in (kernel_builtins.c) or
 * registered at run time with a priority (backend modules, plug-ins, custom kernels). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "kernel_registry.h"

/* Kernels registered at run time (backend modules', custom ones), searched before the built-in
 * table, newest first: an entry is only ever added above every entry for its pair, so the first
 * found is the one of highest priority. Entries are never removed, so a found entry stays valid once
 * the lock is dropped. */
typedef struct added_kernel {
  tfd_kernel_entry e;
  void (*release)(void *custom); /* frees e.custom when the library goes */
  struct added_kernel *next;
} added_kernel;

static pthread_mutex_t added_mu = PTHREAD_MUTEX_INITIALIZER;
static added_kernel *added;

/* The highest entry for a pair, with added_mu held. */
static const tfd_kernel_entry *find_locked(const char *op, const char *device_type) {
  for (const added_kernel *a = added; a; a = a->next)
    if (strcmp(a->e.op, op) == 0 && strcmp(a->e.device_type, device_type) == 0) return &a->e;
  for (int i = 0; i < tfd_builtin_kernel_count; i++)
    if (strcmp(tfd_builtin_kernels[i].op, op) == 0 && strcmp(tfd_builtin_kernels[i].device_type, device_type) == 0)
      return &tfd_builtin_kernels[i];
  return NULL;
}

const tfd_kernel_entry *tfd_kernel_registry_find(const char *op, const char *device_type) {
  pthread_mutex_lock(&added_mu);
  const added_kernel *a = added;
  while (a && (strcmp(a->e.op, op) != 0 || strcmp(a->e.device_type, device_type) != 0)) a = a->next;
  pthread_mutex_unlock(&added_mu);
  if (a) return &a->e;
  for (int i = 0; i < tfd_builtin_kernel_count; i++)
    if (strcmp(tfd_builtin_kernels[i].op, op) == 0 && strcmp(tfd_builtin_kernels[i].device_type, device_type) == 0)
      return &tfd_builtin_kernels[i];
  return NULL;
}

/* Adds (op, device_type) -> setup at priority: above every entry of the pair when priority beats
 * them all; equal priority is ALREADY_EXISTS (unless it is the very same setup, which changes
 * nothing), lower is ignored. */
static tfd_code add_entry(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                          uint32_t types, void *custom, void (*release)(void *), bool *kept, tfd_status *st) {
  if (kept) *kept = false;
  if (!op || !*op || !device_type || !*device_type || !setup)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "a kernel registration needs an op, a device type and a setup");
  if (!tfd_op_lookup(op)) return tfd_status_setf(st, TFD_NOT_FOUND, "kernel for unknown op '%s' (%s)", op, device_type);
  added_kernel *a = calloc(1, sizeof *a);
  char *o = strdup(op), *d = strdup(device_type);
  if (!a || !o || !d) {
    free(a), free(o), free(d);
    return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory registering a kernel");
  }
  a->e = (tfd_kernel_entry){o, d, setup, priority, custom, types};
  a->release = release;
  pthread_mutex_lock(&added_mu); /* found and added under one lock: racing registrations of a pair agree */
  const tfd_kernel_entry *top = find_locked(op, device_type);
  tfd_code code = TFD_OK;
  bool keep = !top || priority > top->priority;
  if (top && priority == top->priority && !(top->setup == setup && top->custom == custom))
    code = tfd_status_setf(st, TFD_ALREADY_EXISTS, "a %s kernel for op %s is already registered at priority %d",
                           device_type, op, priority);
  if (keep) {
    a->next = added;
    added = a;
  }
  pthread_mutex_unlock(&added_mu);
  if (!keep) free(a), free(o), free(d);
  if (kept) *kept = keep;
  return code;
}

tfd_code tfd_kernel_register_entry(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                                   void *custom, void (*release)(void *), bool *kept, tfd_status *st) {
  return add_entry(op, device_type, setup, priority, 0, custom, release, kept, st);
}

tfd_code tfd_kernel_register_typed(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                                   uint32_t types, tfd_status *st) {
  return add_entry(op, device_type, setup, priority, types, NULL, NULL, NULL, st);
}

tfd_code tfd_kernel_register(const char *op, const char *device_type, tfd_kernel_setup_fn setup, tfd_status *st) {
  return add_entry(op, device_type, setup, 0, 0, NULL, NULL, NULL, st);
}

/* Registrations are permanent while the library is loaded; when a Lua state that loaded core.so
 * closes, Lua unloads it (and libtfdev with it), and what was registered goes too. */
__attribute__((destructor)) static void free_added_kernels(void) {
  while (added) {
    added_kernel *a = added;
    added = a->next;
    if (a->release) a->release((void *)a->e.custom);
    free((char *)a->e.op);
    free((char *)a->e.device_type);
    free(a);
  }
}
