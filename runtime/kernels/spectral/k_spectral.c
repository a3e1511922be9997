/* Complex numbers and the discrete Fourier transforms, as TensorFlow's CPU kernels compute them and
 * with their error texts: Complex (real and imaginary parts, broadcast), Real, Imag, ComplexAbs,
 * complex64 arithmetic (Add, AddV2, Sub, Mul, RealDiv with broadcasting, Neg: k_cwise.c hands these
 * over), and FFT, IFFT, RFFT, IRFFT over the innermost dimension (complex64 and float32: tfdev has
 * no complex128).
 *
 * A transform of length n runs in double precision as an iterative radix-2 FFT when n is a power of
 * two and by Bluestein's chirp-z method (three power-of-two FFTs of at least 2n - 1 points) otherwise,
 * so every length costs O(n log n); rows are split over the intra-op pool. RFFT crops its input to
 * fft_length and IRFFT reads the first fft_length / 2 + 1 bins, rebuilding the rest from Hermitian
 * symmetry, as TensorFlow's kernels do: neither pads, and a shorter input is INVALID_ARGUMENT. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../math/cwise_logic.h"
#include "../kernel.h"
#include "../kernel_shared.h"

enum { S_COMPLEX, S_REAL, S_IMAG, S_ABS, S_FFT, S_IFFT, S_RFFT, S_IRFFT, S_ADD, S_ADDV2, S_SUB, S_MUL, S_DIV, S_NEG };

/* ---- Complex, Real, Imag, ComplexAbs ---- */
static void complex_row(void *o_, const void *const *in, const int64_t *s, int64_t n) {
  float *restrict o = o_;
  const float *restrict re = in[0], *restrict im = in[1];
  if (s[0] == 1 && s[1] == 1) { /* the common case gets a loop the compiler vectorises */
    for (int64_t i = 0; i < n; i++) {
      o[2 * i] = re[i];
      o[2 * i + 1] = im[i];
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    o[2 * i] = re[i * s[0]];
    o[2 * i + 1] = im[i * s[1]];
  }
}

static void k_complex_part(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  tfd_tensor *y = tfd_kernel_alloc_like(c, k, TFD_FLOAT32, x);
  if (!y) return;
  const float *a = tfd_tensor_const_data(x);
  float *o = tfd_tensor_data(y);
  int64_t n = tfd_tensor_numel(x);
  switch (k->code) {
    case S_REAL:
      for (int64_t i = 0; i < n; i++) o[i] = a[2 * i];
      break;
    case S_IMAG:
      for (int64_t i = 0; i < n; i++) o[i] = a[2 * i + 1];
      break;
    default:
      for (int64_t i = 0; i < n; i++) o[i] = hypotf(a[2 * i], a[2 * i + 1]);
      break;
  }
  c->outputs[0] = y;
}

/* ---- complex64 arithmetic ---- */
/* o = F(a, b) over complex64 rows; contiguous operands get their own loop, which the compiler vectorises. */
#define COMPLEX_ROW(NAME, EXPR_RE, EXPR_IM)                                       \
  static void NAME(void *o_, const void *const *in, const int64_t *s, int64_t n) { \
    float *restrict o = o_;                                                       \
    const float *restrict a = in[0], *restrict b = in[1];                         \
    int64_t sa = s[0], sb = s[1];                                                 \
    if (sa == 1 && sb == 1)                                                       \
      for (int64_t i = 0; i < n; i++) {                                           \
        float ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];  \
        o[2 * i] = (EXPR_RE);                                                     \
        o[2 * i + 1] = (EXPR_IM);                                                 \
      }                                                                           \
    else                                                                          \
      for (int64_t i = 0; i < n; i++) {                                           \
        float ar = a[2 * i * sa], ai = a[2 * i * sa + 1];                         \
        float br = b[2 * i * sb], bi = b[2 * i * sb + 1];                         \
        o[2 * i] = (EXPR_RE);                                                     \
        o[2 * i + 1] = (EXPR_IM);                                                 \
      }                                                                           \
  }
COMPLEX_ROW(add_row, ar + br, ai + bi)
COMPLEX_ROW(sub_row, ar - br, ai - bi)
COMPLEX_ROW(mul_row, ar * br - ai * bi, ar * bi + ai * br)

