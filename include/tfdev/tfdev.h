/* tfdev: TensorFlow's common runtime in C11, for embedding. Include this one header.
 *
 * Conventions, for every header here:
 * - Names: public symbols start with tfd_ (the Lua side's with tfdev_); one name per struct (the
 *   kernel's context is tfd_kernel_context everywhere); objects are opaque handles.
 * - Errors: fallible calls return a tfd_code and fill an optional tfd_status*: a call that fails sets
 *   it, and a call that succeeds leaves it OK, whatever it held before (TensorFlow's rule; ctest
 *   build.status_reset checks every public function that takes one).
 * - Making handles: a call that makes a handle and can fail (runtimes, sessions, models, graph defs,
 *   tensors and their views, devices, device factories, resources, thread pools, device managers,
 *   asynchronous runs) returns a tfd_code and puts the handle in *out (NULL when it fails; out itself
 *   must not be NULL), as SQLite's sqlite3_open and ONNX Runtime's Create* calls do:
 *     tfd_session *s;
 *     if (tfd_session_new(NULL, NULL, NULL, &s, st) != TFD_OK) ...
 *   Makers that can fail only for want of memory (tfd_graph_def_new, tfd_session_options_new, ...) take
 *   no status and return the handle, NULL when memory ran out; look-ups return what they find.
 * - Ownership: one release verb per kind. Shared objects (tensors, devices, allocators, factories,
 *   resources, runtimes) are reference-counted: tfd_X_ref takes a reference, tfd_X_unref gives one
 *   back. The rest have one owner and are freed with tfd_X_free. Every function's comment says who
 *   owns what it returns ("caller frees", "borrowed", "a new reference"; ctest build.ownership_comments
 *   checks the pointer-returning ones). Releasing NULL is harmless.
 * - Versions: TFDEV_VERSION (tfdev/version.h, generated from the build's one version) is what a
 *   program was compiled against, tfd_version() the library it runs with. */
#ifndef TFDEV_TFDEV_H
#define TFDEV_TFDEV_H

#include "tfdev/version.h" /* TFDEV_VERSION, generated from CMakeLists.txt's project() version */

#include "tfdev/allocator.h"
#include "tfdev/backend.h"
#include "tfdev/device.h"
#include "tfdev/device_factory.h"
#include "tfdev/device_mgr.h"
#include "tfdev/device_name.h"
#include "tfdev/device_set.h"
#include "tfdev/gpu.h"
#include "tfdev/graph_def.h"
#include "tfdev/model.h"
#include "tfdev/session.h"
#include "tfdev/custom_op.h"
#include "tfdev/ops.h"
#include "tfdev/options.h"
#include "tfdev/resource_mgr.h"
#include "tfdev/runtime.h"
#include "tfdev/status.h"
#include "tfdev/tensor.h"
#include "tfdev/threadpool.h"

#endif
