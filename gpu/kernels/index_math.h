/* Index arithmetic of the CUDA kernels that is not the per-element math of device_math_elem.h: where
 * an output element reads from (walks over several operands at once, MirrorPad's reflections, the
 * source pixels of a resize, a pooling window), the orders TopKV2 and ArgMax/ArgMin select by, and
 * filter layouts. TFD_HD: the kernels run these very functions, and the CPU suite tests them against
 * the CPU kernels' formulas (index_math_test.c). */
#ifndef TFDEV_GPU_KERNELS_INDEX_MATH_H
#define TFDEV_GPU_KERNELS_INDEX_MATH_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../runtime/core/hd.h"
#include "../../runtime/kernels/device_math.h"

/* The element offsets of operands 0..nops-1 for linear output index i of w, with one pass of
 * divisions for all of them (tfd_dm_walk_offset's answer, operand by operand). */
static inline TFD_HD void tfd_walk_offsets(const tfd_dm_walk *w, int nops, int64_t i, int64_t *off) {
  for (int op = 0; op < nops; op++) off[op] = w->offsets[op];
  for (int d = w->nd - 1; d >= 0; d--) {
    int64_t dim = w->dims[d], q = i % dim;
    i /= dim;
    for (int op = 0; op < nops; op++) off[op] += q * w->strides[op][d];
  }
}

/* MirrorPad: the input coordinate output coordinate j (before the pad removed: p = j - before) reads
 * along a dimension of `in` elements. REFLECT leaves the edge out (pads up to in - 1), SYMMETRIC
 * repeats it (up to in). */
static inline TFD_HD int64_t tfd_mirror_index(int64_t p, int64_t in, bool symmetric) {
  if (p < 0) return symmetric ? -p - 1 : -p;
  if (p >= in) return symmetric ? 2 * in - 1 - p : 2 * in - 2 - p;
  return p;
}

/* Resizes use device_math_elem.h's tfd_dm_resize_scale, tfd_dm_bilinear_index, tfd_dm_nearest_index and
 * tfd_dm_lerp2, which the fake GPU checks against the CPU kernel. */

/* The in-image part [*lo, *hi) of a window of k taps starting at o * stride - pad along `in`. */
static inline TFD_HD void tfd_window(int64_t o, int64_t stride, int64_t pad, int64_t k, int64_t in, int64_t *lo,
                                     int64_t *hi) {
  int64_t a = o * stride - pad, b = a + k;
  *lo = a > 0 ? a : 0;
  *hi = b < in ? b : in;
}

/* ---- selection orders ---- */
/* TopKV2's order (k_gather.c's): NaN first (as largest), then larger values, then on ties the lower
 * index. Whether (va, ia) comes before (vb, ib); indices differ. */
static inline TFD_HD bool tfd_topk_before_f(double va, int64_t ia, double vb, int64_t ib) {
  bool an = va != va, bn = vb != vb;
  if (an != bn) return an;
  if (!an && va != vb) return va > vb;
  return ia < ib;
}
static inline TFD_HD bool tfd_topk_before_i(int64_t va, int64_t ia, int64_t vb, int64_t ib) {
  return va != vb ? va > vb : ia < ib;
}

/* ArgMax (is_min false) / ArgMin over non-NaN candidates: whether (v, i) beats the best so far
 * (bv, bi), bi < 0 meaning none yet: a strictly better value, or an equal one at a lower index.
 * The kernels never offer NaN here; the CPU's sequential rule (a NaN first element wins, later NaNs
 * never do) is applied at the end (tfd_arg_result). */
static inline TFD_HD bool tfd_arg_beats(bool is_min, double v, int64_t i, double bv, int64_t bi) {
  if (bi < 0) return true;
  if (v != bv) return is_min ? v < bv : v > bv;
  return i < bi;
}
static inline TFD_HD bool tfd_arg_beats_i(bool is_min, int64_t v, int64_t i, int64_t bv, int64_t bi) {
  if (bi < 0) return true;
  if (v != bv) return is_min ? v < bv : v > bv;
  return i < bi;
}

/* ---- filters ---- */
/* The HWIO element that element (oc, y, x, ci) of cuDNN's NHWC filter [o, kh, kw, cg] holds. A
 * depthwise filter [kh, kw, c, m] gives output channel oc = ch * m + q from input channel ch, one
 * input channel per group (cg = 1). */
static inline TFD_HD int64_t tfd_hwio_index(int64_t oc, int64_t y, int64_t x, int64_t ci, int64_t kw, int64_t c,
                                            int64_t o, bool depthwise) {
  if (depthwise) {
    int64_t m = o / c, ch = oc / m, q = oc % m;
    (void)ci;
    return ((y * kw + x) * c + ch) * m + q;
  }
  return ((y * kw + x) * c + ci) * o + oc;
}

#endif
