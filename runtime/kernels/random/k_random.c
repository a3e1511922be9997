/* RandomUniform and RandomStandardNormal: counter-based, so a seeded graph draws the same
 * sequence in every session and every thread split, run after run. */
#include <math.h>
#include <string.h>

#include "../device_math_elem.h"
#include "../kernel.h"
#include "../array/shape_logic.h"

static void k_random(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t dims[TFD_MAX_DIMS];
  int nd;
  if (!tfd_random_shape(c, k, dims, &nd)) return;
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->dst, dims, nd);
  if (!out) return;
  int64_t n = tfd_tensor_numel(out);
  /* Reserve a block of the counter: concurrent steps get disjoint draws. */
  uint64_t base = atomic_fetch_add(&k->counter, (uint64_t)(2 * n));
  bool f32 = k->dst == TFD_FLOAT32;
  for (int64_t i = 0; i < n; i++) { /* device_math_elem.h's streams, which the device kernels share */
    double v = tfd_dm_random(k->code != 0, k->seed, base, (uint64_t)i);
    if (f32) ((float *)tfd_tensor_data(out))[i] = k->code == 0 ? tfd_dm_uniform_f32(v) : (float)v;
    else ((double *)tfd_tensor_data(out))[i] = v;
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
  k->seed = seed || seed2 ? tfd_dm_mix(seed * 0x100000001b3ull ^ tfd_dm_mix(seed2)) : tfd_new_incarnation();
  atomic_init(&k->counter, 0);
  k->code = strcmp(init->op->name, "RandomUniform") == 0 ? 0 : 1;
  k->compute = k_random;
  return TFD_OK;
}