/* a / b by Smith's method, as std::complex divides: no overflow from squaring b's parts. */
static void div_row(void *o_, const void *const *in, const int64_t *s, int64_t n) {
  float *o = o_;
  const float *a = in[0], *b = in[1];
  for (int64_t i = 0; i < n; i++) {
    double ar = a[2 * i * s[0]], ai = a[2 * i * s[0] + 1], br = b[2 * i * s[1]], bi = b[2 * i * s[1] + 1], re, im;
    if (fabs(br) >= fabs(bi)) {
      double r = bi / br, d = br + bi * r;
      re = (ar + ai * r) / d;
      im = (ai - ar * r) / d;
    } else {
      double r = br / bi, d = bi + br * r;
      re = (ar * r + ai) / d;
      im = (ai * r - ar) / d;
    }
    o[2 * i] = (float)re;
    o[2 * i + 1] = (float)im;
  }
}

/* Complex (parts in, complex64 out) and the complex64 arithmetic: numpy broadcasting by k_logic.c's
 * engine, a row function per op. */
static void k_complex_binary(tfd_kernel *k, tfd_kernel_context *c) {
  if (!tfd_cwise_same_dtypes(c, k, 0, 2)) return;
  tfd_shape s[2], out;
  tfd_shape_of_tensor(c->inputs[0], &s[0]);
  tfd_shape_of_tensor(c->inputs[1], &s[1]);
  if (!tfd_cwise_broadcast(c, k, &s[0], &s[1], &out)) return;
  tfd_cwise_row_fn fn = k->code == S_COMPLEX ? complex_row
                        : k->code == S_SUB   ? sub_row
                        : k->code == S_MUL   ? mul_row
                        : k->code == S_DIV   ? div_row
                                             : add_row;
  tfd_cwise_run_rows(k, c, fn, 2, c->inputs, s, TFD_COMPLEX64, &out, k->code >= S_MUL ? 4 : 1);
}

static void k_complex_neg(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *x = c->inputs[0];
  int64_t dims[TFD_MAX_DIMS];
  for (int i = 0; i < tfd_tensor_ndims(x); i++) dims[i] = tfd_tensor_dim(x, i);
  const float *a = tfd_tensor_const_data(x); /* read before forwarding: x may become y */
  tfd_tensor *y = tfd_kernel_forward_or_alloc(c, k, 0, TFD_COMPLEX64, dims, tfd_tensor_ndims(x));
  if (!y) return;
  float *o = tfd_tensor_data(y);
  for (int64_t i = 0, n = 2 * tfd_tensor_numel(y); i < n; i++) o[i] = -a[i];
  c->outputs[0] = y;
}

/* ---- the transforms ---- */
/* What one transform of length n needs, made once per run and shared by the rows. */
typedef struct fft_plan {
  int64_t n;        /* the transform's length */
  int64_t m;        /* the power-of-two length the radix-2 passes run at (n itself, or Bluestein's) */
  double *twiddle;  /* m / 2 complex roots exp(-2 pi i k / m) */
  double *chirp;    /* Bluestein: n values exp(-pi i k^2 / n) */
  double *filter;   /* Bluestein: the FFT of the conjugate chirp, wrapped to length m */
} fft_plan;

static bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* In-place radix-2 FFT of x (m complex values, interleaved), forward (exp(-...)) or not. */
static void radix2(const fft_plan *p, double *x, bool forward) {
  int64_t m = p->m;
  for (int64_t i = 1, j = 0; i < m; i++) { /* bit reversal */
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      double tr = x[2 * i], ti = x[2 * i + 1];
      x[2 * i] = x[2 * j];
      x[2 * i + 1] = x[2 * j + 1];
      x[2 * j] = tr;
      x[2 * j + 1] = ti;
    }
  }
  for (int64_t len = 2; len <= m; len <<= 1) {
    int64_t half = len >> 1, step = m / len;
    for (int64_t b = 0; b < m; b += len) {
      for (int64_t k = 0; k < half; k++) {
        double wr = p->twiddle[2 * k * step], wi = p->twiddle[2 * k * step + 1];
        if (!forward) wi = -wi;
        double *u = x + 2 * (b + k), *v = x + 2 * (b + k + half);
        double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
        v[0] = u[0] - vr;
        v[1] = u[1] - vi;
        u[0] += vr;
        u[1] += vi;
      }
    }
  }
}

static void plan_free(fft_plan *p) {
  free(p->twiddle);
  free(p->chirp);
  free(p->filter);
}

