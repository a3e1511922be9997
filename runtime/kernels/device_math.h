/* The arithmetic a device whose memory the host cannot touch (a GPU) offers the runtime's device
 * kernels: what TensorFlow splits into an OpKernel (host work, written once) and a functor per device
 * (the loops), and ggml into a backend's ops table.
 *
 * The device kernels (runtime/kernels/dk_*.c, registered for a device type by
 * tfd_kernel_register_device_kernels) do every piece of host work once for all such devices: they read
 * attributes, check inputs and name what is wrong, work out shapes, broadcasting strides and
 * windows, read shape-like inputs on the host, allocate outputs from the device's allocator, and
 * only then call one of the entries below with device pointers and plain parameters. A backend module
 * fills a tfd_device_math and points its devices at it (tfd_device.math). The CUDA module's entries
 * (gpu/kernels/) launch kernels on the device's compute stream; the test suite's fake GPU
 * (runtime/testing/fake_gpu_math.c) runs the same per-element code (device_math_elem.h) in plain C
 * loops over its inverted memory, so CI runs every device kernel's host side without a GPU.
 *
 * Contract of every entry:
 * - d is the device; every pointer named "device" points into its memory (from its allocator, or
 *   an offset into such a block), every other pointer and array is host memory the caller keeps
 *   only for the duration of the call (an entry that needs it later copies it).
 * - Work is queued, not finished: it runs in submission order with all other work of the device
 *   (TensorFlow's one compute stream per device), so a kernel may free or reuse its inputs after
 *   the call and the device's allocator hands memory out in the same order. The device's copies to
 *   and from the host (allocator copies) order themselves after queued work.
 * - Sizes are in elements unless named bytes; every count may be 0 (nothing is queued then);
 *   strides are in elements and may be 0 (broadcast) or negative (reversed).
 * - The return is TFD_OK, or an error with status set naming the device and what failed (a launch
 *   or library failure); data-dependent faults cannot be reported per element: an index out of range
 *   gives 0, as TensorFlow's GPU kernels do, and the device kernel checks what it can on the host
 *   first.
 * - dtype support: every entry takes float32; float64 where the CPU kernel has it; integer and bool
 *   where noted. An entry given a dtype it does not implement returns UNIMPLEMENTED naming it (the
 *   device kernel then reports it against the node). */
#ifndef TFDEV_RUNTIME_DEVICE_MATH_H
#define TFDEV_RUNTIME_DEVICE_MATH_H

#include <stdbool.h>
#include <stdint.h>

#include "nn/activation.h"
#include "tfdev/status.h"
#include "tfdev/tensor.h"

struct tfd_device;

/* ---- elementwise ---- */
typedef enum tfd_dm_unary {
  TFD_DM_NEG,
  TFD_DM_ABS,
  TFD_DM_SQUARE,
  TFD_DM_EXP,
  TFD_DM_LOG,
  TFD_DM_SQRT,
  TFD_DM_RSQRT,
  TFD_DM_RECIPROCAL,
  TFD_DM_RELU,
  TFD_DM_RELU6,
  TFD_DM_ELU,
  TFD_DM_SELU,
  TFD_DM_SOFTPLUS,
  TFD_DM_LEAKY_RELU, /* alpha */
  TFD_DM_SIGMOID,
  TFD_DM_TANH,
  TFD_DM_FLOOR,
  TFD_DM_CEIL,
  TFD_DM_SIN,
  TFD_DM_COS,
  /* issue 26's math family (k_math.c): floats */
  TFD_DM_ACOS,
  TFD_DM_ACOSH,
  TFD_DM_ASIN,
  TFD_DM_ASINH,
  TFD_DM_ATAN,
  TFD_DM_ATANH,
  TFD_DM_COSH,
  TFD_DM_SINH,
  TFD_DM_TAN,
  TFD_DM_ERF,
  TFD_DM_EXPM1,
  TFD_DM_LOG1P,
  TFD_DM_ROUND, /* half to even; integers pass through */
  TFD_DM_SIGN,  /* NaN stays NaN, -0 gives +0 */
  TFD_DM_LOGICAL_NOT, /* bool */
  TFD_DM_UNARY_COUNT
} tfd_dm_unary;

