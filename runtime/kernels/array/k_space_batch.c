/* SpaceToBatchND and BatchToSpaceND, as TensorFlow's CPU kernels: blocks of the M spatial dimensions
 * after the batch move into the batch dimension and back.
 *
 * Both see the input as [batch, spatial_1..spatial_M, depth] (depth: the product of the dimensions
 * after the spatial ones). Two sides meet in one loop: the "space" side (batch B, the spatial sizes,
 * padded for SpaceToBatchND, cropped for BatchToSpaceND) and the "grid" side (batch B * prod(block),
 * each spatial size divided by its block). Grid batch g = offset * B + b, where offset numbers the
 * position inside a block in row-major order; grid position x along dimension k stands for space
 * position x * block_k + offset_k - before_k. SpaceToBatchND copies space to grid (zeros where that
 * position is padding); BatchToSpaceND copies grid to space (skipping what the crops remove). Each
 * copy is a run of `depth` elements. */
#include <stdio.h>
#include <string.h>

#include "../../core/checked.h"
#include "../kernel.h"
#include "../kernel_shared.h"
#include "space_batch_logic.h"

typedef tfd_space_batch_plan plan;

bool tfd_space_batch_plan_make(tfd_kernel *k, tfd_kernel_context *c, bool to_batch, plan *p, int64_t *out) {
  tfd_tensor *in = c->inputs[0], *bs = c->inputs[1], *pads = c->inputs[2];
  const char *pads_name = to_batch ? "paddings" : "crops";
  if (!tfd_kernel_check_index(c, k, bs, "block_shape") || !tfd_kernel_check_index(c, k, pads, pads_name)) return false;
  if (tfd_tensor_ndims(bs) != 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "block_shape rank should be 1 instead of %d", tfd_tensor_ndims(bs));
    return false;
  }
  int nd = tfd_tensor_ndims(in);
  int64_t m = tfd_tensor_dim(bs, 0);
  if (nd < 1 + m) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "input rank should be >= %lld instead of %d", (long long)(1 + m), nd);
    return false;
  }
  if (tfd_tensor_ndims(pads) != 2 || tfd_tensor_dim(pads, 0) != m || tfd_tensor_dim(pads, 1) != 2) {
    char text[TFD_SHAPE_TEXT_CAP];
    tfd_tensor_shape_text(text, sizeof text, pads, 0);
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "%s should have shape [%lld, 2] instead of %s", pads_name, (long long)m,
                    text);
    return false;
  }
  tfd_tensor *bh = tfd_kernel_host_input(c, k, 1), *ph = bh ? tfd_kernel_host_input(c, k, 2) : NULL;
  bool ok = bh && ph;
  p->m = (int)m;
  p->blocks = 1;
  for (int i = 0; ok && i < p->m; i++) {
    p->block[i] = tfd_tensor_get_index(bh, i);
    if (to_batch && p->block[i] < 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "All values in block_shape must be positive, got value, %lld at index %d.",
                      (long long)p->block[i], i);
      ok = false;
    } else if (!tfd_checked_mul(p->blocks, p->block[i], &p->blocks)) {
      p->blocks = -1; /* TensorFlow's MultiplyWithoutOverflow */
    }
  }
  if (ok && p->blocks <= 0) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Product of block sizes must be positive, got %lld", (long long)p->blocks);
    ok = false;
  }
  int64_t after[TFD_MAX_DIMS];
  for (int i = 0; ok && i < p->m; i++)
    p->before[i] = tfd_tensor_get_index(ph, 2 * i), after[i] = tfd_tensor_get_index(ph, 2 * i + 1);
  tfd_tensor_unref(bh);
  tfd_tensor_unref(ph);
  if (!ok) return false;
  int64_t in_batch = tfd_tensor_dim(in, 0);
  if (to_batch) {
    p->batch = in_batch;
    if (!tfd_checked_mul(in_batch, p->blocks, &out[0])) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Negative output dimension size caused by overflow when multiplying %lld and %lld",
                      (long long)in_batch, (long long)p->blocks);
      return false;
    }
  } else {
    if (in_batch % p->blocks != 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT,
                      "Input batch dimension (%lld) is not divisible by product of block sizes (%lld)", (long long)in_batch,
                      (long long)p->blocks);
      return false;
    }
    p->batch = out[0] = in_batch / p->blocks;
  }
  for (int i = 0; i < p->m; i++) {
    int64_t size = tfd_tensor_dim(in, i + 1), lo = p->before[i], hi = after[i];
    if (lo < 0 || hi < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, to_batch ? "Paddings must be non-negative" : "Crops must be non-negative");
      return false;
    }
    if (to_batch) {
      int64_t padded = size + lo + hi; /* sizes and paddings below 2^62 each: no overflow */
      if (lo > INT64_MAX / 4 || hi > INT64_MAX / 4 || padded % p->block[i] != 0) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "padded_shape[%d]=%lld is not divisible by block_shape[%d]=%lld", i,
                        (long long)padded, i, (long long)p->block[i]);
        return false;
      }
      p->space[i] = size;
      p->grid[i] = out[i + 1] = padded / p->block[i];
    } else {
      int64_t full;
      if (!tfd_checked_mul(size, p->block[i], &full) || full - lo - hi < 0 || lo > INT64_MAX / 4 || hi > INT64_MAX / 4) {
        tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "cropped_shape[%d]=%lld must be non-negative", i,
                        (long long)(size * p->block[i] - lo - hi));
        return false;
      }
      p->grid[i] = size;
      p->space[i] = out[i + 1] = full - lo - hi;
    }
  }
  p->depth = 1;
  for (int i = p->m + 1; i < nd; i++) p->depth *= (out[i] = tfd_tensor_dim(in, i));
  return true;
}