static bool plan_make(fft_plan *p, int64_t n) {
  *p = (fft_plan){.n = n, .m = n};
  if (!is_pow2(n)) {
    p->m = 1;
    while (p->m < 2 * n - 1) p->m <<= 1;
  }
  p->twiddle = malloc(sizeof(double) * (size_t)p->m);
  if (!p->twiddle) return false;
  for (int64_t k = 0; k < p->m / 2; k++) {
    double a = -2.0 * M_PI * (double)k / (double)p->m;
    p->twiddle[2 * k] = cos(a);
    p->twiddle[2 * k + 1] = sin(a);
  }
  if (p->m == n) return true;
  p->chirp = malloc(sizeof(double) * 2 * (size_t)n);
  p->filter = calloc(2 * (size_t)p->m, sizeof(double));
  if (!p->chirp || !p->filter) return false;
  for (int64_t k = 0; k < n; k++) {
    /* k^2 mod 2n keeps the angle small, so it stays exact for long rows */
    double a = -M_PI * (double)((k * k) % (2 * n)) / (double)n;
    p->chirp[2 * k] = cos(a);
    p->chirp[2 * k + 1] = sin(a);
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t at[2] = {k, (p->m - k) % p->m};
    for (int q = 0; q < (k ? 2 : 1); q++) {
      p->filter[2 * at[q]] = p->chirp[2 * k];
      p->filter[2 * at[q] + 1] = -p->chirp[2 * k + 1];
    }
  }
  radix2(p, p->filter, true);
  return true;
}

/* x (n complex values in scratch of 2 * m doubles) transformed in place; the inverse unscaled. */
static void transform(const fft_plan *p, double *x, bool forward) {
  if (!p->chirp) {
    radix2(p, x, forward);
    return;
  }
  /* Bluestein: with w[t] = exp(-pi i t^2 / n), X[k] = w[k] sum_j (x[j] w[j]) conj(w[k - j]), a
   * convolution made by power-of-two FFTs; the inverse is the conjugate of the forward transform of
   * the conjugate. */
  int64_t n = p->n, m = p->m;
  double s = forward ? 1 : -1;
  for (int64_t j = 0; j < n; j++) {
    double wr = p->chirp[2 * j], wi = p->chirp[2 * j + 1], xr = x[2 * j], xi = s * x[2 * j + 1];
    x[2 * j] = xr * wr - xi * wi;
    x[2 * j + 1] = xr * wi + xi * wr;
  }
  memset(x + 2 * n, 0, sizeof(double) * 2 * (size_t)(m - n));
  radix2(p, x, true);
  for (int64_t j = 0; j < m; j++) {
    double fr = p->filter[2 * j], fi = p->filter[2 * j + 1], xr = x[2 * j], xi = x[2 * j + 1];
    x[2 * j] = xr * fr - xi * fi;
    x[2 * j + 1] = xr * fi + xi * fr;
  }
  radix2(p, x, false);
  for (int64_t j = 0; j < n; j++) {
    double xr = x[2 * j] / (double)m, xi = x[2 * j + 1] / (double)m;
    double wr = p->chirp[2 * j], wi = p->chirp[2 * j + 1];
    x[2 * j] = xr * wr - xi * wi;
    x[2 * j + 1] = s * (xr * wi + xi * wr);
  }
}

typedef struct fft_job {
  const fft_plan *plan;
  int code;
  const void *in;
  void *out;
  int64_t in_row, out_row; /* elements per row of input and output */
  int64_t n;               /* fft length */
  atomic_bool oom;         /* a shard could not get its scratch (shards may set it at once) */
} fft_job;

static void fft_rows(int64_t begin, int64_t end, void *arg) {
  fft_job *j = arg;
  const fft_plan *p = j->plan;
  int64_t n = j->n;
  double *x = malloc(sizeof(double) * 2 * (size_t)p->m);
  if (!x) {
    atomic_store(&j->oom, true); /* read after the parallel loop returns */
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const float *in = (const float *)j->in + (j->code == S_RFFT ? 1 : 2) * r * j->in_row;
    float *out = (float *)j->out + (j->code == S_IRFFT ? 1 : 2) * r * j->out_row;
    switch (j->code) {
      case S_FFT:
      case S_IFFT:
        for (int64_t i = 0; i < 2 * n; i++) x[i] = in[i];
        break;
      case S_RFFT:
        for (int64_t i = 0; i < n; i++) {
          x[2 * i] = in[i];
          x[2 * i + 1] = 0;
        }
        break;
      default: { /* IRFFT: bins [0, n/2] from the input, the rest their mirrored conjugates */
        int64_t h = n / 2 + 1;
        for (int64_t i = 0; i < h; i++) {
          x[2 * i] = in[2 * i];
          x[2 * i + 1] = in[2 * i + 1];
        }
        for (int64_t i = h; i < n; i++) {
          x[2 * i] = in[2 * (n - i)];
          x[2 * i + 1] = -in[2 * (n - i) + 1];
        }
      }
    }
    bool forward = j->code == S_FFT || j->code == S_RFFT;
    transform(p, x, forward);
    double scale = forward ? 1.0 : 1.0 / (double)n;
    if (j->code == S_IRFFT) {
      for (int64_t i = 0; i < n; i++) out[i] = (float)(x[2 * i] * scale);
    } else {
      for (int64_t i = 0; i < j->out_row; i++) {
        out[2 * i] = (float)(x[2 * i] * scale);
        out[2 * i + 1] = (float)(x[2 * i + 1] * scale);
      }
    }
  }
  free(x);
}

