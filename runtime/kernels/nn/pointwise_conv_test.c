/* The pointwise convolution kernel (pointwise_conv.h) against a double-accumulated reference: every
 * epilogue (bias, batch norm, addend, in place or not, Relu, Relu6, LeakyRelu, Prelu, Elu, Tanh,
 * Sigmoid), channel counts on both sides of the 16-float vectors and the 48- and 64-column panels,
 * row counts around the 8- and 6-row tiles and the 96-row blocks, row ranges that start mid-image;
 * rows outside the range must keep their canaries. Without AVX-512 only the "not available" contract
 * is checked. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/nn/activation.h"
#include "runtime/kernels/nn/pointwise_conv.h"
#include "runtime/testing/harness.h"

#define CANARY (-12345.5f)
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static float value(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (float)((*seed >> 9) % 2001) / 1000.0f - 1.0f;
}

static double act_ref(tfd_activation act, double x, double alpha) {
  switch (act) {
  case TFD_ACT_RELU: return x > 0 ? x : 0;
  case TFD_ACT_RELU6: return x > 0 ? (x < 6 ? x : 6) : 0;
  case TFD_ACT_ELU: return x < 0 ? expm1(x) : x;
  case TFD_ACT_LEAKY_RELU: return x > 0 ? x : alpha * x;
  case TFD_ACT_TANH: return tanh(x);
  case TFD_ACT_SIGMOID: return 1 / (1 + exp(-x));
  default: return x;
  }
}

typedef struct layer {
  int64_t rows, c, o;
  float *x, *w, *bias, *scale, *shift, *alpha, *addend, *y;
  double *prod; /* x w, no epilogue */
} layer;

static void layer_init(layer *t, int64_t rows, int64_t c, int64_t o) {
  unsigned seed = (unsigned)(rows * 131 + c * 17 + o * 7), wseed = (unsigned)(c * 17 + o * 7); /* w: per (c, o) */
  *t = (layer){.rows = rows, .c = c, .o = o};
  t->x = malloc((size_t)(rows * c) * sizeof(float));
  t->w = malloc((size_t)(c * o) * sizeof(float));
  t->bias = malloc((size_t)o * sizeof(float));
  t->scale = malloc((size_t)o * sizeof(float));
  t->shift = malloc((size_t)o * sizeof(float));
  t->alpha = malloc((size_t)o * sizeof(float));
  t->addend = malloc((size_t)(rows * o) * sizeof(float));
  t->y = malloc((size_t)(rows * o) * sizeof(float));
  t->prod = calloc((size_t)(rows * o), sizeof(double));
  for (int64_t i = 0; i < rows * c; i++) t->x[i] = value(&seed);
  for (int64_t i = 0; i < c * o; i++) t->w[i] = value(&wseed);
  for (int64_t j = 0; j < o; j++) {
    t->bias[j] = value(&seed);
    t->scale[j] = 2 * value(&seed);
    t->shift[j] = value(&seed);
    t->alpha[j] = value(&seed) / 2;
  }
  for (int64_t i = 0; i < rows * o; i++) t->addend[i] = value(&seed);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t j = 0; j < o; j++) t->prod[r * o + j] += (double)t->x[r * c + k] * t->w[k * o + j];
}

static void layer_free(layer *t) {
  free(t->x), free(t->w), free(t->bias), free(t->scale), free(t->shift), free(t->alpha), free(t->addend), free(t->y);
  free(t->prod);
}

/* What the kernel must give for row r, column j under e (whose pointers are t's, or NULL). */
static double want(const layer *t, const tfd_pointwise_epilogue *e, const float *addend, int64_t r, int64_t j) {
  double v = t->prod[r * t->o + j];
  if (e->scale) v = v * e->scale[j] + e->shift[j];
  else if (e->bias) v += e->bias[j];
  if (e->addend) v += addend[r * t->o + j];
  if (e->prelu) return v > 0 ? v : e->prelu[j] * v;
  return act_ref(e->act, v, e->alpha);
}

/* Runs rows [r0, r1) under e, the output in y or (in_place) in a copy of the addend, and checks
 * every row: inside the range against the reference, outside still the canary (or the addend). */
static int check(const layer *t, tfd_pointwise_epilogue e, bool in_place, int64_t r0, int64_t r1,
                 const tfd_pointwise *p) {
  float *addend = NULL;
  if (e.addend) {
    addend = malloc((size_t)(t->rows * t->o) * sizeof(float));
    memcpy(addend, t->addend, (size_t)(t->rows * t->o) * sizeof(float));
    e.addend = addend;
  }
  float *y = in_place && addend ? addend : t->y;
  if (y == t->y)
    for (int64_t i = 0; i < t->rows * t->o; i++) y[i] = CANARY;
  tfd_pointwise_run(p, t->x, r0, r1, &e, y);
  int bad = 0;
  for (int64_t r = 0; r < t->rows; r++)
    for (int64_t j = 0; j < t->o; j++) {
      double got = y[r * t->o + j];
      bool inside = r >= r0 && r < r1;
      double w = inside ? want(t, &e, t->addend, r, j) : (y == t->y ? CANARY : t->addend[r * t->o + j]);
      bool ok = inside ? fabs(got - w) <= 2e-5 * fmax(1.0, fabs(w)) : got == w;
      if (!ok && bad++ < 3)
        fprintf(stderr,
                "rows %lld c %lld o %lld [%lld, %lld) bias %d bn %d addend %d in_place %d prelu %d act %d: "
                "[%lld][%lld] = %.9g, want %.9g\n",
                (long long)t->rows, (long long)t->c, (long long)t->o, (long long)r0, (long long)r1, e.bias != NULL,
                e.scale != NULL, e.addend != NULL, in_place, e.prelu != NULL, (int)e.act, (long long)r, (long long)j,
                got, w);
    }
  free(addend);
  return bad;
}

