/* Finding and making a node's kernel (TensorFlow's FindKernelDef and CreateOpKernel): the registry's
 * entry for the node's op and device type, once backend modules loaded since the last look have
 * registered theirs, checked against the node's dtype, then set up. */
#include <stdlib.h>
#include <string.h>

#include "../core/status_internal.h"
#include "../core/tensor_internal.h"
#include "../device/backend_module.h"
#include "kernel_registry.h"

static const tfd_backend_kernel_api backend_api = {tfd_kernel_register_data_movement,
                                                   tfd_kernel_register_device_kernels};

tfd_code tfd_kernel_registry_ready(tfd_status *st) { return tfd_backend_register_kernels(&backend_api, st); }

/* A miss first lets backend modules loaded since the last one register their kernels (a failure
 * here reads as a miss: callers that can report it ask tfd_kernel_registry_ready first). */
static const tfd_kernel_entry *find(const char *op, const char *device_type) {
  const tfd_kernel_entry *e = tfd_kernel_registry_find(op, device_type);
  if (e || strcmp(device_type, "CPU") == 0) return e;
  tfd_backend_register_kernels(&backend_api, NULL);
  return tfd_kernel_registry_find(op, device_type);
}

bool tfd_kernel_supported(const char *op, const char *device_type) { return find(op, device_type) != NULL; }
/* Strings live in host memory and only CPU kernels read them: another device's kernel takes a string
 * only when its op just passes tensors on (Identity, control flow), as TensorFlow's HostMemory ones. */
static bool computes(const tfd_kernel_entry *e, tfd_dtype t) {
  if (t == TFD_STRING && strcmp(e->device_type, "CPU") != 0) {
    const tfd_op_def *op = tfd_op_lookup(e->op);
    if (!op || op->allowed_types != TFD_TYPES_ANY_AND_VARIANT) return false;
  }
  return !e->types || !t || (t < 32 && (e->types & (1u << t)));
}
bool tfd_kernel_supported_for(const char *op, const char *device_type, tfd_dtype t) {
  const tfd_kernel_entry *e = find(op, device_type);
  return e && computes(e, t);
}
bool tfd_kernel_exists(const char *op, const char *device_type) {
  return op && device_type && tfd_kernel_supported(op, device_type);
}

/* Runs a kernel that moves string elements, then has each output it allocated take its elements. */
static void compute_moving_strings(tfd_kernel *k, tfd_kernel_context *c) {
  k->moved_compute(k, c);
  for (int o = 0; o < c->num_outputs; o++)
    if (c->outputs[o]) tfd_tensor_adopt_elements(c->outputs[o]);
}

static void kernel_op_compute(tfd_op_kernel *base, tfd_kernel_context *c) {
  tfd_kernel *k = (tfd_kernel *)base;
  k->compute(k, c);
}

static void kernel_op_compute_async(tfd_op_kernel *base, tfd_kernel_context *c, tfd_done_fn done, void *arg) {
  tfd_kernel *k = (tfd_kernel *)base;
  if (k->compute_async) {
    k->compute_async(k, c, done, arg);
  } else {
    k->compute(k, c);
    done(arg);
  }
}

static void kernel_destroy(tfd_op_kernel *base) {
  tfd_kernel *k = (tfd_kernel *)base;
  if (k->cleanup) k->cleanup(k);
  tfd_tensor_unref(k->value);
  free(k->dk_params);
  free(k->key);
  free(k->name);
  free(k);
}

static const tfd_op_kernel_ops kernel_ops = {kernel_op_compute, kernel_op_compute_async, kernel_destroy};

tfd_kernel *tfd_kernel_create(const tfd_kernel_init *init, tfd_status *st) {
  const char *op = tfd_node_def_op(init->node), *type = tfd_device_type(init->device);
  const tfd_kernel_entry *e = find(op, type);
  if (!e) {
    tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': no %s kernel for op %s", tfd_node_def_name(init->node), type, op);
    return NULL;
  }
  tfd_dtype t = init->op->type_attr ? tfd_attr_dtype(init->node, init->op->type_attr, 0) : 0;
  if (!computes(e, t)) {
    tfd_status_setf(st, TFD_NOT_FOUND, "node '%s': no %s kernel for op %s with %s=%s", tfd_node_def_name(init->node),
                    type, op, init->op->type_attr, tfd_dtype_name(t));
    return NULL;
  }
  tfd_kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = strdup(tfd_node_def_name(init->node)))) {
    free(k);
    tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory creating a kernel");
    return NULL;
  }
  k->base.ops = &kernel_ops;
  k->op = init->op;
  k->custom = e->custom;
  k->num_inputs = init->num_inputs;
  k->T = init->op->type_attr ? tfd_attr_dtype(init->node, init->op->type_attr, 0) : 0;
  if (!k->T && init->op->num_outputs > 0) k->T = init->out_types[0];
  if (e->setup(k, init, st) != TFD_OK) {
    kernel_destroy(&k->base);
    return NULL;
  }
  bool string_out = false;
  for (int o = 0; o < init->num_outputs; o++) string_out |= init->out_types[o] == TFD_STRING;
  if (string_out && !k->makes_strings && k->compute && !k->compute_async) {
    k->moved_compute = k->compute;
    k->compute = compute_moving_strings;
    k->borrows_elements = true;
  }
  return k;
}
