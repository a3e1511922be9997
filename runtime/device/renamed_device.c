/* RenamedDevice: a proxy that answers to a new name and forwards everything to the device it wraps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/api_args.h"
#include "../core/status_internal.h"
#include "device_internal.h"

typedef struct renamed_device {
  tfd_device base;
  tfd_device *underlying; /* owned reference */
} renamed_device;

static tfd_device *under(tfd_device *d) { return ((renamed_device *)d)->underlying; }

static void rn_compute(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx) {
  tfd_device_compute(under(d), k, ctx);
}

static void rn_compute_async(tfd_device *d, tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done,
                             void *arg) {
  tfd_device_compute_async(under(d), k, ctx, done, arg);
}

static tfd_code rn_sync(tfd_device *d, tfd_status *status) { return tfd_device_sync(under(d), status); }

static tfd_allocator *rn_get_allocator(tfd_device *d, tfd_alloc_attrs attrs) {
  return under(d)->ops->get_allocator(under(d), attrs);
}

static tfd_code rn_fill_context_map(tfd_device *d, const struct tfd_graph *g, void **map, tfd_status *status) {
  return under(d)->ops->fill_context_map(under(d), g, map, status);
}

static void rn_destroy(tfd_device *d) {
  tfd_device_unref(under(d));
  tfd_device_fini(d);
  free(d);
}

static const tfd_device_ops renamed_device_ops = {rn_compute,       rn_compute_async,    rn_sync,
                                                  rn_get_allocator, rn_fill_context_map, rn_destroy};

static tfd_device *make_renamed_device(tfd_device *underlying, const char *new_base, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_renamed_device_new", "underlying", underlying) ||
      tfd_arg_required(status, "tfd_renamed_device_new", "new_base", new_base))
    return NULL;
  tfd_parsed_name base;
  if (tfd_device_name_parse(new_base, &base, status) != TFD_OK) return NULL;
  if (!base.has_job || !base.has_replica || !base.has_task) {
    tfd_status_setf(status, TFD_INVALID_ARGUMENT,
                    "new base '%s' for renaming '%s' must name a job, replica and task", new_base, underlying->name);
    return NULL;
  }
  base.has_type = base.has_id = true;
  strcpy(base.type, underlying->parsed_name.type);
  base.id = underlying->parsed_name.id;
  char name[TFD_DEVICE_NAME_MAX];
  tfd_device_name_full(&base, name, NULL);
  renamed_device *r = calloc(1, sizeof *r);
  if (!r) {
    tfd_status_setf(status, TFD_RESOURCE_EXHAUSTED, "out of memory renaming '%s'", underlying->name);
    return NULL;
  }
  tfd_device *d = &r->base;
  if (tfd_device_init(d, &renamed_device_ops, name, underlying->device_type, underlying->memory_limit,
                      underlying->bus_id, underlying->physical_device_desc, status) != TFD_OK) {
    free(r);
    return NULL;
  }
  /* Same device underneath: same incarnation, resources and threads. */
  d->incarnation = underlying->incarnation;
  tfd_resource_mgr_free(d->rmgr);
  d->rmgr = underlying->rmgr;
  d->owns_rmgr = false;
  d->cpu_worker_threads = underlying->cpu_worker_threads;
  d->gpu_device_info = underlying->gpu_device_info;
  r->underlying = tfd_device_ref(underlying);
  return d;
}

tfd_code tfd_renamed_device_new(tfd_device *underlying, const char *new_base, tfd_device **out, tfd_status *status) {
  tfd_status_reset(status);
  if (tfd_arg_required(status, "tfd_renamed_device_new", "out", out)) return TFD_INVALID_ARGUMENT;
  tfd_status local = TFD_STATUS_INIT;
  *out = make_renamed_device(underlying, new_base, &local);
  return tfd_status_move(status, &local);
}

tfd_device *tfd_device_underlying(const tfd_device *d) {
  return d->ops == &renamed_device_ops ? ((const renamed_device *)d)->underlying : NULL;
}