typedef enum tfd_dm_binary {
  TFD_DM_ADD,
  TFD_DM_SUB,
  TFD_DM_MUL,
  TFD_DM_DIV, /* RealDiv; integer division truncates, as TensorFlow's Div */
  TFD_DM_MAXIMUM,
  TFD_DM_MINIMUM,
  TFD_DM_POW,
  TFD_DM_SQUARED_DIFFERENCE,
  TFD_DM_FLOOR_DIV,
  TFD_DM_FLOOR_MOD,
  TFD_DM_PRELU, /* a > 0 ? a : b * a (b: alpha) */
  TFD_DM_DIV_NO_NAN,  /* floats: 0 where b is 0 */
  TFD_DM_MOD,         /* the truncated remainder (fmod, C's %) */
  TFD_DM_BITWISE_AND, /* integers */
  TFD_DM_CLIP_MIN,    /* std::min(a, b): b < a ? b : a (ClipByValue keeps a NaN a) */
  TFD_DM_CLIP_MAX,    /* std::max(a, b): a < b ? b : a */
  TFD_DM_ATAN2,       /* floats: atan2(a, b) */
  /* bool out */
  TFD_DM_EQUAL,
  TFD_DM_NOT_EQUAL,
  TFD_DM_LESS,
  TFD_DM_LESS_EQUAL,
  TFD_DM_GREATER,
  TFD_DM_GREATER_EQUAL,
  /* bool in, bool out */
  TFD_DM_LOGICAL_AND,
  TFD_DM_LOGICAL_OR,
  TFD_DM_BINARY_COUNT
} tfd_dm_binary;

/* An n-dimensional walk over an output of `dims` (row-major, contiguous) reading each operand at
 * offset + sum(index[i] * stride[i]): numpy broadcasting (stride 0), transposes, slices with steps
 * (negative strides walk backwards). Device kernels merge dimensions first, so nd is small. */
#define TFD_DM_MAX_OPERANDS 3
typedef struct tfd_dm_walk {
  int nd; /* 0 (one element) to TFD_MAX_DIMS */
  int64_t dims[TFD_MAX_DIMS];
  int64_t strides[TFD_DM_MAX_OPERANDS][TFD_MAX_DIMS]; /* per operand, in its elements */
  int64_t offsets[TFD_DM_MAX_OPERANDS];               /* per operand, in its elements */
} tfd_dm_walk;

/* ---- reductions, products, convolutions, images ---- */
typedef enum tfd_dm_reduce { TFD_DM_SUM, TFD_DM_MEAN, TFD_DM_MAX, TFD_DM_MIN, TFD_DM_PROD, TFD_DM_REDUCE_COUNT } tfd_dm_reduce;

/* C = act(op(A) op(B) + bias) per batch; A is [m, k] (or [k, m] transposed), B [k, n] ([n, k]), C
 * [m, n], all row-major and dense. Batch b reads A at a + a_offsets[b], B at b + b_offsets[b] and
 * writes C at c + b * m * n (BatchMatMulV2's broadcast batches become offsets); offsets NULL means
 * b * m * k and b * k * n. */
typedef struct tfd_dm_matmul {
  tfd_dtype dtype;
  const void *a, *b; /* device */
  void *c;           /* device */
  int64_t m, n, k, batch;
  bool transpose_a, transpose_b;
  const int64_t *a_offsets, *b_offsets; /* host, batch entries each, or NULL */
  const void *bias;                     /* device, n values, or NULL */
  tfd_activation act;
  float alpha; /* LeakyRelu's slope */
} tfd_dm_matmul;

/* A 2-D convolution, NHWC, with what _FusedConv2D applies after it, in TensorFlow's order: bias or
 * the batch norm's scale and shift (y = conv * scale + shift), the addend, then Prelu or act. */
