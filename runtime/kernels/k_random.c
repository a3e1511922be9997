/* RandomUniform and RandomStandardNormal: counter-based, so a seeded graph draws the same
 * sequence in every session and every thread split, run after run. */
#include <math.h>
#include <string.h>

#include "kernel.h"

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t draw(uint64_t seed, uint64_t i) { return mix(seed ^ mix(i)); }
static double unit(uint64_t x) { return (double)(x >> 11) * (1.0 / 9007199254740992.0); }

static void k_random(tfd_kernel *k, tfd_kernel_ctx *c) {
  tfd_tensor *shape = c->inputs[0];
  if (tfd_tensor_ndims(shape) != 1 || tfd_tensor_numel(shape) > TFD_MAX_DIMS) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "shape must be a vector of at most %d sizes", TFD_MAX_DIMS);
    return;
  }
  int64_t dims[TFD_MAX_DIMS];
  int nd = (int)tfd_tensor_numel(shape);
  for (int i = 0; i < nd; i++) {
    dims[i] = tfd_tensor_get_index(shape, i);
    if (dims[i] < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "size %lld is negative", (long long)dims[i]);
      return;
    }
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, nd);
  if (!out) return;
  int64_t n = tfd_tensor_numel(out);
  /* Reserve a block of the counter: concurrent steps get disjoint draws. */
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)(2 * n));
  bool f32 = k->dst == TFD_FLOAT32;
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (k->code == 0) {
      v = unit(draw(k->seed, base + (uint64_t)i));
    } else {
      /* Box-Muller on two independent draws per element. */
      double u1 = unit(draw(k->seed, base + 2 * (uint64_t)i)), u2 = unit(draw(k->seed, base + 2 * (uint64_t)i + 1));
      v = sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
    }
    if (f32) {
      float f = (float)v;
      if (k->code == 0 && f >= 1.0f) f = 0.99999994f; /* keep [0, 1) after rounding */
      ((float *)tfd_tensor_data(out))[i] = f;
    } else {
      ((double *)tfd_tensor_data(out))[i] = v;
    }
  }
  c->outputs[0] = out;
}

tfd_code tfd_setup_random(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  k->dst = tfd_attr_dtype(init->node, "dtype", TFD_FLOAT32);
  if (k->dst != TFD_FLOAT32 && k->dst != TFD_FLOAT64)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "node '%s': random ops make float32 or float64, not %s",
                           tfd_node_def_name(init->node), tfd_dtype_name(k->dst));
  uint64_t seed = (uint64_t)tfd_attr_int(init->node, "seed", 0), seed2 = (uint64_t)tfd_attr_int(init->node, "seed2", 0);
  /* TF: both seeds 0 means "nondeterministic". */
  k->seed = seed || seed2 ? mix(seed * 0x100000001b3ull ^ mix(seed2)) : tfd_new_incarnation();
  atomic_init(&k->counter, 0);
  k->code = strcmp(init->op->name, "RandomUniform") == 0 ? 0 : 1;
  k->compute = k_random;
  return TFD_OK;
}
