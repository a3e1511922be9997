/* Kernels: what a node runs on a device, and the context a run gives it.
 *
 * A kernel is created once per (node, device) from the node's attributes,
 * then run once per step with a context holding its inputs, where to put
 * its outputs, the device's allocator and pools, the step's rendezvous and
 * call frame. Kernels report errors through the context's status, prefixed
 * with the node's name and op. The kernel registry is keyed by (op, device
 * type): a device type with no kernel for an op is never chosen for it. */
#ifndef TFDEV_RUNTIME_KERNEL_H
#define TFDEV_RUNTIME_KERNEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "../device/device_internal.h"
#include "../ops/op_registry.h"
#include "tfdev/custom_op.h"
#include "tfdev/tfdev.h"

typedef struct tfd_rendezvous tfd_rendezvous;
typedef struct tfd_caller_queue tfd_caller_queue;
typedef struct tfd_cancellation tfd_cancellation;
typedef struct tfd_session_state tfd_session_state;

/* A step's deadline as its kernels see it: when it falls, on tfd_kernel_clock_micros's clock (0:
 * none for now; its owner may move it while the step runs, as a partial run does for each call that
 * fetches), and what its timeout reports: "Timed out waiting for <what> (<timeout_ms> ms)". */
typedef struct tfd_deadline {
  _Atomic int64_t at;
  int64_t timeout_ms;
  const char *what; /* NULL: "the step" */
} tfd_deadline;

struct tfd_kernel_context {
  tfd_device *device;
  tfd_allocator *allocator;
  tfd_threadpool *intra_pool;
  tfd_resource_mgr *rm;
  int64_t step_id;
  tfd_tensor *const *inputs;
  int num_inputs;
  tfd_tensor **outputs; /* the kernel stores one new reference per output */
  int num_outputs;
  tfd_status *status;
  tfd_rendezvous *rendezvous;
  tfd_cancellation *cancellation; /* the step's; NULL for eager runs */
  tfd_session_state *session_state; /* the session's kept tensors; NULL for eager runs */
  tfd_tensor *const *feeds; /* the call frame: fed tensors by index */
  int num_feeds;
  tfd_tensor **fetches; /* fetched tensors by index (the kernel stores new references) */
  int num_fetches;
  /* Each input is a reference held for this node alone (executors; eager runs and constant folding
   * lend the caller's tensors instead): tfd_kernel_forward_input may then hand one on as an output. */
  bool owns_inputs;
  /* Kernels that must run on the thread that started the step (custom ones asking for it): that
   * thread, when known, and the queue it drains while it waits (NULL: none, e.g. partial runs). */
  tfd_caller_queue *caller_queue;
  pthread_t caller_thread;
  bool has_caller_thread;
  const struct tfd_kernel *kernel; /* the kernel computing (set for custom kernels) */
  /* The step's deadline (NULL: none; see tfd_kernel_deadline). A kernel whose work can take
   * milliseconds splits it when there is a deadline and asks tfd_kernel_should_stop between the
   * parts, so that a step ends near its deadline rather than a whole product later. */
  const tfd_deadline *deadline;
}; /* tfd_kernel_context: one name, the public one (tfdev/custom_op.h) */

typedef struct tfd_kernel tfd_kernel;

