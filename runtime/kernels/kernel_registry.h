/* The kernel registry's entries, for the files that fill it (kernel_builtins.c), keep it
 * (kernel_registry.c) and read it (kernel_factory.c). Kernels themselves include kernel.h only. */
#ifndef TFDEV_RUNTIME_KERNELS_KERNEL_REGISTRY_H
#define TFDEV_RUNTIME_KERNELS_KERNEL_REGISTRY_H

#include <stdint.h>

#include "kernel.h"

typedef struct tfd_kernel_entry {
  const char *op;
  const char *device_type;
  tfd_kernel_setup_fn setup;
  int priority;       /* built-in: 0 */
  const void *custom; /* a custom kernel's registration (custom_kernel.c), handed to its setup */
  uint32_t types;     /* the dtypes of the op's type attr this kernel computes (bit per tfd_dtype); 0: all */
} tfd_kernel_entry;

/* The built-in kernels (kernel_builtins.c). */
extern const tfd_kernel_entry tfd_builtin_kernels[];
extern const int tfd_builtin_kernel_count;

/* The entry of highest priority for (op, device_type): registered at run time, else built in; NULL
 * when there is none. Registers nothing: kernel_factory.c asks backend modules first. Entries are
 * never removed, so the result stays valid. */
const tfd_kernel_entry *tfd_kernel_registry_find(const char *op, const char *device_type);

#endif
