/* The activation rows against libm and their definitions: the vectorised exp within 2 ulp of expf
 * wherever expf is normal (and its edges: 0 below, +inf above, NaN kept, in place and copying),
 * Prelu with short and long periods, LeakyRelu keeping NaN. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/kernels/nn/activation.h"
#include "runtime/testing/harness.h"

static int64_t ulps(float a, float b) {
  int32_t x, y;
  memcpy(&x, &a, sizeof x);
  memcpy(&y, &b, sizeof y);
  return llabs((long long)x - (long long)y);
}

static void test_exp(void) {
  enum { N = 1 << 20 };
  float *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
  for (int i = 0; i < N; i++) in[i] = -87.33f + 176.05f * (float)i / (float)N;
  tfd_exp_f32(out, in, N);
  int64_t worst = 0;
  for (int i = 0; i < N; i++) {
    float want = expf(in[i]);
    if (want >= 1.17549435e-38f && !isinf(want) && ulps(out[i], want) > worst) worst = ulps(out[i], want);
  }
  CHECK(worst <= 2);
  memcpy(out, in, N * sizeof *in); /* in place, across the 1024-element blocks */
  tfd_exp_f32(out, out, N);
  CHECK(ulps(out[N / 3], expf(in[N / 3])) <= 2 && ulps(out[N - 1], expf(in[N - 1])) <= 2);
  float edge[] = {-INFINITY, -200.0f, 0.0f, -0.0f, 1.0f, 88.72f, 89.0f, INFINITY, NAN};
  float got[9];
  tfd_exp_f32(got, edge, 9);
  CHECK(got[0] == 0 && got[1] == 0 && got[2] == 1 && got[3] == 1);
  CHECK(ulps(got[4], expf(1.0f)) <= 2 && ulps(got[5], expf(88.72f)) <= 2);
  CHECK(isinf(got[6]) && got[6] > 0 && isinf(got[7]) && got[7] > 0 && isnan(got[8]));
  free(in);
  free(out);
}

static void test_prelu_and_leaky(void) {
  float x[3000], alpha[7], y[3000], want;
  for (int i = 0; i < 7; i++) alpha[i] = 0.125f * (float)(i + 1);
  for (int i = 0; i < 3000; i++) x[i] = (float)((i * 37) % 23 - 11) / 4.0f;
  tfd_prelu_f32(y, x, alpha, 7, 3, 3000); /* a short period from a phase: laid out in a tile */
  for (int i = 0; i < 3000; i++) {
    want = x[i] > 0 ? x[i] : alpha[(3 + i) % 7] * x[i];
    if (y[i] != want) {
      CHECK(y[i] == want);
      break;
    }
  }
  static float big_alpha[3000];
  for (int i = 0; i < 3000; i++) big_alpha[i] = (float)i / 3000.0f;
  memcpy(y, x, sizeof x);
  tfd_prelu_f32(y, y, big_alpha, 3000, 100, 3000); /* a long period, in place, wrapping once */
  CHECK(y[0] == (x[0] > 0 ? x[0] : big_alpha[100] * x[0]));
  CHECK(y[2950] == (x[2950] > 0 ? x[2950] : big_alpha[50] * x[2950]));
  float v[3] = {NAN, -2.0f, 3.0f}, o[3];
  tfd_activation_f32(TFD_ACT_LEAKY_RELU, o, v, 3, 0.5f);
  CHECK(isnan(o[0]) && o[1] == -1.0f && o[2] == 3.0f);
  tfd_activation_f32(TFD_ACT_RELU, o, v, 3, 0);
  CHECK(isnan(o[0]) && o[1] == 0 && o[2] == 3.0f); /* TensorFlow's Relu keeps NaN (cwiseMax<PropagateNaN>) */
  tfd_activation_f32(TFD_ACT_RELU6, o, v, 3, 0);
  CHECK(isnan(o[0]) && o[1] == 0 && o[2] == 3.0f);
}

static const tfd_test tests[] = {
    {"exp", test_exp},
    {"prelu and leaky relu", test_prelu_and_leaky},
};

TFD_TEST_MAIN(tests)