typedef struct tfd_dm_conv {
  tfd_dtype dtype;
  const void *x;      /* device [n, h, w, c] */
  const void *filter; /* device [kh, kw, c, o] (HWIO), or depthwise [kh, kw, c, m] with o = c * m */
  void *y;            /* device [n, oh, ow, o] */
  int64_t n, h, w, c, kh, kw, o, oh, ow;
  int64_t stride[2], dilation[2]; /* height, width; dilation 1 is none */
  int64_t pad_before[2], pad_after[2];
  bool depthwise;
  /* Conv2DBackpropInput: y is the input gradient [n, h, w, c] from x = out_backprop [n, oh, ow, o]
   * and the same filter; the epilogue fields are then unused, and every element of y is written (0
   * where no output position reads it). */
  bool backprop_input;
  const void *bias;          /* device, o values, or NULL */
  const void *scale, *shift; /* device, o values each, or NULL */
  const void *addend;        /* device, like y (may be y itself), or NULL */
  const void *prelu;         /* device, prelu_n values repeating over y's trailing dimensions, or NULL */
  int64_t prelu_n;
  tfd_activation act;
  float alpha;
  /* NULL, or, for a filter the optimiser marked constant, a slot of the kernel's (starting NULL) where
   * the math may keep its own layout of the filter, made once and used on every later call (the
   * values of a constant never change); the kernel hands what the slot holds to release_packed when
   * it goes. Calls that share a slot must not run at once (the math serialises its convolutions on a
   * device). */
  void **packed_filter;
} tfd_dm_conv;

typedef struct tfd_dm_pool {
  tfd_dtype dtype;
  bool max; /* else average over the window's in-image elements */
  const void *x; /* device [n, h, w, c] */
  void *y;       /* device [n, oh, ow, c] */
  int64_t n, h, w, c, kh, kw, oh, ow;
  int64_t stride[2], pad_before[2];
} tfd_dm_pool;

/* Dilation2D (filter set) and MaxPoolWithArgmax (argmax set), NHWC, k_dilation.c's loops: for
 * output pixel (b, oy, ox) the taps (i, j) at input (oy * stride[0] - pad_before[0] + i * rate[0],
 * ox * stride[1] - pad_before[1] + j * rate[1]) that lie inside the image. Dilation2D: the maximum
 * of x + filter[i, j, c] (the dtype's add), from the dtype's lowest value. MaxPoolWithArgmax: the
 * first in-bounds element, replaced only by a strictly greater one, and its flat index ((b * h + y)
 * * w + x) * c + ch (b only when with_batch). float32, float64, int64. */
typedef struct tfd_dm_window_max {
  tfd_dtype dtype;
  const void *x;      /* device [n, h, w, c] */
  const void *filter; /* device [kh, kw, c], or NULL */
  void *y;            /* device [n, oh, ow, c] */
  int64_t *argmax;    /* device int64 [n, oh, ow, c], or NULL */
  int64_t n, h, w, c, kh, kw, oh, ow;
  int64_t stride[2], rate[2], pad_before[2];
  bool with_batch;
} tfd_dm_window_max;

/* CropAndResize, k_crop_and_resize.c's sampling in float: box b of image box_ind[b] on a crop_h x
 * crop_w grid, bilinear or nearest, extrapolation outside the image; image float32, float64 or int64
 * (read as float), y float32. */
typedef struct tfd_dm_crop {
  tfd_dtype dtype;
  const void *image;      /* device [batch, h, w, depth] */
  const float *boxes;     /* device [n, 4]: y1, x1, y2, x2 */
  const int32_t *box_ind; /* device [n], checked in [0, batch) */
  float *y;               /* device [n, crop_h, crop_w, depth] */
  int64_t n, h, w, depth, crop_h, crop_w;
  bool nearest;
  float extrapolation;
} tfd_dm_crop;

/* ImageProjectiveTransformV3, k_image_transform.c's sampling (device_math_elem.h's
 * tfd_dm_transform_point): nearest pixels copied, bilinear blends in float cast back to the dtype; a
 * pixel outside the image (or a zero projection) reads (dtype) fill. float32, float64, int64. */
typedef struct tfd_dm_transform {
  tfd_dtype dtype;
  const void *images;      /* device [n, h, w, c] */
  const float *transforms; /* device [n, 8], or [1, 8] when one_transform */
  bool one_transform;
  void *y; /* device [n, oh, ow, c] */
  int64_t n, h, w, c, oh, ow;
  bool bilinear;
  int mode; /* TFD_DM_FILL_* */
  float fill;
} tfd_dm_transform;

typedef struct tfd_dm_resize {
  tfd_dtype in_dtype, out_dtype; /* ResizeBilinear makes float32 from any real dtype */
  bool bilinear;                 /* else nearest neighbour */
  bool align_corners, half_pixel_centers;
  const void *x; /* device [n, h, w, c] */
  void *y;       /* device [n, oh, ow, c] */
  int64_t n, h, w, c, oh, ow;
} tfd_dm_resize;

