/* The XNNPACK convolution path (xnn_conv.h) against a plain NHWC/HWIO reference convolution written
 * here: regular and depthwise, explicit SAME-style and VALID padding, strides, dilation, channel
 * multiplier, bias, Relu and Relu6, one and two threads; a constant filter packed once, a
 * non-constant one re-read, the bias re-read either way; threads == 1 starts no thread; an input
 * that ends at a page end is not read past. Built without XNNPACK, only the stubs are checked (and
 * a SKIP line says so). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scripts/bench/xnn_conv.h"
#include "runtime/testing/harness.h"
#include "runtime/testing/threads.h"

typedef tfd_xnn_conv_shape shape;

/* TensorFlow's SAME padding for one dimension: the output size and the pads before and after. */
static void same_pad(int64_t in, int64_t k, int64_t stride, int64_t dilation, int64_t *out, int64_t *before,
                     int64_t *after) {
  *out = (in + stride - 1) / stride;
  int64_t total = (*out - 1) * stride + (k - 1) * dilation + 1 - in;
  if (total < 0) total = 0;
  *before = total / 2;
  *after = total - *before;
}

/* A shape from TensorFlow's attributes; o is the output channels (c * multiplier for depthwise). */
static shape make_shape(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw, int64_t o, int64_t stride,
                        int64_t dilation, bool same) {
  shape s = {.n = n, .h = h, .w = w, .c = c, .kh = kh, .kw = kw, .o = o,
             .stride = {stride, stride}, .dilation = {dilation, dilation}};
  if (same) {
    same_pad(h, kh, stride, dilation, &s.oh, &s.pad_before[0], &s.pad_after[0]);
    same_pad(w, kw, stride, dilation, &s.ow, &s.pad_before[1], &s.pad_after[1]);
  } else {
    s.oh = (h - ((kh - 1) * dilation + 1)) / stride + 1;
    s.ow = (w - ((kw - 1) * dilation + 1)) / stride + 1;
  }
  return s;
}

#ifndef TFDEV_WITH_XNNPACK

static void test_stubs(void) {
  printf("SKIP xnn_conv_test: tfdev was built without XNNPACK (TFDEV_XNNPACK=OFF or libxnnpack-dev missing); "
         "checking the stubs only\n");
  CHECK(tfd_xnn_conv_new(false, true, TFD_ACT_RELU, true) == NULL);
  CHECK(tfd_xnn_conv_new(true, false, TFD_ACT_NONE, false) == NULL);
  tfd_xnn_conv_free(NULL);
  shape s = make_shape(1, 4, 4, 2, 3, 3, 2, 1, 1, true);
  float x[32] = {0}, f[36] = {0}, y[32];
  tfd_status *st = tfd_status_new();
  CHECK_INT(tfd_xnn_conv_run(NULL, &s, x, f, NULL, y, 1, st), TFD_UNIMPLEMENTED);
  CHECK_STATUS(st, TFD_UNIMPLEMENTED, "without XNNPACK");
  tfd_status_free(st);
}

static const tfd_test tests[] = {{"stubs", test_stubs}};

#else

static float act_of(tfd_activation act, double v) {
  if (act == TFD_ACT_RELU) return v > 0 ? (float)v : 0.0f;
  if (act == TFD_ACT_RELU6) return v > 0 ? (v < 6 ? (float)v : 6.0f) : 0.0f;
  return (float)v;
}

