/* What the CUDA module's C side (math.c, matmul.c, conv.c) calls in its .cu files: one launcher per
 * kernel family, each queuing work on l->stream and returning the launch's cudaError_t. The C side has
 * already checked dtypes, counted elements (none of these is called for 0 of them), allocated any
 * workspace and made the device current, so a launcher only picks a grid and launches; the C side
 * turns a failure into a status naming the device. Compiled as C11 and as C++ (nvcc). */
#ifndef TFDEV_GPU_KERNELS_LAUNCH_H
#define TFDEV_GPU_KERNELS_LAUNCH_H

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../runtime/kernels/device_math.h"
#include "launch_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tfd_dtype_size and tfd_dtype_name for the module, which links no libtfdev. */
static inline size_t tfd_cuda_dtype_size(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT64:
    case TFD_INT64:
    case TFD_COMPLEX64: return 8;
    case TFD_FLOAT32:
    case TFD_INT32: return 4;
    case TFD_FLOAT16: return 2;
    case TFD_UINT8:
    case TFD_BOOL: return 1;
    default: return 0;
  }
}
static inline const char *tfd_cuda_dtype_name(tfd_dtype dt) {
  switch (dt) {
    case TFD_FLOAT32: return "float32";
    case TFD_FLOAT64: return "float64";
    case TFD_INT32: return "int32";
    case TFD_INT64: return "int64";
    case TFD_UINT8: return "uint8";
    case TFD_BOOL: return "bool";
    case TFD_FLOAT16: return "float16";
    case TFD_COMPLEX64: return "complex64";
    case TFD_RESOURCE: return "resource";
    default: return "unknown dtype";
  }
}

typedef struct tfd_cuda_launch {
  cudaStream_t stream;
  int64_t max_blocks; /* a grid-stride kernel's grid never exceeds this (tfd_cuda_max_blocks) */
  int64_t sm_count;
} tfd_cuda_launch;

/* ---- elementwise.cu ---- */
/* dt float32, float64 (every op but LOGICAL_NOT), int32, int64 (NEG, ABS, SQUARE), bool (LOGICAL_NOT). */
cudaError_t tfd_cuda_unary(const tfd_cuda_launch *l, int op, tfd_dtype dt, const void *x, void *y, int64_t n,
                           float alpha);
/* count = tfd_dm_walk_count(w) > 0. dt: float32, float64, int32, int64, and bool for EQUAL, NOT_EQUAL,
 * LOGICAL_AND, LOGICAL_OR. */
cudaError_t tfd_cuda_binary(const tfd_cuda_launch *l, int op, tfd_dtype dt, const void *a, const void *b, void *y,
                            const tfd_dm_walk *w, int64_t count);
cudaError_t tfd_cuda_select(const tfd_cuda_launch *l, size_t elem_bytes, const void *cond, const void *a, const void *b,
                            void *y, const tfd_dm_walk *w, int64_t count);
cudaError_t tfd_cuda_cast(const tfd_cuda_launch *l, tfd_dtype from, tfd_dtype to, const void *x, void *y, int64_t n);
/* y = in[0] + ... + in[n - 1], summed left to right; n >= 1. */
cudaError_t tfd_cuda_add_n(const tfd_cuda_launch *l, tfd_dtype dt, const void *const *in, int n, void *y,
                           int64_t count);

/* ---- data.cu ---- */
cudaError_t tfd_cuda_copy_walk(const tfd_cuda_launch *l, size_t elem_bytes, const void *x, void *y,
                               const tfd_dm_walk *w, int64_t count);
/* elem_bytes 1 to 16. */
cudaError_t tfd_cuda_fill(const tfd_cuda_launch *l, size_t elem_bytes, const void *value, void *y, int64_t n);
cudaError_t tfd_cuda_random_ext(const tfd_cuda_launch *l, bool truncated, tfd_dtype dt, uint64_t seed, uint64_t base,
                                int64_t lo, uint64_t range, void *y, int64_t n);