static const int64_t rows_[] = {1, 7, 8, 9, 95, 96, 97, 200};
static const int64_t cs[] = {1, 3, 16, 24, 64, 130};
static const int64_t os[] = {1, 5, 16, 24, 32, 48, 50, 64, 80, 96, 128, 192};

static void test_matches_reference(void) {
  int cases = 0, failed = 0;
  for (size_t ic = 0; ic < COUNT(cs); ic++)
    for (size_t io = 0; io < COUNT(os); io++) {
      tfd_pointwise *p = NULL;
      for (size_t ir = 0; ir < COUNT(rows_); ir++) {
        layer t;
        layer_init(&t, rows_[ir], cs[ic], os[io]);
        if (!p) p = tfd_pointwise_pack(t.w, t.c, t.o); /* one packing for every row count, as a kernel's */
        CHECK(p != NULL);
        if (!p) {
          layer_free(&t);
          break;
        }
        /* The epilogues: none, bias, batch norm; each with and without an addend (in place or not); then
         * every activation and Prelu. The largest layers run a subset, for the sanitizer builds. */
        bool big = t.rows * t.c * t.o > 200 * 64 * 48;
        for (int base = 0; base < 3; base++)
          for (int add = 0; add < 3; add++)
            for (int act = -1; act < TFD_ACT_COUNT; act++) {
              if (big && act != -1 && act != TFD_ACT_RELU && act != TFD_ACT_SIGMOID) continue;
              tfd_pointwise_epilogue e = {base == 1 ? t.bias : NULL, base == 2 ? t.scale : NULL,
                                          base == 2 ? t.shift : NULL, add ? t.addend : NULL,
                                          act < 0 ? t.alpha : NULL, act < 0 ? TFD_ACT_NONE : (tfd_activation)act, 0.3f};
              cases++;
              failed += check(&t, e, add == 2, 0, t.rows, p) > 0;
            }
        /* A range that starts and ends mid-image (a thread's share): rows outside it untouched. */
        if (t.rows > 2) {
          tfd_pointwise_epilogue e = {t.bias, NULL, NULL, t.addend, t.alpha, TFD_ACT_NONE, 0};
          cases++;
          failed += check(&t, e, false, 1, t.rows - 1, p) > 0;
        }
        layer_free(&t);
      }
      tfd_pointwise_free(p);
    }
  if (failed) fprintf(stderr, "%d of %d runs differ from the reference\n", failed, cases);
  CHECK_INT(failed, 0);
  CHECK(cases > 5000);
}

/* Relu and Prelu in registers treat NaN as activation.c does on the same CPU: Relu gives what activation.c gives
 * (+0 or NaN, as the vector max instruction of the ISA in use orders its operands), Prelu keeps NaN. */
static void test_nan(void) {
  float w[16], x[2] = {NAN, -2.0f}, y[32], alpha[16], nan_in = NAN, relu_nan;
  for (int j = 0; j < 16; j++) w[j] = 1.0f, alpha[j] = 0.25f;
  tfd_pointwise *p = tfd_pointwise_pack(w, 1, 16);
  CHECK(p != NULL);
  if (!p) return;
  tfd_activation_f32(TFD_ACT_RELU, &relu_nan, &nan_in, 1, 0);
  tfd_pointwise_run(p, x, 0, 2, &(tfd_pointwise_epilogue){.act = TFD_ACT_RELU}, y);
  for (int j = 0; j < 16; j++)
    CHECK((isnan(relu_nan) ? isnan(y[j]) : y[j] == relu_nan && !signbit(y[j])) && y[16 + j] == 0.0f);
  tfd_pointwise_run(p, x, 0, 2, &(tfd_pointwise_epilogue){.prelu = alpha}, y);
  for (int j = 0; j < 16; j++) CHECK(isnan(y[j]) && y[16 + j] == -0.5f);
  tfd_pointwise_free(p);
}

static void test_bad_sizes(void) {
  float w[4] = {0};
  CHECK(tfd_pointwise_pack(w, 0, 4) == NULL);
  CHECK(tfd_pointwise_pack(w, 4, 0) == NULL);
  CHECK(tfd_pointwise_pack(NULL, 2, 2) == NULL);
  tfd_pointwise_free(NULL);
}

/* Without AVX-512: not available, nothing packs, and a run with no packing writes nothing. */
static void test_unavailable_contract(void) {
  if (tfd_pointwise_available()) return;
  float w[4] = {1, 2, 3, 4}, x[2] = {1, 1}, y[2] = {CANARY, CANARY};
  CHECK(tfd_pointwise_pack(w, 2, 2) == NULL);
  tfd_pointwise_run(NULL, x, 0, 1, &(tfd_pointwise_epilogue){0}, y);
  CHECK(y[0] == CANARY && y[1] == CANARY);
}

static const tfd_test tests[] = {
    {"matches_reference", test_matches_reference},
    {"nan", test_nan},
    {"bad_sizes", test_bad_sizes},
    {"unavailable_contract", test_unavailable_contract},
};

static const tfd_test contract_only[] = {
    {"unavailable_contract", test_unavailable_contract},
};

TFD_TEST_RUN_ALL(tests, static int run_all)
TFD_TEST_RUN_ALL(contract_only, static int run_contract)

int main(void) {
  if (tfd_pointwise_available()) return run_all();
  printf("SKIP pointwise_conv: this CPU has no AVX-512F; checking only that the kernel says so\n");
  return run_contract();
}
