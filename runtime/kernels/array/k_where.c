/* Where with one input (TensorFlow's WhereOp): the coordinates of the true (non-zero) elements of a
 * tensor of any rank, in row-major order, as int64 [count, rank]. The count is known only once the
 * input is read, so the output's shape is decided here, not by inference. */
#include <stdlib.h>
#include <string.h>

#include "../../core/status_internal.h"
#include "../kernel.h"

static bool is_true(const void *d, tfd_dtype dt, int64_t i) {
  switch (dt) {
    case TFD_FLOAT32: return ((const float *)d)[i] != 0.0f; /* NaN counts as true, as in TensorFlow */
    case TFD_FLOAT64: return ((const double *)d)[i] != 0.0;
    case TFD_INT32: return ((const int32_t *)d)[i] != 0;
    case TFD_INT64: return ((const int64_t *)d)[i] != 0;
    case TFD_BOOL:
    case TFD_UINT8: return ((const uint8_t *)d)[i] != 0;
    case TFD_FLOAT16: return (((const uint16_t *)d)[i] & 0x7fff) != 0; /* +0 and -0 are false */
    default: return false;
  }
}

static void k_where(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_tensor *in = c->inputs[0];
  tfd_dtype dt = tfd_tensor_dtype(in);
  const void *d = tfd_tensor_const_data(in);
  int64_t n = tfd_tensor_numel(in), count = 0;
  for (int64_t i = 0; i < n; i++) count += is_true(d, dt, i);
  int rank = tfd_tensor_ndims(in);
  int64_t dims[2] = {count, rank};
  tfd_tensor *out = tfd_kernel_alloc(c, k, TFD_INT64, dims, 2);
  if (!out) return;
  int64_t *o = tfd_tensor_data(out);
  int64_t idx[TFD_MAX_DIMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    if (is_true(d, dt, i)) {
      memcpy(o, idx, (size_t)rank * sizeof *o);
      o += rank;
    }
    for (int a = rank - 1; a >= 0; a--) { /* the next element's coordinates, last axis fastest */
      if (++idx[a] < tfd_tensor_dim(in, a)) break;
      idx[a] = 0;
    }
  }
  c->outputs[0] = out;
}

tfd_code tfd_setup_where(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)init, (void)st;
  k->compute = k_where;
  return TFD_OK;
}