struct tfd_kernel {
  tfd_op_kernel base;
  char *name;
  const tfd_op_def *op;
  tfd_dtype T; /* the node's main dtype: its type attr, else its first output */
  int num_inputs;
  void (*compute)(tfd_kernel *k, tfd_kernel_context *c);
  void (*compute_async)(tfd_kernel *k, tfd_kernel_context *c, tfd_done_fn done, void *arg);
  void (*cleanup)(tfd_kernel *k);
  /* Kernels that stage through the host (k_data_movement.c): the host kernel, and which inputs
   * (bit i: input i) it reads on the host. */
  void (*host_compute)(tfd_kernel *k, tfd_kernel_context *c);
  uint32_t host_inputs;
  /* Custom kernels (custom_kernel.c): their registration, and whether they run on the caller's thread. */
  const void *custom;
  bool on_caller_thread;
  /* String outputs (tstring.h). A kernel that moves elements (Gather, Concat, ...) copies their
   * references as bytes: tfd_kernel_create then runs it through a wrapper that has each output it
   * allocated take its references when it returns (moved_compute is the kernel's own compute, and
   * borrows_elements makes tfd_kernel_alloc mark string outputs as borrowing). A kernel that makes
   * strings itself sets makes_strings in its setup, and sets elements with tfd_tensor_set_str. */
  bool makes_strings;
  bool borrows_elements;
  void (*moved_compute)(tfd_kernel *k, tfd_kernel_context *c);
  /* Const: every run outputs `value` and nothing else, so an executor may hand it to the consumers
   * without running the kernel (executor.c's seeded inputs). */
  bool constant;
  /* Parameters, read from attributes at creation. */
  int code; /* which elementwise/reduction function */
  bool ta, tb, keep_dims;
  double alpha;                  /* LeakyRelu's slope */
  void *state;                   /* kernel-owned data, freed by cleanup (MatMul: packed weights) */
  int64_t index;
  tfd_dtype dst;
  tfd_tensor *value;
  uint64_t seed;
  atomic_uint_least64_t counter; /* random kernels: values drawn so far */
  char *key;                     /* _Send/_Recv rendezvous key */
  tfd_resource_handle handle;    /* VarHandleOp, FIFOQueueV2 */
  int ntypes;                    /* queues: component dtypes */
  tfd_dtype types[TFD_MAX_OP_OUTPUTS];
  /* Device kernels (dk_*.c): their own op code, and parameters the CPU kernel's fields do not hold
   * (a plain block, freed with the kernel), beside the CPU kernel's fields that their host
   * fallback reads. */
  int dk_op;
  void *dk_params;
};

typedef struct tfd_kernel_init {
  const tfd_node_def *node;
  const tfd_op_def *op;
  tfd_device *device;
  int num_inputs;
  const tfd_dtype *in_types;
  const tfd_dtype *out_types;
  int num_outputs; /* entries of out_types */
} tfd_kernel_init;

typedef tfd_code (*tfd_kernel_setup_fn)(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);

/* Whether device_type has a kernel for op; _for: one that computes dtype t for the op's type attr
 * (TensorFlow's TypeConstraint; t 0: any). */
bool tfd_kernel_supported(const char *op, const char *device_type);
bool tfd_kernel_supported_for(const char *op, const char *device_type, tfd_dtype t);
/* Lets loaded backend modules register their kernels now, so that lookups after it see them: a
 * caller that can report an error asks this first (RESOURCE_EXHAUSTED when memory ran out; the
 * modules are asked again next time). */
tfd_code tfd_kernel_registry_ready(tfd_status *status);
/* Registers a kernel for (op, device_type) at priority 0 beside the built-in table, for the rest of
 * the process (a backend module's kernels). Registering the same setup again is a no-op; another
 * setup for a pair that has one is ALREADY_EXISTS naming the pair. Thread-safe. */
tfd_code tfd_kernel_register(const char *op, const char *device_type, tfd_kernel_setup_fn setup, tfd_status *status);
/* The same at a priority (built-in kernels have 0): higher replaces the pair's kernel, equal is
 * ALREADY_EXISTS (unless setup and custom are the same), lower is ignored. custom is handed to the
 * kernel (tfd_kernel.custom) for custom kernels; when it was added (*kept, which may be NULL), the
 * registry owns it and frees it with release (may be NULL) when the library is unloaded. */
tfd_code tfd_kernel_register_entry(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                                   void *custom, void (*release)(void *), bool *kept, tfd_status *status);
/* The same for a kernel that computes only some dtypes of the op's type attr (bit per tfd_dtype): the
 * placer puts a node of another dtype elsewhere, and creating one is NOT_FOUND. */
