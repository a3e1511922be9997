/* Device kernels of the complex64 ops (k_spectral.c): Complex, Real, Imag, ComplexAbs, complex64
 * Add/AddV2/Sub/Mul/RealDiv/Neg, and FFT/IFFT, composed from the device math's strided copies,
 * elementwise entries, selects and products. A complex64 tensor is float32 pairs in device memory, so
 * parts are strided float views: Real is one strided copy, Add one float addition over 2n floats.
 * Broadcast operands are first laid out at the output's shape (one copy of 8-byte elements). The
 * CPU kernel's arithmetic is kept: products in float32, RealDiv by Smith's method and ComplexAbs in
 * float64, then rounded. The transforms of length n <= DFT_MAX_N are products with DFT matrices
 * (built on the host in double, as the CPU's twiddles are): FFT and IFFT four real products, RFFT two
 * (a real signal's cosine and sine sums over the first n/2 + 1 bins) and IRFFT two (the bins' real
 * and imaginary parts against the Hermitian spectrum's weights); longer ones, and whatever the CPU
 * kernel refuses, run the CPU kernel on host copies for its checks and texts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/tensor_internal.h"
#include "../math/cwise_logic.h"
#include "../device_kernel.h"
#include "../kernel_shared.h"

enum { C_COMPLEX, C_REAL, C_IMAG, C_ABS, C_ADD, C_SUB, C_MUL, C_DIV, C_NEG, C_FFT, C_IFFT, C_RFFT, C_IRFFT };

/* Longest transform run as a DFT product: its two float matrices take 2 n^2 floats (8 MiB at 1024). */
#define DFT_MAX_N 1024

/* Temporaries of one run, released together. */
typedef struct temps {
  tfd_tensor *t[20]; /* RealDiv's 17 the most */
  int n;
} temps;

static void *temp(temps *T, tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, int64_t count) {
  if (T->n == (int)(sizeof T->t / sizeof *T->t)) {
    tfd_kernel_fail(c, k, TFD_INTERNAL, "too many temporaries");
    return NULL;
  }
  tfd_tensor *t = tfd_dk_alloc_device(c, k, dt, &count, 1);
  if (!t) return NULL;
  T->t[T->n++] = t;
  return tfd_tensor_data(t);
}

static void temps_free(temps *T) {
  for (int i = 0; i < T->n; i++) tfd_tensor_unref(T->t[i]);
}

/* y[i * ys + yo] = x[i * xs + xo] for i < n, elements of es bytes. */
static bool copy_strided(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, size_t es, const void *x,
                         int64_t xs, int64_t xo, void *y, int64_t ys, int64_t yo, int64_t n) {
  int64_t strides[2][TFD_MAX_DIMS] = {{xs}, {ys}}, offsets[2] = {xo, yo};
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, 1, &n, 2, strides, offsets) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->copy_walk(c->device, es, x, y, &w, &st), &st);
}

/* y = op(a[i * as + ao], b[i * bs + bo]) for i < n, y contiguous. */
static bool binary_strided(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dm_binary op,
                           tfd_dtype dt, const void *a, int64_t as, int64_t ao, const void *b, int64_t bs, int64_t bo,
                           void *y, int64_t n) {
  int64_t strides[2][TFD_MAX_DIMS] = {{as}, {bs}}, offsets[2] = {ao, bo};
  tfd_dm_walk w;
  if (tfd_dk_walk(&w, 1, &n, 2, strides, offsets) == 0) return true;
  tfd_status st = TFD_STATUS_INIT;
  return tfd_dk_ok(k, c, m->binary(c->device, op, dt, a, b, y, &w, &st), &st);
}

static bool unary(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dm_unary op, tfd_dtype dt,
                  const void *x, void *y, int64_t n) {
  tfd_status st = TFD_STATUS_INIT;
  return n == 0 || tfd_dk_ok(k, c, m->unary(c->device, op, dt, x, y, n, 0.0f, &st), &st);
}

static bool cast(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dtype from, tfd_dtype to,
                 const void *x, void *y, int64_t n) {
  tfd_status st = TFD_STATUS_INIT;
  return n == 0 || tfd_dk_ok(k, c, m->cast(c->device, from, to, x, y, n, &st), &st);
}

