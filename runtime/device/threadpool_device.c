/* ThreadPoolDevice ("CPU") and its factory: kernels run on the intra-op pool, memory from a limited CPU allocator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/allocator_internal.h"
#include "../core/options_internal.h"
#include "../core/status_internal.h"
#include "device_internal.h"
#include "runtime_internal.h"
#include "tfdev/device_factory.h"

typedef struct threadpool_device {
  tfd_local_device local;
  tfd_allocator *allocator; /* owned reference */
} threadpool_device;

static tfd_code tp_sync(tfd_device *d, tfd_status *status) {
  (void)d, (void)status;
  return TFD_OK; /* kernels run synchronously on the caller's step */
}

static tfd_allocator *tp_get_allocator(tfd_device *d, tfd_alloc_attrs attrs) {
  (void)attrs;
  return ((threadpool_device *)d)->allocator;
}

static void tp_destroy(tfd_device *d) {
  threadpool_device *t = (threadpool_device *)d;
  tfd_allocator_unref(t->allocator);
  tfd_local_device_fini_pool(&t->local);
  tfd_device_fini(d);
  free(t);
}

static const tfd_device_ops threadpool_device_ops = {
    tfd_device_default_compute, tfd_device_default_compute_async, tp_sync, tp_get_allocator,
    tfd_device_default_fill_context_map, tp_destroy,
};

/* "model name" from /proc/cpuinfo, or "" where there is none. */
static void cpu_model(char *out, size_t cap) {
  out[0] = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      colon += 1 + (colon[1] == ' ');
      colon[strcspn(colon, "\n")] = 0;
      snprintf(out, cap, "%s", colon);
      break;
    }
  }
  fclose(f);
}

static tfd_device *make_cpu_device(const tfd_cpu_device_config *cfg, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_cpu_device_new", "config", cfg)) return NULL;
  threadpool_device *t = calloc(1, sizeof *t);
  if (!t) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating a CPU device");
    return NULL;
  }
  int64_t limit = cfg->memory_limit > 0 ? cfg->memory_limit : TFD_CPU_DEFAULT_MEMORY_LIMIT;
  tfd_device *d = &t->local.base;
  if (tfd_device_init(d, &threadpool_device_ops, cfg->name, cfg->device_type ? cfg->device_type : "CPU", limit, cfg->bus_id, NULL, status) != TFD_OK) {
    free(t);
    return NULL;
  }
  if (tfd_local_device_init_pool(&t->local, cfg->runtime, cfg->num_threads, cfg->own_threadpool, status) != TFD_OK) {
    tfd_device_fini(d);
    free(t);
    return NULL;
  }
  const tfd_host_allocator *host = tfd_runtime_allocator(cfg->runtime);
  t->allocator = cfg->allocator ? tfd_allocator_ref(cfg->allocator)
                 : host         ? tfd_cpu_allocator_new_hosted(d->name, limit, host)
                                : tfd_cpu_allocator_new(d->name, limit);
  char desc[512];
  if (cfg->physical_device_desc) {
    snprintf(desc, sizeof desc, "%s", cfg->physical_device_desc);
  } else {
    char model[256];
    cpu_model(model, sizeof model);
    snprintf(desc, sizeof desc, "device: %d, name: %s, intra-op threads: %d (%s pool)", d->parsed_name.id,
             *model ? model : "cpu", d->cpu_worker_threads.num_threads,
             t->local.runtime ? "host's" : t->local.owned_pool ? "own" : "shared");
  }
  char *dup = strdup(desc);
  if (!t->allocator || !dup) {
    free(dup);
    tp_destroy(d);
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating a CPU device");
    return NULL;
  }
  free(d->physical_device_desc);
  d->physical_device_desc = dup;
  return d;
}

tfd_code tfd_cpu_device_new(const tfd_cpu_device_config *config, tfd_device **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_cpu_device_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_cpu_device(config, &local);
  return tfd_status_move(status, &local);
}

/* ---- ThreadPoolDeviceFactory ---- */
tfd_code tfd_cpu_devices_create(const tfd_session_options *options, const char *name_prefix,
                                tfd_allocator *(*make_allocator)(void *arg, const char *name), void *arg,
                                tfd_device_list *out, tfd_status *status) {
  int n = tfd_session_options_device_count(options, "CPU", 1);
  if (n > TFD_MAX_CPU_DEVICES)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT, "device_count.CPU is %d: at most %d CPU devices", n,
                           TFD_MAX_CPU_DEVICES);
  /* Devices with pools of their own each start their threads: bound the sum, not only each pool. */
  int threads = tfd_session_options_intra_op_threads(options);
  if (threads <= 0) threads = tfd_env_num_cores();
  if (!tfd_session_options_use_global_threadpool(options) && (int64_t)n * threads > TFD_MAX_THREADS)
    return tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                           "%d CPU devices with own pools of %d threads would start %lld threads: at most %d", n,
                           threads, (long long)n * threads, TFD_MAX_THREADS);
  for (int i = 0; i < n; i++) {
    char name[TFD_DEVICE_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s/device:CPU:%d", name_prefix, i);
    tfd_cpu_device_config cfg = {
        .name = name,
        .num_threads = tfd_session_options_intra_op_threads(options),
        .own_threadpool = !tfd_session_options_use_global_threadpool(options),
        .allocator = make_allocator ? make_allocator(arg, name) : NULL,
        .runtime = tfd_session_options_runtime(options),
    };
    if (make_allocator && !cfg.allocator)
      return tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory creating %s's allocator", name);
    tfd_device *d = NULL;
    tfd_cpu_device_new(&cfg, &d, status);
    tfd_allocator_unref(cfg.allocator);
    if (!d) return tfd_status_code(status);
    tfd_code code = tfd_device_list_push(out, d, status);
    tfd_device_unref(d);
    if (code != TFD_OK) return code;
  }
  return TFD_OK;
}

static tfd_code tp_factory_create(void *self, void *host_ctx, const tfd_session_options *options,
                                  const char *name_prefix, tfd_device_list *out, tfd_status *status) {
  (void)self, (void)host_ctx;
  return tfd_cpu_devices_create(options, name_prefix, NULL, NULL, out, status);
}

static const tfd_device_factory_ops threadpool_factory_ops = {"ThreadPoolDeviceFactory", tp_factory_create, NULL, NULL};

static tfd_device_factory *make_threadpool_device_factory(tfd_status *status) {
  tfd_status_reset(status);
  tfd_device_factory *made = NULL;
  tfd_device_factory_new(&threadpool_factory_ops, NULL, &made, status);
  return made;
}

tfd_code tfd_threadpool_device_factory_new(tfd_device_factory **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_threadpool_device_factory_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_threadpool_device_factory(&local);
  return tfd_status_move(status, &local);
}