/* The reference: NHWC x, HWIO filter ([kh, kw, c, m] for depthwise), sums in double. */
static void ref_conv(const shape *s, bool dw, const float *x, const float *f, const float *bias, tfd_activation act,
                     float *y) {
  int64_t m = dw ? s->o / s->c : 0;
  for (int64_t b = 0; b < s->n; b++)
    for (int64_t oy = 0; oy < s->oh; oy++)
      for (int64_t ox = 0; ox < s->ow; ox++)
        for (int64_t oc = 0; oc < s->o; oc++) {
          double acc = bias ? bias[oc] : 0.0;
          for (int64_t ky = 0; ky < s->kh; ky++) {
            int64_t iy = oy * s->stride[0] - s->pad_before[0] + ky * s->dilation[0];
            if (iy < 0 || iy >= s->h) continue;
            for (int64_t kx = 0; kx < s->kw; kx++) {
              int64_t ix = ox * s->stride[1] - s->pad_before[1] + kx * s->dilation[1];
              if (ix < 0 || ix >= s->w) continue;
              const float *xp = x + ((b * s->h + iy) * s->w + ix) * s->c;
              const float *fp = f + (ky * s->kw + kx) * s->c * (dw ? m : s->o);
              if (dw) acc += (double)xp[oc / m] * fp[oc];
              else
                for (int64_t ic = 0; ic < s->c; ic++) acc += (double)xp[ic] * fp[ic * s->o + oc];
            }
          }
          y[((b * s->oh + oy) * s->ow + ox) * s->o + oc] = act_of(act, acc);
        }
}

/* n values in [-1, 1], then 16 zero bytes: XNNPACK may read that far past an input
 * (XNN_EXTRA_BYTES; TensorFlow Lite's arena leaves them), and under valgrind, whose emulated CPU
 * has no AVX-512, it picks kernels that do, which valgrind would report. test_input_at_page_end
 * covers an input without them. */
static float *random_floats(int64_t n, unsigned seed) {
  float *p = calloc((size_t)n + 4, sizeof *p);
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    p[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
  return p;
}

static int64_t x_size(const shape *s) { return s->n * s->h * s->w * s->c; }
static int64_t y_size(const shape *s) { return s->n * s->oh * s->ow * s->o; }
static int64_t f_size(const shape *s, bool dw) { return s->kh * s->kw * (dw ? s->o : s->c * s->o); }

/* max |a - b| <= 1e-4 * max(1, max |b|) */
static bool close_to(const float *a, const float *b, int64_t n, double *err_out) {
  double err = 0, mag = 1;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - b[i]);
    if (!(d <= err)) err = d; /* NaN counts as an error */
    if (fabs((double)b[i]) > mag) mag = fabs((double)b[i]);
  }
  if (err_out) *err_out = err / mag;
  return err <= 1e-4 * mag;
}


typedef struct conv_case {
  const char *name;
  bool dw;
  int64_t n, h, w, c, k, o, stride, dilation;
  bool same;
} conv_case;

static const conv_case cases[] = {
    {"conv 3x3 s1 same", false, 1, 9, 7, 5, 3, 6, 1, 1, true},
    {"conv 3x3 s2 same", false, 2, 9, 8, 5, 3, 7, 2, 1, true},
    {"conv 5x5 s2 same (odd pads)", false, 1, 12, 11, 3, 5, 24, 2, 1, true},
    {"conv 3x3 s1 valid", false, 1, 8, 9, 4, 3, 5, 1, 1, false},
    {"conv 3x3 s2 valid", false, 1, 9, 9, 6, 3, 3, 2, 1, false},
    {"conv 3x3 dilation 2 same", false, 1, 10, 9, 3, 3, 4, 1, 2, true},
    {"conv 3x3 dilation 2 valid", false, 1, 10, 9, 3, 3, 4, 1, 2, false},
    {"conv 1x1 s1 valid (gemm)", false, 2, 6, 5, 24, 1, 48, 1, 1, false},
    {"conv 1x1 s2 same", false, 1, 7, 7, 8, 1, 9, 2, 1, true},
    {"conv 3x3 s3 valid on 3x3 (one pixel)", false, 1, 3, 3, 32, 3, 40, 3, 1, false},
    {"conv 1 in 1 out", false, 1, 6, 6, 1, 3, 1, 1, 1, true},
    {"dw 3x3 s1 same", true, 1, 9, 7, 24, 3, 24, 1, 1, true},
    {"dw 3x3 s2 same", true, 2, 9, 8, 19, 3, 19, 2, 1, true},
    {"dw 3x3 s1 valid", true, 1, 8, 8, 16, 3, 16, 1, 1, false},
    {"dw 3x3 s2 valid", true, 1, 9, 9, 16, 3, 16, 2, 1, false},
    {"dw 3x3 dilation 2 same", true, 1, 10, 10, 8, 3, 8, 1, 2, true},
    {"dw 3x3 multiplier 2 same", true, 1, 7, 6, 5, 3, 10, 1, 1, true},
    {"dw 3x3 multiplier 2 s2 same", true, 1, 8, 9, 6, 3, 12, 2, 1, true},
    {"dw 5x5 multiplier 2 dilation 2 valid", true, 1, 12, 12, 3, 5, 6, 1, 2, false},
    {"dw 1x1 (per-channel scale)", true, 1, 4, 4, 7, 1, 7, 1, 1, false},
};

