/* A plug-in for the tests (libtfdev_test_plugin.so; never installed): the op Scale (y = x * factor,
 * float32, attr factor default 2) with a CPU kernel at priority 1, and a second CPU kernel at
 * priority 0 (it negates), which must lose. A negative first element fails the step, naming it.
 * It also brings a device type, PLUGDEV (CPU-backed devices at priority 5), with the transfers its
 * devices need and a Scale kernel there too.
 * TFDEV_TEST_PLUGIN_VERSION, when defined, builds a copy claiming another plug-in API version. */
#include <stdio.h>
#include <stdlib.h>

#include "tfdev/custom_op.h"
#include "tfdev/tfdev.h"

#ifndef TFDEV_TEST_PLUGIN_VERSION
#define TFDEV_TEST_PLUGIN_VERSION TFD_PLUGIN_API_VERSION
#endif

#define EXPORT __attribute__((visibility("default")))

EXPORT int tfd_plugin_api_version = TFDEV_TEST_PLUGIN_VERSION;
EXPORT tfd_code tfd_plugin_init(tfd_status *st);

static tfd_code scale_infer(void *user, tfd_infer_context *c, tfd_status *st) {
  (void)user;
  if (tfd_infer_input_dtype(c, 0) != TFD_FLOAT32)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Scale takes float32, got %s",
                           tfd_dtype_name(tfd_infer_input_dtype(c, 0)));
  tfd_shape s;
  tfd_infer_input_shape(c, 0, &s);
  tfd_infer_set_output(c, 0, TFD_FLOAT32, &s);
  return TFD_OK;
}

/* The node's factor, kept per node. */
static void *scale_create(void *user, const tfd_node_def *node, tfd_status *st) {
  (void)user;
  float *f = malloc(sizeof *f);
  if (!f) {
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    return NULL;
  }
  const tfd_attr_value *v = tfd_node_def_attr(node, "factor");
  *f = v && v->type == TFD_ATTR_FLOAT ? (float)v->f : 2.0f;
  return f;
}

static void scale_destroy(void *user, void *state) {
  (void)user;
  free(state);
}

static void scale_compute(void *user, void *state, tfd_kernel_context *c) {
  float factor = *(const float *)state * (user ? -1.0f : 1.0f); /* the outranked kernel negates */
  tfd_tensor *x = tfd_kernel_context_input(c, 0);
  int64_t dims[TFD_MAX_DIMS];
  for (int i = 0; i < tfd_tensor_ndims(x); i++) dims[i] = tfd_tensor_dim(x, i);
  tfd_tensor *y = tfd_kernel_context_allocate_output(c, 0, TFD_FLOAT32, dims, tfd_tensor_ndims(x));
  if (!y) return;
  const float *in = tfd_tensor_const_data(x);
  float *out = tfd_tensor_data(y);
  for (int64_t i = 0; i < tfd_tensor_numel(x); i++) out[i] = in[i] * factor;
  if (tfd_tensor_numel(x) > 0 && in[0] < 0) tfd_kernel_context_fail(c, TFD_OUT_OF_RANGE, "negative input %g", (double)in[0]);
}

static tfd_code plugdev_create(void *self, void *host_ctx, const tfd_session_options *o, const char *prefix,
                               tfd_device_list *out, tfd_status *st) {
  (void)self, (void)host_ctx, (void)o;
  char name[256];
  snprintf(name, sizeof name, "%s/device:PLUGDEV:0", prefix);
  tfd_cpu_device_config cfg = {.name = name, .device_type = "PLUGDEV", .num_threads = 1, .own_threadpool = true};
  tfd_device *d = NULL;
  tfd_cpu_device_new(&cfg, &d, st);
  if (!d) return tfd_status_code(st);
  tfd_code code = tfd_device_list_push(out, d, st);
  tfd_device_unref(d);
  return code;
}

static const tfd_device_factory_ops plugdev_ops = {"PlugDevFactory", plugdev_create, NULL, NULL};

tfd_code tfd_plugin_init(tfd_status *st) {
  tfd_attr_value two = {.type = TFD_ATTR_FLOAT, .f = 2};
  tfd_custom_attr attrs[] = {{"factor", TFD_ATTR_FLOAT, &two}};
  tfd_custom_op op = {.name = "Scale", .num_inputs = 1, .num_outputs = 1, .attrs = attrs, .num_attrs = 1,
                      .infer = scale_infer};
  if (tfd_custom_op_register(&op, st) != TFD_OK) return tfd_status_code(st);
  tfd_custom_kernel k = {.op = "Scale", .device_type = "CPU", .priority = 1, .create = scale_create,
                         .destroy = scale_destroy, .compute = scale_compute};
  if (tfd_custom_kernel_register(&k, st) != TFD_OK) return tfd_status_code(st);
  static int negate;
  k.priority = 0;
  k.user = &negate;
  if (tfd_custom_kernel_register(&k, st) != TFD_OK) return tfd_status_code(st); /* outranked: ignored */
  k = (tfd_custom_kernel){.op = "Scale", .device_type = "PLUGDEV", .priority = 1, .create = scale_create,
                          .destroy = scale_destroy, .compute = scale_compute};
  if (tfd_custom_kernel_register(&k, st) != TFD_OK || tfd_kernel_register_transfers("PLUGDEV", st) != TFD_OK)
    return tfd_status_code(st);
  tfd_device_factory *f = NULL;
  tfd_device_factory_new(&plugdev_ops, NULL, &f, st);
  if (!f) return tfd_status_code(st);
  tfd_code code = tfd_factory_registry_register_builtin("PLUGDEV", f, 5, st);
  tfd_device_factory_unref(f);
  return code;
}
