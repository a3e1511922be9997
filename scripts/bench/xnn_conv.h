/* float32 NHWC convolutions (regular and depthwise) on XNNPACK, filters packed once: a second
 * library beside oneDNN (dnnl_conv.h) so that the convolution kernel can pick, per layer shape,
 * whichever runs it faster (scripts/bench/conv_libs.c measures both).
 *
 * A tfd_xnn_conv belongs to one convolution kernel. For a constant filter it keeps, for the last
 * few input shapes it ran, an XNNPACK convolution operator holding the filter and bias packed in
 * its own layout, with Relu or Relu6 done by the operator's output clamp. A filter that is not
 * constant is packed again on every run. XNNPACK can fuse only clamps, so _new returns NULL for
 * other activations; built without XNNPACK, it always returns NULL and the kernel keeps its
 * other paths.
 *
 * Threads: a run with threads == 1 starts no thread. threads > 1 runs on a pthreadpool of exactly
 * that many threads (the caller's and threads - 1 workers), owned by the object, made on first
 * use and kept. Its workers sleep as soon as a run ends instead of spinning (XNNPACK's
 * XNN_FLAG_YIELD_WORKERS), so they take no core from the rest of the executor between runs: left
 * spinning (pthreadpool's default, some tens of milliseconds), they made oneDNN convolutions in the
 * same process some hundred times slower on two cores. The price is a wake-up per run (about
 * 20 us measured on a two-vCPU VM). */
#ifndef TFDEV_RUNTIME_XNN_CONV_H
#define TFDEV_RUNTIME_XNN_CONV_H

#include <stdbool.h>

#include "runtime/kernels/nn/activation.h"
#include "runtime/kernels/nn/dnnl_conv.h" /* the geometry struct only: one shape serves both libraries */
#include "tfdev/status.h"

typedef struct tfd_xnn_conv tfd_xnn_conv;

/* One run's geometry, the same struct as oneDNN's (see dnnl_conv.h): NHWC input, HWIO filter (for
 * depthwise [kh, kw, c, o / c]), strides, dilations (1: none), padding before and after. */
typedef tfd_dnnl_conv_shape tfd_xnn_conv_shape;

/* depthwise: the filter is [kh, kw, c, o / c]. act: TFD_ACT_NONE, TFD_ACT_RELU or TFD_ACT_RELU6
 * (NULL for the others). filter_constant: the filter's contents never change for a given filter
 * address, so it is packed once per (shape, filter address) and a later change of the buffer's
 * contents is not seen (as with tfd_dnnl_conv). The bias is packed too, but it is compared with
 * the packed copy on every run and, when it differs, packed again with the filter (read again
 * then: filter_constant promises it still holds what it held), so the bias need not be constant.
 * With no activation XNNPACK's clamp to [-inf, inf] turns a NaN output into -inf. NULL
 * when XNNPACK is not built in, cannot start, or cannot do the activation. The caller frees the
 * object with tfd_xnn_conv_free. */
tfd_xnn_conv *tfd_xnn_conv_new(bool depthwise, bool bias, tfd_activation act, bool filter_constant);
void tfd_xnn_conv_free(tfd_xnn_conv *p);

/* y = act(conv(x, filter) + bias) with `threads` threads (below 1: 1). bias is read only when the
 * object was made with bias. Thread-safe: calls on one object are serialised. x may be read up to
 * 16 bytes (XNN_EXTRA_BYTES) past its end, as XNNPACK's kernels do; when those bytes could lie on
 * another page (the only case where reading them could fault), x is first copied into a padded
 * buffer of the object's; otherwise the read is harmless, but valgrind reports it when x's block
 * does not hold those bytes (under valgrind XNNPACK picks SSE/AVX kernels, which read past the
 * last channels; its AVX-512 ones use masked loads). y is written only within its n*oh*ow*o
 * floats. Non-OK (its status set) when XNNPACK cannot do it or the geometry is inconsistent: the
 * caller falls back. */
tfd_code tfd_xnn_conv_run(tfd_xnn_conv *p, const tfd_xnn_conv_shape *s, const float *x, const float *filter,
                          const float *bias, float *y, int threads, tfd_status *status);

#endif