/* Every case with every bias, activation and thread count; a new object per combination, run
 * twice so that the second run takes the packed operator from the cache. */
static void test_against_reference(void) {
  const tfd_activation acts[] = {TFD_ACT_NONE, TFD_ACT_RELU, TFD_ACT_RELU6};
  tfd_status *st = tfd_status_new();
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const conv_case *k = &cases[ci];
    shape s = make_shape(k->n, k->h, k->w, k->c, k->k, k->k, k->o, k->stride, k->dilation, k->same);
    /* Scale the input up so Relu6 clamps some outputs at 6 as well as some at 0. */
    float *x = random_floats(x_size(&s), 11 + (unsigned)ci), *f = random_floats(f_size(&s, k->dw), 23 + (unsigned)ci);
    float *b = random_floats(s.o, 37 + (unsigned)ci), *ref = malloc((size_t)y_size(&s) * sizeof *ref),
          *y = malloc((size_t)y_size(&s) * sizeof *y);
    for (int64_t i = 0; i < x_size(&s); i++) x[i] *= 4;
    for (int with_bias = 0; with_bias < 2; with_bias++)
      for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
        for (int threads = 1; threads <= 2; threads++)
          for (int constant = 0; constant < 2; constant++) {
            ref_conv(&s, k->dw, x, f, with_bias ? b : NULL, acts[ai], ref);
            tfd_xnn_conv *p = tfd_xnn_conv_new(k->dw, with_bias, acts[ai], constant);
            CHECK(p != NULL);
            if (!p) continue;
            for (int rep = 0; rep < 2; rep++) {
              memset(y, 0xff, (size_t)y_size(&s) * sizeof *y); /* NaNs: every output must be written */
              CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b, y, threads, st), TFD_OK);
              double err;
              if (!close_to(y, ref, y_size(&s), &err)) {
                fprintf(stderr, "  %s bias %d act %d threads %d constant %d rep %d: relative error %g\n", k->name,
                        with_bias, (int)acts[ai], threads, constant, rep, err);
                CHECK(false);
              }
            }
            tfd_xnn_conv_free(p);
          }
    CHECK_STR(tfd_status_message(st), "");
    free(x), free(f), free(b), free(ref), free(y);
  }
  tfd_status_free(st);
}

/* filter_constant: the filter is packed once per (shape, filter address), so new contents at the
 * same address are not seen (tfd_dnnl_conv behaves the same); a filter at another address is
 * packed afresh. Without filter_constant every run reads the filter. The bias is read on every
 * run either way. */