static void k_fft(tfd_kernel *k, tfd_kernel_context *c) {
  tfd_tensor *in = c->inputs[0];
  int nd = tfd_tensor_ndims(in);
  char shape[TFD_SHAPE_TEXT_CAP];
  if (nd < 1) {
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input must have rank of at least 1 but got: %s",
                    tfd_tensor_shape_text(shape, sizeof shape, in, 0));
    return;
  }
  bool real = k->code == S_RFFT || k->code == S_IRFFT, forward = k->code == S_FFT || k->code == S_RFFT;
  int64_t dims[TFD_MAX_DIMS], inner = tfd_tensor_dim(in, nd - 1), n = inner;
  for (int i = 0; i < nd; i++) dims[i] = tfd_tensor_dim(in, i);
  if (real) {
    tfd_tensor *len = c->inputs[1];
    if (tfd_tensor_ndims(len) != 1 || tfd_tensor_dim(len, 0) != 1) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "fft_length must have shape [1]");
      return;
    }
    n = ((const int32_t *)tfd_tensor_const_data(len))[0];
    if (n < 0) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "fft_length[0] must >= 0, but got: %lld", (long long)n);
      return;
    }
    int64_t need = forward ? n : n / 2 + 1;
    if (inner != 0 && inner < need) {
      tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Input dimension %d must have length of at least %lld but got: %lld",
                      nd - 1, (long long)need, (long long)inner);
      return;
    }
    dims[nd - 1] = forward && n ? n / 2 + 1 : n;
  }
  tfd_tensor *out = tfd_kernel_alloc(c, k, k->code == S_IRFFT ? TFD_FLOAT32 : TFD_COMPLEX64, dims, nd);
  if (!out) return;
  c->outputs[0] = out;
  if (tfd_tensor_numel(in) == 0) { /* an empty signal transformed at a length: all padding, so zeros */
    memset(tfd_tensor_data(out), 0, tfd_tensor_byte_size(out));
    return;
  }
  int64_t rows = tfd_dims_product(in, 0, nd - 1);
  if (n == 0) { /* a non-empty input transformed at length 0 */
    int64_t temp[2] = {rows, 0};
    tfd_kernel_fail(c, k, TFD_INVALID_ARGUMENT, "Obtained a FFT shape of 0 elements: %s",
                    tfd_shape_text(shape, sizeof shape, temp, 2));
    return;
  }
  fft_plan plan;
  fft_job job = {&plan, k->code, tfd_tensor_const_data(in), tfd_tensor_data(out), inner, dims[nd - 1], n, false};
  if (plan_make(&plan, n)) {
    int64_t cost = (int64_t)(5.0 * (double)plan.m * log2((double)plan.m) * (plan.chirp ? 3 : 1)) + 1;
    tfd_threadpool_parallel_for(c->intra_pool, rows, cost, fft_rows, &job);
  } else {
    atomic_store(&job.oom, true);
  }
  plan_free(&plan);
  if (atomic_load(&job.oom))
    tfd_kernel_fail(c, k, TFD_RESOURCE_EXHAUSTED, "out of memory for a transform of length %lld", (long long)n);
}

tfd_code tfd_setup_spectral(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st) {
  static const char *const names[] = {"Complex", "Real", "Imag", "ComplexAbs", "FFT", "IFFT", "RFFT",
                                      "IRFFT",   "Add",  "AddV2", "Sub",       "Mul", "RealDiv", "Neg"};
  const char *op = init->op->name;
  int code = 0;
  while (code < (int)(sizeof names / sizeof names[0]) && strcmp(op, names[code]) != 0) code++;
  if (code == (int)(sizeof names / sizeof names[0]))
    return tfd_status_setf(st, TFD_INTERNAL, "no spectral kernel for %s", op);
  k->code = code;
  k->compute = code == S_COMPLEX ? k_complex_binary
               : code <= S_ABS   ? k_complex_part
               : code <= S_IRFFT ? k_fft
               : code == S_NEG   ? k_complex_neg
                                 : k_complex_binary;
  return TFD_OK;
}
