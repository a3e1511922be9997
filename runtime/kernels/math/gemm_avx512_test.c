/* The AVX-512 GEMM (gemm_avx512.h) against a double-accumulated reference: every activation, bias
 * on and off, B stored plain and transposed, row and column counts around the tile's 8 x 48 and its
 * 16-column vectors, k around the 400-row blocks; padded strides must keep their canaries. Without
 * AVX-512 only the "not available" contract is checked. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/nn/activation.h"
#include "runtime/kernels/math/gemm_avx512.h"
#include "runtime/testing/harness.h"

#define CANARY (-12345.5f)

static float value(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (float)((*seed >> 9) % 2001) / 1000.0f - 1.0f;
}

/* The activations in double, as TensorFlow defines them. */
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

typedef struct shape_case {
  int64_t m, n, k;
  bool tb;
  int64_t lda, ldc; /* > k, > n: the gaps hold canaries */
  float *A, *B, *bias, *C;
  double *ref; /* A op(B), no bias */
} shape_case;

/* B depends on (n, k, tb) only, so one packing serves every m. */
static void case_init(shape_case *t, int64_t m, int64_t n, int64_t k, bool tb) {
  unsigned seed = (unsigned)(m * 131 + n * 17 + k * 7 + tb), bseed = (unsigned)(n * 17 + k * 7 + tb);
  *t = (shape_case){.m = m, .n = n, .k = k, .tb = tb, .lda = k + 3, .ldc = n + 5};
  t->A = malloc((size_t)(m * t->lda) * sizeof(float));
  t->B = malloc((size_t)(k * n) * sizeof(float));
  t->bias = malloc((size_t)n * sizeof(float));
  t->C = malloc((size_t)((m + 1) * t->ldc) * sizeof(float)); /* one canary row past the end */
  t->ref = calloc((size_t)(m * n), sizeof(double));
  /* A's gaps are NaN: a product that read them would show it. */
  for (int64_t i = 0; i < m * t->lda; i++) t->A[i] = i % t->lda < k ? value(&seed) : NAN;
  for (int64_t i = 0; i < k * n; i++) t->B[i] = value(&bseed); /* k x n, or n x k with tb */
  for (int64_t j = 0; j < n; j++) t->bias[j] = value(&bseed);
  for (int64_t i = 0; i < m; i++)
    for (int64_t p = 0; p < k; p++) {
      double a = t->A[i * t->lda + p];
      for (int64_t j = 0; j < n; j++) t->ref[i * n + j] += a * (double)(tb ? t->B[j * k + p] : t->B[p * n + j]);
    }
}

static void case_free(shape_case *t) {
  free(t->A);
  free(t->B);
  free(t->bias);
  free(t->C);
  free(t->ref);
}

/* Runs p on the case with (bias, act) and checks every element and canary; returns the failures. */
static int check_run(const shape_case *t, const tfd_gemm_packed *p, bool bias, tfd_activation act, float alpha) {
  for (int64_t i = 0; i < (t->m + 1) * t->ldc; i++) t->C[i] = CANARY;
  tfd_gemm_run(p, t->A, t->lda, t->m, bias ? t->bias : NULL, act, alpha, t->C, t->ldc);
  int bad = 0;
  for (int64_t i = 0; i <= t->m; i++)
    for (int64_t j = 0; j < t->ldc; j++) {
      float got = t->C[i * t->ldc + j];
      if (i == t->m || j >= t->n) {
        if (got != CANARY && bad++ < 3)
          fprintf(stderr, "m %lld n %lld k %lld tb %d: canary at [%lld][%lld] overwritten with %g\n",
                  (long long)t->m, (long long)t->n, (long long)t->k, t->tb, (long long)i, (long long)j, got);
        continue;
      }
      double want = act_ref(act, t->ref[i * t->n + j] + (bias ? t->bias[j] : 0.0), alpha);
      if (!(fabs(got - want) <= 1e-4 * fmax(1.0, fabs(want))) && bad++ < 3)
        fprintf(stderr, "m %lld n %lld k %lld tb %d bias %d act %d: [%lld][%lld] = %.9g, want %.9g\n",
                (long long)t->m, (long long)t->n, (long long)t->k, t->tb, bias, (int)act, (long long)i,
                (long long)j, got, want);
    }
  return bad;
}