cudaError_t tfd_cuda_range(const tfd_cuda_launch *l, tfd_dtype dt, double start, double delta, void *y, int64_t n);
/* nd 1 to TFD_MAX_DIMS; count = product of out_dims. */
cudaError_t tfd_cuda_tile(const tfd_cuda_launch *l, size_t elem_bytes, const void *x, const int64_t *in_dims,
                          const int64_t *out_dims, int nd, void *y, int64_t count);
cudaError_t tfd_cuda_mirror_pad(const tfd_cuda_launch *l, size_t elem_bytes, const void *x, const int64_t *in_dims,
                                int nd, const int64_t *before, bool symmetric, void *y, const int64_t *out_dims,
                                int64_t count);
cudaError_t tfd_cuda_gather(const tfd_cuda_launch *l, const void *x, const void *idx, tfd_dtype idx_dtype,
                            int64_t batches, int64_t outer, int64_t limit, int64_t per, size_t inner_bytes, void *y);
cudaError_t tfd_cuda_gather_nd(const tfd_cuda_launch *l, const void *x, const int64_t *x_dims, int nd, const void *idx,
                               tfd_dtype idx_dtype, int64_t count, int depth, size_t slice_bytes, void *y);

/* ---- reduce.cu ---- */
/* outer * inner > 0. workspace: tfd_reduce_workspace_bytes(plan, accumulator size) bytes, or NULL when 0. */
cudaError_t tfd_cuda_reduce(const tfd_cuda_launch *l, int op, tfd_dtype dt, const void *x, int64_t outer, int64_t n,
                            int64_t inner, void *y, void *workspace);
/* The workspace tfd_cuda_reduce needs (0: none). */
size_t tfd_cuda_reduce_workspace(const tfd_cuda_launch *l, int op, tfd_dtype dt, int64_t outer, int64_t n,
                                 int64_t inner);
/* x's rows into y's rows slots[u]: summed with atomics (add) or written by word. */
cudaError_t tfd_cuda_scatter_rows(const tfd_cuda_launch *l, bool add, tfd_dtype dt, size_t es, const void *x,
                                  const int64_t *slots, int64_t n, int64_t row, void *y);
/* Multinomial: one thread per sample. */
cudaError_t tfd_cuda_multinomial(const tfd_cuda_launch *l, tfd_dtype dt, const void *logits, int64_t rows, int64_t classes,
                                 int64_t samples, uint64_t seed, uint64_t base, tfd_dtype out_dt, void *y);
/* LowerBound/UpperBound: one thread per value, a binary search of its sorted row. */
cudaError_t tfd_cuda_search_sorted(const tfd_cuda_launch *l, bool upper, tfd_dtype dt, const void *sorted,
                                   const void *values, int64_t rows, int64_t n, int64_t m, tfd_dtype out_dt, void *y);
/* Cumsum/Cumprod along the middle axis of [outer, n, inner]: one thread per (outer, inner) column,
 * walking it in order as the CPU kernel does (n is short next to the columns in practice). */
cudaError_t tfd_cuda_scan(const tfd_cuda_launch *l, bool prod, bool exclusive, bool reverse, tfd_dtype dt, const void *x,
                          int64_t outer, int64_t n, int64_t inner, void *y);
cudaError_t tfd_cuda_arg_reduce(const tfd_cuda_launch *l, bool is_min, tfd_dtype dt, const void *x, int64_t outer,
                                int64_t n, int64_t inner, tfd_dtype out_dtype, void *y, void *workspace);
size_t tfd_cuda_arg_reduce_workspace(const tfd_cuda_launch *l, tfd_dtype dt, int64_t outer, int64_t n, int64_t inner);
cudaError_t tfd_cuda_softmax(const tfd_cuda_launch *l, tfd_dtype dt, const void *x, int64_t rows, int64_t cols,
                             bool log, void *y);
/* rows, cols, k > 0. */
cudaError_t tfd_cuda_top_k(const tfd_cuda_launch *l, tfd_dtype dt, const void *x, int64_t rows, int64_t cols,
                           int64_t k, void *values, tfd_dtype idx_dtype, void *indices, void *workspace);
