/* Custom ops: ops, kernels and plug-ins a host (or a shared library it loads) adds to tfdev.
 *
 * An op is a name with fixed input and output counts, attributes with defaults, and an inference
 * function for its outputs' dtypes and shapes; a kernel implements an op on one device type, with
 * a priority as device factories have (higher replaces, equal is ALREADY_EXISTS, lower is ignored;
 * built-in kernels have priority 0). Registrations are process-wide and permanent, as TensorFlow's
 * op and kernel registrations are: every session made afterwards sees them, and the placer puts a
 * node only on device types that have a kernel for it.
 *
 * A plug-in is a shared library exporting `int tfd_plugin_api_version` (TFD_PLUGIN_API_VERSION, the
 * version it was built for) and `tfd_code tfd_plugin_init(tfd_status *status)`, which registers its
 * ops and kernels through this header in the process's runtime. It does not link libtfdev: its tfd_
 * symbols resolve to the runtime that loads it (tfd_plugin_load makes the shared library's symbols
 * global first; a host that links tfdev statically links with -Wl,-E, as the tfdev executable
 * does). Device factories are registered by a host into its runtime's registry (tfdev/runtime.h),
 * or from Lua with tfdev.factory.register. */
#ifndef TFDEV_CUSTOM_OP_H
#define TFDEV_CUSTOM_OP_H

#include "tfdev/export.h"

#include <stdbool.h>

#include "tfdev/device.h"
#include "tfdev/graph_def.h"
#include "tfdev/status.h"
#include "tfdev/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFD_PLUGIN_API_VERSION 1

/* ---- ops ---- */
typedef struct tfd_infer_ctx tfd_infer_context; /* what an inference function sees */

/* An attribute a custom op declares: its type (TFD_ATTR_INT, _FLOAT, _BOOL, _STRING or _TYPE) and
 * default (NULL: required). */
typedef struct tfd_custom_attr {
  const char *name;
  tfd_attr_type type;
  const tfd_attr_value *default_value;
} tfd_custom_attr;

/* The most inputs and outputs a custom op may declare. */
#define TFD_CUSTOM_OP_MAX_INPUTS 16
#define TFD_CUSTOM_OP_MAX_OUTPUTS 32

typedef struct tfd_custom_op {
  const char *name;         /* a new op name: letters, digits and '_', starting with a letter */
  int num_inputs;           /* 0 to TFD_CUSTOM_OP_MAX_INPUTS */
  int num_outputs;          /* 0 to TFD_CUSTOM_OP_MAX_OUTPUTS */
  const tfd_custom_attr *attrs;
  int num_attrs;            /* an attr "T" of type TFD_ATTR_TYPE without a default takes input 0's dtype */
  bool stateful;            /* never folded into a constant; kernels shared by a session's runs */
  /* Writes the outputs' dtypes and shapes (tfd_infer_set_output) from the inputs' and the attrs; an
   * error fails the graph check, prefixed with the node. NULL: every output has input 0's dtype
   * (float32 without inputs) and an unknown shape. user is passed back. Called on the thread that
   * builds the graph (session create or extend, the Lua graph builder). */
  tfd_code (*infer)(void *user, tfd_infer_context *ctx, tfd_status *status);
  void *user;
} tfd_custom_op;

/* Registers an op (everything is copied but user). INVALID_ARGUMENT for a malformed name or count, an
 * attribute of another type; ALREADY_EXISTS for a name taken (built-in or registered). */
TFD_API tfd_code tfd_custom_op_register(const tfd_custom_op *op, tfd_status *status);

TFD_API int tfd_infer_num_inputs(const tfd_infer_context *c);
TFD_API tfd_dtype tfd_infer_input_dtype(const tfd_infer_context *c, int i);
/* The input's shape (ndims -1: unknown rank; a dim -1: unknown size). */
TFD_API void tfd_infer_input_shape(const tfd_infer_context *c, int i, tfd_shape *out);
/* The node, its attributes with defaults filled in (tfd_node_def_attr). Borrowed. */
TFD_API const tfd_node_def *tfd_infer_node(const tfd_infer_context *c);
/* Sets output i's dtype and shape (NULL: unknown). */
TFD_API void tfd_infer_set_output(tfd_infer_context *c, int i, tfd_dtype dtype, const tfd_shape *shape);

