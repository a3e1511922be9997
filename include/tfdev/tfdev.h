/* tfdev: TensorFlow's common runtime in C11, for embedding. Include this one header.
 *
 * Conventions: public symbols start with tfd_; objects are opaque handles;
 * fallible calls return a tfd_code and fill an optional tfd_status*: a call
 * that fails sets it, and a call that succeeds leaves it OK, whatever it held
 * before (TensorFlow's rule; ctest build.status_reset checks it); shared
 * objects (tensors, devices, allocators, factories, resources) are
 * reference-counted, the rest are freed with their tfd_X_free. Every
 * function's comment says who owns what it returns. */
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