static void test_filter_packing(void) {
  tfd_status *st = tfd_status_new();
  for (int dw = 0; dw < 2; dw++) {
    shape s = make_shape(1, 8, 8, 6, 3, 3, dw ? 6 : 10, 1, 1, true);
    float *x = random_floats(x_size(&s), 1), *f = random_floats(f_size(&s, dw), 2),
          *f2 = random_floats(f_size(&s, dw), 3), *b = random_floats(s.o, 4), *b2 = random_floats(s.o, 5);
    int64_t ny = y_size(&s);
    float *y = malloc((size_t)ny * sizeof *y), *first = malloc((size_t)ny * sizeof *y),
          *ref = malloc((size_t)ny * sizeof *y), *saved = malloc((size_t)f_size(&s, dw) * sizeof *f);
    memcpy(saved, f, (size_t)f_size(&s, dw) * sizeof *f);

    tfd_xnn_conv *p = tfd_xnn_conv_new(dw, true, TFD_ACT_NONE, true);
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b, first, 1, st), TFD_OK);
    ref_conv(&s, dw, x, f, b2, TFD_ACT_NONE, ref);
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b2, y, 1, st), TFD_OK); /* a new bias is seen (and packed) */
    CHECK(close_to(y, ref, ny, NULL));
    memcpy(ref, y, (size_t)ny * sizeof *y);
    memcpy(f, f2, (size_t)f_size(&s, dw) * sizeof *f); /* new contents, same address */
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b2, y, 1, st), TFD_OK);
    CHECK(memcmp(y, ref, (size_t)ny * sizeof *y) == 0); /* the packed copy of the old filter */
    ref_conv(&s, dw, x, f2, b2, TFD_ACT_NONE, ref);
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f2, b2, y, 2, st), TFD_OK); /* another address: packed afresh */
    CHECK(close_to(y, ref, ny, NULL));
    tfd_xnn_conv_free(p);

    memcpy(f, saved, (size_t)f_size(&s, dw) * sizeof *f);
    p = tfd_xnn_conv_new(dw, true, TFD_ACT_NONE, false);
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b, y, 1, st), TFD_OK);
    CHECK(memcmp(y, first, (size_t)ny * sizeof *y) == 0);
    memcpy(f, f2, (size_t)f_size(&s, dw) * sizeof *f);
    ref_conv(&s, dw, x, f2, b, TFD_ACT_NONE, ref);
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b, y, 1, st), TFD_OK); /* re-read */
    CHECK(close_to(y, ref, ny, NULL));
    ref_conv(&s, dw, x, f2, b2, TFD_ACT_NONE, ref);
    CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b2, y, 2, st), TFD_OK);
    CHECK(close_to(y, ref, ny, NULL));
    tfd_xnn_conv_free(p);
    CHECK_STR(tfd_status_message(st), "");
    free(x), free(f), free(f2), free(b), free(b2), free(y), free(first), free(ref), free(saved);
  }
  tfd_status_free(st);
}

/* More shapes than the cache holds, cycled: entries are replaced and remade, results stay right. */
static void test_cache_replacement(void) {
  tfd_status *st = tfd_status_new();
  tfd_xnn_conv *p = tfd_xnn_conv_new(false, true, TFD_ACT_RELU, true);
  float *f = random_floats(3 * 3 * 4 * 5, 1), *b = random_floats(5, 2);
  for (int round = 0; round < 3; round++)
    for (int64_t h = 4; h < 10; h++) {
      shape s = make_shape(1, h, h + 1, 4, 3, 3, 5, 1 + h % 2, 1, true);
      float *x = random_floats(x_size(&s), (unsigned)h), *y = malloc((size_t)y_size(&s) * sizeof *y),
            *ref = malloc((size_t)y_size(&s) * sizeof *y);
      ref_conv(&s, false, x, f, b, TFD_ACT_RELU, ref);
      CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, b, y, 1 + round % 2, st), TFD_OK);
      CHECK(close_to(y, ref, y_size(&s), NULL));
      free(x), free(y), free(ref);
    }
  tfd_xnn_conv_free(p);
  free(f), free(b);
  tfd_status_free(st);
}