static void k_space_batch(tfd_kernel *k, tfd_kernel_context *c) {
  bool to_batch = k->keep_dims;
  plan p;
  int64_t out_dims[TFD_MAX_DIMS];
  tfd_tensor *in = c->inputs[0];
  if (!tfd_space_batch_plan_make(k, c, to_batch, &p, out_dims)) return;
  tfd_tensor *o = tfd_kernel_alloc(c, k, tfd_tensor_dtype(in), out_dims, tfd_tensor_ndims(in));
  if (!o) return;
  c->outputs[0] = o;
  if (tfd_tensor_numel(o) == 0) return;
  if (tfd_tensor_numel(in) == 0) { /* an empty input padded to a non-empty output: all padding, zeros */
    memset(tfd_tensor_data(o), 0, tfd_tensor_byte_size(o));
    return;
  }
  size_t esz = tfd_dtype_size(tfd_tensor_dtype(in)), run = (size_t)p.depth * esz;
  const char *src = tfd_tensor_const_data(in);
  char *dst = tfd_tensor_data(o);
  char *space = to_batch ? (char *)src : dst, *grid = to_batch ? dst : (char *)src;
  int64_t grid_cells = 1; /* spatial positions per grid batch entry */
  for (int i = 0; i < p.m; i++) grid_cells *= p.grid[i];
  /* Rows along the last block dimension: the outer block dimensions are resolved once per row, and
   * along the row space positions step by the block, one run of depth each. */
  int last = p.m - 1;
  int64_t inner = p.m ? p.grid[last] : 1, rows = grid_cells / (inner ? inner : 1);
  for (int64_t g = 0; g < p.batch * p.blocks; g++) {
    int64_t offset = g / p.batch, b = g % p.batch, off[TFD_MAX_DIMS];
    for (int i = p.m - 1; i >= 0; i--) off[i] = offset % p.block[i], offset /= p.block[i];
    int64_t x[TFD_MAX_DIMS] = {0};
    char *cell = grid + (size_t)(g * grid_cells) * run;
    for (int64_t r = 0; r < rows; r++) {
      int64_t at = b;
      bool inside = true;
      for (int i = 0; i < last; i++) {
        int64_t sp = x[i] * p.block[i] + off[i] - p.before[i];
        inside &= sp >= 0 && sp < p.space[i];
        at = at * p.space[i] + sp;
      }
      int64_t step = p.m ? p.block[last] : 0, first = p.m ? off[last] - p.before[last] : 0, size = p.m ? p.space[last] : 1;
      char *line = inside ? space + (size_t)(at * size) * run : NULL;
      for (int64_t xl = 0; xl < inner; xl++, cell += run) {
        int64_t sp = xl * step + first;
        if (!inside || sp < 0 || sp >= size) {
          if (to_batch) memset(cell, 0, run);
        } else if (to_batch) {
          memcpy(cell, line + (size_t)sp * run, run);
        } else {
          memcpy(line + (size_t)sp * run, cell, run);
        }
      }
      for (int i = last - 1; i >= 0 && ++x[i] == p.grid[i]; i--) x[i] = 0;
    }
  }
}

tfd_code tfd_setup_space_batch(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  (void)st;
  k->keep_dims = strcmp(init->op->name, "SpaceToBatchND") == 0;
  k->compute = k_space_batch;
  return TFD_OK;
}
