/* The argument checks and output shapes of the elementwise ops, which their CPU kernels (k_cwise.c,
 * k_logic.c, k_math.c, Prelu of k_conv.c) and device kernels (dk_cwise.c, and the fused Prelu of
 * dk_conv.c) share: operands of one dtype, numpy broadcasting, Select's and SelectV2's shapes, AddN's,
 * BiasAdd's, Softmax's, Prelu's alpha. False with the error reported against the node. Also the
 * broadcasting engine k_logic.c defines and k_math.c shares. */
#ifndef TFDEV_RUNTIME_CWISE_LOGIC_H
#define TFDEV_RUNTIME_CWISE_LOGIC_H

#include "../kernel.h"

/* Inputs [first, first + count) all of input first's dtype. */
bool tfd_cwise_same_dtypes(tfd_kernel_context *c, const tfd_kernel *k, int first, int count);
/* ClipByValue's shapes (t, min, max) into s: each bound a scalar or shaped exactly like t, as TensorFlow's
 * ClipOp takes them; false, with TensorFlow's text reported, otherwise. */
bool tfd_clip_shapes(tfd_kernel_context *c, const tfd_kernel *k, tfd_shape s[3]);
/* Input i is bool (`what` names it). */
bool tfd_cwise_need_bool(tfd_kernel_context *c, const tfd_kernel *k, int i, const char *what);
/* The numpy broadcast of a and b into *out. */
bool tfd_cwise_broadcast(tfd_kernel_context *c, const tfd_kernel *k, const tfd_shape *a, const tfd_shape *b, tfd_shape *out);
/* The same for a binary op that may be `lenient`: Equal and NotEqual with incompatible_shape_error
 * false, whose operands, when they do not broadcast, compare as one value, "all different"
 * (*all_differ set, *out unset) instead of failing. */
bool tfd_compare_broadcast(tfd_kernel_context *c, const tfd_kernel *k, bool lenient, const tfd_shape *a, const tfd_shape *b,
                           tfd_shape *out, bool *all_differ);

/* Select (TF1: a scalar condition, one shaped like 'then', or a vector along 'then''s first
 * dimension) or SelectV2 (`v2`: three-way broadcasting): a bool condition, 'then' and 'else' of one
 * dtype of 1, 4 or 8 bytes (elements are picked whole); s[0..2] are set to the condition's, 'then''s
 * and 'else''s shapes (a vector condition's as [n, 1, ...], to broadcast), *out to the output's. */
bool tfd_select_check(tfd_kernel_context *c, const tfd_kernel *k, bool v2, tfd_shape *s, tfd_shape *out);

/* AddN: every input shaped like input 0. */
bool tfd_add_n_check(tfd_kernel_context *c, const tfd_kernel *k);
/* BiasAdd (value, bias): bias a vector as long as value's last dimension. */
bool tfd_bias_add_check(tfd_kernel_context *c, const tfd_kernel *k);
/* Softmax (logits): rank 1 or more. */
bool tfd_softmax_check(tfd_kernel_context *c, const tfd_kernel *k);

/* One row of an elementwise op: o[i] = f(in[0][i*s[0]], in[1][i*s[1]], ...) for i < n (strides in
 * elements, 0 where an input broadcasts). */
typedef void (*tfd_cwise_row_fn)(void *o, const void *const *in, const int64_t *s, int64_t n);
/* The broadcasting engine of k_logic.c's and k_math.c's ops: allocates the output (dtype out_dt, shape
 * *out) as c->outputs[0] and runs fn over nin (at most 3) inputs broadcast into it, in rows as long as
 * the merged innermost dimension, over the intra-op pool when large (`cost`: work per element).
 * shapes[q] is input q's shape for broadcasting (its tensor's, or Select's vector condition seen as
 * [n, 1, ...]); each must broadcast into *out. A failed allocation is reported against the node. */
void tfd_cwise_run_rows(tfd_kernel *k, tfd_kernel_context *c, tfd_cwise_row_fn fn, int nin, tfd_tensor *const *in,
                        const tfd_shape *shapes, tfd_dtype out_dt, const tfd_shape *out, int64_t cost);

/* Prelu's alpha against an output of dims[nd]: float32, and, once its leading 1s are dropped, one
 * value or exactly the output's trailing dimensions (Keras' shared_axes layouts: [C], [1, 1, C],
 * [H, W, C]); other broadcasts are UNIMPLEMENTED, shapes that do not broadcast INVALID_ARGUMENT,
 * both naming the shapes. *n is alpha's element count. */
bool tfd_prelu_alpha_size(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *a, const int64_t *dims, int nd,
                          int64_t *n);
/* Prelu (x, alpha): x float32, alpha as above; x's dims (*nd of them) and alpha's count *na. */
bool tfd_prelu_check(tfd_kernel_context *c, const tfd_kernel *k, int64_t *dims, int *nd, int64_t *na);

/* FakeQuantWithMinMaxArgs (min, max attrs: min_t NULL) and FakeQuantWithMinMaxVars (min_t, max_t
 * float32 scalars read on the host), implemented in k_identity_n.c: the nudged range and scale of
 * TensorFlow's Nudge (x maps to floor((clamp(x) - nmin) * inv + 0.5) * scale + nmin, Vars dividing
 * by scale instead), zero when Vars' min and max are both 0 (the output is zeros); false, reported,
 * when Vars' bounds are not scalars. */
typedef struct tfd_fake_quant_params {
  float nmin, nmax, scale, inv;
  bool vars, zero;
} tfd_fake_quant_params;
bool tfd_fake_quant_range(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *min_t, const tfd_tensor *max_t,
                          tfd_fake_quant_params *r);

/* A unary elementwise row of input T (named x in EXPR) and output TO: the output is shaped like the
 * input, so always contiguous. ATTR: a function attribute (TFD_VECTOR_CLONES) or nothing. */
#define TFD_UNARY_ROW(ATTR, NAME, T, TO, EXPR)                                          \
  ATTR static void NAME(void *o_, const void *const *in, const int64_t *s, int64_t n) { \
    TO *restrict o = o_;                                                                \
    const T *restrict a = in[0];                                                        \
    (void)s;                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                   \
      T x = a[i];                                                                       \
      o[i] = (EXPR);                                                                    \
    }                                                                                   \
  }

/* A binary elementwise row (tfd_cwise_run_rows' row type) of inputs T and output TO computing F(a, b):
 * the contiguous and one-side-broadcast cases get their own loops, so the compiler vectorises them.
 * ATTR: a function attribute (TFD_VECTOR_CLONES) or nothing. */
#define TFD_BINARY_ROW(ATTR, NAME, T, TO, F)                                       \
  ATTR static void NAME(void *o_, const void *const *in, const int64_t *s, int64_t n) { \
    TO *restrict o = o_;                                                           \
    const T *restrict a = in[0], *restrict b = in[1];                              \
    int64_t sa = s[0], sb = s[1];                                                  \
    if (sa == 1 && sb == 1)                                                        \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[i], b[i]);                        \
    else if (sa == 1 && sb == 0)                                                   \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[i], b[0]);                        \
    else if (sa == 0 && sb == 1)                                                   \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[0], b[i]);                        \
    else                                                                           \
      for (int64_t i = 0; i < n; i++) o[i] = F(a[i * sa], b[i * sb]);              \
  }

#endif