/* threads == 1 starts no thread; threads == 2 keeps one worker (the caller is the other) until the
 * object is freed. */
static void test_threads(void) {
  int before = tfd_test_count_threads();
  if (before < 0) {
    printf("SKIP test_threads: /proc/self/task is not readable here\n");
    return;
  }
  tfd_status *st = tfd_status_new();
  shape s = make_shape(1, 16, 16, 8, 3, 3, 8, 1, 1, true);
  float *x = random_floats(x_size(&s), 1), *f = random_floats(f_size(&s, false), 2),
        *y = malloc((size_t)y_size(&s) * sizeof *y);
  tfd_xnn_conv *p = tfd_xnn_conv_new(false, false, TFD_ACT_NONE, true);
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, NULL, y, 1, st), TFD_OK);
  CHECK_INT(tfd_test_count_threads(), before);
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, NULL, y, 2, st), TFD_OK);
  CHECK_INT(tfd_test_count_threads(), before + 1);
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, NULL, y, 2, st), TFD_OK);
  CHECK_INT(tfd_test_count_threads(), before + 1);
  tfd_xnn_conv_free(p);
  CHECK_INT(tfd_test_count_threads(), before);
  free(x), free(f), free(y);
  tfd_status_free(st);
}

/* An input that ends exactly where an inaccessible page begins: XNNPACK may read 16 bytes past its
 * input, so the run must copy it rather than fault. */
static void test_input_at_page_end(void) {
  long page = sysconf(_SC_PAGESIZE);
  shape s = make_shape(1, 16, 16, 16, 3, 3, 16, 1, 1, true); /* 16 KiB of input: a whole number of pages */
  size_t xbytes = (size_t)x_size(&s) * sizeof(float);
  size_t span = ((xbytes + (size_t)page - 1) / (size_t)page + 1) * (size_t)page; /* x's pages and a guard page */
  char *map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  if (map == MAP_FAILED) return;
  CHECK_INT(mprotect(map + span - (size_t)page, (size_t)page, PROT_NONE), 0);
  float *x = (float *)(map + span - (size_t)page - xbytes), *src = random_floats(x_size(&s), 3);
  memcpy(x, src, xbytes);
  tfd_status *st = tfd_status_new();
  for (int dw = 0; dw < 2; dw++) {
    shape t = s;
    if (!dw) t.kh = t.kw = 1, t.oh = t.h, t.ow = t.w, memset(t.pad_before, 0, sizeof t.pad_before),
             memset(t.pad_after, 0, sizeof t.pad_after); /* 1x1: XNNPACK reads x directly as a matrix */
    float *f = random_floats(f_size(&t, dw), 4), *y = malloc((size_t)y_size(&t) * sizeof *y),
          *ref = malloc((size_t)y_size(&t) * sizeof *y);
    ref_conv(&t, dw, src, f, NULL, TFD_ACT_NONE, ref);
    tfd_xnn_conv *p = tfd_xnn_conv_new(dw, false, TFD_ACT_NONE, true);
    for (int threads = 1; threads <= 2; threads++) {
      CHECK_INT(tfd_xnn_conv_run(p, &t, x, f, NULL, y, threads, st), TFD_OK);
      CHECK(close_to(y, ref, y_size(&t), NULL));
    }
    tfd_xnn_conv_free(p);
    free(f), free(y), free(ref);
  }
  tfd_status_free(st);
  free(src);
  munmap(map, span);
}

/* What XNNPACK cannot do is refused, so the kernel falls back: activations other than clamps at
 * _new, and a geometry whose output size does not follow from the rest at _run. */
