/* The allocator base struct: subtypes (CPU here, GPU in gpu/) embed it first. */
#ifndef TFDEV_RUNTIME_ALLOCATOR_INTERNAL_H
#define TFDEV_RUNTIME_ALLOCATOR_INTERNAL_H

#include "refcount.h"
#include "tfdev/allocator.h"
#include "tfdev/runtime.h"

/* Memory the host cannot touch (a GPU's): how bytes move in and out of it. An allocator of such memory
 * sets device_memory; the runtime then never reads or writes its buffers itself, only through these,
 * which tensor.c's tfd_tensor_copy_to calls. Both are TensorFlow's DeviceContext copies reduced to
 * bytes, and both order themselves after the device work queued before the call (a GPU's compute
 * stream), never by waiting for the whole device. */
typedef struct tfd_device_memory_ops {
  /* Host dst <- device src. Returns once dst holds the bytes. */
  tfd_code (*to_host)(tfd_allocator *a, void *dst, const void *src, size_t bytes, tfd_status *status);
  /* Device dst <- host src. May return before the bytes have moved: device work queued after the
   * call sees them, and release(release_arg) is called (on any thread, maybe before this returns)
   * once src is no longer read. On failure release is called too, and status says why. */
  tfd_code (*from_host)(tfd_allocator *a, void *dst, const void *src, size_t bytes, void (*release)(void *),
                        void *release_arg, tfd_status *status);
} tfd_device_memory_ops;

struct tfd_allocator {
  const tfd_allocator_ops *ops;
  tfd_refcount refs;
  char *name;
  const tfd_device_memory_ops *device_memory; /* NULL: host memory (the default) */
};

/* Initialises the base of a subtype; copies name. Returns false on OOM. */
bool tfd_allocator_init(tfd_allocator *a, const tfd_allocator_ops *ops, const char *name);
/* Frees what tfd_allocator_init allocated (for subtypes' destroy). */
void tfd_allocator_fini(tfd_allocator *a);

/* A CPU allocator (limit, statistics, blocks) whose memory comes from a host's allocator (NULL: the
 * system's), with no cache of freed blocks: the host sees every block come and go. */
tfd_allocator *tfd_cpu_allocator_new_hosted(const char *name, int64_t bytes_limit, const tfd_host_allocator *host);

/* Blocks: one allocation holding `header` bytes (a multiple of 64) and then
 * `size` bytes, 64-byte aligned, of which the statistics and the limit see
 * only size, exactly as tfd_allocator_allocate(a, 64, size) would: a tensor
 * keeps its header beside its data in one block. Only allocators for which
 * tfd_allocator_has_blocks is true (the CPU allocator) make them; a block is
 * returned with the header and size it was made with. Live blocks keep the
 * allocator alive: the block's owner needs no reference of its own, and the
 * allocator may be gone once the last block is returned. */
bool tfd_allocator_has_blocks(const tfd_allocator *a);
void *tfd_allocator_allocate_block(tfd_allocator *a, size_t header, size_t size, tfd_status *status);
void tfd_allocator_deallocate_block(tfd_allocator *a, void *block, size_t header, size_t size);

#endif
