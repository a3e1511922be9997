/* Activations shared by the elementwise kernels and the fused MatMul epilogue.
 *
 * One place computes Relu, Relu6, Elu, LeakyRelu, Tanh and Sigmoid, so a
 * fused node gives bit-for-bit what the unfused chain gives. Each row
 * function reads a[0..n) and writes o[0..n); o may equal a. They are written
 * branch-free so that they vectorise at any optimisation level that
 * vectorises at all, and do not fall to compare-and-branch at -O2. */
#ifndef TFDEV_RUNTIME_ACTIVATION_H
#define TFDEV_RUNTIME_ACTIVATION_H

#include <stdint.h>

typedef enum tfd_activation {
  TFD_ACT_NONE,
  TFD_ACT_RELU,
  TFD_ACT_RELU6,
  TFD_ACT_ELU,
  TFD_ACT_LEAKY_RELU,
  TFD_ACT_TANH,
  TFD_ACT_SIGMOID,
  TFD_ACT_COUNT
} tfd_activation;

/* The activation an op name stands for ("Relu", "Relu6", "Elu", "LeakyRelu",
 * "Tanh", "Sigmoid"), or TFD_ACT_NONE. */
tfd_activation tfd_activation_of_op(const char *op);

/* o[i] = act(a[i]); alpha is LeakyRelu's slope (ignored by the others). */
void tfd_activation_f32(tfd_activation act, float *o, const float *a, int64_t n, float alpha);
void tfd_activation_f64(tfd_activation act, double *o, const double *a, int64_t n, double alpha);

/* o[i] = exp(a[i]) for float32, o may equal a: Cephes' polynomial after range reduction, written
 * with selects and integer bit work only so the loop vectorises (expf is a call per element). Within
 * 2 ulp of expf where expf is a normal float; below -87.34 (FLT_MIN's log) it gives 0 rather than a
 * subnormal, above 88.72 +inf; NaN stays NaN. */
void tfd_exp_f32(float *o, const float *a, int64_t n);

/* Prelu with a periodic alpha: o[i] = a[i] > 0 ? a[i] : alpha[(phase + i) % period] * a[i] for
 * i < n (period >= 1, 0 <= phase < period); o may equal a. */
void tfd_prelu_f32(float *o, const float *a, const float *alpha, int64_t period, int64_t phase, int64_t n);

#endif