/* ---- kernels ---- */
typedef struct tfd_kernel_context tfd_kernel_context; /* what a kernel's compute sees */

typedef struct tfd_custom_kernel {
  const char *op;          /* a registered op, built-in or custom */
  const char *device_type; /* "CPU", or any type a device factory makes */
  int priority;
  /* Per node: state made from the node's attributes (NULL create: none), freed by destroy. */
  void *(*create)(void *user, const tfd_node_def *node, tfd_status *status);
  void (*destroy)(void *user, void *state);
  /* One step's work: read inputs, set every output, or fail the context. */
  void (*compute)(void *user, void *state, tfd_kernel_context *ctx);
  /* Run compute on the thread that started the step (the one in tfd_session_run, or the one
   * waiting on or polling an async run), never on a pool thread: for kernels that call into a
   * single-threaded world (a Lua state). Other kernels keep running on the pools meanwhile. When
   * the run is cancelled (tfd_run_cancel, a timeout) or its session closed before compute could
   * run there, it never runs: the node fails CANCELLED. */
  bool on_caller_thread;
  void *user;
} tfd_custom_kernel;

/* Registers a kernel (copied but user). NOT_FOUND for an unknown op; INVALID_ARGUMENT for a missing
 * compute or device type; ALREADY_EXISTS for a kernel of equal priority for the same op and type. */
TFD_API tfd_code tfd_custom_kernel_register(const tfd_custom_kernel *kernel, tfd_status *status);
/* Whether device_type has a kernel for op (built-in or registered). */
TFD_API bool tfd_kernel_exists(const char *op, const char *device_type);
/* Registers, for a device type of the host's, the kernels every device needs to take part in a graph:
 * the session's feeds, fetches, sends and receives, and Const, Identity, NoOp, Placeholder,
 * PlaceholderWithDefault, Reshape, Fill, ZerosLike and OnesLike. They work on devices with host
 * memory and, copying through the host, on devices whose memory the host cannot touch. Registering
 * them again does nothing. */
TFD_API tfd_code tfd_kernel_register_transfers(const char *device_type, tfd_status *status);

TFD_API int tfd_kernel_context_num_inputs(const tfd_kernel_context *c);
/* Input i (borrowed: valid during compute; tfd_tensor_ref it to keep it). Host memory. */
TFD_API tfd_tensor *tfd_kernel_context_input(const tfd_kernel_context *c, int i);
TFD_API int tfd_kernel_context_num_outputs(const tfd_kernel_context *c);
/* Output i as a new tensor from the device's allocator (the context keeps it); NULL with the context
 * failed when that fails. */
TFD_API tfd_tensor *tfd_kernel_context_allocate_output(tfd_kernel_context *c, int i, tfd_dtype dtype, const int64_t *dims,
                                                       int ndims);
/* Output i is t (the context takes a reference). INVALID_ARGUMENT, and the context failed, for an
 * index out of range or a NULL t; INVALID_ARGUMENT alone for a NULL context. The other
 * tfd_kernel_context_ and tfd_infer_ functions take the context the runtime passed (not NULL). */
TFD_API tfd_code tfd_kernel_context_set_output(tfd_kernel_context *c, int i, tfd_tensor *t);
/* Fails the step with code and the message, prefixed with the node and op. */
TFD_API void tfd_kernel_context_fail(tfd_kernel_context *c, tfd_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
            ;
/* Whether the context has failed already. */
TFD_API bool tfd_kernel_context_failed(const tfd_kernel_context *c);
TFD_API tfd_device *tfd_kernel_context_device(const tfd_kernel_context *c); /* borrowed */
/* The node's name and op (borrowed, valid during compute). */
TFD_API const char *tfd_kernel_context_node_name(const tfd_kernel_context *c);

/* ---- plug-ins ---- */
/* Loads the plug-in at path (dlopen) and runs its tfd_plugin_init once; loading the same path again
 * does nothing. NOT_FOUND when it does not load (the loader's message), FAILED_PRECONDITION when it
 * lacks the two symbols or was built for another TFD_PLUGIN_API_VERSION (both versions named), and
 * whatever tfd_plugin_init returns. A plug-in stays loaded for the life of the process. */
TFD_API tfd_code tfd_plugin_load(const char *path, tfd_status *status);

#ifdef __cplusplus
}
#endif
#endif