/* x laid out at shape out (es-byte elements): x's own data when its shape is out, else a broadcast copy. */
static const void *at_shape(temps *T, const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_tensor *x,
                            const tfd_shape *out, size_t es) {
  tfd_shape s;
  tfd_shape_of_tensor(x, &s);
  if (tfd_shape_equal(&s, out)) return tfd_tensor_const_data(x);
  int64_t n = tfd_shape_numel(out), strides[2][TFD_MAX_DIMS];
  tfd_dk_broadcast_strides(&s, out, strides[0]);
  tfd_dk_strides(out->ndims, out->dims, strides[1]);
  void *y = temp(T, c, k, es == 8 ? TFD_INT64 : TFD_FLOAT32, n);
  tfd_dm_walk w;
  tfd_status st = TFD_STATUS_INIT;
  if (!y) return NULL;
  if (tfd_dk_walk(&w, out->ndims, out->dims, 2, strides, NULL) > 0 &&
      !tfd_dk_ok(k, c, m->copy_walk(c->device, es, tfd_tensor_const_data(x), y, &w, &st), &st))
    return NULL;
  return y;
}

/* ---- Real, Imag, ComplexAbs, Neg ---- */
static void k_part(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  const tfd_tensor *x = c->inputs[0];
  int64_t n = tfd_tensor_numel(x);
  bool neg = k->dk_op == C_NEG;
  tfd_tensor *y = tfd_kernel_alloc_like(c, k, neg ? TFD_COMPLEX64 : TFD_FLOAT32, x);
  if (!y) return;
  const float *a = tfd_tensor_const_data(x);
  temps T = {0};
  bool ok;
  if (neg) {
    ok = unary(k, c, m, TFD_DM_NEG, TFD_FLOAT32, a, tfd_tensor_data(y), 2 * n);
  } else if (k->dk_op != C_ABS) {
    ok = copy_strided(k, c, m, 4, a, 2, k->dk_op == C_IMAG, tfd_tensor_data(y), 1, 0, n);
  } else { /* sqrt(re^2 + im^2) in double, as hypotf's exact result rounds */
    double *d = temp(&T, c, k, TFD_FLOAT64, 2 * n), *s = d ? temp(&T, c, k, TFD_FLOAT64, n) : NULL;
    ok = s && cast(k, c, m, TFD_FLOAT32, TFD_FLOAT64, a, d, 2 * n) &&
         binary_strided(k, c, m, TFD_DM_MUL, TFD_FLOAT64, d, 1, 0, d, 1, 0, d, 2 * n) &&
         binary_strided(k, c, m, TFD_DM_ADD, TFD_FLOAT64, d, 2, 0, d, 2, 1, s, n) &&
         unary(k, c, m, TFD_DM_SQRT, TFD_FLOAT64, s, s, n) &&
         cast(k, c, m, TFD_FLOAT64, TFD_FLOAT32, s, tfd_tensor_data(y), n);
  }
  temps_free(&T);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- Complex and the binary arithmetic ---- */
/* re, im (n each, dtype dt, contiguous) interleaved into the complex output y. */
static bool interleave(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const void *re, const void *im,
                       void *y, int64_t n) {
  return copy_strided(k, c, m, 4, re, 1, 0, y, 2, 0, n) && copy_strided(k, c, m, 4, im, 1, 0, y, 2, 1, n);
}

/* One branch of Smith's division over n pairs (float64), p the part of b divided by its other q (1, 0
 * when |br| >= |bi|): r = b_p / b_q, d = b_q + b_p r, re = (a_q + a_p r) / d, im = (a_p - a_q r) / d.
 * With p = 0 that im is the negation of the CPU's (ai r - ar) / d, exactly, which the caller applies. */
static bool smith_branch(temps *T, const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const double *a,
                         const double *b, int p, double *re, double *im, int64_t n) {
  const tfd_dtype D = TFD_FLOAT64;
  int q = 1 - p;
  double *r = temp(T, c, k, D, n), *d = r ? temp(T, c, k, D, n) : NULL, *t = d ? temp(T, c, k, D, n) : NULL;
  return t && binary_strided(k, c, m, TFD_DM_DIV, D, b, 2, p, b, 2, q, r, n) &&
         binary_strided(k, c, m, TFD_DM_MUL, D, b, 2, p, r, 1, 0, d, n) &&
         binary_strided(k, c, m, TFD_DM_ADD, D, b, 2, q, d, 1, 0, d, n) &&
         binary_strided(k, c, m, TFD_DM_MUL, D, a, 2, p, r, 1, 0, t, n) &&
         binary_strided(k, c, m, TFD_DM_ADD, D, a, 2, q, t, 1, 0, re, n) &&
         binary_strided(k, c, m, TFD_DM_DIV, D, re, 1, 0, d, 1, 0, re, n) &&
         binary_strided(k, c, m, TFD_DM_MUL, D, a, 2, q, r, 1, 0, t, n) &&
         binary_strided(k, c, m, TFD_DM_SUB, D, a, 2, p, t, 1, 0, im, n) &&
         binary_strided(k, c, m, TFD_DM_DIV, D, im, 1, 0, d, 1, 0, im, n);
}

/* Smith's division in double over n contiguous pairs (a, b as float64 pairs), into re, im (float64):
 * both branches computed, each element taking the one |br| >= |bi| picks. */
static bool smith_div(temps *T, const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const double *a,
                      const double *b, double *re, double *im, int64_t n) {
  const tfd_dtype D = TFD_FLOAT64;
  double *abr = temp(T, c, k, D, n), *abi = abr ? temp(T, c, k, D, n) : NULL;
  double *re2 = abi ? temp(T, c, k, D, n) : NULL, *im2 = re2 ? temp(T, c, k, D, n) : NULL;
  bool *cond = im2 ? temp(T, c, k, TFD_BOOL, n) : NULL;
  if (!cond) return false;
  bool ok = copy_strided(k, c, m, 8, b, 2, 0, abr, 1, 0, n) && copy_strided(k, c, m, 8, b, 2, 1, abi, 1, 0, n) &&
            unary(k, c, m, TFD_DM_ABS, D, abr, abr, n) && unary(k, c, m, TFD_DM_ABS, D, abi, abi, n) &&
            binary_strided(k, c, m, TFD_DM_GREATER_EQUAL, D, abr, 1, 0, abi, 1, 0, cond, n) &&
            smith_branch(T, k, c, m, a, b, 1, re, im, n) && smith_branch(T, k, c, m, a, b, 0, re2, im2, n) &&
            unary(k, c, m, TFD_DM_NEG, D, im2, im2, n);
  int64_t strides[3][TFD_MAX_DIMS] = {{1}, {1}, {1}};
  tfd_dm_walk w;
  tfd_dk_walk(&w, 1, &n, 3, strides, NULL);
  tfd_status st = TFD_STATUS_INIT;
  return ok && tfd_dk_ok(k, c, m->select(c->device, 8, cond, re, re2, re, &w, &st), &st) &&
         tfd_dk_ok(k, c, m->select(c->device, 8, cond, im, im2, im, &w, &st), &st);
}

static void k_binary(tfd_kernel *k, tfd_kernel_context *c) {
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m || !tfd_cwise_same_dtypes(c, k, 0, 2)) return;
  tfd_shape s[2], out;
  tfd_shape_of_tensor(c->inputs[0], &s[0]);
  tfd_shape_of_tensor(c->inputs[1], &s[1]);
  if (!tfd_cwise_broadcast(c, k, &s[0], &s[1], &out)) return;
  tfd_tensor *y = tfd_kernel_alloc(c, k, TFD_COMPLEX64, out.dims, out.ndims);
  if (!y) return;
  int64_t n = tfd_shape_numel(&out);
  temps T = {0};
  bool ok = true;
  if (k->dk_op == C_COMPLEX) { /* each part broadcast straight into its place in the pairs */
    for (int p = 0; p < 2 && ok && n > 0; p++) {
      int64_t strides[2][TFD_MAX_DIMS], offsets[2] = {0, p};
      tfd_dk_broadcast_strides(&s[p], &out, strides[0]);
      tfd_dk_strides(out.ndims, out.dims, strides[1]);
      for (int d = 0; d < out.ndims; d++) strides[1][d] *= 2;
      tfd_dm_walk w;
      tfd_status st = TFD_STATUS_INIT;
      if (tfd_dk_walk(&w, out.ndims, out.dims, 2, strides, offsets) > 0)
        ok = tfd_dk_ok(k, c, m->copy_walk(c->device, 4, tfd_tensor_const_data(c->inputs[p]), tfd_tensor_data(y), &w, &st),
                       &st);
    }
  } else if (n > 0) {
    const float *a = at_shape(&T, k, c, m, c->inputs[0], &out, 8);
    const float *b = a ? at_shape(&T, k, c, m, c->inputs[1], &out, 8) : NULL;
    float *o = tfd_tensor_data(y);
    ok = b != NULL;
    if (ok && (k->dk_op == C_ADD || k->dk_op == C_SUB)) {
      ok = binary_strided(k, c, m, k->dk_op == C_ADD ? TFD_DM_ADD : TFD_DM_SUB, TFD_FLOAT32, a, 1, 0, b, 1, 0, o, 2 * n);
    } else if (ok && k->dk_op == C_MUL) { /* re = ar br - ai bi, im = ar bi + ai br, in float32 as the CPU's */
      float *p = temp(&T, c, k, TFD_FLOAT32, n), *q = p ? temp(&T, c, k, TFD_FLOAT32, n) : NULL;
      float *re = q ? temp(&T, c, k, TFD_FLOAT32, n) : NULL, *im = re ? temp(&T, c, k, TFD_FLOAT32, n) : NULL;
      ok = im && binary_strided(k, c, m, TFD_DM_MUL, TFD_FLOAT32, a, 2, 0, b, 2, 0, p, n) &&
           binary_strided(k, c, m, TFD_DM_MUL, TFD_FLOAT32, a, 2, 1, b, 2, 1, q, n) &&
           binary_strided(k, c, m, TFD_DM_SUB, TFD_FLOAT32, p, 1, 0, q, 1, 0, re, n) &&
           binary_strided(k, c, m, TFD_DM_MUL, TFD_FLOAT32, a, 2, 0, b, 2, 1, p, n) &&
           binary_strided(k, c, m, TFD_DM_MUL, TFD_FLOAT32, a, 2, 1, b, 2, 0, q, n) &&
           binary_strided(k, c, m, TFD_DM_ADD, TFD_FLOAT32, p, 1, 0, q, 1, 0, im, n) && interleave(k, c, m, re, im, o, n);
    } else if (ok) { /* RealDiv */
      double *a64 = temp(&T, c, k, TFD_FLOAT64, 2 * n), *b64 = a64 ? temp(&T, c, k, TFD_FLOAT64, 2 * n) : NULL;
      double *re = b64 ? temp(&T, c, k, TFD_FLOAT64, n) : NULL, *im = re ? temp(&T, c, k, TFD_FLOAT64, n) : NULL;
      ok = im && cast(k, c, m, TFD_FLOAT32, TFD_FLOAT64, a, a64, 2 * n) &&
           cast(k, c, m, TFD_FLOAT32, TFD_FLOAT64, b, b64, 2 * n) && smith_div(&T, k, c, m, a64, b64, re, im, n) &&
           copy_strided(k, c, m, 8, re, 1, 0, a64, 2, 0, n) && copy_strided(k, c, m, 8, im, 1, 0, a64, 2, 1, n) &&
           cast(k, c, m, TFD_FLOAT64, TFD_FLOAT32, a64, o, 2 * n);
    }
  }
  temps_free(&T);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- FFT, IFFT: y = x W with W[j][k] = exp(-+2 pi i j k / n) (IFFT: conjugate, over n) ---- */
static void k_dft(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  int64_t n = nd > 0 ? tfd_tensor_dim(x, nd - 1) : 0, total = tfd_tensor_numel(x);
  if (nd < 1 || n > DFT_MAX_N || total == 0) { /* the CPU kernel's checks, texts and long transforms */
    tfd_dk_run_on_host(k, c);
    return;
  }
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  int64_t rows = total / n;
  tfd_tensor *y = tfd_kernel_alloc_like(c, k, TFD_COMPLEX64, x);
  if (!y) return;
  /* W's parts on the host, in double as the CPU's twiddles, then rounded: cos and -+sin of 2 pi (j k mod n) / n */
  int64_t wdims[2] = {n, n};
  tfd_status st = TFD_STATUS_INIT;
  tfd_tensor *hw[2] = {tfd_tensor_make(NULL, TFD_FLOAT32, wdims, 2, &st), NULL};
  hw[1] = hw[0] ? tfd_tensor_make(NULL, TFD_FLOAT32, wdims, 2, &st) : NULL;
  bool inverse = k->dk_op == C_IFFT, ok = hw[1] != NULL;
  if (!ok) {
    tfd_dk_ok(k, c, tfd_status_code(&st), &st);
  } else {
    float *wr = tfd_tensor_data(hw[0]), *wi = tfd_tensor_data(hw[1]);
    double scale = inverse ? 1.0 / (double)n : 1.0;
    for (int64_t j = 0; j < n; j++)
      for (int64_t q = 0; q < n; q++) {
        double a = 2.0 * M_PI * (double)((j * q) % n) / (double)n;
        wr[j * n + q] = (float)(cos(a) * scale);
        wi[j * n + q] = (float)((inverse ? sin(a) : -sin(a)) * scale);
      }
  }
  tfd_tensor *dw[2] = {ok ? tfd_dk_to_device(c, k, hw[0]) : NULL, NULL};
  dw[1] = dw[0] ? tfd_dk_to_device(c, k, hw[1]) : NULL;
  temps T = {0};
  float *xr = dw[1] ? temp(&T, c, k, TFD_FLOAT32, total) : NULL, *xi = xr ? temp(&T, c, k, TFD_FLOAT32, total) : NULL;
  float *p = xi ? temp(&T, c, k, TFD_FLOAT32, total) : NULL, *q = p ? temp(&T, c, k, TFD_FLOAT32, total) : NULL;
  float *re = q ? temp(&T, c, k, TFD_FLOAT32, total) : NULL, *im = re ? temp(&T, c, k, TFD_FLOAT32, total) : NULL;
  const float *a = tfd_tensor_const_data(x);
  ok = im && copy_strided(k, c, m, 4, a, 2, 0, xr, 1, 0, total) && copy_strided(k, c, m, 4, a, 2, 1, xi, 1, 0, total);
  /* re = xr wr - xi wi, im = xr wi + xi wr */
  const void *lhs[4] = {xr, xi, xr, xi}, *rhs[4] = {dw[0] ? tfd_tensor_const_data(dw[0]) : NULL,
                                                     dw[1] ? tfd_tensor_const_data(dw[1]) : NULL,
                                                     dw[1] ? tfd_tensor_const_data(dw[1]) : NULL,
                                                     dw[0] ? tfd_tensor_const_data(dw[0]) : NULL};
  float *dst[4] = {p, q, re, im};
  for (int i = 0; i < 4 && ok; i++) {
    tfd_dm_matmul mm = {.dtype = TFD_FLOAT32, .a = lhs[i], .b = rhs[i], .c = dst[i], .m = rows, .n = n, .k = n,
                        .batch = 1, .act = TFD_ACT_NONE};
    ok = tfd_dk_ok(k, c, m->matmul(c->device, &mm, &st), &st);
    if (ok && i == 1) ok = binary_strided(k, c, m, TFD_DM_SUB, TFD_FLOAT32, p, 1, 0, q, 1, 0, p, total);
  }
  /* p holds re now; re and im were the last two products' outputs: im = xr wi + xi wr */
  ok = ok && binary_strided(k, c, m, TFD_DM_ADD, TFD_FLOAT32, re, 1, 0, im, 1, 0, im, total) &&
       interleave(k, c, m, p, im, tfd_tensor_data(y), total);
  temps_free(&T);
  for (int i = 0; i < 2; i++) tfd_tensor_unref(hw[i]), tfd_tensor_unref(dw[i]);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

/* ---- RFFT: y[k] = sum_j x[j] (cos - i sin)(2 pi j k / n), k <= n / 2; IRFFT: y[t] = sum_k w_k (xr_k cos -
 * xi_k sin)(2 pi k t / n) / n, w_k 1 for k = 0 and 2k = n, else 2 (the bins above n / 2 mirror those below). ---- */
static void k_real_dft(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  int nd = tfd_tensor_ndims(x);
  bool forward = k->dk_op == C_RFFT;
  tfd_tensor *len_t = tfd_kernel_host_input(c, k, 1);
  if (!len_t) return;
  bool one = tfd_tensor_ndims(len_t) == 1 && tfd_tensor_dim(len_t, 0) == 1;
  int64_t n = one ? ((const int32_t *)tfd_tensor_const_data(len_t))[0] : -1;
  tfd_tensor_unref(len_t);
  int64_t inner = nd > 0 ? tfd_tensor_dim(x, nd - 1) : 0, total = tfd_tensor_numel(x), bins = n / 2 + 1;
  if (nd < 1 || n <= 0 || n > DFT_MAX_N || total == 0 || inner < (forward ? n : bins)) {
    tfd_dk_run_on_host(k, c); /* the CPU kernel's checks and texts, empty and long transforms */
    return;
  }
  const tfd_device_math *m = tfd_dk_math(k, c);
  if (!m) return;
  int64_t rows = total / inner, dims[TFD_MAX_DIMS];
  for (int d = 0; d < nd; d++) dims[d] = tfd_tensor_dim(x, d);
  dims[nd - 1] = forward ? bins : n;
  tfd_tensor *y = tfd_kernel_alloc(c, k, forward ? TFD_COMPLEX64 : TFD_FLOAT32, dims, nd);
  if (!y) return;
  /* the two matrices on the host: RFFT [n, bins] cos and -sin; IRFFT [bins, n] w cos / n and -w sin / n */
  int64_t wdims[2] = {forward ? n : bins, forward ? bins : n};
  tfd_status st = TFD_STATUS_INIT;
  tfd_tensor *hw[2] = {tfd_tensor_make(NULL, TFD_FLOAT32, wdims, 2, &st), NULL}, *dw[2] = {NULL, NULL};
  hw[1] = hw[0] ? tfd_tensor_make(NULL, TFD_FLOAT32, wdims, 2, &st) : NULL;
  bool ok = hw[1] != NULL;
  if (!ok) {
    tfd_dk_ok(k, c, tfd_status_code(&st), &st);
  } else {
    float *wc = tfd_tensor_data(hw[0]), *ws = tfd_tensor_data(hw[1]);
    for (int64_t j = 0; j < n; j++)
      for (int64_t q = 0; q < bins; q++) {
        double a = 2.0 * M_PI * (double)((j * q) % n) / (double)n;
        double w = forward ? 1.0 : (q == 0 || 2 * q == n ? 1.0 : 2.0) / (double)n;
        int64_t at = forward ? j * bins + q : q * n + j;
        wc[at] = (float)(w * cos(a));
        ws[at] = (float)(-w * sin(a));
      }
  }
  dw[0] = ok ? tfd_dk_to_device(c, k, hw[0]) : NULL;
  dw[1] = dw[0] ? tfd_dk_to_device(c, k, hw[1]) : NULL;
  temps T = {0};
  ok = dw[1] != NULL;
  if (ok && forward) { /* the first n of each row, then its cosine and sine sums */
    float *xs = temp(&T, c, k, TFD_FLOAT32, rows * n), *re = xs ? temp(&T, c, k, TFD_FLOAT32, rows * bins) : NULL;
    float *im = re ? temp(&T, c, k, TFD_FLOAT32, rows * bins) : NULL;
    int64_t cdims[2] = {rows, n}, strides[2][TFD_MAX_DIMS] = {{inner, 1}, {n, 1}};
    tfd_dm_walk w;
    ok = im && (tfd_dk_walk(&w, 2, cdims, 2, strides, NULL) == 0 ||
                tfd_dk_ok(k, c, m->copy_walk(c->device, 4, tfd_tensor_const_data(x), xs, &w, &st), &st));
    for (int i = 0; i < 2 && ok; i++) {
      tfd_dm_matmul mm = {.dtype = TFD_FLOAT32, .a = xs, .b = tfd_tensor_const_data(dw[i]), .c = i ? im : re, .m = rows,
                          .n = bins, .k = n, .batch = 1, .act = TFD_ACT_NONE};
      ok = tfd_dk_ok(k, c, m->matmul(c->device, &mm, &st), &st);
    }
    ok = ok && interleave(k, c, m, re, im, tfd_tensor_data(y), rows * bins);
  } else if (ok) { /* the first bins of each row as real and imaginary parts, then the two sums */
    float *xr = temp(&T, c, k, TFD_FLOAT32, rows * bins), *xi = xr ? temp(&T, c, k, TFD_FLOAT32, rows * bins) : NULL;
    float *part = xi ? temp(&T, c, k, TFD_FLOAT32, rows * n) : NULL;
    int64_t cdims[2] = {rows, bins};
    for (int p = 0; p < 2 && part; p++) {
      int64_t strides[2][TFD_MAX_DIMS] = {{2 * inner, 2}, {bins, 1}}, offsets[2] = {p, 0};
      tfd_dm_walk w;
      if (tfd_dk_walk(&w, 2, cdims, 2, strides, offsets) > 0 &&
          !tfd_dk_ok(k, c, m->copy_walk(c->device, 4, tfd_tensor_const_data(x), p ? xi : xr, &w, &st), &st))
        part = NULL;
    }
    ok = part != NULL;
    for (int i = 0; i < 2 && ok; i++) {
      tfd_dm_matmul mm = {.dtype = TFD_FLOAT32, .a = i ? xi : xr, .b = tfd_tensor_const_data(dw[i]),
                          .c = i ? part : tfd_tensor_data(y), .m = rows, .n = n, .k = bins, .batch = 1, .act = TFD_ACT_NONE};
      ok = tfd_dk_ok(k, c, m->matmul(c->device, &mm, &st), &st);
    }
    ok = ok && binary_strided(k, c, m, TFD_DM_ADD, TFD_FLOAT32, tfd_tensor_data(y), 1, 0, part, 1, 0, tfd_tensor_data(y),
                              rows * n);
  }
  temps_free(&T);
  for (int i = 0; i < 2; i++) tfd_tensor_unref(hw[i]), tfd_tensor_unref(dw[i]);
  if (ok) c->outputs[0] = y;
  else tfd_tensor_unref(y);
}

tfd_code tfd_dk_setup_spectral(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  static const struct {
    const char *op;
    int code;
  } ops[] = {{"Complex", C_COMPLEX}, {"Real", C_REAL}, {"Imag", C_IMAG}, {"ComplexAbs", C_ABS}, {"Add", C_ADD},
             {"AddV2", C_ADD},       {"Sub", C_SUB},   {"Mul", C_MUL},   {"RealDiv", C_DIV},     {"Neg", C_NEG},
             {"FFT", C_FFT},         {"IFFT", C_IFFT}, {"RFFT", C_RFFT}, {"IRFFT", C_IRFFT}};
  const char *name = init->op->name;
  size_t i = 0;
  while (i < sizeof ops / sizeof *ops && strcmp(ops[i].op, name) != 0) i++;
  if (i == sizeof ops / sizeof *ops) return tfd_status_setf(st, TFD_INTERNAL, "no complex device kernel for %s", name);
  bool complex_in = ops[i].code != C_COMPLEX && ops[i].code != C_RFFT;
  if (complex_in && k->T != TFD_COMPLEX64) return tfd_status_setf(st, TFD_INTERNAL, "%s: not a complex64 kernel", name);
  int code = ops[i].code;
  k->dk_op = code;
  /* long transforms and the CPU's own checks run the CPU kernel on host copies (tfd_dk_run_on_host) */
  return tfd_dk_setup_either(k, init, tfd_setup_spectral, true,
                             code == C_RFFT || code == C_IRFFT                             ? k_real_dft
                             : code == C_FFT || code == C_IFFT                             ? k_dft
                             : code == C_REAL || code == C_IMAG || code == C_ABS || code == C_NEG ? k_part
                                                                                                 : k_binary,
                             st);
}