static const int64_t ms[] = {1, 2, 13, 14, 15, 64, 257};
static const int64_t ns[] = {1, 10, 16, 31, 32, 33, 512, 515};
static const int64_t ks[] = {1, 7, 255, 256, 257, 784};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_matches_reference(void) {
  int cases = 0, failed = 0;
  for (size_t ik = 0; ik < COUNT(ks); ik++)
    for (size_t in = 0; in < COUNT(ns); in++)
      for (int tb = 0; tb < 2; tb++) {
        /* One packing per (k, n, tb) serves every row count, as a kernel's does. */
        tfd_gemm_packed *p = NULL;
        for (size_t im = 0; im < COUNT(ms); im++) {
          shape_case t;
          case_init(&t, ms[im], ns[in], ks[ik], tb);
          if (!p) {
            p = tfd_gemm_pack(t.B, ks[ik], ns[in], tb);
            CHECK(p != NULL);
            if (!p) {
              case_free(&t);
              break;
            }
            CHECK_INT(tfd_gemm_packed_k(p), ks[ik]);
            CHECK_INT(tfd_gemm_packed_n(p), ns[in]);
          }
          /* Every activation on the largest shapes would take long in sanitizer builds: the rows of
           * 257 run Relu (in registers) and Sigmoid (the row pass) only. */
          for (int act = TFD_ACT_NONE; act < TFD_ACT_COUNT; act++) {
            if (t.m == 257 && act != TFD_ACT_RELU && act != TFD_ACT_SIGMOID) continue;
            for (int bias = 0; bias < 2; bias++) {
              cases++;
              failed += check_run(&t, p, bias, (tfd_activation)act, 0.3f) > 0;
            }
          }
          case_free(&t);
        }
        tfd_gemm_packed_free(p);
      }
  if (failed) fprintf(stderr, "%d of %d products differ from the reference\n", failed, cases);
  CHECK_INT(failed, 0);
  CHECK(cases > 1000);
}

/* A NaN through Relu and Relu6 in registers stays NaN, as activation.c and TensorFlow keep it. */
static void test_relu_nan(void) {
  float B[16] = {1.0f}, A[2] = {NAN, 2.0f}, C[2 * 16], nan_in = NAN, want;
  tfd_gemm_packed *p = tfd_gemm_pack(B, 1, 16, false);
  CHECK(p != NULL);
  if (!p) return;
  for (int act = TFD_ACT_RELU; act <= TFD_ACT_RELU6; act++) {
    tfd_gemm_run(p, A, 1, 2, NULL, (tfd_activation)act, 0, C, 16);
    tfd_activation_f32((tfd_activation)act, &want, &nan_in, 1, 0);
    CHECK(isnan(want));
    for (int j = 0; j < 16; j++) CHECK(isnan(C[j]));
    CHECK(C[16] == 2.0f);
  }
  tfd_gemm_packed_free(p);
}

typedef struct shared_run {
  const shape_case *t;
  const tfd_gemm_packed *p;
  int bad;
} shared_run;

static void *run_shared(void *arg) {
  shared_run *r = arg;
  shape_case mine = *r->t; /* its own output buffer, the same inputs */
  mine.C = malloc((size_t)((mine.m + 1) * mine.ldc) * sizeof(float));
  for (int i = 0; i < 20; i++) r->bad += check_run(&mine, r->p, true, TFD_ACT_RELU, 0);
  free(mine.C);
  return NULL;
}

/* One packed matrix, two threads computing with it at once. */
static void test_shared_packing(void) {
  shape_case t;
  case_init(&t, 64, 200, 450, false);
  tfd_gemm_packed *p = tfd_gemm_pack(t.B, t.k, t.n, false);
  CHECK(p != NULL);
  if (p) {
    shared_run r[2] = {{&t, p, 0}, {&t, p, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) CHECK_INT(pthread_create(&th[i], NULL, run_shared, &r[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK_INT(r[0].bad + r[1].bad, 0);
  }
  tfd_gemm_packed_free(p);
  case_free(&t);
}

static void test_bad_sizes(void) {
  float B[4] = {0};
  CHECK(tfd_gemm_pack(B, 0, 4, false) == NULL);
  CHECK(tfd_gemm_pack(B, 4, 0, false) == NULL);
  tfd_gemm_packed_free(NULL);
}

/* Without AVX-512: not available, nothing packs, and a run with no packing does nothing. */
static void test_unavailable_contract(void) {
  if (tfd_gemm_available()) return;
  float B[4] = {1, 2, 3, 4}, A[2] = {1, 1}, C[2] = {CANARY, CANARY};
  CHECK(tfd_gemm_pack(B, 2, 2, false) == NULL);
  tfd_gemm_run(NULL, A, 2, 1, NULL, TFD_ACT_NONE, 0, C, 2);
  CHECK(C[0] == CANARY && C[1] == CANARY);
}

static const tfd_test tests[] = {
    {"matches_reference", test_matches_reference},
    {"relu_nan", test_relu_nan},
    {"shared_packing", test_shared_packing},
    {"bad_sizes", test_bad_sizes},
    {"unavailable_contract", test_unavailable_contract},
};

static const tfd_test contract_only[] = {
    {"unavailable_contract", test_unavailable_contract},
};

TFD_TEST_RUN_ALL(tests, static int run_all)
TFD_TEST_RUN_ALL(contract_only, static int run_contract)

int main(void) {
  if (tfd_gemm_available()) return run_all();
  printf("SKIP gemm_avx512: this CPU has no AVX-512F; checking only that the kernel says so\n");
  return run_contract();
}
