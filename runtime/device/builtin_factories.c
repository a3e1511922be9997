/* The built-in device factories, as Lua's linit.c lists its libraries: the registry every session
 * starts from (ThreadPoolDevice's CPU factory and the backend modules' factories, built on first
 * use), and tfd_runtime_new, whose registry is a copy of it. The one file of this layer that knows
 * the CPU device and the backends; the registry (device_factory.c) and the runtime (runtime.c) know
 * neither. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/log.h"
#include "../core/status_internal.h"
#include "device_internal.h"
#include "runtime_internal.h"
#include "tfdev/backend.h"
#include "tfdev/device_factory.h"

/* The built-in registry, made on first use (again on the next use if memory ran out: a host that
 * survives one failed allocation must not lose its CPU device for good); optional backends (gpu/)
 * add their factories here, and plug-ins later (tfd_factory_registry_register_builtin), under the
 * registry's own lock, which copies of it take too (a shared registry, device_factory.c). */
static _Atomic(tfd_factory_registry *) default_registry;
static pthread_mutex_t build_mu = PTHREAD_MUTEX_INITIALIZER;

static tfd_factory_registry *build_default_registry(void) {
  tfd_factory_registry *r = tfd_factory_registry_new_shared();
  tfd_device_factory *cpu = NULL;
  tfd_threadpool_device_factory_new(&cpu, NULL);
  if (!r || !cpu || tfd_factory_registry_register(r, "CPU", cpu, TFD_PRIORITY_THREADPOOL_CPU, NULL) != TFD_OK) {
    tfd_device_factory_unref(cpu);
    tfd_factory_registry_free(r);
    return NULL; /* callers see NULL and report out of memory */
  }
  tfd_device_factory_unref(cpu);
  /* Backend modules add theirs (CUDA: GPU at 210, the GPU-compatible CPU at 70); one that does not
   * load has said why at info level. */
  char list[256];
  snprintf(list, sizeof list, "%s", tfd_backend_default_list());
  char *save = NULL;
  for (char *name = strtok_r(list, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
    tfd_status st = TFD_STATUS_INIT;
    if (tfd_backend_load(name, NULL, NULL) == TFD_OK && tfd_backend_register_factories(name, r, &st) != TFD_OK) {
      tfd_code code = tfd_status_code(&st);
      if (code != TFD_RESOURCE_EXHAUSTED)
        tfd_log(TFD_LOG_ERROR, "backend %s: its device factories did not register: %s", name, tfd_status_message(&st));
      tfd_status_clear(&st);
      if (code == TFD_RESOURCE_EXHAUSTED) { /* built again next time, rather than without the backend's devices */
        tfd_factory_registry_free(r);
        return NULL;
      }
    }
    tfd_status_clear(&st);
  }
  return r;
}

const tfd_factory_registry *tfd_factory_registry_default(void) {
  tfd_factory_registry *r = atomic_load(&default_registry);
  if (r) return r;
  pthread_mutex_lock(&build_mu);
  if (!(r = atomic_load(&default_registry)) && (r = build_default_registry())) atomic_store(&default_registry, r);
  pthread_mutex_unlock(&build_mu);
  return r;
}

tfd_code tfd_factory_registry_register_builtin(const char *device_type, tfd_device_factory *f, int priority,
                                               tfd_status *status) {
  tfd_status_reset(status);
  static const char fn[] = "tfd_factory_registry_register_builtin";
  if (tfd_arg_required(status, fn, "device_type", device_type)) return TFD_INVALID_ARGUMENT;
  if (!f)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "%s: f is NULL (no factory given for device type '%s')", fn,
                           device_type);
  tfd_factory_registry *r = (tfd_factory_registry *)tfd_factory_registry_default();
  if (!r) return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory building the registry");
  return tfd_factory_registry_register_shared(r, device_type, f, priority, status);
}

/* The default registry lives as long as the library: when a Lua state that
 * loaded tfdev/core.so closes, Lua unloads the module, and what it built
 * must go with it rather than be lost. */
__attribute__((destructor)) static void free_default_registry(void) {
  tfd_factory_registry_free(atomic_exchange(&default_registry, NULL));
}

static tfd_runtime *make_runtime(const tfd_runtime_config *config, tfd_status *st) {
  tfd_status_reset(st);
  const tfd_factory_registry *builtin = tfd_factory_registry_default();
  return tfd_runtime_make(config, builtin ? tfd_factory_registry_copy(builtin) : NULL, st);
}

tfd_code tfd_runtime_new(const tfd_runtime_config *config, tfd_runtime **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_runtime_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_runtime(config, &local);
  return tfd_status_move(status, &local);
}