size_t tfd_cuda_top_k_workspace(tfd_dtype dt, int64_t rows, int64_t cols, int64_t k);
cudaError_t tfd_cuda_batch_norm(const tfd_cuda_launch *l, tfd_dtype dt, const void *x, const void *scale,
                                const void *offset, const void *mean, const void *variance, float epsilon, int64_t rows,
                                int64_t c, void *y);

/* ---- image.cu ---- */
cudaError_t tfd_cuda_pool(const tfd_cuda_launch *l, const tfd_dm_pool *p);
cudaError_t tfd_cuda_resize(const tfd_cuda_launch *l, const tfd_dm_resize *p);
/* Dilation2D and MaxPoolWithArgmax: one thread per output element. */
cudaError_t tfd_cuda_window_max(const tfd_cuda_launch *l, const tfd_dm_window_max *p);
/* CropAndResize: one thread per output element, the CPU's float operations rounded as it rounds them. */
cudaError_t tfd_cuda_crop_and_resize(const tfd_cuda_launch *l, const tfd_dm_crop *p);
/* ImageProjectiveTransformV3: one thread per output element. */
cudaError_t tfd_cuda_image_transform(const tfd_cuda_launch *l, const tfd_dm_transform *p);

/* ---- random.cu ---- */
cudaError_t tfd_cuda_random(const tfd_cuda_launch *l, bool normal, tfd_dtype dt, uint64_t seed, uint64_t counter,
                            void *y, int64_t n);

/* ---- epilogue.cu: what products and convolutions need beside their libraries ---- */
/* y[i] = act(y[i] + bias[i % n]) over count elements (bias NULL: none); float32/float64. */
cudaError_t tfd_cuda_bias_act(const tfd_cuda_launch *l, tfd_dtype dt, void *y, const void *bias, int64_t n,
                              int64_t count, tfd_activation act, float alpha);
/* The convolution epilogue over y [count / o, o] from conv (may be y): bias, scale and shift (one of
 * the two in practice; bias first, as k_conv.c, if both), then the addend, then Prelu (prelu_n values
 * repeating) or act. */
typedef struct tfd_cuda_epilogue {
  tfd_dtype dtype;
  const void *conv;
  void *y;
  int64_t count, o;
  const void *bias, *scale, *shift, *addend, *prelu;
  int64_t prelu_n;
  tfd_activation act;
  float alpha;
} tfd_cuda_epilogue;
cudaError_t tfd_cuda_conv_epilogue(const tfd_cuda_launch *l, const tfd_cuda_epilogue *e);
/* TensorFlow's HWIO filter [kh, kw, c, o] (or depthwise [kh, kw, c, m], o = c * m) into cuDNN's
 * NHWC filter layout [o, kh, kw, c / groups]. */
cudaError_t tfd_cuda_filter_to_ohwi(const tfd_cuda_launch *l, tfd_dtype dt, const void *hwio, int64_t kh, int64_t kw,
                                    int64_t c, int64_t o, bool depthwise, void *ohwi);
/* Copies x [n, h, w, c] into xp [n, h + top + bottom, w + left + right, c], zeros around it. */
cudaError_t tfd_cuda_pad_nhwc(const tfd_cuda_launch *l, size_t elem_bytes, const void *x, int64_t n, int64_t h,
                              int64_t w, int64_t c, int64_t top, int64_t bottom, int64_t left, int64_t right, void *xp);
/* y [n, h, w, c] = xp [n, hp, wp, c] from row top, column left. */
cudaError_t tfd_cuda_crop_nhwc(const tfd_cuda_launch *l, size_t elem_bytes, const void *xp, int64_t n, int64_t hp,
                               int64_t wp, int64_t c, int64_t top, int64_t left, int64_t h, int64_t w, void *y);
/* The convolution by plain loops (one thread per output element), for what cuDNN refuses: forward,
 * depthwise and backprop_input as tfd_dm_conv describes them, without the epilogue. */
cudaError_t tfd_cuda_conv_direct(const tfd_cuda_launch *l, const tfd_dm_conv *p);

#ifdef __cplusplus
}
#endif
#endif
