/* A 1x1 convolution with stride 1 and no padding (a "pointwise" layer) is a product of the image's
 * pixels, rows of c channels, by the filter, c x o; this computes it with what _FusedConv2D applies
 * after it (bias or batch norm, a residual addend, an activation or Prelu) done on the accumulators,
 * so each output value is stored once and nothing passes over the output again.
 *
 * Why it exists: in the mobile vision models tfdev runs (MediaPipe's facemesh and blazeface), a
 * block is depthwise conv -> pointwise conv + bias + residual add -> Prelu. oneDNN 2.6 takes no
 * Prelu post-op, so Prelu was a second pass over every block's output (12-23 us at 96x96x16 on a
 * Zen 4 core, a quarter of the convolution itself); here it costs a few vector operations per
 * stored vector. Numbers for the choice against oneDNN are in k_conv.c, which decides.
 *
 * AVX-512F, compiled per function whatever the build's flags and run only where
 * tfd_pointwise_available() says so; elsewhere tfd_pointwise_pack returns NULL and callers keep
 * their other path. */
#ifndef TFDEV_RUNTIME_POINTWISE_CONV_H
#define TFDEV_RUNTIME_POINTWISE_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "activation.h"

typedef struct tfd_pointwise tfd_pointwise;

/* What follows the product, in TensorFlow's order: bias (or the batch norm's per-channel
 * scale and shift, y = acc * scale + shift), then the addend, then Prelu or the activation. */
typedef struct tfd_pointwise_epilogue {
  const float *bias;          /* o values, or NULL */
  const float *scale, *shift; /* o values each (batch norm, used instead of bias), or NULL */
  const float *addend;        /* as many rows as the output, row stride o; may be the output itself; or NULL */
  const float *prelu;         /* o values, one slope per channel, or NULL */
  tfd_activation act;         /* applied when prelu is NULL */
  float alpha;                /* LeakyRelu's slope */
} tfd_pointwise_epilogue;

/* Whether this CPU runs the kernel (AVX-512F with the OS saving its registers; checked once). */
bool tfd_pointwise_available(void);

/* The filter, c x o row-major (a [1, 1, c, o] HWIO filter as it lies), packed for
 * tfd_pointwise_run; NULL when the kernel is not available, a size is out of range (c, o >= 1), or
 * memory runs out. The caller frees it with tfd_pointwise_free; filter is not referenced after. */
tfd_pointwise *tfd_pointwise_pack(const float *filter, int64_t c, int64_t o);
void tfd_pointwise_free(tfd_pointwise *p);

/* Output rows [r0, r1): y[r] = epilogue(x[r] W) for x rows of c floats and y rows of o floats (both
 * counted from row 0 of x and y). Reads p only, so threads may run disjoint row ranges at once. */
void tfd_pointwise_run(const tfd_pointwise *p, const float *x, int64_t r0, int64_t r1, const tfd_pointwise_epilogue *e,
                       float *y);

/* Rows per block: tfd_pointwise_run over ranges that start at multiples of this splits the work
 * the way the kernel tiles it (callers parallelise over blocks). */
#define TFD_POINTWISE_BLOCK_ROWS 96

#endif
