/* What the device kernels (dk_*.c) share: the host work every one of them does around the device's
 * math (device_math.h) — finding the math, allocating outputs in the memory their dtype lives in,
 * moving tensors between memories, building strided walks — and the host fallback that runs
 * the CPU kernel on host copies (TensorFlow's int32 GPU kernels, and dtypes the math lacks). */
#ifndef TFDEV_RUNTIME_DEVICE_KERNEL_H
#define TFDEV_RUNTIME_DEVICE_KERNEL_H

#include "../core/status_internal.h"
#include "../ops/op_registry.h"
#include "device_math.h"
#include "kernel.h"

/* The device's math; NULL, with INTERNAL reported against the node naming the device, when it has
 * none (a backend that only moves data). */
const tfd_device_math *tfd_dk_math(const tfd_kernel *k, tfd_kernel_context *c);

/* True when code is TFD_OK; else reports st's error against the node, clears st, and is false. */
bool tfd_dk_ok(const tfd_kernel *k, tfd_kernel_context *c, tfd_code code, tfd_status *st);

/* A new output in the memory dt lives in on the device (tfd_kernel_memory_for: device memory, int32
 * on the host); NULL with the error reported. */
tfd_tensor *tfd_dk_alloc(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int nd);
/* A temporary in the device's own memory whatever its dtype: where the math writes an int32 result
 * before it is copied to the host. */
tfd_tensor *tfd_dk_alloc_device(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int nd);
/* A device-memory scalar of dt holding `value` (elem bytes of host memory), for composing entries. */
tfd_tensor *tfd_dk_scalar(tfd_kernel_context *c, const tfd_kernel *k, const tfd_device_math *m, tfd_dtype dt,
                          const void *value);

/* y = LeakyRelu(x) for float64 x with alpha a double, as the CPU kernel computes it (the math's
 * unary takes its alpha as a float): x > 0 ? x : alpha * x as a binary PRELU against a scalar. */
bool tfd_dk_leaky_relu_f64(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, const tfd_tensor *x,
                           tfd_tensor *y, double alpha);

/* y = op(a, b) over n elements of dtype (b one element, read with stride 0, when b_scalar), and y[i] =
 * x[i * x_stride] over n elements of es bytes (x_stride 0 spreads one element): the contiguous walks
 * the device kernels compose with. False with the error reported; n 0 does nothing. */
bool tfd_dk_binary_flat(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, tfd_dm_binary op, tfd_dtype dtype,
                        const void *a, const void *b, bool b_scalar, void *y, int64_t n);
bool tfd_dk_copy_flat(const tfd_kernel *k, tfd_kernel_context *c, const tfd_device_math *m, size_t es, const void *x,
                      int64_t x_stride, void *y, int64_t n);

/* t in the memory `to` (a new reference: t itself when it is there already). NULL, reported. */
tfd_tensor *tfd_dk_move(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t, tfd_allocator *to);
/* t in the memory its dtype lives in on the device (a result computed elsewhere). */
tfd_tensor *tfd_dk_to_home(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t);
/* n int64s of host memory (a plan's rows or indices) in a new tensor in the device's own memory. */
tfd_tensor *tfd_dk_int64s_to_device(tfd_kernel_context *c, const tfd_kernel *k, const int64_t *v, int64_t n);
/* t (a host tensor) copied into the device's own memory (indices the math reads). */
tfd_tensor *tfd_dk_to_device(tfd_kernel_context *c, const tfd_kernel *k, tfd_tensor *t);

/* Sets k up to run the CPU kernel (cpu_setup's) on host copies of its inputs, its outputs moved to
 * the memory their dtypes live in on the device: ops whose T lives on the host (int32) and dtypes
 * the device math does not implement. k->host_inputs is then UINT32_MAX (every input, however
 * many); a caller may narrow it (0: the CPU kernel reads no input's elements, as Shape). */
tfd_code tfd_dk_setup_on_host(tfd_kernel *k, const tfd_kernel_init *init, tfd_kernel_setup_fn cpu_setup,
                              tfd_status *st);
/* Runs k->host_compute (the CPU kernel, set up beside a device compute) on host copies of every input,
 * its outputs moved where their dtypes live: a device kernel's way out for what it does not do. */
void tfd_dk_run_on_host(tfd_kernel *k, tfd_kernel_context *c);
/* Sets k up to run the CPU kernel with the inputs in `mask` (bit i: input i) read on the host and the
 * others left where they are: kernels that only read shapes, or make views (ExpandDims, Shape). */
tfd_code tfd_dk_setup_host_inputs(tfd_kernel *k, const tfd_kernel_init *init, tfd_kernel_setup_fn cpu_setup,
                                  uint32_t mask, tfd_status *st);

/* Sets k up with cpu_setup's attributes to run `compute` on the device when on_device, else (a dtype
 * that lives on the host, or that the device math does not take) the CPU kernel on the host. Either
 * way the CPU kernel stays k's host fallback: `compute` may hand a case it does not take (malformed
 * inputs, for the CPU's texts) to tfd_dk_run_on_host. */
tfd_code tfd_dk_setup_either(tfd_kernel *k, const tfd_kernel_init *init, tfd_kernel_setup_fn cpu_setup, bool on_device,
                             void (*compute)(tfd_kernel *, tfd_kernel_context *), tfd_status *st);

/* Fills w for an output of dims[nd] read by nops operands at strides[op][d] (elements; 0 broadcasts)
 * from offsets[op]: dimensions of size 1 are dropped and neighbours every operand walks alike are
 * merged, so the math sees few dimensions. Returns the output's element count (0: nothing to do). */
int64_t tfd_dk_walk(tfd_dm_walk *w, int nd, const int64_t *dims, int nops, const int64_t strides[][TFD_MAX_DIMS],
                    const int64_t *offsets);
/* Row-major element strides of dims[nd]. */
void tfd_dk_strides(int nd, const int64_t *dims, int64_t *strides);
/* Element strides of a tensor of shape s read broadcast into an output of shape out (0 along the
 * dimensions it broadcasts, and those it lacks). */
void tfd_dk_broadcast_strides(const tfd_shape *s, const tfd_shape *out, int64_t *strides);
/* Whether tensors of dt live in the device's own memory on d (else on the host: int32, handles). */
bool tfd_dk_lives_on_device(tfd_device *d, tfd_dtype dt);
/* Whether the device math handles dt for an arithmetic op (float32, float64, int64); int32 lives on
 * the host and runs the CPU kernel there, others (float16, uint8) too. */
bool tfd_dk_arith_dtype(tfd_dtype dt);

/* Setups of the device-kernel families (one file each). */
tfd_code tfd_dk_setup_cwise(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_fake_quant(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_reduce(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_shape(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_scatter(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_sparse_to_dense(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_conv3d(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_where(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_sparse_segment(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_bincount(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_search_sorted(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_einsum(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_conv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_lrn(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_window_max(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_image(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_crop_and_resize(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_image_transform(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_state(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_spectral(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_unique(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_nms(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_metadata(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_ragged(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);
tfd_code tfd_dk_setup_sparse_fill(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *st);

#endif