tfd_code tfd_kernel_register_typed(const char *op, const char *device_type, tfd_kernel_setup_fn setup, int priority,
                                   uint32_t types, tfd_status *status);
/* Registers, for a device type whose memory the host cannot touch, the kernels of the ops that only
 * move data: Const, Identity, NoOp, Placeholder, PlaceholderWithDefault, Reshape, Fill, ZerosLike,
 * OnesLike and the runtime's _Feed, _Fetch, _Send and _Recv (k_data_movement.c). */
tfd_code tfd_kernel_register_data_movement(const char *device_type, tfd_status *status);
/* Registers the device kernels (device_kernels.c; the ops with a kernel written over
 * kernels/device_math.h) and the data-movement ones for device_type, whose devices carry a
 * tfd_device_math. A kernel run on a device without one fails with INTERNAL naming the device. */
tfd_code tfd_kernel_register_device_kernels(const char *device_type, tfd_status *status);
/* The allocator for a dtype's tensors on device d: its device memory, except the dtypes TensorFlow
 * keeps in host memory on such devices (int32, resource handles, variants), which come from the device's host
 * allocator. On a CPU device, its allocator. Borrowed from the device. */
tfd_allocator *tfd_kernel_memory_for(tfd_device *d, tfd_dtype dt);
/* Creates the kernel for a node on a device (NOT_FOUND when there is none). */
tfd_kernel *tfd_kernel_create(const tfd_kernel_init *init, tfd_status *status);