static void test_refusals(void) {
  CHECK(tfd_xnn_conv_new(false, true, TFD_ACT_ELU, true) == NULL);
  CHECK(tfd_xnn_conv_new(true, true, TFD_ACT_LEAKY_RELU, true) == NULL);
  CHECK(tfd_xnn_conv_new(false, false, TFD_ACT_SIGMOID, false) == NULL);
  tfd_status *st = tfd_status_new();
  tfd_xnn_conv *p = tfd_xnn_conv_new(false, false, TFD_ACT_NONE, true);
  shape s = make_shape(1, 5, 5, 2, 3, 3, 2, 1, 1, true);
  float x[50] = {0}, f[36] = {0}, y[50 + 16];
  s.oh = 6; /* XNNPACK would write 6 rows into a buffer of 5 */
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, NULL, y, 1, st), TFD_INVALID_ARGUMENT);
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "output size");
  s = make_shape(1, 5, 5, 2, 3, 3, 2, 1, 1, false);
  s.kh = 7; /* larger than the padded input */
  s.oh = 1;
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, NULL, y, 1, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  tfd_xnn_conv_free(p);
  p = tfd_xnn_conv_new(true, true, TFD_ACT_NONE, true);
  s = make_shape(1, 5, 5, 2, 3, 3, 3, 1, 1, true); /* depthwise: 3 outputs from 2 channels */
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, f, y, 1, st), TFD_INVALID_ARGUMENT);
  tfd_status_reset(st);
  s.o = 2;
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, NULL, y, 1, st), TFD_INVALID_ARGUMENT); /* made with bias, none given */
  CHECK_STATUS(st, TFD_INVALID_ARGUMENT, "no bias");
  s.n = 0; /* an empty batch: nothing to do */
  CHECK_INT(tfd_xnn_conv_run(p, &s, x, f, f, y, 1, st), TFD_OK);
  tfd_xnn_conv_free(p);
  tfd_status_free(st);
}

/* XNNPACK's output clamp is min(max(v, lo), hi) with SIMD max/min, which return the bound for a
 * NaN: with Relu and Relu6 a NaN becomes 0 (as tfdev's own Relu gives), and with no activation it
 * becomes -inf (the x86 kernels of XNNPACK 2022 have no unclamped variant) where TensorFlow keeps
 * NaN; a kernel without the clamp would keep NaN. Either way it must not come out finite. */
static void test_nan(void) {
  tfd_status *st = tfd_status_new();
  shape s = make_shape(1, 4, 4, 16, 1, 1, 16, 1, 1, false);
  float *x = random_floats(x_size(&s), 1), *f = random_floats(f_size(&s, false), 2), y[256];
  x[0] = NAN; /* pixel 0: every output channel of it is NaN in exact arithmetic */
  tfd_xnn_conv *none = tfd_xnn_conv_new(false, false, TFD_ACT_NONE, true),
               *relu = tfd_xnn_conv_new(false, false, TFD_ACT_RELU, true);
  CHECK_INT(tfd_xnn_conv_run(relu, &s, x, f, NULL, y, 1, st), TFD_OK);
  CHECK(y[0] == 0.0f && y[15] == 0.0f);
  CHECK_INT(tfd_xnn_conv_run(none, &s, x, f, NULL, y, 1, st), TFD_OK);
  bool nan_or_neg_inf = (isnan(y[0]) || (isinf(y[0]) && y[0] < 0));
  CHECK(nan_or_neg_inf);
  printf("  note: XNNPACK with no activation turns a NaN output into %g\n", (double)y[0]);
  CHECK(!isnan(y[16]) && !isinf(y[16])); /* other pixels untouched */
  tfd_xnn_conv_free(none);
  tfd_xnn_conv_free(relu);
  free(x), free(f);
  tfd_status_free(st);
}

static const tfd_test tests[] = {
    {"against_reference", test_against_reference},
    {"filter_packing", test_filter_packing},
    {"cache_replacement", test_cache_replacement},
    {"threads", test_threads},
    {"input_at_page_end", test_input_at_page_end},
    {"refusals", test_refusals},
    {"nan", test_nan},
};

#endif

TFD_TEST_MAIN(tests)
