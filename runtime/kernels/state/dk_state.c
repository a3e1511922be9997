/* Device kernels of the stateful ops: RandomUniform and RandomStandardNormal (k_random.c's
 * counter-based streams, drawn by the math from the same seed and counter, so a seeded graph gives
 * the same numbers on a GPU as on the CPU), TruncatedNormal and RandomUniformInt (k_random_ext.c's
 * per-element sub-streams, likewise), and resource variables (k_variable.c) whose value lives
 * in the device's memory: VarHandleOp makes its handle on the host (handles live there),
 * ReadVariableOp and AssignVariableOp hand the tensor on where it is, AssignAddVariableOp adds in
 * device memory. */
#include <stdlib.h>
#include <string.h>

#include "../device_kernel.h"
#include "../kernel_shared.h"
#include "../array/shape_logic.h"

static void k_random(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  int64_t dims[TFD_MAX_DIMS];
  int nd;
  if (!tfd_random_shape(c, k, dims, &nd)) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, k->dst, dims, nd);
  if (!out) return;
  int64_t n = tfd_tensor_numel(out);
  /* The CPU kernel's reservation: concurrent steps draw disjoint blocks of the stream. */
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)(2 * n));
  tfd_status st = TFD_STATUS_INIT;
  if (n > 0 &&
      !tfd_dk_ok(k, c, m->random(c->device, k->code != 0, k->dst, k->seed, base, tfd_tensor_data(out), n, &st), &st)) {
    tfd_tensor_unref(out);
    return;
  }
  c->outputs[0] = out;
}

/* TruncatedNormal and RandomUniformInt (k_random_ext.c's sub-streams, the math's random_ext): the
 * CPU kernel's reservation of n counters per run, so the same numbers. */
static void k_random_ext(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  bool truncated = k->dk_op == 0;
  int64_t dims[TFD_MAX_DIMS], bound[2] = {0, 1};
  int nd;
  if (!(truncated ? tfd_random_shape(c, k, dims, &nd) : tfd_uniform_int_args(c, k, dims, &nd, bound))) return;
  tfd_tensor *out = tfd_dk_alloc(c, k, k->dst, dims, nd);
  if (!out) return;
  int64_t n = tfd_tensor_numel(out);
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)n);
  tfd_status st = TFD_STATUS_INIT;
  if (n > 0 && !tfd_dk_ok(k, c, m->random_ext(c->device, truncated, k->dst, k->seed, base, bound[0],
                                              (uint64_t)bound[1] - (uint64_t)bound[0], tfd_tensor_data(out), n, &st), &st)) {
    tfd_tensor_unref(out);
    return;
  }
  c->outputs[0] = out;
}

/* Multinomial (k_random_ext.c's draws, the math's multinomial): the CPU kernel's checks and its
 * reservation of rows * samples counters; an int32 result made in device memory, moved to the host. */
static void k_multinomial(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  int64_t samples;
  if (!m || !tfd_multinomial_check(c, k, &samples)) return;
  tfd_tensor *logits = c->inputs[0];
  int64_t dims[2] = {tfd_tensor_dim(logits, 0), samples}, n = dims[0] * samples;
  tfd_tensor *y = tfd_dk_alloc_device(c, k, k->dst, dims, 2);
  if (!y) return;
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)n);
  tfd_status st = TFD_STATUS_INIT;
  bool ok = n == 0 || tfd_dk_ok(k, c, m->multinomial(c->device, tfd_tensor_dtype(logits), tfd_tensor_const_data(logits), dims[0],
                                                     tfd_tensor_dim(logits, 1), samples, k->seed, base, k->dst,
                                                     tfd_tensor_data(y), &st), &st);
  tfd_tensor *out = ok ? tfd_dk_to_home(c, k, y) : NULL;
  tfd_tensor_unref(y);
  if (out) c->outputs[0] = out;
}

/* old + delta in device memory, for AssignAddVariableOp (run under the variable's lock). */
static tfd_tensor *device_add(tfd_kernel *k, tfd_kernel_context *c, tfd_tensor *old, tfd_tensor *delta) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return NULL;
  tfd_dtype dt = tfd_tensor_dtype(old);
  int64_t dims[TFD_MAX_DIMS], n = tfd_tensor_numel(old);
  for (int d = 0; d < tfd_tensor_ndims(old); d++) dims[d] = tfd_tensor_dim(old, d);
  if (!tfd_dk_arith_dtype(dt)) {
    tfd_kernel_fail(c, k, TFD_UNIMPLEMENTED, "no kernel for dtype %s", tfd_dtype_name(dt));
    return NULL;
  }
  tfd_tensor *sum = tfd_dk_alloc(c, k, dt, dims, tfd_tensor_ndims(old));
  if (!sum) return NULL;
  if (!tfd_dk_binary_flat(k, c, m, TFD_DM_ADD, dt, tfd_tensor_const_data(old), tfd_tensor_const_data(delta), false,
                          tfd_tensor_data(sum), n)) {
    tfd_tensor_unref(sum);
    return NULL;
  }
  return sum;
}

tfd_code tfd_dk_setup_state(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name;
  bool truncated = strcmp(op, "TruncatedNormal") == 0;
  if (truncated || strcmp(op, "RandomUniformInt") == 0) { /* int32 and float16 draw on the host */
    k->dk_op = truncated ? 0 : 1;
    tfd_dtype dst = truncated ? tfd_attr_dtype(init->node, "dtype", TFD_FLOAT32)
                              : tfd_attr_dtype(init->node, "Tout", TFD_INT32);
    if (truncated ? dst != TFD_FLOAT32 && dst != TFD_FLOAT64 : dst != TFD_INT64)
      return tfd_dk_setup_on_host(k, init, tfd_setup_random_ext, st);
    if (tfd_setup_random_ext(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_random_ext;
    return TFD_OK;
  }
  if (strcmp(op, "Multinomial") == 0) { /* integer logits draw on the host */
    bool floats = k->T == TFD_FLOAT32 || k->T == TFD_FLOAT64;
    if (!floats) return tfd_dk_setup_on_host(k, init, tfd_setup_random_ext, st);
    if (tfd_setup_random_ext(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_multinomial;
    return TFD_OK;
  }
  if (strncmp(op, "Random", 6) == 0) {
    if (tfd_setup_random(k, init, st) != TFD_OK) return tfd_status_code(st);
    k->compute = k_random;
    return TFD_OK;
  }
  if (strcmp(op, "VarHandleOp") == 0) { /* the handle is made where handles live: the host */
    tfd_code code = tfd_dk_setup_on_host(k, init, tfd_setup_variable, st);
    k->host_inputs = 0;
    return code;
  }
  bool add = strcmp(op, "AssignAddVariableOp") == 0;
  if (add && !tfd_dk_lives_on_device(init->device, tfd_attr_dtype(init->node, "dtype", 0))) {
    /* int32 values live on the host: the CPU kernel adds them there, in host memory */
    tfd_code code = tfd_dk_setup_on_host(k, init, tfd_setup_variable, st);
    k->host_inputs = 0;
    return code;
  }
  /* Read and Assign hand tensors on where they are; the sum is made in device memory. */
  if (tfd_setup_variable(k, init, st) != TFD_OK) return tfd_status_code(st);
  if (add) {
    tfd_variable_adder *a = malloc(sizeof *a);
    if (!a) return tfd_status_setf(st, TFD_RESOURCE_EXHAUSTED, "out of memory");
    a->add = device_add;
    k->dk_params = a;
  }
  return TFD_OK;
}