/* ---- helpers for kernel implementations ---- */
/* Microseconds on a clock that only goes forward (CLOCK_MONOTONIC): the clock of deadlines. */
static inline int64_t tfd_kernel_clock_micros(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
/* When the step's deadline falls (tfd_kernel_clock_micros), 0 when it has none now. */
static inline int64_t tfd_kernel_deadline(const tfd_kernel_context *c) {
  return c->deadline ? atomic_load_explicit(&c->deadline->at, memory_order_relaxed) : 0;
}
/* Whether the step's deadline has passed or the step was cancelled: a long kernel asks between the
 * parts of its work (it reads the clock and takes the cancellation's lock, so ask every millisecond
 * or so, not per element) and, when told to stop, returns through tfd_kernel_fail_stopped. */
bool tfd_kernel_should_stop(const tfd_kernel_context *c);
/* Fails the kernel for stopping early: DEADLINE_EXCEEDED with the step's timeout text (see
 * tfd_kernel_timeout_status) once the deadline has passed, else the cancellation's code and reason. */
void tfd_kernel_fail_stopped(tfd_kernel_context *c);
/* Sets st to DEADLINE_EXCEEDED "Timed out waiting for <what> (N ms)", c's timeout: the text every
 * timeout of a step reports, whether a waiter, the executor or a kernel saw it first. */
void tfd_kernel_timeout_status(const tfd_kernel_context *c, tfd_status *st);
/* Sets c->status to code with "node 'name' (Op): " and the message. */
void tfd_kernel_fail(tfd_kernel_context *c, const tfd_kernel *k, tfd_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* A new output tensor from the device allocator; NULL (status set) on failure. */
tfd_tensor *tfd_kernel_alloc(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const int64_t *dims, int ndims);
/* A new output of dtype dt shaped like `like`. */
/* TensorFlow's forward_input: input i itself, as a new reference, for the kernel to overwrite as an
 * output, when nobody else can see it (the context owns its inputs, this node holds the only
 * reference to the tensor and to its buffer, and reads it through no other input) and it has dtype
 * dt and shape dims; else NULL (nothing reported). Elementwise kernels must read each element
 * before writing it. */
tfd_tensor *tfd_kernel_forward_input(tfd_kernel_context *c, int i, tfd_dtype dt, const int64_t *dims, int ndims);
/* forward_input_or_allocate_output: input i when it can be forwarded, else a new tensor (NULL with
 * the error reported when that fails). */
tfd_tensor *tfd_kernel_forward_or_alloc(tfd_kernel_context *c, const tfd_kernel *k, int i, tfd_dtype dt, const int64_t *dims,
                                        int ndims);
tfd_tensor *tfd_kernel_alloc_like(tfd_kernel_context *c, const tfd_kernel *k, tfd_dtype dt, const tfd_tensor *like);
/* Input checks kernels make before reading: false (status set, naming
 * `what`) when t is not int32/int64, or not a one-element scalar. */
bool tfd_kernel_check_index(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *what);
bool tfd_kernel_check_scalar(tfd_kernel_context *c, const tfd_kernel *k, const tfd_tensor *t, const char *what);
/* The resource container of step step_id's own resources (TensorArrays), "__per_step_<id>" as
 * TensorFlow's ScopedStepContainer names it; the session removes it when the step ends. */
void tfd_step_container(int64_t step_id, char *buf, size_t cap);
/* Attribute readers with defaults. */
bool tfd_attr_bool(const tfd_node_def *n, const char *name, bool dflt);
int64_t tfd_attr_int(const tfd_node_def *n, const char *name, int64_t dflt);
double tfd_attr_float(const tfd_node_def *n, const char *name, double dflt);
tfd_dtype tfd_attr_dtype(const tfd_node_def *n, const char *name, tfd_dtype dflt);
const char *tfd_attr_string(const tfd_node_def *n, const char *name, const char *dflt);

/* Setup functions of the kernel families (one file each). */
tfd_code tfd_setup_basic(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
/* hash tables (issue 26, lists helper) */
tfd_code tfd_setup_lookup_table(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_shape(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_gather(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_cwise(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_logic(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_reduce(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_conv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_image(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_depth_space(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_space_batch(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_sparse_to_dense(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_tensor_array(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_array(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_batch_matmul(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_random(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_variable(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_sendrecv(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_queue(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_custom(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_data_movement(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_session_tensor(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_control_flow(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_tensor_list(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_nms(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_where(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
/* Scatters, searches, uniques (k_scatter.c); BatchMatMulV2's compute (k_batch.c), which the legacy
 * BatchMatMul runs once its inputs pass the legacy op's checks. */
tfd_code tfd_setup_scatter(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
void tfd_batch_matmul_compute(tfd_kernel *k, tfd_kernel_context *c);
/* Bincount, DenseBincount, LRN, EuclideanNorm (k_count_norm.c); TruncatedNormal, RandomUniformInt,
 * Multinomial (k_random_ext.c). */
tfd_code tfd_setup_count_norm(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
/* Complex, Real, Imag, ComplexAbs, FFT, IFFT, RFFT, IRFFT (k_spectral.c). */
tfd_code tfd_setup_spectral(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_string(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_random_ext(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
/* Sparse and ragged ops (issue 26): SparseSegment* (k_sparse_segment.c), SparseFillEmptyRows and
 * SparseReshape (k_sparse_fill.c), RaggedGather, RaggedRange and RaggedTensorToTensor (k_ragged.c). */
tfd_code tfd_setup_sparse_segment(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_sparse_fill(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_ragged(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
/* Issue 26's image/einsum family: Einsum (k_einsum.c), CropAndResize (k_crop_and_resize.c),
 * ImageProjectiveTransformV3 (k_image_transform.c); IdentityN, ShapeN, Print and the FakeQuant ops
 * (k_identity_n.c). */
tfd_code tfd_setup_einsum(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_crop_and_resize(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_image_transform(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_identity_n(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_fake_quant(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_math(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
/* issue 26, convolution family: Conv3D, MaxPool3D, AvgPool3D (k_conv3d.c); Dilation2D,
 * MaxPoolWithArgmax (k_dilation.c). */
tfd_code tfd_setup_conv3d(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);
tfd_code tfd_setup_dilation(tfd_kernel *k, const tfd_kernel_init *init, tfd_status *status);

/* Elementwise work is split over the intra-op pool above this many elements. */
#define TFD_PARALLEL_MIN_ELEMENTS 32768

#endif