typedef struct tfd_device_math {
  const char *name; /* for messages: "cuda", "fakegpu" */

  /* y[i] = op(x[i]) over n elements (bool for LOGICAL_NOT; float32/float64 for the rest, and
   * int32/int64 for NEG, ABS, SQUARE, SIGN, ROUND). */
  tfd_code (*unary)(struct tfd_device *d, tfd_dm_unary op, tfd_dtype dtype, const void *x, void *y, int64_t n,
                    float alpha, tfd_status *status);
  /* y = op(a, b) over w (operands 0 and 1; y contiguous, its dtype bool for comparisons and logic).
   * Numbers: float32, float64, int32, int64 (integer arithmetic wraps; FLOOR_DIV/FLOOR_MOD/MOD by zero
   * give 0, the device kernel having refused them when it could see them; DIV_NO_NAN takes floats,
   * BITWISE_AND integers). dtype TFD_BOOL: EQUAL,
   * NOT_EQUAL, LOGICAL_AND and LOGICAL_OR (TFD_DM_COMPARE). y may be a or b itself when that operand
   * walks contiguously (the device kernels write over an input nobody else reads). */
  tfd_code (*binary)(struct tfd_device *d, tfd_dm_binary op, tfd_dtype dtype, const void *a, const void *b, void *y,
                     const tfd_dm_walk *w, tfd_status *status);
  /* y = cond ? a : b over w (operands 0 cond (bool), 1 a, 2 b); any dtype by element size. */
  tfd_code (*select)(struct tfd_device *d, size_t elem_bytes, const void *cond, const void *a, const void *b, void *y,
                     const tfd_dm_walk *w, tfd_status *status);
  /* y[i] = (to) x[i] with TensorFlow's Cast rules (float to int truncates and saturates as the CPU
   * kernel does, bool is x != 0, float16 rounds to nearest even); every dtype the CPU Cast takes. */
  tfd_code (*cast)(struct tfd_device *d, tfd_dtype from, tfd_dtype to, const void *x, void *y, int64_t n,
                   tfd_status *status);
  /* y = sum of the n inputs (AddN), each of count elements. */
  tfd_code (*add_n)(struct tfd_device *d, tfd_dtype dtype, const void *const *inputs, int n, void *y, int64_t count,
                    tfd_status *status);

  /* ---- data movement ---- */
  /* Element-size copies over w: y (operand 1: its strides and offset place each element, so a
   * concatenation writes its part of a larger output) from x (operand 0). */
  tfd_code (*copy_walk)(struct tfd_device *d, size_t elem_bytes, const void *x, void *y, const tfd_dm_walk *w,
                        tfd_status *status);
  /* y[i] = value (elem_bytes of host memory) for i < n. */
  tfd_code (*fill)(struct tfd_device *d, size_t elem_bytes, const void *value, void *y, int64_t n,
                   tfd_status *status);
  /* y[i] = start + i * delta (Range), float32/float64/int64. */
  tfd_code (*range)(struct tfd_device *d, tfd_dtype dtype, double start, double delta, void *y, int64_t n,
                    tfd_status *status);
  /* Tile: y [out_dims] from x [in_dims], y[i...] = x[i % in_dims...]. */
  tfd_code (*tile)(struct tfd_device *d, size_t elem_bytes, const void *x, const int64_t *in_dims,
                   const int64_t *out_dims, int nd, void *y, tfd_status *status);
  /* MirrorPad: y [in_dims + before + after] reflecting (REFLECT: not the edge, SYMMETRIC: with it). */
  tfd_code (*mirror_pad)(struct tfd_device *d, size_t elem_bytes, const void *x, const int64_t *in_dims, int nd,
                         const int64_t *before, bool symmetric, void *y, const int64_t *out_dims, tfd_status *status);
  /* GatherV2: for batch in [0, batches), r in [0, outer), i in [0, per): y row = x row
   * ((batch * outer + r) * limit + idx[batch * per + i]), rows of inner_bytes; idx int32 or int64
   * (device). An index outside [0, limit) gives a row of zeros. */
  tfd_code (*gather)(struct tfd_device *d, const void *x, const void *idx, tfd_dtype idx_dtype, int64_t batches,
                     int64_t outer, int64_t limit, int64_t per, size_t inner_bytes, void *y, tfd_status *status);
  /* ScatterNd and TensorScatterUpdate: x's row u (row elements of dtype) into y's row slots[u]
   * (int64, device memory, checked in range by the device kernel) for u in [0, n). add: summed into
   * y (float32, float64, int64; repeated rows sum in an unspecified order on a real GPU, as
   * TensorFlow's atomic adds do); else written by element size (of repeated rows one update wins,
   * unspecified which, as on TensorFlow's GPUs). */
  tfd_code (*scatter_rows)(struct tfd_device *d, bool add, tfd_dtype dtype, size_t elem_bytes, const void *x,
                           const int64_t *slots, int64_t n, int64_t row, void *y, tfd_status *status);
  /* GatherNd: x of x_dims (nd), idx [count, depth] int32/int64 (device), y [count] rows of the
   * x_dims[depth..] slice (slice_bytes each); an index tuple out of range gives zeros. */
  tfd_code (*gather_nd)(struct tfd_device *d, const void *x, const int64_t *x_dims, int nd, const void *idx,
                        tfd_dtype idx_dtype, int64_t count, int depth, size_t slice_bytes, void *y, tfd_status *status);

  /* ---- reductions ---- */
  /* x viewed as [outer, n, inner]; y [outer, inner] = op over the middle axis (MEAN divides by n;
   * an empty axis gives the op's identity, MEAN NaN). float32, float64, int32, int64 (not MEAN).
   * The device kernels ask for MEAN of floats only, never over an empty axis (the CPU's empty mean
   * is 0: they ask for SUM), and compose an integer mean from SUM and DIV. */
  tfd_code (*reduce)(struct tfd_device *d, tfd_dm_reduce op, tfd_dtype dtype, const void *x, int64_t outer,
                     int64_t n, int64_t inner, void *y, tfd_status *status);
  /* ArgMax/ArgMin over the middle axis of [outer, n, inner] (n >= 1), the first index of the
   * extreme; y int32 or int64. */
  tfd_code (*arg_reduce)(struct tfd_device *d, bool is_min, tfd_dtype dtype, const void *x, int64_t outer, int64_t n,
                         int64_t inner, tfd_dtype out_dtype, void *y, tfd_status *status);
  /* Cumsum (prod false) or Cumprod of x viewed as [outer, n, inner] along its middle axis into y (the
   * same shape): y[o, j, i] accumulates x[o, 0..j, i] (exclusive: 0..j-1, the first the identity;
   * reverse: from the end), one element after another in the element's dtype, as the CPU kernel
   * does (integers wrap). float32, float64, int64. */
  tfd_code (*scan)(struct tfd_device *d, bool prod, bool exclusive, bool reverse, tfd_dtype dtype, const void *x,
                   int64_t outer, int64_t n, int64_t inner, void *y, tfd_status *status);
  /* Softmax (or LogSoftmax) of each row of x [rows, cols] into y. */
  tfd_code (*softmax)(struct tfd_device *d, tfd_dtype dtype, const void *x, int64_t rows, int64_t cols, bool log,
                      void *y, tfd_status *status);
  /* TopKV2 (sorted, ties to the lower index) of each row of x [rows, cols]: values [rows, k], indices
   * [rows, k] int32/int64. */
  tfd_code (*top_k)(struct tfd_device *d, tfd_dtype dtype, const void *x, int64_t rows, int64_t cols, int64_t k,
                    void *values, tfd_dtype idx_dtype, void *indices, tfd_status *status);
  /* FusedBatchNorm inference over x [rows, c]: y = (x - mean) * scale / sqrt(variance + epsilon) +
   * offset, in the CPU kernel's order (x - mean) * tfd_dm_batch_norm_factor(scale, variance, epsilon)
   * + offset. float32. */
  tfd_code (*batch_norm)(struct tfd_device *d, tfd_dtype dtype, const void *x, const void *scale, const void *offset,
                         const void *mean, const void *variance, float epsilon, int64_t rows, int64_t c, void *y,
                         tfd_status *status);

  /* TruncatedNormal (truncated; float32, float64) or RandomUniformInt (int64 in [lo, lo + range)):
   * element i from its own sub-stream of seed at counter block base, device_math_elem.h's
   * tfd_dm_truncated_normal and tfd_dm_uniform_int, so the CPU kernels' numbers. */
  tfd_code (*random_ext)(struct tfd_device *d, bool truncated, tfd_dtype dtype, uint64_t seed, uint64_t base, int64_t lo,
                         uint64_t range, void *y, int64_t n, tfd_status *status);

  /* ---- searches ---- */
  /* LowerBound (upper false) and UpperBound: for each row r < rows and value j < m, y[r * m + j] = the
   * first position of sorted row r (n elements) whose element is not less than (upper: greater than)
   * values[r * m + j], by binary search as std::lower_bound/upper_bound; float32, float64, int64; y
   * int32 or int64 (device memory). */
  tfd_code (*search_sorted)(struct tfd_device *d, bool upper, tfd_dtype dtype, const void *sorted, const void *values,
                            int64_t rows, int64_t n, int64_t m, tfd_dtype out_dtype, void *y, tfd_status *status);

  /* Multinomial: y[r * samples + s] (int32 or int64) = the first class whose running mass
   * sum_{j' <= j} exp(logit - max) (in double, finite logits only) exceeds u * the row's mass, u the
   * unit draw of tfd_dm_element_seed(seed, base, r * samples + s); the last class if none does, as
   * k_random_ext.c's kernel. logits float32 or float64. */
  tfd_code (*multinomial)(struct tfd_device *d, tfd_dtype dtype, const void *logits, int64_t rows, int64_t classes,
                          int64_t samples, uint64_t seed, uint64_t base, tfd_dtype out_dtype, void *y, tfd_status *status);

  /* ---- products, convolutions, images ---- */
  tfd_code (*matmul)(struct tfd_device *d, const tfd_dm_matmul *p, tfd_status *status);
  tfd_code (*conv2d)(struct tfd_device *d, const tfd_dm_conv *p, tfd_status *status);
  /* Frees what conv2d left in a tfd_dm_conv's packed_filter slot (never NULL). NULL on a math that
   * keeps nothing there: its kernels then pass no slot. */
  void (*release_packed)(struct tfd_device *d, void *packed);
  tfd_code (*pool)(struct tfd_device *d, const tfd_dm_pool *p, tfd_status *status);
  tfd_code (*resize)(struct tfd_device *d, const tfd_dm_resize *p, tfd_status *status);
  tfd_code (*window_max)(struct tfd_device *d, const tfd_dm_window_max *p, tfd_status *status);
  tfd_code (*crop_and_resize)(struct tfd_device *d, const tfd_dm_crop *p, tfd_status *status);
  tfd_code (*image_transform)(struct tfd_device *d, const tfd_dm_transform *p, tfd_status *status);

  /* ---- random numbers ---- */
  /* The CPU kernels' counter-based streams (k_random.c): element i of a uniform draw is
   * unit(mix(seed ^ mix(counter + i))), of a normal draw Box-Muller on counters counter + 2i and
   * counter + 2i + 1; float32 or float64. The same seed and counter give the same numbers as the CPU. */
  tfd_code (*random)(struct tfd_device *d, bool normal, tfd_dtype dtype, uint64_t seed, uint64_t counter, void *y,
                     int64_t n, tfd_status *status);

  /* ---- step graphs (CUDA graphs): NULL, all four, on a device that has none ----
   * Between capture_begin and capture_end, on the calling thread only (other threads' work on the
   * device runs as usual):
   * - every entry it calls on d is recorded into a graph, not run;
   * - device memory it frees on d is kept, not reused, until graph_free (the graph writes it each
   *   time it is launched); the caller keeps the graph's inputs and outputs alive itself;
   * - copies of d's memory to the host fail with FAILED_PRECONDITION (their bytes are not computed
   *   yet); copies to d go ahead at once, and the graph reads what they wrote.
   * capture_end(abandon = false) makes the graph (*graph, owned by the caller until graph_free), or
   * fails, and then, like abandon = true, makes none and gives back the memory kept. graph_launch
   * queues the whole graph as one piece of work, in submission order with the rest. */
  tfd_code (*capture_begin)(struct tfd_device *d, tfd_status *status);
  tfd_code (*capture_end)(struct tfd_device *d, bool abandon, void **graph, tfd_status *status);
  tfd_code (*graph_launch)(struct tfd_device *d, void *graph, tfd_status *status);
  void (*graph_free)(struct tfd_device *d, void *graph);
} tfd_device_math;

#endif
