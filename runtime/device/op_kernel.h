/* The kernel interface a device runs: what Device::Compute and ComputeAsync call.
 * Kernels themselves (runtime/kernels) implement these ops. */
#ifndef TFDEV_RUNTIME_OP_KERNEL_H
#define TFDEV_RUNTIME_OP_KERNEL_H

typedef struct tfd_op_kernel tfd_op_kernel;
typedef struct tfd_kernel_context tfd_kernel_context; /* defined by the executor */
typedef void (*tfd_done_fn)(void *arg);

typedef struct tfd_op_kernel_ops {
  void (*compute)(tfd_op_kernel *k, tfd_kernel_context *ctx);
  /* NULL for synchronous kernels. Must call done(done_arg) exactly once. */
  void (*compute_async)(tfd_op_kernel *k, tfd_kernel_context *ctx, tfd_done_fn done, void *done_arg);
  void (*destroy)(tfd_op_kernel *k);
} tfd_op_kernel_ops;

/* Kernels embed this first. */
struct tfd_op_kernel {
  const tfd_op_kernel_ops *ops;
};

#endif
