/* DepthToSpace and SpaceToDepth (NHWC, as TensorFlow's CPU kernels): blocks of block_size x
 * block_size pixels move between the spatial dimensions and the channels.
 *
 * DepthToSpace: [N, H, W, C] -> [N, H*b, W*b, C/(b*b)], out[n][h*b+i][w*b+j][c] = in[n][h][w][(i*b+j)*C/(b*b)+c].
 * SpaceToDepth is its inverse. Both move whole runs of channels, so each is a loop of memcpy. */
#include <string.h>

#include "../kernel.h"
#include "shape_logic.h"

static void k_depth_space(tfd_kernel *k, tfd_kernel_context *c) {
  int64_t d[4], out[4], b = k->code;
  bool to_space = k->keep_dims;
  if (!tfd_depth_space_shape(c, k, to_space, b, d, out)) return;
  tfd_tensor *in = c->inputs[0], *o = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), out, 4);
  if (!o) return;
  c->outputs[0] = o;
  if (tfd_tensor_numel(o) == 0) return;
  size_t esz = tfd_dtype_size(tfd_tensor_dtype(in));
  /* The space side (big H, W) and the depth side (small H, W, deep C); a run is the small C. */
  const int64_t *big = to_space ? out : d, *deep = to_space ? d : out;
  size_t run = (size_t)(to_space ? out[3] : d[3]) * esz;
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(o);
  for (int64_t n = 0; n < d[0]; n++)
    for (int64_t h = 0; h < big[1]; h++)
      for (int64_t w = 0; w < big[2]; w++) {
        int64_t dh = h / b, dw = w / b, block = (h % b) * b + (w % b);
        size_t space_at = (size_t)(((n * big[1] + h) * big[2] + w)) * run;
        size_t depth_at = ((size_t)((n * deep[1] + dh) * deep[2] + dw) * (size_t)deep[3]) * esz + (size_t)block * run;
        if (to_space) memcpy(dst + space_at, src + depth_at, run);
        else memcpy(dst + depth_at, src + space_at, run);
      }
}

tfd_code tfd_setup_depth_space(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  const char *op = init->op->name, *format = tfd_attr_string(init->node, "data_format", "NHWC");
  int64_t b = tfd_attr_int(init->node, "block_size", 0);
  if (b > 1 << 20) return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "block_size %lld is too large", (long long)b);
  if (b < 2)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Value for attr 'block_size' of %lld must be at least minimum 2",
                           (long long)b);
  if (strcmp(format, "NHWC") != 0)
    return tfd_status_setf(st, TFD_INVALID_ARGUMENT, "Only NHWC data_format supported on CPU. Got %s", format);
  k->code = (int)b;
  k->keep_dims = strcmp(op, "DepthToSpace") == 0;
  k->compute = k_depth_space;
  return TFD_OK;
}
